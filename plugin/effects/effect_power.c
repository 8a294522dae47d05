/* corecarve: the power effect (effect.h): a class's power settings on the
 * carve's CPUs and given back (power.h). */
#define _GNU_SOURCE
#include "effect_int.h"

static void log_power(const struct cc_effect_run *run, const struct cc_power_report *rep)
{
	for (int i = 0; i < rep->msgs.nwarnings; i++)
		effect_log(run, "warning: %s", rep->msgs.warnings[i]);
	for (int i = 0; run->ctx->verbose && i < rep->msgs.nnotes; i++)
		effect_log(run, "%s", rep->msgs.notes[i]);
}

/* The carve does not say whether its class had power settings (the policy
 * may have changed since): the release looks at the records. */
static bool power_held(const struct cc_carve *c)
{
	(void)c;
	return true;
}

/* A shared-pool container holds no CPU of its own: nothing to tune. */
static bool power_wanted(const struct cc_effect_run *run, const struct cc_carve *c)
{
	return c->exclusive && run->pclass && !cc_power_spec_empty(&run->pclass->power);
}

static struct cc_power_report *report_of(struct cc_effect_run *run)
{
	return run->power ? run->power : &run->power_scratch;
}

/* Probed and decided, the records with their pending values in the
 * ledger: a setting the node does not offer is a warning (power.h). */
static int power_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err)
{
	if (cc_power_pass_plan(run->ctx->root, run->ledger, &run->pclass->power, c->id, c->cpus, c->parked,
			       &run->power_pass, report_of(run), err) < 0)
		return cc_err_prefix(err, "power settings");
	return 0;
}

static void power_unplan(struct cc_effect_run *run)
{
	struct cc_err ignored = CC_ERR_INIT;

	if (run->power_pass.journaled)
		cc_power_recs_store(run->ledger, &run->power_pass.st, &ignored);
}

static void power_fini(struct cc_effect_run *run)
{
	cc_power_pass_fini(&run->power_pass);
}

/* A refused write is a warning; only memory can fail. */
static int power_apply(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_power_report *rep = report_of(run);

	if (cc_power_pass_apply(run->ctx->root, run->ledger, &run->power_pass,
				run->ctx->verbose ? run->ctx->log : NULL, rep, err) < 0)
		return cc_err_prefix(err, "power settings");
	log_power(run, rep);
	if (run->ctx->verbose)
		effect_log(run, "power: %d settings written", rep->written);
	return 0;
}

/* Whatever no other carve still needs: every release runs it, so a file
 * shared with a carve that went earlier (or was never seen again after a
 * crash) is restored by whoever goes last. */
static int power_undo(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_power_report rep;
	int rc = cc_power_release(run->ctx->root, run->ledger, run->id, run->ctx->verbose ? run->ctx->log : NULL,
				  &rep, err);

	log_power(run, &rep);
	if (run->ctx->verbose && rep.restored)
		effect_log(run, "power: %d settings restored", rep.restored);
	return rc < 0 ? cc_err_prefix(err, "carve %s: giving power settings back", run->id) : 0;
}

const struct cc_effect cc_effect_power = {
	.name = "power", .wanted = power_wanted, .held = power_held, .plan = power_plan, .unplan = power_unplan,
	.fini = power_fini, .apply = power_apply, .undo = power_undo,
};
