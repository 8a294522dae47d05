#define _GNU_SOURCE
#include "container.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "effect.h"
#include "fault.h"
#include "topo_cache.h"

void cc_fault_point(const struct cc_ctx *ctx, const char *step)
{
	cc_fault(ctx->fault, step);
}

struct gc_arg {
	const struct cc_ctx *ctx;
	struct cc_cg *cg;
	struct cc_ledger *l;
};

static int gc_release(struct cc_carve *c, void *arg)
{
	struct gc_arg *g = arg;
	struct cc_err e = CC_ERR_INIT;
	char id[sizeof(c->id)], kind[sizeof(c->kind)], cgroup[sizeof(c->cgroup)];
	int rc;

	/* The undo may load every carve: c moves. */
	snprintf(id, sizeof(id), "%s", c->id);
	snprintf(kind, sizeof(kind), "%s", c->kind);
	snprintf(cgroup, sizeof(cgroup), "%s", c->cgroup);
	rc = cc_carve_undo(g->ctx, g->cg, g->l, id, &e);
	if (rc < 0) {
		if (g->ctx->log)
			fprintf(g->ctx->log, "corecarve: releasing stale carve %s: %s (kept as releasing)\n", id, e.msg);
		return -1;
	}
	/* A stale exec carve's cgroup is still there, empty (its corecarve
	 * exec was killed): its cpuset.cpus would keep the kernel from making
	 * those CPUs exclusive for a sibling (6.12 refuses an exclusive set
	 * that covers a sibling's cpuset.cpus), so it goes too. */
	cc_err_clear(&e);
	if (!strcmp(kind, "exec") && cgroup[0] && cc_cg_rmdir(g->cg, cgroup, &e) < 0 && g->ctx->log)
		fprintf(g->ctx->log, "corecarve: removing the cgroup of stale carve %s: %s\n", id, e.msg);
	return 0;
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
			struct cc_request *req, bool *found, struct cc_err *err)
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
	return 0;
}

int cc_container_create(const struct cc_ctx *ctx, const struct cc_oci_state *st,
			struct cc_create_result *res, struct cc_err *err)
{
	struct cc_oci_config cfg = { 0 };
	struct cc_request req;
	struct cc_carve_spec spec;
	bool found;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (load_request(st, &cfg, &req, &found, err) < 0)
		goto out;
	if (!found) {
		rc = 0;
		goto out;
	}
	if (!cfg.annotations && st->bundle[0] && cc_oci_config_load(st->bundle, &cfg, err) < 0)
		goto out;
	if (cc_container_cgroup(ctx->root, st->pid, cfg.cgroups_path, res->cgroup,
				sizeof(res->cgroup), err) < 0)
		goto out;
	spec = (struct cc_carve_spec){ .id = st->id, .kind = "container", .cgroup = res->cgroup, .req = &req };
	rc = cc_carve_create(ctx, &spec, res, err);
out:
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
}

/* A shared-pool container: its own cpuset narrowed to the pool, nothing
 * recorded (it owns no CPU and changes nothing outside its cgroup). */
