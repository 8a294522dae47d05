/* corecarve: `vm reconcile` and `vm status` — read the world, lock the
 * ledger, plan (vm_plan.c), apply (vm.h). */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"
#include "irq.h"
#include "power.h"

void cc_vm_result_fini(struct cc_vm_result *res)
{
	cc_vm_plan_fini(&res->plan);
	for (int i = 0; i < res->nprocs; i++)
		cc_vm_proc_fini(&res->procs[i]);
	free(res->procs);
	cc_topo_free(res->topo);
	cc_policy_free(res->policy);
	cc_vmconfig_fini(&res->cfg);
	memset(res, 0, sizeof(*res));
}

/* ---- reading the world ----------------------------------------------------------- */

static struct cc_vm_proc *proc_slot(struct cc_vm_result *res)
{
	struct cc_vm_proc *p = realloc(res->procs, (size_t)(res->nprocs + 1) * sizeof(*p));

	if (!p)
		return NULL;
	res->procs = p;
	memset(&p[res->nprocs], 0, sizeof(*p));
	return &p[res->nprocs];
}

/* The VMs of the list, and the processes of VM carves whose VM left it
 * (their threads get their affinity back when they still run).  `whys`
 * (cfg.n entries) receives why a listed VM is not running. */
static int find_all(const struct cc_ctx *ctx, struct cc_ledger *l, struct cc_vm_result *res, char (*whys)[256],
		    struct cc_err *err)
{
	for (int i = 0; i < res->cfg.n; i++) {
		struct cc_vm_proc *p = proc_slot(res);
		int r;

		if (!p)
			return cc_err_sys(err, ENOMEM, "VMs");
		r = cc_vm_find(ctx->root, &res->cfg.vms[i], p, whys[i], sizeof(whys[i]), err);
		if (r < 0)
			return -1;
		res->nprocs += r;
	}
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		const char *name = cc_vm_id_name(c->id);
		struct cc_vm_rec rec;
		struct cc_vm_proc *p;
		int r;

		if (strcmp(c->kind, "vm") || !name || cc_vmconfig_find(&res->cfg, name))
			continue;
		if (cc_vm_rec_parse(c, &rec, err) < 0)
			return -1;
		p = proc_slot(res);
		r = p ? cc_vm_read_proc(ctx->root, name, rec.pid, rec.start, p, err) : -1;
		if (!p)
			cc_err_sys(err, ENOMEM, "VMs");
		cc_vm_rec_fini(&rec);
		if (r < 0)
			return -1;
		res->nprocs += r;
	}
	return 0;
}

static int load(const struct cc_ctx *ctx, const struct cc_vm_opts *opts, bool lock, struct cc_vm_result *res,
		struct cc_ledger **lp, char (**whys)[256], struct cc_err *err)
{
	struct cc_topo_source src = { .kind = CC_TOPO_HOST, .root = ctx->root };

	res->policy = cc_policy_load_in(ctx->root, ctx->policy_path, err);
	if (!res->policy)
		return -1;
	if (cc_vmconfig_load(opts->config, ctx->policy_path, &res->cfg, err) < 0 ||
	    cc_policy_check_vms(res->policy, &res->cfg, err) < 0)
		return -1;
	src.overrides = res->policy->overrides;
	src.noverrides = res->policy->noverrides;
	res->topo = cc_topo_load(&src, err);
	if (!res->topo)
		return -1;
	/* Locked before the processes are read: what is found and what the
	 * ledger says are one moment's view. */
	*lp = cc_ledger_open_as(ctx->state_dir, lock ? CC_LEDGER_WRITE : CC_LEDGER_READ, ctx->lock, err);
	if (!*lp)
		return -1;
	cc_ledger_set_fault(*lp, ctx->fault);
	*whys = calloc((size_t)(res->cfg.n ? res->cfg.n : 1), sizeof(**whys));
	if (!*whys)
		return cc_err_sys(err, ENOMEM, "VMs");
	return find_all(ctx, *lp, res, *whys, err);
}

static void world_of(const struct cc_vm_result *res, const struct cc_ledger *l, struct cc_vm_world *w)
{
	*w = (struct cc_vm_world){ .topo = res->topo, .policy = res->policy, .carves = cc_ledger_carves(l),
				   .ncarves = cc_ledger_ncarves(l), .cfg = &res->cfg, .procs = res->procs,
				   .nprocs = res->nprocs };
}

/* ---- writing --------------------------------------------------------------------- */

struct writer {
	const struct cc_ctx *ctx;
	struct cc_cg cg;
	bool cg_open;
};

