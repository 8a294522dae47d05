/* corecarve: the one way to reach a cgroup file.
 *
 * The cgroup2 mount is opened once (cc_cg_open) as a directory fd, and
 * every read, write, mkdir and rmdir of the cgroup manager is resolved
 * beneath it with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), as runc's cgroups.OpenFile
 * does (libcontainer/cgroups/file.go: /sys/fs/cgroup opened O_PATH once,
 * every file openat2'd beneath it), and a value is written with one
 * write(2) on the opened fd, as crun's write_cgroup_file does: a
 * cgroup path comes from /proc/<pid>/cgroup or an annotation, and
 * cgroupfs has no links and no other mounts below it, so a link, a ".."
 * or another filesystem on the way is an attack or a mistake, refused
 * by the kernel during the lookup (no check-then-use window).
 *
 * A failure is worded in one place (cg_io_fail): what was done to which
 * "<cgroup>/<file>" with which value, and what the errno means for a
 * cgroup (gone, busy, refused by the kernel, denied); err->code keeps the
 * errno, which the callers test (cc_cg_gone, EBUSY, ENOSPC). */
#define _GNU_SOURCE
#include "cgroup_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

/* What an errno means for a cgroup operation; NULL for another. */
static const char *io_class(int code)
{
	switch (code) {
	case ENOENT:
	case ENOTDIR:
	case ENODEV:
		return "gone";
	case EBUSY:
		return "busy";
	case EINVAL:
	case ENOSPC:
	case ERANGE:
	case E2BIG:
	case EOPNOTSUPP:
		return "refused by the kernel";
	case EACCES:
	case EPERM:
	case EROFS:
		return "denied";
	case ELOOP:
		return "a symbolic link on the way, refused";
	case EXDEV:
		return "outside the cgroup mount, refused";
	default:
		return NULL;
	}
}

/* err set to "<op> \"<value>\" to <cgroup>/<file>: <class> (<strerror>)",
 * code kept; -1. */
static int cg_io_fail(struct cc_err *err, int code, const char *op, const char *cgroup, const char *file,
		      const char *value)
{
	const char *class = io_class(code);
	const char *sep = file && strcmp(cgroup, "/") ? "/" : "";
	char what[PATH_MAX + 96];

	if (value)
		snprintf(what, sizeof(what), "%s \"%.64s\" to %s%s%s", op, value, cgroup, sep, file ? file : "");
	else
		snprintf(what, sizeof(what), "%s %s%s%s", op, cgroup, sep, file ? file : "");
	if (class)
		return cc_err_set(err, code, "%s: %s (%s)", what, class, strerror(code));
	return cc_err_sys(err, code, "%s", what);
}

/* "a/b/file" for cgroup "/a/b" and file "file", "." for the mount
 * itself; refused unless the cgroup is a safe absolute path and the file
 * one plain name. */
static int rel_path(const char *cgroup, const char *file, char *buf, size_t len, struct cc_err *err)
{
	const char *c = cgroup + 1;
	int n;

	if (!cc_cgroup_path_safe(cgroup))
		return cc_err_set(err, EINVAL, "cgroup path \"%.64s\" is not a safe absolute path", cgroup);
	if (file && (!*file || strchr(file, '/') || !strcmp(file, ".") || !strcmp(file, "..")))
		return cc_err_set(err, EINVAL, "cgroup %s: \"%.64s\" is not a file name", cgroup, file);
	if (!*c && !file)
		n = snprintf(buf, len, ".");
	else
		n = snprintf(buf, len, "%s%s%s", c, *c && file ? "/" : "", file ? file : "");
	if (n < 0 || (size_t)n >= len)
		return cc_err_set(err, ENAMETOOLONG, "cgroup %.64s...: path too long", cgroup);
	return 0;
}

/* openat2 of `rel` beneath `dirfd`: no link, no "..", no other mount. */
static int openat_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = { .flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = BENEATH };

	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
}