static int apply_shared(struct cc_cg *cg, const struct cc_decision *d, const char *cgroup, struct cc_err *err)
{
	struct cc_cg_carve cgc = {
		.id = "",
		.cgroup = cgroup,
		.cpus = d->cpus,
		.parked = d->parked,
		.mems = d->mems,
		.exclusive = false,
		.drop_quota = d->quota == CC_QUOTA_DROP,
	};
	struct cc_cg_others none = { 0 };
	struct cc_noderecs recs;
	struct cc_cg_plan plan;
	int rc;

	cc_noderecs_init(&recs);
	if (cc_cg_plan_carve(cg, &cgc, &none, &recs, &plan, err) < 0)
		return -1;
	rc = cc_cg_apply_plan(cg, &cgc, &plan, &recs, err);
	if (rc < 0) {
		struct cc_err undo = CC_ERR_INIT;

		cc_cg_undo_carve(cg, &cgc, &plan, &recs, NULL, &undo);
	}
	cc_cg_plan_fini(&plan);
	cc_noderecs_fini(&recs);
	return rc;
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

/* Read the world, decide, journal, apply, record:
 *   policy, topology (cached), ledger (its index), gc -> allocate ->
 *   plan the cgroups -> journal (the carve and every record with its
 *   pending write, before the first write) -> the effects (cgroup, IRQ,
 *   power) -> commit.
 * A failure before the journal changed nothing; after it, the effects
 * applied are undone and the carve goes, or stays as releasing when an
 * undo failed too. */
int cc_carve_create(const struct cc_ctx *ctx, const struct cc_carve_spec *spec,
		    struct cc_create_result *res, struct cc_err *err)
{
	const struct cc_request *req = spec->req;
	bool is_container = !strcmp(spec->kind, "container");
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = NULL;
	struct cc_topo_source src = { 0 };
	struct cc_topo_cache_info tci;
	struct cc_cg cg;
	struct cc_carve carve;
	struct cc_cg_plan plan = { 0 };
	struct cc_effect_run run;
	struct gc_arg gc;
	struct cc_carve *old;
	bool undo_failed;
	int rc = -1;

	memset(&res->decision, 0, sizeof(res->decision));
	memset(&res->power, 0, sizeof(res->power));
	if (spec->cgroup != res->cgroup)
		snprintf(res->cgroup, sizeof(res->cgroup), "%s", spec->cgroup);
	cc_carve_init(&carve);
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		goto out;
	if (ctx->cg_ops)
		cc_cg_use(&cg, ctx->cg_ops, ctx->cg_ops_arg);
	cg.trace = ctx->verbose ? ctx->log : NULL;
	policy = cc_policy_load(ctx->policy_path, err);
	if (!policy)
		goto out;
	/* Containers name the annotation; exec leaves it to the allocator,
	 * whose refusal lists the known classes. */
	if (is_container && !cc_policy_class(policy, req->class_name)) {
		char known[512] = "";
		size_t n = 0;

		/* The refusal lists what the policy offers, as plan's does. */
		for (int i = 0; i < policy->nclasses && n < sizeof(known); i++)
			n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", policy->classes[i].name);
		cc_err_set(err, EINVAL, "annotation %s: class: unknown placement class \"%s\" (known: %s; policy %s)",
			   CC_ANNOTATION_KEY, req->class_name, n ? known : "none", policy->source);
		goto out;
	}
	if (ctx->topo_src) {
		src = *ctx->topo_src;
	} else {
		src.kind = CC_TOPO_HOST;
		src.root = ctx->root;
	}
	src.overrides = policy->overrides;
	src.noverrides = policy->noverrides;
	/* Through the cache in the state directory: discovery is most of a
	 * hook's time, and the model only changes with a reboot, hotplug or
	 * the policy's coreClasses (topo_cache.h says what is checked).  A
	 * source other than the host (the tests', the benchmark's) is keyed by
	 * its description or its file's identity, and cached the same way. */
	topo = cc_topo_cache_load(&src, ctx->state_dir, &tci, err);
	if (!topo)
		goto out;
	if (ctx->verbose && ctx->log && !tci.hit)
		fprintf(ctx->log, "corecarve: topology discovered (cache %s)\n", tci.why);

	/* The index only: the carves already there are not parsed unless one
	 * of them is needed (docs/performance.md, the busy ledger). */
	ledger = cc_ledger_open_as(ctx->state_dir, CC_LEDGER_WRITE_INDEX, ctx->lock, err);
	if (!ledger)
		goto out;
	cc_ledger_set_fault(ledger, ctx->fault);
	cg.fault = ctx->fault;
	cc_fault_point(ctx, "after-lock");
	/* gc first: a carve under this id whose cgroup is gone is stale, and
	 * carves kept as releasing are tried again. */
	gc = (struct gc_arg){ ctx, &cg, ledger };
	if (cc_ledger_gc(ledger, ctx->root, cg.mount, gc_release, &gc, err) < 0)
		goto out;
	cc_fault_point(ctx, "after-gc");
	if (cc_ledger_lookup(ledger, spec->id, &old, err) < 0)
		goto out;
	if (old) {
		if (!old->releasing && carve_live(&cg, old, res->cgroup)) {
			rc = 0;
			goto out;
		}
		if (cc_carve_release(ctx, &cg, ledger, spec->id, err) < 0) {
			cc_err_prefix(err, "carve left by an earlier %s %s", spec->kind, spec->id);
			goto out;
		}
	}

	taken = cc_ledger_taken(ledger);
	if (!taken) {
		cc_err_sys(err, ENOMEM, "ledger");
		goto out;
	}
	if (keep_off_foreign(ctx, &cg, policy, topo, req, res->cgroup, taken, err) < 0)
		goto out;
	if (cc_allocate(topo, policy, taken, req, &res->decision, err) < 0) {
		if (is_container)
			cc_err_prefix(err, "container %s", spec->id);
		goto out;
	}
	if (!res->decision.exclusive) {
		if (apply_shared(&cg, &res->decision, res->cgroup, err) < 0)
			goto out;
		snprintf(res->mode, sizeof(res->mode), "%s", cc_cg_mode_name(CC_MODE_CPUSET_ONLY));
		rc = 0;
		goto out;
	}

	carve_from(spec, &res->decision, res->cgroup, &carve);
	run = (struct cc_effect_run){ .ctx = ctx, .cg = &cg, .ledger = ledger, .id = carve.id };
	run.policy = policy;
	run.topo = topo;
	run.pclass = cc_policy_class(policy, res->decision.class_name);
	run.cg_plan = &plan;
	run.power = &res->power;
	/* Read the world and decide: nothing is written yet but the
	 * controllers on the path. */
	if (cc_effect_cgroup_plan(&run, &carve, &plan, err) < 0)
		goto out;
	/* The journal: the carve and every record with its pending write on
	 * disk before the first write a crash would leave behind.  Killed
	 * after it, the runtime removes the refused container's cgroup and
	 * the next hook's gc undoes exactly what is recorded. */
	if (cc_ledger_add(ledger, &carve, err) < 0 || cc_ledger_commit(ledger, err) < 0)
		goto out;
	cc_fault_point(ctx, "after-journal");
	if (cc_effects_apply(&run, &undo_failed, err) < 0) {
		struct cc_err commit = CC_ERR_INIT;

		if (undo_failed) {
			cc_ledger_mark_releasing(ledger, carve.id);
			cc_err_prefix(err, "%s %s (kept as releasing)", spec->kind, spec->id);
		} else {
			cc_ledger_remove(ledger, carve.id);
			cc_err_prefix(err, "%s %s", spec->kind, spec->id);
		}
		/* Should this commit fail, gc finds the carve: its container's
		 * cgroup goes with the refused start. */
		cc_ledger_commit(ledger, &commit);
		goto out;
	}
	cc_fault_point(ctx, "after-cgroup-write");
	if (cc_ledger_commit(ledger, err) < 0) {
		struct cc_err undo = CC_ERR_INIT;

		/* Everything back; the journal on disk lets gc finish should
		 * this fail too. */
		cc_carve_release(ctx, &cg, ledger, carve.id, &undo);
		goto out;
	}
	snprintf(res->mode, sizeof(res->mode), "%s", carve.mode);
	res->carved = true;
	rc = 0;
out:
	cc_cg_plan_fini(&plan);
	cc_carve_fini(&carve);
	return rc;
}

int cc_container_release(const struct cc_ctx *ctx, const char *id, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	struct cc_carve *c;
	struct cc_cg cg;
	int rc;

	/* The index only: a container that was not carved (the usual case
	 * for one in a shared class) costs no parse of the carves, and one
	 * that was the parse of its own line. */
	ledger = cc_ledger_open_as(ctx->state_dir, CC_LEDGER_WRITE_INDEX, ctx->lock, err);
	if (!ledger)
		return -1;
	cc_ledger_set_fault(ledger, ctx->fault);
	rc = cc_ledger_get(ledger, id, &c, err);
	if (rc <= 0)
		return rc;
	if (ctx->released) {
		_cleanup_free_ char *cpus = cc_cpulist_format(c->cpus);

		ctx->released->found = true;
		snprintf(ctx->released->class_name, sizeof(ctx->released->class_name), "%s", c->class_name);
		snprintf(ctx->released->mode, sizeof(ctx->released->mode), "%s", c->mode);
		snprintf(ctx->released->cpus, sizeof(ctx->released->cpus), "%s", cpus ? cpus : "?");
	}
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		return -1;
	if (ctx->cg_ops)
		cc_cg_use(&cg, ctx->cg_ops, ctx->cg_ops_arg);
	cg.trace = ctx->verbose ? ctx->log : NULL;
	cg.fault = ctx->fault;
	cc_fault_point(ctx, "before-release");
	return cc_carve_release(ctx, &cg, ledger, id, err);
}
