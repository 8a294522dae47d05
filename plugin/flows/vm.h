/* corecarve: VM vCPU pinning — every vCPU of a VM on one core class, one
 * CPU each, reserved in the same ledger as containers.
 *
 * Three layers, so the decision stays pure (like irq.h):
 *   find    the QEMU process of each VM and its threads, through the root
 *           (/run/libvirt/qemu/<domain>.pid, a pid file, or /proc/<pid>/cmdline
 *           `-name`; /proc/<pid>/task/<tid>/comm "CPU <n>/KVM" or "CPU <n>/TCG"
 *           are vCPU n, every other thread is an emulator thread) (vm_find.c);
 *   decide  cc_vm_plan(): from the topology, the policy, the ledger's carves,
 *           the VM list and what was found, which carve to make or release and
 *           which thread and cgroup gets which CPUs (vm_plan.c);
 *   apply   under the ledger lock: journal the carve, write libvirt's per-vCPU
 *           cgroups (cgroup.h), sched_setaffinity each thread, commit; any
 *           failure puts back what was written (vm_apply.c).
 *
 * A VM's carve is kind "vm", id "vm:<name>", mode "affinity", no cgroup.
 * Its `changes` hold one record {"type": "vm", "pid", "start", "threads",
 * "vcpus": [{"vcpu", "tid", "cpu", "old"}], "emulator_old"} — the process it
 * was made for (pid and start time: a reused pid is another process), the
 * vCPU -> CPU map that later runs keep (vCPU n keeps its CPU while the VM
 * lives) and the affinities before — and one {"type": "cpuset", "cgroup",
 * "file", "old"} per libvirt cgroup file written. */
#ifndef CC_VM_H
#define CC_VM_H

#include <hwloc.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "alloc.h"
#include "ctx.h"
#include "error.h"
#include "ledger.h"
#include "policy.h"
#include "root.h"
#include "topo.h"
#include "vmconfig.h"

#define CC_VM_LIBVIRT_RUN "/run/libvirt/qemu"
#define CC_VM_MAX_THREADS 4096 /* threads of one QEMU read at most */

/* ---- find (vm_find.c) --------------------------------------------------- */

/* One thread of a QEMU process as found. */
struct cc_vm_thread {
	pid_t tid;
	int vcpu;                /* vCPU index, -1 for an emulator thread */
	hwloc_bitmap_t affinity; /* Cpus_allowed_list */
	/* The thread's cgroup-v2 path when it is one of libvirt's per-vCPU or
	 * emulator cgroups (".../vcpu<vcpu>", ".../emulator"), else "". */
	char cgroup[PATH_MAX];
	hwloc_bitmap_t cg_cpus;  /* that cgroup's cpuset.cpus (NULL without one; empty: not set) */
	hwloc_bitmap_t cg_mems;  /* its cpuset.mems */
	/* An emulator thread in another cgroup than the main thread: libvirt's
	 * iothread<n> cgroups, which <iothreadpin> owns.  Left alone. */
	bool foreign;
};

/* A running QEMU. */
struct cc_vm_proc {
	char name[CC_VM_NAME_MAX]; /* the VM (spec name, or the name in a ledger id) */
	pid_t pid;
	unsigned long long start;  /* /proc/<pid>/stat starttime: pid + start name one process */
	char accel[8];             /* "KVM" or "TCG", from the vCPU thread names */
	int nvcpus;
	struct cc_vm_thread *vcpus; /* sorted by vcpu */
	int nemu;
	struct cc_vm_thread *emu;   /* the main thread first */
};

void cc_vm_proc_fini(struct cc_vm_proc *p);

/* The guest name in QEMU's `-name` value: "guest=NAME,..." or "NAME,...";
 * ",," is a literal comma.  Pure; 0 with out, -1 when it names none. */
int cc_vm_qemu_name(const char *value, char *out, size_t outlen);
/* The vCPU of a thread name "CPU <n>/KVM" or "CPU <n>/TCG", with the
 * accelerator copied to accel (8 bytes) when not NULL; -1 otherwise. */
int cc_vm_vcpu_of_comm(const char *comm, char *accel);

/* Find the QEMU process of `spec`.  Returns 1 with *out filled, 0 when it
 * is not running (`why` says how that was seen: "no pid file
 * /run/libvirt/qemu/web.pid", "no QEMU named web"), -1 with err when what
 * was found is wrong: a pid file that is malformed or names a process that
 * is not QEMU, two QEMUs with the name, no vCPU thread names (QEMU without
 * debug-threads=on), a vCPU index twice. */
