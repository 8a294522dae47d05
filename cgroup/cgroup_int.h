/* corecarve: what the cgroup manager's files share, private to cgroup/.
 *
 *   cgroup.c     the mount, reads, writes through the ops, modes
 *   host.c       the host's ops (libcgroup)
 *   partition.c  cpu sets, partitions, controllers, the directory check,
 *                init-parent
 *   carve.c      a carve: plan, apply, undo over the node records
 *   transient.c  exec's transient cgroups */
#ifndef CC_CGROUP_INT_H
#define CC_CGROUP_INT_H

#include <dirent.h>

#include "cgroup.h"

#define CG_MAX_DEPTH 32

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

#endif