static void writer_fini(struct writer *wr)
{
	if (wr->cg_open)
		cc_cg_close(&wr->cg);
}

static int cg_ready(struct writer *wr, struct cc_err *err)
{
	if (wr->cg_open)
		return 0;
	if (cc_cg_open(&wr->cg, wr->ctx->root, err) < 0)
		return -1;
	wr->cg.trace = wr->ctx->verbose ? wr->ctx->log : NULL;
	wr->cg.fault = wr->ctx->fault;
	wr->cg_open = true;
	return 0;
}

/* Put the affinities of pins[0..n) back. */
static void unpin(const struct cc_vm_entry *e, int n)
{
	struct cc_err ignored = CC_ERR_INIT;

	while (n-- > 0)
		cc_affinity_set(e->pins[n].tid, e->pins[n].from, &ignored);
}

/* One entry's cgroup writes, then its pins.  Strict: the first failure
 * puts back what this entry wrote.  Best effort (releases): every write is
 * tried, the first failure is reported.  An emulator thread that exited
 * meanwhile (QEMU's worker threads come and go) is no failure. */
static int write_entry(struct writer *wr, const struct cc_vm_entry *e, bool best_effort, struct cc_err *err)
{
	struct cc_cg_undo undo = { 0 };
	struct cc_err step = CC_ERR_INIT;
	int rc = 0, i;

	for (i = 0; i < e->ncg; i++) {
		_cleanup_free_ char *v = cc_cpulist_format(e->cg[i].to);

		cc_err_clear(&step);
		if (!v)
			rc = cc_err_sys(&step, ENOMEM, "cgroup");
		else if (cg_ready(wr, &step) < 0 ||
			 cc_cg_write(&wr->cg, e->cg[i].cgroup, e->cg[i].file, v, best_effort ? NULL : &undo, &step) < 0)
			rc = -1;
		if (rc < 0 && !best_effort)
			goto fail;
		if (rc < 0 && !cc_err_isset(err))
			*err = step;
	}
	for (i = 0; i < e->npins; i++) {
		cc_err_clear(&step);
		if (cc_affinity_set(e->pins[i].tid, e->pins[i].to, &step) == 0)
			continue;
		if (step.code == ESRCH && (e->pins[i].vcpu < 0 || best_effort))
			continue;
		rc = -1;
		if (!best_effort)
			goto fail;
		if (!cc_err_isset(err))
			*err = step;
	}
	if (wr->ctx->verbose && wr->ctx->log && (e->npins || e->ncg))
		fprintf(wr->ctx->log, "corecarve: %s: %d threads pinned, %d cgroup files written\n", e->id, e->npins,
			e->ncg);
	cc_cg_undo_fini(&undo);
	return rc;
fail:
	unpin(e, i);
	*err = step;
	if (wr->cg_open) {
		struct cc_err rb = CC_ERR_INIT;

		if (cc_cg_rollback(&wr->cg, &undo, &rb) < 0) {
			cc_cg_undo_fini(&undo);
			return cc_err_prefix(err, "VM %s: putting back what was written failed (%s)", e->name, rb.msg);
		}
	}
	cc_cg_undo_fini(&undo);
	return cc_err_prefix(err, "VM %s: put back what was written", e->name);
}

/* Steer IRQs off the steer-away carves again (vm carves included): what
 * the hook does after a container's carve. */
static int steer(const struct cc_ctx *ctx, struct cc_ledger *l, const struct cc_vm_result *res, struct cc_vm_result *out,
		 struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(res->policy, res->topo);
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o = { .root = ctx->root, .fb = &fb, .notify = true, .trace = ctx->verbose ? ctx->log : NULL };
	struct cc_irq_report rep;
	int rc;

	if (!reserved)
		return cc_err_sys(err, ENOMEM, "IRQ steering");
	if (cc_irq_fallback_from_topo(res->topo, reserved, &fb, err) < 0)
		return -1;
	rc = cc_irq_reconcile(l, &o, &rep, err);
	cc_irq_fallback_fini(&fb);
	if (rc < 0)
		return cc_err_prefix(err, "steering IRQs off the VM carves");
	snprintf(out->irq_note, sizeof(out->irq_note), "IRQs: %d moved, %d restored, %d unmovable%s%s", rep.moved,
		 rep.restored, rep.unmovable, rep.irqbalance.warning[0] ? "; " : "", rep.irqbalance.warning);
	return 0;
}

/* The first failure is kept; the others VMs are still applied. */
static void keep_first(struct cc_err *err, const struct cc_err *step)
{
	if (!cc_err_isset(err))
		*err = *step;
}

