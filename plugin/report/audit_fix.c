/* corecarve audit --fix: repair what is safe, through the paths that made
 * the carves in the first place — the cgroup effect's plan and apply for
 * a carve's cgroup, its parked partition and its parents' quotas, the
 * release for a carve whose container is gone (or one kept as releasing),
 * cc_irq_reconcile() for IRQs — so a repair leaves exactly the state (and
 * the node records) a fresh carve would (effect.h).
 *
 * Cgroups corecarve does not own are written in one case only: carved
 * CPUs are taken out of a cgroup that holds them, which becomes the
 * carves' peer (a node record they own), so the last of them to go gives
 * it everything back. */
#define _GNU_SOURCE
#include "audit.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "ctx.h"
#include "cpulist.h"
#include "effect.h"

struct fixer {
	const struct cc_audit_fix_ctx *fx;
	const struct cc_audit_report *r;
	struct cc_ctx ctx; /* for cc_carve_undo() */
	struct cc_cg cg;
	struct cc_audit_fix_result *res;
	struct cc_err first;
	json_t *done; /* keys of repairs already made: one per carve, cgroup or task */
};

static void fixer_fini(struct fixer *x)
{
	cc_cg_close(&x->cg);
}

/* Record the outcome of one repair: printed, counted, first error kept. */
static void outcome(struct fixer *x, const char *what, int rc, struct cc_err *e)
{
	if (rc == 0) {
		x->res->repaired++;
		fprintf(x->fx->out, "repaired: %s\n", what);
	} else {
		x->res->failed++;
		fprintf(x->fx->out, "not repaired: %s: %s\n", what, e->msg);
		if (!cc_err_isset(&x->first))
			cc_err_set(&x->first, e->code, "%s: %s", what, e->msg);
	}
}

/* True the first time `key` is seen: several findings share one repair. */
static bool first_time(struct fixer *x, const char *kind, const char *key)
{
	char k[PATH_MAX + 32];

	snprintf(k, sizeof(k), "%s:%s", kind, key);
	if (json_object_get(x->done, k))
		return false;
	json_object_set_new(x->done, k, json_true());
	return true;
}

/* The codes found for one carve with one repair, for the message. */
static void codes_of(const struct fixer *x, const char *carve, enum cc_audit_repair rep, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < x->r->n && n + 1 < len; i++) {
		const struct cc_finding *f = &x->r->f[i];
		const char *name = cc_audit_code_name(f->code);

		if (f->repair != rep || strcmp(f->carve, carve) || strstr(buf, name))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
	}
}

/* ---- stale records ------------------------------------------------------- */

static void release_stale(struct fixer *x, const struct cc_finding *f)
{
	struct cc_ledger *l = x->fx->ledger;
	struct cc_carve *c = cc_ledger_find(l, f->carve);
	struct cc_err e = CC_ERR_INIT;
	char what[512];
	int rc;

	if (!c || !first_time(x, "release", f->carve))
		return;
	snprintf(what, sizeof(what), "%s %.200s: released the CPUs of carve %.200s", cc_audit_code_name(f->code),
		 f->object, f->carve);
	/* Undone and removed, or kept as releasing for the next try. */
	rc = cc_carve_release(&x->ctx, &x->cg, l, f->carve, &e);
	outcome(x, what, rc, &e);
}

/* ---- re-applying a carve ------------------------------------------------- */

static struct cc_effect_run fix_run(struct fixer *x, const char *id, const struct cc_pclass *cls)
{
	return (struct cc_effect_run){ .ctx = &x->ctx, .cg = &x->cg, .ledger = x->fx->ledger, .id = id,
				       .policy = x->fx->policy, .topo = x->fx->topo, .pclass = cls };
}

