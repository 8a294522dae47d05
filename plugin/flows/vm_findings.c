/* corecarve: what is wrong with the VMs as they run (vm.h), for `vm
 * status` and the audit.  Pure, like the plan. */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

const char *cc_vm_finding_name(enum cc_vm_finding_kind k)
{
	switch (k) {
	case CC_VM_MIXED_CLASSES:
		return "VM_MIXED_CLASSES";
	case CC_VM_SHARED_CPU:
		return "VM_SHARED_CPU";
	case CC_VM_DRIFT:
		return "VM_DRIFT";
	case CC_VM_GONE:
		return "VM_GONE";
	}
	return "?";
}

struct list {
	struct cc_vm_finding *f;
	int n;
};

static int add(struct list *l, enum cc_vm_finding_kind kind, const char *vm, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int add(struct list *l, enum cc_vm_finding_kind kind, const char *vm, const char *fmt, ...)
{
	struct cc_vm_finding *f = realloc(l->f, (size_t)(l->n + 1) * sizeof(*f));
	va_list ap;

	if (!f)
		return -1;
	l->f = f;
	f = &l->f[l->n++];
	f->kind = kind;
	snprintf(f->vm, sizeof(f->vm), "%s", vm);
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return 0;
}

static const struct cc_carve *vm_carve(const struct cc_vm_world *w, const char *name)
{
	char id[CC_VM_NAME_MAX + 3];

	snprintf(id, sizeof(id), "vm:%s", name);
	for (int i = 0; i < w->ncarves; i++)
		if (!strcmp(w->carves[i]->id, id))
			return w->carves[i];
	return NULL;
}

static const struct cc_vm_vcpu_rec *rec_vcpu(const struct cc_vm_rec *rec, int vcpu)
{
	for (int i = 0; i < rec->nvcpus; i++)
		if (rec->vcpus[i].vcpu == vcpu)
			return &rec->vcpus[i];
	return NULL;
}

/* vCPUs of one VM that may run on more than one core class. */
static int mixed(const struct cc_vm_world *w, const struct cc_vm_proc *p, struct list *l)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	_cleanup_free_ char *cpus = NULL;
	char names[256];
	size_t o = 0;
	int n = 0;

	if (!all)
		return -1;
	for (int i = 0; i < p->nvcpus; i++)
		hwloc_bitmap_or(all, all, p->vcpus[i].affinity);
	hwloc_bitmap_and(all, all, w->topo->online);
	names[0] = '\0';
	for (int k = 0; k < w->topo->nclasses; k++) {
		if (!hwloc_bitmap_intersects(all, w->topo->classes[k].cpus))
			continue;
		if (o < sizeof(names))
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", n ? " and " : "",
					      w->topo->classes[k].name);
		n++;
	}
	if (n < 2)
		return 0;
	cpus = cc_cpulist_format(all);
	if (p->nvcpus == 1)
		return add(l, CC_VM_MIXED_CLASSES, p->name, "VM %s: its vCPU may run on %s CPUs (%s)", p->name, names,
			   cpus ? cpus : "?");
	return add(l, CC_VM_MIXED_CLASSES, p->name, "VM %s: its %d vCPUs may run on %s CPUs (%s)", p->name,
		   p->nvcpus, names, cpus ? cpus : "?");
}

/* A carved VM's vCPUs against the ledger's map; a VM carve whose process
 * is gone. */
static int drift(const struct cc_vm_world *w, const struct cc_vm_proc *p, const struct cc_carve *c,
		 const struct cc_vm_rec *rec, struct list *l)
{
	if (p->pid != rec->pid || p->start != rec->start)
		return 0;
	for (int i = 0; i < p->nvcpus; i++) {
		const struct cc_vm_thread *t = &p->vcpus[i];
		const struct cc_vm_vcpu_rec *r = rec_vcpu(rec, t->vcpu);
		_cleanup_free_ char *now = cc_cpulist_format(t->affinity);

		if (!r) {
			if (add(l, CC_VM_DRIFT, p->name, "VM %s: vCPU %d (tid %d) is not in its carve %s", p->name, t->vcpu,
				(int)t->tid, c->id) < 0)
				return -1;
			continue;
		}
		if (hwloc_bitmap_weight(t->affinity) == 1 && hwloc_bitmap_isset(t->affinity, (unsigned)r->cpu))
			continue;
		if (add(l, CC_VM_DRIFT, p->name, "VM %s: vCPU %d (tid %d) may run on %s; the ledger pins it to %d",
			p->name, t->vcpu, (int)t->tid, now ? now : "?", r->cpu) < 0)
			return -1;
	}
	(void)w;
	return 0;
}

