/* corecarve: capacity per placement class (capacity.h).  The counts are set
 * arithmetic on the topology, the reserved set and the ledger; the largest
 * requests are asked of the allocator. */
#define _GNU_SOURCE
#include "capacity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cleanup.h"

const char *const cc_capacity_states[CC_CAPACITY_NSTATES] = { "total", "reserved", "carved", "parked", "free" };

int cc_capacity_state(const struct cc_capacity *c, int state)
{
	const int v[CC_CAPACITY_NSTATES] = { c->total, c->reserved, c->carved, c->parked, c->free };

	return state >= 0 && state < CC_CAPACITY_NSTATES ? v[state] : 0;
}

/* cc_allocate for `cpus` CPUs of class `name` against `taken`: 1 accepted
 * (*got = the CPUs it would run on), 0 refused (err holds why). */
static int try(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken, const char *name,
	       int cpus, int *got, struct cc_err *err)
{
	struct cc_request req;
	struct cc_decision d;

	memset(&req, 0, sizeof(req));
	snprintf(req.class_name, sizeof(req.class_name), "%s", name);
	req.cpus = cpus;
	cc_err_clear(err);
	if (cc_allocate(t, p, taken, &req, &d, err) < 0)
		return 0;
	if (got)
		*got = hwloc_bitmap_weight(d.cpus);
	cc_decision_fini(&d);
	return 1;
}

/* The smallest request class `name` can express: the first cpus the
 * allocator does not reject as malformed (EINVAL: not a multiple of the
 * threads per core, not whole clusters).  0 when none up to `limit`;
 * `why` then holds the first rejection. */
static int smallest_request(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t empty,
			    const char *name, int limit, struct cc_err *why)
{
	struct cc_err first = CC_ERR_INIT;

	for (int k = 1; k <= (limit > 0 ? limit : 1); k++) {
		struct cc_err e = CC_ERR_INIT;

		if (try(t, p, empty, name, k, NULL, &e) || e.code != EINVAL) {
			*why = e;
			return k;
		}
		if (!first.code)
			first = e;
	}
	*why = first;
	return 0;
}

/* The largest multiple of `unit` up to `limit` the allocator accepts
 * against `taken`.  Acceptance is monotone in the number of units (a
 * carve of k units minus one unit is a carve too: minShared, clusters
 * and NUMA packing only get easier), so a binary search finds it. */
static int largest_request(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken,
			   const char *name, int unit, int limit)
{
	struct cc_err e = CC_ERR_INIT;
	int lo = 0, hi = unit > 0 ? limit / unit : 0;

	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;

		if (try(t, p, taken, name, mid * unit, NULL, &e))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo * unit;
}

/* Why a class can never carve (or, shared, never run) here, and the fix:
 * the allocator's census without its "class X: " and its own advice, which
 * speaks of the node now, not of the policy. */
static void never(struct cc_capacity *c, const struct cc_topo *t, const struct cc_policy *p,
		  const struct cc_pclass *pc, int ci, const char *why)
{
	char prefix[80], who[128];
	const char *cut, *msg = why;
	int n;

	snprintf(prefix, sizeof(prefix), "class %s: ", pc->name);
	if (!strncmp(msg, prefix, strlen(prefix)))
		msg += strlen(prefix);
	cut = strstr(msg, "; refused");
	n = cut ? (int)(cut - msg) : (int)strlen(msg);
	if (c->total > 0 && c->reserved == c->total) {
		snprintf(c->never, sizeof(c->never), "every one of its %d %s CPUs is reserved", c->total, c->core_class);
		snprintf(c->fix, sizeof(c->fix), "take some %s CPUs out of the policy's reserved", c->core_class);
		return;
	}
	snprintf(c->never, sizeof(c->never), "%.*s", n, msg);
	/* minShared: say what it keeps, not the census of a request. */
	if (strstr(msg, "the node's unreserved"))
		snprintf(c->never, sizeof(c->never), "the node's %d unreserved CPU%s must keep %d (minShared)",
			 c->total - c->reserved, c->total - c->reserved == 1 ? "" : "s",
			 cc_policy_min_shared(p, c->total - c->reserved));
	else if (strstr(msg, "minShared") && ci >= 0 && cc_alloc_shared_floor(t, p, ci, who, sizeof(who)) > 0)
		snprintf(c->never, sizeof(c->never), "its %d unreserved %s CPU%s must keep %d for %s (minShared)",
			 c->total - c->reserved, c->core_class, c->total - c->reserved == 1 ? "" : "s",
			 cc_alloc_shared_floor(t, p, ci, NULL, 0), who);
	if (strstr(msg, "minShared"))
		snprintf(c->fix, sizeof(c->fix), "lower minShared, or reserve fewer %s CPUs, in the policy",
			 c->core_class);
	else if (c->reserved)
		snprintf(c->fix, sizeof(c->fix), "reserve fewer %s CPUs in the policy", c->core_class);
	else
		snprintf(c->fix, sizeof(c->fix), "corecarve plan --class %s --cpus %d says why", pc->name,
			 c->smallest ? c->smallest : 1);
}

