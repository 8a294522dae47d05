/* corecarve: the container flow — a container's request, a carve's steps,
 * the release (container_int.h says which file does what). */
#define _GNU_SOURCE
#include "container_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "cleanup.h"
#include "cpulist.h"
#include "effect.h"
#include "fault.h"
#include "paths.h"
#include "topo_cache.h"

void cc_fault_point(const struct cc_ctx *ctx, const char *step)
{
	cc_fault(ctx->fault, step);
}

/* A carve already recorded under this container's id is live when it is
 * for this cgroup and the cgroup still holds its CPUs: createRuntime and
 * prestart both registered, the second finds the first's carve.  Anything
 * else was left by an earlier container with the same id whose hook died
 * after the journal: the runtime made a new cgroup for this one. */
static bool carve_live(const struct cc_cg *cg, const struct cc_carve *c, const char *cgroup)
{
	_cleanup_bitmap_ hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	struct cc_err ignored = CC_ERR_INIT;

	if (!cur || strcmp(c->cgroup, cgroup) != 0)
		return false;
	return cc_cg_read_cpus(cg, cgroup, "cpuset.cpus", cur, &ignored) == 0 &&
	       hwloc_bitmap_isequal(cur, c->cpus);
}

static int load_request(const struct cc_oci_state *st, struct cc_oci_config *cfg,
			struct cc_request *req, const json_t **annotations, bool *found, struct cc_err *err)
{
	const json_t *ann = st->annotations;
	const char *key = NULL;
	int r;

	*found = false;
	/* crun hands createRuntime a state without annotations: they are in
	 * the bundle's config.json. */
	if (!json_object_size(ann) && st->bundle[0]) {
		if (cc_oci_config_load(st->bundle, cfg, err) < 0)
			return -1;
		ann = cfg->annotations;
	}
	r = cc_request_lookup_oci(ann, req, &key, err);
	if (r < 0)
		return -1;
	*found = r == 1;
	*annotations = ann;
	return 0;
}

static int beside_carves(const struct cc_ctx *ctx, const struct cc_oci_state *st, struct cc_oci_config *cfg);

int cc_container_create(const struct cc_ctx *ctx, const struct cc_oci_state *st,
			struct cc_create_result *res, struct cc_err *err)
{
	struct cc_oci_config cfg = { 0 };
	struct cc_request req;
	struct cc_carve_spec spec;
	struct cc_tenant tenant;
	struct cc_tenant_cpu cpu;
	struct cc_grant_ref grant = { 0 };
	const json_t *ann = NULL;
	bool found;
	int rc = -1, granted = 0;

	memset(res, 0, sizeof(*res));
	if (load_request(st, &cfg, &req, &ann, &found, err) < 0)
		goto out;
	/* A grant the kubelet passed from corecarve device-plugin: the
	 * request is its (a placement annotation beside it may only refine
	 * it). */
	if (!cc_oci_is_sandbox(ann)) {
		granted = cc_grant_ref_lookup(ann, &grant, err);
		if (granted < 0 || (granted && grant_request(&grant, &req, found, err) < 0)) {
			cc_err_prefix(err, "container %s", st->id);
			goto out;
		}
	}
	if (!found && !granted) {
		rc = beside_carves(ctx, st, &cfg);
		goto out;
	}
	if (!cfg.annotations && st->bundle[0] && cc_oci_config_load(st->bundle, &cfg, err) < 0)
		goto out;
	/* Who the container is and what pays for it: the runtime's keys
	 * among the annotations the request came from, and the limit of its
	 * config.json (no bundle: no limit). */
	cpu = (struct cc_tenant_cpu){ .quota = cfg.annotations ? cfg.cpu_quota : -1,
				      .period = cfg.cpu_period,
				      .shares = cfg.annotations ? cfg.cpu_shares : -1 };
	if (cc_tenant_read(ann, &cpu, &tenant, err) < 0) {
		cc_err_prefix(err, "container %s", st->id);
		goto out;
	}
	if (cc_container_cgroup(ctx->root, st->pid, cfg.cgroups_path, res->cgroup,
				sizeof(res->cgroup), err) < 0)
		goto out;
	spec = (struct cc_carve_spec){
		.id = st->id, .kind = "container", .cgroup = res->cgroup, .req = &req, .tenant = &tenant,
		.grant = granted ? &grant : NULL, .placed = found,
	};
	rc = cc_carve_create(ctx, &spec, res, err);
out:
	cc_grant_ref_fini(&grant);
	cc_oci_config_fini(&cfg);
	return rc;
}

