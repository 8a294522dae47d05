/* corecarve: Landlock, the kernel's unprivileged file-system sandbox
 * (Documentation/userspace-api/landlock.rst), through its raw syscalls
 * (<linux/landlock.h>; glibc has no wrappers).
 *
 * The seccomp filter (sandbox.h) says which calls the hook may make, not
 * on which paths: openat(O_WRONLY), rename and unlink are allowed because
 * the hook must write cgroup files and its ledger.  Landlock adds the
 * paths: once applied, the process (and anything it could start) may
 * create, write, truncate, rename or remove files only beneath the
 * directories it was given, and execute nothing; reads stay free (the
 * hook reads the policy, config.json, sysfs and /proc wherever they are).
 * A parser bug turned into "write this file" then reaches a cgroup file or
 * the ledger at worst, never /etc/sudoers.d or a binary.
 *
 * Where the kernel has no Landlock (built without it, or not in the lsm=
 * list at boot: the probe says ENOSYS or EOPNOTSUPP) nothing is applied
 * and the caller is told (0), so that it can say so at debug; seccomp
 * still holds.  Rules are added for directories that exist; one that is
 * absent (no cpufreq on a VM) is skipped, and nothing can be written
 * there later either. */
#ifndef CC_LANDLOCK_H
#define CC_LANDLOCK_H

#include <stdint.h>

#include "error.h"
#include "root.h"

/* The kernel's Landlock ABI version (1, 2, 3, ...), 0 without Landlock. */
int cc_landlock_abi(void);

/* A ruleset being built: the rights it restricts and grants, by ABI. */
struct cc_landlock {
	int fd;           /* the ruleset; -1 without Landlock */
	int abi;
	uint64_t handled; /* what is refused unless a rule grants it */
	uint64_t allowed; /* what a rule grants beneath its directory */
};

/* Start a ruleset that confines writes.  1 begun, 0 without Landlock
 * (ll->fd -1: the calls below do nothing), -1 with err set. */
int cc_landlock_begin(struct cc_landlock *ll, struct cc_err *err);

/* Writes allowed beneath the directory open at FD (the caller keeps it). */
int cc_landlock_allow_fd(struct cc_landlock *ll, int fd, const char *shown, struct cc_err *err);

/* Writes allowed beneath the absolute PATH under ROOT (opened through the
 * root layer); a PATH that does not exist is skipped (0). */
int cc_landlock_allow(struct cc_landlock *ll, const struct cc_root *root, const char *path, struct cc_err *err);

/* Apply to this process (sets no_new_privs) and close the ruleset; 0, or
 * -1 with err set.  With ll->fd -1, nothing. */
int cc_landlock_apply(struct cc_landlock *ll, struct cc_err *err);

/* Close a ruleset that is not applied (an error on the way). */
void cc_landlock_abandon(struct cc_landlock *ll);

/* The hook's ruleset: writes beneath the cgroup mount, /proc/irq, the
 * cpufreq, per-CPU cpuidle and uncore sysfs directories, irqbalance's
 * environment file's directory (its file is replaced by rename), all
 * through ROOT, and the state directory open at STATE_DIRFD (-1: none).
 * 1 applied, 0 without Landlock (nothing applied), -1 with err set. */
int cc_landlock_hook(const struct cc_root *root, int state_dirfd, struct cc_err *err);

/* The device plugin's ruleset: its sockets made and removed beneath the
 * plugin directory open at DIR_FD, the ledger written in the state
 * directory open at STATE_DIRFD; nothing else written, nothing executed.
 * 1 applied, 0 without Landlock, -1 with err set. */
int cc_landlock_device_plugin(int dir_fd, int state_dirfd, struct cc_err *err);

#endif
