#define _GNU_SOURCE
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "systemctl.h"

/* Why the cpuset controller is not on the unified hierarchy, from
 * libcgroup's reading of the host's mount table: it knows the v1, hybrid
 * and unified layouts, which is what this refusal has to name. */
static void where_cpuset_is(char *buf, size_t len)
{
	char *mnt = NULL;

	buf[0] = '\0';
	if (cgroup_init() != 0 || cgroup_get_subsys_mount_point("cpuset", &mnt) != 0 || !mnt)
		return;
	if (strcmp(mnt, CC_CGROUP_MOUNT))
		snprintf(buf, len, " (the host mounts the cpuset controller at %s, a cgroup v1 hierarchy: boot with "
			 "systemd.unified_cgroup_hierarchy=1)", mnt);
	free(mnt);
}

int cc_cg_open(struct cc_cg *cg, const struct cc_root *root, struct cc_err *err)
{
	_cleanup_free_ char *controllers = NULL;
	char why[PATH_MAX + 128] = "";

	memset(cg, 0, sizeof(*cg));
	cg->root = root;
	snprintf(cg->mount, sizeof(cg->mount), "%s", CC_CGROUP_MOUNT);
	cg->mountfd = cc_root_open_nofollow(root, cg->mount, O_PATH | O_DIRECTORY, err);
	controllers = cg->mountfd < 0 ? NULL : cc_cg_read(cg, "/", "cgroup.controllers", err);
	if (!controllers || !strstr(controllers, "cpuset")) {
		if (root->is_host)
			where_cpuset_is(why, sizeof(why));
		cc_err_clear(err);
		if (!controllers)
			cc_err_set(err, ENOTSUP, "%s is not a cgroup v2 mount (no cgroup.controllers): corecarve needs "
				   "the unified hierarchy%s", cg->mount, why);
		else
			cc_err_set(err, ENOTSUP, "%s: the cpuset controller is not available in cgroup v2 (controllers: "
				   "%s)%s", cg->mount, controllers, why);
		cc_cg_close(cg);
		return -1;
	}
	/* Actions that cannot be redirected happen on the real host only. */
	cg->ops = root->is_host ? &cc_cg_host_ops : NULL;
	cg->systemd = cc_systemd_booted(root);
	return 0;
}

void cc_cg_close(struct cc_cg *cg)
{
	if (cg->mountfd >= 0)
		close(cg->mountfd);
	cg->mountfd = -1;
}

void cc_cg_use(struct cc_cg *cg, const struct cc_cg_ops *ops, void *arg)
{
	cg->ops = ops;
	cg->ops_arg = arg;
}

int cc_cg_read_cpus(const struct cc_cg *cg, const char *cgroup, const char *file,
		    hwloc_bitmap_t out, struct cc_err *err)
{
	_cleanup_free_ char *s = cc_cg_read(cg, cgroup, file, err);
	char what[PATH_MAX + 64];

	if (!s)
		return -1;
	snprintf(what, sizeof(what), "%s/%s", cgroup, file);
	return cc_cpulist_parse(s, out, what, err);
}

bool cc_cg_gone(int code)
{
	return code == ENOENT || code == ENOTDIR || code == ENODEV;
}

/* Writes are refused without ops: a captured tree is read, never changed. */
static int no_ops(const struct cc_cg *cg, const char *what, const char *cgroup, struct cc_err *err)
{
	return cc_err_set(err, EPERM, "%s %s: cgroups are only changed on the real host (root is %s)", what, cgroup,
			  cg->root->path);
}

int cc_cg_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	if (!cg->ops)
		return no_ops(cg, "mkdir", cgroup, err);
	if (!cc_cgroup_path_safe(cgroup) || !strcmp(cgroup, "/"))
		return cc_err_set(err, EINVAL, "mkdir: \"%.64s\" is not a cgroup below the root", cgroup);
	if (cg->trace)
		fprintf(cg->trace, "corecarve: cgroup %s: mkdir\n", cgroup);
	return cg->ops->mkdir(cg, cgroup, err);
}

int cc_cg_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	if (!cg->ops)
		return no_ops(cg, "rmdir", cgroup, err);
	if (!cc_cgroup_path_safe(cgroup) || !strcmp(cgroup, "/"))
		return cc_err_set(err, EINVAL, "rmdir: \"%.64s\" is not a cgroup below the root", cgroup);
	if (cg->trace)
		fprintf(cg->trace, "corecarve: cgroup %s: rmdir\n", cgroup);
	return cg->ops->rmdir(cg, cgroup, err);
}