/* The carve the decision describes. */
static void carve_from(const struct cc_carve_spec *spec, const struct cc_decision *d, const char *cgroup,
		       struct cc_carve *c)
{
	snprintf(c->id, sizeof(c->id), "%s", spec->id);
	snprintf(c->kind, sizeof(c->kind), "%s", spec->kind);
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", cgroup);
	snprintf(c->class_name, sizeof(c->class_name), "%s", d->class_name);
	snprintf(c->core_class, sizeof(c->core_class), "%s", d->core_class);
	hwloc_bitmap_copy(c->cpus, d->cpus);
	hwloc_bitmap_copy(c->parked, d->parked);
	hwloc_bitmap_copy(c->mems, d->mems);
	c->exclusive = true;
	c->steer_irqs = d->irq == CC_IRQ_STEER_AWAY;
	c->created = (long long)time(NULL);
	if (spec->grant) {
		snprintf(c->grant, sizeof(c->grant), "%s", spec->grant->id);
		snprintf(c->token, sizeof(c->token), "%s", spec->grant->token);
	}
}

/* CPUs the kernel would not give a carve at `cgroup` (a partition that is
 * none of ours holds them, someone narrowed its parent) count as taken:
 * choosing them would be refused at the read-back, and on 6.12 the attempt
 * alone invalidates that other partition.  Our own carves are taken
 * already. */
static int keep_off_foreign(const struct cc_ctx *ctx, const struct cc_cg *cg, const struct cc_policy *policy,
			    const struct cc_topo *topo, const struct cc_request *req, const char *cgroup,
			    hwloc_bitmap_t taken, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(policy, req->class_name);
	_cleanup_bitmap_ hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t foreign = hwloc_bitmap_alloc();
	struct cc_err e = CC_ERR_INIT;

	if (!avail || !foreign)
		return cc_err_sys(err, ENOMEM, "cgroup");
	/* A class unknown here is the allocator's refusal to word. */
	if (!pc)
		return 0;
	if (cc_cg_available(cg, cgroup, pc->exclusive, avail, &e) < 0)
		return 0; /* the cgroup is checked, and refused, by the plan */
	hwloc_bitmap_andnot(foreign, topo->online, avail);
	hwloc_bitmap_andnot(foreign, foreign, taken);
	if (hwloc_bitmap_iszero(foreign))
		return 0;
	if (ctx->verbose && ctx->log) {
		_cleanup_free_ char *f = cc_cpulist_format(foreign);

		fprintf(ctx->log, "corecarve: CPUs %s are not available to %s (a partition elsewhere holds them): "
			"not carved\n", f ? f : "?", cgroup);
	}
	hwloc_bitmap_or(taken, taken, foreign);
	return 0;
}

/* What the steps of one cc_carve_create share.  cc_carve_create owns the
 * policy, the topology and the ledger (they go when it returns, the
 * ledger and its lock first); the steps only borrow them. */
struct carve_job {
	const struct cc_ctx *ctx;
	const struct cc_carve_spec *spec;
	struct cc_create_result *res;
	struct cc_cg *cg;
	const struct cc_policy *policy;
	const struct cc_topo *topo;
	struct cc_ledger *ledger;
};

