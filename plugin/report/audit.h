/* corecarve: the node audit — the ledger's promises against the live kernel.
 *
 * Kubelets, operators, workloads and crashed runtimes change cpusets, CFS
 * quotas, task affinities and IRQs behind corecarve's back.  The audit
 * compares what the ledger promises with what the kernel shows, in three
 * steps kept apart so each is testable:
 *
 *   read   cc_audit_snap_read() (audit_read.c): one pass over the cgroup
 *          tree, the tasks of carved and quota-limited cgroups, /proc/irq,
 *          a /proc/interrupts sample, kubelet's CPU manager state; all
 *          through the root, so a captured tree is audited the same way;
 *   check  cc_audit_check_*() (audit_checks.c): pure functions of
 *          (ledger, topology, policy, snapshot) that append findings;
 *   fix    cc_audit_fix() (audit_fix.c): repairs what is safe through the
 *          cgroup manager, the container undo path and the IRQ module.
 *
 * A finding is data: a stable code, a severity, the object, expected and
 * actual values, and the fix.  docs/audit.md explains every code.
 */
#ifndef CC_AUDIT_H
#define CC_AUDIT_H

#include <hwloc.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "cgroup.h"
#include "error.h"
#include "irq.h"
#include "ledger.h"
#include "policy.h"
#include "power.h"
#include "root.h"
#include "topo.h"

struct cc_capacity;

/* Stable codes: names are an interface (JSON, metrics, docs); append only. */
enum cc_audit_code {
	CC_AUDIT_CARVE_DRIFT,
	CC_AUDIT_PARTITION_INVALID,
	CC_AUDIT_PARTITION_MISSING,
	CC_AUDIT_OVERLAP,
	CC_AUDIT_RESERVED_CARVED,
	CC_AUDIT_SOFT_EXCLUSIVITY_LEAK,
	CC_AUDIT_SPLIT_CORE,
	CC_AUDIT_MEMS_MISALIGNED,
	CC_AUDIT_IRQ_ON_CARVE,
	CC_AUDIT_IRQ_COUNTS_ON_CARVE,
	CC_AUDIT_QUOTA_ON_CARVE,
	CC_AUDIT_QUOTA_WITH_PINNING,
	CC_AUDIT_TASK_ESCAPED,
	CC_AUDIT_STALE_RECORD,
	CC_AUDIT_UNKNOWN_CARVE,
	CC_AUDIT_KUBELET_STATIC_CPU_MANAGER,
	/* VMs (plugin/flows/vm.h's findings, read by `vm status`): vCPUs drawn from
	 * several core classes, a vCPU on a CPU another vCPU or carve holds, a
	 * vCPU moved off its recorded CPU, a carve whose VM process is gone. */
	CC_AUDIT_VM_MIXED_CLASSES,
	CC_AUDIT_VM_SHARED_CPU,
	CC_AUDIT_VM_DRIFT,
	CC_AUDIT_VM_GONE,
	/* Power settings (plugin/effects/power.h): a recorded file that no longer
	 * holds what corecarve set while a carve needs it; a recorded file no
	 * carve needs any more whose original was not put back. */
	CC_AUDIT_POWER_DRIFT,
	CC_AUDIT_POWER_NOT_RESTORED,
	/* The restore model (docs/design.md): a carve whose undo failed, kept
	 * as releasing; a cgroup record owned by a carve the ledger does not
	 * hold; a recorded cgroup file someone else changed since corecarve
	 * wrote it. */
	CC_AUDIT_RELEASE_PENDING,
	CC_AUDIT_RECORD_ORPHAN,
	CC_AUDIT_RECORD_DRIFT,
	/* The ledger holds no carve, but cgroupfs has cgroups only corecarve
	 * makes (the parked partition, exec's transient cgroups): the audit
	 * reads another state directory than the hook writes, or the ledger
	 * was lost. */
	CC_AUDIT_LEDGER_MISSING,
	/* The audit runs where threads of the cgroups it checks read as PID 0
	 * (another PID namespace: a pod without hostPID): their affinities
	 * cannot be read, so the task checks cannot vouch for them. */
	CC_AUDIT_TASKS_HIDDEN,
	/* Cgroups the audit could not read (a directory or file this reader
	 * may not open: another owner's 0700 subtree, the DaemonSet's audit
	 * having no capabilities) or nested deeper than it walks: skipped with
	 * what is below them, so that one delegated subtree cannot fail the
	 * node's audit, and reported so that they do not read as clean. */
	CC_AUDIT_CGROUP_UNREADABLE,
	/* A shared-pool container's cpuset.cpus (its "shared" node record)
	 * lacks CPUs of its pool that no live carve holds: CPUs a released
	 * carve should have given back. */
	CC_AUDIT_SHARED_NARROW,
	/* Cgroups with more threads than the audit reads per cgroup
	 * (--max-threads): the rest went unchecked, said rather than read
	 * as clean. */
	CC_AUDIT_TASKS_UNREAD,
	CC_AUDIT_NCODES
};