static void reapply(struct fixer *x, const char *id)
{
	struct cc_ledger *l = x->fx->ledger;
	struct cc_carve *c = cc_ledger_find(l, id);
	struct cc_effect_run run;
	struct cc_err e = CC_ERR_INIT;
	char what[512], codes[128], was[32];
	int rc;

	if (!c || !c->cgroup[0] || !first_time(x, "reapply", id))
		return;
	codes_of(x, id, CC_REPAIR_REAPPLY, codes, sizeof(codes));
	snprintf(what, sizeof(what), "%.100s: carve %.100s re-applied to %.200s", codes, id, c->cgroup);
	snprintf(was, sizeof(was), "%s", c->mode);
	/* The class decides what the hook applied; a class gone from the
	 * policy keeps the carve as it is: a root partition, quota dropped. */
	run = fix_run(x, id, cc_policy_class(x->fx->policy, c->class_name));
	rc = cc_effects_repair(&run, CC_EFFECT_REAPPLY, NULL, &e);
	c = cc_ledger_find(l, id);
	/* The kernel offers another mode now (a parent became a partition):
	 * the release undoes what this apply did. */
	if (rc == 0 && c && strcmp(was, c->mode))
		fprintf(x->fx->out, "carve %s: mode %s -> %s\n", id, was, c->mode);
	outcome(x, what, rc, &e);
}

/* ---- carved CPUs in a cgroup that is not a carve --------------------------- */

static int take_back(struct fixer *x, const char *cgroup, struct cc_err *err)
{
	struct cc_effect_run run = fix_run(x, cgroup, NULL);

	return cc_effects_repair(&run, CC_EFFECT_TAKE_BACK, cgroup, err);
}

/* ---- a quota inside a carve ---------------------------------------------- */

/* The carve's own subtree (a runtime's nested leaf): its cgroups are the
 * carve's, nothing to record. */
static int drop_quota(struct fixer *x, const char *cgroup, struct cc_err *err)
{
	_cleanup_free_ char *cur = cc_cg_read(&x->cg, cgroup, "cpu.max", err);
	long long quota, period;
	char val[64];

	if (!cur)
		return -1;
	if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", cgroup, cur);
	if (quota < 0)
		return 0;
	snprintf(val, sizeof(val), "max %lld", period);
	return cc_cg_write(&x->cg, cgroup, "cpu.max", val, NULL, err);
}

/* ---- tasks --------------------------------------------------------------- */

/* 1: the thread is gone or its id names another thread now, nothing was
 * done; 0: re-pinned; -1: failed. */
static int repin(struct fixer *x, const struct cc_finding *f, struct cc_err *err)
{
	const struct cc_carve *c = cc_ledger_find(x->fx->ledger, f->carve);
	size_t size = CPU_ALLOC_SIZE(CC_CPU_LIMIT);
	cpu_set_t *set;
	int cpu, rc;

	if (!c)
		return cc_err_set(err, ENOENT, "carve %s is gone", f->carve);
	/* Right before the call: the id read at snapshot time may name
	 * another process's thread by now (ids are reused), which must not
	 * be pinned onto a carve.  Same start time and same cgroup, or left
	 * alone.  What is left is the window between this read and the call
	 * (sched_setaffinity takes no pidfd). */
	rc = cc_audit_task_same(x->fx->root, (int)f->num, f->target, f->start, err);
	if (rc <= 0)
		return rc < 0 ? -1 : 1;
	if (!x->fx->root->is_host)
		return cc_err_set(err, EPERM, "task affinity is only changed on the real host");
	set = CPU_ALLOC(CC_CPU_LIMIT);
	if (!set)
		return cc_err_sys(err, ENOMEM, "audit fix");
	CPU_ZERO_S(size, set);
	hwloc_bitmap_foreach_begin(cpu, c->cpus) {
		if (cpu < CC_CPU_LIMIT)
			CPU_SET_S((size_t)cpu, size, set);
	}
	hwloc_bitmap_foreach_end();
	rc = sched_setaffinity((pid_t)f->num, size, set);
	CPU_FREE(set);
	if (rc < 0 && errno == ESRCH)
		return 1; /* exited meanwhile: nothing left to re-pin */
	if (rc < 0)
		return cc_err_sys(err, errno, "sched_setaffinity(%ld)", f->num);
	return 0;
}

