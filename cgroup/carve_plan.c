/* corecarve: a carve's plan: its records taken with their pending values
 * and the writes they need, nothing written (carve.c has the record rules;
 * cgroup_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"

/* ---- the plan ------------------------------------------------------------ */

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
struct cc_noderec *cg_take_record(struct planner *p, const char *key, enum rec_kind k, const char *cur,
				      bool create, struct cc_err *err)
{
	struct cc_noderec *r = cc_noderecs_find(p->recs, key);

	if (r && !cc_cg_rec_ours(r, cur)) {
		if (r->set)
			cg_msg(&p->plan->msgs, "%s was changed by someone else (\"%s\", corecarve had written \"%s\"); "
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
	enum rec_kind k = cg_rec_kind(r);

	if (cg_held_kind(k) ? cg_held_update(r, cg_held_share(p->c, k), true, err) < 0
			 : cc_noderec_set_owner(r, p->c->id, share) < 0)
		return cc_err_isset(err) ? -1 : cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (cg_same(cg_rec_kind(r), value, cur))
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

	if (!cur || cg_rec_key(key, sizeof(key), anc, "cpuset.cpus.exclusive", err) < 0)
		return -1;
	r = cg_take_record(p, key, K_EXCLUSIVE, cur, true, err);
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
	    cg_rec_key(key, sizeof(key), pk, "cpuset.cpus", err) < 0)
		return -1;
	exists = cc_cg_exists(p->cg, pk, NULL);
	if (exists && !(cur = cc_cg_read(p->cg, pk, "cpuset.cpus", err)))
		return -1;
	(void)share;
	r = cg_take_record(p, key, K_PARKED, cur, true, err);
	if (!r || cg_held_update(r, p->c->parked, true, err) < 0)
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

/* cpuset-only mode: `peer`, a cgroup beside the carve or beside one of
 * its ancestors (`parent_cpus`: its parent's effective CPUs), gives up
 * the carve's CPUs and parked siblings, unless it is a carve itself, the
 * parked cgroup, a shared container (plan_shared), a partition of its
 * own, or without a cpuset. */
static int plan_peer(struct planner *p, const char *peer, hwloc_const_bitmap_t parent_cpus,
		     const char *share, struct cc_err *err)
{
	_cleanup_free_ char *cur = NULL, *part = NULL;
	char key[PATH_MAX + 64];
	struct cc_noderec *r;
	bool fresh;

	if (!strcmp(strrchr(peer, '/') + 1, CC_PARKED_NAME))
		return 0;
	if (cg_rec_key(key, sizeof(key), peer, "cpuset.cpus", err) < 0)
		return -1;
	/* A live carve's cgroup is never a peer: it holds its own CPUs. */
	if (p->others->is_carve(p->others->arg, peer))
		return 0;
	if (cg_read_opt(p->cg, peer, "cpuset.cpus", &cur, err) < 0 ||
	    cg_read_opt(p->cg, peer, "cpuset.cpus.partition", &part, err) < 0)
		return -1;
	if (!cur || (part && strcmp(part, "member")))
		return 0;
	r = cc_noderecs_find(p->recs, key);
	/* A shared container beside the carve is narrowed as one
	 * (plan_shared), wherever it is. */
	if (r && cg_rec_kind(r) == K_SHARED)
		return 0;
	fresh = !r;
	r = cg_take_record(p, key, K_PEER, cur, true, err);
	if (!r)
		return -1;
	/* Met for the first time: the cpuset-only carves whose CPUs it runs
	 * on, but those inside it, are its owners too (made after them, in a
	 * pod or a branch of its own, it inherited their CPUs). */
	if (fresh) {
		_cleanup_bitmap_ hwloc_bitmap_t held = hwloc_bitmap_alloc();
		_cleanup_free_ struct cc_cg_share *sib = NULL;
		int nsib = 0;

		if (!held)
			return cc_err_sys(err, ENOMEM, "cgroup plan");
		if (cc_cg_read_cpus(p->cg, peer, "cpuset.cpus.effective", held, err) < 0 ||
		    p->others->beside(p->others->arg, peer, held, &sib, &nsib, err) < 0)
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
	return 0;
}

/* The peers beside `cgroup` (plan_peer). */
static int plan_peers_of(struct planner *p, const char *cgroup, const char *share, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_siblings_ struct cg_siblings it = { 0 };
	char parent[PATH_MAX], peer[PATH_MAX];
	int more;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	cc_cg_parent(cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(p->cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    cg_siblings_open(p->cg, cgroup, &it, err) < 0)
		return -1;
	while ((more = cg_siblings_next(&it, peer, sizeof(peer), err)) > 0)
		if (plan_peer(p, peer, parent_cpus, share, err) < 0)
			return -1;
	return more;
}

/* cpuset-only mode: without partitions nothing keeps other tasks off the
 * carve's CPUs but their own cgroups' cpusets.  The carve's CPUs and
 * parked siblings leave every cgroup beside it and beside each of its
 * ancestors (the pod's other containers, the other pods, /system.slice
 * and /init.scope where cpuset is enabled at the root, as the kubelet's
 * systemd driver does): each subtree that does not hold the carve. */
static int plan_peers(struct planner *p, char (*anc)[PATH_MAX], int nanc, const char *share, struct cc_err *err)
{
	if (plan_peers_of(p, p->c->cgroup, share, err) < 0)
		return -1;
	for (int i = nanc - 1; i >= 0; i--)
		if (plan_peers_of(p, anc[i], share, err) < 0)
			return -1;
	return 0;
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
	/* By path: a record gone from its cgroup is deleted on the way, and
	 * cg_take_record may make one anew. */
	paths = calloc((size_t)p->recs->n + 1, sizeof(*paths));
	if (!paths)
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	for (int i = 0; i < p->recs->n; i++)
		if (cg_rec_kind(p->recs->r[i]) == K_SHARED && !(paths[n++] = strdup(p->recs->r[i]->path)))
			rc = cc_err_sys(err, ENOMEM, "cgroup plan");
	for (int i = 0; i < n && rc == 0; i++) {
		_cleanup_free_ char *cur = NULL;
		char cgroup[PATH_MAX];
		const char *file;
		struct cc_noderec *r = cc_noderecs_find(p->recs, paths[i]);

		if (!r || cg_rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0 ||
		    cg_read_opt(p->cg, cgroup, file, &cur, err) < 0) {
			rc = r ? -1 : 0;
			continue;
		}
		if (!cur) {
			cc_noderecs_del(p->recs, paths[i]);
			continue;
		}
		r = cg_take_record(p, paths[i], K_SHARED, cur, false, err);
		if (!r) {
			rc = cc_err_isset(err) ? -1 : 0;
			continue;
		}
		/* Inheriting (someone else's value): its CPUs are the parent's
		 * effective set, which a partition already leaves out of it. */
		if (!r->orig[0])
			continue;
		if (cg_parse_cpus(r->orig, orig, r, "orig", err) < 0) {
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
	if (!cur || cg_rec_key(key, sizeof(key), p->c->cgroup, "cpuset.cpus", err) < 0)
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

/* The pod's quota goes while any carve of it lives: every quota-dropping
 * carve below it is an owner, and the last one gone restores it. */
static int plan_quota(struct planner *p, const char *anc, const char *share, struct cc_err *err)
{
	_cleanup_free_ char *cur = NULL;
	char key[PATH_MAX + 64];
	long long quota, period;
	struct cc_noderec *r;
	bool fresh;

	if (cg_read_opt(p->cg, anc, "cpu.max", &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", anc, cur);
	if (cg_rec_key(key, sizeof(key), anc, "cpu.max", err) < 0)
		return -1;
	fresh = !cc_noderecs_find(p->recs, key);
	r = cg_take_record(p, key, K_QUOTA, cur, quota >= 0, err);
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

	if (cg_read_opt(p->cg, anc, "cpu.max", &cur, err) < 0)
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

/* The carve's own cpuset steps, by partition mode, and the peers or
 * shared pool they narrow. */
static int plan_cpus(struct planner *p, char (*anc)[PATH_MAX], int nanc, const char *cpus, const char *parked,
		     const char *both_s, hwloc_const_bitmap_t both, struct cc_err *err)
{
	const struct cc_cg_carve *c = p->c;

	if (c->exclusive && plan_shared(p, both_s, both, err) < 0)
		return -1;
	if (c->exclusive && !hwloc_bitmap_iszero(c->parked) && c->mode != CC_MODE_CPUSET_ONLY &&
	    plan_parked(p, parked, err) < 0)
		return -1;
	switch (c->mode) {
	case CC_MODE_REMOTE:
		/* Remote partitions draw their CPUs through the exclusive set of
		 * every ancestor below the root: widened top-down. */
		for (int i = 0; i < nanc; i++)
			if (plan_exclusive(p, anc[i], cpus, err) < 0)
				return -1;
		if (fault_point(p, err) < 0 || own(p, "cpuset.cpus", cpus, err) < 0 ||
		    own(p, "cpuset.cpus.exclusive", cpus, err) < 0 || own_partition(p, err) < 0)
			return -1;
		break;
	case CC_MODE_LOCAL:
		if (own(p, "cpuset.cpus", cpus, err) < 0 || fault_point(p, err) < 0 || own_partition(p, err) < 0)
			return -1;
		break;
	case CC_MODE_CPUSET_ONLY:
		if ((!c->exclusive && c->pool ? plan_shared_self(p, err) : own(p, "cpuset.cpus", cpus, err)) < 0 ||
		    (c->exclusive && plan_peers(p, anc, nanc, both_s, err) < 0) ||
		    fault_point(p, err) < 0)
			return -1;
		break;
	}
	return 0;
}

/* No quota on a carve: lifted on the container and its pod, checked above. */
static int plan_no_quota(struct planner *p, char (*anc)[PATH_MAX], int nanc, struct cc_err *err)
{
	const struct cc_cg_carve *c = p->c;
	_cleanup_free_ char *cur = NULL;
	long long quota, period;
	char n[32], val[64];

	snprintf(n, sizeof(n), "%d", hwloc_bitmap_weight(c->cpus));
	/* A shared-pool container owns no CPU: it lifts no pod quota.
	 * The pod (the parent) has none while a carve of it lives;
	 * above it, a quota too small for the carves refuses. */
	for (int i = nanc - 1; c->exclusive && i >= 0; i--) {
		int r = i == nanc - 1 ? plan_quota(p, anc[i], n, err)
				      : check_quota_above(p, anc[i], hwloc_bitmap_weight(c->cpus), err);

		if (r < 0)
			return -1;
	}
	/* The container itself: no quota at all. */
	if (cg_read_opt(p->cg, c->cgroup, "cpu.max", &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", c->cgroup, cur);
	snprintf(val, sizeof(val), "max %lld", period);
	return quota >= 0 ? own(p, "cpu.max", val, err) : 0;
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
	struct cc_noderec *r;
	int nanc;

	memset(plan, 0, sizeof(*plan));
	cc_noderecs_init(&plan->replaced);
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
	 * its cpuset.cpus is the carve's now (the peer record kept aside in
	 * the plan for a refused start to put back; a shared record there is
	 * an earlier start's, refused or gone, and goes for good). */
	if (cg_rec_key(key, sizeof(key), c->cgroup, "cpuset.cpus", err) < 0)
		return -1;
	if ((r = cc_noderecs_find(recs, key)) && cg_rec_kind(r) == K_PEER &&
	    !cc_noderecs_add_copy(&plan->replaced, r))
		return cc_err_sys(err, ENOMEM, "cgroup plan");
	cc_noderecs_del(recs, key);

	if (plan_cpus(&p, anc, nanc, cpus, parked, both_s, both, err) < 0 ||
	    (!hwloc_bitmap_iszero(c->mems) && own(&p, "cpuset.mems", mems, err) < 0) ||
	    (c->drop_quota && plan_no_quota(&p, anc, nanc, err) < 0)) {
		cc_err_prefix(err, "%s (%s)", c->cgroup, cc_cg_mode_name(c->mode));
		cc_cg_plan_fini(plan);
		return -1;
	}
	return 0;
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
	cc_noderecs_fini(&plan->replaced);
}
