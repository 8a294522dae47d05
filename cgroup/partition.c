/* corecarve: the cgroup-v2 pieces a carve is built from (cgroup_int.h):
 * cpu sets written only when they differ, partitions read back, the
 * controllers on a path, the cgroup directory checked, and init-parent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"
#include "root.h"

/* Write a cpu set to a file unless it already holds exactly that set. */
int cg_write_cpus(struct cc_cg *cg, const char *cgroup, const char *file,
		      hwloc_const_bitmap_t set, struct cc_cg_undo *undo, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;

	if (!cur)
		return cc_err_sys(err, ENOMEM, "bitmap");
	if (cc_cg_read_cpus(cg, cgroup, file, cur, err) < 0)
		return -1;
	if (hwloc_bitmap_isequal(cur, set))
		return 0;
	s = cc_cpulist_format(set);
	if (!s)
		return cc_err_sys(err, ENOMEM, "bitmap");
	return cc_cg_write(cg, cgroup, file, s, undo, err);
}

/* Make `cgroup` a partition of the given kind and read it back: the kernel
 * accepts the write and then reports "root invalid (reason)" when it cannot
 * honour it, so the read-back is the real answer. */
int cg_make_partition(struct cc_cg *cg, const char *cgroup, bool isolated,
			  struct cc_cg_undo *undo, struct cc_err *err)
{
	const char *want = isolated ? "isolated" : "root";
	_cleanup_free_ char *got = NULL;

	got = cc_cg_read(cg, cgroup, "cpuset.cpus.partition", err);
	if (!got)
		return -1;
	if (strcmp(got, want) != 0) {
		/* Linux 6.12 refuses to turn "root invalid" straight back into
		 * "root" once the conflict is gone ("Invalid cpu list in
		 * cpuset.cpus.exclusive"); through "member" it re-validates (seen
		 * in the e2e guest; audit --fix re-arms partitions this way). */
		bool invalid = strstr(got, "invalid") != NULL;

		free(got);
		got = NULL;
		if (invalid && cc_cg_write(cg, cgroup, "cpuset.cpus.partition", "member", undo, err) < 0)
			return -1;
		if (cc_cg_write(cg, cgroup, "cpuset.cpus.partition", want, undo, err) < 0)
			return -1;
		got = cc_cg_read(cg, cgroup, "cpuset.cpus.partition", err);
		if (!got)
			return -1;
	}
	if (!cc_cg_partition_valid(got))
		return cc_err_set(err, EINVAL, "%s: cpuset.cpus.partition reads \"%s\"", cgroup, got);
	return 0;
}

/* Every cgroup on the path gets cpuset and cpu in its children's controllers
 * (runtimes usually did this already; the cgroup v2 "no internal process"
 * rule does not apply to controller enabling on the path). */
int cg_enable_controllers(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	char prefix[PATH_MAX];
	const char *p = cgroup;

	for (;;) {
		_cleanup_free_ char *ctl = NULL;
		const char *next = strchr(p + 1, '/');
		size_t n = next ? (size_t)(next - cgroup) : strlen(cgroup);
		char parent[PATH_MAX];

		snprintf(prefix, sizeof(prefix), "%.*s", (int)n, cgroup);
		cc_cg_parent(prefix, parent, sizeof(parent));
		ctl = cc_cg_read(cg, prefix, "cgroup.controllers", err);
		if (!ctl)
			return -1;
		if (!strstr(ctl, "cpuset")) {
			if (cc_cg_write(cg, parent, "cgroup.subtree_control", "+cpuset", NULL, err) < 0)
				return cc_err_prefix(err, "enable cpuset for %s", prefix);
		}
		if (!strstr(ctl, "cpu ") && !strstr(ctl, " cpu") && strcmp(ctl, "cpu")) {
			struct cc_err ignored = CC_ERR_INIT;

			/* cpu is needed only to drop quotas; its absence is not fatal. */
			cc_cg_write(cg, parent, "cgroup.subtree_control", "+cpu", NULL, &ignored);
		}
		if (!next)
			return 0;
		p = next;
	}
}

int cc_cg_parked_cgroup(enum cc_cg_mode mode, const char *cgroup, char *out, size_t len,
			struct cc_err *err)
{
	char parent[PATH_MAX];