/* The cgroup handle as the context wants it: the tests' operations
 * instead of the kernel's, the trace a verbose run prints. */
static int open_cg(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_err *err)
{
	if (cc_cg_open(cg, ctx->root, err) < 0)
		return -1;
	if (ctx->cg_ops)
		cc_cg_use(cg, ctx->cg_ops, ctx->cg_ops_arg);
	cg->trace = ctx->verbose ? ctx->log : NULL;
	return 0;
}

/* Containers name the annotation, so a class the policy lacks is the
 * annotation's error, worded before anything is locked; exec leaves it to
 * the allocator, whose refusal lists the known classes. */
static int check_class(const struct cc_policy *policy, const struct cc_request *req, struct cc_err *err)
{
	char known[512] = "";
	size_t n = 0;

	if (cc_policy_class(policy, req->class_name))
		return 0;
	/* The refusal lists what the policy offers, as plan's does. */
	for (int i = 0; i < policy->nclasses && n < sizeof(known); i++)
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", policy->classes[i].name);
	return cc_err_set(err, EINVAL, "annotation %s: class: unknown placement class \"%s\" (known: %s; policy %s)",
			  CC_ANNOTATION_KEY, req->class_name, n ? known : "none", policy->source);
}

/* The topology through the cache in the state directory: discovery is
 * most of a hook's time, and the model only changes with a reboot,
 * hotplug or the policy's coreClasses (topo_cache.h says what is
 * checked).  A source other than the host (the tests', the benchmark's)
 * is keyed by its description or its file's identity, and cached the same
 * way. */
static struct cc_topo *load_topo(const struct cc_ctx *ctx, const struct cc_policy *policy, struct cc_err *err)
{
	struct cc_topo_source src = { 0 };
	struct cc_topo_cache_info tci;
	struct cc_topo *topo;

	if (ctx->topo_src) {
		src = *ctx->topo_src;
	} else {
		src.kind = CC_TOPO_HOST;
		src.root = ctx->root;
	}
	src.overrides = policy->overrides;
	src.noverrides = policy->noverrides;
	if (ctx->dry_run)
		return cc_topo_load(&src, err); /* the cache is a file written */
	topo = cc_topo_cache_load(&src, ctx->state_dir, &tci, err);
	if (topo && ctx->verbose && ctx->log && !tci.hit)
		fprintf(ctx->log, "corecarve: topology discovered (cache %s)\n", tci.why);
	return topo;
}

/* The ledger locked, then gc'd before anything is decided from it: a
 * carve under this id whose cgroup is gone is stale, and carves kept as
 * releasing are tried again.  The index only: the carves already there
 * are not parsed unless one of them is needed (docs/performance.md, the
 * busy ledger). */
static struct cc_ledger *lock_and_gc(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *ledger =
		cc_ledger_open_as(ctx->state_dir, ctx->dry_run ? CC_LEDGER_READ : CC_LEDGER_WRITE_INDEX, ctx->lock, err);

	if (!ledger)
		return NULL;
	if (ctx->dry_run)
		return container_gc_dry(ctx, cg, ledger, err) < 0 ? NULL : cc_steal_ptr(ledger);
	cc_ledger_set_fault(ledger, ctx->fault);
	cg->fault = ctx->fault;
	cc_fault_point(ctx, "after-lock");
	if (container_gc(ctx, cg, ledger, err) < 0)
		return NULL;
	cc_fault_point(ctx, "after-gc");
	return cc_steal_ptr(ledger);
}

/* A carve the gc kept under this id: createRuntime's, found by prestart
 * (1: nothing more to do), or an earlier container's with the same id,
 * released before this one is carved (0). */
