/* corecarve: applying and undoing a carve on cgroup v2. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"
#include "oci.h"

int cc_cg_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	char path[PATH_MAX];

	if (!cg->root->is_host)
		return cc_err_set(err, EPERM, "mkdir %s: cgroups are only changed on the real host", cgroup);
	if (cc_path(path, sizeof(path), err, "%s%s", cg->mount, cgroup) < 0)
		return -1;
	return cc_root_mkdir(cg->root, path, 0755, err);
}

/* Write a cpu set to a file unless it already holds exactly that set. */
static int write_cpus(struct cc_cg *cg, const char *cgroup, const char *file,
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
static int make_partition(struct cc_cg *cg, const char *cgroup, bool isolated,
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
static int enable_controllers(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
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

/* Parked SMT siblings live in an empty isolated partition of their own: no
 * task of any tenant can be scheduled there, and the container's own
 * partition holds exactly the CPUs it runs on. */
static int park(struct cc_cg *cg, enum cc_cg_mode mode, const char *cgroup,
		hwloc_const_bitmap_t parked, struct cc_cg_undo *undo, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	char pk[PATH_MAX];

	if (cc_cg_parked_cgroup(mode, cgroup, pk, sizeof(pk), err) < 0)
		return -1;
	if (cc_cg_mkdir(cg, pk, err) < 0)
		return -1;
	if (cc_cg_read_cpus(cg, pk, "cpuset.cpus", cur, err) < 0)
		return -1;
	hwloc_bitmap_or(cur, cur, parked);
	if (mode == CC_MODE_REMOTE && write_cpus(cg, pk, "cpuset.cpus.exclusive", cur, undo, err) < 0)
		return cc_err_prefix(err, "park siblings");
	if (write_cpus(cg, pk, "cpuset.cpus", cur, undo, err) < 0)
		return cc_err_prefix(err, "park siblings");
	if (make_partition(cg, pk, true, undo, err) < 0)
		return cc_err_prefix(err, "park siblings");
	return 0;
}

static int unpark(struct cc_cg *cg, enum cc_cg_mode mode, const char *cgroup,
		  hwloc_const_bitmap_t parked, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	char pk[PATH_MAX];

	if (cc_cg_parked_cgroup(mode, cgroup, pk, sizeof(pk), err) < 0)
		return -1;
	if (!cc_cg_exists(cg, pk, NULL))
		return 0;
	if (cc_cg_read_cpus(cg, pk, "cpuset.cpus", cur, err) < 0)
		return -1;
	hwloc_bitmap_andnot(cur, cur, parked);
	if (hwloc_bitmap_iszero(cur)) {
		/* An empty partition is invalid: leave partition mode first. */
		if (cc_cg_write(cg, pk, "cpuset.cpus.partition", "member", NULL, err) < 0)
			return -1;
	}
	if (mode == CC_MODE_REMOTE && write_cpus(cg, pk, "cpuset.cpus.exclusive", cur, NULL, err) < 0)
		return -1;
	return write_cpus(cg, pk, "cpuset.cpus", cur, NULL, err);
}

/* Remote partitions draw their CPUs through cpuset.cpus.exclusive of every
 * ancestor below the root: widen top-down on apply, narrow bottom-up on
 * release (a parent's exclusive set must cover its children's). */
static int ancestors(const char *cgroup, char out[][PATH_MAX], int max)
{
	int n = 0;

	for (const char *p = strchr(cgroup + 1, '/'); p && n < max; p = strchr(p + 1, '/'))
		snprintf(out[n++], PATH_MAX, "%.*s", (int)(p - cgroup), cgroup);
	return n;
}

#define CC_MAX_DEPTH 32

/* The caller's write-ahead journal (cgroup.h): persist before writing. */
static int journal(const struct cc_cg_request *req, enum cc_cg_mode mode, struct cc_err *err)
{
	if (!req->journal)
		return 0;
	return req->journal(req->journal_arg, mode, err);
}

/* Append a restore record, then journal it, before the write it describes:
 * killed after the write, the record is on disk; killed before it, the
 * restore writes back the value that is still there. */
static int record_change(const struct cc_cg_request *req, enum cc_cg_mode mode, json_t *changes,
			 const char *type, const char *cgroup, const char *old, struct cc_err *err)
{
	if (json_array_append_new(changes, json_pack("{s:s, s:s, s:s}", "type", type, "cgroup", cgroup,
						     "old", old)) < 0)
		return cc_err_sys(err, ENOMEM, "changes");
	return journal(req, mode, err);
}

static int take_from_peers(struct cc_cg *cg, const struct cc_cg_request *req, hwloc_const_bitmap_t take,
			   struct cc_cg_undo *undo, json_t *changes, struct cc_err *err)
{
	const char *cgroup = req->cgroup;
	char parent[PATH_MAX], dir[PATH_MAX];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	const char *self = strrchr(cgroup, '/') + 1;

	cc_cg_parent(cgroup, parent, sizeof(parent));
	if (cc_path(dir, sizeof(dir), err, "%s%s", cg->mount, strcmp(parent, "/") ? parent : "") < 0)
		return -1;
	d = cc_root_opendir(cg->root, dir, err);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		_cleanup_bitmap_ hwloc_bitmap_t eff = hwloc_bitmap_alloc();
		_cleanup_free_ char *orig = NULL;
		char peer[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.' || !strcmp(de->d_name, self) ||
		    !strcmp(de->d_name, CC_PARKED_NAME))
			continue;
		if (cc_path(peer, sizeof(peer), err, "%s/%s", strcmp(parent, "/") ? parent : "", de->d_name) < 0)
			return -1;
		if (!cc_cg_exists(cg, peer, "cpuset.cpus"))
			continue;
		if (cc_cg_read_cpus(cg, peer, "cpuset.cpus.effective", eff, err) < 0)
			return -1;
		if (!hwloc_bitmap_intersects(eff, take))
			continue;
		orig = cc_cg_read(cg, peer, "cpuset.cpus", err);
		if (!orig)
			return -1;
		hwloc_bitmap_andnot(eff, eff, take);
		if (hwloc_bitmap_iszero(eff))
			return cc_err_set(err, ENOSPC, "cpuset-only mode: peer cgroup %s would be left without CPUs", peer);
		if (record_change(req, CC_MODE_CPUSET_ONLY, changes, "peer-cpuset", peer, orig, err) < 0 ||
		    write_cpus(cg, peer, "cpuset.cpus", eff, undo, err) < 0)
			return -1;
	}
	return 0;
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

static int drop_quotas(struct cc_cg *cg, const struct cc_cg_request *req, enum cc_cg_mode mode,
		       struct cc_cg_undo *undo, json_t *changes, struct cc_err *err)
{
	const char *cgroup = req->cgroup;
	int ncpus = hwloc_bitmap_weight(req->cpus);
	char anc[CC_MAX_DEPTH][PATH_MAX];
	int n = ancestors(cgroup, anc, CC_MAX_DEPTH);

	/* The container itself: always unlimited. */
	for (int i = n; i >= 0; i--) {
		const char *cgp = i == n ? cgroup : anc[i];
		_cleanup_free_ char *cur = NULL;
		long long quota, period;
		char val[64];

		if (!cc_cg_exists(cg, cgp, "cpu.max"))
			continue;
		cur = cc_cg_read(cg, cgp, "cpu.max", err);
		if (!cur)
			return -1;
		if (cc_cg_parse_cpu_max(cur, &quota, &period) < 0)
			return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", cgp, cur);
		if (quota < 0)
			continue;
		/* A parent (pod-level) quota matters only when it is smaller than
		 * the carve: then it would throttle the exclusive CPUs. */
		if (i != n && quota >= (long long)ncpus * period)
			continue;
		snprintf(val, sizeof(val), "max %lld", period);
		if (i != n && record_change(req, mode, changes, "cpu.max", cgp, cur, err) < 0)
			return -1;
		if (cc_cg_write(cg, cgp, "cpu.max", val, undo, err) < 0)
			return -1;
	}
	return 0;
}

/* The container's cgroup must be a directory below the mount, reached
 * without following a symbolic link: the path came from /proc/<pid>/cgroup,
 * and cgroupfs has no links, so a link on the way (a captured tree, a
 * planted path) is refused, as is a regular file where the cgroup should be.
 * One component at a time from the mount, each with O_NOFOLLOW. */
static int check_cgroup_dir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;
	const char *p = cgroup;

	if (!cc_cgroup_path_safe(cgroup))
		return cc_err_set(err, EINVAL, "cgroup path \"%.64s\" is not a safe absolute path", cgroup);
	fd = cc_root_openat(cg->root, cg->mount, O_PATH | O_DIRECTORY, 0, err);
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

int cc_cg_apply(struct cc_cg *cg, const struct cc_cg_request *req,
		enum cc_cg_mode *modep, json_t *changes, struct cc_err *err)
{
	struct cc_cg_undo undo = { 0 };
	char anc[CC_MAX_DEPTH][PATH_MAX];
	enum cc_cg_mode mode = CC_MODE_CPUSET_ONLY;
	int nanc;

	if (check_cgroup_dir(cg, req->cgroup, err) < 0)
		return -1;
	/* Before the first write (controllers): nothing half-applied. */
	if (!cg->root->is_host)
		return cc_err_set(err, EPERM, "cgroup %s: cgroups are only changed on the real host (root is %s)",
				  req->cgroup, cg->root->path);
	nanc = ancestors(req->cgroup, anc, CC_MAX_DEPTH);
	if (nanc >= CC_MAX_DEPTH)
		return cc_err_set(err, EINVAL, "cgroup %s is nested deeper than %d levels", req->cgroup, CC_MAX_DEPTH);
	if (enable_controllers(cg, req->cgroup, err) < 0)
		goto fail;
	if (req->exclusive)
		mode = cc_cg_probe_mode(cg, req->cgroup);
	/* Enabling controllers is never undone; everything from here is. */
	if (journal(req, mode, err) < 0)
		goto fail;

	if (req->exclusive && !hwloc_bitmap_iszero(req->parked) && mode != CC_MODE_CPUSET_ONLY &&
	    park(cg, mode, req->cgroup, req->parked, &undo, err) < 0)
		goto fail;

	switch (mode) {
	case CC_MODE_REMOTE:
		for (int i = 0; i < nanc; i++) {
			_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();

			if (cc_cg_read_cpus(cg, anc[i], "cpuset.cpus.exclusive", x, err) < 0)
				goto fail;
			hwloc_bitmap_or(x, x, req->cpus);
			if (write_cpus(cg, anc[i], "cpuset.cpus.exclusive", x, &undo, err) < 0)
				goto fail;
		}
		cc_fault(cg->fault, "mid-cgroup-write");
		if (write_cpus(cg, req->cgroup, "cpuset.cpus", req->cpus, &undo, err) < 0 ||
		    write_cpus(cg, req->cgroup, "cpuset.cpus.exclusive", req->cpus, &undo, err) < 0 ||
		    make_partition(cg, req->cgroup, req->isolated, &undo, err) < 0)
			goto fail;
		break;
	case CC_MODE_LOCAL:
		if (write_cpus(cg, req->cgroup, "cpuset.cpus", req->cpus, &undo, err) < 0)
			goto fail;
		cc_fault(cg->fault, "mid-cgroup-write");
		if (make_partition(cg, req->cgroup, req->isolated, &undo, err) < 0)
			goto fail;
		break;
	case CC_MODE_CPUSET_ONLY:
		if (write_cpus(cg, req->cgroup, "cpuset.cpus", req->cpus, &undo, err) < 0)
			goto fail;
		if (req->exclusive) {
			_cleanup_bitmap_ hwloc_bitmap_t take = hwloc_bitmap_alloc();

			hwloc_bitmap_or(take, req->cpus, req->parked);
			if (take_from_peers(cg, req, take, &undo, changes, err) < 0)
				goto fail;
		}
		cc_fault(cg->fault, "mid-cgroup-write");
		break;
	}
	if (!hwloc_bitmap_iszero(req->mems) &&
	    write_cpus(cg, req->cgroup, "cpuset.mems", req->mems, &undo, err) < 0)
		goto fail;
	if (req->drop_quota && drop_quotas(cg, req, mode, &undo, changes, err) < 0)
		goto fail;
	cc_cg_undo_fini(&undo);
	*modep = mode;
	return 0;
fail:
	cc_err_prefix(err, "%s (%s)", req->cgroup, cc_cg_mode_name(mode));
	cc_cg_rollback(cg, &undo);
	return -1;
}

static bool needed_below(const char *cgroup, const char *const *others, int nothers)
{
	size_t n = strlen(cgroup);

	for (int i = 0; i < nothers; i++)
		if (!strncmp(others[i], cgroup, n) && others[i][n] == '/')
			return true;
	return false;
}

static void keep_first(struct cc_err *err, struct cc_err *step)
{
	if (cc_err_isset(step) && !cc_err_isset(err))
		*err = *step;
	cc_err_clear(step);
}

int cc_cg_release(struct cc_cg *cg, const char *cgroup, enum cc_cg_mode mode,
		  hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked,
		  json_t *changes, hwloc_const_bitmap_t still_carved,
		  const char *const *others, int nothers, struct cc_err *err)
{
	struct cc_err step = CC_ERR_INIT;
	char anc[CC_MAX_DEPTH][PATH_MAX];
	int nanc = ancestors(cgroup, anc, CC_MAX_DEPTH);
	size_t i;
	json_t *c;

	/* The container cgroup is usually gone by poststop; when it is still
	 * there (a failed start, a repair), hand its CPUs back first. */
	if (mode != CC_MODE_CPUSET_ONLY && cc_cg_exists(cg, cgroup, "cpuset.cpus.partition")) {
		cc_cg_write(cg, cgroup, "cpuset.cpus.partition", "member", NULL, &step);
		keep_first(err, &step);
		if (mode == CC_MODE_REMOTE) {
			cc_cg_write(cg, cgroup, "cpuset.cpus.exclusive", "", NULL, &step);
			keep_first(err, &step);
		}
	}
	if (mode == CC_MODE_REMOTE) {
		for (int k = nanc - 1; k >= 0; k--) {
			_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();

			if (!cc_cg_exists(cg, anc[k], "cpuset.cpus.exclusive"))
				continue;
			if (cc_cg_read_cpus(cg, anc[k], "cpuset.cpus.exclusive", x, &step) == 0) {
				hwloc_bitmap_andnot(x, x, cpus);
				write_cpus(cg, anc[k], "cpuset.cpus.exclusive", x, NULL, &step);
			}
			keep_first(err, &step);
		}
	}
	if (mode != CC_MODE_CPUSET_ONLY && parked && !hwloc_bitmap_iszero(parked)) {
		unpark(cg, mode, cgroup, parked, &step);
		keep_first(err, &step);
	}
	for (i = json_array_size(changes); changes && i-- > 0;) {
		const char *type, *cgp, *old;

		c = json_array_get(changes, i);
		if (json_unpack(c, "{s:s, s:s, s:s}", "type", &type, "cgroup", &cgp, "old", &old) < 0)
			continue;
		if (!cc_cg_exists(cg, cgp, NULL))
			continue;
		if (!strcmp(type, "cpu.max")) {
			if (needed_below(cgp, others, nothers))
				continue;
			cc_cg_write(cg, cgp, "cpu.max", old, NULL, &step);
		} else if (!strcmp(type, "peer-cpuset")) {
			_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
			char parent[PATH_MAX];

			/* Give the peer back its CPUs, except those other carves
			 * still hold; an inherited ("") set is kept inherited only
			 * when nothing under the parent is still carved. */
			if (*old) {
				if (cc_cpulist_parse(old, set, "changes.old", &step) == 0) {
					hwloc_bitmap_andnot(set, set, still_carved);
					write_cpus(cg, cgp, "cpuset.cpus", set, NULL, &step);
				}
			} else {
				cc_cg_parent(cgp, parent, sizeof(parent));
				if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", set, &step) == 0) {
					/* Linux 6.1 refuses an empty cpuset.cpus on a cgroup
					 * with tasks (ENOSPC) although it means "inherit":
					 * then write the parent's CPUs explicitly. */
					if (hwloc_bitmap_intersects(set, still_carved) ||
					    cc_cg_write(cg, cgp, "cpuset.cpus", "", NULL, &step) < 0) {
						cc_err_clear(&step);
						hwloc_bitmap_andnot(set, set, still_carved);
						write_cpus(cg, cgp, "cpuset.cpus", set, NULL, &step);
					}
				}
			}
		}
		keep_first(err, &step);
	}
	return cc_err_isset(err) ? -1 : 0;
}

int cc_cg_init_parent(struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus,
		      hwloc_const_bitmap_t mems, struct cc_err *err)
{
	struct cc_cg_undo undo = { 0 };

	if (cc_cg_mkdir(cg, cgroup, err) < 0)
		return -1;
	if (enable_controllers(cg, cgroup, err) < 0)
		goto fail;
	if (mems && !hwloc_bitmap_iszero(mems) &&
	    write_cpus(cg, cgroup, "cpuset.mems", mems, &undo, err) < 0)
		goto fail;
	if (write_cpus(cg, cgroup, "cpuset.cpus", cpus, &undo, err) < 0)
		goto fail;
	if (cc_cg_exists(cg, cgroup, "cpuset.cpus.exclusive") &&
	    write_cpus(cg, cgroup, "cpuset.cpus.exclusive", cpus, &undo, err) < 0)
		goto fail;
	if (make_partition(cg, cgroup, false, &undo, err) < 0)
		goto fail;
	/* Children must be able to use cpuset too. */
	if (cc_cg_write(cg, cgroup, "cgroup.subtree_control", "+cpuset", NULL, err) < 0)
		goto fail;
	cc_cg_undo_fini(&undo);
	return 0;
fail:
	cc_err_prefix(err, "init-parent %s", cgroup);
	cc_cg_rollback(cg, &undo);
	return -1;
}
