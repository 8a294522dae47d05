/* corecarve: whole files in and out (fileio.h). */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fault.h"

/* ---- reading ---------------------------------------------------------- */

/* The first buffer: the size a regular file says it has (it may still
 * grow while read), or a small one for pipes and kernel files, which say 0
 * or 4096 whatever they hold. */
#define FIRST_CAP 256

int cc_read_fd(int fd, const char *name, size_t max, unsigned flags, char **out, size_t *len,
	       struct cc_err *err)
{
	_cleanup_free_ char *buf = NULL;
	/* One byte past the bound, so that a file just over it is seen. */
	size_t want = flags & CC_READ_TRUNCATE ? max : max + 1;
	size_t n = 0, cap = FIRST_CAP;

	*out = NULL;
	*len = 0;
	if (flags & CC_READ_REGULAR) {
		struct stat st;

		if (fstat(fd, &st) < 0)
			return cc_err_sys(err, errno, "%s", name);
		if (!S_ISREG(st.st_mode))
			return cc_err_set(err, EINVAL, "%s: not a regular file", name);
		if (!(flags & CC_READ_TRUNCATE) && (unsigned long long)st.st_size > max)
			return cc_err_set(err, EFBIG, "%s: %lld bytes, larger than the %zu-byte limit", name,
					  (long long)st.st_size, max);
		/* +2: the end of a file of the size it says is seen without
		 * growing the buffer. */
		cap = (size_t)st.st_size + 2;
	}
	if (cap > want + 1)
		cap = want + 1;
	buf = malloc(cap);
	if (!buf)
		return cc_err_sys(err, ENOMEM, "%s", name);
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *nb;

			if (n >= want)
				break;
			cap = cap > want / 2 ? want + 1 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb)
				return cc_err_sys(err, ENOMEM, "%s", name);
			buf = nb;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return cc_err_sys(err, errno, "%s: read", name);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max)
		return cc_err_set(err, EFBIG, "%s: larger than the %zu-byte limit", name, max);
	while ((flags & CC_READ_TRIM) && n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	*out = cc_steal_ptr(buf);
	*len = n;
	return 0;
}

DIR *cc_fdopendir(int fd, const char *name, struct cc_err *err)
{
	DIR *d = fdopendir(fd);

	if (!d) {
		int e = errno;

		close(fd);
		cc_err_sys(err, e, "%s", name);
	}
	return d;
}