static int settle_earlier(const struct carve_job *j, struct cc_err *err)
{
	struct cc_carve *old;

	if (cc_ledger_lookup(j->ledger, j->spec->id, &old, err) < 0)
		return -1;
	if (!old)
		return 0;
	/* Only a carve of the same kind is this one's earlier self: an id
	 * that names another kind's carve is refused, never released. */
	if (strcmp(old->kind, j->spec->kind))
		return cc_err_set(err, EEXIST, "%s %s: the id is held by a carve of kind %s; refusing to release it",
				  j->spec->kind, j->spec->id, old->kind);
	if (!old->releasing && carve_live(j->cg, old, j->res->cgroup))
		return 1;
	if (j->ctx->dry_run) {
		if (j->ctx->log)
			fprintf(j->ctx->log, "corecarve: dry run: would release the earlier carve of %s first\n", j->spec->id);
		return 0;
	}
	if (cc_carve_release(j->ctx, j->cg, j->ledger, j->spec->id, err) < 0)
		return cc_err_prefix(err, "carve left by an earlier %s %s", j->spec->kind, j->spec->id);
	return 0;
}

/* The key a refusal of admission names: the placement annotation, or
 * the grant's when the grant alone asked. */
static const char *admit_key(const struct cc_carve_spec *spec)
{
	return spec->placed || !spec->grant ? spec->req->annotation : CC_GRANT_KEY;
}

/* The class's caps against what its live carves hold (the ledger's
 * carves read only for a class that has caps).  A grant not yet carved
 * counts what its carve will: its cores under the class's smt (one CPU a
 * core under isolate), not every thread it books. */
static int admit_caps(const struct carve_job *j, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(j->policy, j->spec->req->class_name);
	struct cc_admit_usage u = { 0 };
	const struct cc_carve *c;
	char pod[PATH_MAX], p[PATH_MAX];

	if (!pc || !cc_admit_has_caps(pc))
		return 0;
	if (cc_ledger_load_all(j->ledger, err) < 0)
		return -1;
	cc_cg_parent(j->res->cgroup, pod, sizeof(pod));
	cc_ledger_foreach_carve(j->ledger, i, c) {
		if (strcmp(c->class_name, pc->name) || !strcmp(c->id, j->spec->id))
			continue;
		int n = strcmp(c->kind, "grant") ? hwloc_bitmap_weight(c->cpus)
						 : grant_counted(j->topo, c->cpus, pc->smt);

		u.class_cpus += n;
		cc_cg_parent(c->cgroup, p, sizeof(p));
		if (c->cgroup[0] && !strcmp(p, pod))
			u.pod_cpus += n;
	}
	if (cc_admit_caps(pc, j->spec->req, &u, pod, admit_key(j->spec), err) < 0)
		return cc_err_prefix(err, "container %s", j->spec->id);
	return 0;
}

/* A grant is carved whole or not at all: the allocator chose among its
 * cores only, and must have taken every one. */
static int decided_grant(const struct carve_job *j, struct cc_err *err)
{
	const struct cc_decision *d = &j->res->decision;
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;

	if (!got)
		return cc_err_sys(err, ENOMEM, "grant");
	hwloc_bitmap_or(got, d->cpus, d->parked);
	if (d->exclusive && hwloc_bitmap_isequal(got, j->spec->grant->cpus))
		return 0;
	s = cc_cpulist_format(got);
	return cc_err_set(err, EINVAL,
			  "container %s: annotation %s: grant %s: the class %s would carve %s, not the grant's cores",
			  j->spec->id, CC_GRANT_KEY, j->spec->grant->id, d->class_name, s ? s : "?");
}

/* The decision, into res->decision: the allocator over what the ledger
 * and the partitions that are none of ours hold; nothing is written. */
static int decide(const struct carve_job *j, hwloc_bitmap_t foreign, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(j->ledger);

	if (!taken)
		return cc_err_sys(err, ENOMEM, "ledger");
	hwloc_bitmap_copy(foreign, taken);
	if (keep_off_foreign(j->ctx, j->cg, j->policy, j->topo, j->spec->req, j->res->cgroup, taken, err) < 0)
		return -1;
	hwloc_bitmap_andnot(foreign, taken, foreign);
	if (cc_allocate(j->topo, j->policy, taken, j->spec->req, &j->res->decision, err) < 0) {
		if (!strcmp(j->spec->kind, "container"))
			cc_err_prefix(err, "container %s", j->spec->id);
		return -1;
	}
	return j->spec->grant ? decided_grant(j, err) : 0;
}

