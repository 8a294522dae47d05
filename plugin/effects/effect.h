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
 * carves that rely on them, journals them before its first write, and
 * computes every value it writes from the originals and the live carves.
 * `apply` brings one carve in; `undo` takes it out again, whether it was
 * applied a moment ago (a later effect failed) or long ago (poststop, gc,
 * audit --fix), with the same code.  An effect that fails to apply leaves
 * nothing of its own applied; an undo that fails keeps what it could not
 * restore recorded with the carve as owner, so a retry computes the same.
 *
 * cc_effects_apply() runs the effects in order and undoes those applied
 * when one fails; cc_effects_undo() undoes them all in reverse.  The
 * caller keeps a carve whose undo failed as `releasing` (ledger.h). */
#ifndef CC_EFFECT_H
#define CC_EFFECT_H

#include <stdbool.h>

#include "cgroup.h"
#include "ctx.h"
#include "error.h"
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
	const char *id; /* the carve, in the ledger; looked up by id (pointers move) */
	/* apply only */
	const struct cc_policy *policy;
	const struct cc_topo *topo;
	const struct cc_pclass *pclass;
	struct cc_cg_plan *cg_plan;   /* the cgroup effect's plan, already journaled */
	struct cc_power_report *power; /* what the power effect wrote or warned of */
	/* how far apply got: applied[i] for cc_effects[i] */
	bool applied[CC_NEFFECTS];
};

struct cc_effect {
	const char *name;
	/* Whether the carve has anything of this effect (a carve with
	 * neither steer-away nor power settings has no IRQ or power effect). */
	bool (*wanted)(const struct cc_effect_run *run, const struct cc_carve *c);
	/* Whether a recorded carve may hold something of it: to undo. */
	bool (*held)(const struct cc_carve *c);
	int (*apply)(struct cc_effect_run *run, struct cc_err *err);
	int (*undo)(struct cc_effect_run *run, struct cc_err *err);
	/* An apply that fails half-way is put back by `undo` (the cgroup
	 * effect: its plan says what was written); false for effects whose
	 * failed apply puts back what it wrote itself (IRQs, in strict mode)
	 * or wrote nothing (power: only its journal can fail). */
	bool undo_failed_apply;
};

/* One per file: effect_cgroup.c, effect_irq.c, effect_power.c. */
extern const struct cc_effect cc_effect_cgroup, cc_effect_irq, cc_effect_power;
extern const struct cc_effect *const cc_effects[CC_NEFFECTS];

/* Apply every wanted effect in order; on a failure undo those applied, in
 * reverse, and return -1 with the failure (and, should an undo fail too,
 * its reason appended: the caller keeps the carve as releasing). *undo_failed
 * tells which. */
int cc_effects_apply(struct cc_effect_run *run, bool *undo_failed, struct cc_err *err);

/* Undo every effect of the carve, in reverse order.  Each is tried; -1
 * with the first failure. */
int cc_effects_undo(struct cc_effect_run *run, struct cc_err *err);

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

/* The cgroup effect's parts the orchestrator calls around the journal:
 * plan the carve's cgroups into its journal (the carve must be in the
 * ledger once its mode is known: cc_effect_cgroup_plan sets c->mode), and
 * the view of the other carves a plan needs. */
int cc_effect_cgroup_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_cg_plan *plan,
			  struct cc_err *err);

/* A shared-pool container starting (nothing carved; `shared` with
 * exclusive false and its pool: its class's pool as it would be without
 * any carve): its cpuset.cpus set to the pool minus the live carves, as a "shared" node record (cgroup.h) the carves arriving
 * and going recompute; journaled, written, committed.  Refused, its
 * record goes. */
int cc_effect_shared_start(struct cc_effect_run *run, const struct cc_cg_carve *shared, struct cc_err *err);

/* audit --fix: the shared container's record `path` reads narrower than
 * its pool minus the live carves: written again, committed. */
int cc_effect_shared_widen(struct cc_effect_run *run, const char *path, struct cc_err *err);

/* audit --fix: the carve's cgroups planned and applied again as on its
 * arrival (a partition made invalid, a quota put back, peers that regained
 * its CPUs), journaled and committed. */
int cc_effect_cgroup_reapply(struct cc_effect_run *run, struct cc_err *err);
/* audit --fix: `peer` holds CPUs of carves: it becomes their peer (a peer
 * record owned by each of them), narrowed, committed. */
int cc_effect_cgroup_take_peer(struct cc_effect_run *run, const char *peer, struct cc_err *err);
/* audit --fix: `owner` is no carve of the ledger: every cgroup record it
 * owns is recomputed without it (the last owner restores the original). */
int cc_effect_cgroup_drop_owner(struct cc_effect_run *run, const char *owner, struct cc_err *err);
/* audit --fix: the held record `path` (noderec.h) holds CPUs of no carve of
 * the ledger: recomputed without them. */
int cc_effect_cgroup_drop_held(struct cc_effect_run *run, const char *path, struct cc_err *err);

#endif
