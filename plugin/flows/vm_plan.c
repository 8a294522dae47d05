/* corecarve: the VM pinning decision (vm.h).  Pure: it reads the world it
 * is given and writes nothing. */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

/* ---- small helpers ------------------------------------------------------------ */

static void entry_fini(struct cc_vm_entry *e)
{
	for (int i = 0; i < e->npins; i++) {
		hwloc_bitmap_free(e->pins[i].from);
		hwloc_bitmap_free(e->pins[i].to);
	}
	for (int i = 0; i < e->ncg; i++) {
		hwloc_bitmap_free(e->cg[i].from);
		hwloc_bitmap_free(e->cg[i].to);
	}
	free(e->pins);
	free(e->cg);
	hwloc_bitmap_free(e->emulator);
	cc_carve_fini(&e->carve);
}

void cc_vm_plan_fini(struct cc_vm_plan *plan)
{
	for (int i = 0; i < plan->n; i++)
		entry_fini(&plan->e[i]);
	free(plan->e);
	memset(plan, 0, sizeof(*plan));
}

static struct cc_vm_entry *entry_add(struct cc_vm_plan *plan, const char *name, enum cc_vm_state state)
{
	struct cc_vm_entry *e = realloc(plan->e, (size_t)(plan->n + 1) * sizeof(*e));

	if (!e)
		return NULL;
	plan->e = e;
	e = &plan->e[plan->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->id, sizeof(e->id), "vm:%s", name);
	e->state = state;
	cc_carve_init(&e->carve);
	e->emulator = hwloc_bitmap_alloc();
	if (!e->carve.cpus || !e->carve.parked || !e->carve.mems || !e->carve.changes || !e->emulator)
		return NULL;
	return e;
}

static int pin_add(struct cc_vm_entry *e, pid_t tid, int vcpu, hwloc_const_bitmap_t from, hwloc_const_bitmap_t to)
{
	struct cc_vm_pin *p;

	if (hwloc_bitmap_isequal(from, to))
		return 0;
	p = realloc(e->pins, (size_t)(e->npins + 1) * sizeof(*p));
	if (!p)
		return -1;
	e->pins = p;
	p = &e->pins[e->npins++];
	p->tid = tid;
	p->vcpu = vcpu;
	p->from = hwloc_bitmap_dup(from);
	p->to = hwloc_bitmap_dup(to);
	return p->from && p->to ? 0 : -1;
}

static int cg_add(struct cc_vm_entry *e, const char *cgroup, const char *file, hwloc_const_bitmap_t from,
		  hwloc_const_bitmap_t to)
{
	struct cc_vm_cgwrite *w;

	if (hwloc_bitmap_isequal(from, to))
		return 0;
	w = realloc(e->cg, (size_t)(e->ncg + 1) * sizeof(*w));
	if (!w)
		return -1;
	e->cg = w;
	w = &e->cg[e->ncg++];
	snprintf(w->cgroup, sizeof(w->cgroup), "%s", cgroup);
	snprintf(w->file, sizeof(w->file), "%s", file);
	w->from = hwloc_bitmap_dup(from);
	w->to = hwloc_bitmap_dup(to);
	return w->from && w->to ? 0 : -1;
}

static int copy_carve(struct cc_carve *dst, const struct cc_carve *src)
{
	json_t *changes = json_deep_copy(src->changes);

	if (!changes)
		return -1;
	snprintf(dst->id, sizeof(dst->id), "%s", src->id);
	snprintf(dst->kind, sizeof(dst->kind), "%s", src->kind);
	snprintf(dst->cgroup, sizeof(dst->cgroup), "%s", src->cgroup);
	snprintf(dst->class_name, sizeof(dst->class_name), "%s", src->class_name);
	snprintf(dst->core_class, sizeof(dst->core_class), "%s", src->core_class);
	snprintf(dst->mode, sizeof(dst->mode), "%s", src->mode);
	hwloc_bitmap_copy(dst->cpus, src->cpus);
	hwloc_bitmap_copy(dst->parked, src->parked);
	hwloc_bitmap_copy(dst->mems, src->mems);
	dst->exclusive = src->exclusive;
	dst->steer_irqs = src->steer_irqs;
	dst->created = src->created;
	json_decref(dst->changes);
	dst->changes = changes;
	return 0;
}

