/* corecarve: the cgroup effect (effect.h): a carve's cpusets, partitions,
 * peers and quotas planned, journaled, written and undone through the
 * cgroup layer's records (cgroup/carve.c); a shared-pool container's record;
 * and the audit's repairs that write cgroup files. */
#define _GNU_SOURCE
#include "effect_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

/* ---- cgroup ---------------------------------------------------------------- */

static void log_msgs(const struct cc_effect_run *run, const struct cc_cg_msgs *m)
{
	for (int i = 0; i < m->n; i++)
		if (!m->note[i] || run->ctx->verbose)
			effect_log(run, "%s", m->line[i]);
}

/* The cgroup records, read as they are asked for (noderec.h): a carve's
 * plan and undo read the few records it touches, not every carve's. */
static int load_recs(struct cc_ledger *l, struct cc_noderecs *recs, struct cc_err *err)
{
	return cc_noderecs_open(recs, l, CC_CG_SECTION, &cc_cg_rec_schema, err);
}

static int store_recs(struct cc_ledger *l, struct cc_noderecs *recs, struct cc_err *err)
{
	(void)l;
	return cc_noderecs_store(recs, err);
}

static void cg_carve_of(const struct cc_carve *c, const struct cc_pclass *pc, struct cc_cg_carve *out)
{
	*out = (struct cc_cg_carve){
		.id = c->id,
		.cgroup = c->cgroup,
		.cpus = c->cpus,
		.parked = c->parked,
		.mems = c->mems,
		.exclusive = c->exclusive,
		/* A class gone from the policy keeps the carve as it is: a root
		 * partition, quota dropped. */
		.isolated = pc && pc->partition == CC_PART_ISOLATED,
		.drop_quota = !pc || pc->quota == CC_QUOTA_DROP,
	};
	cc_cg_mode_parse(c->mode, &out->mode);
}

/* The other carves, as a plan asks about them. */
struct others {
	struct cc_ledger *l;
	const struct cc_policy *policy;
	const char *self, *self_cgroup;
	json_t *cgroups; /* the other carves' cgroups, as a set; NULL until asked for */
	struct cc_err err; /* making that set failed: the plan fails with it */
};

/* The set of the other carves' cgroups, made when a plan first asks (only
 * a cpuset-only carve's peers do): the ledger's refs of every carve. */
static int other_cgroups(struct others *o)
{
	_cleanup_free_ const char **cgs = NULL;
	_cleanup_json_ json_t *set = json_object();
	int n = 0;

	if (!set || cc_ledger_refs(o->l, NULL, NULL, &cgs, &n) < 0)
		return cc_err_sys(&o->err, errno ? errno : ENOMEM, "the carves of the ledger");
	for (int i = 0; i < n; i++)
		if (cgs[i][0] && json_object_set_new(set, cgs[i], json_true()) < 0)
			return cc_err_sys(&o->err, ENOMEM, "carves");
	/* The carve's own cgroup is no other carve's. */
	json_object_del(set, o->self_cgroup);
	o->cgroups = cc_steal_ptr(set);
	return 0;
}

static bool is_carve(void *arg, const char *cgroup)
{
	struct others *o = arg;

	if (!o->cgroups && (o->err.code || other_cgroups(o) < 0))
		return false;
	return json_object_get(o->cgroups, cgroup) != NULL;
}

/* `cgroup` is `top` or below it. */
static bool within(const char *cgroup, const char *top)
{
	size_t n = strlen(top);

	if (!strcmp(top, "/"))
		return true;
	return !strncmp(cgroup, top, n) && (!cgroup[n] || cgroup[n] == '/');
}

/* Room for a share per live carve, the carves loaded: the owners a
 * record made now is given.  NULL with err. */
static struct cc_cg_share *shares_of_all(struct others *o, struct cc_err *err)
{
	struct cc_cg_share *sh;

	if (cc_ledger_load_all(o->l, err) < 0)
		return NULL;
	sh = calloc((size_t)cc_ledger_ncarves(o->l) + 1, sizeof(*sh));
	if (!sh)
		cc_err_sys(err, ENOMEM, "carves");
	return sh;
}

