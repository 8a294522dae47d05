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
	return c->exclusive && irq_held(c);
}

static struct cc_irq_opts carve_opts(const struct cc_effect_run *run, const struct cc_irq_fallback *fb)
{
	return (struct cc_irq_opts){ .root = run->ctx->root, .fb = fb,
				     .trace = run->ctx->verbose ? run->ctx->log : NULL };
}

/* Every IRQ off the union of the steer-away carves, this one included (it
 * is in the ledger): read, decided, journaled in the ledger. */
static int irq_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(run->policy, run->topo);
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o;
	int rc;

	(void)c;
	if (!reserved)
		return cc_err_sys(err, ENOMEM, "IRQ steering");
	if (cc_irq_fallback_from_topo(run->topo, reserved, &fb, err) < 0)
		return -1;
	o = carve_opts(run, &fb);
	rc = cc_irq_pass_plan(run->ledger, &o, &run->irq_pass, err);
	cc_irq_fallback_fini(&fb);
	return rc < 0 ? cc_err_prefix(err, "steering IRQs") : 0;
}

static void irq_unplan(struct cc_effect_run *run)
{
	struct cc_err ignored = CC_ERR_INIT;

	if (run->irq_pass.journaled)
		cc_irq_state_store(run->ledger, &run->irq_pass.st, &ignored);
}

static void irq_fini(struct cc_effect_run *run)
{
	cc_irq_pass_fini(&run->irq_pass);
}

/* The plan written: a movable IRQ that cannot be moved refuses the carve,
 * with every IRQ moved so far put back (strict). */
static int irq_apply(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_irq_opts o = carve_opts(run, NULL);
	struct cc_irq_report rep;

	if (cc_irq_pass_apply(run->ledger, &o, &run->irq_pass, &rep, err) < 0) {
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

const struct cc_effect cc_effect_irq = {
	.name = "irq", .wanted = irq_wanted, .held = irq_held, .plan = irq_plan, .unplan = irq_unplan,
	.fini = irq_fini, .apply = irq_apply, .undo = irq_undo,
};
