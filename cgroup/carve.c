/* corecarve: a carve's cgroups — plan, apply and undo over the node
 * records of the "cgroup" section (cgroup.h says what each kind of record
 * computes; docs/design.md, "One restore model"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"

const char *const cc_cg_rec_kinds[] = { "exclusive", "parked", "peer", "quota", "shared", NULL };
/* Their owners are every carve a rule names (cgroup.h): kept as `held`. */
const char *const cc_cg_rec_held_kinds[] = { "exclusive", "parked", NULL };

enum rec_kind { K_EXCLUSIVE, K_PARKED, K_PEER, K_QUOTA, K_SHARED, K_UNKNOWN };

enum step_op {
	STEP_WRITE,     /* value into file */
	STEP_MKDIR,     /* the parked cgroup, made the first time */
	STEP_PARTITION, /* value "root" or "isolated", read back */
	STEP_FAULT,     /* "mid-cgroup-write" (fault.h): half of the carve written */
};

struct cc_cg_step {
	enum step_op op;
	char *cgroup;
	char file[40];
	char *value;
	char *old;       /* the carve's own files: the value before, for the undo of a failed apply */
	char *rec;       /* the record this write gives its `set`; NULL for the carve's own files */
};

static enum rec_kind rec_kind(const struct cc_noderec *r)
{
	for (int k = 0; cc_cg_rec_kinds[k]; k++)
		if (!strcmp(r->kind, cc_cg_rec_kinds[k]))
			return (enum rec_kind)k;
	return K_UNKNOWN;
}

static bool held_kind(enum rec_kind k)
{
	return k == K_EXCLUSIVE || k == K_PARKED;
}

/* The share a carve has in a held record of kind k: its CPUs in its
 * ancestors' exclusive sets, its parked siblings in the parked partition. */
static hwloc_const_bitmap_t held_share(const struct cc_cg_carve *c, enum rec_kind k)
{
	return k == K_EXCLUSIVE ? c->cpus : k == K_PARKED ? c->parked : NULL;
}

/* Add `share` to a held record's owners, or take it away (the carves are
 * disjoint: what one holds is no other's). */
static int held_update(struct cc_noderec *r, hwloc_const_bitmap_t share, bool add, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t held = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;
	char what[PATH_MAX + 64];

	if (!held)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	snprintf(what, sizeof(what), "sections." CC_CG_SECTION ": %s.held", r->path);
	if (r->held && cc_cpulist_parse(r->held, held, what, err) < 0)
		return -1;
	if (add)
		hwloc_bitmap_or(held, held, share);
	else
		hwloc_bitmap_andnot(held, held, share);
	if (!hwloc_bitmap_iszero(held) && !(s = cc_cpulist_format(held)))
		return cc_err_sys(err, ENOMEM, "cgroup records");
	free(r->held);
	r->held = cc_steal_ptr(s);
	return 0;
}

/* Whether carve c owns record r: listed, or its share in r's held CPUs. */
static bool owns(const struct cc_noderec *r, const struct cc_cg_carve *c)
{
	_cleanup_bitmap_ hwloc_bitmap_t held = NULL;
	struct cc_err ignored = CC_ERR_INIT;
	enum rec_kind k = rec_kind(r);
	hwloc_const_bitmap_t share;

	if (cc_noderec_share(r, c->id))
		return true;
	if (!held_kind(k) || !r->held || !(share = held_share(c, k)) || hwloc_bitmap_iszero(share))
		return false;
	held = hwloc_bitmap_alloc();
	return held && cc_cpulist_parse(r->held, held, "held", &ignored) == 0 && hwloc_bitmap_intersects(held, share);
}

static void vmsg(struct cc_cg_msgs *m, bool note, const char *fmt, va_list ap)
{
	if (!m || m->n >= CC_CG_MSG_MAX)
		return;
	m->note[m->n] = note;
	vsnprintf(m->line[m->n++], sizeof(m->line[0]), fmt, ap);
}

static void msg(struct cc_cg_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(struct cc_cg_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, false, fmt, ap);
	va_end(ap);
}

static void note(struct cc_cg_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct cc_cg_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, true, fmt, ap);
	va_end(ap);
}

/* ---- records: keys, values ------------------------------------------- */

static int rec_key(char *buf, size_t len, const char *cgroup, const char *file, struct cc_err *err)
{
	return cc_path(buf, len, err, "%s/%s", strcmp(cgroup, "/") ? cgroup : "", file);
}

/* "<cgroup>/<file>" back into its parts. */
static int rec_split(const struct cc_noderec *r, char *cgroup, size_t len, const char **file, struct cc_err *err)
{
	const char *slash = strrchr(r->path, '/');

	if (!slash || slash == r->path || !slash[1])
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": \"%.200s\" is not a cgroup file", r->path);
	snprintf(cgroup, len, "%.*s", (int)(slash - r->path), r->path);
	*file = slash + 1;
	return 0;
}

static int parse_cpus(const char *s, hwloc_bitmap_t out, const struct cc_noderec *r, const char *field,
		      struct cc_err *err)
{
	char what[PATH_MAX + 64];

	snprintf(what, sizeof(what), "sections." CC_CG_SECTION ": %s.%s", r->path, field);
	return cc_cpulist_parse(s, out, what, err);
}

int cc_cg_rec_value(const struct cc_noderec *r, hwloc_const_bitmap_t parent_cpus, char **value,
		    struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t share = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	enum rec_kind k = rec_kind(r);

	*value = NULL;
	if (!set || !share || !all)
		return cc_err_sys(err, ENOMEM, "cgroup record");
	if (k == K_UNKNOWN)
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s: unknown kind \"%s\"", r->path, r->kind);
	if (!r->orig && k != K_PARKED)
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s: orig null is for a parked cgroup only",
				  r->path);
	/* The last owner gone: the original, as it was. */
	if (!cc_noderec_owned(r)) {
		if (r->orig && !(*value = strdup(r->orig)))
			return cc_err_sys(err, ENOMEM, "cgroup record");
		return 0;
	}
	if (k == K_QUOTA) {
		long long quota, period;
		char buf[64];

		if (cc_cg_parse_cpu_max(r->orig, &quota, &period) < 0)
			return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s.orig: \"%.32s\" is not a cpu.max value",
					  r->path, r->orig);
		for (int i = 0; i < r->nowners; i++) {
			char *end;
			long long n = strtoll(r->owners[i].share, &end, 10);

			if (*end || n < 1 || n > 100000)
				return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s.owners.%s: \"%.32s\" is not a CPU count",
						  r->path, r->owners[i].id, r->owners[i].share);
		}
		/* A pod holding a carve has no quota at all, as the kubelet
		 * does since 1.33 (DisableCPUQuotaWithExclusiveCPUs removes the
		 * pod-level quota of a pod with exclusive CPUs): CFS bandwidth
		 * throttles per period, so a quota even above the carves'
		 * average throttles a busy carve beside its pod's other
		 * containers and the pause process. */
		snprintf(buf, sizeof(buf), "max %lld", period);
		return (*value = strdup(buf)) ? 0 : cc_err_sys(err, ENOMEM, "cgroup record");
	}
	for (int i = 0; i < r->nowners; i++) {
		char field[300];

		snprintf(field, sizeof(field), "owners.%.256s", r->owners[i].id);
		if (parse_cpus(r->owners[i].share, share, r, field, err) < 0)
			return -1;
		hwloc_bitmap_or(all, all, share);
	}
	if (r->held) {
		if (parse_cpus(r->held, share, r, "held", err) < 0)
			return -1;
		hwloc_bitmap_or(all, all, share);
	}
	switch (k) {
	case K_EXCLUSIVE:
	case K_PARKED:
		if (r->orig && parse_cpus(r->orig, set, r, "orig", err) < 0)
			return -1;
		hwloc_bitmap_or(set, set, all);
		break;
	case K_PEER:
	case K_SHARED:
		/* An empty cpuset.cpus inherits: its CPUs are the parent's. */
		if (r->orig[0]) {
			if (parse_cpus(r->orig, set, r, "orig", err) < 0)
				return -1;
		} else if (parent_cpus) {
			hwloc_bitmap_copy(set, parent_cpus);
		} else {
			return cc_err_set(err, EINVAL, "%s: the parent's CPUs are needed for an inheriting peer", r->path);
		}
		hwloc_bitmap_andnot(set, set, all);
		if (hwloc_bitmap_iszero(set) && k == K_SHARED)
			return cc_err_set(err, ENOSPC, "shared-pool container cgroup %.*s would be left without CPUs",
					  (int)(strrchr(r->path, '/') - r->path), r->path);
		if (hwloc_bitmap_iszero(set))
			return cc_err_set(err, ENOSPC, "cpuset-only mode: peer cgroup %.*s would be left without CPUs",
					  (int)(strrchr(r->path, '/') - r->path), r->path);
		break;
	default:
		break;
	}
	*value = cc_cpulist_format(set);
	return *value ? 0 : cc_err_sys(err, ENOMEM, "cgroup record");
}