/* ---- IRQs ---------------------------------------------------------------- */

static int steer(struct fixer *x, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(x->fx->policy, x->fx->topo);
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o = { .root = x->fx->root, .fb = &fb, .best_effort = true, .trace = x->fx->out };
	struct cc_irq_report rep;
	int rc;

	if (!reserved)
		return cc_err_sys(err, ENOMEM, "audit fix");
	if (cc_irq_fallback_from_topo(x->fx->topo, reserved, &fb, err) < 0)
		return -1;
	rc = cc_irq_reconcile(x->fx->ledger, &o, &rep, err);
	cc_irq_fallback_fini(&fb);
	fprintf(x->fx->out, "IRQs: %d moved off the carves (%d to the fallback), %d unmovable%s%s\n", rep.moved,
		rep.fell_back, rep.unmovable, rep.unmovable ? ": " : "", rep.unmovable_list);
	if (rep.irqbalance.warning[0])
		fprintf(x->fx->out, "irqbalance: %s\n", rep.irqbalance.warning);
	return rc;
}

/* ---- power -------------------------------------------------------------- */

/* A drifted file gets the recorded value back; records no carve owns are
 * restored by the release path (the same code as a poststop). */
static void fix_power(struct fixer *x)
{
	struct cc_power_report rep;
	struct cc_err e = CC_ERR_INIT;
	char what[PATH_MAX + 128];
	bool orphans = false;

	for (int i = 0; i < x->r->n; i++) {
		const struct cc_finding *f = &x->r->f[i];

		if (f->repair != CC_REPAIR_POWER)
			continue;
		if (f->code == CC_AUDIT_POWER_NOT_RESTORED) {
			orphans = true;
			continue;
		}
		e = (struct cc_err)CC_ERR_INIT;
		cc_audit_text(what, sizeof(what), "POWER_DRIFT %s: \"%s\" written back", f->target, f->expected);
		outcome(x, what, cc_root_write(x->fx->root, f->target, f->expected, &e), &e);
	}
	if (!orphans)
		return;
	e = (struct cc_err)CC_ERR_INIT;
	outcome(x, "POWER_NOT_RESTORED: originals written back",
		cc_power_release(x->fx->root, x->fx->ledger, NULL, x->fx->out, &rep, &e), &e);
	for (int i = 0; i < rep.msgs.nwarnings; i++)
		fprintf(x->fx->out, "power: %s\n", rep.msgs.warnings[i]);
}

int cc_audit_fix(const struct cc_audit_fix_ctx *fx, const struct cc_audit_report *r,
		 struct cc_audit_fix_result *res, struct cc_err *err)
{
	_cleanup_json_ json_t *done = json_object();
	__attribute__((cleanup(fixer_fini))) struct fixer x = { .fx = fx, .r = r, .res = res, .done = done, .cg = CC_CG_INIT };
	bool irqs = false;
	char what[PATH_MAX + 128];

	memset(res, 0, sizeof(*res));
	if (!done)
		return cc_err_sys(err, ENOMEM, "audit fix");
	x.ctx = (struct cc_ctx){ .root = fx->root, .log = fx->out, .verbose = true };
	if (cc_cg_open(&x.cg, fx->root, err) < 0)
		return -1;
	if (fx->cg_ops)
		cc_cg_use(&x.cg, fx->cg_ops, fx->cg_ops_arg);
	x.cg.trace = fx->out;
	for (int i = 0; i < r->n; i++)
		res->manual += r->f[i].repair == CC_REPAIR_NONE;

