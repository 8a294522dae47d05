/* The VM pinning decision (plugin/flows/vm_plan.c, vm_findings.c, vm_rec.c,
 * vm_xml.c): pure functions of a topology, a policy, the ledger's carves,
 * the VM list and the QEMU processes found.  The processes are written out
 * here as the finder would report them; "applying" a plan for the next run
 * means reporting the affinities the plan set, as the kernel would. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "testlib.h"
#include "vm.h"

/* ---- a small world ---------------------------------------------------------- */

#define MAXP 8
#define MAXC 8

struct world {
	struct cc_topo *topo;
	struct cc_policy *policy;
	struct cc_vmconfig cfg;
	struct cc_vm_proc procs[MAXP];
	int nprocs;
	struct cc_carve carves[MAXC];
	int ncarves;
	const struct cc_carve *handles[MAXC]; /* the carves as the ledger gives them (world_of) */
	struct cc_vm_plan plan;
};

/* The world the VM code reads: the carves as handles, as
 * cc_ledger_carves() gives them. */
static struct cc_vm_world world_of(struct world *w)
{
	for (int i = 0; i < w->ncarves; i++)
		w->handles[i] = &w->carves[i];
	return (struct cc_vm_world){ w->topo, w->policy, w->handles, w->ncarves, &w->cfg, w->procs, w->nprocs };
}

/* The e2e guest's shape: 2 packages x 4 cores x 2 threads, siblings
 * adjacent, one NUMA node per package. */
#define GUEST "pack:2 numa:1 core:4 pu:2"
#define POLICY                                                                                     \
	"reserved: \"0-1,8-9\"\n"                                                                  \
	"minShared: 1\n"                                                                           \
	"classes:\n"                                                                               \
	"  latency: {coreType: performance, smt: isolate, irq: steer-away}\n"                      \
	"  throughput: {coreType: efficient, fallback: performance, smt: full}\n"                  \
	"  background: {coreType: efficient, fallback: performance, exclusive: false, smt: full}\n"

static hwloc_bitmap_t set_of(const char *list)
{
	struct cc_err err = CC_ERR_INIT;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	ck_assert_ptr_nonnull(b);
	ck_assert_msg(cc_cpulist_parse(list, b, "set", &err) == 0, "%s", err.msg);
	return b;
}

static void assert_set(hwloc_const_bitmap_t b, const char *want, const char *what)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	ck_assert_msg(s && !strcmp(s, want), "%s is \"%s\", want \"%s\"", what, s ? s : "?", want);
}

static void world_init(struct world *w, const char *topo, const char *policy, const char *vms)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = topo, .root = root };

	memset(w, 0, sizeof(*w));
	w->policy = cc_policy_parse(policy, strlen(policy), "p.yaml", &err);
	ck_assert_msg(w->policy != NULL, "%s", err.msg);
	w->topo = cc_topo_load(&src, &err);
	ck_assert_msg(w->topo != NULL, "%s", err.msg);
	ck_assert_msg(cc_vmconfig_parse(vms, strlen(vms), "v.yaml", &w->cfg, &err) == 0, "%s", err.msg);
}

static void world_fini(struct world *w)
{
	cc_vm_plan_fini(&w->plan);
	for (int i = 0; i < w->nprocs; i++)
		cc_vm_proc_fini(&w->procs[i]);
	for (int i = 0; i < w->ncarves; i++)
		cc_carve_fini(&w->carves[i]);
	cc_vmconfig_fini(&w->cfg);
	cc_topo_free(w->topo);
	cc_policy_free(w->policy);
}

static struct cc_vm_thread thread(pid_t tid, int vcpu, const char *affinity)
{
	struct cc_vm_thread t = { .tid = tid, .vcpu = vcpu, .affinity = set_of(affinity) };

	return t;
}

/* A QEMU as the finder reports it: vCPU i is thread pid+10+i, and two
 * emulator threads (the main one, tid == pid, and one more). */
static struct cc_vm_proc *add_proc(struct world *w, const char *name, pid_t pid, unsigned long long start,
				   int nvcpus, const char *affinity)
{
	struct cc_vm_proc *p = &w->procs[w->nprocs++];

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->accel, sizeof(p->accel), "TCG");
	p->pid = pid;
	p->start = start;
	p->nvcpus = nvcpus;
	p->vcpus = calloc((size_t)nvcpus, sizeof(*p->vcpus));
	p->nemu = 2;
	p->emu = calloc(2, sizeof(*p->emu));
	ck_assert(p->vcpus && p->emu);
	for (int i = 0; i < nvcpus; i++)
		p->vcpus[i] = thread(pid + 10 + i, i, affinity);
	p->emu[0] = thread(pid, -1, affinity);
	p->emu[1] = thread(pid + 1, -1, affinity);
	return p;
}

static void drop_proc(struct world *w, const char *name)
{
	for (int i = 0; i < w->nprocs; i++) {
		if (strcmp(w->procs[i].name, name))
			continue;
		cc_vm_proc_fini(&w->procs[i]);
		w->procs[i] = w->procs[--w->nprocs];
		return;
	}
	ck_abort_msg("no process %s", name);
}

