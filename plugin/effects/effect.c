/* corecarve: the effects of a carve and the loops over them (effect.h); one
 * file per effect (effect_cgroup.c, effect_irq.c, effect_power.c), in the
 * order of this table. */
#define _GNU_SOURCE
#include "effect_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void effect_log(const struct cc_effect_run *run, const char *fmt, ...)
{
	va_list ap;

	if (!run->ctx->log)
		return;
	fprintf(run->ctx->log, "corecarve: %s: ", run->id);
	va_start(ap, fmt);
	vfprintf(run->ctx->log, fmt, ap);
	va_end(ap);
	fputc('\n', run->ctx->log);
}

struct cc_carve *effect_carve_of(const struct cc_effect_run *run, struct cc_err *err)
{
	struct cc_carve *c = NULL;

	/* Its own line only, in an index-only ledger (a release). */
	if (cc_ledger_get(run->ledger, run->id, &c, err) < 0)
		return NULL;
	if (!c)
		cc_err_set(err, ENOENT, "carve %s: not in the ledger", run->id);
	return c;
}

const struct cc_effect *const cc_effects[CC_NEFFECTS] = { &cc_effect_cgroup, &cc_effect_irq, &cc_effect_power };

int cc_effects_repair(struct cc_effect_run *run, enum cc_effect_repair what, const char *target,
		      struct cc_err *err)
{
	for (int i = 0; i < CC_NEFFECTS; i++)
		if (what < CC_EFFECT_NREPAIRS && (cc_effects[i]->repairs & (1u << what)) && cc_effects[i]->repair)
			return cc_effects[i]->repair(run, what, target, err);
	return cc_err_set(err, EINVAL, "repair %d: no effect makes it", (int)what);
}

/* ---- the loops --------------------------------------------------------------- */

static int undo_from(struct cc_effect_run *run, int last, bool only_applied, struct cc_err *err)
{
	int rc = 0;

	for (int i = last; i >= 0; i--) {
		struct cc_err step = CC_ERR_INIT;
		struct cc_carve *c;

		if (only_applied && !run->applied[i])
			continue;
		/* A release asks the recorded carve what it holds; a failed
		 * apply undoes what it applied (a shared-pool container's is in
		 * no ledger). */
		if (!only_applied) {
			c = effect_carve_of(run, &step);
			if (!c) {
				if (rc == 0)
					*err = step;
				return -1;
			}
			if (!cc_effects[i]->held(c))
				continue;
		}
		if (cc_effects[i]->undo(run, &step) < 0 && rc == 0) {
			*err = step;
			rc = -1;
		}
	}
	return rc;
}

int cc_effects_plan(struct cc_effect_run *run, struct cc_carve *c, struct cc_err *err)
{
	bool joined = false;

	memset(run->planned, 0, sizeof(run->planned));
	for (int i = 0; i < CC_NEFFECTS; i++) {
		if (!cc_effects[i]->wanted(run, c))
			continue;
		if (!cc_effects[i]->sets_mode && !joined && c->exclusive) {
			/* A dry run's ledger is read-only: the carve stays out. */
			if (run->ctx->dry_run)
				return 0;
			if (cc_ledger_add(run->ledger, c, err) < 0)
				return -1;
			joined = true;
		}
		if (cc_effects[i]->plan(run, c, err) < 0)
			return -1;
		run->planned[i] = true;
	}
	return joined || run->ctx->dry_run || !c->exclusive ? 0 : cc_ledger_add(run->ledger, c, err);
}

/* Apply failed at effect `failed`: those planned after it take their
 * journal back, so the commit that follows records only what was done. */
static void unplan_after(struct cc_effect_run *run, int failed)
{
	for (int i = CC_NEFFECTS - 1; i > failed; i--)
		if (run->planned[i] && cc_effects[i]->unplan)
			cc_effects[i]->unplan(run);
}

int cc_effects_apply(struct cc_effect_run *run, bool *undo_failed, struct cc_err *err)
{
	*undo_failed = false;
	memset(run->applied, 0, sizeof(run->applied));
	for (int i = 0; i < CC_NEFFECTS; i++) {
		struct cc_err undo = CC_ERR_INIT;

		if (!run->planned[i])
			continue;
		/* Marked first where a failed apply needs its undo (every undo
		 * is computed, so undoing what was not done writes nothing). */
		run->applied[i] = cc_effects[i]->undo_failed_apply;
		if (cc_effects[i]->apply(run, err) == 0) {
			run->applied[i] = true;
			continue;
		}
		unplan_after(run, i);
		if (undo_from(run, i, true, &undo) < 0) {
			char first[CC_ERR_MSG_MAX];

			*undo_failed = true;
			snprintf(first, sizeof(first), "%s", err->msg);
			snprintf(err->msg, sizeof(err->msg), "%.500s; undoing it failed too (%.480s)", first, undo.msg);
		}
		return -1;
	}
	return 0;
}

void cc_effects_fini(struct cc_effect_run *run)
{
	for (int i = 0; i < CC_NEFFECTS; i++)
		cc_effects[i]->fini(run);
	memset(run->planned, 0, sizeof(run->planned));
}

int cc_effects_undo(struct cc_effect_run *run, struct cc_err *err)
{
	return undo_from(run, CC_NEFFECTS - 1, false, err);
}