/* The effects failed after the journal: the carve goes from the ledger
 * when they were all undone, or stays as releasing when an undo failed
 * too, so that gc tries again.  Should this commit fail, gc finds the
 * carve: its container's cgroup goes with the refused start. */
static void unjournal(const struct carve_job *j, const char *id, bool undo_failed, struct cc_err *err)
{
	struct cc_err commit = CC_ERR_INIT;

	if (undo_failed) {
		cc_ledger_mark_releasing(j->ledger, id);
		cc_err_prefix(err, "%s %s (kept as releasing)", j->spec->kind, j->spec->id);
	} else {
		cc_ledger_remove(j->ledger, id);
		cc_err_prefix(err, "%s %s", j->spec->kind, j->spec->id);
	}
	cc_ledger_commit(j->ledger, &commit);
}

/* Every effect of `carve` (a shared-pool container's: `shared` its cgroup
 * view) planned (the carve and every record with its pending write in the
 * ledger), one journal commit before the first write a crash would leave
 * behind, every effect applied, one commit (effect.h).  Killed after the
 * journal, the runtime removes the refused container's cgroup and the
 * next hook's gc undoes exactly what is recorded. */
static int run_effects(const struct carve_job *j, struct cc_carve *carve, const struct cc_cg_carve *shared,
		       struct cc_err *err)
{
	const struct cc_ctx *ctx = j->ctx;
	struct cc_effect_run run;
	bool undo_failed;
	int rc = -1;

	run = (struct cc_effect_run){ .ctx = ctx, .cg = j->cg, .ledger = j->ledger, .id = carve->id };
	run.policy = j->policy;
	run.topo = j->topo;
	run.pclass = cc_policy_class(j->policy, j->res->decision.class_name);
	run.power = &j->res->power;
	run.shared = shared;
	/* Read the world and decide: nothing is written yet but the
	 * controllers on the path.  A dry run stops here: in a captured tree
	 * the plan itself stops at its first write (the controllers on the
	 * path), as it always has. */
	if (cc_effects_plan(&run, carve, err) < 0)
		goto out;
	if (ctx->dry_run) {
		rc = 0;
		goto out;
	}
	if (cc_ledger_commit(j->ledger, err) < 0)
		goto out;
	cc_fault_point(ctx, "after-journal");
	if (cc_effects_apply(&run, &undo_failed, err) < 0) {
		unjournal(j, carve->id, undo_failed, err);
		goto out;
	}
	cc_fault_point(ctx, "after-cgroup-write");
	if (cc_ledger_commit(j->ledger, err) < 0) {
		struct cc_err undo = CC_ERR_INIT;

		/* Everything back; the journal on disk lets gc finish should
		 * this fail too.  A shared container's record, journaled, goes
		 * with its cgroup. */
		if (carve->exclusive)
			cc_carve_release(ctx, j->cg, j->ledger, carve->id, &undo);
		goto out;
	}
	rc = 0;
out:
	cc_effects_fini(&run);
	return rc;
}

/* A shared-pool container: its own cpuset.cpus is its class's pool minus
 * the live carves, as a "shared" node record (cgroup.h) that carves
 * arriving later narrow and carves going widen again, through the same
 * loop as a carve (run_effects: the cgroup effect alone, the container
 * never in the ledger).  Its pool is the allocator's with only the
 * partitions that are none of ours taken. */
