/* corecarve doctor: is this node ready for carving?
 *
 * Each check is a small function that reads what it needs through the root
 * (so a captured tree under --root can be examined) and fills one item:
 * what was found, why it matters, and how to fix it.  Checks never write
 * and never fail as functions: a file they cannot read is itself a finding.
 * The worst status decides the exit code: 0 ready, 1 warnings, 2 not usable.
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
};

#define CC_DOCTOR_TEXT_MAX 512

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
	const struct cc_ledger_lock *lock; /* how its lock is waited for; NULL: ledger.h's defaults */
};

struct cc_doctor_check {
	const char *id;
	void (*run)(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it);
};

/* Every check, in report order; terminated by { NULL, NULL }. */
extern const struct cc_doctor_check cc_doctor_checks[];

#define CC_DOCTOR_MAX 16

struct cc_doctor_report {
	int n;
	struct cc_doctor_item items[CC_DOCTOR_MAX];
};

void cc_doctor_run(const struct cc_doctor_ctx *ctx, struct cc_doctor_report *out);
/* One check by id; -1 with err set for an unknown id. */
int cc_doctor_run_one(const struct cc_doctor_ctx *ctx, const char *id, struct cc_doctor_item *it,
		      struct cc_err *err);
/* 0 ready, 1 warnings, 2 not usable. */
int cc_doctor_exit_code(const struct cc_doctor_report *r);
const char *cc_doctor_status_name(enum cc_doctor_status s);
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

#endif