enum cc_audit_severity {
	CC_AUDIT_WARNING,  /* a promise at risk, or a conflict to resolve */
	CC_AUDIT_CRITICAL, /* a promise broken now: a carve shares, or runs elsewhere */
};

/* How --fix repairs a finding. */
enum cc_audit_repair {
	CC_REPAIR_NONE,       /* reported only: not corecarve's to change, or not safe live */
	CC_REPAIR_REAPPLY,    /* re-apply the carve's cgroup settings (cc_cg_apply) */
	CC_REPAIR_TAKE_BACK,  /* cpuset-only: take carved CPUs out of a peer's cpuset.cpus */
	CC_REPAIR_DROP_QUOTA, /* a cgroup inside a carve: cpu.max back to "max" */
	CC_REPAIR_REPIN,      /* sched_setaffinity a carve's task back onto the carve */
	CC_REPAIR_STEER_IRQS, /* cc_irq_reconcile() */
	CC_REPAIR_RELEASE,    /* undo a stale carve (cc_carve_undo) and drop its record */
	CC_REPAIR_VM_RECONCILE, /* cc_vm_reconcile(): re-pin, release, carve VMs */
	CC_REPAIR_POWER,      /* power: write the recorded value back, restore what no carve needs */
	CC_REPAIR_DROP_OWNER, /* a record's owner that is no carve: the record recomputed without it */
	CC_REPAIR_WIDEN_SHARED, /* a shared container's cpuset.cpus back to its pool minus the live carves */
};

#define CC_AUDIT_TEXT_MAX 256

struct cc_finding {
	enum cc_audit_code code;
	enum cc_audit_severity severity;
	enum cc_audit_repair repair;
	char carve[256];                  /* the carve concerned, "" when node-wide */
	char object[PATH_MAX];            /* "cgroup /kubepods/pod1/c1", "task 812", "irq 25 (virtio0-input.0)" */
	char expected[CC_AUDIT_TEXT_MAX];
	char actual[CC_AUDIT_TEXT_MAX];
	char fix[CC_AUDIT_TEXT_MAX];      /* what --fix does, or what a person must do */
	char target[PATH_MAX];            /* repairs: the cgroup to act on, "" when none */
	long num;                         /* repairs: the task id or IRQ number, -1 when none */
	/* REPIN: the task's start time as the snapshot read it (0: unknown);
	 * target is then the cgroup it was in.  --fix re-pins only the same
	 * thread, not another that reused its id. */
	unsigned long long start;
};

struct cc_audit_report {
	int n, cap;
	struct cc_finding *f;
};

const char *cc_audit_code_name(enum cc_audit_code c);
/* The code for a name, or -1. */
int cc_audit_code_parse(const char *name);
const char *cc_audit_severity_name(enum cc_audit_severity s);
const char *cc_audit_repair_name(enum cc_audit_repair r);
/* The severity a code has unless a check says otherwise. */
enum cc_audit_severity cc_audit_code_severity(enum cc_audit_code c);

/* Append a finding (code's default severity, repair NONE, num -1); the
 * caller fills the rest through the pointer.  NULL with err on ENOMEM. */
struct cc_finding *cc_audit_add(struct cc_audit_report *r, enum cc_audit_code code,
				const char *carve, struct cc_err *err);
/* Fill a text field of a finding: escaped and cut between characters at
 * the field's size (text.h; paths and cpu-lists are quoted whole up to it). */