/* vCPUs on CPUs that another carve holds, and two vCPUs pinned to one CPU. */
static int shared(const struct cc_vm_world *w, struct list *l)
{
	for (int a = 0; a < w->nprocs; a++) {
		const struct cc_vm_proc *p = &w->procs[a];
		const struct cc_carve *own = vm_carve(w, p->name);

		for (int i = 0; i < p->nvcpus; i++) {
			const struct cc_vm_thread *t = &p->vcpus[i];
			int cpu = hwloc_bitmap_weight(t->affinity) == 1 ? hwloc_bitmap_first(t->affinity) : -1;

			for (int k = 0; k < w->ncarves; k++) {
				const struct cc_carve *c = w->carves[k];
				_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
				_cleanup_free_ char *list = NULL;

				if (!both)
					return -1;
				if (c == own)
					continue;
				hwloc_bitmap_or(both, c->cpus, c->parked);
				hwloc_bitmap_and(both, both, t->affinity);
				if (hwloc_bitmap_iszero(both))
					continue;
				list = cc_cpulist_format(both);
				if (add(l, CC_VM_SHARED_CPU, p->name, "VM %s: vCPU %d may run on CPUs %s, carved for %s %s",
					p->name, t->vcpu, list ? list : "?", c->kind, c->id) < 0)
					return -1;
				break;
			}
			if (cpu < 0)
				continue;
			/* Pairs are reported once, by the first of the two. */
			for (int b = a; b < w->nprocs; b++) {
				const struct cc_vm_proc *q = &w->procs[b];

				for (int j = b == a ? i + 1 : 0; j < q->nvcpus; j++) {
					const struct cc_vm_thread *u = &q->vcpus[j];

					if (hwloc_bitmap_weight(u->affinity) != 1 || hwloc_bitmap_first(u->affinity) != cpu)
						continue;
					if (add(l, CC_VM_SHARED_CPU, p->name, "VM %s vCPU %d and VM %s vCPU %d are both pinned to CPU %d",
						p->name, t->vcpu, q->name, u->vcpu, cpu) < 0)
						return -1;
				}
			}
		}
	}
	return 0;
}

int cc_vm_findings(const struct cc_vm_world *w, struct cc_vm_finding **out, int *n, struct cc_err *err)
{
	struct list l = { 0 };

	*out = NULL;
	*n = 0;
	for (int i = 0; i < w->nprocs; i++)
		if (mixed(w, &w->procs[i], &l) < 0)
			goto nomem;
	for (int k = 0; k < w->ncarves; k++) {
		const struct cc_carve *c = w->carves[k];
		const char *name = cc_vm_id_name(c->id);
		const struct cc_vm_proc *p = NULL;
		struct cc_vm_rec rec;
		int r = 0;

		if (strcmp(c->kind, "vm") || !name)
			continue;
		if (cc_vm_rec_parse(c, &rec, err) < 0) {
			free(l.f);
			return -1;
		}
		for (int i = 0; i < w->nprocs; i++)
			if (!strcmp(w->procs[i].name, name))
				p = &w->procs[i];
		if (!p || p->pid != rec.pid || p->start != rec.start) {
			_cleanup_bitmap_ hwloc_bitmap_t held = hwloc_bitmap_alloc();
			_cleanup_free_ char *list = NULL;

			if (held)
				hwloc_bitmap_or(held, c->cpus, c->parked);
			list = held ? cc_cpulist_format(held) : NULL;
			r = add(&l, CC_VM_GONE, name, "VM %s: process %d of carve %s is gone; vm reconcile releases CPUs %s",
				name, (int)rec.pid, c->id, list ? list : "?");
		} else
			r = drift(w, p, c, &rec, &l);
		cc_vm_rec_fini(&rec);
		if (r < 0)
			goto nomem;
	}
	if (shared(w, &l) < 0)
		goto nomem;
	*out = l.f;
	*n = l.n;
	return 0;
nomem:
	free(l.f);
	return cc_err_sys(err, ENOMEM, "VM findings");
}