static void copy_carve(struct cc_carve *d, const struct cc_carve *s)
{
	cc_carve_init(d);
	snprintf(d->id, sizeof(d->id), "%s", s->id);
	snprintf(d->kind, sizeof(d->kind), "%s", s->kind);
	snprintf(d->class_name, sizeof(d->class_name), "%s", s->class_name);
	snprintf(d->core_class, sizeof(d->core_class), "%s", s->core_class);
	snprintf(d->mode, sizeof(d->mode), "%s", s->mode);
	hwloc_bitmap_copy(d->cpus, s->cpus);
	hwloc_bitmap_copy(d->parked, s->parked);
	hwloc_bitmap_copy(d->mems, s->mems);
	d->exclusive = s->exclusive;
	d->steer_irqs = s->steer_irqs;
	json_decref(d->changes);
	d->changes = json_deep_copy(s->changes);
}

static void add_container(struct world *w, const char *id, const char *cpus, const char *parked)
{
	struct cc_carve *c = &w->carves[w->ncarves++];

	cc_carve_init(c);
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->kind, sizeof(c->kind), "container");
	snprintf(c->mode, sizeof(c->mode), "remote-partition");
	snprintf(c->cgroup, sizeof(c->cgroup), "/kubepods/%s", id);
	hwloc_bitmap_free(c->cpus);
	hwloc_bitmap_free(c->parked);
	c->cpus = set_of(cpus);
	c->parked = set_of(parked);
	c->exclusive = true;
}

static void plan(struct world *w)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_vm_world vw = world_of(w);

	cc_vm_plan_fini(&w->plan);
	ck_assert_msg(cc_vm_plan(&vw, &w->plan, &err) == 0, "%s", err.msg);
}

static struct cc_vm_thread *find_thread(struct world *w, pid_t tid)
{
	for (int i = 0; i < w->nprocs; i++) {
		struct cc_vm_proc *p = &w->procs[i];

		for (int k = 0; k < p->nvcpus; k++)
			if (p->vcpus[k].tid == tid)
				return &p->vcpus[k];
		for (int k = 0; k < p->nemu; k++)
			if (p->emu[k].tid == tid)
				return &p->emu[k];
	}
	return NULL;
}

/* What the ledger and the threads look like once the plan is applied. */
static void apply(struct world *w)
{
	for (int i = 0; i < w->plan.n; i++) {
		const struct cc_vm_entry *e = &w->plan.e[i];

		for (int k = 0; k < e->npins; k++) {
			struct cc_vm_thread *t = find_thread(w, e->pins[k].tid);

			if (t)
				hwloc_bitmap_copy(t->affinity, e->pins[k].to);
		}
		for (int k = 0; k < e->ncg; k++)
			for (int p = 0; p < w->nprocs; p++)
				for (int j = -(w->procs[p].nemu); j < w->procs[p].nvcpus; j++) {
					struct cc_vm_thread *t = j < 0 ? &w->procs[p].emu[-j - 1] : &w->procs[p].vcpus[j];

					if (strcmp(t->cgroup, e->cg[k].cgroup))
						continue;
					hwloc_bitmap_copy(strcmp(e->cg[k].file, "cpuset.cpus") ? t->cg_mems : t->cg_cpus,
							  e->cg[k].to);
				}
		if (e->state == CC_VM_RELEASE)
			for (int c = 0; c < w->ncarves; c++)
				if (!strcmp(w->carves[c].id, e->id)) {
					cc_carve_fini(&w->carves[c]);
					w->carves[c] = w->carves[--w->ncarves];
					break;
				}
		if (e->state == CC_VM_KEEP)
			for (int c = 0; c < w->ncarves; c++)
				if (!strcmp(w->carves[c].id, e->id)) {
					cc_carve_fini(&w->carves[c]);
					copy_carve(&w->carves[c], &e->carve);
				}
		if (e->state == CC_VM_NEW)
			copy_carve(&w->carves[w->ncarves++], &e->carve);
	}
}

static const struct cc_vm_entry *entry(const struct world *w, const char *name, enum cc_vm_state state)
{
	for (int i = 0; i < w->plan.n; i++)
		if (!strcmp(w->plan.e[i].name, name) && w->plan.e[i].state == state)
			return &w->plan.e[i];
	ck_abort_msg("no entry %s in state %d", name, (int)state);
	return NULL;
}

static const struct cc_vm_pin *pin_of(const struct cc_vm_entry *e, pid_t tid)
{
	for (int i = 0; i < e->npins; i++)
		if (e->pins[i].tid == tid)
			return &e->pins[i];
	return NULL;
}

/* vCPU -> CPU as recorded in the carve. */
static void assert_map(const struct cc_carve *c, const int *want, int n)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_vm_rec rec;

	ck_assert_msg(cc_vm_rec_parse(c, &rec, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rec.nvcpus, n);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(rec.vcpus[i].vcpu, i);
		ck_assert_msg(rec.vcpus[i].cpu == want[i], "vCPU %d on %d, want %d", i, rec.vcpus[i].cpu, want[i]);
	}
	cc_vm_rec_fini(&rec);
}

