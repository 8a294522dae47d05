/* corecarve: `corecarve exec` — class-aware taskset + numactl for processes
 * outside containers.
 *
 * Without a carve the command runs on CPUs of the placement class (whole
 * cores, as the class's smt rule says: one thread per core under isolate,
 * every thread under full), with the class's memory policy, and nothing is
 * recorded.  With a carve (cc_exec_carved) it gets the same exclusive
 * cpuset partition a container would, in a transient cgroup, through the
 * same ledger and the same machinery as the hook (container.h), released
 * when the command exits.
 *
 * The decision is pure (cc_exec_place); the actions that cannot be
 * redirected to a --root (sched_setaffinity, set_mempolicy, seccomp_load,
 * cgroup writes) happen only on the real host. */
#ifndef CC_EXEC_H
#define CC_EXEC_H

#include <hwloc.h>
#include <stdbool.h>
#include <sys/types.h>

#include "alloc.h"
#include "ctx.h"
#include "error.h"
#include "policy.h"
#include "topo.h"

struct cc_create_result; /* container.h: what cc_exec_carved carved */

/* Where transient cgroups of carved commands are made, below the cgroup2
 * mount; each command gets <parent>/exec-<pid>. */
#define CC_EXEC_CGROUP_PARENT "/corecarve.exec"

/* Choose the CPUs of an uncarved command.  `cpus` > 0: that many, packed
 * by the allocator as a carve would be (minShared does not apply: nothing
 * is taken from the shared pool).  `cpus` == 0: every free CPU of the
 * class — the shared pool of its core class (reserved and carved CPUs left
 * out), reduced to whole cores by the class's smt rule.  `taken` holds the
 * carved CPUs (the ledger).  The decision's `exclusive` is false: nothing
 * is carved. */
int cc_exec_place(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken,
		  const char *class_name, int cpus, struct cc_decision *out, struct cc_err *err);

/* What the command itself gets, in this process, before it execs.  Only on
 * the real host (the caller checks). */
struct cc_exec_self {
	hwloc_const_bitmap_t cpus;  /* sched_setaffinity; empty: leave */
	hwloc_const_bitmap_t mems;  /* NUMA nodes; empty: leave the memory policy */
	enum cc_memory memory;      /* local: MPOL_BIND, spread: MPOL_INTERLEAVE, any: leave */
	bool lock_affinity;         /* seccomp: sched_setaffinity fails with EPERM */
};

/* Affinity, then memory policy, then the seccomp filter (last: it would
 * refuse our own sched_setaffinity).  All survive execve. */
int cc_exec_apply_self(const struct cc_exec_self *self, struct cc_err *err);

/* Install only the --lock-affinity filter (libseccomp). */
int cc_exec_lock_affinity(struct cc_err *err);

/* Run `argv` carved: fork it (held before exec), move it into a transient
 * cgroup <cgroup_parent>/exec-<pid>, carve with the hook's machinery
 * (cc_carve_create, kind "exec", id "exec:<pid>"), let it exec with the
 * carve's memory policy (and the seccomp filter with lock_affinity), wait,
 * then kill what it left in the cgroup, release the carve and remove the
 * cgroup.  SIGTERM and SIGHUP are passed on to the command; SIGINT and
 * SIGQUIT are left to it (they reach the whole foreground group).
 * Returns 0 with *status the command's wait status and *res the carve, or
 * -1 with err (nothing left carved): err->code ENOSPC is a refusal;
 * ENOENT/EACCES from execvp are reported as "CMD: <reason>" after the
 * release. */
struct cc_exec_carve {
	const char *class_name;
	int cpus;
	const char *cgroup_parent; /* NULL: CC_EXEC_CGROUP_PARENT */
	bool lock_affinity;
};
int cc_exec_carved(const struct cc_ctx *ctx, const struct cc_exec_carve *opt, char *const argv[],
		   int *status, struct cc_create_result *res, struct cc_err *err);

#endif