static int start_shared(const struct carve_job *j, hwloc_const_bitmap_t foreign, struct cc_err *err)
{
	const struct cc_decision *d = &j->res->decision;
	struct cc_decision pool;
	struct cc_carve c;
	int rc;

	if (cc_allocate(j->topo, j->policy, foreign, j->spec->req, &pool, err) < 0)
		return -1;
	struct cc_cg_carve shared = {
		.id = "",
		.cgroup = j->res->cgroup,
		.cpus = d->cpus,
		.parked = d->parked,
		.mems = d->mems,
		.exclusive = false,
		.pool = pool.cpus,
		.drop_quota = d->quota == CC_QUOTA_DROP,
	};
	cc_carve_init(&c);
	carve_from(j->spec, d, j->res->cgroup, &c);
	c.exclusive = false;
	c.steer_irqs = false;
	rc = run_effects(j, &c, &shared, err);
	cc_carve_fini(&c);
	cc_decision_fini(&pool);
	return rc;
}

/* An exclusive carve, through run_effects. */
static int carve_exclusive(const struct carve_job *j, struct cc_err *err)
{
	struct cc_carve carve;
	int rc;

	cc_carve_init(&carve);
	carve_from(j->spec, &j->res->decision, j->res->cgroup, &carve);
	rc = run_effects(j, &carve, NULL, err);
	if (rc == 0) {
		snprintf(j->res->mode, sizeof(j->res->mode), "%s", carve.mode);
		if (j->ctx->dry_run)
			j->res->would_carve = true;
		else
			j->res->carved = true;
	}
	cc_carve_fini(&carve);
	return rc;
}

/* Read the world, decide, journal, apply, record:
 *   policy, topology (cached), ledger (its index), gc -> allocate ->
 *   plan every effect (cgroup, IRQ, power) -> journal (the carve and every
 *   record with its pending write, before the first write) -> apply every
 *   effect -> commit.
 * A failure before the journal changed nothing; after it, the effects
 * applied are undone and the carve goes, or stays as releasing when an
 * undo failed too. */
int cc_carve_create(const struct cc_ctx *ctx, const struct cc_carve_spec *spec,
		    struct cc_create_result *res, struct cc_err *err)
{
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_cg_ struct cc_cg cg = CC_CG_INIT;
	/* A grant's request gains its CPU count once the topology is read. */
	struct cc_request greq = *spec->req;
	struct cc_carve_spec gspec = *spec;
	struct carve_job j = { .ctx = ctx, .spec = spec, .res = res, .cg = &cg };
	_cleanup_bitmap_ hwloc_bitmap_t foreign = hwloc_bitmap_alloc();
	int r;