/* ---- the vCPU map ------------------------------------------------------------- */

START_TEST(test_map)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t a = set_of("2,4,6,10"), b = set_of("2-5"), c = set_of("3-6");
	int map[4];

	world_init(&w, GUEST, POLICY, "vms: {}\n");
	ck_assert_int_eq(cc_vm_map(w.topo, a, 1, 4, map, &err), 0);
	ck_assert(map[0] == 2 && map[1] == 4 && map[2] == 6 && map[3] == 10);
	/* Pairs of vCPUs on the two threads of one core. */
	ck_assert_int_eq(cc_vm_map(w.topo, b, 2, 4, map, &err), 0);
	ck_assert(map[0] == 2 && map[1] == 3 && map[2] == 4 && map[3] == 5);
	/* 3-6 splits cores 1 and 3: no pair can be given whole. */
	ck_assert_int_eq(cc_vm_map(w.topo, c, 2, 4, map, &err), -1);
	ck_assert_str_eq(err.msg, "threads: 2 needs both threads of each core; the carve has 1 of the 2 of core 1 (CPUs 2-3)");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_vm_map(w.topo, a, 1, 3, map, &err), -1);
	ck_assert_str_eq(err.msg, "4 CPUs for 3 vCPUs");
	world_fini(&w);
}
END_TEST

/* ---- carving ------------------------------------------------------------------- */

START_TEST(test_new_threads1)
{
	struct world w;
	const struct cc_vm_entry *e;
	static const int want[] = { 2, 4, 6, 10 };

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 4, "0-15");
	plan(&w);
	ck_assert_int_eq(w.plan.n, 1);
	e = entry(&w, "t", CC_VM_NEW);
	/* Four isolated cores: node 0 has three free (2, 4, 6; core 0 is
	 * reserved), so the carve takes them and the first free core of node 1. */
	assert_set(e->carve.cpus, "2,4,6,10", "cpus");
	assert_set(e->carve.parked, "3,5,7,11", "parked");
	assert_set(e->carve.mems, "0-1", "mems");
	ck_assert_str_eq(e->carve.id, "vm:t");
	ck_assert_str_eq(e->carve.kind, "vm");
	ck_assert_str_eq(e->carve.mode, "affinity");
	ck_assert_str_eq(e->carve.cgroup, "");
	ck_assert(e->carve.steer_irqs);
	assert_map(&e->carve, want, 4);
	/* Each vCPU thread to its one CPU, the emulator threads to what no
	 * carve holds. */
	for (int i = 0; i < 4; i++) {
		const struct cc_vm_pin *p = pin_of(e, 110 + i);
		char one[8];

		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(p->vcpu, i);
		snprintf(one, sizeof(one), "%d", want[i]);
		assert_set(p->to, one, "vCPU pin");
		assert_set(p->from, "0-15", "vCPU before");
	}
	assert_set(e->emulator, "0-1,8-9,12-15", "emulator");
	assert_set(pin_of(e, 100)->to, "0-1,8-9,12-15", "main thread");
	assert_set(pin_of(e, 101)->to, "0-1,8-9,12-15", "emulator thread");
	ck_assert_int_eq(e->npins, 6);
	ck_assert_int_eq(w.plan.nchanges, 7);
	ck_assert_int_eq(e->nclasses_now, 1);
	ck_assert_int_eq(e->nwarnings, 1);
	ck_assert_msg(strstr(e->warnings[0], "spans nodes 0-1"), "%s", e->warnings[0]);
	world_fini(&w);
}
END_TEST

START_TEST(test_new_threads2)
{
	struct world w;
	const struct cc_vm_entry *e;
	static const int want[] = { 2, 3, 4, 5 };

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency, threads: 2}\n");
	add_proc(&w, "t", 100, 5000, 4, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	/* Two whole cores; vCPUs 0/1 and 2/3 on sibling threads. */
	assert_set(e->carve.cpus, "2-5", "cpus");
	assert_set(e->carve.parked, "", "parked");
	assert_set(e->carve.mems, "0", "mems");
	assert_map(&e->carve, want, 4);
	world_fini(&w);
}
END_TEST

/* Without `threads`, the class's smt decides: full gives SMT pairs,
 * and `threads: 1` overrides it. */
START_TEST(test_threads_from_class)
{
	struct world w;
	const struct cc_vm_entry *e;
	static const int pairs[] = { 2, 3, 4, 5 };

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: throughput}\n  u: {class: throughput, threads: 1}\n");
	ck_assert_int_eq(cc_vm_threads(&w.cfg.vms[0], w.policy), 2);
	ck_assert_int_eq(cc_vm_threads(&w.cfg.vms[1], w.policy), 1);
	add_proc(&w, "t", 100, 5000, 4, "0-15");
	add_proc(&w, "u", 200, 6000, 2, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	assert_map(&e->carve, pairs, 4);
	e = entry(&w, "u", CC_VM_NEW);
	/* Node 0 has one free core left after t: u's two go on node 1. */
	assert_set(e->carve.cpus, "10,12", "u cpus");
	assert_set(e->carve.parked, "11,13", "u parked");
	world_fini(&w);
}
END_TEST