bool cc_effect_drops_quota(const struct cc_carve *c, const struct cc_policy *policy)
{
	const struct cc_pclass *pc = policy ? cc_policy_class(policy, c->class_name) : NULL;

	return c->exclusive && !(pc && pc->quota == CC_QUOTA_KEEP);
}

/* The quota-dropping carves below `ancestor`, but this one.  Asked only
 * where a quota is met (a record made now, a cap above the pod): then the
 * carves are loaded. */
static int quota_carves_below(void *arg, const char *ancestor, struct cc_cg_share **out, int *nout,
			      struct cc_err *err)
{
	struct others *o = arg;
	const struct cc_carve *c;
	_cleanup_free_ struct cc_cg_share *sh = NULL;
	int k = 0;

	*out = NULL;
	*nout = 0;
	if (!(sh = shares_of_all(o, err)))
		return -1;
	cc_ledger_foreach_carve(o->l, i, c) {
		if (!strcmp(c->id, o->self) || !cc_effect_drops_quota(c, o->policy) || !cc_cg_below(c->cgroup, ancestor))
			continue;
		snprintf(sh[k].id, sizeof(sh[k].id), "%s", c->id);
		snprintf(sh[k].share, sizeof(sh[k].share), "%d", hwloc_bitmap_weight(c->cpus));
		k++;
	}
	*out = cc_steal_ptr(sh);
	*nout = k;
	return 0;
}

/* The live exclusive carves whose CPUs or parked siblings meet `set`, each
 * with them as its share (the carves are loaded).  With `peer`, only the
 * cpuset-only carves other than this one, outside `peer`: beside(). */
static int shares_meeting(struct others *o, hwloc_const_bitmap_t set, const char *peer, struct cc_cg_share **out,
			  int *nout, struct cc_err *err)
{
	const struct cc_carve *c;
	_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
	_cleanup_free_ struct cc_cg_share *sh = NULL;
	int k = 0;

	*out = NULL;
	*nout = 0;
	if (!both)
		return cc_err_sys(err, ENOMEM, "carves");
	if (!(sh = shares_of_all(o, err)))
		return -1;
	cc_ledger_foreach_carve(o->l, i, c) {
		_cleanup_free_ char *s = NULL;

		if (!c->exclusive || (peer && (!strcmp(c->id, o->self) || within(c->cgroup, peer) ||
					       strcmp(c->mode, cc_cg_mode_name(CC_MODE_CPUSET_ONLY)))))
			continue;
		hwloc_bitmap_or(both, c->cpus, c->parked);
		if (!hwloc_bitmap_intersects(both, set))
			continue;
		if (!(s = cc_cpulist_format(both)))
			return cc_err_sys(err, ENOMEM, "carves");
		snprintf(sh[k].id, sizeof(sh[k].id), "%s", c->id);
		snprintf(sh[k].share, sizeof(sh[k].share), "%s", s);
		k++;
	}
	*out = cc_steal_ptr(sh);
	*nout = k;
	return 0;
}

static int beside(void *arg, const char *peer, hwloc_const_bitmap_t held, struct cc_cg_share **out, int *nout,
		  struct cc_err *err)
{
	return shares_meeting(arg, held, peer, out, nout, err);
}

/* The owners of a shared container's record made now: every live
 * exclusive carve in its pool (the carves are loaded: a shared start
 * reads them all, as the allocator's taken set does). */
static int carves_in(void *arg, hwloc_const_bitmap_t set, struct cc_cg_share **out, int *nout, struct cc_err *err)
{
	return shares_meeting(arg, set, NULL, out, nout, err);
}

/* The cgroup view of the run's carve: a shared-pool container's as the
 * flow gave it (run->shared: its pool), never in the ledger; an exclusive
 * carve's from the ledger, or from `c` while it is not there yet. */
