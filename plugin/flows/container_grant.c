/* corecarve: a container carved from a grant (grant.h) — the request the
 * grant makes, checked against the node before the lock and against the
 * ledger under it.  The carve itself is the container flow's: the
 * allocator chooses among the granted cores only (cc_request.within), so
 * the class's rules (siblings parked or used, minShared, clusters) and
 * refusals are those of every carve. */
#define _GNU_SOURCE
#include "container_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

int grant_request(const struct cc_grant_ref *g, struct cc_request *req, bool placed, struct cc_err *err)
{
	/* A placement annotation beside the grant may choose what its class
	 * lets it (smt, memory, irq), never another class. */
	if (placed) {
		if (strcmp(req->class_name, g->class_name))
			return cc_err_set(err, EINVAL,
					  "annotation %s: class: \"%s\", but the container's grant (%s) is of class \"%s\"; "
					  "name the grant's class or remove the annotation",
					  req->annotation, req->class_name, CC_GRANT_KEY, g->class_name);
	} else {
		memset(req, 0, sizeof(*req));
		snprintf(req->class_name, sizeof(req->class_name), "%s", g->class_name);
	}
	req->within = g->cpus;
	return 0;
}

int grant_counted(const struct cc_topo *t, hwloc_const_bitmap_t cpus, enum cc_smt smt)
{
	int n = 0;

	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if (c->pus && hwloc_bitmap_isincluded(c->pus, cpus))
			n += smt == CC_SMT_FULL ? hwloc_bitmap_weight(c->pus) : 1;
	}
	return n;
}

int grant_shape(const struct cc_topo *t, const struct cc_policy *p, const struct cc_grant_ref *g,
		struct cc_request *req, bool placed, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(p, req->class_name);
	_cleanup_bitmap_ hwloc_bitmap_t whole = hwloc_bitmap_alloc();
	enum cc_smt smt;
	int cpus;

	if (!whole)
		return cc_err_sys(err, ENOMEM, "grant");
	if (!pc || !pc->exclusive)
		return cc_err_set(err, EINVAL,
				  "annotation %s: grant %s: class \"%s\" is %s in policy %s; a grant is carved only in an "
				  "exclusive class (restart corecarve device-plugin after changing the policy)",
				  CC_GRANT_KEY, g->id, req->class_name, pc ? "not exclusive" : "unknown", p->source);
	smt = req->has_smt ? req->smt : pc->smt;
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if (!c->pus || !hwloc_bitmap_intersects(c->pus, g->cpus))
			continue;
		if (!hwloc_bitmap_isincluded(c->pus, g->cpus))
			break;
		hwloc_bitmap_or(whole, whole, c->pus);
	}
	cpus = grant_counted(t, g->cpus, smt);
	if (!hwloc_bitmap_isequal(whole, g->cpus)) {
		_cleanup_free_ char *w = cc_cpulist_format(whole);

		return cc_err_set(err, EINVAL,
				  "annotation %s: grant %s: its CPUs are not whole online cores of this node (whole: %s); "
				  "a CPU went offline since the grant: delete the pod so that the kubelet grants again",
				  CC_GRANT_KEY, g->id, w && *w ? w : "none");
	}
	if (placed && req->cpus != cpus)
		return cc_err_set(err, EINVAL,
				  "annotation %s: cpus: %d, but the container's grant (%s) carves %d; set cpus: %d or remove it",
				  req->annotation, req->cpus, g->id, cpus, cpus);
	req->cpus = cpus;
	return 0;
}

/* The container carve, if any, made from grant `id`: the holder a
 * refusal names. */
static const struct cc_carve *grant_holder(struct cc_ledger *l, const char *id)
{
	const struct cc_carve *c;
	struct cc_err ignored = CC_ERR_INIT;

	if (cc_ledger_load_all(l, &ignored) < 0)
		return NULL;
	cc_ledger_foreach_carve(l, i, c)
		if (!strcmp(c->grant, id))
			return c;
	return NULL;
}

/* Tokens compared in time that does not depend on where they differ. */
static bool token_eq(const char *a, const char *b)
{
	unsigned char d = 0;

	if (strlen(a) != CC_GRANT_TOKEN_LEN || strlen(b) != CC_GRANT_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < CC_GRANT_TOKEN_LEN; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int grant_take(struct cc_ledger *l, const struct cc_grant_ref *g, const char *container, struct cc_err *err)
{
	struct cc_carve *c;
	const struct cc_carve *h;

	if (cc_ledger_lookup(l, g->id, &c, err) < 0)
		return -1;
	/* One answer for a grant that is not there and one whose token is
	 * not the annotation's: a forger learns nothing from the refusal. */
	if (!c || strcmp(c->kind, "grant") || !token_eq(c->token, g->token)) {
		h = c ? NULL : grant_holder(l, g->id);
		if (h && token_eq(h->token, g->token) && strcmp(h->id, container))
			return cc_err_set(err, EBUSY,
					  "annotation %s: grant %s: carved already, for %s %s; one container carves a grant "
					  "at a time (the kubelet gives each container its own)",
					  CC_GRANT_KEY, g->id, h->kind, h->id);
		return cc_err_set(err, EPERM,
				  "annotation %s: grant %s: no such grant in the ledger; a grant is made by corecarve "
				  "device-plugin's Allocate and is freed with its pod: remove the annotation from the pod",
				  CC_GRANT_KEY, g->id);
	}
	if (strcmp(c->class_name, g->class_name) || !hwloc_bitmap_isequal(c->cpus, g->cpus))
		return cc_err_set(err, EPERM, "annotation %s: grant %s: the ledger's grant differs (class %s)",
				  CC_GRANT_KEY, g->id, c->class_name);
	/* Out of the ledger until the carve goes (the ledger gives the cores
	 * back then, ledger.h): committed with the carve, in one write. */
	return cc_ledger_drop(l, g->id, err) < 0 ? -1 : 0;
}