START_TEST(test_odd_vcpus_threads2)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency, threads: 2}\n");
	add_proc(&w, "t", 100, 5000, 3, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_REFUSED);
	ck_assert_int_eq(e->code, EINVAL);
	ck_assert_str_eq(e->reason, "VM t (3 vCPUs, threads: 2): class latency: cpus 3 is not a multiple of 2 "
				    "threads per core; use 2 or 4");
	ck_assert_int_eq(e->npins, 0);
	ck_assert_int_eq(w.plan.nchanges, 0);
	ck_assert_int_eq(w.plan.nrefused, 1);
	world_fini(&w);
}
END_TEST

/* No room: refused with the allocator's numbers, nothing else changes,
 * and a VM after it in the list is still carved. */
START_TEST(test_refused_capacity)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  big: {class: latency}\n  small: {class: latency}\n");
	add_proc(&w, "big", 100, 5000, 7, "0-15");
	add_proc(&w, "small", 200, 6000, 1, "0-15");
	plan(&w);
	e = entry(&w, "big", CC_VM_REFUSED);
	ck_assert_int_eq(e->code, ENOSPC);
	ck_assert_msg(!strncmp(e->reason, "VM big (7 vCPUs, threads: 1): class latency: 7 whole performance cores requested",
			       strlen("VM big (7 vCPUs, threads: 1): class latency: 7 whole performance cores requested")),
		      "%s", e->reason);
	ck_assert_int_eq(e->npins, 0);
	ck_assert_int_eq(e->ncg, 0);
	e = entry(&w, "small", CC_VM_NEW);
	assert_set(e->carve.cpus, "2", "small cpus");
	ck_assert_int_eq(w.plan.nrefused, 1);
	world_fini(&w);
}
END_TEST

/* VMs and containers share one ledger: a VM never gets a container's CPUs. */
START_TEST(test_containers_never_collide)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_container(&w, "c1", "2,4", "3,5");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	/* Node 0 has one free core left: both go on node 1. */
	assert_set(e->carve.cpus, "10,12", "cpus");
	assert_set(e->emulator, "0-1,6-9,14-15", "emulator");
	world_fini(&w);
}
END_TEST

/* ---- later runs ---------------------------------------------------------------- */

START_TEST(test_idempotent)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n  u: {class: latency, threads: 2}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	add_proc(&w, "u", 200, 6000, 2, "0-15");
	plan(&w);
	ck_assert_int_gt(w.plan.nchanges, 0);
	apply(&w);
	plan(&w);
	ck_assert_int_eq(w.plan.nchanges, 0);
	e = entry(&w, "t", CC_VM_KEEP);
	ck_assert_int_eq(e->npins, 0);
	e = entry(&w, "u", CC_VM_KEEP);
	ck_assert_int_eq(e->npins, 0);
	world_fini(&w);
}
END_TEST

/* Something moved vCPU 1: it goes back to the same CPU, nothing else moves. */
START_TEST(test_drift_repinned_stable)
{
	struct world w;
	const struct cc_vm_entry *e;
	struct cc_vm_thread *t;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 4, "0-15");
	plan(&w);
	apply(&w);
	/* Another VM came and a container went meanwhile: the map stays. */
	add_container(&w, "c1", "12", "13");
	t = find_thread(&w, 111);
	hwloc_bitmap_free(t->affinity);
	t->affinity = set_of("0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_KEEP);
	ck_assert_ptr_nonnull(pin_of(e, 111));
	assert_set(pin_of(e, 111)->to, "4", "vCPU 1");
	for (int i = 0; i < 4; i++)
		if (i != 1)
			ck_assert_ptr_null(pin_of(e, 110 + i));
	/* The emulator set lost the container's CPUs. */
	assert_set(pin_of(e, 100)->to, "0-1,8-9,14-15", "main thread");
	ck_assert_int_eq(w.plan.nchanges, 3);
	world_fini(&w);
}
END_TEST

START_TEST(test_gone_released)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	apply(&w);
	drop_proc(&w, "t");
	plan(&w);
	e = entry(&w, "t", CC_VM_RELEASE);
	ck_assert_str_eq(e->why, "process 100 is gone");
	assert_set(e->carve.cpus, "2,4", "released cpus");
	/* Nothing to pin: the threads are gone with the process. */
	ck_assert_int_eq(e->npins, 0);
	entry(&w, "t", CC_VM_NOT_RUNNING);
	ck_assert_int_eq(w.plan.nchanges, 1);
	apply(&w);
	ck_assert_int_eq(w.ncarves, 0);
	plan(&w);
	ck_assert_int_eq(w.plan.nchanges, 0);
	world_fini(&w);
}
END_TEST

/* The pid was reused by another QEMU of the same name (a restart): the
 * old carve goes, the new process gets a fresh one. */
START_TEST(test_restarted)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	apply(&w);
	drop_proc(&w, "t");
	add_proc(&w, "t", 100, 9000, 2, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_RELEASE);
	ck_assert_str_eq(e->why, "process 100 is gone (the pid is another process now)");
	e = entry(&w, "t", CC_VM_NEW);
	/* The released CPUs are free again for it. */
	assert_set(e->carve.cpus, "2,4", "cpus");
	world_fini(&w);
}
END_TEST