static const struct cc_vm_proc *find_proc(const struct cc_vm_world *w, const char *name)
{
	for (int i = 0; i < w->nprocs; i++)
		if (!strcmp(w->procs[i].name, name))
			return &w->procs[i];
	return NULL;
}

static const struct cc_vm_vcpu_rec *rec_vcpu(const struct cc_vm_rec *rec, int vcpu)
{
	for (int i = 0; rec && i < rec->nvcpus; i++)
		if (rec->vcpus[i].vcpu == vcpu)
			return &rec->vcpus[i];
	return NULL;
}

/* The "cpuset" record of a carve for cgroup/file, or NULL. */
static json_t *cg_record(json_t *changes, const char *cgroup, const char *file)
{
	size_t i;
	json_t *o;

	json_array_foreach(changes, i, o)
	{
		const char *t = json_string_value(json_object_get(o, "type"));
		const char *cg = json_string_value(json_object_get(o, "cgroup"));
		const char *f = json_string_value(json_object_get(o, "file"));

		if (t && cg && f && !strcmp(t, "cpuset") && !strcmp(cg, cgroup) && !strcmp(f, file))
			return o;
	}
	return NULL;
}

/* Record what a libvirt cgroup file held before corecarve first wrote it
 * (kept from an earlier carve of the same VM when there is one), then plan
 * the write. */
static int cg_plan(struct cc_vm_entry *e, json_t *prev_changes, const char *cgroup, const char *file,
		   hwloc_const_bitmap_t from, hwloc_const_bitmap_t to)
{
	if (hwloc_bitmap_isequal(from, to))
		return 0;
	if (!cg_record(e->carve.changes, cgroup, file)) {
		json_t *prev = prev_changes ? cg_record(prev_changes, cgroup, file) : NULL;
		_cleanup_free_ char *old = prev ? strdup(json_string_value(json_object_get(prev, "old")) ?: "")
						: cc_cpulist_format(from);

		if (!old || json_array_append_new(e->carve.changes, json_pack("{s:s, s:s, s:s, s:s}", "type", "cpuset",
									     "cgroup", cgroup, "file", file, "old",
									     old)) < 0)
			return -1;
	}
	return cg_add(e, cgroup, file, from, to);
}

/* Names of the core classes `set` touches, "a, b"; returns how many. */
static int classes_of(const struct cc_topo *t, hwloc_const_bitmap_t set, char *buf, size_t len)
{
	int n = 0;
	size_t o = 0;

	buf[0] = '\0';
	for (int k = 0; k < t->nclasses; k++) {
		if (!hwloc_bitmap_intersects(set, t->classes[k].cpus))
			continue;
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", n ? ", " : "", t->classes[k].name);
		n++;
	}
	return n;
}

static void note_classes(const struct cc_topo *t, struct cc_vm_entry *e, const struct cc_vm_proc *p)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();

	if (!all)
		return;
	for (int i = 0; i < p->nvcpus; i++)
		hwloc_bitmap_or(all, all, p->vcpus[i].affinity);
	e->nclasses_now = classes_of(t, all, e->classes_now, sizeof(e->classes_now));
}

int cc_vm_threads(const struct cc_vm_spec *spec, const struct cc_policy *p)
{
	const struct cc_pclass *pc = spec->threads_set ? NULL : cc_policy_class(p, spec->class_name);

	if (spec->threads_set)
		return spec->threads;
	return pc && pc->smt == CC_SMT_FULL ? 2 : 1;
}

/* ---- the vCPU map ------------------------------------------------------------- */

