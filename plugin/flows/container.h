/* corecarve: the container lifecycle the OCI hook drives.
 *
 * One direction: read the world (state, config.json, /proc, policy,
 * topology) -> lock the ledger -> decide (allocator) -> apply (cgroup) ->
 * record (ledger commit) -> unlock.  Any failure before the commit rolls
 * the kernel back, so the ledger and the kernel agree. */
#ifndef CC_CONTAINER_H
#define CC_CONTAINER_H

#include <stdio.h>

#include "alloc.h"
#include "cgroup.h"
#include "ctx.h"
#include "error.h"
#include "grant.h"
#include "ledger.h"
#include "oci.h"
#include "policy.h"
#include "tenant.h"
#include "power.h"
#include "root.h"

/* Outcome of a create, for messages and tests. */
struct cc_create_result {
	bool carved;             /* false: no annotation, or already carved */
	bool would_carve;        /* ctx->dry_run: the decision is made, nothing written */
	char cgroup[PATH_MAX];
	char mode[32];
	struct cc_decision decision;
	struct cc_power_report power; /* the class's power settings: what was written, warnings */
};

/* createRuntime / prestart. */
int cc_container_create(const struct cc_ctx *ctx, const struct cc_oci_state *st,
			struct cc_create_result *res, struct cc_err *err);

/* What to carve, once the caller knows the cgroup and the request. */
struct cc_carve_spec {
	const char *id;     /* ledger id: the container id, "exec:<pid>" */
	const char *kind;   /* ledger kind: "container" or "exec" */
	const char *cgroup; /* existing cgroup, relative to the cgroup2 mount */
	const struct cc_request *req;
	/* A container's runtime and limit (tenant.h): its class must admit it
	 * (cc_admit_*) before anything is decided.  NULL for `exec --carve`,
	 * which the node's admin runs. */
	const struct cc_tenant *tenant;
	/* A grant the container names (grant.h; NULL: none): the carve is
	 * exactly its cores, and gives them back to it when it goes.
	 * `placed`: req came from a placement annotation beside it. */
	const struct cc_grant_ref *grant;
	bool placed;
};

/* The carve itself, for any kind (the hook's create and `corecarve exec
 * --carve`): load policy and topology, lock the ledger, gc, allocate,
 * apply with the journal, record.  res->cgroup is spec->cgroup. */
int cc_carve_create(const struct cc_ctx *ctx, const struct cc_carve_spec *spec,
		    struct cc_create_result *res, struct cc_err *err);

/* poststop (and the end of a carved exec): undo what was recorded for
 * `id` when its carve is of `kind` ("container", "exec"); an unknown id,
 * or one held by another kind's carve, is success with nothing released.
 * A failed undo keeps the carve as `releasing` (-1, err says so). */
int cc_container_release(const struct cc_ctx *ctx, const char *id, const char *kind, struct cc_err *err);

/* Kill this process with SIGKILL when ctx->fault names `step` (tests of
 * crash consistency; see docs/design.md). */
void cc_fault_point(const struct cc_ctx *ctx, const char *step);

#endif