/* Two values of a record's file mean the same: sets compare as sets,
 * cpu.max as its two numbers; NULL (no cgroup) only equals NULL. */
static bool same(enum rec_kind k, const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	if (k == K_QUOTA) {
		long long qa, pa, qb, pb;

		if (cc_cg_parse_cpu_max(a, &qa, &pa) < 0 || cc_cg_parse_cpu_max(b, &qb, &pb) < 0)
			return !strcmp(a, b);
		return qa == qb && pa == pb;
	}
	{
		_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();
		_cleanup_bitmap_ hwloc_bitmap_t y = hwloc_bitmap_alloc();
		struct cc_err ignored = CC_ERR_INIT;

		if (!x || !y || cc_cpulist_parse(a, x, "a", &ignored) < 0 || cc_cpulist_parse(b, y, "b", &ignored) < 0)
			return !strcmp(a, b);
		return hwloc_bitmap_isequal(x, y);
	}
}

/* The file holds what corecarve left there: what it wrote last, a write
 * that was in flight, or — never written — the original. */
static bool ours(const struct cc_noderec *r, const char *cur)
{
	enum rec_kind k = rec_kind(r);

	/* A parked cgroup corecarve made that reads empty is corecarve's: not
	 * filled yet, or emptied by an undo interrupted before its rmdir
	 * (nobody else writes corecarve's own cgroup). */
	if (k == K_PARKED && !r->orig && cur && !cur[0])
		return true;
	if (r->pending && same(k, cur, r->pending))
		return true;
	return same(k, cur, r->set ? r->set : r->orig);
}

/* ---- reading ----------------------------------------------------------- */

/* A control file's value; *out NULL when the cgroup or the file is gone. */
static int read_opt(const struct cc_cg *cg, const char *cgroup, const char *file, char **out, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;

	*out = cc_cg_read(cg, cgroup, file, &e);
	if (*out || cc_cg_gone(e.code))
		return 0;
	*err = e;
	return -1;
}

/* ---- the plan ------------------------------------------------------------ */

struct planner {
	struct cc_cg *cg;
	struct cc_cg_carve *c;
	const struct cc_cg_others *others;
	struct cc_noderecs *recs;
	struct cc_cg_plan *plan;
	bool has_exclusive; /* the kernel has cpuset.cpus.exclusive (Linux >= 6.7) */
};

static struct cc_cg_step *add_step(struct cc_cg_plan *plan, enum step_op op, const char *cgroup, const char *file,
				   const char *value, const char *old, const char *rec)
{
	struct cc_cg_step *grown = realloc(plan->steps, (size_t)(plan->n + 1) * sizeof(*grown)), *s;

	if (!grown)
		return NULL;
	plan->steps = grown;
	s = &plan->steps[plan->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->file, sizeof(s->file), "%s", file ? file : "");
	s->op = op;
	if (cc_noderec_put(&s->cgroup, cgroup) < 0 || cc_noderec_put(&s->value, value) < 0 ||
	    cc_noderec_put(&s->old, old) < 0 || cc_noderec_put(&s->rec, rec) < 0) {
		free(s->cgroup);
		free(s->value);
		free(s->old);
		free(s->rec);
		return NULL;
	}
	plan->n++;
	return s;
}

/* A write to the carve's own cgroup, with the value before for a failed
 * apply's undo. */