int cc_vm_map(const struct cc_topo *t, hwloc_const_bitmap_t cpus, int threads, int nvcpus, int *map,
	      struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t left = hwloc_bitmap_dup(cpus);
	int n = 0, cpu;

	if (!left)
		return cc_err_sys(err, ENOMEM, "vCPU map");
	if (hwloc_bitmap_weight(cpus) != nvcpus)
		return cc_err_set(err, EINVAL, "%d CPUs for %d vCPUs", hwloc_bitmap_weight(cpus), nvcpus);
	while ((cpu = hwloc_bitmap_first(left)) >= 0) {
		int pu = cc_topo_pu_index(t, cpu);
		const struct cc_core *core = pu >= 0 && t->pus[pu].core >= 0 ? &t->cores[t->pus[pu].core] : NULL;
		_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
		int c;

		if (!mine)
			return cc_err_sys(err, ENOMEM, "vCPU map");
		if (threads == 1 || !core) {
			hwloc_bitmap_only(mine, (unsigned)cpu);
		} else {
			hwloc_bitmap_and(mine, core->pus, left);
			/* The guest is told vCPUs 2k and 2k+1 are SMT siblings:
			 * they must be the two threads of one host core. */
			if (hwloc_bitmap_weight(mine) != 2 || core->npus != 2) {
				_cleanup_free_ char *pus = cc_cpulist_format(core->pus);

				return cc_err_set(err, EINVAL,
						  "threads: 2 needs both threads of each core; the carve has %d of the %d of core %d (CPUs %s)",
						  hwloc_bitmap_weight(mine), core->npus, core->id, pus ? pus : "?");
			}
		}
		if (threads == 2 && !core)
			return cc_err_set(err, EINVAL, "threads: 2: CPU %d has no core in the topology", cpu);
		hwloc_bitmap_foreach_begin(c, mine)
		{
			map[n++] = c;
		}
		hwloc_bitmap_foreach_end();
		hwloc_bitmap_andnot(left, left, mine);
	}
	return 0;
}

/* ---- the plan ----------------------------------------------------------------- */

struct planner {
	const struct cc_vm_world *w;
	struct cc_vm_plan *plan;
	hwloc_bitmap_t taken;    /* every carve's CPUs as the plan goes */
	hwloc_bitmap_t reserved; /* the policy's reserved, online */
	/* Records of the ledger's VM carves, by carve index (NULL: not a VM). */
	struct cc_vm_rec *recs;
	bool *have_rec;
	int *keep;               /* carve index -> KEEP entry index, -1 */
	int *recarve;            /* carve index -> released for a new carve of the same VM */
};

static int carve_of(const struct planner *pl, const char *name)
{
	char id[CC_VM_NAME_MAX + 3];

	snprintf(id, sizeof(id), "vm:%s", name);
	for (int i = 0; i < pl->w->ncarves; i++)
		if (pl->have_rec[i] && !strcmp(pl->w->carves[i]->id, id))
			return i;
	return -1;
}

static void take(hwloc_bitmap_t taken, const struct cc_carve *c, bool add)
{
	if (add) {
		hwloc_bitmap_or(taken, taken, c->cpus);
		hwloc_bitmap_or(taken, taken, c->parked);
	} else {
		hwloc_bitmap_andnot(taken, taken, c->cpus);
		hwloc_bitmap_andnot(taken, taken, c->parked);
	}
}

/* Why the carve `c` no longer serves the VM, or "" when it does. */
static void carve_fit(const struct cc_carve *c, const struct cc_vm_rec *rec, const struct cc_vm_spec *spec,
		      const struct cc_policy *pol, const struct cc_vm_proc *p, char *why, size_t len)
{
	why[0] = '\0';
	if (!spec) {
		snprintf(why, len, "not in the VM list any more");
		return;
	}
	if (!p) {
		snprintf(why, len, "process %d is gone", (int)rec->pid);
		return;
	}
	if (p->pid != rec->pid) {
		snprintf(why, len, "process %d is gone (the VM runs as %d now)", (int)rec->pid, (int)p->pid);
		return;
	}
	if (p->start != rec->start) {
		snprintf(why, len, "process %d is gone (the pid is another process now)", (int)rec->pid);
		return;
	}
	if (strcmp(c->class_name, spec->class_name)) {
		snprintf(why, len, "class changed from %s to %s", c->class_name, spec->class_name);
		return;
	}
	if (rec->threads != cc_vm_threads(spec, pol)) {
		snprintf(why, len, "threads changed from %d to %d", rec->threads, cc_vm_threads(spec, pol));
		return;
	}
	if (rec->nvcpus != p->nvcpus) {
		snprintf(why, len, "%d vCPUs now, %d when carved", p->nvcpus, rec->nvcpus);
		return;
	}
	for (int i = 0; i < p->nvcpus; i++)
		if (!rec_vcpu(rec, p->vcpus[i].vcpu)) {
			snprintf(why, len, "vCPU %d was not there when carved", p->vcpus[i].vcpu);
			return;
		}
}