	if (mode == CC_MODE_REMOTE)
		return cc_path(out, len, err, "/%s", CC_PARKED_NAME);
	cc_cg_parent(cgroup, parent, sizeof(parent));
	return cc_path(out, len, err, "%s/%s", strcmp(parent, "/") ? parent : "", CC_PARKED_NAME);
}

/* Remote partitions draw their CPUs through cpuset.cpus.exclusive of every
 * ancestor below the root: widen top-down on apply, narrow bottom-up on
 * release (a parent's exclusive set must cover its children's). */
int cg_ancestors(const char *cgroup, char out[][PATH_MAX], int max)
{
	int n = 0;

	for (const char *p = strchr(cgroup + 1, '/'); p && n < max; p = strchr(p + 1, '/'))
		snprintf(out[n++], PATH_MAX, "%.*s", (int)(p - cgroup), cgroup);
	return n;
}

int cc_cg_parse_cpu_max(const char *s, long long *quota, long long *period)
{
	char q[32];

	if (sscanf(s, "%31s %lld", q, period) != 2 || *period <= 0)
		return -1;
	if (!strcmp(q, "max")) {
		*quota = -1;
		return 0;
	}
	char *end;
	*quota = strtoll(q, &end, 10);
	return (*end || *quota <= 0) ? -1 : 0;
}

/* The container's cgroup must be a directory below the mount, reached
 * without following a symbolic link: the path came from /proc/<pid>/cgroup,
 * and cgroupfs has no links, so a link on the way (a captured tree, a
 * planted path) is refused, as is a regular file where the cgroup should be.
 * One component at a time from the mount, each with O_NOFOLLOW. */
int cg_check_dir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;
	const char *p = cgroup;

	if (!cc_cgroup_path_safe(cgroup))
		return cc_err_set(err, EINVAL, "cgroup path \"%.64s\" is not a safe absolute path", cgroup);
	fd = cg_open(cg, "/", NULL, O_PATH | O_DIRECTORY, "open", NULL, err);
	if (fd < 0)
		return -1;
	while (*p) {
		char name[NAME_MAX + 1];
		size_t n;
		struct stat st;
		int next;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n > NAME_MAX)
			return cc_err_set(err, ENAMETOOLONG, "cgroup %s: a component is longer than %d bytes",
					  cgroup, NAME_MAX);
		memcpy(name, p, n);
		name[n] = '\0';
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int e = errno;

			if (e == ENOENT)
				return cc_err_set(err, ENOENT, "cgroup %s does not exist", cgroup);
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				return cc_err_set(err, ELOOP, "cgroup %s: %.*s is a symbolic link; refusing it",
						  cgroup, (int)(p + n - cgroup), cgroup);
			if (e == ENOTDIR)
				return cc_err_set(err, ENOTDIR, "cgroup %s: %.*s is not a directory", cgroup,
						  (int)(p + n - cgroup), cgroup);
			return cc_err_sys(err, e, "cgroup %s", cgroup);
		}
		close(fd);
		fd = next;
		p += n;
	}
	return 0;
}

int cg_siblings_open(const struct cc_cg *cg, const char *cgroup, struct cg_siblings *it, struct cc_err *err)
{
	it->d = NULL;
	it->self = strrchr(cgroup, '/') + 1;
	cc_cg_parent(cgroup, it->parent, sizeof(it->parent));
	it->d = cc_cg_opendir(cg, it->parent, err);
	return it->d ? 0 : -1;
}