int cc_vm_find(const struct cc_root *root, const struct cc_vm_spec *spec, struct cc_vm_proc *out,
	       char *why, size_t whylen, struct cc_err *err);

/* Read process `pid` as a VM named `name` (the threads and their cgroups).
 * `start` not 0: the process must have that start time, else it is
 * another one: returns 0.  1 with *out, 0 when gone, -1 on error. */
int cc_vm_read_proc(const struct cc_root *root, const char *name, pid_t pid, unsigned long long start,
		    struct cc_vm_proc *out, struct cc_err *err);

/* ---- the record in a carve's changes ----------------------------------- */

struct cc_vm_vcpu_rec {
	int vcpu;
	pid_t tid;
	int cpu;
	hwloc_bitmap_t old; /* its affinity before the carve */
};

struct cc_vm_rec {
	pid_t pid;
	unsigned long long start;
	int threads;
	int nvcpus;
	struct cc_vm_vcpu_rec *vcpus; /* sorted by vcpu */
	hwloc_bitmap_t emulator_old;  /* the main thread's affinity before */
};

/* The "vm" record of a carve; 0 with *rec, -1 when missing or malformed
 * (errors name the carve: "vm:web.changes.vm.vcpus[1].cpu: ..."). */
int cc_vm_rec_parse(const struct cc_carve *c, struct cc_vm_rec *rec, struct cc_err *err);
json_t *cc_vm_rec_json(const struct cc_vm_rec *rec);
void cc_vm_rec_fini(struct cc_vm_rec *rec);

/* ---- decide (vm_plan.c) ------------------------------------------------- */

/* The VM's `threads`, or the class's smt when not set (full: 2, isolate
 * and unknown classes: 1). */
int cc_vm_threads(const struct cc_vm_spec *spec, const struct cc_policy *p);

enum cc_vm_state {
	CC_VM_NOT_RUNNING, /* configured, no process, no carve: nothing to do */
	CC_VM_NEW,         /* carve and pin */
	CC_VM_KEEP,        /* carved for this process: re-pin what drifted */
	CC_VM_SHARED,      /* a non-exclusive class: pinned to its shared pool, no carve */
	CC_VM_RELEASE,     /* carve to give back: process gone, replaced, re-carved or VM unlisted */
	CC_VM_REFUSED,     /* no carve possible: reason/code say why; nothing changes for it */
};

/* One thread to pin: from -> to. */
struct cc_vm_pin {
	pid_t tid;
	int vcpu;            /* -1: emulator thread */
	hwloc_bitmap_t from;
	hwloc_bitmap_t to;
};

/* One cgroup file to write (libvirt's vcpuN / emulator). */
struct cc_vm_cgwrite {
	char cgroup[PATH_MAX];
	char file[16];       /* cpuset.cpus or cpuset.mems */
	hwloc_bitmap_t from; /* as read; empty: not set */
	hwloc_bitmap_t to;
};

struct cc_vm_entry {
	char name[CC_VM_NAME_MAX];
	char id[CC_VM_NAME_MAX + 3];
	enum cc_vm_state state;
	const struct cc_vm_spec *spec;  /* NULL: not in the VM list (RELEASE) */
	const struct cc_vm_proc *proc;  /* NULL: not running (or not the carve's process) */
	char why[256];                  /* NOT_RUNNING / RELEASE: why */
	int code;                       /* REFUSED: ENOSPC (capacity) or EINVAL */
	char reason[CC_ERR_MSG_MAX];    /* REFUSED: the allocator's message */
	struct cc_carve carve;          /* NEW: the carve to add; KEEP/RELEASE: a copy of the ledger's */
	hwloc_bitmap_t emulator;        /* the emulator threads' CPUs (NEW, KEEP, SHARED) */
	/* Core classes the vCPU threads may run on now, before the plan. */
	int nclasses_now;
	char classes_now[128];          /* "performance, efficient" */
	int nwarnings;
	char warnings[CC_WARN_MAX][256];
	int npins;
	struct cc_vm_pin *pins;         /* only those that change */
	int ncg;
	struct cc_vm_cgwrite *cg;       /* only those that change */
};

struct cc_vm_plan {
	int n;
	struct cc_vm_entry *e; /* the ledger's VM carves (kept or released), then the others of the list */
	int nrefused;
	int nchanges;          /* carves made or released + pins + cgroup writes */
};

/* What the planner is given; all read only. */
struct cc_vm_world {
	const struct cc_topo *topo;
	const struct cc_policy *policy;
	const struct cc_carve *const *carves; /* every carve of the ledger */
	int ncarves;
	const struct cc_vmconfig *cfg;
	/* VMs found running: those of the list (cc_vm_find) and, for carves of
	 * VMs no longer listed, their recorded process (cc_vm_read_proc). */
	const struct cc_vm_proc *procs;
	int nprocs;
};

