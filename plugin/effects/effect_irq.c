/* corecarve: the IRQ effect (effect.h): a steer-away carve's IRQs moved off
 * its CPUs and given back (irq.h). */
#define _GNU_SOURCE
#include "effect_int.h"

#include <errno.h>
#include <stdio.h>

#include "cleanup.h"
#include "cpulist.h"
#include "irq.h"

static bool irq_held(const struct cc_carve *c)
{
	return c->steer_irqs;
}

static bool irq_wanted(const struct cc_effect_run *run, const struct cc_carve *c)
{
	(void)run;
	return irq_held(c);
}

/* Every IRQ off the union of the steer-away carves, this one included (it
 * is in the ledger): a movable IRQ that cannot be moved refuses the carve,
 * with every IRQ moved so far put back (strict). */
static int irq_apply(struct cc_effect_run *run, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(run->policy, run->topo);
	struct cc_irq_fallback fb = { 0 };
	FILE *trace = run->ctx->verbose ? run->ctx->log : NULL;
	struct cc_irq_opts o = { .root = run->ctx->root, .fb = &fb, .trace = trace };
	struct cc_irq_report rep;
	int rc;

	if (!reserved)
		return cc_err_sys(err, ENOMEM, "IRQ steering");
	if (cc_irq_fallback_from_topo(run->topo, reserved, &fb, err) < 0)
		return -1;
	rc = cc_irq_reconcile(run->ledger, &o, &rep, err);
	cc_irq_fallback_fini(&fb);
	if (rc < 0) {
		struct cc_carve *c = effect_carve_of(run, NULL);
		_cleanup_free_ char *cpus = c ? cc_cpulist_format(c->cpus) : NULL;

		return cc_err_prefix(err, "steering IRQs off CPUs %s", cpus ? cpus : "?");
	}
	if (rep.irqbalance.warning[0])
		effect_log(run, "%s", rep.irqbalance.warning);
	/* Kernel-managed IRQs are the kernel's per-CPU queues: recorded
	 * (corecarve irq status) and reported here, never fatal. */
	if (run->ctx->verbose)
		effect_log(run, "IRQs: %d moved (%d to the fallback), %d unmovable (kernel-managed)%s%s%s%s", rep.moved,
			 rep.fell_back, rep.unmovable, rep.unmovable ? ": " : "", rep.unmovable_list,
			 rep.irqbalance.action[0] ? "; " : "", rep.irqbalance.action);
	return 0;
}

/* Back to their originals minus the CPUs of the remaining steer-away
 * carves; best effort, every IRQ is tried. */
static int irq_undo(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_irq_opts o = { .root = run->ctx->root, .except = run->id, .best_effort = true,
				 .trace = run->ctx->verbose ? run->ctx->log : NULL };
	struct cc_irq_report rep;
	int rc = cc_irq_reconcile(run->ledger, &o, &rep, err);

	if (rep.irqbalance.warning[0])
		effect_log(run, "%s", rep.irqbalance.warning);
	if (run->ctx->verbose)
		effect_log(run, "IRQs: %d restored, %d adjusted%s%s", rep.restored, rep.moved,
			 rep.irqbalance.action[0] ? "; " : "", rep.irqbalance.action);
	return rc < 0 ? cc_err_prefix(err, "carve %s: giving IRQs back", run->id) : 0;
}

const struct cc_effect cc_effect_irq = { "irq", irq_wanted, irq_held, irq_apply, irq_undo, false };