/* A VM taken out of the list while it runs: its threads get their old
 * affinity back, less what other carves hold now. */
START_TEST(test_unlisted_restored)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	apply(&w);
	add_container(&w, "c1", "12", "13");
	cc_vmconfig_fini(&w.cfg);
	ck_assert_int_eq(cc_vmconfig_parse("vms: {}\n", 8, "v.yaml", &w.cfg, &(struct cc_err)CC_ERR_INIT), 0);
	plan(&w);
	e = entry(&w, "t", CC_VM_RELEASE);
	ck_assert_str_eq(e->why, "not in the VM list any more");
	ck_assert_ptr_nonnull(e->proc);
	assert_set(pin_of(e, 110)->to, "0-11,14-15", "vCPU 0 back");
	assert_set(pin_of(e, 111)->to, "0-11,14-15", "vCPU 1 back");
	assert_set(pin_of(e, 100)->to, "0-11,14-15", "main thread back");
	world_fini(&w);
}
END_TEST

/* A class change re-carves the running VM: the old carve goes without
 * restoring anything in between, the new one keeps the original
 * affinities for a later release. */
START_TEST(test_recarve_on_class_change)
{
	struct world w;
	const struct cc_vm_entry *e;
	struct cc_vm_rec rec;
	struct cc_err err = CC_ERR_INIT;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	apply(&w);
	cc_vmconfig_fini(&w.cfg);
	ck_assert_int_eq(cc_vmconfig_parse("vms:\n  t: {class: throughput, threads: 2}\n", 41, "v.yaml", &w.cfg, &err), 0);
	plan(&w);
	e = entry(&w, "t", CC_VM_RELEASE);
	ck_assert_str_eq(e->why, "class changed from latency to throughput");
	ck_assert_int_eq(e->npins, 0);
	e = entry(&w, "t", CC_VM_NEW);
	assert_set(e->carve.cpus, "2-3", "cpus");
	ck_assert_str_eq(e->carve.class_name, "throughput");
	ck_assert_int_eq(cc_vm_rec_parse(&e->carve, &rec, &err), 0);
	assert_set(rec.vcpus[0].old, "0-15", "original affinity kept");
	assert_set(rec.emulator_old, "0-15", "original emulator affinity kept");
	cc_vm_rec_fini(&rec);
	world_fini(&w);
}
END_TEST

/* The re-carve is refused (an odd vCPU count for threads: 2): the old
 * carve still goes, and its threads go back where they were, less what
 * other carves hold, not left on CPUs that are free for others now. */
START_TEST(test_recarve_refused_restores)
{
	struct world w;
	const struct cc_vm_entry *e;
	struct cc_err err = CC_ERR_INIT;
	static const char pairs[] = "vms:\n  t: {class: latency, threads: 2}\n";

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_container(&w, "c1", "4", "5");
	add_proc(&w, "t", 100, 5000, 1, "0-15");
	plan(&w);
	apply(&w);
	ck_assert_int_eq(w.ncarves, 2);
	assert_set(w.carves[1].cpus, "2", "t's carve");
	cc_vmconfig_fini(&w.cfg);
	ck_assert_int_eq(cc_vmconfig_parse(pairs, strlen(pairs), "v.yaml", &w.cfg, &err), 0);
	plan(&w);
	e = entry(&w, "t", CC_VM_REFUSED);
	ck_assert_int_eq(e->code, EINVAL);
	e = entry(&w, "t", CC_VM_RELEASE);
	ck_assert_str_eq(e->why, "threads changed from 1 to 2");
	ck_assert_ptr_nonnull(e->proc);
	assert_set(pin_of(e, 110)->to, "0-3,6-15", "vCPU 0 back, less c1");
	assert_set(pin_of(e, 100)->to, "0-3,6-15", "main thread back, less c1");
	world_fini(&w);
}
END_TEST

START_TEST(test_emulator_reserved)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency, emulator: reserved}\n");
	add_proc(&w, "t", 100, 5000, 1, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	assert_set(e->emulator, "0-1,8-9", "emulator");
	world_fini(&w);

	world_init(&w, GUEST, "reserved: \"\"\nclasses:\n  latency: {coreType: performance}\n",
		   "vms:\n  t: {class: latency, emulator: reserved}\n");
	add_proc(&w, "t", 100, 5000, 1, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_REFUSED);
	ck_assert_str_eq(e->reason, "VM t: emulator: reserved, but the policy (p.yaml) reserves no online CPU");
	world_fini(&w);
}
END_TEST

/* A shared class carves nothing: every vCPU runs on the class's pool. */
START_TEST(test_shared_class)
{
	struct world w;
	const struct cc_vm_entry *e;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: background}\n");
	add_container(&w, "c1", "2,4", "3,5");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	plan(&w);
	e = entry(&w, "t", CC_VM_SHARED);
	assert_set(e->carve.cpus, "6-7,10-15", "pool");
	assert_set(pin_of(e, 110)->to, "6-7,10-15", "vCPU 0");
	ck_assert_str_eq(e->carve.id, "");
	apply(&w);
	ck_assert_int_eq(w.ncarves, 1);
	world_fini(&w);
}
END_TEST