/* Phase 1: every VM carve of the ledger is kept or released. */
static int ledger_carves(struct planner *pl, struct cc_err *err)
{
	const struct cc_vm_world *w = pl->w;

	for (int i = 0; i < w->ncarves; i++) {
		const struct cc_carve *c = w->carves[i];
		const char *name;
		const struct cc_vm_spec *spec;
		const struct cc_vm_proc *p;
		struct cc_vm_entry *e;
		char why[256];

		pl->keep[i] = -1;
		if (!pl->have_rec[i])
			continue;
		name = cc_vm_id_name(c->id);
		spec = cc_vmconfig_find(w->cfg, name);
		p = find_proc(w, name);
		carve_fit(c, &pl->recs[i], spec, w->policy, p, why, sizeof(why));
		e = entry_add(pl->plan, name, why[0] ? CC_VM_RELEASE : CC_VM_KEEP);
		if (!e || copy_carve(&e->carve, c) < 0)
			return cc_err_sys(err, ENOMEM, "VM plan");
		e->spec = spec;
		snprintf(e->why, sizeof(e->why), "%s", why);
		/* The process the carve was made for, when it still runs. */
		if (p && p->pid == pl->recs[i].pid && p->start == pl->recs[i].start)
			e->proc = p;
		if (e->state == CC_VM_KEEP) {
			pl->keep[i] = pl->plan->n - 1;
			continue;
		}
		take(pl->taken, c, false);
		/* Released for a new carve of the same process: the new one
		 * pins its threads; nothing is restored in between. */
		if (spec && e->proc) {
			pl->recarve[i] = 1;
			e->proc = NULL;
		}
	}
	return 0;
}

static int pin_vcpus(struct cc_vm_entry *e, const struct cc_vm_proc *p, const int *map, hwloc_const_bitmap_t mems,
		     json_t *prev_changes)
{
	_cleanup_bitmap_ hwloc_bitmap_t one = hwloc_bitmap_alloc();

	if (!one)
		return -1;
	for (int i = 0; i < p->nvcpus; i++) {
		const struct cc_vm_thread *t = &p->vcpus[i];

		hwloc_bitmap_only(one, (unsigned)map[i]);
		/* libvirt's cgroup first: a thread cannot be pinned outside
		 * its cgroup's cpuset, and libvirt would put it back there. */
		if (t->cgroup[0]) {
			if (cg_plan(e, prev_changes, t->cgroup, "cpuset.cpus", t->cg_cpus, one) < 0)
				return -1;
			if (mems && !hwloc_bitmap_iszero(mems) &&
			    cg_plan(e, prev_changes, t->cgroup, "cpuset.mems", t->cg_mems, mems) < 0)
				return -1;
		}
		if (pin_add(e, t->tid, t->vcpu, t->affinity, one) < 0)
			return -1;
	}
	return 0;
}

static int keep_entry(struct cc_vm_entry *e, const struct cc_vm_rec *rec)
{
	_cleanup_free_ int *map = calloc((size_t)e->proc->nvcpus, sizeof(*map));

	if (!map)
		return -1;
	for (int i = 0; i < e->proc->nvcpus; i++)
		map[i] = rec_vcpu(rec, e->proc->vcpus[i].vcpu)->cpu;
	return pin_vcpus(e, e->proc, map, e->carve.mems, NULL);
}

/* Nothing changes for a refused VM; `e2` says why. */
static void refuse(struct cc_vm_entry *e, const struct cc_err *e2)
{
	e->state = CC_VM_REFUSED;
	e->code = e2->code ? e2->code : EINVAL;
	memcpy(e->reason, e2->msg, sizeof(e->reason));
}

/* The main thread's affinity: what the emulator threads had. */
static hwloc_const_bitmap_t main_affinity(const struct cc_vm_proc *p)
{
	for (int i = 0; i < p->nemu; i++)
		if (p->emu[i].tid == p->pid)
			return p->emu[i].affinity;
	return p->nemu ? p->emu[0].affinity : NULL;
}