static void power_warnings(const struct cc_ctx *ctx, struct cc_vm_entry *e, const struct cc_power_report *rep)
{
	for (int i = 0; i < rep->msgs.nwarnings; i++) {
		if (e && e->nwarnings < CC_WARN_MAX)
			snprintf(e->warnings[e->nwarnings++], sizeof(e->warnings[0]), "%s", rep->msgs.warnings[i]);
		else if (ctx->log)
			fprintf(ctx->log, "corecarve: %s: warning: %s\n", e ? e->id : "vm", rep->msgs.warnings[i]);
	}
}

/* A new VM carve gets its class's power settings, as a container's does
 * (power.h); only a journal that cannot be written fails. */
static int vm_power(const struct cc_ctx *ctx, struct cc_ledger *l, const struct cc_vm_result *res, struct cc_vm_entry *e,
		    struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(res->policy, e->carve.class_name);
	struct cc_power_report rep;

	if (!pc || cc_power_spec_empty(&pc->power) || !e->carve.exclusive)
		return 0;
	if (cc_power_apply(ctx->root, l, &pc->power, e->id, e->carve.cpus, e->carve.parked,
			   ctx->verbose ? ctx->log : NULL, &rep, err) < 0)
		return cc_err_prefix(err, "VM %s: power settings", e->name);
	power_warnings(ctx, e, &rep);
	return 0;
}

static int apply(const struct cc_ctx *ctx, struct cc_ledger *l, struct cc_vm_result *res, struct cc_err *err)
{
	__attribute__((cleanup(writer_fini))) struct writer wr = { .ctx = ctx };
	bool irqs = false;
	int rc = 0;

	/* Releases first: their CPUs may be what a new carve was given. */
	for (int i = 0; i < res->plan.n; i++) {
		const struct cc_vm_entry *e = &res->plan.e[i];
		struct cc_err step = CC_ERR_INIT;

		if (e->state != CC_VM_RELEASE)
			continue;
		/* The ledger entry goes even when a restore step failed: the
		 * CPUs are no longer the VM's; the error is still reported. */
		if (write_entry(&wr, e, true, &step) < 0)
			keep_first(err, &step), rc = -1;
		irqs |= e->carve.steer_irqs;
		cc_ledger_remove(l, e->id);
		if (cc_ledger_commit(l, &step) < 0)
			return keep_first(err, &step), -1;
		res->applied += 1 + e->npins + e->ncg;
	}
	for (int i = 0; i < res->plan.n; i++) {
		const struct cc_vm_entry *e = &res->plan.e[i];
		struct cc_err step = CC_ERR_INIT;
		struct cc_carve *c;

		if (e->state == CC_VM_NEW) {
			/* Write-ahead: the carve, with what each write will
			 * change, is on disk before the first write. */
			if (cc_ledger_add(l, &e->carve, &step) < 0 || cc_ledger_commit(l, &step) < 0) {
				cc_err_prefix(&step, "VM %s", e->name);
				keep_first(err, &step);
				return -1;
			}
			cc_fault(ctx->fault, "after-journal");
		} else if (e->state == CC_VM_KEEP && (c = cc_ledger_find(l, e->id)) &&
			   !json_equal(c->changes, e->carve.changes)) {
			json_t *copy = json_deep_copy(e->carve.changes);

			if (!copy)
				return cc_err_sys(err, ENOMEM, "VM %s", e->name);
			json_decref(c->changes);
			c->changes = copy;
			if (cc_ledger_commit(l, &step) < 0)
				return keep_first(err, &step), -1;
		} else if (e->state != CC_VM_KEEP && e->state != CC_VM_SHARED) {
			continue;
		}
		if (write_entry(&wr, e, false, &step) < 0) {
			struct cc_err ignored = CC_ERR_INIT;

			keep_first(err, &step);
			rc = -1;
			if (e->state == CC_VM_NEW && cc_ledger_remove(l, e->id))
				cc_ledger_commit(l, &ignored);
			continue;
		}
		if (e->state == CC_VM_NEW && vm_power(ctx, l, res, &res->plan.e[i], &step) < 0)
			keep_first(err, &step), rc = -1;
		if (e->state == CC_VM_NEW)
			irqs |= e->carve.steer_irqs;
		res->applied += (e->state == CC_VM_NEW) + e->npins + e->ncg;
	}
	if (irqs) {
		struct cc_err step = CC_ERR_INIT;

		if (steer(ctx, l, res, res, &step) < 0 || cc_ledger_commit(l, &step) < 0)
			keep_first(err, &step), rc = -1;
	}
	/* Power settings no carve owns any more (released VMs') go back. */
	{
		struct cc_err step = CC_ERR_INIT;
		struct cc_power_report rep;

		if (cc_power_release(ctx->root, l, NULL, ctx->verbose ? ctx->log : NULL, &rep, &step) < 0 ||
		    cc_ledger_commit(l, &step) < 0)
			keep_first(err, &step), rc = -1;
		power_warnings(ctx, NULL, &rep);
	}
	return rc;
}