/* libvirt's per-vCPU cgroups are set too, and what they held is recorded. */
START_TEST(test_libvirt_cgroups)
{
	struct world w;
	const struct cc_vm_entry *e;
	struct cc_vm_proc *p;
	const char *base = "/machine.slice/machine-qemu\\x2d1\\x2dt.scope/libvirt";
	size_t i;
	json_t *o;
	int records = 0;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency, libvirt: t}\n");
	p = add_proc(&w, "t", 100, 5000, 2, "0-15");
	for (int k = 0; k < 2; k++) {
		snprintf(p->vcpus[k].cgroup, sizeof(p->vcpus[k].cgroup), "%s/vcpu%d", base, k);
		p->vcpus[k].cg_cpus = set_of("");
		p->vcpus[k].cg_mems = set_of("");
	}
	snprintf(p->emu[0].cgroup, sizeof(p->emu[0].cgroup), "%s/emulator", base);
	p->emu[0].cg_cpus = set_of("0-15");
	p->emu[0].cg_mems = set_of("");
	/* An iothread in libvirt's iothread1 cgroup is <iothreadpin>'s. */
	p->emu[1].foreign = true;
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	ck_assert_ptr_null(pin_of(e, 101));
	ck_assert_ptr_nonnull(pin_of(e, 100));
	ck_assert_int_eq(e->ncg, 6);
	ck_assert_str_eq(e->cg[0].file, "cpuset.cpus");
	ck_assert_msg(strstr(e->cg[0].cgroup, "/libvirt/vcpu0"), "%s", e->cg[0].cgroup);
	assert_set(e->cg[0].to, "2", "vcpu0 cpus");
	ck_assert_str_eq(e->cg[1].file, "cpuset.mems");
	assert_set(e->cg[1].to, "0", "vcpu0 mems");
	assert_set(e->cg[2].to, "4", "vcpu1 cpus");
	ck_assert_msg(strstr(e->cg[4].cgroup, "/libvirt/emulator"), "%s", e->cg[4].cgroup);
	assert_set(e->cg[4].to, "0-1,6-15", "emulator cpus");
	assert_set(e->cg[5].to, "0", "emulator mems (guest RAM)");
	json_array_foreach(e->carve.changes, i, o)
		records += !strcmp(json_string_value(json_object_get(o, "type")), "cpuset");
	ck_assert_int_eq(records, 6);
	apply(&w);
	plan(&w);
	ck_assert_int_eq(w.plan.nchanges, 0);
	/* libvirt put vcpu1's cpuset back: written again, recorded once. */
	hwloc_bitmap_zero(w.procs[0].vcpus[1].cg_cpus);
	plan(&w);
	e = entry(&w, "t", CC_VM_KEEP);
	ck_assert_int_eq(e->ncg, 1);
	assert_set(e->cg[0].to, "4", "vcpu1 again");
	ck_assert_int_eq((int)json_array_size(e->carve.changes), 7);
	world_fini(&w);
}
END_TEST

/* ---- mixed classes and the findings -------------------------------------------------- */

#define HYBRID "pack:1 core:8 pu:1 | performance=0-3 efficient=4-7"
#define HPOLICY                                                                                    \
	"reserved: \"0\"\n"                                                                        \
	"classes:\n"                                                                               \
	"  latency: {coreType: performance}\n"                                                     \
	"  batch: {coreType: efficient}\n"

START_TEST(test_mixed_classes)
{
	struct world w;
	struct cc_vm_finding *f = NULL;
	int nf = 0;
	struct cc_err err = CC_ERR_INIT;
	const struct cc_vm_entry *e;
	struct cc_vm_world vw;

	world_init(&w, HYBRID, HPOLICY, "vms:\n  t: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-7");
	vw = world_of(&w);
	ck_assert_int_eq(cc_vm_findings(&vw, &f, &nf, &err), 0);
	ck_assert_int_eq(nf, 1);
	ck_assert_int_eq(f[0].kind, CC_VM_MIXED_CLASSES);
	ck_assert_str_eq(f[0].msg, "VM t: its 2 vCPUs may run on performance and efficient CPUs (0-7)");
	free(f);
	plan(&w);
	e = entry(&w, "t", CC_VM_NEW);
	ck_assert_int_eq(e->nclasses_now, 2);
	ck_assert_str_eq(e->classes_now, "performance, efficient");
	assert_set(e->carve.cpus, "1-2", "cpus");
	ck_assert_str_eq(e->carve.core_class, "performance");
	apply(&w);
	vw = world_of(&w);
	ck_assert_int_eq(cc_vm_findings(&vw, &f, &nf, &err), 0);
	ck_assert_int_eq(nf, 0);
	free(f);
	world_fini(&w);
}
END_TEST

