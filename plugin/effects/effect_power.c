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

static bool power_wanted(const struct cc_effect_run *run, const struct cc_carve *c)
{
	(void)c;
	return run->pclass && !cc_power_spec_empty(&run->pclass->power);
}

/* Only a journal that cannot be committed fails: a setting the node does
 * not offer is a warning (power.h). */
static int power_apply(struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_power_report scratch, *rep = run->power ? run->power : &scratch;
	struct cc_carve *c = effect_carve_of(run, err);

	if (!c)
		return -1;
	if (cc_power_apply(run->ctx->root, run->ledger, &run->pclass->power, c->id, c->cpus, c->parked,
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

const struct cc_effect cc_effect_power = { "power", power_wanted, power_held, power_apply, power_undo, false };
