/* corecarve: Landlock rulesets (see landlock.h). */
#define _GNU_SOURCE
#include "landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"

/* Right numbers are the kernel's ABI and never change; older headers
 * (Debian 12's stop at ABI 2 or 3) lack the later names. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* ABI 1: every right that changes the file system or runs a file.  Read
 * rights (READ_FILE, READ_DIR) are left out on purpose: not handled, they
 * stay allowed everywhere. */
#define WRITE_ABI1                                                                                                \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |            \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |           \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |             \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)
/* What the hook does beneath a writable directory: write control files
 * and its own files, create and remove them (temp file and rename, the
 * parked-siblings cgroup).  No device, socket, FIFO or link is ever made,
 * and nothing is executed. */
#define GRANT_ABI1                                                                                                \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |        \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG)

int cc_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	/* ENOSYS: not built in; EOPNOTSUPP: built in, not enabled at boot. */
	return v > 0 ? (int)v : 0;
}

int cc_landlock_begin(struct cc_landlock *ll, struct cc_err *err)
{
	struct landlock_ruleset_attr attr = { 0 };

	ll->fd = -1;
	ll->abi = cc_landlock_abi();
	if (ll->abi == 0)
		return 0;
	ll->handled = WRITE_ABI1;
	ll->allowed = GRANT_ABI1;
	/* ABI 2: a rename or link between directories (REFER) is refused
	 * unless granted; none is: the ledger renames within its directory. */
	if (ll->abi >= 2)
		ll->handled |= LANDLOCK_ACCESS_FS_REFER;
	/* ABI 3: truncation is a right of its own (O_TRUNC, ftruncate: the
	 * lock's holder line, cgroup files opened O_TRUNC in a tree). */
	if (ll->abi >= 3) {
		ll->handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
		ll->allowed |= LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	attr.handled_access_fs = ll->handled;
	ll->fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ll->fd < 0)
		return cc_err_sys(err, errno, "landlock: create the ruleset (ABI %d)", ll->abi);
	return 1;
}

int cc_landlock_allow_fd(struct cc_landlock *ll, int fd, const char *shown, struct cc_err *err)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = ll->allowed, .parent_fd = fd };

	if (ll->fd < 0)
		return 0;
	if (syscall(SYS_landlock_add_rule, ll->fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return cc_err_sys(err, errno, "landlock: allow writes beneath %s", shown);
	return 0;
}

int cc_landlock_allow(struct cc_landlock *ll, const struct cc_root *root, const char *path, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_close_ int fd = -1;

	if (ll->fd < 0)
		return 0;
	fd = cc_root_openat(root, path, O_PATH | O_DIRECTORY, 0, &e);
	if (fd < 0) {
		/* Absent here (no cpufreq in a VM, no /etc/sysconfig on Debian):
		 * nothing to allow, and it stays unwritable. */
		if (e.code == ENOENT || e.code == ENOTDIR)
			return 0;
		*err = e;
		return cc_err_prefix(err, "landlock");
	}
	return cc_landlock_allow_fd(ll, fd, path, err);
}

int cc_landlock_apply(struct cc_landlock *ll, struct cc_err *err)
{
	int r;

	if (ll->fd < 0)
		return 0;
	/* Required for an unprivileged caller, and what seccomp sets anyway:
	 * nothing this process executes may gain privileges. */
	r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (r == 0)
		r = (int)syscall(SYS_landlock_restrict_self, ll->fd, 0);
	if (r < 0)
		cc_err_sys(err, errno, "landlock: restrict this process");
	cc_landlock_abandon(ll);
	return r < 0 ? -1 : 0;
}

void cc_landlock_abandon(struct cc_landlock *ll)
{
	if (ll->fd >= 0)
		close(ll->fd);
	ll->fd = -1;
}

/* Each CPU's cpuidle directory (its states' disable files), and nothing
 * else of the CPU's (not its online file, not its topology). */
static int allow_cpuidle(struct cc_landlock *ll, const struct cc_root *root, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, "/sys/devices/system/cpu", &e);
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[320];

		if (strncmp(de->d_name, "cpu", 3) || de->d_name[3] < '0' || de->d_name[3] > '9' ||
		    strspn(de->d_name + 3, "0123456789") != strlen(de->d_name + 3))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/cpuidle", de->d_name);
		if (cc_landlock_allow(ll, root, path, err) < 0)
			return -1;
	}
	return 0;
}

int cc_landlock_hook(const struct cc_root *root, int state_dirfd, struct cc_err *err)
{
	/* The hook's writes, as absolute kernel paths under the root: the
	 * cgroup2 mount (CC_CGROUP_MOUNT), IRQ affinities, the power settings
	 * (power_probe.c: cpufreq policies, the uncore driver), and the
	 * directories of irqbalance's environment file (cc_irqbalance_files,
	 * replaced by a rename in its directory). */
	static const char *const dirs[] = {
		"/sys/fs/cgroup",
		"/proc/irq",
		"/sys/devices/system/cpu/cpufreq",
		"/sys/devices/system/cpu/intel_uncore_frequency",
		"/etc/default",
		"/etc/sysconfig",
	};
	struct cc_landlock ll;
	int r = cc_landlock_begin(&ll, err);

	if (r <= 0)
		return r;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (cc_landlock_allow(&ll, root, dirs[i], err) < 0)
			goto fail;
	if (allow_cpuidle(&ll, root, err) < 0)
		goto fail;
	if (state_dirfd >= 0 && cc_landlock_allow_fd(&ll, state_dirfd, "the state directory", err) < 0)
		goto fail;
	return cc_landlock_apply(&ll, err) < 0 ? -1 : 1;
fail:
	cc_landlock_abandon(&ll);
	return -1;
}

int cc_landlock_device_plugin(int dir_fd, int state_dirfd, struct cc_err *err)
{
	struct cc_landlock ll;
	int r = cc_landlock_begin(&ll, err);

	if (r <= 0)
		return r;
	/* bind(2) makes the socket file: MAKE_SOCK there, and only there. */
	ll.handled |= LANDLOCK_ACCESS_FS_MAKE_SOCK;
	ll.allowed |= LANDLOCK_ACCESS_FS_MAKE_SOCK;
	if (cc_landlock_allow_fd(&ll, dir_fd, "the plugin directory", err) < 0)
		goto fail;
	ll.allowed &= ~(uint64_t)LANDLOCK_ACCESS_FS_MAKE_SOCK;
	if (cc_landlock_allow_fd(&ll, state_dirfd, "the state directory", err) < 0)
		goto fail;
	return cc_landlock_apply(&ll, err) < 0 ? -1 : 1;
fail:
	cc_landlock_abandon(&ll);
	return -1;
}