/* Decide.  Pure.  -1 only for a world that cannot be planned on (a
 * malformed "vm" record in the ledger, out of memory); a VM that cannot be
 * carved is an entry REFUSED. */
int cc_vm_plan(const struct cc_vm_world *w, struct cc_vm_plan *plan, struct cc_err *err);
void cc_vm_plan_fini(struct cc_vm_plan *plan);

/* The vCPU -> CPU map of a decision: `threads` 1, vCPU i gets the i-th CPU
 * of `cpus` in ascending order; 2, vCPUs 2k and 2k+1 get the two threads
 * of the k-th core (QEMU numbers a guest's SMT siblings adjacently).
 * map[] has nvcpus entries.  -1 with err when the CPUs do not fit. */
int cc_vm_map(const struct cc_topo *t, hwloc_const_bitmap_t cpus, int threads, int nvcpus, int *map,
	      struct cc_err *err);

/* ---- findings (vm_plan.c): what `vm status` and the audit report -------- */

enum cc_vm_finding_kind {
	CC_VM_MIXED_CLASSES, /* a VM's vCPUs may run on CPUs of more than one core class */
	CC_VM_SHARED_CPU,    /* a vCPU pinned to a CPU another vCPU or another carve holds */
	CC_VM_DRIFT,         /* a carved VM's vCPU is not where the ledger says */
	CC_VM_GONE,          /* a carve whose VM process is gone (reconcile releases it) */
};

struct cc_vm_finding {
	enum cc_vm_finding_kind kind;
	char vm[CC_VM_NAME_MAX];
	char msg[512];
};

/* Findings on the running VMs and the ledger.  *out is malloc'd. */
int cc_vm_findings(const struct cc_vm_world *w, struct cc_vm_finding **out, int *n, struct cc_err *err);
const char *cc_vm_finding_name(enum cc_vm_finding_kind k);

/* ---- apply (vm_apply.c) -------------------------------------------------- */

struct cc_vm_opts {
	const char *config;  /* --config FILE, NULL: vms.yaml or the policy's vms: */
	bool dry_run;        /* decide and report only: the ledger is read, not locked */
	/* Dry run only: plan the listed VM `assume_name` as if it ran with
	 * `assume_vcpus` vCPUs when no process of it is found (vm xml --vcpus:
	 * libvirt needs the <cputune> before the VM's first start). */
	const char *assume_name;
	int assume_vcpus;
};

/* Everything a reconcile saw and did, for the entry point to print. */
struct cc_vm_result {
	struct cc_vmconfig cfg;
	struct cc_topo *topo;
	struct cc_policy *policy;
	int nprocs;
	struct cc_vm_proc *procs;
	struct cc_vm_plan plan;
	int applied;         /* changes written */
	char irq_note[640];  /* IRQ steering after the carves changed, "" when none */
};

/* Load the VM list, policy and topology, lock the ledger (read it under
 * --dry-run), find the VMs, plan, and (unless dry_run) apply: release,
 * then carve (journaled before the first write) and pin, then re-steer
 * IRQs when steer-away carves changed, then commit.  Pinning needs the
 * real host (ctx->root is "/"); a dry run works on any root.  A failure
 * while applying one VM puts back its writes and takes its carve out
 * again; the VMs applied before it stay.  Returns 0 (refusals are
 * entries; the caller maps them to its exit status) or -1 with err. */
int cc_vm_reconcile(const struct cc_ctx *ctx, const struct cc_vm_opts *opts, struct cc_vm_result *res,
		    struct cc_err *err);

/* `vm status`: the same reading without a plan being applied; findings
 * in *findings (malloc'd). */
int cc_vm_status(const struct cc_ctx *ctx, const struct cc_vm_opts *opts, struct cc_vm_result *res,
		 struct cc_vm_finding **findings, int *nfindings, struct cc_err *err);

void cc_vm_result_fini(struct cc_vm_result *res);

/* libvirt domain XML for the pinning of a planned or kept carve (entry
 * NEW or KEEP): <vcpu>, <cputune> (a vcpupin per vCPU, emulatorpin),
 * <numatune> and, for threads: 2, the <cpu><topology> that tells the guest
 * its vCPU pairs are SMT siblings.  -1 with err for other entries. */
int cc_vm_xml(FILE *out, const struct cc_vm_entry *e, struct cc_err *err);

#endif