START_TEST(test_findings)
{
	struct world w;
	struct cc_vm_finding *f = NULL;
	int nf = 0;
	struct cc_err err = CC_ERR_INIT;
	struct cc_vm_world vw;
	struct cc_vm_thread *t;
	struct cc_vm_proc *u;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n  gone: {class: latency}\n");
	add_proc(&w, "t", 100, 5000, 2, "0-15");
	add_proc(&w, "gone", 300, 7000, 1, "0-15");
	plan(&w);
	apply(&w);
	drop_proc(&w, "gone");
	/* vCPU 0 of t drifted onto a container's CPU; an unlisted VM u has a
	 * vCPU pinned on t's vCPU 1's CPU. */
	add_container(&w, "c1", "12", "13");
	t = find_thread(&w, 110);
	hwloc_bitmap_free(t->affinity);
	t->affinity = set_of("12");
	u = add_proc(&w, "u", 200, 6000, 1, "4");
	(void)u;
	vw = world_of(&w);
	ck_assert_int_eq(cc_vm_findings(&vw, &f, &nf, &err), 0);
	ck_assert_int_eq(nf, 5);
	ck_assert_int_eq(f[0].kind, CC_VM_DRIFT);
	ck_assert_str_eq(f[0].msg, "VM t: vCPU 0 (tid 110) may run on 12; the ledger pins it to 2");
	ck_assert_int_eq(f[1].kind, CC_VM_GONE);
	ck_assert_str_eq(f[1].msg, "VM gone: process 300 of carve vm:gone is gone; vm reconcile releases CPUs 6-7");
	ck_assert_int_eq(f[2].kind, CC_VM_SHARED_CPU);
	ck_assert_str_eq(f[2].msg, "VM t: vCPU 0 may run on CPUs 12, carved for container c1");
	ck_assert_int_eq(f[3].kind, CC_VM_SHARED_CPU);
	ck_assert_str_eq(f[3].msg, "VM t vCPU 1 and VM u vCPU 0 are both pinned to CPU 4");
	ck_assert_int_eq(f[4].kind, CC_VM_SHARED_CPU);
	ck_assert_str_eq(f[4].msg, "VM u: vCPU 0 may run on CPUs 4, carved for vm vm:t");
	free(f);
	world_fini(&w);
}
END_TEST

/* ---- the ledger record ----------------------------------------------------------------- */

static const struct {
	const char *json;
	const char *msg;
} bad_recs[] = {
	{ "[]", "ledger: vm:t: no \"vm\" record in its changes" },
	{ "[{\"type\":\"vm\",\"start\":1,\"threads\":1,\"vcpus\":[],\"emulator_old\":\"\"}]",
	  "ledger: vm:t.changes[0].pid: expected an integer" },
	{ "[{\"type\":\"vm\",\"pid\":1,\"start\":1,\"threads\":3,\"vcpus\":[],\"emulator_old\":\"\"}]",
	  "ledger: vm:t.changes[0].threads: 3 is out of range" },
	{ "[{\"type\":\"vm\",\"pid\":1,\"start\":1,\"threads\":1,\"vcpus\":[],\"emulator_old\":\"\"}]",
	  "ledger: vm:t.changes[0].vcpus: expected a non-empty array" },
	{ "[{\"type\":\"vm\",\"pid\":1,\"start\":1,\"threads\":1,\"emulator_old\":\"0-\",\"vcpus\":[]}]",
	  "ledger: vm:t.changes[0].emulator_old: invalid cpu list \"0-\": range without an end" },
	{ "[{\"type\":\"vm\",\"pid\":1,\"start\":1,\"threads\":1,\"emulator_old\":\"\","
	  "\"vcpus\":[{\"vcpu\":0,\"tid\":5,\"cpu\":9000,\"old\":\"\"}]}]",
	  "ledger: vm:t.changes[0].vcpus[0].cpu: 9000 is out of range" },
	{ "[{\"type\":\"vm\",\"pid\":1,\"start\":1,\"threads\":1,\"emulator_old\":\"\","
	  "\"vcpus\":[{\"vcpu\":0,\"tid\":5,\"cpu\":2,\"old\":\"\"},{\"vcpu\":0,\"tid\":6,\"cpu\":3,\"old\":\"\"}]}]",
	  "ledger: vm:t.changes[0].vcpus: vCPU 0 twice" },
};

START_TEST(test_rec_bad)
{
	struct cc_carve c;
	struct cc_vm_rec rec;
	struct cc_err err = CC_ERR_INIT;
	json_error_t je;

	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "vm:t");
	json_decref(c.changes);
	c.changes = json_loads(bad_recs[_i].json, 0, &je);
	ck_assert_msg(c.changes != NULL, "%s", je.text);
	ck_assert_int_eq(cc_vm_rec_parse(&c, &rec, &err), -1);
	ck_assert_str_eq(err.msg, bad_recs[_i].msg);
	cc_carve_fini(&c);
}
END_TEST

/* A malformed record in the ledger stops the plan: nothing is guessed. */
START_TEST(test_plan_bad_record)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;
	struct cc_vm_world vw;
	struct cc_carve *c;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency}\n");
	add_container(&w, "vm:t", "2", "3");
	c = &w.carves[0];
	snprintf(c->kind, sizeof(c->kind), "vm");
	vw = world_of(&w);
	ck_assert_int_eq(cc_vm_plan(&vw, &w.plan, &err), -1);
	ck_assert_str_eq(err.msg, "ledger: vm:t: no \"vm\" record in its changes");
	ck_assert_int_eq(w.plan.n, 0);
	world_fini(&w);
}
END_TEST