/* A shared class: every vCPU on the class's shared pool, nothing carved,
 * nothing recorded.  -1: out of memory. */
static int shared_entry(struct cc_vm_entry *e, const struct cc_vm_proc *p, const struct cc_decision *d)
{
	e->state = CC_VM_SHARED;
	snprintf(e->carve.class_name, sizeof(e->carve.class_name), "%s", d->class_name);
	snprintf(e->carve.core_class, sizeof(e->carve.core_class), "%s", d->core_class);
	hwloc_bitmap_copy(e->carve.cpus, d->cpus);
	for (int i = 0; i < p->nvcpus; i++) {
		const struct cc_vm_thread *t = &p->vcpus[i];

		if ((t->cgroup[0] && cg_add(e, t->cgroup, "cpuset.cpus", t->cg_cpus, d->cpus) < 0) ||
		    pin_add(e, t->tid, t->vcpu, t->affinity, d->cpus) < 0)
			return -1;
	}
	return 0;
}

/* The VM's carve, as the ledger will hold it, from the decision. */
static void carve_from(struct cc_vm_entry *e, const struct cc_decision *d)
{
	snprintf(e->carve.id, sizeof(e->carve.id), "%s", e->id);
	snprintf(e->carve.kind, sizeof(e->carve.kind), "vm");
	snprintf(e->carve.class_name, sizeof(e->carve.class_name), "%s", d->class_name);
	snprintf(e->carve.core_class, sizeof(e->carve.core_class), "%s", d->core_class);
	snprintf(e->carve.mode, sizeof(e->carve.mode), "affinity");
	hwloc_bitmap_copy(e->carve.cpus, d->cpus);
	hwloc_bitmap_copy(e->carve.parked, d->parked);
	hwloc_bitmap_copy(e->carve.mems, d->mems);
	e->carve.exclusive = true;
	e->carve.steer_irqs = d->irq == CC_IRQ_STEER_AWAY;
}

/* The carve's VM record, appended to its changes: the process, each
 * vCPU's CPU in `map` and the affinity to give back at release (a
 * replanned VM keeps the first plan's, from `prev_rec`).  -1: out of
 * memory. */
static int record_vm(struct cc_vm_entry *e, const struct cc_vm_proc *p, const struct cc_vm_rec *prev_rec,
		     const int *map, int threads)
{
	struct cc_vm_rec rec = { 0 };
	json_t *rj;
	int rc = -1;

	rec.pid = p->pid;
	rec.start = p->start;
	rec.threads = threads;
	rec.vcpus = calloc((size_t)p->nvcpus, sizeof(*rec.vcpus));
	rec.emulator_old = prev_rec ? hwloc_bitmap_dup(prev_rec->emulator_old)
				    : main_affinity(p) ? hwloc_bitmap_dup(main_affinity(p)) : hwloc_bitmap_alloc();
	if (!rec.vcpus || !rec.emulator_old)
		goto out;
	for (int i = 0; i < p->nvcpus; i++) {
		const struct cc_vm_vcpu_rec *old = rec_vcpu(prev_rec, p->vcpus[i].vcpu);

		rec.vcpus[i] = (struct cc_vm_vcpu_rec){ p->vcpus[i].vcpu, p->vcpus[i].tid, map[i],
							hwloc_bitmap_dup(old ? old->old : p->vcpus[i].affinity) };
		rec.nvcpus++;
		if (!rec.vcpus[i].old)
			goto out;
	}
	rj = cc_vm_rec_json(&rec);
	if (rj && json_array_append_new(e->carve.changes, rj) == 0)
		rc = 0;
out:
	cc_vm_rec_fini(&rec);
	return rc;
}

