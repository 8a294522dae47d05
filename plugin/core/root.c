#define _GNU_SOURCE
#include "root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define CC_HAVE_OPENAT2 1
#endif
#endif

struct cc_root *cc_root_open(const char *path, struct cc_err *err)
{
	_cleanup_free_ char *real = NULL;
	struct stat st;
	struct cc_root *root;
	int fd;

	if (!path || !*path)
		path = "/";
	real = realpath(path, NULL);
	if (!real)
		return cc_err_sys(err, errno, "root %s", path), NULL;
	fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cc_err_sys(err, errno, "root %s", path), NULL;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return cc_err_set(err, ENOTDIR, "root %s: not a directory", path), NULL;
	}
	root = calloc(1, sizeof(*root));
	if (!root) {
		close(fd);
		return cc_err_sys(err, ENOMEM, "root"), NULL;
	}
	root->dirfd = fd;
	root->is_host = strcmp(real, "/") == 0;
	root->path = cc_steal_ptr(real);
	return root;
}

void cc_root_free(struct cc_root *root)
{
	if (!root)
		return;
	if (root->dirfd >= 0)
		close(root->dirfd);
	free(root->path);
	free(root);
}

void cc_root_freep(struct cc_root **root)
{
	cc_root_free(*root);
}

int cc_root_openat(const struct cc_root *root, const char *path, int flags,
		   mode_t mode, struct cc_err *err)
{
	const char *rel = path;
	int fd;

	while (*rel == '/')
		rel++;
	if (!*rel)
		rel = ".";
#ifdef CC_HAVE_OPENAT2
	{
		/* RESOLVE_IN_ROOT makes absolute symlinks and ".." stay inside the
		 * root, exactly like a chroot: captured sysfs trees are full of
		 * absolute and relative links, and a cgroup path from a container
		 * must never lead out of cgroupfs. */
		struct open_how how = {
			.flags = (unsigned long long)(flags | O_CLOEXEC),
			.mode = (flags & O_CREAT) ? mode : 0,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};
		fd = (int)syscall(SYS_openat2, root->dirfd, rel, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			goto done;
	}
#endif
	/* Kernels before 5.6 lack openat2: refuse ".." components so a path
	 * cannot climb out, and accept the host's own symlinks. */
	if (strstr(rel, "..")) {
		errno = EXDEV;
		fd = -1;
		goto done;
	}
	fd = openat(root->dirfd, rel, flags | O_CLOEXEC, mode);
done:
	if (fd < 0)
		return cc_err_sys(err, errno, "%s", path);
	return fd;
}

/* Each component of `rel` opened O_NOFOLLOW from `dir`: kernels
 * without openat2. */
static int walk_nofollow(int dir, const char *rel, int flags)
{
	_cleanup_free_ char *buf = strdup(rel);
	char *comp, *next, *save = NULL;
	int fd;

	if (!buf)
		return -1;
	fd = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (comp = strtok_r(buf, "/", &save); fd >= 0 && comp; comp = next) {
		int nfd;

		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, "..")) {
			close(fd);
			errno = EXDEV;
			return -1;
		}
		nfd = openat(fd, comp, next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : flags | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
	}
	return fd;
}

int cc_root_open_nofollow(const struct cc_root *root, const char *path, int flags, struct cc_err *err)
{
	const char *rel = path;
	int fd;

	while (*rel == '/')
		rel++;
	if (!*rel)
		rel = ".";
#ifdef CC_HAVE_OPENAT2
	{
		struct open_how how = {
			.flags = (unsigned long long)(flags | O_NOFOLLOW | O_CLOEXEC),
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int)syscall(SYS_openat2, root->dirfd, rel, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != E2BIG))
			goto done;
	}
#endif
	fd = walk_nofollow(root->dirfd, rel, flags);
done:
	if (fd < 0)
		return cc_err_sys(err, errno, "%s", path);
	return fd;
}

char *cc_root_read(const struct cc_root *root, const char *path, size_t max,
		   struct cc_err *err)
{
	_cleanup_close_ int fd = -1;
	char *buf = NULL;
	size_t len = 0;

	fd = cc_root_openat(root, path, O_RDONLY, 0, err);
	if (fd < 0 || cc_read_fd(fd, path, max ? max : CC_ROOT_READ_MAX, CC_READ_TRIM, &buf, &len, err) < 0)
		return NULL;
	return buf;
}

int cc_root_read_long(const struct cc_root *root, const char *path, long *out,
		      struct cc_err *err)
{
	_cleanup_free_ char *s = cc_root_read(root, path, 4096, err);
	char *end;
	long v;

