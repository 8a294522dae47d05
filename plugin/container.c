#define _GNU_SOURCE
#include "container.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"

void cc_fault_point(const struct cc_ctx *ctx, const char *step)
{
	if (ctx->fault && !strcmp(ctx->fault, step))
		kill(getpid(), SIGKILL);
}

/* The container's name for per-container annotations. */
static const char *container_name(const json_t *annotations)
{
	json_t *v = json_object_get(annotations, "io.kubernetes.container.name");

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int cc_carve_undo(const struct cc_ctx *ctx, struct cc_cg *cg, const struct cc_ledger *l,
		  const struct cc_carve *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t still = hwloc_bitmap_alloc();
	_cleanup_free_ const char **others = calloc((size_t)l->ncarves + 1, sizeof(*others));
	enum cc_cg_mode mode;
	int n = 0;

	(void)ctx;
	if (!still || !others)
		return cc_err_sys(err, ENOMEM, "release");
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *o = &l->carves[i];

		if (o == c || !strcmp(o->id, c->id))
			continue;
		hwloc_bitmap_or(still, still, o->cpus);
		hwloc_bitmap_or(still, still, o->parked);
		if (o->cgroup[0])
			others[n++] = o->cgroup;
	}
	if (!c->cgroup[0])
		return 0;
	if (cc_cg_mode_parse(c->mode, &mode) < 0)
		return cc_err_set(err, EINVAL, "carve %s: unknown mode \"%s\"", c->id, c->mode);
	return cc_cg_release(cg, c->cgroup, mode, c->cpus, c->parked, c->changes, still,
			     others, n, err);
}

struct gc_arg {
	const struct cc_ctx *ctx;
	struct cc_cg *cg;
	struct cc_ledger *l;
};

static int gc_release(struct cc_carve *c, void *arg)
{
	struct gc_arg *g = arg;
	struct cc_err e = CC_ERR_INIT;

	if (cc_carve_undo(g->ctx, g->cg, g->l, c, &e) < 0 && g->ctx->log)
		fprintf(g->ctx->log, "corecarve: releasing stale carve %s: %s\n", c->id, e.msg);
	return 0;
}

static int load_request(const struct cc_oci_state *st, struct cc_oci_config *cfg,
			struct cc_request *req, bool *found, struct cc_err *err)
{
	const json_t *ann = st->annotations;
	const char *key = NULL;
	int r;

	*found = false;
	/* crun hands createRuntime a state without annotations: they are in
	 * the bundle's config.json. */
	if (!json_object_size(ann) && st->bundle[0]) {
		if (cc_oci_config_load(st->bundle, cfg, err) < 0)
			return -1;
		ann = cfg->annotations;
	}
	r = cc_request_lookup(ann, container_name(ann), req, &key, err);
	if (r < 0)
		return -1;
	*found = r == 1;
	return 0;
}

int cc_container_create(const struct cc_ctx *ctx, const struct cc_oci_state *st,
			struct cc_create_result *res, struct cc_err *err)
{
	struct cc_oci_config cfg = { 0 };
	struct cc_request req;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = NULL;
	struct cc_topo_source src = { 0 };
	struct cc_cg cg;
	struct cc_carve carve;
	struct gc_arg gc;
	enum cc_cg_mode mode;
	bool found;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	cc_carve_init(&carve);
	if (load_request(st, &cfg, &req, &found, err) < 0)
		goto out;
	if (!found) {
		rc = 0;
		goto out;
	}
	if (!cfg.annotations && st->bundle[0] && cc_oci_config_load(st->bundle, &cfg, err) < 0)
		goto out;
	if (cc_container_cgroup(ctx->root, st->pid, cfg.cgroups_path, res->cgroup,
				sizeof(res->cgroup), err) < 0)
		goto out;
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		goto out;
	cg.trace = ctx->verbose ? ctx->log : NULL;
	policy = cc_policy_load(ctx->policy_path, err);
	if (!policy)
		goto out;
	if (!cc_policy_class(policy, req.class_name)) {
		cc_err_set(err, EINVAL, "annotation %s: class: unknown placement class \"%s\"",
			   CC_ANNOTATION_KEY, req.class_name);
		goto out;
	}
	src.kind = CC_TOPO_HOST;
	src.root = ctx->root;
	src.overrides = policy->overrides;
	src.noverrides = policy->noverrides;
	topo = cc_topo_load(&src, err);
	if (!topo)
		goto out;

