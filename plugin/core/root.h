/* corecarve: one root for every kernel interface path.
 *
 * Like hwloc's fsroot: every /sys, /proc and cgroupfs access goes through a
 * root object ("/" on a real host, a captured tree under --root).  Paths are
 * written as absolute strings in the code so they stay greppable; the root
 * opens them relative to its directory fd with openat2(RESOLVE_IN_ROOT), so
 * symlinks inside a captured tree cannot escape it.
 */
#ifndef CC_ROOT_H
#define CC_ROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct cc_root {
	int dirfd;
	char *path;   /* as given, canonicalised */
	bool is_host; /* the root is "/": actions that cannot be redirected are allowed */
};

/* Default bound on files read whole (sysfs/procfs values, cgroup files). */
#define CC_ROOT_READ_MAX (1u << 20)

struct cc_root *cc_root_open(const char *path, struct cc_err *err);
void cc_root_free(struct cc_root *root);
void cc_root_freep(struct cc_root **root);
#define _cleanup_root_ __attribute__((cleanup(cc_root_freep)))

/* open(2) of an absolute kernel path under the root.  Refuses to resolve
 * outside the root.  Returns an fd or -1 with err set (err->code = errno). */
int cc_root_openat(const struct cc_root *root, const char *path, int flags,
		   mode_t mode, struct cc_err *err);

/* The same without following any link on the way (RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, else an O_NOFOLLOW walk): for a path of the tree
 * that is then used by name (a state directory), where a link resolved
 * inside the root would be followed out of it by the next open.  A link
 * is ELOOP. */
int cc_root_open_nofollow(const struct cc_root *root, const char *path, int flags, struct cc_err *err);

/* Read a whole file, NUL-terminated, at most `max` bytes (0: default bound);
 * trailing newlines are stripped.  Larger files are an error (EFBIG). */
char *cc_root_read(const struct cc_root *root, const char *path, size_t max,
		   struct cc_err *err);

/* Read a file holding one integer. */
int cc_root_read_long(const struct cc_root *root, const char *path, long *out,
		      struct cc_err *err);

/* Write a value with one write(2), as the kernel expects for control files. */
int cc_root_write(const struct cc_root *root, const char *path,
		  const char *value, struct cc_err *err);

DIR *cc_root_opendir(const struct cc_root *root, const char *path,
		     struct cc_err *err);

/* mkdir(2) of an absolute path under the root; EEXIST is success. */
int cc_root_mkdir(const struct cc_root *root, const char *path, mode_t mode,
		  struct cc_err *err);

bool cc_root_exists(const struct cc_root *root, const char *path);

/* lstat(2) of a path under the root: its last component is not followed
 * (a capture copies links as links).  0, or -1 with err (code = errno). */
struct stat;
int cc_root_lstat(const struct cc_root *root, const char *path, struct stat *st, struct cc_err *err);
/* readlink(2) of a path under the root, NUL-terminated into buf; its
 * length, or -1 with err. */
int cc_root_readlink(const struct cc_root *root, const char *path, char *buf, size_t len, struct cc_err *err);

/* Whether `path` is a directory: 1; 0 when it is not there (ENOENT,
 * ENOTDIR, or not a directory); -1 on any other failure (err set).  On
 * the host one fstatat and no descriptor: the hook's gc asks it of every
 * carve's cgroup on every decision. */
int cc_root_is_dir(const struct cc_root *root, const char *path, struct cc_err *err);

/* A cgroup path (relative to the cgroup2 mount) is safe when it is
 * absolute, has no "." or ".." component, no empty component and no
 * control characters: what the cgroup layer, the OCI parser and audit
 * check before they join it to a mount. */
bool cc_cgroup_path_safe(const char *path);

/* Build a path with printf formatting into buf; -1 with err on overflow. */
int cc_path(char *buf, size_t len, struct cc_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