static int own(struct planner *p, const char *file, const char *value, struct cc_err *err)
{
	_cleanup_free_ char *old = cc_cg_read(p->cg, p->c->cgroup, file, err);

	if (!old)
		return -1;
	if (!add_step(p->plan, STEP_WRITE, p->c->cgroup, file, value, old, NULL))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

static int fault_point(struct planner *p, struct cc_err *err)
{
	if (!add_step(p->plan, STEP_FAULT, p->c->cgroup, NULL, NULL, NULL, NULL))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

static int own_partition(struct planner *p, struct cc_err *err)
{
	_cleanup_free_ char *old = cc_cg_read(p->cg, p->c->cgroup, "cpuset.cpus.partition", err);

	if (!old)
		return -1;
	if (!add_step(p->plan, STEP_PARTITION, p->c->cgroup, "cpuset.cpus.partition",
		      p->c->isolated ? "isolated" : "root", old, NULL))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

/* The record for `key`, ready to take this carve: a file that no longer
 * reads what corecarve left there was changed by someone else, and their
 * value becomes the original to restore (said once, when corecarve had
 * written it); a file met the first time is recorded as it is now. */
static struct cc_noderec *take_record(struct planner *p, const char *key, enum rec_kind k, const char *cur,
				      bool create, struct cc_err *err)
{
	struct cc_noderec *r = cc_noderecs_find(p->recs, key);

	if (r && !ours(r, cur)) {
		if (r->set)
			msg(&p->plan->msgs, "%s was changed by someone else (\"%s\", corecarve had written \"%s\"); "
			    "that value is kept as the one to restore", key, cur ? cur : "(gone)", r->set);
		if (cc_noderec_put(&r->orig, cur) < 0 || cc_noderec_put(&r->set, NULL) < 0 ||
		    cc_noderec_put(&r->pending, NULL) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records"), NULL;
	}
	if (r || !create)
		return r;
	r = cc_noderecs_add(p->recs, key, cc_cg_rec_kinds[k], cur);
	if (!r)
		cc_err_sys(err, ENOMEM, "cgroup records");
	return r;
}

/* Give the record this carve's share and plan the write its new value
 * needs, if any. */
static int own_share(struct planner *p, struct cc_noderec *r, const char *share, const char *cgroup,
		     const char *file, const char *cur, hwloc_const_bitmap_t parent_cpus, struct cc_err *err)
{
	_cleanup_free_ char *value = NULL;
	enum rec_kind k = rec_kind(r);

	if (held_kind(k) ? held_update(r, held_share(p->c, k), true, err) < 0
			 : cc_noderec_set_owner(r, p->c->id, share) < 0)
		return cc_err_isset(err) ? -1 : cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (same(rec_kind(r), value, cur))
		return 0;
	if (cc_noderec_put(&r->pending, value) < 0 || !add_step(p->plan, STEP_WRITE, cgroup, file, value, NULL, r->path))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

static int plan_exclusive(struct planner *p, const char *anc, const char *share, struct cc_err *err)
{
	_cleanup_free_ char *cur = cc_cg_read(p->cg, anc, "cpuset.cpus.exclusive", err);
	char key[PATH_MAX + 64];
	struct cc_noderec *r;

	if (!cur || rec_key(key, sizeof(key), anc, "cpuset.cpus.exclusive", err) < 0)
		return -1;
	r = take_record(p, key, K_EXCLUSIVE, cur, true, err);
	return r ? own_share(p, r, share, anc, "cpuset.cpus.exclusive", cur, NULL, err) : -1;
}

/* Parked SMT siblings live in an empty isolated partition of their own: no
 * task of any tenant can be scheduled there, and the container's own
 * partition holds exactly the CPUs it runs on. */
static int plan_parked(struct planner *p, const char *share, struct cc_err *err)
{
	_cleanup_free_ char *cur = NULL, *value = NULL;
	char pk[PATH_MAX], key[PATH_MAX + 64];
	struct cc_noderec *r;
	bool exists;

	if (cc_cg_parked_cgroup(p->c->mode, p->c->cgroup, pk, sizeof(pk), err) < 0 ||
	    rec_key(key, sizeof(key), pk, "cpuset.cpus", err) < 0)
		return -1;
	exists = cc_cg_exists(p->cg, pk, NULL);
	if (exists && !(cur = cc_cg_read(p->cg, pk, "cpuset.cpus", err)))
		return -1;
	(void)share;
	r = take_record(p, key, K_PARKED, cur, true, err);
	if (!r || held_update(r, p->c->parked, true, err) < 0)
		return -1;
	if (cc_cg_rec_value(r, NULL, &value, err) < 0)
		return -1;
	if (cc_noderec_put(&r->pending, value) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if ((!exists && !add_step(p->plan, STEP_MKDIR, pk, NULL, NULL, NULL, NULL)) ||
	    (p->has_exclusive && !add_step(p->plan, STEP_WRITE, pk, "cpuset.cpus.exclusive", value, NULL, NULL)) ||
	    !add_step(p->plan, STEP_WRITE, pk, "cpuset.cpus", value, NULL, r->path) ||
	    !add_step(p->plan, STEP_PARTITION, pk, "cpuset.cpus.partition", "isolated", NULL, NULL))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

/* cpuset-only mode: the carve's CPUs and parked siblings leave every
 * sibling cgroup that is not itself a carve. */
static int plan_peers(struct planner *p, const char *share, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_free_ struct cc_cg_share *sib = NULL;
	_cleanup_siblings_ struct cg_siblings it = { 0 };
	char parent[PATH_MAX], peer[PATH_MAX];
	int nsib = -1, more;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	cc_cg_parent(p->c->cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(p->cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    cg_siblings_open(p->cg, p->c->cgroup, &it, err) < 0)
		return -1;
	while ((more = cg_siblings_next(&it, peer, sizeof(peer), err)) > 0) {
		_cleanup_free_ char *cur = NULL;
		char key[PATH_MAX + 64];
		struct cc_noderec *r;
		bool fresh;

		if (!strcmp(strrchr(peer, '/') + 1, CC_PARKED_NAME))
			continue;
		if (rec_key(key, sizeof(key), peer, "cpuset.cpus", err) < 0)
			return -1;
		/* A live carve's cgroup is never a peer: it holds its own CPUs. */
		if (p->others->is_carve(p->others->arg, peer))
			continue;
		if (read_opt(p->cg, peer, "cpuset.cpus", &cur, err) < 0)
			return -1;
		if (!cur)
			continue;
		r = cc_noderecs_find(p->recs, key);
		/* A shared container beside the carve is narrowed as one
		 * (plan_shared), wherever it is. */
		if (r && rec_kind(r) == K_SHARED)
			continue;
		fresh = !r;
		r = take_record(p, key, K_PEER, cur, true, err);
		if (!r)
			return -1;
		/* Met for the first time: the cpuset-only carves already under
		 * this parent are its owners too (it may have been made after
		 * them). */
		if (fresh) {
			if (nsib < 0 && p->others->siblings(p->others->arg, parent, &sib, &nsib, err) < 0)
				return -1;
			for (int i = 0; i < nsib; i++)
				if (cc_noderec_set_owner(r, sib[i].id, sib[i].share) < 0)
					return cc_err_sys(err, ENOMEM, "cgroup records");
		}
		if (own_share(p, r, share, peer, "cpuset.cpus", cur, parent_cpus, err) < 0)
			return -1;
		/* Nothing to take and nothing recorded before: no record. */
		if (fresh && !r->pending)
			cc_noderecs_del(p->recs, key);
	}
	return more;
}

/* Every shared-pool container whose pool holds CPUs of the carve gives
 * them up, before any partition is written (6.12 invalidates a partition
 * whose CPUs a sibling's cpuset.cpus still lists).  A record whose cgroup
 * went goes with it. */
static int plan_shared(struct planner *p, const char *share, hwloc_const_bitmap_t both, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t orig = hwloc_bitmap_alloc();
	char **paths = NULL;
	int n = 0, rc = 0;

	if (!orig)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	if (cc_noderecs_load(p->recs, NULL, 0, "shared", err) < 0)
		return -1;
	/* By path: a lookup may read a record and move the others. */
	paths = calloc((size_t)p->recs->n + 1, sizeof(*paths));
	if (!paths)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	for (int i = 0; i < p->recs->n; i++)
		if (rec_kind(&p->recs->r[i]) == K_SHARED && !(paths[n++] = strdup(p->recs->r[i].path)))
			rc = cc_err_sys(err, ENOMEM, "cgroup plan");
	for (int i = 0; i < n && rc == 0; i++) {
		_cleanup_free_ char *cur = NULL;
		char cgroup[PATH_MAX];
		const char *file;
		struct cc_noderec *r = cc_noderecs_find(p->recs, paths[i]);

		if (!r || rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0 ||
		    read_opt(p->cg, cgroup, file, &cur, err) < 0) {
			rc = r ? -1 : 0;
			continue;
		}
		if (!cur) {
			cc_noderecs_del(p->recs, paths[i]);
			continue;
		}
		r = take_record(p, paths[i], K_SHARED, cur, false, err);
		if (!r) {
			rc = cc_err_isset(err) ? -1 : 0;
			continue;
		}
		/* Inheriting (someone else's value): its CPUs are the parent's
		 * effective set, which a partition already leaves out of it. */
		if (!r->orig[0])
			continue;
		if (parse_cpus(r->orig, orig, r, "orig", err) < 0) {
			rc = -1;
			continue;
		}
		if (hwloc_bitmap_intersects(orig, both))
			rc = own_share(p, r, share, cgroup, file, cur, NULL, err);
	}
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

/* A shared-pool container's own cpuset.cpus: its pool minus every live
 * carve in it, as a "shared" record made now (an earlier one under the
 * same cgroup was dropped with the carve's-cgroup key above), so that
 * carves arriving later narrow it and those going give their CPUs back. */
static int plan_shared_self(struct planner *p, struct cc_err *err)
{
	_cleanup_free_ struct cc_cg_share *sh = NULL;
	_cleanup_free_ char *cur = NULL, *orig = NULL, *value = NULL;
	char key[PATH_MAX + 64];
	struct cc_noderec *r;
	int n = 0;

	cur = cc_cg_read(p->cg, p->c->cgroup, "cpuset.cpus", err);
	orig = cc_cpulist_format(p->c->pool);
	if (!cur || rec_key(key, sizeof(key), p->c->cgroup, "cpuset.cpus", err) < 0)
		return -1;
	if (!orig || !(r = cc_noderecs_add(p->recs, key, cc_cg_rec_kinds[K_SHARED], orig)))
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (p->others && p->others->carves_in &&
	    p->others->carves_in(p->others->arg, p->c->pool, &sh, &n, err) < 0)
		return -1;
	r = cc_noderecs_find(p->recs, key);
	for (int i = 0; r && i < n; i++)
		if (cc_noderec_set_owner(r, sh[i].id, sh[i].share) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records");
	if (!r)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, NULL, &value, err) < 0)
		return -1;
	if (cc_noderec_put(&r->pending, value) < 0 ||
	    !add_step(p->plan, STEP_WRITE, p->c->cgroup, "cpuset.cpus", value, cur, key))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	return 0;
}

void cc_cg_shared_forget(struct cc_noderecs *recs, const char *cgroup)
{
	char key[PATH_MAX + 64];

	if (rec_key(key, sizeof(key), cgroup, "cpuset.cpus", &(struct cc_err)CC_ERR_INIT) == 0)
		cc_noderecs_del(recs, key);
}

/* The pod's quota goes while any carve of it lives: every quota-dropping
 * carve below it is an owner, and the last one gone restores it. */
static int plan_quota(struct planner *p, const char *anc, const char *share, struct cc_err *err)
{
	_cleanup_free_ char *cur = NULL;
	char key[PATH_MAX + 64];
	long long quota, period;
	struct cc_noderec *r;
	bool fresh;

	if (read_opt(p->cg, anc, "cpu.max", &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", anc, cur);
	if (rec_key(key, sizeof(key), anc, "cpu.max", err) < 0)
		return -1;
	fresh = !cc_noderecs_find(p->recs, key);
	r = take_record(p, key, K_QUOTA, cur, quota >= 0, err);
	if (!r)
		return cc_err_isset(err) ? -1 : 0;
	/* A record made now, after carves already live below (the pod was at
	 * max, then resized or CPUQuota= re-applied): every one of them is an
	 * owner, or the value would count the newcomer alone. */
	if (fresh && p->others && p->others->quota_carves_below) {
		_cleanup_free_ struct cc_cg_share *sh = NULL;
		int n = 0;

		if (p->others->quota_carves_below(p->others->arg, anc, &sh, &n, err) < 0)
			return -1;
		for (int i = 0; i < n; i++)
			if (cc_noderec_set_owner(r, sh[i].id, sh[i].share) < 0)
				return cc_err_sys(err, ENOMEM, "cgroup records");
	}
	return own_share(p, r, share, anc, "cpu.max", cur, NULL, err);
}

/* Above the pod corecarve lifts nothing (an admin's cap on /kubepods or a
 * slice is the node's, not a pod's to take away): a quota there smaller
 * than the quota-dropping carves below it, this one with them, would
 * throttle exclusive CPUs, so the carve is refused, naming the cgroup. */
static int check_quota_above(struct planner *p, const char *anc, int ncpus, struct cc_err *err)
{
	_cleanup_free_ char *cur = NULL;
	long long quota, period, below = 0, need;
	struct cc_err e = CC_ERR_INIT;

	if (read_opt(p->cg, anc, "cpu.max", &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", anc, cur);
	if (quota < 0)
		return 0;
	if (p->others && p->others->quota_carves_below) {
		_cleanup_free_ struct cc_cg_share *sh = NULL;
		int n = 0;

		if (p->others->quota_carves_below(p->others->arg, anc, &sh, &n, &e) < 0) {
			*err = e;
			return -1;
		}
		for (int i = 0; i < n; i++)
			below += strtoll(sh[i].share, NULL, 10);
	}
	need = below + ncpus;
	if (!__builtin_mul_overflow(need, period, &need) && need <= quota)
		return 0;
	return cc_err_set(err, EPERM,
			  "%s has cpu.max \"%lld %lld\" (%.2f CPUs), less than the %lld exclusive CPUs carved below it "
			  "with this carve: corecarve lifts the quota of a container and its pod only, never above; raise "
			  "the quota of %s or ask for fewer CPUs",
			  anc, quota, period, (double)quota / (double)period, below + ncpus, anc);
}

int cc_cg_plan_carve(struct cc_cg *cg, struct cc_cg_carve *c, const struct cc_cg_others *others,
		     struct cc_noderecs *recs, struct cc_cg_plan *plan, struct cc_err *err)
{
	struct planner p = { cg, c, others, recs, plan, false };
	/* 128 KiB: on the heap, not the hook's stack. */
	_cleanup_free_ char(*anc)[PATH_MAX] = calloc(CG_MAX_DEPTH, PATH_MAX);
	char key[PATH_MAX + 64];
	_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
	_cleanup_free_ char *cpus = NULL, *parked = NULL, *both_s = NULL, *mems = NULL;
	int nanc;

	memset(plan, 0, sizeof(*plan));
	if (!both || !anc)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	if (cg_check_dir(cg, c->cgroup, err) < 0)
		return -1;
	/* Before the first write (controllers): nothing half-applied. */
	if (!cg->ops)
		return cc_err_set(err, EPERM, "cgroup %s: cgroups are only changed on the real host (root is %s)",
				  c->cgroup, cg->root->path);
	nanc = cg_ancestors(c->cgroup, anc, CG_MAX_DEPTH);
	if (nanc >= CG_MAX_DEPTH)
		return cc_err_set(err, EINVAL, "cgroup %s is nested deeper than %d levels", c->cgroup, CG_MAX_DEPTH);
	if (cg_enable_controllers(cg, c->cgroup, err) < 0)
		return cc_err_prefix(err, "%s", c->cgroup);
	c->mode = c->exclusive ? cc_cg_probe_mode(cg, c->cgroup) : CC_MODE_CPUSET_ONLY;
	plan->mode = c->mode;
	p.has_exclusive = cc_cg_exists(cg, c->cgroup, "cpuset.cpus.exclusive");

	hwloc_bitmap_or(both, c->cpus, c->parked);
	cpus = cc_cpulist_format(c->cpus);
	parked = cc_cpulist_format(c->parked);
	both_s = cc_cpulist_format(both);
	mems = cc_cpulist_format(c->mems);
	if (!cpus || !parked || !both_s || !mems)
		return cc_err_sys(err, ENOMEM, "cgroup plan");

	/* The carve's cgroup, once a peer of an earlier carve, is one no more:
	 * its cpuset.cpus is the carve's now. */
	if (rec_key(key, sizeof(key), c->cgroup, "cpuset.cpus", err) < 0)
		return -1;
	cc_noderecs_del(recs, key);

	if (c->exclusive && plan_shared(&p, both_s, both, err) < 0)
		goto fail;
	if (c->exclusive && !hwloc_bitmap_iszero(c->parked) && c->mode != CC_MODE_CPUSET_ONLY &&
	    plan_parked(&p, parked, err) < 0)
		goto fail;
	switch (c->mode) {
	case CC_MODE_REMOTE:
		/* Remote partitions draw their CPUs through the exclusive set of
		 * every ancestor below the root: widened top-down. */
		for (int i = 0; i < nanc; i++)
			if (plan_exclusive(&p, anc[i], cpus, err) < 0)
				goto fail;
		if (fault_point(&p, err) < 0 || own(&p, "cpuset.cpus", cpus, err) < 0 ||
		    own(&p, "cpuset.cpus.exclusive", cpus, err) < 0 || own_partition(&p, err) < 0)
			goto fail;
		break;
	case CC_MODE_LOCAL:
		if (own(&p, "cpuset.cpus", cpus, err) < 0 || fault_point(&p, err) < 0 || own_partition(&p, err) < 0)
			goto fail;
		break;
	case CC_MODE_CPUSET_ONLY:
		if ((!c->exclusive && c->pool ? plan_shared_self(&p, err) : own(&p, "cpuset.cpus", cpus, err)) < 0 ||
		    (c->exclusive && plan_peers(&p, both_s, err) < 0) ||
		    fault_point(&p, err) < 0)
			goto fail;
		break;
	}
	if (!hwloc_bitmap_iszero(c->mems) && own(&p, "cpuset.mems", mems, err) < 0)
		goto fail;
	if (c->drop_quota) {
		char n[32];
		_cleanup_free_ char *cur = NULL;

		snprintf(n, sizeof(n), "%d", hwloc_bitmap_weight(c->cpus));
		/* A shared-pool container owns no CPU: it lifts no pod quota.
		 * The pod (the parent) has none while a carve of it lives;
		 * above it, a quota too small for the carves refuses. */
		for (int i = nanc - 1; c->exclusive && i >= 0; i--) {
			int r = i == nanc - 1 ? plan_quota(&p, anc[i], n, err)
					      : check_quota_above(&p, anc[i], hwloc_bitmap_weight(c->cpus), err);

			if (r < 0)
				goto fail;
		}
		/* The container itself: no quota at all. */
		if (read_opt(cg, c->cgroup, "cpu.max", &cur, err) < 0)
			goto fail;
		if (cur) {
			long long quota, period;
			char val[64];

			if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0) {
				cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", c->cgroup, cur);
				goto fail;
			}
			snprintf(val, sizeof(val), "max %lld", period);
			if (quota >= 0 && own(&p, "cpu.max", val, err) < 0)
				goto fail;
		}
	}
	return 0;
fail:
	cc_err_prefix(err, "%s (%s)", c->cgroup, cc_cg_mode_name(c->mode));
	cc_cg_plan_fini(plan);
	return -1;
}

void cc_cg_plan_fini(struct cc_cg_plan *plan)
{
	for (int i = 0; i < plan->n; i++) {
		free(plan->steps[i].cgroup);
		free(plan->steps[i].value);
		free(plan->steps[i].old);
		free(plan->steps[i].rec);
	}
	free(plan->steps);
	plan->steps = NULL;
	plan->n = plan->done = 0;
}

/* ---- apply ------------------------------------------------------------- */

static bool is_cpuset_file(const char *file)
{
	return !strcmp(file, "cpuset.cpus") || !strcmp(file, "cpuset.mems") || !strcmp(file, "cpuset.cpus.exclusive");
}

/* A value into a file: sets only when they differ (a cpuset write that
 * changes nothing still costs the kernel a rebuild of the domains). */
static int put(struct cc_cg *cg, const char *cgroup, const char *file, const char *value, struct cc_err *err)
{
	if (is_cpuset_file(file)) {
		_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
		char what[PATH_MAX + 64];

		snprintf(what, sizeof(what), "%s/%s", cgroup, file);
		if (!set)
			return cc_err_sys(err, ENOMEM, "cgroup");
		if (cc_cpulist_parse(value, set, what, err) < 0)
			return -1;
		return cg_write_cpus(cg, cgroup, file, set, NULL, err);
	}
	return cc_cg_write(cg, cgroup, file, value, NULL, err);
}

static int step_do(struct cc_cg *cg, const struct cc_cg_step *s, struct cc_err *err)
{
	switch (s->op) {
	case STEP_MKDIR:
		return cc_cg_mkdir(cg, s->cgroup, err);
	case STEP_PARTITION:
		return cg_make_partition(cg, s->cgroup, !strcmp(s->value, "isolated"), NULL, err);
	case STEP_FAULT:
		cc_fault(cg->fault, "mid-cgroup-write");
		return 0;
	case STEP_WRITE:
		break;
	}
	return put(cg, s->cgroup, s->file, s->value, err);
}

/* A cgroup runs on exactly the CPUs it was given: nothing else proves it
 * (Linux 7.0 strips CPUs a sibling partition holds instead of failing the
 * write, and keeps the partition valid on what is left). */
static int check_effective(struct cc_cg *cg, const char *cgroup, const char *file, hwloc_const_bitmap_t want,
			   const char *what, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_free_ char *g = NULL, *w = NULL;

	if (!got)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (cc_cg_read_cpus(cg, cgroup, file, got, err) < 0)
		return -1;
	if (hwloc_bitmap_isequal(got, want))
		return 0;
	g = cc_cpulist_format(got);
	w = cc_cpulist_format(want);
	return cc_err_set(err, EIO,
			  "%s/%s reads \"%s\", not the carved \"%s\": the kernel runs %s on other CPUs "
			  "(a partition elsewhere holds some of them?); refused",
			  cgroup, file, g ? g : "?", w ? w : "?", what);
}

/* The carve's memory nodes, read back like its CPUs: a parent whose
 * cpuset.mems leaves them out makes the kernel place the memory on the
 * parent's nodes instead (effective = the parent's when nothing is left),
 * which would turn `memory: local` silently into remote memory.  That is
 * a refusal, with the fix in the message. */
static int check_mems(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_free_ char *g = NULL, *w = NULL;

	if (!got)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (cc_cg_read_cpus(cg, c->cgroup, "cpuset.mems.effective", got, err) < 0)
		return -1;
	if (hwloc_bitmap_isequal(got, c->mems))
		return 0;
	g = cc_cpulist_format(got);
	w = cc_cpulist_format(c->mems);
	return cc_err_set(err, EIO,
			  "%s/cpuset.mems.effective reads \"%s\", not the carve's memory nodes \"%s\": a parent's "
			  "cpuset.mems leaves them out; refused (allow those nodes in the parents' cpuset.mems)",
			  c->cgroup, g ? g : "?", w ? w : "?");
}

/* The parked partition holds every parked sibling it was given. */
static int check_parked(struct cc_cg *cg, const struct cc_cg_plan *plan, const struct cc_noderecs *recs,
			struct cc_err *err)
{
	for (int i = 0; i < plan->n; i++) {
		const struct cc_cg_step *s = &plan->steps[i];
		_cleanup_bitmap_ hwloc_bitmap_t want = NULL;
		const struct cc_noderec *r;
		struct cc_err e = CC_ERR_INIT;

		if (!s->rec || strcmp(s->file, "cpuset.cpus") || !(r = cc_noderecs_find(recs, s->rec)) ||
		    strcmp(r->kind, "parked") || !r->set)
			continue;
		want = hwloc_bitmap_alloc();
		if (!want)
			return cc_err_sys(err, ENOMEM, "cgroup");
		if (cc_cpulist_parse(r->set, want, r->path, &e) < 0) {
			*err = e;
			return -1;
		}
		return check_effective(cg, s->cgroup, "cpuset.cpus.effective", want, "the parked siblings", err);
	}
	return 0;
}

/* A peer's cgroup that went between the plan and its write (its container
 * exited: ENOENT, or ENODEV while the kernel removes it) has nothing left
 * to narrow: the carve goes on without it, and its record goes (undo
 * treats the same case alike).  True when `e` says so for a peer step. */
static bool peer_gone(const struct cc_cg_step *s, struct cc_noderecs *recs, const struct cc_err *e)
{
	struct cc_noderec *r = s->rec ? cc_noderecs_find(recs, s->rec) : NULL;

	if (!r || (rec_kind(r) != K_PEER && rec_kind(r) != K_SHARED) || !cc_cg_gone(e->code))
		return false;
	cc_noderecs_del(recs, s->rec);
	return true;
}

int cc_cg_apply_plan(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_err *err)
{
	for (plan->done = 0; plan->done < plan->n; plan->done++) {
		struct cc_cg_step *s = &plan->steps[plan->done];
		struct cc_err e = CC_ERR_INIT;
		struct cc_noderec *r;

		if (step_do(cg, s, &e) < 0) {
			if (peer_gone(s, recs, &e))
				continue;
			*err = e;
			goto fail;
		}
		if (!s->rec || !(r = cc_noderecs_find(recs, s->rec)))
			continue;
		{
			_cleanup_free_ char *now = cc_cg_read(cg, s->cgroup, s->file, &e);

			if (!now && peer_gone(s, recs, &e))
				continue;
			if (!now) {
				*err = e;
				goto fail;
			}
			if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0) {
				cc_err_sys(err, ENOMEM, "cgroup records");
				goto fail;
			}
		}
	}
	if (!hwloc_bitmap_iszero(c->mems) && check_mems(cg, c, err) < 0)
		goto fail;
	/* A shared pool's cgroup runs wherever the pool is. */
	if (!c->exclusive)
		return 0;
	if (check_effective(cg, c->cgroup, "cpuset.cpus.effective", c->cpus, "the container", err) < 0 ||
	    (c->mode != CC_MODE_CPUSET_ONLY && cc_cg_exists(cg, c->cgroup, "cpuset.cpus.exclusive.effective") &&
	     check_effective(cg, c->cgroup, "cpuset.cpus.exclusive.effective", c->cpus, "the container", err) < 0) ||
	    check_parked(cg, plan, recs, err) < 0)
		goto fail;
	return 0;
fail:
	return cc_err_prefix(err, "%s (%s)", c->cgroup, cc_cg_mode_name(c->mode));
}

/* ---- undo ---------------------------------------------------------------- */

/* Undo order: quotas, peers, ancestors' exclusive sets bottom-up (a
 * parent's must cover its children's), the parked partition last. */
static int undo_rank(const struct cc_noderec *r)
{
	int depth = 0;

	for (const char *p = r->path; *p; p++)
		depth += *p == '/';
	switch (rec_kind(r)) {
	case K_QUOTA:
		return 0;
	case K_PEER:
	case K_SHARED:
		return 1;
	case K_EXCLUSIVE:
		return 2 + (CG_MAX_DEPTH + 2 - depth);
	default:
		return 2 * CG_MAX_DEPTH + 8;
	}
}

static int by_undo_rank(const void *a, const void *b)
{
	const struct cc_noderec *const *x = a, *const *y = b;
	int rx = undo_rank(*x), ry = undo_rank(*y);

	if (rx != ry)
		return rx - ry;
	return (*x)->seq < (*y)->seq ? 1 : (*x)->seq > (*y)->seq ? -1 : 0;
}

/* A set that inherits goes back to inheriting.  Linux 6.1 refuses an
 * empty cpuset.cpus or cpuset.mems on a cgroup with tasks (ENOSPC)
 * although it means "inherit": then it gets its parent's written out
 * (`parent_set`, the parent's effective), and a --verbose note says so. */
static int write_inherit(struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
			 hwloc_const_bitmap_t parent_set, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *all = NULL;

	if (value[0] || put(cg, cgroup, file, "", &e) == 0)
		return value[0] ? put(cg, cgroup, file, value, err) : 0;
	if (e.code != ENOSPC) {
		*err = e;
		return -1;
	}
	all = cc_cpulist_format(parent_set);
	if (!all)
		return cc_err_sys(err, ENOMEM, "cgroup");
	note(msgs, "%s/%s: the kernel refuses the empty (inheriting) set on a cgroup with tasks; "
	     "it gets its parent's %s written out", cgroup, file, all);
	return put(cg, cgroup, file, all, err);
}

/* The carve's own files back as they were before a failed apply, in
 * reverse: its partition gives its CPUs back before anything above it
 * narrows. */
static int undo_own_steps(struct cc_cg *cg, const struct cc_cg_plan *plan, struct cc_err *err)
{
	int rc = 0;

	for (int i = plan->done < plan->n ? plan->done : plan->n - 1; i >= 0; i--) {
		const struct cc_cg_step *s = &plan->steps[i];
		struct cc_err step = CC_ERR_INIT;
		int r;

		if (s->rec || !s->old || s->op == STEP_MKDIR || s->op == STEP_FAULT)
			continue;
		if (s->op == STEP_PARTITION) {
			_cleanup_free_ char *first = strndup(s->old, strcspn(s->old, " "));

			r = first ? cc_cg_write(cg, s->cgroup, s->file, first, NULL, &step) : cc_err_sys(&step, ENOMEM, "undo");
		} else if (!s->old[0] && !is_cpuset_file(s->file)) {
			continue;
		} else if ((!strcmp(s->file, "cpuset.cpus") || !strcmp(s->file, "cpuset.mems")) && !s->old[0]) {
			_cleanup_bitmap_ hwloc_bitmap_t parent_set = hwloc_bitmap_alloc();
			char parent[PATH_MAX], eff[64];

			/* Inheriting again; on 6.1, with the tasks of the refused
			 * container still there, its parent's. */
			cc_cg_parent(s->cgroup, parent, sizeof(parent));
			snprintf(eff, sizeof(eff), "%s.effective", s->file);
			r = !parent_set ? cc_err_sys(&step, ENOMEM, "undo")
					: cc_cg_read_cpus(cg, parent, eff, parent_set, &step);
			if (r == 0)
				r = write_inherit(cg, s->cgroup, s->file, "", parent_set, NULL, &step);
		} else {
			r = put(cg, s->cgroup, s->file, s->old, &step);
		}
		if (r < 0 && rc == 0) {
			*err = step;
			rc = -1;
		}
	}
	return rc;
}

/* A poststop's cgroup is usually gone; one still there (crun runs
 * poststop even when it could not remove it, a failed start, a repair)
 * goes back to inheriting: a member again, its exclusive set and
 * cpuset.cpus emptied.  Left holding the carve's CPUs, it would claim
 * them beside the next carve of them (6.12: "root invalid (Cpu list in
 * cpuset.cpus not exclusive)").  With tasks on 6.1 (ENOSPC) it gets its
 * parent's effective set, which no live partition is in, without the
 * released CPUs.  A cpuset-only survivor keeps the released CPUs:
 * inheriting, its tasks would run on the live carves' CPUs, which its
 * parent's set still holds, and the next carve of them narrows it as a
 * peer. */
static int release_own(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_set = hwloc_bitmap_alloc();
	_cleanup_free_ char *part = NULL;
	struct cc_err step = CC_ERR_INIT;
	char parent[PATH_MAX];
	int rc = 0;

	if (!parent_set)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (c->mode == CC_MODE_CPUSET_ONLY || !c->cgroup[0])
		return 0;
	if (read_opt(cg, c->cgroup, "cpuset.cpus.partition", &part, err) < 0)
		return -1;
	if (!part)
		return 0;
	if (strcmp(part, "member") && cc_cg_write(cg, c->cgroup, "cpuset.cpus.partition", "member", NULL, &step) < 0) {
		*err = step;
		rc = -1;
	}
	cc_err_clear(&step);
	if (c->mode == CC_MODE_REMOTE && cc_cg_exists(cg, c->cgroup, "cpuset.cpus.exclusive") &&
	    put(cg, c->cgroup, "cpuset.cpus.exclusive", "", &step) < 0 && rc == 0) {
		*err = step;
		rc = -1;
	}
	cc_err_clear(&step);
	cc_cg_parent(c->cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_set, &step) == 0) {
		/* The fallback keeps off the released CPUs too: the next carve
		 * of them must not find them claimed. */
		hwloc_bitmap_andnot(parent_set, parent_set, c->cpus);
		if (c->parked)
			hwloc_bitmap_andnot(parent_set, parent_set, c->parked);
		write_inherit(cg, c->cgroup, "cpuset.cpus", "", parent_set, msgs, &step);
	}
	if (cc_err_isset(&step) && !cc_cg_gone(step.code) && rc == 0) {
		*err = step;
		rc = -1;
	}
	return rc;
}

/* The parked partition at `value` (NULL: gone): out of partition mode
 * first when it empties (an empty partition is invalid), the exclusive
 * set before cpuset.cpus as the kernel wants when it narrows. */
static int write_parked(struct cc_cg *cg, const char *pk, const char *value, struct cc_err *err)
{
	bool empty = !value || !value[0];

	if (empty && cc_cg_write(cg, pk, "cpuset.cpus.partition", "member", NULL, err) < 0)
		return -1;
	if (cc_cg_exists(cg, pk, "cpuset.cpus.exclusive") &&
	    put(cg, pk, "cpuset.cpus.exclusive", value ? value : "", err) < 0)
		return -1;
	if (put(cg, pk, "cpuset.cpus", value ? value : "", err) < 0)
		return -1;
	return value ? 0 : cc_cg_rmdir(cg, pk, err);
}

/* Someone else's quota (a kubelet resize), met while carves below still
 * own the record: theirs is the original now, restored by the last owner,
 * and the pod goes back to no quota meanwhile. */
static int rebase_quota(struct cc_cg *cg, struct cc_noderec *r, const char *cgroup, const char *file,
			const char *cur, struct cc_err *err)
{
	_cleanup_free_ char *target = NULL, *now = NULL;

	if (cc_noderec_put(&r->orig, cur) < 0 || cc_noderec_put(&r->set, NULL) < 0 ||
	    cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, NULL, &target, err) < 0)
		return -1;
	if (same(K_QUOTA, cur, target))
		return 0;
	if (put(cg, cgroup, file, target, err) < 0)
		return -1;
	if (read_opt(cg, cgroup, file, &now, err) < 0)
		return -1;
	return cc_noderec_put(&r->set, now ? now : target) < 0 ? cc_err_sys(err, ENOMEM, "cgroup records") : 0;
}

/* A record whose cgroup went: the carve is no owner any more, and it goes
 * with its last owner. */
static int forget(struct cc_noderec *r, const struct cc_cg_carve *c, bool listed, hwloc_const_bitmap_t mine,
		  struct cc_noderecs *recs, struct cc_err *err)
{
	if (listed)
		cc_noderec_del_owner(r, c->id);
	else if (held_update(r, mine, false, err) < 0)
		return -1;
	/* A shared container's record goes with its cgroup. */
	if (!cc_noderec_owned(r) || rec_kind(r) == K_SHARED)
		cc_noderecs_del(recs, r->path);
	return 0;
}

/* One record without the carve. */
static int undo_record(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_noderecs *recs,
		       struct cc_noderec *r, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *target = NULL, *share = NULL, *now = NULL;
	char cgroup[PATH_MAX], parent[PATH_MAX];
	enum rec_kind k = rec_kind(r);
	const char *file = NULL;
	bool written = false, listed;
	int rc;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0)
		return -1;
	listed = cc_noderec_share(r, c->id) != NULL;
	if (listed) {
		share = strdup(cc_noderec_share(r, c->id));
	} else {
		/* Held: the carve's share of what the record holds. */
		if (!mine || !held_kind(k) || !r->held || parse_cpus(r->held, mine, r, "held", err) < 0)
			return cc_err_isset(err) ? -1 : cc_err_sys(err, ENOMEM, "cgroup");
		hwloc_bitmap_and(mine, mine, held_share(c, k));
		share = cc_cpulist_format(mine);
	}
	if (!share)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (read_opt(cg, cgroup, file, &cur, err) < 0)
		return -1;
	/* The cgroup went (a pod removed, a peer container gone): nothing
	 * left to give back.  Other owners of a parked partition someone
	 * removed keep the record: the audit reports it. */
	if (!cur)
		return forget(r, c, listed, mine, recs, err);
	if (k == K_PEER || k == K_SHARED) {
		cc_cg_parent(cgroup, parent, sizeof(parent));
		if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0)
			return -1;
	}
	if (listed)
		cc_noderec_del_owner(r, c->id);
	else if (held_update(r, mine, false, err) < 0)
		return -1;
	if (cc_cg_rec_value(r, parent_cpus, &target, err) < 0)
		goto keep;
	/* Someone else wrote it since: theirs stays.  What an interrupted
	 * undo of this carve left (the target) is corecarve's too — for a
	 * parked cgroup that was to go, an empty one still there. */
	if (!ours(r, cur) && !same(k, cur, target) && !(k == K_PARKED && !target && !cur[0])) {
		if (r->set)
			msg(msgs, "%s was changed by someone else (\"%s\", corecarve had written \"%s\"); kept, "
			    "and no longer restored by corecarve", r->path, cur, r->set);
		if (!r->set && cc_noderec_owned(r)) {
			/* Never written: their value is simply the original now. */
			if (cc_noderec_put(&r->orig, cur) < 0)
				return cc_err_sys(err, ENOMEM, "cgroup records");
			return 0;
		}
		/* A quota others still need lifted is re-based on their value
		 * (the one restored when the last carve goes), not forgotten:
		 * the carves below would otherwise run under a quota. */
		if (k == K_QUOTA && cc_noderec_owned(r)) {
			if (rebase_quota(cg, r, cgroup, file, cur, err) < 0)
				goto keep;
			return 0;
		}
		cc_noderecs_del(recs, r->path);
		return 0;
	}
	/* The parked partition is more than its cpuset.cpus (the exclusive
	 * set may be wider after a write that failed half-way): every file
	 * is brought to the value, and one corecarve made goes with its last
	 * owner. */
	if (!same(k, cur, target) || k == K_PARKED) {
		written = true;
		if (k == K_PARKED)
			rc = write_parked(cg, cgroup, target, err);
		else if (k == K_PEER || k == K_SHARED)
			rc = write_inherit(cg, cgroup, "cpuset.cpus", target, parent_cpus, msgs, err);
		else
			rc = put(cg, cgroup, file, target, err);
		/* Gone between the read and the write: as above (the carve is
		 * no owner already). */
		if (rc < 0 && cc_cg_gone(err->code) && k != K_PARKED) {
			cc_err_clear(err);
			if (!cc_noderec_owned(r) || k == K_SHARED)
				cc_noderecs_del(recs, r->path);
			return 0;
		}
		if (rc < 0)
			goto keep;
	}
	/* The last owner gone, the record goes; a shared container's stays
	 * its own, reading orig again, for the next carve to narrow. */
	if (!cc_noderec_owned(r) && k != K_SHARED) {
		cc_noderecs_del(recs, r->path);
		return 0;
	}
	if (written) {
		if (read_opt(cg, cgroup, file, &now, err) < 0 || cc_noderec_put(&r->set, now ? now : target) < 0)
			goto keep;
	} else if (r->set && cc_noderec_put(&r->set, cur) < 0) {
		/* Already at the target: what an undo whose commit did not
		 * happen (a full disk, a kill) wrote is corecarve's value now,
		 * or the next owner's undo would take it for someone else's. */
		goto keep;
	}
	if (cc_noderec_put(&r->pending, NULL) < 0)
		goto keep;
	return 0;
keep:
	/* Kept with the carve as owner: a retry computes the same value. */
	if (listed ? cc_noderec_set_owner(r, c->id, share) < 0 : held_update(r, mine, true, &(struct cc_err)CC_ERR_INIT) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return cc_err_prefix(err, "%s", r->path);
}

/* The keys of the records a carve's rules give it (ancestors' exclusive
 * sets and quotas, its parked partition), and those that name it. */
static int load_owned(struct cc_noderecs *recs, const struct cc_cg_carve *c, struct cc_err *err)
{
	/* ~400 KiB together: on the heap, not the hook's stack. */
	_cleanup_free_ char(*anc)[PATH_MAX] = NULL;
	_cleanup_free_ char(*keys)[PATH_MAX + 64] = NULL;
	char pk[PATH_MAX];
	const char *ptrs[2 * CG_MAX_DEPTH + 1];
	int nanc = 0, n = 0;

	if (!recs->src)
		return 0;
	anc = calloc(CG_MAX_DEPTH, PATH_MAX);
	keys = calloc(2 * CG_MAX_DEPTH + 1, PATH_MAX + 64);
	if (!anc || !keys)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (c->cgroup[0])
		nanc = cg_ancestors(c->cgroup, anc, CG_MAX_DEPTH);
	for (int i = 0; i < nanc && i < CG_MAX_DEPTH; i++) {
		if (rec_key(keys[n], sizeof(keys[n]), anc[i], "cpuset.cpus.exclusive", err) < 0 ||
		    rec_key(keys[n + 1], sizeof(keys[n + 1]), anc[i], "cpu.max", err) < 0)
			return -1;
		n += 2;
	}
	if (c->cgroup[0] && c->mode != CC_MODE_CPUSET_ONLY &&
	    cc_cg_parked_cgroup(c->mode, c->cgroup, pk, sizeof(pk), &(struct cc_err)CC_ERR_INIT) == 0) {
		if (rec_key(keys[n], sizeof(keys[n]), pk, "cpuset.cpus", err) < 0)
			return -1;
		n++;
	}
	for (int i = 0; i < n; i++)
		ptrs[i] = keys[i];
	return cc_noderecs_load(recs, ptrs, n, c->id, err);
}

int cc_cg_undo_carve(struct cc_cg *cg, const struct cc_cg_carve *c, const struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_free_ const struct cc_noderec **mine = NULL;
	struct cc_err step = CC_ERR_INIT;
	char **paths = NULL;
	int n = 0, rc = 0;

	if (!cg->ops)
		return cc_err_set(err, EPERM, "carve %s: cgroups are only changed on the real host (root is %s)", c->id,
				  cg->root->path);
	if ((plan ? undo_own_steps(cg, plan, &step) : release_own(cg, c, msgs, &step)) < 0) {
		cc_err_prefix(&step, "%s", c->cgroup);
		*err = step;
		rc = -1;
	}
	/* A lazy set reads the records the carve may own: those of its
	 * ancestors and its parked partition (found by key), and those that
	 * list it (peers, quotas: found by its id). */
	if (load_owned(recs, c, err) < 0)
		return -1;
	mine = calloc((size_t)recs->n + 1, sizeof(*mine));
	paths = calloc((size_t)recs->n + 1, sizeof(*paths));
	if (!mine || !paths) {
		free(paths);
		return cc_err_sys(err, ENOMEM, "cgroup records");
	}
	for (int i = 0; i < recs->n; i++)
		if (owns(&recs->r[i], c))
			mine[n++] = &recs->r[i];
	qsort(mine, (size_t)n, sizeof(*mine), by_undo_rank);
	/* By path from here: undoing one record may drop it from recs and
	 * move the others. */
	for (int i = 0; i < n; i++)
		if (!(paths[i] = strdup(mine[i]->path)))
			rc = cc_err_sys(err, ENOMEM, "cgroup records");
	for (int i = 0; i < n; i++) {
		struct cc_noderec *r = paths[i] ? cc_noderecs_find(recs, paths[i]) : NULL;
		if (!r || !owns(r, c))
			continue;
		cc_err_clear(&step);
		if (undo_record(cg, c, recs, r, msgs, &step) < 0 && rc == 0) {
			*err = step;
			rc = -1;
		}
	}
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

int cc_cg_drop_held(struct cc_cg *cg, const char *path, hwloc_const_bitmap_t carved, struct cc_noderecs *recs,
		    struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t orphan = hwloc_bitmap_alloc();
	struct cc_noderec *r = cc_noderecs_find(recs, path);
	struct cc_cg_carve none = { .id = "", .cgroup = "", .mode = CC_MODE_CPUSET_ONLY };
	enum rec_kind k;

	if (!orphan)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", path);
	if (!r || !r->held)
		return 0;
	k = rec_kind(r);
	if (!held_kind(k) || parse_cpus(r->held, orphan, r, "held", err) < 0)
		return cc_err_isset(err) ? -1 : 0;
	hwloc_bitmap_andnot(orphan, orphan, carved);
	if (hwloc_bitmap_iszero(orphan))
		return 0;
	/* An owner that had exactly those. */
	if (k == K_EXCLUSIVE)
		none.cpus = orphan;
	else
		none.parked = orphan;
	return undo_record(cg, &none, recs, r, msgs, err);
}

/* ---- a peer taken in by audit --fix ------------------------------------- */

int cc_cg_take_peer(struct cc_cg *cg, const char *peer, const struct cc_cg_share *owners, int n,
		    struct cc_noderecs *recs,
		    int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		    struct cc_cg_msgs *msgs, struct cc_err *err)
{
	struct cc_cg_plan scratch = { 0 };
	struct planner p = { .cg = cg, .recs = recs, .plan = &scratch };
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *part = NULL, *value = NULL, *now = NULL;
	char parent[PATH_MAX], key[PATH_MAX + 64];
	struct cc_noderec *r;
	bool fresh;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", peer);
	part = cc_cg_read(cg, peer, "cpuset.cpus.partition", err);
	if (!part)
		return -1;
	/* A partition of its own is not a peer to narrow: UNKNOWN_CARVE. */
	if (strcmp(part, "member"))
		return cc_err_set(err, EPERM, "%s is a partition (%s): not corecarve's to narrow", peer, part);
	cur = cc_cg_read(cg, peer, "cpuset.cpus", err);
	if (!cur)
		return -1;
	cc_cg_parent(peer, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    rec_key(key, sizeof(key), peer, "cpuset.cpus", err) < 0)
		return -1;
	fresh = !cc_noderecs_find(recs, key);
	r = take_record(&p, key, K_PEER, cur, true, err);
	for (int i = 0; i < scratch.msgs.n; i++)
		(scratch.msgs.note[i] ? note : msg)(msgs, "%s", scratch.msgs.line[i]);
	if (!r)
		return -1;
	for (int i = 0; i < n; i++)
		if (cc_noderec_set_owner(r, owners[i].id, owners[i].share) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (same(K_PEER, value, cur)) {
		if (fresh)
			cc_noderecs_del(recs, key);
		return 0;
	}
	if (cc_noderec_put(&r->pending, value) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (journal(arg, recs, err) < 0 || put(cg, peer, "cpuset.cpus", value, err) < 0)
		return -1;
	r = cc_noderecs_find(recs, key);
	now = cc_cg_read(cg, peer, "cpuset.cpus", err);
	if (!r || !now)
		return r ? -1 : 0;
	if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return 0;
}

/* ---- a shared container widened by audit --fix -------------------------- */

int cc_cg_shared_widen(struct cc_cg *cg, const char *path, const struct cc_cg_share *owners, int n,
		       struct cc_noderecs *recs,
		       int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		       struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc(), share = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *value = NULL, *now = NULL;
	char cgroup[PATH_MAX], parent[PATH_MAX];
	struct cc_noderec *r = cc_noderecs_find(recs, path);
	const char *file;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", path);
	if (!r || rec_kind(r) != K_SHARED)
		return 0; /* gone since the audit read it */
	if (rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0 || read_opt(cg, cgroup, file, &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	/* Someone else's value since is theirs: the next carve takes it as
	 * the pool. */
	if (!ours(r, cur))
		return cc_err_set(err, EBUSY, "%s reads \"%s\", not what corecarve wrote (\"%s\"): someone else changed it",
				  path, cur, r->set ? r->set : r->orig);
	if (!pool || !share || !r->orig[0] || parse_cpus(r->orig, pool, r, "orig", err) < 0)
		return cc_err_isset(err) ? -1 : 0;
	/* The carves in its pool, and only those, own it. */
	while (r->nowners > 0)
		cc_noderec_del_owner(r, r->owners[0].id);
	for (int i = 0; i < n; i++) {
		if (cc_cpulist_parse(owners[i].share, share, owners[i].id, err) < 0)
			return -1;
		if (hwloc_bitmap_intersects(share, pool) && cc_noderec_set_owner(r, owners[i].id, owners[i].share) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records");
	}
	cc_cg_parent(cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (same(K_SHARED, cur, value))
		return 0;
	if (cc_noderec_put(&r->pending, value) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (journal(arg, recs, err) < 0 || put(cg, cgroup, file, value, err) < 0)
		return -1;
	now = cc_cg_read(cg, cgroup, file, err);
	r = cc_noderecs_find(recs, path);
	if (!now || !r)
		return now ? 0 : -1;
	if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return 0;
}