int cg_siblings_next(struct cg_siblings *it, char *out, size_t len, struct cc_err *err)
{
	struct dirent *de;

	while ((de = readdir(it->d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || !strcmp(de->d_name, it->self))
			continue;
		if (cc_path(out, len, err, "%s/%s", strcmp(it->parent, "/") ? it->parent : "", de->d_name) < 0)
			return -1;
		return 1;
	}
	return 0;
}

void cg_siblings_close(struct cg_siblings *it)
{
	if (it->d)
		closedir(it->d);
	it->d = NULL;
}

/* The siblings of `cgroup` whose own cpuset.cpus (an explicit list, not
 * an inherited one) holds some of `cpus`, "/a (cpuset.cpus 0-15), ...":
 * before 6.7 a partition root may not share a CPU with one, and the
 * kernel's "Cpu list in cpuset.cpus not exclusive" does not say which.
 * Nothing when there is none or the parent cannot be read. */
static void overlapping_siblings(const struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus, char *buf,
				 size_t len)
{
	_cleanup_bitmap_ hwloc_bitmap_t own = hwloc_bitmap_alloc();
	struct cc_err ignored = CC_ERR_INIT;
	struct cg_siblings it;
	char sib[PATH_MAX];
	size_t off = 0;

	buf[0] = '\0';
	if (!own || cg_siblings_open(cg, cgroup, &it, &ignored) < 0)
		return;
	while (off < len && cg_siblings_next(&it, sib, sizeof(sib), &ignored) > 0) {
		_cleanup_free_ char *list = cc_cg_read(cg, sib, "cpuset.cpus", &ignored);

		cc_err_clear(&ignored);
		if (!list || !*list || cc_cpulist_parse(list, own, sib, &ignored) < 0 || !hwloc_bitmap_intersects(own, cpus)) {
			cc_err_clear(&ignored);
			continue;
		}
		off += (size_t)snprintf(buf + off, len - off, "%s%s (cpuset.cpus %s)", off ? ", " : "", sib, list);
	}
	cg_siblings_close(&it);
}

/* init-parent's writes, each journaled in `undo`. */
static int init_parent_writes(struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus,
			      hwloc_const_bitmap_t mems, struct cc_cg_undo *undo, struct cc_err *err)
{
	if (cg_enable_controllers(cg, cgroup, err) < 0)
		return -1;
	if (mems && !hwloc_bitmap_iszero(mems) && cg_write_cpus(cg, cgroup, "cpuset.mems", mems, undo, err) < 0)
		return -1;
	if (cg_write_cpus(cg, cgroup, "cpuset.cpus", cpus, undo, err) < 0)
		return -1;
	if (cc_cg_exists(cg, cgroup, "cpuset.cpus.exclusive") &&
	    cg_write_cpus(cg, cgroup, "cpuset.cpus.exclusive", cpus, undo, err) < 0)
		return -1;
	if (cg_make_partition(cg, cgroup, false, undo, err) < 0) {
		char sibs[512];

		if (strstr(err->msg, "not exclusive")) {
			overlapping_siblings(cg, cgroup, cpus, sibs, sizeof(sibs));
			if (sibs[0]) {
				size_t n = strlen(err->msg);

				snprintf(err->msg + n, sizeof(err->msg) - n,
					 "; siblings whose own cpuset.cpus holds some of its CPUs: %s (write them a "
					 "list without those CPUs, or make the partition parent before they get one)",
					 sibs);
			}
		}
		return -1;
	}
	/* Children must be able to use cpuset too. */
	return cc_cg_write(cg, cgroup, "cgroup.subtree_control", "+cpuset", NULL, err);
}

/* `what` and its reason after the message, once: "...; <what> failed too (<reason>)". */
static void err_append(struct cc_err *err, const char *what, const struct cc_err *also)
{
	size_t n = strlen(err->msg);

	snprintf(err->msg + n, sizeof(err->msg) - n, "; %s failed too (%s)", what, also->msg);
}

int cc_cg_init_parent(struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus,
		      hwloc_const_bitmap_t mems, struct cc_err *err)
{
	struct cc_cg_undo undo = { 0 };
	struct cc_err rb = CC_ERR_INIT;
	/* What it makes it removes again on failure; one that was there
	 * (made by hand, or by systemd for the slice) only gets its files back. */
	bool made = !cc_cg_exists(cg, cgroup, NULL);

	if (cc_cg_mkdir(cg, cgroup, err) < 0)
		return cc_err_prefix(err, "init-parent");
	if (init_parent_writes(cg, cgroup, cpus, mems, &undo, err) == 0) {
		cc_cg_undo_fini(&undo);
		return 0;
	}
	/* The messages below name the cgroup already, most of them first. */
	if (strncmp(err->msg, cgroup, strlen(cgroup)) || err->msg[strlen(cgroup)] != ':')
		cc_err_prefix(err, "init-parent %s", cgroup);
	else
		cc_err_prefix(err, "init-parent");
	if (cc_cg_rollback(cg, &undo, &rb) < 0)
		err_append(err, "putting back what was written", &rb);
	cc_err_clear(&rb);
	if (made && cc_cg_rmdir(cg, cgroup, &rb) < 0)
		err_append(err, "removing the cgroup it made", &rb);
	return -1;
}