static int cgc_of(const struct cc_effect_run *run, const struct cc_carve *c, struct cc_cg_carve *out,
		  struct cc_err *err)
{
	if (run->shared) {
		*out = *run->shared;
		/* What cc_cg_plan_carve finds for one: its cpuset.cpus only. */
		out->mode = CC_MODE_CPUSET_ONLY;
		return 0;
	}
	if (!c && !(c = effect_carve_of(run, err)))
		return -1;
	cg_carve_of(c, run->pclass, out);
	return 0;
}

/* The carve's cgroups planned into `plan`, its records with their pending
 * writes put in the ledger, its mode set (an exclusive carve joins the
 * ledger with it).  A shared-pool container's plan is its own "shared"
 * record: its pool minus the live carves, which carves arriving and going
 * recompute. */
static int plan_into(struct cc_effect_run *run, struct cc_carve *c, struct cc_cg_plan *plan, struct cc_err *err)
{
	struct cc_noderecs recs;
	struct cc_cg_carve cgc;
	struct others o = {
		.l = run->ledger, .policy = run->policy, .self = run->shared ? "" : c->id, .self_cgroup = c->cgroup,
		.err = CC_ERR_INIT,
	};
	struct cc_cg_others others = { is_carve, beside, quota_carves_below, carves_in, &o };
	int rc = -1;

	cc_noderecs_init(&recs);
	cgc_of(run, c, &cgc, err);
	if (load_recs(run->ledger, &recs, err) < 0)
		goto out;
	if (cc_cg_plan_carve(run->cg, &cgc, &others, &recs, plan, err) < 0)
		goto out;
	if (o.err.code) {
		*err = o.err;
		cc_cg_plan_fini(plan);
		goto out;
	}
	log_msgs(run, &plan->msgs);
	snprintf(c->mode, sizeof(c->mode), "%s", cc_cg_mode_name(cgc.mode));
	rc = store_recs(run->ledger, &recs, err);
	if (rc < 0)
		cc_cg_plan_fini(plan);
out:
	if (o.cgroups)
		json_decref(o.cgroups);
	cc_noderecs_fini(&recs);
	return rc;
}

static int cgroup_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err)
{
	run->cg_plan = &run->cg_planned;
	return plan_into(run, c, &run->cg_planned, err);
}

static void cgroup_fini(struct cc_effect_run *run)
{
	cc_cg_plan_fini(&run->cg_planned);
}

static bool cgroup_held(const struct cc_carve *c)
{
	return c->cgroup[0] != '\0';
}

static bool cgroup_wanted(const struct cc_effect_run *run, const struct cc_carve *c)
{
	(void)run;
	return cgroup_held(c);
}

