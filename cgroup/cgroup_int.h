/* corecarve: what the cgroup manager's files share, private to cgroup/.
 *
 *   cgroup.c     the mount, writes through the ops, modes
 *   io.c         the one I/O path: every file beneath the mount's fd
 *   host.c       the host's ops (io.c's writes, systemd told of slices)
 *   partition.c  cpu sets, partitions, controllers, the directory check,
 *                init-parent
 *   carve.c      a carve's record rules over the node records (kinds,
 *                owners, keys, values) and reading
 *   carve_plan.c, carve_apply.c, carve_undo.c, carve_repair.c
 *                its plan, apply, undo and the audit's repairs (what they
 *                share with carve.c: the last section below)
 *   transient.c  exec's transient cgroups, and what gc asks of a cgroup */
#ifndef CC_CGROUP_INT_H
#define CC_CGROUP_INT_H

#include <dirent.h>

#include "cgroup.h"

#define CG_MAX_DEPTH 32

/* ---- the one I/O path (io.c) ---- */
/* `cgroup` (with `file`, or the directory itself for NULL) opened beneath
 * the mount; errors worded by cg_io_fail for `op` (and `value`, NULL for
 * none). */
int cg_open(const struct cc_cg *cg, const char *cgroup, const char *file, int flags, const char *op,
	    const char *value, struct cc_err *err);
int cg_write_file(const struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
		  struct cc_err *err);
int cg_mkdir_beneath(const struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* Already gone is success. */
int cg_rmdir_beneath(const struct cc_cg *cg, const char *cgroup, struct cc_err *err);

/* Write a cpu set to a file unless it already holds exactly that set. */
int cg_write_cpus(struct cc_cg *cg, const char *cgroup, const char *file, hwloc_const_bitmap_t set,
		  struct cc_cg_undo *undo, struct cc_err *err);
/* Make `cgroup` a partition (isolated or root) and read it back. */
int cg_make_partition(struct cc_cg *cg, const char *cgroup, bool isolated, struct cc_cg_undo *undo,
		      struct cc_err *err);
/* +cpuset (and +cpu where offered) in the subtree_control of every cgroup
 * above `cgroup`. */
int cg_enable_controllers(struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* The ancestors of `cgroup` below the root, top-down ("/a", "/a/b" for
 * "/a/b/c"); at most `max`. */
int cg_ancestors(const char *cgroup, char out[][PATH_MAX], int max);
/* A directory below the mount, reached without a symbolic link. */
int cg_check_dir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err);

/* The sibling cgroups of `cgroup` (its parent's other children), one
 * path at a time: open, then next until it returns 0 (1: one more in
 * `out`; -1 with err set), then close. */
struct cg_siblings {
	DIR *d;
	char parent[PATH_MAX];
	const char *self; /* cgroup's own name, which is skipped */
};
int cg_siblings_open(const struct cc_cg *cg, const char *cgroup, struct cg_siblings *it, struct cc_err *err);
int cg_siblings_next(struct cg_siblings *it, char *out, size_t len, struct cc_err *err);
void cg_siblings_close(struct cg_siblings *it);
#define _cleanup_siblings_ __attribute__((cleanup(cg_siblings_close)))

/* ==== a carve's pieces (carve*.c) ==== */
enum rec_kind { K_EXCLUSIVE, K_PARKED, K_PEER, K_QUOTA, K_SHARED, K_UNKNOWN };

enum step_op {
	STEP_WRITE,     /* value into file */
	STEP_MKDIR,     /* the parked cgroup, made the first time */
	STEP_PARTITION, /* value "root" or "isolated", read back */
	STEP_FAULT,     /* "mid-cgroup-write" (fault.h): half of the carve written */
};

struct cc_cg_step {
	enum step_op op;
	char *cgroup;
	char file[40];
	char *value;
	char *old;       /* the carve's own files: the value before, for the undo of a failed apply */
	char *rec;       /* the record this write gives its `set`; NULL for the carve's own files */
};

struct planner {
	struct cc_cg *cg;
	struct cc_cg_carve *c;
	const struct cc_cg_others *others;
	struct cc_noderecs *recs;
	struct cc_cg_plan *plan;
	bool has_exclusive; /* the kernel has cpuset.cpus.exclusive (Linux >= 6.7) */
};

/* ---- record rules (carve.c) ---- */
enum rec_kind cg_rec_kind(const struct cc_noderec *r);
/* The CPUs a cpuset record's owners and holder took, added to `all`. */
int cg_rec_taken(const struct cc_noderec *r, hwloc_bitmap_t all, struct cc_err *err);
bool cg_held_kind(enum rec_kind k);
hwloc_const_bitmap_t cg_held_share(const struct cc_cg_carve *c, enum rec_kind k);
int cg_held_update(struct cc_noderec *r, hwloc_const_bitmap_t share, bool add, struct cc_err *err);
bool cg_owns(const struct cc_noderec *r, const struct cc_cg_carve *c);
/* A line for the hook's log; a note only with --verbose. */
void cg_msg(struct cc_cg_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_note(struct cc_cg_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cg_rec_key(char *buf, size_t len, const char *cgroup, const char *file, struct cc_err *err);
int cg_rec_split(const struct cc_noderec *r, char *cgroup, size_t len, const char **file, struct cc_err *err);
int cg_parse_cpus(const char *s, hwloc_bitmap_t out, const struct cc_noderec *r, const char *field,
		  struct cc_err *err);
bool cg_same(enum rec_kind k, const char *a, const char *b);
int cg_read_opt(const struct cc_cg *cg, const char *cgroup, const char *file, char **out, struct cc_err *err);

/* ---- the plan (carve_plan.c) ---- */
struct cc_noderec *cg_take_record(struct planner *p, const char *key, enum rec_kind k, const char *cur,
				  bool create, struct cc_err *err);

/* ---- apply (carve_apply.c) ---- */
bool cg_is_cpuset_file(const char *file);
int cg_put(struct cc_cg *cg, const char *cgroup, const char *file, const char *value, struct cc_err *err);

#endif