static int count(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b)
{
	_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();

	if (!x)
		return 0;
	hwloc_bitmap_and(x, a, b);
	return hwloc_bitmap_weight(x);
}

static int one(const struct cc_topo *t, const struct cc_policy *p, const struct cc_pclass *pc,
	       const struct cc_ledger *l, hwloc_const_bitmap_t reserved, hwloc_const_bitmap_t empty,
	       hwloc_const_bitmap_t taken, struct cc_capacity *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cls = hwloc_bitmap_alloc(), rest = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t run = hwloc_bitmap_alloc(), park = hwloc_bitmap_alloc();
	struct cc_err why = CC_ERR_INIT;
	int ci, got = 0;

	if (!cls || !rest || !run || !park)
		return cc_err_sys(err, ENOMEM, "capacity");
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", pc->name);
	c->exclusive = pc->exclusive;
	ci = cc_alloc_core_class(t, pc, c->core_class, &c->fell_back, &why);
	if (ci == -2) {
		never(c, t, p, pc, ci, why.msg);
		snprintf(c->fix, sizeof(c->fix), "give class %s a fallback, or a coreType this node has", pc->name);
		return 0;
	}
	hwloc_bitmap_copy(cls, ci >= 0 ? t->classes[ci].cpus : t->online);
	hwloc_bitmap_and(cls, cls, t->online);
	for (int i = 0; l && i < cc_ledger_ncarves(l); i++) {
		hwloc_bitmap_or(run, run, cc_ledger_carve_at(l, i)->cpus);
		hwloc_bitmap_or(park, park, cc_ledger_carve_at(l, i)->parked);
		c->carves += !strcmp(cc_ledger_carve_at(l, i)->class_name, pc->name);
	}
	/* Each CPU in one state, in this order: a reserved CPU someone carved
	 * anyway (a policy changed under a live carve) counts as reserved. */
	hwloc_bitmap_copy(rest, cls);
	c->total = hwloc_bitmap_weight(cls);
	c->reserved = count(rest, reserved);
	hwloc_bitmap_andnot(rest, rest, reserved);
	c->carved = count(rest, run);
	hwloc_bitmap_andnot(rest, rest, run);
	c->parked = count(rest, park);
	hwloc_bitmap_andnot(rest, rest, park);
	c->free = hwloc_bitmap_weight(rest);

	if (!pc->exclusive) {
		/* A shared class runs on its pool; cpus is only a hint. */
		c->smallest = 1;
		if (try(t, p, taken, pc->name, 1, &got, &why))
			c->largest = got;
		if (try(t, p, empty, pc->name, 1, &got, &why))
			c->largest_empty = got;
		else
			never(c, t, p, pc, ci, why.msg);
		return 0;
	}
	c->smallest = smallest_request(t, p, empty, pc->name, c->total, &why);
	if (!c->smallest || why.code) {
		never(c, t, p, pc, ci, why.msg[0] ? why.msg : "no request can be expressed");
		return 0;
	}
	c->largest_empty = largest_request(t, p, empty, pc->name, c->smallest, c->total - c->reserved);
	c->largest = largest_request(t, p, taken, pc->name, c->smallest, c->free);
	return 0;
}

int cc_capacity_compute(const struct cc_topo *t, const struct cc_policy *p, const struct cc_ledger *l,
			struct cc_capacity **out, int *n, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(p, t), empty = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t taken = l ? cc_ledger_taken(l) : hwloc_bitmap_alloc();
	_cleanup_free_ struct cc_capacity *c = calloc((size_t)p->nclasses + 1, sizeof(*c));

	if (!reserved || !empty || !taken || !c)
		return cc_err_sys(err, ENOMEM, "capacity");
	for (int i = 0; i < p->nclasses; i++)
		if (one(t, p, &p->classes[i], l, reserved, empty, taken, &c[i], err) < 0)
			return -1;
	*out = cc_steal_ptr(c);
	*n = p->nclasses;
	return 0;
}

json_t *cc_capacity_json(const struct cc_capacity *c, int n)
{
	_cleanup_json_ json_t *arr = json_array();

	if (!arr)
		return NULL;
	for (int i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s?, s:b, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s?, s:s?}", "class",
				      c[i].name, "core_class", c[i].core_class[0] ? c[i].core_class : NULL,
				      "fell_back", c[i].fell_back, "exclusive", c[i].exclusive, "total", c[i].total,
				      "reserved", c[i].reserved, "carved", c[i].carved, "parked", c[i].parked, "free",
				      c[i].free, "carves", c[i].carves, "smallest", c[i].smallest, "largest",
				      c[i].largest, "largest_empty", c[i].largest_empty, "never",
				      c[i].never[0] ? c[i].never : NULL, "fix", c[i].never[0] ? c[i].fix : NULL);

		if (!o || json_array_append_new(arr, o) < 0)
			return NULL;
	}
	return cc_steal_ptr(arr);
}