int cg_open(const struct cc_cg *cg, const char *cgroup, const char *file, int flags, const char *op,
	    const char *value, struct cc_err *err)
{
	char rel[PATH_MAX];
	int fd;

	if (cg->mountfd < 0)
		return cc_err_set(err, EBADF, "%s %s: the cgroup mount is not open", op, cgroup);
	if (rel_path(cgroup, file, rel, sizeof(rel), err) < 0)
		return -1;
	fd = openat_beneath(cg->mountfd, rel, flags);
	if (fd < 0)
		return cg_io_fail(err, errno, op, cgroup, file, value);
	return fd;
}

char *cc_cg_read(const struct cc_cg *cg, const char *cgroup, const char *file, struct cc_err *err)
{
	_cleanup_close_ int fd = cg_open(cg, cgroup, file, O_RDONLY, "read", NULL, err);
	char what[PATH_MAX + 64];
	char *buf = NULL;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	snprintf(what, sizeof(what), "%s%s%s", strcmp(cgroup, "/") ? cgroup : "", "/", file);
	if (cc_read_fd(fd, what, 65536, CC_READ_TRIM, &buf, &len, err) < 0)
		return NULL;
	return buf;
}

bool cc_cg_exists(const struct cc_cg *cg, const char *cgroup, const char *file)
{
	struct cc_err e = CC_ERR_INIT;
	int fd = cg_open(cg, cgroup, file, O_PATH, "open", NULL, &e);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int cg_write_file(const struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
		  struct cc_err *err)
{
	/* The kernel takes a value in one write(2); an empty one is written
	 * as a newline (cpuset strips it to the empty set: "inherit"). */
	const char *v = *value ? value : "\n";
	_cleanup_close_ int fd = cg_open(cg, cgroup, file, O_WRONLY, "write", value, err);

	if (fd < 0)
		return -1;
	switch (cc_write_value(fd, v)) {
	case -1:
		return cg_io_fail(err, errno, "write", cgroup, file, value);
	case -2:
		return cg_io_fail(err, EIO, "write (short)", cgroup, file, value);
	}
	return 0;
}

/* The parent of `cgroup` opened beneath the mount, *name its last
 * component: what mkdir and rmdir act on. */
static int open_parent(const struct cc_cg *cg, const char *cgroup, const char **name, const char *op,
		       struct cc_err *err)
{
	char parent[PATH_MAX];

	if (!cc_cgroup_path_safe(cgroup) || !strcmp(cgroup, "/"))
		return cc_err_set(err, EINVAL, "%s: \"%.64s\" is not a cgroup below the root", op, cgroup);
	*name = strrchr(cgroup, '/') + 1;
	cc_cg_parent(cgroup, parent, sizeof(parent));
	return cg_open(cg, parent, NULL, O_PATH | O_DIRECTORY, op, NULL, err);
}

int cg_mkdir_beneath(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	const char *name;
	_cleanup_close_ int pfd = open_parent(cg, cgroup, &name, "mkdir", err);

	if (pfd < 0)
		return -1;
	if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
		return cg_io_fail(err, errno, "mkdir", cgroup, NULL, NULL);
	return 0;
}

int cg_rmdir_beneath(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	const char *name;
	_cleanup_close_ int pfd = open_parent(cg, cgroup, &name, "rmdir", &e);

	/* Already gone, with its parent or alone, is what rmdir wanted. */
	if (pfd < 0)
		return cc_cg_gone(e.code) ? 0 : (*err = e, -1);
	if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return cg_io_fail(err, errno, "rmdir", cgroup, NULL, NULL);
	return 0;
}

DIR *cc_cg_opendir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	int fd = cg_open(cg, cgroup, NULL, O_RDONLY | O_DIRECTORY, "list", NULL, err);

	return fd < 0 ? NULL : cc_fdopendir(fd, cgroup, err);
}

int cc_cg_is_dir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	int fd = cg_open(cg, cgroup, NULL, O_PATH | O_DIRECTORY, "open", NULL, &e);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (cc_cg_gone(e.code))
		return 0;
	*err = e;
	return -1;
}