	if (!s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return cc_err_set(err, EINVAL, "%s: expected an integer, got \"%.32s\"", path, s);
	*out = v;
	return 0;
}

int cc_root_write(const struct cc_root *root, const char *path,
		  const char *value, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;

	/* A captured tree holds regular files, which keep the tail of a
	 * longer old value unless truncated; kernel files ignore it. */
	fd = cc_root_openat(root, path, root->is_host ? O_WRONLY : O_WRONLY | O_TRUNC, 0, err);
	if (fd < 0)
		return -1;
	switch (cc_write_value(fd, value)) {
	case -1:
		return cc_err_sys(err, errno, "write \"%s\" to %s", value, path);
	case -2:
		return cc_err_set(err, EIO, "write \"%s\" to %s: short write", value, path);
	}
	return 0;
}

DIR *cc_root_opendir(const struct cc_root *root, const char *path,
		     struct cc_err *err)
{
	int fd = cc_root_openat(root, path, O_RDONLY | O_DIRECTORY, 0, err);

	return fd < 0 ? NULL : cc_fdopendir(fd, path, err);
}

bool cc_root_exists(const struct cc_root *root, const char *path)
{
	struct cc_err e = CC_ERR_INIT;
	int fd = cc_root_openat(root, path, O_PATH, 0, &e);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int cc_root_is_dir(const struct cc_root *root, const char *path, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	struct stat st;
	int fd;

	/* The host's own symlinks are trusted (as cc_root_openat's fallback
	 * trusts them); a captured tree's are not, and go through openat2. */
	if (root->is_host) {
		const char *rel = path;

		while (*rel == '/')
			rel++;
		if (fstatat(root->dirfd, *rel ? rel : ".", &st, 0) == 0)
			return S_ISDIR(st.st_mode);
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return cc_err_sys(err, errno, "%s", path);
	}
	fd = cc_root_openat(root, path, O_PATH | O_DIRECTORY, 0, &e);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (e.code == ENOENT || e.code == ENOTDIR)
		return 0;
	return cc_err_set(err, e.code, "%s", e.msg);
}

int cc_path(char *buf, size_t len, struct cc_err *err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return cc_err_set(err, ENAMETOOLONG, "path too long: %.64s...", buf);
	return 0;
}

int cc_root_mkdir(const struct cc_root *root, const char *path, mode_t mode,
		  struct cc_err *err)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int pfd = -1;
	char *slash;

	if (!dir)
		return cc_err_sys(err, ENOMEM, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
		return cc_err_set(err, EINVAL, "mkdir %s: invalid path", path);
	*slash = '\0';
	pfd = cc_root_openat(root, *dir ? dir : "/", O_PATH | O_DIRECTORY, 0, err);
	if (pfd < 0)
		return -1;
	if (mkdirat(pfd, slash + 1, mode) < 0 && errno != EEXIST)
		return cc_err_sys(err, errno, "mkdir %s", path);
	return 0;
}

/* The directory holding `path`'s last component, opened O_PATH under the
 * root (so only that component is left to look at); *name points into
 * `path` at it. */
static int parent_of(const struct cc_root *root, const char *path, const char **name, struct cc_err *err)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	if (!dir)
		return cc_err_sys(err, ENOMEM, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
		return cc_err_set(err, EINVAL, "%s: not a path to an entry", path);
	*name = path + (slash - dir) + 1;
	*slash = '\0';
	return cc_root_openat(root, *dir ? dir : "/", O_PATH | O_DIRECTORY, 0, err);
}

int cc_root_lstat(const struct cc_root *root, const char *path, struct stat *st, struct cc_err *err)
{
	const char *name;
	_cleanup_close_ int pfd = parent_of(root, path, &name, err);

	if (pfd < 0)
		return -1;
	if (fstatat(pfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return cc_err_sys(err, errno, "%s", path);
	return 0;
}

int cc_root_readlink(const struct cc_root *root, const char *path, char *buf, size_t len, struct cc_err *err)
{
	const char *name;
	_cleanup_close_ int pfd = parent_of(root, path, &name, err);
	ssize_t n;

	if (pfd < 0)
		return -1;
	n = readlinkat(pfd, name, buf, len - 1);
	if (n < 0)
		return cc_err_sys(err, errno, "%s", path);
	if ((size_t)n >= len - 1)
		return cc_err_set(err, ENAMETOOLONG, "%s: link target too long", path);
	buf[n] = '\0';
	return (int)n;
}

bool cc_cgroup_path_safe(const char *path)
{
	const char *p = path;

	if (*p != '/')
		return false;
	if (!strcmp(path, "/"))
		return true;
	while (*p == '/') {
		const char *start = ++p;
		size_t n;

		while (*p && *p != '/') {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return false;
			p++;
		}
		n = (size_t)(p - start);
		if (n == 0 || (n == 1 && start[0] == '.') || (n == 2 && start[0] == '.' && start[1] == '.'))
			return false;
	}
	return *p == '\0';
}