	ledger = cc_ledger_open(ctx->state_dir, err);
	if (!ledger)
		goto out;
	cc_fault_point(ctx, "after-lock");
	if (cc_ledger_find(ledger, st->id)) {
		/* createRuntime and prestart both registered: the first carved. */
		rc = 0;
		goto out;
	}
	gc = (struct gc_arg){ ctx, &cg, ledger };
	if (cc_ledger_gc(ledger, ctx->root, cg.mount, gc_release, &gc, err) < 0)
		goto out;

	taken = cc_ledger_taken(ledger);
	if (!taken) {
		cc_err_sys(err, ENOMEM, "ledger");
		goto out;
	}
	if (cc_allocate(topo, policy, taken, &req, &res->decision, err) < 0) {
		cc_err_prefix(err, "container %s", st->id);
		goto out;
	}
	{
		const struct cc_decision *d = &res->decision;
		_cleanup_bitmap_ hwloc_bitmap_t carved = hwloc_bitmap_dup(taken);
		struct cc_cg_request creq = {
			.cgroup = res->cgroup,
			.cpus = d->cpus,
			.parked = d->parked,
			.mems = d->mems,
			.carved = carved,
			.isolated = d->partition == CC_PART_ISOLATED,
			.drop_quota = d->quota == CC_QUOTA_DROP,
			.exclusive = d->exclusive,
		};

		hwloc_bitmap_or(carved, carved, d->cpus);
		hwloc_bitmap_or(carved, carved, d->parked);
		if (cc_cg_apply(&cg, &creq, &mode, carve.changes, err) < 0)
			goto out;
	}
	cc_fault_point(ctx, "after-cgroup-write");

	if (res->decision.exclusive) {
		snprintf(carve.id, sizeof(carve.id), "%s", st->id);
		snprintf(carve.kind, sizeof(carve.kind), "container");
		snprintf(carve.cgroup, sizeof(carve.cgroup), "%s", res->cgroup);
		snprintf(carve.class_name, sizeof(carve.class_name), "%s", res->decision.class_name);
		snprintf(carve.core_class, sizeof(carve.core_class), "%s", res->decision.core_class);
		snprintf(carve.mode, sizeof(carve.mode), "%s", cc_cg_mode_name(mode));
		hwloc_bitmap_copy(carve.cpus, res->decision.cpus);
		hwloc_bitmap_copy(carve.parked, res->decision.parked);
		hwloc_bitmap_copy(carve.mems, res->decision.mems);
		carve.exclusive = true;
		carve.steer_irqs = res->decision.irq == CC_IRQ_STEER_AWAY;
		carve.created = (long long)time(NULL);
		if (cc_ledger_add(ledger, &carve, err) < 0 ||
		    (cc_fault_point(ctx, "before-ledger-rename"), cc_ledger_commit(ledger, err)) < 0) {
			struct cc_err ignored = CC_ERR_INIT;

			cc_ledger_remove(ledger, carve.id);
			cc_carve_undo(ctx, &cg, ledger, &carve, &ignored);
			goto out;
		}
	}
	snprintf(res->mode, sizeof(res->mode), "%s", cc_cg_mode_name(mode));
	res->carved = res->decision.exclusive;
	rc = 0;
out:
	cc_carve_fini(&carve);
	cc_oci_config_fini(&cfg);
	return rc;
}

int cc_container_release(const struct cc_ctx *ctx, const char *id, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	struct cc_carve *c;
	struct cc_cg cg;
	int rc;

	ledger = cc_ledger_open(ctx->state_dir, err);
	if (!ledger)
		return -1;
	c = cc_ledger_find(ledger, id);
	if (!c)
		return 0;
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		return -1;
	cg.trace = ctx->verbose ? ctx->log : NULL;
	cc_fault_point(ctx, "before-release");
	rc = cc_carve_undo(ctx, &cg, ledger, c, err);
	/* The ledger entry goes even when a restore step failed: the CPUs are
	 * free again (the container is gone) and the audit reports what did
	 * not restore.  The error is still returned. */
	cc_ledger_remove(ledger, id);
	if (cc_ledger_commit(ledger, rc < 0 ? NULL : err) < 0 && rc == 0)
		return -1;
	return rc;
}