int cc_read_at(int dirfd, const char *path, const char *name, size_t max, unsigned flags, char **out,
	       size_t *len, struct cc_err *err)
{
	int oflags = O_RDONLY | O_NOCTTY | O_CLOEXEC;
	_cleanup_close_ int fd = -1;

	*out = NULL;
	*len = 0;
	if (!name)
		name = path;
	/* A FIFO planted where a regular file belongs must not hang the
	 * open; the fstat after it refuses it. */
	if (flags & CC_READ_REGULAR)
		oflags |= O_NONBLOCK;
	if (flags & CC_READ_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = openat(dirfd, path, oflags);
	if (fd < 0) {
		if (errno == ENOENT && (flags & CC_READ_ABSENT_OK))
			return 0;
		if (errno == ELOOP && (flags & CC_READ_NOFOLLOW))
			return cc_err_set(err, ELOOP, "%s: is a symbolic link; refusing it", name);
		return cc_err_sys(err, errno, "%s", name);
	}
	return cc_read_fd(fd, name, max, flags, out, len, err);
}

/* ---- writing ---------------------------------------------------------- */

int cc_write_value(int fd, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;

	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return (size_t)n == len ? 0 : -2;
}

int cc_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Where the replace works: `dirfd` with names relative to it, or AT_FDCWD
 * with paths and the directory's path (for its fsync); and how errors
 * show the temp file and the target. */
struct where {
	int dirfd;
	const char *dir;
	const char *tmp, *name;
	const char *tmp_shown, *name_shown, *dir_shown;
};

static int sync_dir(const struct where *w)
{
	_cleanup_close_ int fd = -1;

	if (w->dirfd != AT_FDCWD)
		return fsync(w->dirfd);
	fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -1 : fsync(fd);
}

/* -1 with errno set when fault.h's injected error is armed for this
 * step of the replace, 0 otherwise. */
static int injected(const struct cc_replace *o, const char *step)
{
	char point[64];
	int code;

	if (!o->fail_point || !o->fault)
		return 0;
	snprintf(point, sizeof(point), "%s-%s", o->fail_point, step);
	code = cc_fault_errno(o->fault, point, o->fail_nth);
	if (!code)
		return 0;
	errno = code;
	return -1;
}

static int replace(const struct where *w, const void *data, size_t len, const struct cc_replace *o,
		   struct cc_err *err)
{
	int oflags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (o->fixed_tmp ? O_TRUNC : O_EXCL);
	mode_t mode = o->like ? o->like->st_mode & 07777 : o->mode;
	int fd;

	fd = openat(w->dirfd, w->tmp, oflags, mode);
	if (fd < 0 && errno == EEXIST) {
		/* Left by an earlier process of our pid, killed before its
		 * rename. */
		unlinkat(w->dirfd, w->tmp, 0);
		fd = openat(w->dirfd, w->tmp, oflags, mode);
	}
	if (fd < 0)
		return cc_err_sys(err, errno, "%s", w->tmp_shown);
	/* Not the umask's mode; the owner of the file replaced, where we may
	 * give it (root may; anyone else keeps their own). */
	if (fchmod(fd, mode) < 0 || (o->like && fchown(fd, o->like->st_uid, o->like->st_gid) < 0 && errno != EPERM) ||
	    injected(o, "write") < 0 || cc_write_all(fd, data, len) < 0 ||
	    (o->sync != CC_SYNC_NONE && fsync(fd) < 0)) {
		cc_err_sys(err, errno, "%s: write", w->tmp_shown);
		close(fd);
		unlinkat(w->dirfd, w->tmp, 0);
		return -1;
	}
	if (close(fd) < 0) {
		cc_err_sys(err, errno, "%s: close", w->tmp_shown);
		unlinkat(w->dirfd, w->tmp, 0);
		return -1;
	}
	if (o->fault_step)
		cc_fault(o->fault, o->fault_step);
	if (injected(o, "rename") < 0 || renameat(w->dirfd, w->tmp, w->dirfd, w->name) < 0) {
		cc_err_sys(err, errno, "%s: rename from %s", w->name_shown, w->tmp_shown);
		unlinkat(w->dirfd, w->tmp, 0);
		return -1;
	}
	/* The rename itself survives a crash only once the directory is
	 * synced. */
	if (o->sync >= CC_SYNC_DIR_TRY && (injected(o, "dirsync") < 0 || sync_dir(w) < 0) && o->sync == CC_SYNC_DIR) {
		cc_err_sys(err, errno, "%s: written, but fsync of %s failed", w->name_shown, w->dir_shown);
		return 1;
	}
	return 0;
}

static int tmp_name(char *buf, size_t size, const char *name, const struct cc_replace *o, struct cc_err *err)
{
	int n = o->fixed_tmp ? snprintf(buf, size, "%s%s.tmp", o->hidden ? "." : "", name)
			     : snprintf(buf, size, "%s%s.tmp.%ld", o->hidden ? "." : "", name, (long)getpid());

	if (n < 0 || (size_t)n >= size)
		return cc_err_set(err, ENAMETOOLONG, "%s: name too long for its temp file", name);
	return 0;
}

int cc_replace_at(int dirfd, const char *name, const void *data, size_t len, const struct cc_replace *o,
		  struct cc_err *err)
{
	char tmp[NAME_MAX + 32];
	_cleanup_free_ char *tmp_shown = NULL, *name_shown = NULL;
	const char *dir = o->shown_dir;
	const char *sep = dir && *dir && dir[strlen(dir) - 1] != '/' ? "/" : "";
	struct where w = { .dirfd = dirfd, .tmp = tmp, .name = name, .dir_shown = dir ? dir : "." };

	if (tmp_name(tmp, sizeof(tmp), name, o, err) < 0)
		return -1;
	if (asprintf(&tmp_shown, "%s%s%s", dir ? dir : "", sep, tmp) < 0) {
		tmp_shown = NULL;
		return cc_err_sys(err, ENOMEM, "%s", name);
	}
	if (asprintf(&name_shown, "%s%s%s", dir ? dir : "", sep, name) < 0) {
		name_shown = NULL;
		return cc_err_sys(err, ENOMEM, "%s", name);
	}
	w.tmp_shown = tmp_shown;
	w.name_shown = name_shown;
	return replace(&w, data, len, o, err);
}

int cc_replace_path(const char *path, const void *data, size_t len, const struct cc_replace *o,
		    struct cc_err *err)
{
	_cleanup_free_ char *dcopy = strdup(path), *bcopy = strdup(path), *tmp = NULL;
	char tname[NAME_MAX + 32];
	const char *dir, *base;
	struct where w = { .dirfd = AT_FDCWD, .name = path, .name_shown = path };

	if (!dcopy || !bcopy)
		return cc_err_sys(err, ENOMEM, "%s", path);
	dir = dirname(dcopy);
	base = basename(bcopy);
	if (tmp_name(tname, sizeof(tname), base, o, err) < 0)
		return -1;
	if (asprintf(&tmp, "%s/%s", dir, tname) < 0) {
		tmp = NULL;
		return cc_err_sys(err, ENOMEM, "%s", path);
	}
	w.dir = w.dir_shown = dir;
	w.tmp = w.tmp_shown = tmp;
	return replace(&w, data, len, o, err);
}