	memset(&res->decision, 0, sizeof(res->decision));
	memset(&res->power, 0, sizeof(res->power));
	if (spec->cgroup != res->cgroup)
		snprintf(res->cgroup, sizeof(res->cgroup), "%s", spec->cgroup);
	if (open_cg(ctx, &cg, err) < 0)
		return -1;
	policy = cc_policy_load_in(ctx->root, ctx->policy_path, err);
	if (!policy)
		return -1;
	/* A grant's class is grant_shape's to word. */
	if (!strcmp(spec->kind, "container") && (!spec->grant || spec->placed) &&
	    check_class(policy, spec->req, err) < 0)
		return -1;
	topo = load_topo(ctx, policy, err);
	if (!topo)
		return -1;
	/* A grant's request is its cores: what carving them takes. */
	if (spec->grant) {
		if (grant_shape(topo, policy, spec->grant, &greq, spec->placed, err) < 0)
			return cc_err_prefix(err, "container %s", spec->id);
		gspec.req = &greq;
		j.spec = spec = &gspec;
	}
	/* Who may and what pays, before anything is locked. */
	if (spec->tenant && cc_admit_tenant(policy, cc_policy_class(policy, spec->req->class_name), spec->req,
					    spec->tenant, admit_key(spec), err) < 0)
		return cc_err_prefix(err, "container %s", spec->id);
	ledger = lock_and_gc(ctx, &cg, err);
	if (!ledger)
		return -1;
	j.policy = policy;
	j.topo = topo;
	j.ledger = ledger;
	r = settle_earlier(&j, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	/* The grant leaves the ledger (in memory) for the carve to take its
	 * cores; a refusal from here on commits nothing. */
	if (spec->grant && grant_take(ledger, spec->grant, spec->id, err) < 0)
		return cc_err_prefix(err, "container %s", spec->id);
	if (spec->tenant && admit_caps(&j, err) < 0)
		return -1;
	if (!foreign)
		return cc_err_sys(err, ENOMEM, "carve");
	if (decide(&j, foreign, err) < 0)
		return -1;
	if (!res->decision.exclusive) {
		res->would_carve = ctx->dry_run;
		if (!ctx->dry_run && start_shared(&j, foreign, err) < 0)
			return -1;
		snprintf(res->mode, sizeof(res->mode), "%s", cc_cg_mode_name(CC_MODE_CPUSET_ONLY));
		return 0;
	}
	return carve_exclusive(&j, err);
}

/* Whether the ledger holds a live exclusive carve in cpuset-only mode (the
 * carves loaded).  -1 with err. */
static int cpuset_only_live(struct cc_ledger *l, struct cc_err *err)
{
	const struct cc_carve *c;

	if (cc_ledger_load_all(l, err) < 0)
		return -1;
	cc_ledger_foreach_carve(l, i, c)
		if (c->exclusive && !c->releasing && !strcmp(c->mode, cc_cg_mode_name(CC_MODE_CPUSET_ONLY)))
			return 1;
	return 0;
}

/* The branch a newcomer at `cgroup` gives the carves' CPUs up through:
 * its topmost ancestor (or itself) that holds no live carve, below the
 * deepest that holds one.  A new pod's cgroup, not only the container's,
 * so that what else runs in the pod inherits the narrowed set: its pause
 * container, which containerd starts without the hooks of its base spec.
 * One made before the carve (a QoS slice) is a peer already, and taking
 * it again changes nothing. */
static void newcomer_branch(struct cc_ledger *l, const char *cgroup, char *out, size_t len)
{
	const struct cc_carve *c;

	for (const char *p = strchr(cgroup + 1, '/');; p = strchr(p + 1, '/')) {
		size_t n = p ? (size_t)(p - cgroup) : strlen(cgroup);
		bool holds = false;

		cc_ledger_foreach_carve(l, i, c)
			holds |= !strncmp(c->cgroup, cgroup, n) && (c->cgroup[n] == '/' || !c->cgroup[n]);
		if (!holds || !p) {
			snprintf(out, len, "%.*s", (int)n, cgroup);
			return;
		}
	}
}

/* A container corecarve does not carve (no annotation, no grant), started
 * while cpuset-only carves live: no partition keeps it off their CPUs, and
 * its cgroup, new, inherits them, so its branch (newcomer_branch) gives
 * them up as their peer (a peer record the carves own: the last of them
 * to go gives the CPUs back: the effects' CC_EFFECT_TAKE_BACK, the
 * audit's repair of the same).  It asked
 * for nothing, so corecarve's failure here does not stop it: the reason
 * goes to the log, and the audit reports the leak (SOFT_EXCLUSIVITY_LEAK).
 * Looked at first without the lock: with no such carve, nothing is locked
 * (on 6.7 and later, and with partition parents, there never is one). */
static int beside_carves(const struct cc_ctx *ctx, const struct cc_oci_state *st, struct cc_oci_config *cfg)
{
	_cleanup_ledger_ struct cc_ledger *look = NULL, *ledger = NULL;
	const char *dir = ctx->state_dir ? ctx->state_dir : CC_LEDGER_DIR;
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int dfd = -1;
	struct cc_err err = CC_ERR_INIT;
	char cgroup[PATH_MAX], branch[PATH_MAX];
	bool missing = false;
	_cleanup_cg_ struct cc_cg cg = CC_CG_INIT;
	size_t len = 0;
	int live;

	/* No state directory or no ledger, as the first stage finds them: no
	 * carve, and no lock to take (the usual container on most nodes). */
	dfd = cc_state_dir_open(dir, false, &missing, &err);
	if (dfd < 0 && missing)
		return 0;
	if (dfd >= 0 && cc_state_ledger_read(dfd, dir, &text, &len, &err) == 0 && !text)
		return 0;
	cc_err_clear(&err);
	look = cc_ledger_open_as(ctx->state_dir, CC_LEDGER_READ, ctx->lock, &err);
	if (!look || (live = cpuset_only_live(look, &err)) < 0)
		goto fail;
	/* Its lock goes before the writer's is taken. */
	cc_ledger_close(look);
	look = NULL;
	if (!live)
		return 0;
	if ((!cfg->annotations && st->bundle[0] && cc_oci_config_load(st->bundle, cfg, &err) < 0) ||
	    cc_container_cgroup(ctx->root, st->pid, cfg->cgroups_path, cgroup, sizeof(cgroup), &err) < 0 ||
	    open_cg(ctx, &cg, &err) < 0 || !(ledger = lock_and_gc(ctx, &cg, &err)) ||
	    (live = cpuset_only_live(ledger, &err)) < 0)
		goto fail;
	if (!live)
		return 0;
	newcomer_branch(ledger, cgroup, branch, sizeof(branch));
	if (ctx->dry_run) {
		fprintf(ctx->log, "corecarve: dry run: %s (%s) would give up the CPUs of the cpuset-only carves\n", st->id,
			branch);
		return 0;
	}
	if (cc_effects_repair(&(struct cc_effect_run){ .ctx = ctx, .cg = &cg, .ledger = ledger }, CC_EFFECT_TAKE_BACK,
			      branch, &err) < 0)
		goto fail;
	return 0;
fail:
	if (ctx->log)
		fprintf(ctx->log, "corecarve: warning: container %s, started beside cpuset-only carves, still runs on "
			"their CPUs: %s\n", st->id, err.msg);
	return 0;
}

int cc_container_release(const struct cc_ctx *ctx, const char *id, const char *kind, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	struct cc_carve *c;
	_cleanup_cg_ struct cc_cg cg = CC_CG_INIT;
	int rc;

	/* The index only: a container that was not carved (the usual case
	 * for one in a shared class) costs no parse of the carves, and one
	 * that was the parse of its own line. */
	ledger = cc_ledger_open_as(ctx->state_dir, ctx->dry_run ? CC_LEDGER_READ : CC_LEDGER_WRITE_INDEX, ctx->lock,
				   err);
	if (!ledger)
		return -1;
	cc_ledger_set_fault(ledger, ctx->fault);
	rc = cc_ledger_get(ledger, id, &c, err);
	if (rc <= 0)
		return rc;
	/* A container's poststop gives back a container's carve, never an
	 * exec's or a VM's that happens to share the id. */
	if (strcmp(c->kind, kind))
		return 0;
	if (ctx->released) {
		_cleanup_free_ char *cpus = cc_cpulist_format(c->cpus);

		ctx->released->found = true;
		snprintf(ctx->released->class_name, sizeof(ctx->released->class_name), "%s", c->class_name);
		snprintf(ctx->released->mode, sizeof(ctx->released->mode), "%s", c->mode);
		snprintf(ctx->released->cpus, sizeof(ctx->released->cpus), "%s", cpus ? cpus : "?");
	}
	if (ctx->dry_run)
		return 0; /* the note says what would be given back */
	if (open_cg(ctx, &cg, err) < 0)
		return -1;
	cg.fault = ctx->fault;
	cc_fault_point(ctx, "before-release");
	return cc_carve_release(ctx, &cg, ledger, id, err);
}