	/* Order matters: released carves free CPUs; re-applied carves take
	 * back from their own peers and re-arm partitions before peers
	 * elsewhere are narrowed; tasks are re-pinned once their cpuset is
	 * right (a cpuset write resets affinities on older kernels). */
	for (int i = 0; i < r->n; i++)
		if (r->f[i].repair == CC_REPAIR_RELEASE)
			release_stale(&x, &r->f[i]);
	for (int i = 0; i < r->n; i++)
		if (r->f[i].repair == CC_REPAIR_REAPPLY)
			reapply(&x, r->f[i].carve);
	for (int i = 0; i < r->n; i++) {
		const struct cc_finding *f = &r->f[i];
		struct cc_err e = CC_ERR_INIT;
		int rc;

		if (f->repair == CC_REPAIR_TAKE_BACK && first_time(&x, "take-back", f->target)) {
			cc_audit_text(what, sizeof(what), "%s %s: carved CPUs taken out of its cpuset.cpus",
				 cc_audit_code_name(f->code), f->object);
			rc = take_back(&x, f->target, &e);
			outcome(&x, what, rc, &e);
		} else if (f->repair == CC_REPAIR_DROP_OWNER && !f->carve[0] && first_time(&x, "drop-held", f->target)) {
			struct cc_effect_run run = fix_run(&x, "", NULL);

			cc_audit_text(what, sizeof(what), "%s %s: recomputed without the CPUs held for no carve",
				      cc_audit_code_name(f->code), f->object);
			rc = cc_effects_repair(&run, CC_EFFECT_DROP_HELD, f->target, &e);
			outcome(&x, what, rc, &e);
		} else if (f->repair == CC_REPAIR_DROP_OWNER && f->carve[0] && first_time(&x, "drop-owner", f->carve)) {
			struct cc_effect_run run = fix_run(&x, f->carve, NULL);

			cc_audit_text(what, sizeof(what), "%s %s: recomputed without \"%s\"", cc_audit_code_name(f->code),
				      f->object, f->carve);
			rc = cc_effects_repair(&run, CC_EFFECT_DROP_OWNER, f->carve, &e);
			outcome(&x, what, rc, &e);
		} else if (f->repair == CC_REPAIR_DROP_QUOTA && first_time(&x, "quota", f->target)) {
			cc_audit_text(what, sizeof(what), "%s %s: cpu.max max", cc_audit_code_name(f->code), f->object);
			rc = drop_quota(&x, f->target, &e);
			outcome(&x, what, rc, &e);
		} else if (f->repair == CC_REPAIR_WIDEN_SHARED && first_time(&x, "widen", f->target)) {
			struct cc_effect_run run = fix_run(&x, "", NULL);

			/* After the owners that are no carve went (above): the
			 * value is computed again from the record as it is now. */
			cc_audit_text(what, sizeof(what), "%s %s: its pool given back", cc_audit_code_name(f->code),
				      f->object);
			rc = cc_effects_repair(&run, CC_EFFECT_WIDEN_SHARED, f->target, &e);
			outcome(&x, what, rc, &e);
		}
	}
	for (int i = 0; i < r->n; i++) {
		const struct cc_finding *f = &r->f[i];
		struct cc_err e = CC_ERR_INIT;
		char key[32];
		int rc;

		snprintf(key, sizeof(key), "%ld", f->num);
		if (f->repair == CC_REPAIR_REPIN && first_time(&x, "task", key)) {
			rc = repin(&x, f, &e);
			if (rc == 1) {
				fprintf(x.fx->out, "left alone: %s %s: the thread exited, or its id names another now\n",
					cc_audit_code_name(f->code), f->object);
				continue;
			}
			cc_audit_text(what, sizeof(what), "%s %s: affinity set to carve %s", cc_audit_code_name(f->code),
				 f->object, f->carve);
			outcome(&x, what, rc, &e);
		}
		irqs |= f->repair == CC_REPAIR_STEER_IRQS;
	}
	if (irqs) {
		struct cc_err e = CC_ERR_INIT;

		outcome(&x, "IRQ_ON_CARVE: IRQs steered off the carves", steer(&x, &e), &e);
	}
	fix_power(&x);
	if (cc_err_isset(&x.first)) {
		*err = x.first;
		return -1;
	}
	return 0;
}
