/* corecarve: whole files in and out, written once.
 *
 * A bounded read of a whole file (policy, VM list, ledger, OCI config and
 * state, topology cache, kernel files under the root), the atomic replace
 * of one (temp file beside it, rename over it), and the write(2) loop both
 * need.  Errors name the file as the caller shows it (`name`) and follow
 * error.h: -1 with err set once.
 */
#ifndef CC_FILEIO_H
#define CC_FILEIO_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct stat;

/* ---- reading ---------------------------------------------------------- */

enum {
	/* Refuse anything but a regular file ("NAME: not a regular file"),
	 * and a file whose size is over the bound before reading it. */
	CC_READ_REGULAR = 1u << 0,
	/* cc_read_at: refuse a symbolic link as the last component
	 * ("NAME: is a symbolic link; refusing it"). */
	CC_READ_NOFOLLOW = 1u << 1,
	/* cc_read_at: a missing file is no error: 0 with *out NULL. */
	CC_READ_ABSENT_OK = 1u << 2,
	/* Keep the first `max` bytes of a longer file rather than refuse it. */
	CC_READ_TRUNCATE = 1u << 3,
	/* A kernel value: trailing newlines and spaces dropped (*len too). */
	CC_READ_TRIM = 1u << 4,
};

/* Read `fd` to its end, at most `max` bytes: a larger file is EFBIG
 * ("NAME: larger than the MAX-byte limit").  *out is NUL-terminated and
 * the caller's to free, *len its length (bytes after a NUL in the file
 * count).  0, or -1 with err. */
int cc_read_fd(int fd, const char *name, size_t max, unsigned flags, char **out, size_t *len,
	       struct cc_err *err);

/* A directory stream over `fd` (opened O_RDONLY | O_DIRECTORY), which it
 * takes: closed on failure, err "NAME: strerror". */
DIR *cc_fdopendir(int fd, const char *name, struct cc_err *err);

/* Open `path` relative to `dirfd` (AT_FDCWD, or a directory) and read it
 * as cc_read_fd does.  With CC_READ_REGULAR the open does not block on a
 * FIFO (O_NONBLOCK), which is then refused.  `name` defaults to `path`.  Kernel
 * files are read through the root instead (cc_root_read), which opens
 * them under it and reads them with cc_read_fd. */
int cc_read_at(int dirfd, const char *path, const char *name, size_t max, unsigned flags, char **out,
	       size_t *len, struct cc_err *err);

/* ---- writing ---------------------------------------------------------- */

/* write(2) all of `buf`, again after EINTR and short writes.  0, or -1
 * with errno (EIO when write returns 0): callers name the file. */
int cc_write_all(int fd, const void *buf, size_t len);
/* A kernel control file's value in one write(2) (again after EINTR only:
 * a second write would be a second value).  0; -1 with errno when the
 * write failed; -2 when it took less than the value.  Callers name the
 * file. */
int cc_write_value(int fd, const char *value);

enum cc_replace_sync {
	CC_SYNC_NONE,    /* rename only (tmpfs; a file rebuilt when damaged) */
	CC_SYNC_FILE,    /* fsync the temp file before the rename */
	CC_SYNC_DIR_TRY, /* and the directory after it, a failure ignored */
	CC_SYNC_DIR,     /* and the directory after it; its failure returns 1 */
};

struct cc_replace {
	mode_t mode;             /* the new file's mode (set with fchmod: no umask) */
	const struct stat *like; /* not NULL: the mode and owner of this instead (the file replaced) */
	enum cc_replace_sync sync;
	bool hidden;             /* temp ".NAME.tmp.PID" (readers that take every file of the directory) */
	bool fixed_tmp;          /* temp "NAME.tmp", truncated: the caller holds a lock, and a killed
				  * writer leaves one file, not one per pid */
	const char *shown_dir;   /* how errors name the directory (NULL: the files alone) */
	const char *fault;       /* cc_fault(fault, fault_step) after the temp file is complete */
	const char *fault_step;
	/* fault's injected errors (fault.h): "<fail_point>-write", "-rename"
	 * and "-dirsync" fail as a full or read-only disk would, the
	 * fail_nth-th time (the caller counts). */
	const char *fail_point;
	int fail_nth;
};

/* Replace `name` in directory `dirfd` by `len` bytes of `data`, so that a
 * reader (or a crash, with CC_SYNC_FILE or more) sees the old file or the
 * new one, complete: write a temp file beside it, rename it over.  A temp
 * named by pid (the default) is created O_EXCL, after removing one an
 * earlier process of the same pid left.  Returns 0; -1 with err when the
 * old file is still in place (the temp removed); 1 with err when the new
 * one is in place but CC_SYNC_DIR's directory fsync failed. */
int cc_replace_at(int dirfd, const char *name, const void *data, size_t len, const struct cc_replace *o,
		  struct cc_err *err);

/* cc_replace_at of a path: its directory is opened (a relative path is
 * relative to the working directory), and errors name it as given. */
int cc_replace_path(const char *path, const void *data, size_t len, const struct cc_replace *o,
		    struct cc_err *err);

#endif
