/* corecarve: taking a recorded carve out of the kernel and the ledger —
 * the one path poststop, gc (container_gc.c) and audit --fix (audit_fix.c)
 * share, kept with the effects it runs rather than in the orchestrator,
 * so audit does not include the hook's flow for it. */
#include "effect.h"

#include "fault.h"

int cc_carve_undo(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, const char *id,
		  struct cc_err *err)
{
	struct cc_effect_run run = { .ctx = ctx, .cg = cg, .ledger = l, .id = id };

	return cc_effects_undo(&run, err);
}

/* Take a carve out: undone, then removed from the ledger, or — the undo
 * failed — kept as releasing (its CPUs still taken) for gc and audit --fix
 * to finish.  Committed either way. */
int cc_carve_release(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, const char *id,
		     struct cc_err *err)
{
	struct cc_err commit = CC_ERR_INIT;
	int rc = cc_carve_undo(ctx, cg, l, id, err);

	/* Killed here, the carve stays and gc undoes it again: harmless, as
	 * every value an undo writes is computed from the records. */
	cc_fault(ctx->fault, "before-release-commit");
	/* Taken out without reading the other carves (ledger.h). */
	if (rc == 0 ? cc_ledger_drop(l, id, &commit) < 0 : (cc_ledger_mark_releasing(l, id), false)) {
		*err = commit;
		return -1;
	}
	if (cc_ledger_commit(l, &commit) < 0) {
		if (rc == 0)
			*err = commit;
		return -1;
	}
	if (rc < 0)
		cc_err_prefix(err, "kept as releasing; the next hook or audit --fix retries");
	return rc;
}
