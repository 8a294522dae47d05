/* hostguard.so: an LD_PRELOAD shim that writes down every open of the
 * host's /sys or /proc by corecarve's code in a unit test (issue #42,
 * item 3; tests/unit/run.sh preloads it, hostguard.py judges the log).
 *
 * A unit test reads a tree of its own (a fixture through --root, the fake
 * cgroupfs, a synthetic topology); what needs the host's kernel belongs in
 * the e2e guests.  A test that reads the host passes or skips by the luck
 * of the machine (test_power's cpuidle case once failed CI=true that way).
 *
 * Judged: processes running a test suite (tests/test_*) or the corecarve
 * binaries, forks of them included; the other programs a test runs (sh,
 * tar, mkdir) are not corecarve's code.  Caught: the libc entry points a
 * file is opened through (open, openat and their fortified and 64-bit
 * names, fopen, opendir) and openat2 through syscall(2), a path relative
 * to a directory fd resolved through /proc/self/fd; failed opens too (a
 * probe of the host is a read of it).  Each catch is one line appended to
 * $CC_HOSTGUARD_LOG:
 *     <pid> TAB <command line> TAB <resolved path> TAB <path as asked>
 * The shim itself reads /proc/self/exe and /proc/self/cmdline, through
 * the real functions. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static int judged = -1; /* this image is corecarve's: 1, not: 0, unknown: -1 */

static int real_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	static int (*fn)(int, const char *, int, ...);

	if (!fn)
		fn = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	return fn(dirfd, path, flags, mode);
}

static bool is_ours(void)
{
	char exe[PATH_MAX];
	const char *base;
	ssize_t n;

	if (judged >= 0)
		return judged;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return (judged = 0);
	exe[n] = '\0';
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	judged = (!strncmp(base, "test_", 5) && strstr(exe, "/tests/")) || !strcmp(base, "corecarve") ||
		 !strcmp(base, "corecarve-hook");
	return judged;
}

/* What a library's start-up or the process itself reads, not a test's
 * input: libnuma's constructor (numa_init, before main, in every process
 * linked with it) reads Mems_allowed and the node and CPU counts; glibc
 * and the process's own fd helpers read /proc/self. */
static bool allowed(const char *p)
{
	static const char *const exact[] = { "/proc/self/status", "/sys/devices/system/node",
					     "/sys/devices/system/cpu/possible", "/proc/self/exe",
					     "/proc/self/maps", "/proc/self/fd", "/proc/self/cmdline", NULL };
	int node;
	char tail[16];

	for (int i = 0; exact[i]; i++)
		if (!strcmp(p, exact[i]))
			return true;
	if (!strncmp(p, "/proc/self/fd/", 14))
		return true;
	return sscanf(p, "/sys/devices/system/node/node%d/%15s", &node, tail) == 2 && !strcmp(tail, "meminfo");
}

static bool on_host(const char *p)
{
	return !strcmp(p, "/sys") || !strcmp(p, "/proc") || !strncmp(p, "/sys/", 5) || !strncmp(p, "/proc/", 6);
}

/* `path` as the kernel resolves it from `dirfd`, "//" and "/./" folded. */
static void resolve(int dirfd, const char *path, char *out, size_t size)
{
	char base[PATH_MAX] = "", link[64];
	size_t j = 0;

	if (path[0] != '/') {
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				base[0] = '\0';
		} else {
			snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
			n = readlink(link, base, sizeof(base) - 1);
			base[n > 0 ? n : 0] = '\0';
		}
	}
	snprintf(out, size, "%s%s%s", base, base[0] && path[0] != '/' ? "/" : "", path);
	for (size_t i = 0; out[i]; i++) {
		if (out[i] == '/' && j > 0 && out[j - 1] == '/')
			continue;
		if (out[i] == '/' && out[i + 1] == '.' && (out[i + 2] == '/' || !out[i + 2])) {
			i++;
			continue;
		}
		out[j++] = out[i];
	}
	out[j] = '\0';
	if (j > 1 && out[j - 1] == '/')
		out[j - 1] = '\0';
}

static void note(int dirfd, const char *path)
{
	char full[PATH_MAX + 64], cmd[512], line[2 * PATH_MAX + 700];
	const char *logp = getenv("CC_HOSTGUARD_LOG");
	ssize_t n = 0;
	int fd;

	if (!path || !logp || !is_ours())
		return;
	resolve(dirfd, path, full, sizeof(full));
	if (!on_host(full) || allowed(full) || allowed(path))
		return;
	fd = real_openat(AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0) {
		n = read(fd, cmd, sizeof(cmd) - 1);
		close(fd);
	}
	for (ssize_t i = 0; i < n; i++)
		if (cmd[i] == '\0' || cmd[i] == '\t' || cmd[i] == '\n')
			cmd[i] = ' ';
	cmd[n > 0 ? n : 0] = '\0';
	n = snprintf(line, sizeof(line), "%ld\t%s\t%s\t%s\n", (long)getpid(), cmd, full, path);
	fd = real_openat(AT_FDCWD, logp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
			/* Nothing to do: the log is the only place to say it. */
		}
		close(fd);
	}
}

/* open and open64 go to the real openat: open(p) is openat(AT_FDCWD, p)
 * to the kernel, and on 64-bit the "64" names are the same call.  The
 * checked names below keep their own (they refuse O_CREAT without a mode). */
static int guarded_openat(int dirfd, const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;

	note(dirfd, path);
	return real_openat(dirfd, path, flags, mode);
}

#define OPEN_AT(name)                                                                                  \
	int name(int dirfd, const char *path, int flags, ...)                                          \
	{                                                                                              \
		va_list ap;                                                                            \
		int r;                                                                                 \
                                                                                                       \
		va_start(ap, flags);                                                                   \
		r = guarded_openat(dirfd, path, flags, ap);                                            \
		va_end(ap);                                                                            \
		return r;                                                                              \
	}
#define OPEN(name)                                                                                     \
	int name(const char *path, int flags, ...)                                                     \
	{                                                                                              \
		va_list ap;                                                                            \
		int r;                                                                                 \
                                                                                                       \
		va_start(ap, flags);                                                                   \
		r = guarded_openat(AT_FDCWD, path, flags, ap);                                         \
		va_end(ap);                                                                            \
		return r;                                                                              \
	}

/* The names glibc's headers send an open to: the 64-bit ones and, with
 * _FORTIFY_SOURCE, the checked ones. */
OPEN(open)
OPEN(open64)
OPEN_AT(openat)
OPEN_AT(openat64)

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	note(AT_FDCWD, path);
	return REAL(__open_2)(path, flags);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	note(AT_FDCWD, path);
	return REAL(__open64_2)(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags)
{
	note(dirfd, path);
	return REAL(__openat_2)(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags)
{
	note(dirfd, path);
	return REAL(__openat64_2)(dirfd, path, flags);
}

FILE *fopen(const char *path, const char *mode)
{
	note(AT_FDCWD, path);
	return REAL(fopen)(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	note(AT_FDCWD, path);
	return REAL(fopen64)(path, mode);
}

DIR *opendir(const char *path)
{
	note(AT_FDCWD, path);
	return REAL(opendir)(path);
}

/* openat2 has no libc wrapper in Debian 12's glibc: corecarve calls it
 * through syscall(2).  x86-64 passes the six arguments in registers, so
 * forwarding six longs forwards any call. */
long syscall(long nr, ...)
{
	static long (*fn)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!fn)
		fn = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_openat2)
		note((int)a[0], (const char *)a[1]);
	return fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
