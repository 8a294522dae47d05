#define _GNU_SOURCE
#include "container.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"
#include "irq.h"
#include "power.h"
#include "topo_cache.h"

void cc_fault_point(const struct cc_ctx *ctx, const char *step)
{
	cc_fault(ctx->fault, step);
}

/* The container's name for per-container annotations. */
static const char *container_name(const json_t *annotations)
{
	json_t *v = json_object_get(annotations, "io.kubernetes.container.name");

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Give a steer-away carve's IRQs back: best effort, every IRQ is tried. */
static int release_irqs(const struct cc_ctx *ctx, struct cc_ledger *l, const struct cc_carve *c,
			struct cc_err *err)
{
	struct cc_irq_opts o = { .root = ctx->root, .except = c->id, .best_effort = true,
				 .trace = ctx->verbose ? ctx->log : NULL };
	struct cc_irq_report rep;
	int rc = cc_irq_reconcile(l, &o, &rep, err);

	if (rep.irqbalance.warning[0] && ctx->log)
		fprintf(ctx->log, "corecarve: %s: %s\n", c->id, rep.irqbalance.warning);
	if (ctx->verbose && ctx->log)
		fprintf(ctx->log, "corecarve: %s: IRQs: %d restored, %d adjusted%s%s\n", c->id, rep.restored,
			rep.moved, rep.irqbalance.action[0] ? "; " : "", rep.irqbalance.action);
	return rc < 0 ? cc_err_prefix(err, "carve %s: giving IRQs back", c->id) : 0;
}

static void log_power(const struct cc_ctx *ctx, const char *id, const struct cc_power_report *rep)
{
	if (!ctx->log)
		return;
	for (int i = 0; i < rep->msgs.nwarnings; i++)
		fprintf(ctx->log, "corecarve: %s: warning: %s\n", id, rep->msgs.warnings[i]);
	for (int i = 0; ctx->verbose && i < rep->msgs.nnotes; i++)
		fprintf(ctx->log, "corecarve: %s: %s\n", id, rep->msgs.notes[i]);
}

/* Give back the power settings no other carve still needs: every carve's
 * release runs it, so a file shared with a carve that went earlier (or
 * was never seen again after a crash) is restored by whoever goes last. */
static int release_power(const struct cc_ctx *ctx, struct cc_ledger *l, const struct cc_carve *c,
			 struct cc_err *err)
{
	struct cc_power_report rep;
	int rc = cc_power_release(ctx->root, l, c->id, ctx->verbose ? ctx->log : NULL, &rep, err);

	log_power(ctx, c->id, &rep);
	if (ctx->verbose && ctx->log && rep.restored)
		fprintf(ctx->log, "corecarve: %s: power: %d settings restored\n", c->id, rep.restored);
	return rc < 0 ? cc_err_prefix(err, "carve %s: giving power settings back", c->id) : 0;
}

int cc_carve_undo(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l,
		  const struct cc_carve *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t still = cc_ledger_held(l, c->id, false);
	_cleanup_free_ const char **others = NULL;
	struct cc_err irq_err = CC_ERR_INIT, power_err = CC_ERR_INIT;
	enum cc_cg_mode mode;
	int n = 0, nrefs = 0, rc = 0;

	if (!still || cc_ledger_refs(l, c->id, NULL, &others, &nrefs) < 0)
		return cc_err_sys(err, errno ? errno : ENOMEM, "carve %s: release", c->id);
	/* The cgroups of the other carves, those that have one. */
	for (int i = 0; i < nrefs; i++)
		if (others[i][0])
			others[n++] = others[i];
	if (c->cgroup[0]) {
		if (cc_cg_mode_parse(c->mode, &mode) < 0)
			rc = cc_err_set(err, EINVAL, "carve %s: unknown mode \"%s\"", c->id, c->mode);
		else
			rc = cc_cg_release(cg, c->cgroup, mode, c->cpus, c->parked, c->changes, still,
					   others, n, err);
	}
	/* All are tried; the first failure is reported. */
	if (c->steer_irqs && release_irqs(ctx, l, c, rc < 0 ? &irq_err : err) < 0 && rc == 0)
		rc = -1;
	if (release_power(ctx, l, c, rc < 0 ? &power_err : err) < 0 && rc == 0)
		rc = -1;
	return rc;
}

/* A step after the cgroup apply failed: undo everything the carve `id`
 * changed (power, IRQs, cgroup) and drop it from the ledger, best effort;
 * the journal on disk lets gc finish should any of it fail. */
static void undo_refused(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, const char *id)
{
	struct cc_err ignored = CC_ERR_INIT;
	struct cc_carve *c = cc_ledger_find(l, id);

	if (!c)
		return;
	cc_carve_undo(ctx, cg, l, c, &ignored);
	cc_ledger_remove(l, id);
	cc_ledger_commit(l, &ignored);
}

/* After the cgroup apply, before the final commit: move every IRQ off the
 * union of steer-away carves, this one included (it is in the ledger
 * already).  A failure to move a movable IRQ puts back the IRQs moved so
 * far, then the cgroup and the ledger: the container is refused. */
static int steer_irqs(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l,
		      const struct cc_policy *p, const struct cc_topo *t, struct cc_carve *carve,
		      struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(p, t);
	_cleanup_free_ char *cpus = cc_cpulist_format(carve->cpus);
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o = { .root = ctx->root, .fb = &fb, .trace = ctx->verbose ? ctx->log : NULL };
	struct cc_irq_report rep;

	if (!reserved || !cpus)
		return cc_err_sys(err, ENOMEM, "IRQ steering");
	if (cc_irq_fallback_from_topo(t, reserved, &fb, err) < 0)
		return -1;
	if (cc_irq_reconcile(l, &o, &rep, err) == 0) {
		cc_irq_fallback_fini(&fb);
		if (rep.irqbalance.warning[0] && ctx->log)
			fprintf(ctx->log, "corecarve: %s: %s\n", carve->id, rep.irqbalance.warning);
		/* Kernel-managed IRQs are the kernel's per-CPU queues: recorded
		 * (corecarve irq status) and reported here, never fatal. */
		if (ctx->verbose && ctx->log)
			fprintf(ctx->log, "corecarve: %s: IRQs: %d moved off CPUs %s (%d to the fallback), "
				"%d unmovable (kernel-managed)%s%s%s%s\n",
				carve->id, rep.moved, cpus, rep.fell_back, rep.unmovable, rep.unmovable ? ": " : "",
				rep.unmovable_list, rep.irqbalance.action[0] ? "; " : "", rep.irqbalance.action);
		return 0;
	}
	cc_irq_fallback_fini(&fb);
	cc_err_prefix(err, "%s %s: steering IRQs off CPUs %s", carve->kind, carve->id, cpus);
	undo_refused(ctx, cg, l, carve->id);
	return -1;
}

/* After the cgroup apply and the IRQs: the class's power settings (power.h).
 * Only a journal that cannot be committed fails; then the carve goes back
 * like a failed IRQ steer. */
static int apply_power(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l,
		       const struct cc_power_spec *spec, const struct cc_carve *carve, struct cc_power_report *rep,
		       struct cc_err *err)
{
	if (cc_power_apply(ctx->root, l, spec, carve->id, carve->cpus, carve->parked, ctx->verbose ? ctx->log : NULL,
			   rep, err) == 0) {
		log_power(ctx, carve->id, rep);
		if (ctx->verbose && ctx->log)
			fprintf(ctx->log, "corecarve: %s: power: %d settings written\n", carve->id, rep->written);
		return 0;
	}
	cc_err_prefix(err, "%s %s: power settings", carve->kind, carve->id);
	undo_refused(ctx, cg, l, carve->id);
	return -1;
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

	if (cc_carve_undo(g->ctx, g->cg, g->l, c, &e) < 0 && g->ctx->log)
		fprintf(g->ctx->log, "corecarve: releasing stale carve %s: %s\n", c->id, e.msg);
	cc_err_clear(&e);
	/* A stale exec carve's cgroup is still there, empty (its corecarve
	 * exec was killed): its cpuset.cpus would keep the kernel from making
	 * those CPUs exclusive for a sibling (6.12 refuses an exclusive set
	 * that covers a sibling's cpuset.cpus), so it goes too. */
	if (!strcmp(c->kind, "exec") && c->cgroup[0] && cc_cg_rmdir(g->cg, c->cgroup, &e) < 0 && g->ctx->log)
		fprintf(g->ctx->log, "corecarve: removing the cgroup of stale carve %s: %s\n", c->id, e.msg);
	return 0;
}

/* The write-ahead journal cc_cg_apply calls (cgroup.h): the carve enters
 * the ledger, on disk, before the first cgroup write that would outlive a
 * crash, and again with every restore record.  A hook killed at any point
 * after that leaves a carve whose cgroup the runtime removes when the start
 * fails; the next hook's gc then undoes exactly what it recorded.  Without
 * it a crash between the writes and the commit left ancestors'
 * cpuset.cpus.exclusive, the parked partition and peers' cpusets holding
 * CPUs that the ledger called free. */
struct journal_arg {
	const struct cc_ctx *ctx;
	struct cc_ledger *ledger;
	struct cc_carve *carve; /* the caller's; its `changes` is shared with the ledger's copy */
	bool added;
};

static int journal(void *arg, enum cc_cg_mode mode, struct cc_err *err)
{
	struct journal_arg *j = arg;

	if (!j->added) {
		snprintf(j->carve->mode, sizeof(j->carve->mode), "%s", cc_cg_mode_name(mode));
		if (cc_ledger_add(j->ledger, j->carve, err) < 0)
			return -1;
		j->added = true;
	}
	if (cc_ledger_commit(j->ledger, err) < 0)
		return -1;
	cc_fault_point(j->ctx, "after-journal");
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
	r = cc_request_lookup(ann, container_name(ann), req, &key, err);
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
	struct gc_arg gc;
	struct journal_arg jarg = { 0 };
	struct cc_carve *old;
	enum cc_cg_mode mode;
	int rc = -1;

	memset(&res->decision, 0, sizeof(res->decision));
	memset(&res->power, 0, sizeof(res->power));
	if (spec->cgroup != res->cgroup)
		snprintf(res->cgroup, sizeof(res->cgroup), "%s", spec->cgroup);
	cc_carve_init(&carve);
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		goto out;
	cg.trace = ctx->verbose ? ctx->log : NULL;
	policy = cc_policy_load(ctx->policy_path, err);
	if (!policy)
		goto out;
	/* Containers name the annotation; exec leaves it to the allocator,
	 * whose refusal lists the known classes. */
	if (is_container && !cc_policy_class(policy, req->class_name)) {
		cc_err_set(err, EINVAL, "annotation %s: class: unknown placement class \"%s\"",
			   CC_ANNOTATION_KEY, req->class_name);
		goto out;
	}
	src.kind = CC_TOPO_HOST;
	src.root = ctx->root;
	src.overrides = policy->overrides;
	src.noverrides = policy->noverrides;
	/* Through the cache in the state directory: discovery is most of a
	 * hook's time, and the model only changes with a reboot, hotplug or
	 * the policy's coreClasses (topo_cache.h says what is checked). */
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
	ledger->fault = ctx->fault;
	cg.fault = ctx->fault;
	cc_fault_point(ctx, "after-lock");
	/* gc first: a carve under this id whose cgroup is gone is stale. */
	gc = (struct gc_arg){ ctx, &cg, ledger };
	if (cc_ledger_gc(ledger, ctx->root, cg.mount, gc_release, &gc, err) < 0)
		goto out;
	cc_fault_point(ctx, "after-gc");
	if (cc_ledger_lookup(ledger, spec->id, &old, err) < 0)
		goto out;
	if (old) {
		if (carve_live(&cg, old, res->cgroup)) {
			rc = 0;
			goto out;
		}
		if (cc_carve_undo(ctx, &cg, ledger, old, err) < 0) {
			cc_err_prefix(err, "carve left by an earlier %s %s", spec->kind, spec->id);
			goto out;
		}
		cc_ledger_remove(ledger, spec->id);
	}

	taken = cc_ledger_taken(ledger);
	if (!taken) {
		cc_err_sys(err, ENOMEM, "ledger");
		goto out;
	}
	if (cc_allocate(topo, policy, taken, req, &res->decision, err) < 0) {
		if (is_container)
			cc_err_prefix(err, "container %s", spec->id);
		goto out;
	}
	if (res->decision.exclusive) {
		snprintf(carve.id, sizeof(carve.id), "%s", spec->id);
		snprintf(carve.kind, sizeof(carve.kind), "%s", spec->kind);
		snprintf(carve.cgroup, sizeof(carve.cgroup), "%s", res->cgroup);
		snprintf(carve.class_name, sizeof(carve.class_name), "%s", res->decision.class_name);
		snprintf(carve.core_class, sizeof(carve.core_class), "%s", res->decision.core_class);
		hwloc_bitmap_copy(carve.cpus, res->decision.cpus);
		hwloc_bitmap_copy(carve.parked, res->decision.parked);
		hwloc_bitmap_copy(carve.mems, res->decision.mems);
		carve.exclusive = true;
		carve.steer_irqs = res->decision.irq == CC_IRQ_STEER_AWAY;
		carve.created = (long long)time(NULL);
		jarg = (struct journal_arg){ ctx, ledger, &carve, false };
	}
	{
		const struct cc_decision *d = &res->decision;
		_cleanup_bitmap_ hwloc_bitmap_t carved = hwloc_bitmap_dup(taken);
		struct cc_cg_request creq = {
			.cgroup = res->cgroup,
			.cpus = d->cpus,
			.parked = d->parked,
			.mems = d->mems,
			.carved = carved,
			.isolated = d->partition == CC_PART_ISOLATED,
			.drop_quota = d->quota == CC_QUOTA_DROP,
			.exclusive = d->exclusive,
			.journal = d->exclusive ? journal : NULL,
			.journal_arg = &jarg,
		};

		hwloc_bitmap_or(carved, carved, d->cpus);
		hwloc_bitmap_or(carved, carved, d->parked);
		if (cc_cg_apply(&cg, &creq, &mode, carve.changes, err) < 0) {
			struct cc_err ignored = CC_ERR_INIT;

			/* Rolled back in the kernel: take the journaled carve out
			 * again.  Should this commit fail, gc removes it once the
			 * runtime has removed the cgroup of the refused container. */
			if (jarg.added && cc_ledger_remove(ledger, carve.id))
				cc_ledger_commit(ledger, &ignored);
			goto out;
		}
	}
	/* The journal's last commit already holds the finished carve. */
	cc_fault_point(ctx, "after-cgroup-write");
	if (res->decision.exclusive) {
		const struct cc_pclass *pc = cc_policy_class(policy, res->decision.class_name);
		bool power = pc && !cc_power_spec_empty(&pc->power);

		if (carve.steer_irqs && steer_irqs(ctx, &cg, ledger, policy, topo, &carve, err) < 0)
			goto out;
		if (power && apply_power(ctx, &cg, ledger, &pc->power, &carve, &res->power, err) < 0)
			goto out;
		/* Only those two change the ledger after the journal: a commit
		 * serialises the whole ledger, which no plain carve should pay
		 * twice. */
		if ((carve.steer_irqs || power) && cc_ledger_commit(ledger, err) < 0) {
			struct cc_err ignored = CC_ERR_INIT;
			struct cc_carve *c = cc_ledger_find(ledger, carve.id);

			/* Power, IRQs, then the cgroup, back; the journal on
			 * disk lets gc finish should this fail too. */
			if (c && cc_carve_undo(ctx, &cg, ledger, c, &ignored) == 0 && cc_ledger_remove(ledger, carve.id))
				cc_ledger_commit(ledger, &ignored);
			goto out;
		}
	}
	snprintf(res->mode, sizeof(res->mode), "%s", cc_cg_mode_name(mode));
	res->carved = res->decision.exclusive;
	rc = 0;
out:
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
	 * for one in a shared class) costs no parse of the carves. */
	ledger = cc_ledger_open_as(ctx->state_dir, CC_LEDGER_WRITE_INDEX, ctx->lock, err);
	if (!ledger)
		return -1;
	ledger->fault = ctx->fault;
	rc = cc_ledger_lookup(ledger, id, &c, err);
	if (rc <= 0)
		return rc;
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		return -1;
	cg.trace = ctx->verbose ? ctx->log : NULL;
	cg.fault = ctx->fault;
	cc_fault_point(ctx, "before-release");
	rc = cc_carve_undo(ctx, &cg, ledger, c, err);
	/* Killed here, the carve stays and gc undoes it again: harmless, as
	 * every undo step writes back a recorded value or takes this carve's
	 * CPUs out of a set. */
	cc_fault_point(ctx, "before-release-commit");
	/* The ledger entry goes even when a restore step failed: the CPUs are
	 * free again (the container is gone) and the audit reports what did
	 * not restore.  The error is still returned. */
	cc_ledger_remove(ledger, id);
	if (cc_ledger_commit(ledger, rc < 0 ? NULL : err) < 0 && rc == 0)
		return -1;
	return rc;
}