void cc_audit_text(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define CC_AUDIT_SET(field, ...) cc_audit_text((field), sizeof(field), __VA_ARGS__)
/* A path a repair acts on: copied as read, never escaped (it is opened,
 * not shown; the text fields quote it escaped). */
#define CC_AUDIT_TARGET(field, path) snprintf((field), sizeof(field), "%s", (path))
int cc_audit_count(const struct cc_audit_report *r, enum cc_audit_code code);
void cc_audit_report_fini(struct cc_audit_report *r);

/* ---- what was read ---------------------------------------------------- */

struct cc_audit_cgroup {
	char *path;               /* relative to the cgroup2 mount: "/", "/kubepods/pod1/c1" */
	int parent;               /* index, -1 for the root; parents come before children */
	bool has_cpuset;          /* cpuset.cpus exists: the cpuset controller is enabled here */
	hwloc_bitmap_t cpus;      /* cpuset.cpus as written; empty when inherited or absent */
	hwloc_bitmap_t effective; /* cpuset.cpus.effective; the parent's where the file is absent */
	hwloc_bitmap_t exclusive; /* cpuset.cpus.exclusive; NULL where the kernel has none */
	hwloc_bitmap_t mems;      /* carved cgroups only: cpuset.mems.effective; else NULL */
	char partition[128];      /* cpuset.cpus.partition; "" where absent */
	bool delegates_cpuset;    /* partitions only: cpuset in cgroup.subtree_control */
	long long quota, period;  /* cpu.max; quota -1 for "max" or no cpu controller */
	bool populated;           /* cgroup.events: tasks here or below (the root: always) */
	/* Derived from the ledger by cc_audit_snap_index(): */
	int carve;                /* ledger index of the carve on this cgroup, -1 */
	int within;               /* carve on this cgroup or its nearest ancestor, -1 */
	bool above_carve;         /* a proper ancestor of some carve's cgroup */
	int quota_at;             /* nearest cgroup (self or ancestor) with a quota, -1 */
};

/* A thread of a carved or quota-limited cgroup. */
struct cc_audit_task {
	int tid;
	int cgroup;               /* index into snap->cgroups */
	hwloc_bitmap_t affinity;  /* Cpus_allowed_list of /proc/<tid>/status */
	unsigned long long start; /* field 22 of /proc/<tid>/stat; 0: not read (a capture has none) */
};

/* An IRQ whose /proc/interrupts count grew on some CPU during the sample. */
struct cc_audit_irq_growth {
	int irq;
	hwloc_bitmap_t cpus;      /* CPUs whose count grew */
};

struct cc_audit_snap {
	int ncgroups;
	struct cc_audit_cgroup *cgroups; /* [0] is the root */
	int ntasks;
	struct cc_audit_task *tasks;
	/* Threads listed as 0 in cgroup.threads (outside the reader's PID
	 * namespace), the cgroups they were in, how many threads the cgroups
	 * read listed in all, and the first cgroup that had one (when
	 * hidden_tasks > 0). */
	int hidden_tasks, hidden_cgroups, listed_tasks;
	int hidden_at;
	/* Threads past the per-cgroup bound (cc_audit_read_opts.max_tasks),
	 * not looked at, the cgroups that had them, the first of those, and
	 * the bound. */
	int unread_tasks, unread_cgroups, unread_at, max_tasks;
	/* Cgroups skipped because they could not be read or lie too deep
	 * (CGROUP_UNREADABLE), the first one's path (a file's, when the
	 * cgroup could be listed but that file not read) and its errno
	 * (ELOOP: too deep). */
	int unreadable;
	char *unreadable_path;
	int unreadable_errno;
	bool has_irqs;                   /* irqs was read */
	struct cc_irq_table irqs;
	int sample_ms;                   /* 0: no /proc/interrupts sample */
	int ngrowth;
	struct cc_audit_irq_growth *growth;
	char kubelet_policy[64];         /* policyName of kubelet's cpu_manager_state, "" when absent */
	/* /proc/sys/kernel/panic_on_warn is set: a write that makes the
	 * kernel warn would panic the node (false where it is absent). */
	bool panic_on_warn;
	struct cc_noderecs power;        /* the ledger's power records */
	struct cc_power_now power_now;   /* what each recorded file holds now */
	/* Private: path -> index (a jansson object used as a hash table), capacities. */
	struct json_t *index;
	int cap_cgroups, cap_tasks;
};

/* Deeper than the kernel lets anyone nest by default (cgroup.max.depth is
 * unlimited, but systemd and kubelet stay under ten). */
#define CC_AUDIT_DEPTH_MAX 64

#define CC_KUBELET_CPU_STATE "/var/lib/kubelet/cpu_manager_state"

/* Threads whose affinity the audit reads per cgroup, by default: a pod
 * with no PID limit may have hundreds of thousands, and each costs two
 * /proc reads and a task entry (the rest are counted: TASKS_UNREAD). */
#define CC_AUDIT_TASKS_PER_CGROUP 1024

struct cc_audit_read_opts {
	int sample_ms;   /* /proc/interrupts sample window; 0: none */
	bool skip_irqs;  /* do not read /proc/irq (no IRQ findings) */
	int max_tasks;   /* threads read per cgroup; 0: CC_AUDIT_TASKS_PER_CGROUP */
};

/* Read the node through `root` for the carves of `l`.  Cgroups that
 * vanish while being read are skipped; those this reader may not read
 * (EACCES, EPERM) or nested deeper than CC_AUDIT_DEPTH_MAX are skipped
 * with their subtree and counted (unreadable); any other failure is an
 * error naming the file. */
int cc_audit_snap_read(const struct cc_root *root, const struct cc_ledger *l,
		       const struct cc_audit_read_opts *o, struct cc_audit_snap *s,
		       struct cc_err *err);
void cc_audit_snap_fini(struct cc_audit_snap *s);

/* Building a snapshot by hand (tests, other readers): add a cgroup under
 * `parent` (-1 for the root) with every set empty and quota -1; returns
 * its index or -1. */
int cc_audit_snap_add_cgroup(struct cc_audit_snap *s, const char *path, int parent,
			     struct cc_err *err);
/* Take back the cgroup added last (one that could not be read). */
void cc_audit_snap_drop_last(struct cc_audit_snap *s);
int cc_audit_snap_add_task(struct cc_audit_snap *s, int tid, int cgroup,
			   hwloc_const_bitmap_t affinity, struct cc_err *err);
/* Index of the cgroup at `path`, or -1. */
int cc_audit_snap_find(const struct cc_audit_snap *s, const char *path);
/* Fill carve/within/above_carve/quota_at from the ledger.  O(cgroups + carves * depth). */
int cc_audit_snap_index(struct cc_audit_snap *s, const struct cc_ledger *l, struct cc_err *err);

/* Pure parsers of what the reader reads (exposed for tests). */
int cc_audit_parse_status_affinity(const char *status, hwloc_bitmap_t out, struct cc_err *err);
/* Field 22 (starttime) of a /proc/<tid>/stat text (the name in field 2
 * may hold spaces and parentheses). */
int cc_audit_parse_stat_start(const char *stat, unsigned long long *out, struct cc_err *err);

/* Whether thread `tid` is still the one a snapshot read: started at
 * `start` (field 22 of /proc/<tid>/stat) and in `cgroup` (its cgroup-v2
 * path).  1: the same; 0: gone, or its id names another thread now (or
 * `start` is 0: nothing to compare with); -1: a read failed otherwise. */
int cc_audit_task_same(const struct cc_root *root, int tid, const char *cgroup, unsigned long long start,
		       struct cc_err *err);
/* policyName of kubelet's cpu_manager_state JSON into `out` ("" when the
 * field is absent); -1 with err when it is not JSON. */
int cc_audit_parse_kubelet_state(const char *text, char *out, size_t len, struct cc_err *err);

/* IRQs whose /proc/interrupts count grew from `a` to `b`, with the CPUs
 * where it grew, into s->growth.  Rows only in `b` (new IRQs) are left
 * out: they have no baseline. */
int cc_audit_irq_growth(const struct cc_irq_counts *a, const struct cc_irq_counts *b,
			struct cc_audit_snap *s, struct cc_err *err);

/* ---- checks (pure) ---------------------------------------------------- */

struct cc_audit_in {
	/* Not const: the checks read the ledger's record sections, which it
	 * parses lazily on the first read (cc_noderecs_open, cc_ledger_find):
	 * reading them changes its cache, never what it holds. */
	struct cc_ledger *ledger;
	const struct cc_topo *topo;
	const struct cc_policy *policy;
	const struct cc_audit_snap *snap;
};

typedef int (*cc_audit_check_fn)(const struct cc_audit_in *in, struct cc_audit_report *out,
				 struct cc_err *err);

/* STALE_RECORD, UNKNOWN_CARVE, RELEASE_PENDING, RECORD_ORPHAN, RECORD_DRIFT */
int cc_audit_check_records(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* CARVE_DRIFT, MEMS_MISALIGNED */
int cc_audit_check_drift(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* PARTITION_INVALID, PARTITION_MISSING (the carves' and their parked partitions) */
int cc_audit_check_partitions(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* OVERLAP, RESERVED_CARVED, SOFT_EXCLUSIVITY_LEAK, SPLIT_CORE */
int cc_audit_check_exclusivity(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* QUOTA_ON_CARVE, QUOTA_WITH_PINNING */
int cc_audit_check_quota(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* TASK_ESCAPED, TASKS_HIDDEN, CGROUP_UNREADABLE (what the reader could not look at) */
int cc_audit_check_tasks(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* IRQ_ON_CARVE, IRQ_COUNTS_ON_CARVE */
int cc_audit_check_irqs(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* POWER_DRIFT, POWER_NOT_RESTORED */
int cc_audit_check_power(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);
/* KUBELET_STATIC_CPU_MANAGER */
int cc_audit_check_kubelet(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);

struct cc_audit_check {
	const char *name;
	cc_audit_check_fn fn;
};
extern const struct cc_audit_check cc_audit_checks[]; /* NULL-terminated */

/* Every check, in order; the report is sorted by severity (critical
 * first), then code, then object. */
int cc_audit_run(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err);

/* ---- output ------------------------------------------------------------ */

struct cc_audit_stats {
	int carves;
	int carved_cpus;
	int cgroups, tasks, irqs;
	int sample_ms;
	double read_ms, check_ms;  /* wall time of reading and of the checks */
	/* How long --fix held the hooks' ledger lock (its repairs, and an
	 * audit again under it should a hook have moved the carves); 0 for an
	 * audit that repaired nothing: it never takes the lock. */
	double lock_ms;
	long long finished;        /* unix seconds */
	/* Capacity per placement class (capacity.h), for the textfile's
	 * corecarve_class_cpus; NULL: none written.  Set by the caller. */
	const struct cc_capacity *capacity;
	int ncapacity;
};

void cc_audit_stats_fill(struct cc_audit_stats *st, const struct cc_ledger *l,
			 const struct cc_audit_snap *s);

/* One JSON object per finding; an array of them. */
struct json_t *cc_audit_findings_json(const struct cc_audit_report *r, struct cc_err *err);

/* Report the VM module's findings (plugin/flows/vm.h) as audit findings. */
struct cc_vm_finding;
int cc_audit_add_vm(struct cc_audit_report *r, const struct cc_vm_finding *f, int n, struct cc_err *err);

/* node_exporter textfile: findings per code (every code, zeros too),
 * carves, carved CPUs, each placement class's CPUs by state and largest
 * request (st->capacity), last audit time, duration and success; `ok` false
 * writes success 0 and no per-code values (the audit could not run).
 * Written to a temporary file in the same directory, fsynced and renamed,
 * so the collector never reads half a file (prom.c). */
int cc_prom_write(const char *path, const struct cc_audit_report *r,
		  const struct cc_audit_stats *st, bool ok, struct cc_err *err);
/* The text cc_prom_write() writes; caller frees. */
char *cc_prom_render(const struct cc_audit_report *r, const struct cc_audit_stats *st, bool ok);

/* ---- repairs ----------------------------------------------------------- */

struct cc_audit_fix_ctx {
	const struct cc_root *root;       /* must be the host: repairs write */
	struct cc_ledger *ledger;         /* opened for writing (locked); committed by the caller */
	const struct cc_topo *topo;
	const struct cc_policy *policy;
	FILE *out;                        /* every change is printed here */
	/* Cgroup writes through a test double (cgroup.h); NULL: the host's. */
	const struct cc_cg_ops *cg_ops;
	void *cg_ops_arg;
};

struct cc_audit_fix_result {
	int repaired;   /* findings whose repair ran without error */
	int failed;     /* repairs that failed (the first error is in err) */
	int manual;     /* findings --fix leaves to a person (repair NONE) */
};

/* Repair the findings of `r` in a safe order: stale records, carves
 * re-applied, carved CPUs taken back from peers, quotas, tasks re-pinned,
 * IRQs steered.  Every step is tried; the return is -1 when any failed
 * (err holds the first failure), 0 otherwise.  The ledger is changed in
 * memory (journal commits happen before cgroup writes); commit it. */
int cc_audit_fix(const struct cc_audit_fix_ctx *ctx, const struct cc_audit_report *r,
		 struct cc_audit_fix_result *res, struct cc_err *err);

#endif