int cc_cg_write(struct cc_cg *cg, const char *cgroup, const char *file,
		const char *value, struct cc_cg_undo *undo, struct cc_err *err)
{
	char *old = NULL;

	if (!cg->ops)
		return no_ops(cg, "write", cgroup, err);
	if (!cc_cgroup_path_safe(cgroup))
		return cc_err_set(err, EINVAL, "cgroup path \"%.64s\" is not a safe absolute path", cgroup);
	if (undo) {
		old = cc_cg_read(cg, cgroup, file, err);
		if (!old)
			return -1;
		if (undo->n == undo->cap) {
			int cap = undo->cap ? undo->cap * 2 : 16;
			struct cc_cg_undo_entry *ne = realloc(undo->e, (size_t)cap * sizeof(*ne));

			if (!ne) {
				free(old);
				return cc_err_sys(err, ENOMEM, "undo");
			}
			undo->e = ne;
			undo->cap = cap;
		}
	}
	if (cg->ops->write(cg, cgroup, file, value, err) < 0) {
		free(old);
		return -1;
	}
	if (cg->trace)
		fprintf(cg->trace, "corecarve: cgroup %s/%s <- \"%s\"\n", cgroup, file, value);
	if (undo) {
		struct cc_cg_undo_entry *e = &undo->e[undo->n++];

		snprintf(e->cgroup, sizeof(e->cgroup), "%s", cgroup);
		snprintf(e->file, sizeof(e->file), "%s", file);
		e->old = old;
	}
	return 0;
}

int cc_cg_rollback(struct cc_cg *cg, struct cc_cg_undo *undo, struct cc_err *err)
{
	int rc = 0;

	for (int i = undo->n; i-- > 0;) {
		struct cc_cg_undo_entry *e = &undo->e[i];
		struct cc_err step = CC_ERR_INIT;
		const char *v = e->old;
		_cleanup_free_ char *first = NULL;

		/* cpu.max and partition files read back in the form they accept;
		 * a partition that was "member" goes back to member. Partition
		 * reads like "root invalid (...)" are restored as their first word. */
		if (!strcmp(e->file, "cpuset.cpus.partition")) {
			first = strndup(v, strcspn(v, " "));
			v = first ? first : "member";
		}
		if (!*v && strcmp(e->file, "cpuset.cpus") && strcmp(e->file, "cpuset.mems") &&
		    strcmp(e->file, "cpuset.cpus.exclusive"))
			continue;
		if (cc_cg_write(cg, e->cgroup, e->file, v, NULL, &step) < 0) {
			if (rc == 0 && err)
				*err = step;
			rc = -1;
		}
	}
	cc_cg_undo_fini(undo);
	return rc;
}

void cc_cg_undo_fini(struct cc_cg_undo *undo)
{
	for (int i = 0; i < undo->n; i++)
		free(undo->e[i].old);
	free(undo->e);
	memset(undo, 0, sizeof(*undo));
}

static const char *const mode_names[] = {
	[CC_MODE_REMOTE] = "remote-partition",
	[CC_MODE_LOCAL] = "local-partition",
	[CC_MODE_CPUSET_ONLY] = "cpuset-only",
};

const char *cc_cg_mode_name(enum cc_cg_mode m)
{
	return mode_names[m];
}

int cc_cg_mode_parse(const char *s, enum cc_cg_mode *m)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(s, mode_names[i])) {
			*m = (enum cc_cg_mode)i;
			return 0;
		}
	return -1;
}

void cc_cg_parent(const char *cgroup, char *out, size_t len)
{
	const char *slash = strrchr(cgroup, '/');
	size_t n = slash ? (size_t)(slash - cgroup) : 0;

	if (n == 0) {
		snprintf(out, len, "/");
		return;
	}
	snprintf(out, len, "%.*s", (int)n, cgroup);
}

bool cc_cg_below(const char *cgroup, const char *ancestor)
{
	size_t n = strlen(ancestor);

	return !strncmp(cgroup, ancestor, n) && cgroup[n] == '/';
}

/* Partition state as the kernel reports it: "root", "isolated", "member",
 * or "<state> invalid (<reason>)". */
bool cc_cg_partition_valid(const char *s)
{
	return (!strcmp(s, "root") || !strcmp(s, "isolated"));
}

enum cc_cg_mode cc_cg_probe_mode(const struct cc_cg *cg, const char *cgroup)
{
	char parent[PATH_MAX];
	_cleanup_free_ char *p = NULL;
	struct cc_err ignored = CC_ERR_INIT;

	/* A parent that is already a valid partition root (the root cgroup, or
	 * one prepared by init-parent) takes a local partition on any kernel;
	 * the kernel refuses a remote partition below a partition root anyway. */
	cc_cg_parent(cgroup, parent, sizeof(parent));
	if (!strcmp(parent, "/"))
		return CC_MODE_LOCAL;
	p = cc_cg_read(cg, parent, "cpuset.cpus.partition", &ignored);
	if (p && cc_cg_partition_valid(p))
		return CC_MODE_LOCAL;
	if (cc_cg_exists(cg, cgroup, "cpuset.cpus.exclusive"))
		return CC_MODE_REMOTE;
	return CC_MODE_CPUSET_ONLY;
}

int cc_cg_available(const struct cc_cg *cg, const char *cgroup, bool exclusive, hwloc_bitmap_t out,
		    struct cc_err *err)
{
	enum cc_cg_mode mode = exclusive ? cc_cg_probe_mode(cg, cgroup) : CC_MODE_CPUSET_ONLY;
	char parent[PATH_MAX];

	cc_cg_parent(cgroup, parent, sizeof(parent));
	return cc_cg_read_cpus(cg, mode == CC_MODE_REMOTE ? "/" : parent, "cpuset.cpus.effective", out, err);
}
