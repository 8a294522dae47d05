/* corecarve: the effects of a carve — everything a carve changes in the
 * kernel, behind one interface (docs/design.md, "One restore model").
 *
 *   cgroup  the carve's own cgroup and the node records of section
 *           "cgroup": ancestors' exclusive sets, the parked partition,
 *           peers' cpusets, ancestors' quotas (cgroup.h)
 *   irq     device IRQs and default_smp_affinity off the steer-away
 *           carves, irqbalance's banned CPUs (irq.h, section "irq")
 *   power   the class's power settings (power.h, section "power")
 *
 * Each effect keeps node-level records of the original values and of the
 * carves that rely on them, and computes every value it writes from the
 * originals and the live carves.  A carve arrives in one loop with two
 * durability points (docs/design.md, "One loop, two commits"):
 *
 *   cc_effects_plan   each wanted effect reads the world and decides, and
 *                     puts its records with their pending values in the
 *                     ledger; the carve joins the ledger.  Nothing written.
 *   commit            the journal: the caller's cc_ledger_commit
 *   cc_effects_apply  each effect writes what it planned and updates its
 *                     records; one that fails is undone with those applied
 *                     before it, in reverse, and those planned after it take
 *                     their journal back (`unplan`)
 *   commit            the caller's again
 *
 * `undo` takes a carve out, whether it was applied a moment ago (a later
 * effect failed) or long ago (poststop, gc, audit --fix), with the same
 * code.  An undo that fails keeps what it could not restore recorded with
 * the carve as owner, so a retry computes the same.  The caller keeps a
 * carve whose undo failed as `releasing` (ledger.h). */
#ifndef CC_EFFECT_H
#define CC_EFFECT_H

#include <stdbool.h>

#include "cgroup.h"
#include "ctx.h"
#include "error.h"
#include "irq.h"
#include "ledger.h"
#include "policy.h"
#include "power.h"
#include "topo.h"

/* The effects, in the order they are applied (cc_effects). */
#define CC_NEFFECTS 3

struct cc_effect_run {
	const struct cc_ctx *ctx;
	struct cc_cg *cg;
	struct cc_ledger *ledger;
	const char *id; /* the carve, in the ledger; looked up by id (an index-only ledger loads it then) */
	/* apply only */
	const struct cc_policy *policy;
	const struct cc_topo *topo;
	const struct cc_pclass *pclass;
	struct cc_cg_plan *cg_plan;    /* the cgroup effect's plan (what its apply writes, a failed apply's undo reads) */
	struct cc_power_report *power; /* what the power effect wrote or warned of; NULL: power_scratch */
	/* A shared-pool container starting (the carve not exclusive): its
	 * cgroup view with its pool, `shared` with exclusive false (cgroup.h);
	 * it never joins the ledger, its record is its own.  NULL otherwise. */
	const struct cc_cg_carve *shared;
	/* The effects' plans, from cc_effects_plan to cc_effects_fini. */
	struct cc_cg_plan cg_planned;
	struct cc_irq_pass irq_pass;
	struct cc_power_pass power_pass;
	struct cc_power_report power_scratch;
	bool planned[CC_NEFFECTS];
	/* how far apply got: applied[i] for cc_effects[i] */
	bool applied[CC_NEFFECTS];
};

/* What an effect repairs outside a carve's arrival and release: the
 * audit's --fix, and the hook for a container started beside cpuset-only
 * carves (cc_effects_repair).  `target` as each says. */
enum cc_effect_repair {
	CC_EFFECT_REAPPLY,      /* run->id's carve planned and applied again as on its arrival (target unused) */
	CC_EFFECT_TAKE_BACK,    /* the cgroup `target` holds carves' CPUs: it becomes their peer, narrowed */
	CC_EFFECT_DROP_OWNER,   /* `target` owns records and is no carve: they are recomputed without it */
	CC_EFFECT_DROP_HELD,    /* the held record `target` holds CPUs of no carve: recomputed without them */
	CC_EFFECT_WIDEN_SHARED, /* the shared container's record `target` lacks CPUs of its pool: given back */
	CC_EFFECT_NREPAIRS
};