static int cgroup_apply(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_noderecs recs;
	struct cc_cg_carve cgc;
	int rc;

	if (cgc_of(run, NULL, &cgc, err) < 0)
		return -1;
	cc_noderecs_init(&recs);
	if (load_recs(run->ledger, &recs, err) < 0)
		return -1;
	rc = cc_cg_apply_plan(run->cg, &cgc, run->cg_plan, &recs, err);
	/* What was written is recorded either way: the undo reads it. */
	if (store_recs(run->ledger, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc;
}

/* A shared-pool container refused: its own files back as they were (the
 * runtime removes its cgroup), its record gone and the one its plan
 * replaced back (cc_cg_undo_carve). */
static int shared_undo(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_cg_carve cgc = *run->shared;
	struct cc_noderecs recs;
	int rc;

	if (load_recs(run->ledger, &recs, err) < 0)
		return -1;
	rc = cc_cg_undo_carve(run->cg, &cgc, run->cg_plan, &recs, NULL, err);
	if (store_recs(run->ledger, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc;
}

static int cgroup_undo(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_carve *c;
	struct cc_cg_msgs msgs = { 0 };
	struct cc_noderecs recs;
	struct cc_cg_carve cgc;
	int rc;

	if (run->shared)
		return shared_undo(run, err);
	if (!(c = effect_carve_of(run, err)))
		return -1;
	if (!c->cgroup[0])
		return 0;
	cg_carve_of(c, NULL, &cgc);
	if (cc_cg_mode_parse(c->mode, &cgc.mode) < 0)
		return cc_err_set(err, EINVAL, "carve %s: unknown mode \"%s\"", c->id, c->mode);
	if (load_recs(run->ledger, &recs, err) < 0)
		return -1;
	rc = cc_cg_undo_carve(run->cg, &cgc, run->cg_plan, &recs, &msgs, err);
	log_msgs(run, &msgs);
	if (store_recs(run->ledger, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc < 0 ? cc_err_prefix(err, "carve %s: giving cgroups back", c->id) : 0;
}

static int journal_recs(void *arg, const struct cc_noderecs *recs, struct cc_err *err)
{
	struct cc_ledger *l = arg;

	if (store_recs(l, (struct cc_noderecs *)recs, err) < 0)
		return -1;
	return cc_ledger_commit(l, err);
}

/* ---- repairs (audit --fix) ------------------------------------------------ */

/* The carve's cgroups planned and applied again as on its arrival (a
 * partition made invalid, a quota put back, peers that regained its CPUs),
 * journaled and committed. */
static int reapply(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_cg_plan plan = { 0 };
	struct cc_carve *c = effect_carve_of(run, err);
	int rc = -1;

	if (!c)
		return -1;
	run->cg_plan = &plan;
	/* The same plan as the carve's arrival: its records get it as owner
	 * again (a value someone else wrote since becomes their original),
	 * and only what differs is written. */
	if (plan_into(run, c, &plan, err) < 0 || cc_ledger_commit(run->ledger, err) < 0)
		goto out;
	rc = cgroup_apply(run, err);
	if (cc_ledger_commit(run->ledger, rc < 0 ? NULL : err) < 0)
		rc = -1;
out:
	cc_cg_plan_fini(&plan);
	run->cg_plan = NULL;
	return rc;
}


/* `peer` holds CPUs of carves: it becomes their peer (a peer record owned
 * by each of them), narrowed, committed. */
static int take_peer(struct cc_effect_run *run, const char *peer, struct cc_err *err)
{
	struct cc_ledger *l = run->ledger;
	_cleanup_bitmap_ hwloc_bitmap_t eff = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_free_ struct cc_cg_share *owners = NULL;
	struct cc_cg_msgs msgs = { 0 };
	struct cc_noderecs recs;
	int n = 0, rc;

	if (!eff || !mine)
		return cc_err_sys(err, ENOMEM, "audit fix");
	if (cc_cg_read_cpus(run->cg, peer, "cpuset.cpus.effective", eff, err) < 0)
		return -1;
	owners = calloc((size_t)cc_ledger_ncarves(l) + 1, sizeof(*owners));
	if (!owners)
		return cc_err_sys(err, ENOMEM, "audit fix");
	/* Every carve whose CPUs it holds owns the record, so the last of
	 * them to go gives the peer everything back. */
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		_cleanup_free_ char *s = NULL;

		hwloc_bitmap_or(mine, c->cpus, c->parked);
		if (!hwloc_bitmap_intersects(mine, eff))
			continue;
		s = cc_cpulist_format(mine);
		if (!s)
			return cc_err_sys(err, ENOMEM, "audit fix");
		snprintf(owners[n].id, sizeof(owners[n].id), "%s", c->id);
		snprintf(owners[n].share, sizeof(owners[n].share), "%s", s);
		n++;
	}
	if (!n)
		return 0; /* an earlier repair (a re-applied carve) took them already */
	if (load_recs(l, &recs, err) < 0)
		return -1;
	rc = cc_cg_take_peer(run->cg, peer, owners, n, &recs, journal_recs, l, &msgs, err);
	log_msgs(run, &msgs);
	if (rc == 0)
		rc = journal_recs(l, &recs, err);
	cc_noderecs_fini(&recs);
	return rc;
}

/* `owner` is no carve of the ledger: every cgroup record it owns is
 * recomputed without it (the last owner restores the original). */
static int drop_owner(struct cc_effect_run *run, const char *owner, struct cc_err *err)
{
	struct cc_cg_carve cgc = { .id = owner, .cgroup = "", .mode = CC_MODE_CPUSET_ONLY };
	struct cc_cg_msgs msgs = { 0 };
	struct cc_noderecs recs;
	int rc;

	if (load_recs(run->ledger, &recs, err) < 0)
		return -1;
	/* No cgroup of its own: only the records are recomputed without it. */
	rc = cc_cg_undo_carve(run->cg, &cgc, NULL, &recs, &msgs, err);
	log_msgs(run, &msgs);
	if (journal_recs(run->ledger, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc;
}

/* The held record `path` (noderec.h) holds CPUs of no carve of the
 * ledger: recomputed without them. */
static int drop_held(struct cc_effect_run *run, const char *path, struct cc_err *err)
{
	struct cc_ledger *l = run->ledger;
	_cleanup_bitmap_ hwloc_bitmap_t carved = hwloc_bitmap_alloc();
	struct cc_cg_msgs msgs = { 0 };
	struct cc_noderecs recs;
	int rc;

	if (!carved)
		return cc_err_sys(err, ENOMEM, "audit fix");
	/* Every carve's CPUs stay: only what no carve has goes. */
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		hwloc_bitmap_or(carved, carved, cc_ledger_carve_at(l, k)->cpus);
		hwloc_bitmap_or(carved, carved, cc_ledger_carve_at(l, k)->parked);
	}
	if (load_recs(l, &recs, err) < 0)
		return -1;
	rc = cc_cg_drop_held(run->cg, path, carved, &recs, &msgs, err);
	log_msgs(run, &msgs);
	if (journal_recs(l, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc;
}

/* The shared container's record `path` reads narrower than its pool
 * minus the live carves: written again, committed. */
static int widen_shared(struct cc_effect_run *run, const char *path, struct cc_err *err)
{
	struct others o = { .l = run->ledger, .policy = run->policy, .self = "", .self_cgroup = "", .err = CC_ERR_INIT };
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	_cleanup_free_ struct cc_cg_share *owners = NULL;
	struct cc_noderecs recs;
	int n = 0, rc;

	if (!all)
		return cc_err_sys(err, ENOMEM, "audit fix");
	hwloc_bitmap_fill(all);
	/* Every live carve owns it again, as at the container's start (the
	 * value leaves them out): seeded from the ledger, not the record. */
	if (carves_in(&o, all, &owners, &n, err) < 0 || load_recs(run->ledger, &recs, err) < 0)
		return -1;
	rc = cc_cg_shared_widen(run->cg, path, owners, n, &recs, journal_recs, run->ledger, err);
	if (journal_recs(run->ledger, &recs, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -1;
	cc_noderecs_fini(&recs);
	return rc;
}

static int cgroup_repair(struct cc_effect_run *run, enum cc_effect_repair what, const char *target,
			 struct cc_err *err)
{
	switch (what) {
	case CC_EFFECT_REAPPLY:
		return reapply(run, err);
	case CC_EFFECT_TAKE_BACK:
		return take_peer(run, target, err);
	case CC_EFFECT_DROP_OWNER:
		return drop_owner(run, target, err);
	case CC_EFFECT_DROP_HELD:
		return drop_held(run, target, err);
	case CC_EFFECT_WIDEN_SHARED:
		return widen_shared(run, target, err);
	default:
		return cc_err_set(err, EINVAL, "cgroup effect: no repair %d", (int)what);
	}
}

const struct cc_effect cc_effect_cgroup = {
	.name = "cgroup", .wanted = cgroup_wanted, .held = cgroup_held, .plan = cgroup_plan, .fini = cgroup_fini,
	.apply = cgroup_apply, .undo = cgroup_undo, .undo_failed_apply = true, .sets_mode = true,
	.repairs = 1u << CC_EFFECT_REAPPLY | 1u << CC_EFFECT_TAKE_BACK | 1u << CC_EFFECT_DROP_OWNER |
		   1u << CC_EFFECT_DROP_HELD | 1u << CC_EFFECT_WIDEN_SHARED,
	.repair = cgroup_repair,
};
