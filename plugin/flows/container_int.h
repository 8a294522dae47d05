/* corecarve: what the container flow's files share, private to them.
 *
 *   container.c     the orchestration: a container's request, a carve's
 *                   steps (policy, topology, the ledger locked and gc'd,
 *                   decide, journal, apply, commit), the release
 *   container_gc.c  the stale carves the ledger's gc finds, taken out of
 *                   the kernel before their CPUs are handed out again
 *   container_grant.c  a container carved from a grant (grant.h) */
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

/* The request a grant makes: its class (a placement annotation beside it,
 * `placed`, must name the same), the allocator held to its cores. */
int grant_request(const struct cc_grant_ref *g, struct cc_request *req, bool placed, struct cc_err *err);
/* The CPUs a carve of whole cores `cpus` counts under `smt` (one per
 * core under isolate, every thread under full): what a grant's request
 * asks (grant_shape) and what a grant not yet carved counts toward its
 * class's caps (admit_caps), so both count as the carve will. */
int grant_counted(const struct cc_topo *t, hwloc_const_bitmap_t cpus, enum cc_smt smt);
/* Before the lock: the grant's CPUs are whole online cores of `t` in an
 * exclusive class, and req->cpus what carving them all takes (a placement
 * annotation's cpus must say the same). */
int grant_shape(const struct cc_topo *t, const struct cc_policy *p, const struct cc_grant_ref *g,
		struct cc_request *req, bool placed, struct cc_err *err);
/* Under the lock: the ledger holds grant g with g's token, and it leaves
 * the ledger (in memory; the carve's commit writes both).  EPERM for a
 * grant the ledger lacks (forged, freed), EBUSY for one another container
 * carves now. */
int grant_take(struct cc_ledger *l, const struct cc_grant_ref *g, const char *container, struct cc_err *err);

#endif