struct cc_effect {
	const char *name;
	/* Whether the carve has anything of this effect (a carve with
	 * neither steer-away nor power settings has no IRQ or power effect). */
	bool (*wanted)(const struct cc_effect_run *run, const struct cc_carve *c);
	/* Whether a recorded carve may hold something of it: to undo. */
	bool (*held)(const struct cc_carve *c);
	/* Read the world, decide, put the records with their pending values
	 * in the ledger; write nothing.  `c` is the arriving carve: not in
	 * the ledger yet for an effect that sets its mode, in it for the
	 * others. */
	int (*plan)(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err);
	/* Planned, never applied (an earlier effect failed): the records as
	 * they were before the plan.  NULL: the undo does it. */
	void (*unplan)(struct cc_effect_run *run);
	/* Free its plan (zeroed, partly made or whole). */
	void (*fini)(struct cc_effect_run *run);
	int (*apply)(struct cc_effect_run *run, struct cc_err *err);
	int (*undo)(struct cc_effect_run *run, struct cc_err *err);
	/* An apply that fails half-way is put back by `undo` (the cgroup
	 * effect: its plan says what was written); false for effects whose
	 * failed apply puts back what it wrote itself (IRQs, in strict mode)
	 * or wrote nothing (power: only memory can fail). */
	bool undo_failed_apply;
	/* Planned before the carve joins the ledger: it decides the carve's
	 * mode (the cgroup effect). */
	bool sets_mode;
	/* The repairs it makes (a bit per enum cc_effect_repair), each one
	 * plan, journal commit, apply and commit of its own. */
	unsigned repairs;
	int (*repair)(struct cc_effect_run *run, enum cc_effect_repair what, const char *target, struct cc_err *err);
};

/* One per file: effect_cgroup.c, effect_irq.c, effect_power.c. */
extern const struct cc_effect cc_effect_cgroup, cc_effect_irq, cc_effect_power;
extern const struct cc_effect *const cc_effects[CC_NEFFECTS];

/* Plan every wanted effect of the arriving carve `c` in order: those that
 * set its mode first, then `c` joins the ledger (an exclusive one: a
 * shared-pool container never does) and the others plan with it there.  Nothing is written; the caller commits the journal next.  A dry
 * run (ctx->dry_run, the ledger read-only) stops before the carve would join
 * it.  On failure nothing is committed: the caller drops the ledger. */
int cc_effects_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err);

/* Apply every planned effect in order; on a failure undo those applied, in
 * reverse, unplan those left, and return -1 with the failure (and, should
 * an undo fail too, its reason appended: the caller keeps the carve as
 * releasing). *undo_failed tells which. */
int cc_effects_apply(struct cc_effect_run *run, bool *undo_failed, struct cc_err *err);

/* Free the plans of cc_effects_plan. */
void cc_effects_fini(struct cc_effect_run *run);

/* Undo every effect of the carve, in reverse order.  Each is tried; -1
 * with the first failure. */
int cc_effects_undo(struct cc_effect_run *run, struct cc_err *err);

/* The quota rule (effect_cgroup.c), one implementation for the plan and
 * the audit: an exclusive carve drops the CFS quota of its cgroup and its
 * pod, and its CPUs count in the demand a quota above the pod must meet,
 * unless its class keeps quotas (`quota: keep`).  A class the policy no
 * longer has drops (what the carve did when it was made). */
bool cc_effect_drops_quota(const struct cc_carve *c, const struct cc_policy *policy);

/* ---- a recorded carve taken out (effect_release.c) ---- */

/* Undo every effect of the recorded carve `id`: its cgroups,
 * then, for a steer-away carve, the IRQs, then the power settings no other
 * carve owns; the ledger's records are updated, the carve itself stays.
 * Every effect is tried; -1 with the first failure. */
int cc_carve_undo(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, const char *id,
		  struct cc_err *err);

/* Undo, then remove the carve — or keep it as `releasing` when the undo
 * failed — and commit.  Fault step "before-release-commit". */
int cc_carve_release(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, const char *id,
		     struct cc_err *err);

/* The repair `what` of `target`, by the effect that makes it (its
 * `repairs`), committed.  -1 with err. */
int cc_effects_repair(struct cc_effect_run *run, enum cc_effect_repair what, const char *target,
		      struct cc_err *err);

#endif
