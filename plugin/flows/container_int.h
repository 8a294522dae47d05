/* corecarve: what the container flow's files share, private to them.
 *
 *   container.c     the orchestration: a container's request, a carve's
 *                   steps (policy, topology, the ledger locked and gc'd,
 *                   decide, journal, apply, commit), the release
 *   container_gc.c  the stale carves the ledger's gc finds, taken out of
 *                   the kernel before their CPUs are handed out again */
#ifndef CC_CONTAINER_INT_H
#define CC_CONTAINER_INT_H

#include "container.h"

/* The ledger's gc (cc_ledger_gc) with a hook's release: each carve whose
 * cgroup is gone, or kept as releasing, is undone (cc_carve_undo) and
 * dropped; one whose undo fails again stays releasing, and is logged.
 * Returns what cc_ledger_gc returns. */
int container_gc(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, struct cc_err *err);
/* ctx->dry_run: what that gc would take up, one line each to ctx->log,
 * nothing changed.  The number, or -1. */
int container_gc_dry(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, struct cc_err *err);

#endif
