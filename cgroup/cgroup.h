/* corecarve: the cgroup-v2 manager.
 *
 * Reads go through the root prefix (so the audit can read captured trees);
 * writes go through libcgroup and only on the real host.  Three ways to make
 * a carve exclusive, chosen by probing the files the kernel offers:
 *   remote-partition  cpuset.cpus.exclusive exists (Linux >= 6.7)
 *   local-partition   the container's parent is a valid partition root
 *   cpuset-only       narrow cpuset.cpus and take the CPUs from peers
 */
#ifndef CC_CGROUP_H
#define CC_CGROUP_H

#include <hwloc.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>

#include "error.h"
#include "root.h"

#define CC_CGROUP_MOUNT "/sys/fs/cgroup"
#define CC_PARKED_NAME "corecarve.parked"

enum cc_cg_mode {
	CC_MODE_REMOTE,
	CC_MODE_LOCAL,
	CC_MODE_CPUSET_ONLY,
};

struct cc_cg {
	const struct cc_root *root;
	char mount[PATH_MAX];
	bool libcgroup_ready;
	FILE *trace; /* when set, every write is printed there (hook --verbose) */
	const char *fault; /* fault-injection step armed by the entry point (fault.h) */
};

/* One write that can be undone: what it was before. */
struct cc_cg_undo_entry {
	char cgroup[PATH_MAX];
	char file[64];
	char *old;
};

struct cc_cg_undo {
	int n, cap;
	struct cc_cg_undo_entry *e;
};

/* What to apply to one container cgroup. */
struct cc_cg_request {
	const char *cgroup;        /* e.g. /kubepods/pod1/ctr1 */
	hwloc_const_bitmap_t cpus;
	hwloc_const_bitmap_t parked; /* may be empty */
	hwloc_const_bitmap_t mems;   /* empty: leave cpuset.mems alone */
	hwloc_const_bitmap_t carved; /* every CPU carved on the node, this one included */
	bool isolated;             /* partition isolated rather than root */
	bool drop_quota;
	bool exclusive;            /* false: shared pool, only narrow cpuset.cpus */
	/* Write-ahead journal, may be NULL.  Called once the mode is known and
	 * before the first write a crash would leave behind, then again after
	 * each record appended to `changes` and before the write it describes:
	 * the caller persists the carve (mode, CPUs, changes so far), so a
	 * process killed half-way leaves a ledger that says what to undo.  A
	 * negative return (err set) aborts the apply, rolled back. */
	int (*journal)(void *arg, enum cc_cg_mode mode, struct cc_err *err);
	void *journal_arg;
};

int cc_cg_open(struct cc_cg *cg, const struct cc_root *root, struct cc_err *err);

/* Read a control file of a cgroup (relative to the mount). Caller frees. */
char *cc_cg_read(const struct cc_cg *cg, const char *cgroup, const char *file,
		 struct cc_err *err);
int cc_cg_read_cpus(const struct cc_cg *cg, const char *cgroup, const char *file,
		    hwloc_bitmap_t out, struct cc_err *err);
bool cc_cg_exists(const struct cc_cg *cg, const char *cgroup, const char *file);

/* Write a control file (libcgroup on the host).  With `undo`, the old value
 * is recorded first so cc_cg_rollback() can put it back. */
int cc_cg_write(struct cc_cg *cg, const char *cgroup, const char *file,
		const char *value, struct cc_cg_undo *undo, struct cc_err *err);

/* "/a/b/c" -> "/a/b"; "/a" -> "/". */
void cc_cg_parent(const char *cgroup, char *out, size_t len);
/* cpu.max: "max 100000" (quota -1) or "50000 100000"; -1 when malformed. */
int cc_cg_parse_cpu_max(const char *s, long long *quota, long long *period);
/* The cgroup holding the parked siblings of a carve at `cgroup`: one
 * first-level cgroup for remote partitions, beside the container (under
 * the same parent partition) for local ones. */
int cc_cg_parked_cgroup(enum cc_cg_mode mode, const char *cgroup, char *out, size_t len,
			struct cc_err *err);
/* A cpuset.cpus.partition value of a valid partition root. */
bool cc_cg_partition_valid(const char *s);
/* Create a cgroup directory (host only); existing is fine. */
int cc_cg_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err);

/* The mode the kernel offers for this cgroup. */
enum cc_cg_mode cc_cg_probe_mode(const struct cc_cg *cg, const char *cgroup);
const char *cc_cg_mode_name(enum cc_cg_mode m);
int cc_cg_mode_parse(const char *s, enum cc_cg_mode *m);

/* Apply a carve.  On failure everything written is rolled back and err
 * says why (a partition that reads "... invalid (reason)" quotes the reason).
 * `changes` receives the records needed to restore things outside the
 * container's own cgroup later (parent quotas, peer cpusets), each appended
 * before its write (see journal); after a failure it may hold records of
 * writes that were rolled back.  Refused on a root that is not the host,
 * and for a cgroup that is not a directory. */
int cc_cg_apply(struct cc_cg *cg, const struct cc_cg_request *req,
		enum cc_cg_mode *mode, json_t *changes, struct cc_err *err);

/* Undo a carve recorded earlier (the container cgroup may be gone).
 * `still_carved`: CPUs other carves keep, never handed back. `others`: the
 * cgroups of the remaining carves, so shared parent changes stay while a
 * carve below still needs them.  Best effort: every step is tried, the first
 * failure is reported. */
int cc_cg_release(struct cc_cg *cg, const char *cgroup, enum cc_cg_mode mode,
		  hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked,
		  json_t *changes, hwloc_const_bitmap_t still_carved,
		  const char *const *others, int nothers, struct cc_err *err);

void cc_cg_rollback(struct cc_cg *cg, struct cc_cg_undo *undo);
void cc_cg_undo_fini(struct cc_cg_undo *undo);

/* Prepare a parent cgroup as a partition root holding `cpus`, so that
 * containers below it can be local partitions on kernels without
 * cpuset.cpus.exclusive (corecarve init-parent). */
int cc_cg_init_parent(struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus,
		      hwloc_const_bitmap_t mems, struct cc_err *err);

/* Transient cgroups of `corecarve exec --carve` (transient.c). */
/* "populated" of cgroup.events: a process in the cgroup or below. */
int cc_cg_populated(const struct cc_cg *cg, const char *cgroup, bool *populated, struct cc_err *err);
/* Kill every process in the cgroup (cgroup.kill, else SIGKILL each one in
 * cgroup.procs) and wait until it is empty.  Host only; a missing cgroup
 * is empty. */
int cc_cg_empty(struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* Remove an empty cgroup; a missing one is fine.  Host only. */
int cc_cg_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err);

#endif
