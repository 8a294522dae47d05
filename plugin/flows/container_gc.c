/* corecarve: the stale carves a hook's gc takes out before it decides
 * (container_int.h): the ledger says which are dead (ledger_gc.c), the
 * effects undo them (effect_release.c), and this is the release between
 * the two — what a hook does with each, and what it logs. */
#define _GNU_SOURCE
#include "container_int.h"

#include <stdio.h>
#include <string.h>

#include "effect.h"

struct gc_arg {
	const struct cc_ctx *ctx;
	struct cc_cg *cg;
	struct cc_ledger *l;
};

static int gc_release(struct cc_carve *c, void *arg)
{
	struct gc_arg *g = arg;
	struct cc_err e = CC_ERR_INIT;

	/* The undo may load every carve; c, a handle, stays (ledger.h). */
	if (cc_carve_undo(g->ctx, g->cg, g->l, c->id, &e) < 0) {
		if (g->ctx->log)
			fprintf(g->ctx->log, "corecarve: releasing stale carve %s: %s (kept as releasing)\n", c->id, e.msg);
		return -1;
	}
	/* A stale exec carve's cgroup is still there, empty (its corecarve
	 * exec was killed): its cpuset.cpus would keep the kernel from making
	 * those CPUs exclusive for a sibling (6.12 refuses an exclusive set
	 * that covers a sibling's cpuset.cpus), so it goes too. */
	cc_err_clear(&e);
	if (!strcmp(c->kind, "exec") && c->cgroup[0] && cc_cg_rmdir(g->cg, c->cgroup, &e) < 0 && g->ctx->log)
		fprintf(g->ctx->log, "corecarve: removing the cgroup of stale carve %s: %s\n", c->id, e.msg);
	return 0;
}

static void gc_would(const struct cc_carve *c, void *arg)
{
	const struct cc_ctx *ctx = arg;

	if (ctx->log)
		fprintf(ctx->log, "corecarve: dry run: gc would release %s carve %s (cgroup %s %s)\n", c->kind, c->id,
			c->cgroup[0] ? c->cgroup : "(none)", c->releasing ? "kept as releasing, gone or empty" : "gone");
}

int container_gc_dry(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, struct cc_err *err)
{
	/* The ledger asks, the cgroup layer reads. */
	const struct cc_ledger_probe probe = { cc_cg_gc_probe, cg };

	return cc_ledger_gc_due(l, &probe, gc_would, (void *)ctx, err);
}

int container_gc(const struct cc_ctx *ctx, struct cc_cg *cg, struct cc_ledger *l, struct cc_err *err)
{
	const struct cc_ledger_probe probe = { cc_cg_gc_probe, cg };
	struct gc_arg gc = { ctx, cg, l };

	return cc_ledger_gc(l, &probe, gc_release, &gc, err);
}