static int new_entry(struct planner *pl, struct cc_vm_entry *e, const struct cc_vm_spec *spec,
		     const struct cc_vm_proc *p, int prev, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(pl->w->policy, spec->class_name);
	const struct cc_vm_rec *prev_rec = prev >= 0 ? &pl->recs[prev] : NULL;
	json_t *prev_changes = prev >= 0 ? pl->w->carves[prev]->changes : NULL;
	struct cc_request req = { .cpus = p->nvcpus, .has_smt = true, .has_memory = true };
	struct cc_err e2 = CC_ERR_INIT;
	struct cc_decision d;
	_cleanup_free_ int *map = NULL;
	int threads = cc_vm_threads(spec, pl->w->policy);
	int rc = -1;

	if (!pc) {
		cc_err_set(&e2, EINVAL, "%s: unknown placement class \"%s\"", spec->class_where, spec->class_name);
		refuse(e, &e2);
		return 0;
	}
	if (spec->emulator == CC_VM_EMU_RESERVED && hwloc_bitmap_iszero(pl->reserved)) {
		cc_err_set(&e2, EINVAL, "VM %s: emulator: reserved, but the policy (%s) reserves no online CPU",
			   spec->name, pl->w->policy->source);
		refuse(e, &e2);
		return 0;
	}
	snprintf(req.class_name, sizeof(req.class_name), "%s", spec->class_name);
	req.smt = threads == 2 ? CC_SMT_FULL : CC_SMT_ISOLATE;
	req.memory = spec->memory;
	if (cc_allocate(pl->w->topo, pl->w->policy, pl->taken, &req, &d, &e2) < 0) {
		cc_err_prefix(&e2, "VM %s (%d vCPU%s, threads: %d)", spec->name, p->nvcpus, p->nvcpus == 1 ? "" : "s",
			      threads);
		refuse(e, &e2);
		return 0;
	}
	e->nwarnings = d.nwarnings;
	memcpy(e->warnings, d.warnings, sizeof(e->warnings));
	if (!d.exclusive) {
		if (shared_entry(e, p, &d) < 0)
			goto nomem;
		cc_decision_fini(&d);
		return 0;
	}
	map = calloc((size_t)p->nvcpus, sizeof(*map));
	if (!map)
		goto nomem;
	if (cc_vm_map(pl->w->topo, d.cpus, threads, p->nvcpus, map, &e2) < 0) {
		cc_err_prefix(&e2, "VM %s", spec->name);
		refuse(e, &e2);
		cc_decision_fini(&d);
		return 0;
	}
	carve_from(e, &d);
	if (record_vm(e, p, prev_rec, map, threads) < 0 || pin_vcpus(e, p, map, d.mems, prev_changes) < 0)
		goto nomem;
	take(pl->taken, &e->carve, true);
	rc = 0;
	goto out;
nomem:
	cc_err_sys(err, ENOMEM, "VM plan");
out:
	cc_decision_fini(&d);
	return rc;
}

/* Phase 2: the VM list, in its order. */
static int listed_vms(struct planner *pl, struct cc_err *err)
{
	const struct cc_vm_world *w = pl->w;

	for (int i = 0; w->cfg && i < w->cfg->n; i++) {
		const struct cc_vm_spec *spec = &w->cfg->vms[i];
		const struct cc_vm_proc *p = find_proc(w, spec->name);
		int c = carve_of(pl, spec->name);
		struct cc_vm_entry *e;

		if (c >= 0 && pl->keep[c] >= 0) {
			e = &pl->plan->e[pl->keep[c]];
			note_classes(w->topo, e, e->proc);
			if (keep_entry(e, &pl->recs[c]) < 0)
				return cc_err_sys(err, ENOMEM, "VM plan");
			continue;
		}
		e = entry_add(pl->plan, spec->name, p ? CC_VM_NEW : CC_VM_NOT_RUNNING);
		if (!e)
			return cc_err_sys(err, ENOMEM, "VM plan");
		e->spec = spec;
		if (!p) {
			snprintf(e->why, sizeof(e->why), "not running");
			continue;
		}
		e->proc = p;
		note_classes(w->topo, e, p);
		if (new_entry(pl, e, spec, p, c >= 0 && pl->recarve[c] ? c : -1, err) < 0)
			return -1;
		/* Its old carve goes and no new one comes: the threads must not
		 * stay on CPUs that are free for others now. */
		if (e->state == CC_VM_REFUSED && c >= 0 && pl->recarve[c])
			for (int k = 0; k < pl->plan->n; k++)
				if (pl->plan->e[k].state == CC_VM_RELEASE && !strcmp(pl->plan->e[k].id, e->id))
					pl->plan->e[k].proc = p;
	}
	return 0;
}

