/* corecarve doctor: is this node ready for carving?
 *
 * Each check is a small function that reads what it needs through the root
 * (so a captured tree under --root can be examined) and fills one item:
 * what was found, why it matters, and how to fix it.  Checks never write
 * and never fail as functions: a file they cannot read is itself a finding.
 * What a check cannot answer is `unknown`, never a guess: a file a captured
 * tree (--root) does not hold, or a check that needs one that failed.  The
 * worst of ok, warn and fail decides the exit code: 0 ready, 1 warnings,
 * 2 not usable; unknowns are counted, not graded.
 */
#ifndef CC_DOCTOR_H
#define CC_DOCTOR_H

#include <hwloc.h>
#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "root.h"
#include "topo.h"

struct cc_ledger_lock;

enum cc_doctor_status {
	CC_DOCTOR_OK,
	CC_DOCTOR_WARN,
	CC_DOCTOR_FAIL,
	CC_DOCTOR_UNKNOWN,
};
#define CC_DOCTOR_NSTATUS 4

#define CC_DOCTOR_TEXT_MAX 1024

struct cc_doctor_item {
	const char *id;
	enum cc_doctor_status status;
	char found[CC_DOCTOR_TEXT_MAX];
	char why[CC_DOCTOR_TEXT_MAX];
	char fix[CC_DOCTOR_TEXT_MAX]; /* "" when there is nothing to do */
};

/* What the entry point read before the checks run. */
struct cc_doctor_ctx {
	const struct cc_root *root;
	const struct cc_topo *topo;    /* NULL when it did not load */
	const char *topo_error;        /* why, when topo is NULL */
	const struct cc_policy *policy; /* NULL when it did not load */
	const char *policy_error;      /* why, when policy is NULL */
	hwloc_const_bitmap_t reserved; /* the policy's reserved set on topo; NULL when unknown */
	const char *state_dir;         /* ledger directory; NULL: CC_LEDGER_DIR */
	const char *state_error;       /* why the state directory is unusable (a wrong --state); NULL */
	const struct cc_ledger_lock *lock; /* how its lock is waited for; NULL: ledger.h's defaults */
};

/* Whether the checks look at a captured tree rather than this host: a file
 * the tree lacks is then unknown, not absent. */
bool cc_doctor_captured(const struct cc_doctor_ctx *ctx);

struct cc_doctor_check {
	const char *id;
	void (*run)(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
};

/* Every check, in report order; terminated by { NULL, NULL }. */
extern const struct cc_doctor_check cc_doctor_checks[];

#define CC_DOCTOR_MAX 24

struct cc_doctor_report {
	int n;
	struct cc_doctor_item items[CC_DOCTOR_MAX];
};

void cc_doctor_run(const struct cc_doctor_ctx *ctx, struct cc_doctor_report *out);
/* One check by id; -1 with err set for an unknown id. */
int cc_doctor_run_one(const struct cc_doctor_ctx *ctx, const char *id, struct cc_doctor_item *it,
		      struct cc_err *err);
/* 0 ready, 1 warnings, 2 not usable (unknowns do not count). */
int cc_doctor_exit_code(const struct cc_doctor_report *r);
const char *cc_doctor_status_name(enum cc_doctor_status s);
/* How many checks have each status, indexed by enum cc_doctor_status. */
void cc_doctor_counts(const struct cc_doctor_report *r, int counts[CC_DOCTOR_NSTATUS]);
/* "not usable: 1 fail, 2 warn, 11 ok, 2 unknown" */
void cc_doctor_verdict(const struct cc_doctor_report *r, char *buf, size_t len);
json_t *cc_doctor_json(const struct cc_doctor_report *r);

/* Fill an item: found is printf-formatted. */
void cc_doctor_set(struct cc_doctor_item *it, enum cc_doctor_status st, const char *why,
		   const char *fix, const char *found_fmt, ...) __attribute__((format(printf, 5, 6)));

/* What makes this a kubelet's node, through the root: the first of
 * /sys/fs/cgroup/kubepods.slice (systemd driver), /sys/fs/cgroup/kubepods
 * (cgroupfs) and /var/lib/kubelet (a node whose kubelet has not started
 * yet, as at boot) that exists; NULL on other hosts. */
const char *cc_kubelet_evidence(const struct cc_root *root);

/* ---- pure parsers the checks use ----------------------------------------- */

/* "always [madvise] never" -> "madvise"; NULL when no mode is bracketed. */
char *cc_doctor_thp_mode(const char *text);
/* The CPUs of `param=` (isolcpus, nohz_full) on a kernel command line, with
 * isolcpus' leading flags (domain, nohz, managed_irq) stripped into *flags
 * (may be NULL; caller frees).  0 absent, 1 found, -1 malformed (err names
 * the parameter). */
int cc_doctor_cmdline_cpus(const char *cmdline, const char *param, hwloc_bitmap_t out, char **flags,
			   struct cc_err *err);
/* "1.9.2-2" -> 1009 (major*1000+minor); -1 when not a version. */
int cc_doctor_version(const char *s);

/* Where the cgroup hierarchies are mounted, from /proc/self/mountinfo. */
struct cc_cgroup_layout {
	bool known;                 /* mountinfo was read */
	bool unified;               /* cgroup2 is mounted at /sys/fs/cgroup itself */
	char v2_mount[256];         /* where cgroup2 is mounted, "" when nowhere (the first one) */
	char v1_cpuset[256];        /* a cgroup v1 hierarchy holding cpuset, "" none */
	char v1_cpu[256];           /* a cgroup v1 hierarchy holding cpu, "" none */
	int nv1;                    /* cgroup v1 hierarchies */
};
/* Parse mountinfo text (proc(5)); unknown lines are skipped. */
void cc_doctor_parse_mountinfo(const char *text, struct cc_cgroup_layout *out);
/* Read /proc/self/mountinfo through the root (known false when absent). */
void cc_doctor_cgroup_layout(const struct cc_root *root, struct cc_cgroup_layout *out);
/* What is wrong with a host whose /sys/fs/cgroup is not cgroup2, and the
 * fix, each a sentence (the cgroup check's found and fix; the CLI appends
 * them to "corecarve needs the unified hierarchy"). */
void cc_doctor_cgroup_explain(const struct cc_root *root, const struct cc_cgroup_layout *l, char *found,
			      size_t flen, char *fix, size_t xlen);

/* ---- the checks (doctor_kernel.c, doctor_host.c) ------------------------- */

void cc_doctor_check_cgroup(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_partition(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_smt(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_hybrid(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_policy(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_topology(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_governor(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_power(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_thp(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_numa_balancing(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_cmdline(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_irqbalance(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_kubelet(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_hooks(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_ledger(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
void cc_doctor_check_capacity(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);

#endif