/* A VM of the list that does not run yet, as if it ran with `nvcpus`
 * vCPUs and the whole node as their affinity, so the plan is the carve its
 * first start gets.  Its record needs live ids: this process's stand in
 * (dry runs only: nothing is ever written to them). */
static int assume(struct cc_vm_result *res, const char *name, int nvcpus, struct cc_err *err)
{
	struct cc_vm_proc *grown, *p;
	bool listed = false;

	for (int i = 0; i < res->nprocs; i++)
		if (!strcmp(res->procs[i].name, name))
			return 0; /* it runs: its real threads decide */
	for (int i = 0; i < res->cfg.n; i++)
		listed |= !strcmp(res->cfg.vms[i].name, name);
	if (!listed)
		return 0; /* the caller says "not in the VM list" */
	if (nvcpus < 1 || nvcpus > CC_VM_MAX_THREADS)
		return cc_err_set(err, EINVAL, "--vcpus: expected 1 to %d, got %d", CC_VM_MAX_THREADS, nvcpus);
	grown = realloc(res->procs, sizeof(*grown) * (size_t)(res->nprocs + 1));
	if (!grown)
		return cc_err_sys(err, ENOMEM, "VMs");
	res->procs = grown;
	p = &res->procs[res->nprocs];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->accel, sizeof(p->accel), "KVM");
	p->pid = getpid();
	p->start = 1;
	p->vcpus = calloc((size_t)nvcpus, sizeof(*p->vcpus));
	if (!p->vcpus)
		return cc_err_sys(err, ENOMEM, "VMs");
	res->nprocs++;
	p->nvcpus = nvcpus;
	for (int i = 0; i < nvcpus; i++) {
		p->vcpus[i].vcpu = i;
		p->vcpus[i].tid = getpid();
		if (!(p->vcpus[i].affinity = hwloc_bitmap_dup(res->topo->online)))
			return cc_err_sys(err, ENOMEM, "VMs");
	}
	return 0;
}

/* ---- the commands ------------------------------------------------------------------- */

int cc_vm_reconcile(const struct cc_ctx *ctx, const struct cc_vm_opts *opts, struct cc_vm_result *res,
		    struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_free_ char (*whys)[256] = NULL;
	struct cc_vm_world w;

	memset(res, 0, sizeof(*res));
	if (!opts->dry_run && !ctx->root->is_host)
		return cc_err_set(err, EPERM, "vm reconcile pins threads of this host: the root must be \"/\" "
					      "(--dry-run shows the plan for another root)");
	if (load(ctx, opts, !opts->dry_run, res, &l, &whys, err) < 0)
		return -1;
	if (opts->dry_run && opts->assume_name && assume(res, opts->assume_name, opts->assume_vcpus, err) < 0)
		return -1;
	world_of(res, l, &w);
	if (cc_vm_plan(&w, &res->plan, err) < 0)
		return -1;
	for (int i = 0; i < res->plan.n; i++) {
		struct cc_vm_entry *e = &res->plan.e[i];

		if (e->state == CC_VM_NOT_RUNNING && e->spec)
			snprintf(e->why, sizeof(e->why), "%s", whys[e->spec - res->cfg.vms]);
	}
	if (opts->dry_run || !res->plan.nchanges)
		return 0;
	return apply(ctx, l, res, err);
}

int cc_vm_status(const struct cc_ctx *ctx, const struct cc_vm_opts *opts, struct cc_vm_result *res,
		 struct cc_vm_finding **findings, int *nfindings, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_free_ char (*whys)[256] = NULL;
	struct cc_vm_world w;

	memset(res, 0, sizeof(*res));
	*findings = NULL;
	*nfindings = 0;
	if (load(ctx, opts, false, res, &l, &whys, err) < 0)
		return -1;
	world_of(res, l, &w);
	if (cc_vm_plan(&w, &res->plan, err) < 0)
		return -1;
	for (int i = 0; i < res->plan.n; i++) {
		struct cc_vm_entry *e = &res->plan.e[i];

		if (e->state == CC_VM_NOT_RUNNING && e->spec)
			snprintf(e->why, sizeof(e->why), "%s", whys[e->spec - res->cfg.vms]);
	}
	return cc_vm_findings(&w, findings, nfindings, err);
}