/* ---- libvirt XML ---------------------------------------------------------------------- */

START_TEST(test_xml)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	world_init(&w, GUEST, POLICY, "vms:\n  t: {class: latency, threads: 2}\n");
	add_proc(&w, "t", 100, 5000, 4, "0-15");
	plan(&w);
	out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(cc_vm_xml(out, entry(&w, "t", CC_VM_NEW), &err), 0);
	fclose(out);
	ck_assert_str_eq(buf, "<!-- corecarve: VM t, class latency on performance CPUs 2-5 (planned, not reserved: "
			      "corecarve vm reconcile reserves it) -->\n"
			      "<vcpu placement='static'>4</vcpu>\n"
			      "<cputune>\n"
			      "  <vcpupin vcpu='0' cpuset='2'/>\n"
			      "  <vcpupin vcpu='1' cpuset='3'/>\n"
			      "  <vcpupin vcpu='2' cpuset='4'/>\n"
			      "  <vcpupin vcpu='3' cpuset='5'/>\n"
			      "  <emulatorpin cpuset='0-1,6-15'/>\n"
			      "</cputune>\n"
			      "<numatune>\n"
			      "  <memory mode='strict' nodeset='0'/>\n"
			      "</numatune>\n"
			      "<cpu>\n"
			      "  <topology sockets='1' dies='1' cores='2' threads='2'/>\n"
			      "</cpu>\n");
	free(buf);
	world_fini(&w);
}
END_TEST

/* vm xml --vcpus: the <cputune> of a VM that has not run yet (libvirt needs
 * it before the first start), planned on a real 2-socket capture with the
 * example VM host policy; without --vcpus such a VM has no carve to show. */
START_TEST(test_xml_before_first_start)
{
	const char *bin = cc_test_bin("vm xml --vcpus");
	const char *fx = cc_test_fixture_tree("F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2");
	char dir[] = "/tmp/cc-vmxml-XXXXXX";
	char *out = NULL;
	int rc;

	if (!bin || !fx)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	rc = cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' vm xml db1 --vcpus 4 --root '%s/32intel64-2p8co2t+8ve' "
			      "--config '%s/examples/vms.yaml' --policy '%s/examples/policy-vm-host.yaml' --state %s",
			bin, fx, CC_SOURCE_DIR, CC_SOURCE_DIR, dir);
	ck_assert_msg(rc == 0, "%s", out);
	ck_assert_msg(strstr(out, "(planned, not reserved: corecarve vm reconcile reserves it) -->\n"
				  "<vcpu placement='static'>4</vcpu>\n<cputune>\n  <vcpupin vcpu='0' cpuset='2'/>\n") &&
			      strstr(out, "<topology sockets='1' dies='1' cores='2' threads='2'/>"),
		      "%s", out);
	free(out);
	out = NULL;
	rc = cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' vm xml db1 --root '%s/32intel64-2p8co2t+8ve' "
			      "--config '%s/examples/vms.yaml' --policy '%s/examples/policy-vm-host.yaml' --state %s",
			bin, fx, CC_SOURCE_DIR, CC_SOURCE_DIR, dir);
	ck_assert_int_eq(rc, 2);
	ck_assert_msg(strstr(out, "VM db1: no carve to describe (no pid file"), "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' vm status --vcpus 2", bin), 2);
	ck_assert_str_eq(out, "corecarve: vm status: --vcpus is for vm xml (a VM that has not run yet)\n");
	free(out);
	rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vm");
	TCase *tc = tcase_create("vm");

	tcase_add_test(tc, test_map);
	tcase_add_test(tc, test_new_threads1);
	tcase_add_test(tc, test_new_threads2);
	tcase_add_test(tc, test_threads_from_class);
	tcase_add_test(tc, test_odd_vcpus_threads2);
	tcase_add_test(tc, test_refused_capacity);
	tcase_add_test(tc, test_containers_never_collide);
	tcase_add_test(tc, test_idempotent);
	tcase_add_test(tc, test_drift_repinned_stable);
	tcase_add_test(tc, test_gone_released);
	tcase_add_test(tc, test_restarted);
	tcase_add_test(tc, test_unlisted_restored);
	tcase_add_test(tc, test_recarve_on_class_change);
	tcase_add_test(tc, test_recarve_refused_restores);
	tcase_add_test(tc, test_emulator_reserved);
	tcase_add_test(tc, test_shared_class);
	tcase_add_test(tc, test_libvirt_cgroups);
	tcase_add_test(tc, test_mixed_classes);
	tcase_add_test(tc, test_findings);
	tcase_add_loop_test(tc, test_rec_bad, 0, sizeof(bad_recs) / sizeof(bad_recs[0]));
	tcase_add_test(tc, test_plan_bad_record);
	tcase_add_test(tc, test_xml);
	tcase_add_test(tc, test_xml_before_first_start);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
