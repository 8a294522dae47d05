/* corecarve: the state directory and the ledger file, opened with the
 * checks every reader makes (ledger.h). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "ledger.h"

/* Open the state directory without following a symlink in its last
 * component, and refuse one another user could write into: whoever can
 * write there can hand out CPUs.  `missing` (read only) reports ENOENT. */
int cc_state_dir_open(const char *path, bool create, bool *missing, struct cc_err *err)
{
	char dir[PATH_MAX];
	bool created = false;
	struct stat st;
	size_t n = strlen(path);
	int fd;

	/* "dir/" would follow a symlink despite O_NOFOLLOW. */
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return cc_err_set(err, EINVAL, "state directory: empty path");
	if (n >= sizeof(dir))
		return cc_err_set(err, ENAMETOOLONG, "state directory %.64s...: path too long", path);
	memcpy(dir, path, n);
	dir[n] = '\0';

	if (create) {
		if (mkdir(dir, 0700) == 0)
			created = true;
		else if (errno != EEXIST)
			return cc_err_sys(err, errno, "state directory %s: cannot create it", dir);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT && missing) {
			*missing = true;
			return -1;
		}
		if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			return cc_err_set(err, ELOOP, "state directory %s is a symbolic link; refusing it", dir);
		if (e == ENOTDIR)
			return cc_err_set(err, ENOTDIR, "state directory %s is not a directory", dir);
		return cc_err_sys(err, e, "state directory %s", dir);
	}
	/* mkdir's mode went through the umask. */
	if (created && fchmod(fd, 0700) < 0) {
		cc_err_sys(err, errno, "state directory %s: chmod 0700", dir);
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		cc_err_sys(err, errno, "state directory %s: stat", dir);
		close(fd);
		return -1;
	}
	/* A reader trusts root's directory too: `corecarve status` as another
	 * user still refuses one anybody else could have written. */
	if (st.st_uid != geteuid() && (create || st.st_uid != 0)) {
		cc_err_set(err, EPERM, "state directory %s is owned by uid %u, not %u; refusing it", dir,
			   (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		cc_err_set(err, EPERM, "state directory %s is group- or world-writable (mode %04o); refusing it",
			   dir, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	/* A writer keeps it root-only even when someone made it 0755 first:
	 * the ledger is the node's map of who owns which CPU. */
	if (create && (st.st_mode & 077) && fchmod(fd, 0700) < 0) {
		cc_err_sys(err, errno, "state directory %s: chmod 0700", dir);
		close(fd);
		return -1;
	}
	return fd;
}

int cc_state_ledger_read(int dirfd, const char *dir, char **buf, size_t *len, struct cc_err *err)
{
	char path[PATH_MAX + 32];

	*buf = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, CC_LEDGER_FILE);
	if (cc_read_at(dirfd, CC_LEDGER_FILE, path, CC_LEDGER_MAX,
		       CC_READ_REGULAR | CC_READ_NOFOLLOW | CC_READ_ABSENT_OK, buf, len, err) < 0)
		return -1;
	/* The bytes are kept as one C string (commit compares and writes
	 * them so): jansson refuses a NUL byte in what it parses, and the
	 * lines an index-only read keeps unparsed must not hide one. */
	if (*buf && memchr(*buf, '\0', *len)) {
		free(*buf);
		*buf = NULL;
		return cc_err_set(err, EINVAL, "%s: contains a NUL byte", path);
	}
	return 0;
}