/* `set` minus the carves, else the uncarved CPUs. */
static void restore_target(hwloc_const_bitmap_t set, hwloc_const_bitmap_t taken, hwloc_const_bitmap_t uncarved,
			   hwloc_bitmap_t out)
{
	if (set)
		hwloc_bitmap_andnot(out, set, taken);
	if (!set || hwloc_bitmap_iszero(out))
		hwloc_bitmap_copy(out, uncarved);
}

/* A VM still running whose carve goes because it left the list: its
 * threads get their old affinity back (less what is carved now), its
 * libvirt cgroups their old values. */
static int restore_entry(struct planner *pl, struct cc_vm_entry *e, const struct cc_vm_rec *rec,
			 hwloc_const_bitmap_t uncarved)
{
	const struct cc_vm_proc *p = e->proc;
	_cleanup_bitmap_ hwloc_bitmap_t to = hwloc_bitmap_alloc();
	size_t k;
	json_t *o;

	if (!to)
		return -1;
	for (int i = 0; i < p->nvcpus; i++) {
		const struct cc_vm_vcpu_rec *r = rec_vcpu(rec, p->vcpus[i].vcpu);

		restore_target(r ? r->old : NULL, pl->taken, uncarved, to);
		if (pin_add(e, p->vcpus[i].tid, p->vcpus[i].vcpu, p->vcpus[i].affinity, to) < 0)
			return -1;
	}
	restore_target(rec->emulator_old, pl->taken, uncarved, to);
	for (int i = 0; i < p->nemu; i++)
		if (!p->emu[i].foreign && pin_add(e, p->emu[i].tid, -1, p->emu[i].affinity, to) < 0)
			return -1;
	/* Cgroup files go back to what they held, for the cgroups the
	 * threads are still in (the others went with their threads). */
	json_array_foreach(e->carve.changes, k, o)
	{
		const char *t = json_string_value(json_object_get(o, "type"));
		const char *cg = json_string_value(json_object_get(o, "cgroup"));
		const char *f = json_string_value(json_object_get(o, "file"));
		const char *old = json_string_value(json_object_get(o, "old"));
		_cleanup_bitmap_ hwloc_bitmap_t oldset = hwloc_bitmap_alloc();
		struct cc_err ignored = CC_ERR_INIT;

		if (!oldset)
			return -1;
		if (!t || strcmp(t, "cpuset") || !cg || !f || !old || cc_cpulist_parse(old, oldset, f, &ignored) < 0)
			continue;
		for (int i = 0; i < p->nemu + p->nvcpus; i++) {
			const struct cc_vm_thread *th = i < p->nemu ? &p->emu[i] : &p->vcpus[i - p->nemu];

			if (!th->cgroup[0] || strcmp(th->cgroup, cg))
				continue;
			if (cg_add(e, cg, f, !strcmp(f, "cpuset.cpus") ? th->cg_cpus : th->cg_mems, oldset) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

static int emulator_pins(struct cc_vm_entry *e, json_t *prev_changes)
{
	const struct cc_vm_proc *p = e->proc;

	for (int i = 0; i < p->nemu; i++) {
		const struct cc_vm_thread *t = &p->emu[i];

		if (t->foreign)
			continue;
		if (t->cgroup[0]) {
			if (cg_plan(e, prev_changes, t->cgroup, "cpuset.cpus", t->cg_cpus, e->emulator) < 0)
				return -1;
			/* Guest RAM is allocated by the emulator thread: libvirt's
			 * numatune sets the emulator cgroup's mems for the same reason. */
			if (e->state != CC_VM_SHARED && !hwloc_bitmap_iszero(e->carve.mems) &&
			    cg_plan(e, prev_changes, t->cgroup, "cpuset.mems", t->cg_mems, e->carve.mems) < 0)
				return -1;
		}
		if (pin_add(e, t->tid, -1, t->affinity, e->emulator) < 0)
			return -1;
	}
	return 0;
}

/* Phase 3: with every carve settled, where emulator threads go, and what
 * VMs that left the list get back. */
static int settle(struct planner *pl, struct cc_err *err)
{
	const struct cc_vm_world *w = pl->w;
	_cleanup_bitmap_ hwloc_bitmap_t uncarved = hwloc_bitmap_alloc();

	if (!uncarved)
		return cc_err_sys(err, ENOMEM, "VM plan");
	hwloc_bitmap_andnot(uncarved, w->topo->online, pl->taken);
	for (int i = 0; i < pl->plan->n; i++) {
		struct cc_vm_entry *e = &pl->plan->e[i];

		if (e->state == CC_VM_RELEASE && e->proc) {
			int c = -1;

			for (int k = 0; k < w->ncarves; k++)
				if (pl->have_rec[k] && !strcmp(w->carves[k]->id, e->id))
					c = k;
			if (c >= 0 && restore_entry(pl, e, &pl->recs[c], uncarved) < 0)
				return cc_err_sys(err, ENOMEM, "VM plan");
			continue;
		}
		if ((e->state != CC_VM_NEW && e->state != CC_VM_KEEP && e->state != CC_VM_SHARED) || !e->proc)
			continue;
		hwloc_bitmap_copy(e->emulator, e->spec->emulator == CC_VM_EMU_RESERVED ? pl->reserved : uncarved);
		if (hwloc_bitmap_iszero(e->emulator)) {
			if (e->nwarnings < CC_WARN_MAX)
				snprintf(e->warnings[e->nwarnings++], sizeof(e->warnings[0]),
					 "every CPU is carved: the emulator threads are left where they are");
			continue;
		}
		{
			int c = e->state == CC_VM_NEW ? carve_of(pl, e->name) : -1;

			if (emulator_pins(e, c >= 0 && pl->recarve[c] ? w->carves[c]->changes : NULL) < 0)
				return cc_err_sys(err, ENOMEM, "VM plan");
		}
	}
	return 0;
}

int cc_vm_plan(const struct cc_vm_world *w, struct cc_vm_plan *plan, struct cc_err *err)
{
	struct planner pl = { .w = w, .plan = plan };
	size_t n = (size_t)(w->ncarves ? w->ncarves : 1);
	int rc = -1;

	memset(plan, 0, sizeof(*plan));
	pl.taken = hwloc_bitmap_alloc();
	pl.reserved = cc_policy_reserved(w->policy, w->topo);
	pl.recs = calloc(n, sizeof(*pl.recs));
	pl.have_rec = calloc(n, sizeof(*pl.have_rec));
	pl.keep = calloc(n, sizeof(*pl.keep));
	pl.recarve = calloc(n, sizeof(*pl.recarve));
	if (!pl.taken || !pl.reserved || !pl.recs || !pl.have_rec || !pl.keep || !pl.recarve) {
		cc_err_sys(err, ENOMEM, "VM plan");
		goto out;
	}
	hwloc_bitmap_and(pl.reserved, pl.reserved, w->topo->online);
	for (int i = 0; i < w->ncarves; i++) {
		const struct cc_carve *c = w->carves[i];

		take(pl.taken, c, true);
		if (strcmp(c->kind, "vm"))
			continue;
		if (!cc_vm_id_name(c->id)) {
			cc_err_set(err, EINVAL, "ledger: carve \"%s\" of kind vm: the id is not \"vm:<name>\"", c->id);
			goto out;
		}
		if (cc_vm_rec_parse(c, &pl.recs[i], err) < 0)
			goto out;
		pl.have_rec[i] = true;
	}
	if (ledger_carves(&pl, err) < 0 || listed_vms(&pl, err) < 0 || settle(&pl, err) < 0)
		goto out;
	for (int i = 0; i < plan->n; i++) {
		const struct cc_vm_entry *e = &plan->e[i];

		plan->nrefused += e->state == CC_VM_REFUSED;
		plan->nchanges += (e->state == CC_VM_NEW || e->state == CC_VM_RELEASE) + e->npins + e->ncg;
	}
	rc = 0;
out:
	for (int i = 0; pl.recs && i < w->ncarves; i++)
		cc_vm_rec_fini(&pl.recs[i]);
	free(pl.recs);
	free(pl.have_rec);
	free(pl.keep);
	free(pl.recarve);
	hwloc_bitmap_free(pl.taken);
	hwloc_bitmap_free(pl.reserved);
	if (rc < 0)
		cc_vm_plan_fini(plan);
	return rc;
}
