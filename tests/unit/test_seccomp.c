/* The hook's sandbox (plugin/core/sandbox.h): in a forked child that loaded the
 * exact filter the hook loads, forbidden calls fail with EPERM, the fault
 * switch still kills, and what the hook does after confining itself (the
 * ledger, policy parsing, file reads) still works. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "capture.h"
#include "cleanup.h"
#include "fault.h"
#include "journal.h"
#include "ledger.h"
#include "oci.h"
#include "policy.h"
#include "root.h"
#include "sandbox.h"
#include "systemctl.h"
#include "testlib.h"

/* Each forbidden operation returns the errno it failed with, 0 if it
 * succeeded (which the test reports as a hole in the filter). */
static int err_of(long r)
{
	return r < 0 ? errno : 0;
}

static int do_execve(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };

	return err_of(execve("/bin/true", argv, envp));
}

static int do_execveat(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };

	return err_of(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0));
}

static int do_socket_inet(void)
{
	return err_of(socket(AF_INET, SOCK_STREAM, 0));
}

static int do_socket_unix(void)
{
	return err_of(socket(AF_UNIX, SOCK_DGRAM, 0));
}

static int do_socket_netlink(void)
{
	return err_of(socket(AF_NETLINK, SOCK_RAW, 0));
}

static int do_ptrace(void)
{
	return err_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static int do_process_vm_readv(void)
{
	char buf[8], src[8] = "x";
	struct iovec local = { buf, sizeof(buf) }, remote = { src, sizeof(src) };

	return err_of(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
}

static int do_process_vm_writev(void)
{
	char buf[8] = "x", dst[8];
	struct iovec local = { buf, sizeof(buf) }, remote = { dst, sizeof(dst) };

	return err_of(process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
}

static int do_fork(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
	return err_of(p);
}

/* Signal 0 only probes: harmless to the test runner should it pass. */
static int do_kill_parent(void)
{
	return err_of(kill(getppid(), 0));
}

static int do_kill_self_term(void)
{
	return err_of(kill(getpid(), SIGTERM));
}

static int do_mmap_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? errno : 0;
}

static int do_mprotect_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	return err_of(mprotect(p, 4096, PROT_READ | PROT_EXEC));
}

static int do_mount(void)
{
	return err_of(mount("none", "/tmp", "tmpfs", 0, NULL));
}

static int do_unshare(void)
{
	return err_of(unshare(CLONE_NEWNS));
}

static int do_setuid(void)
{
	return err_of(setuid(65534));
}

static int do_ioctl_tiocsti(void)
{
	char c = 'x';

	return err_of(ioctl(STDIN_FILENO, TIOCSTI, &c));
}

static int do_bpf(void)
{
	return err_of(syscall(SYS_bpf, 0, NULL, 0));
}

static int do_chmod_path(void)
{
	/* Only fchmod on descriptors the hook opened is needed. */
	return err_of(chmod("/tmp", 01777));
}

/* `control`: harmless to run unconfined in a throw-away child, where it
 * must not fail with EPERM, so the EPERM under the filter is the filter's. */
static const struct {
	const char *name;
	int (*op)(void);
	bool control;
} forbidden[] = {
	{ "execve", do_execve, false },
	{ "execveat", do_execveat, false },
	{ "socket(AF_INET)", do_socket_inet, true },
	{ "socket(AF_UNIX)", do_socket_unix, true },
	{ "socket(AF_NETLINK)", do_socket_netlink, true },
	{ "ptrace", do_ptrace, true },
	{ "process_vm_readv", do_process_vm_readv, true },
	{ "process_vm_writev", do_process_vm_writev, true },
	{ "fork/clone", do_fork, true },
	{ "kill(parent)", do_kill_parent, true },
	{ "kill(self, SIGTERM)", do_kill_self_term, false },
	{ "mmap(PROT_EXEC)", do_mmap_exec, true },
	{ "mprotect(PROT_EXEC)", do_mprotect_exec, true },
	{ "mount", do_mount, false },
	{ "unshare", do_unshare, false },
	{ "setuid", do_setuid, false },
	{ "ioctl(TIOCSTI)", do_ioctl_tiocsti, false },
	{ "bpf", do_bpf, true },
	{ "chmod", do_chmod_path, false },
};

/* The hook's filter, as testlib's filtered child loads one. */
static int load_hook_filter(struct cc_err *err)
{
	return cc_sandbox_hook(-1, -1, 0, err);
}

/* Run `body` in a forked child after cc_sandbox_hook() (or none). */
static int in_child(bool sandbox, int (*body)(void *), void *arg, int *status)
{
	return cc_test_filtered_status(sandbox ? load_hook_filter : NULL, body, arg, status);
}

static int confined(int (*body)(void *), void *arg, int *status)
{
	return in_child(true, body, arg, status);
}

static int run_forbidden(void *arg)
{
	return forbidden[*(int *)arg].op();
}

START_TEST(test_forbidden_eperm)
{
	int i = _i, st, r = confined(run_forbidden, &i, &st);

	ck_assert_msg(r != -2000, "the filter did not load");
	ck_assert_msg(r == EPERM, "%s under the hook's filter: %s", forbidden[_i].name,
		      r == 0 ? "succeeded" : strerror(r));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

/* The same calls succeed unconfined (or fail otherwise): the EPERM above
 * is the filter's doing, not the machine's. */
static int run_status(void *arg)
{
	_cleanup_free_ char *s = NULL;
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	(void)arg;
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (strstr(buf, "\nSeccomp:\t2\n") ? 1 : 0) | (strstr(buf, "\nNoNewPrivs:\t1\n") ? 2 : 0);
}

START_TEST(test_filter_mode_in_status)
{
	int st, r = confined(run_status, NULL, &st);

	ck_assert_int_eq(r, 3);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

START_TEST(test_forbidden_control)
{
	int i = _i, st, r;

	if (!forbidden[_i].control)
		return;
	r = in_child(false, run_forbidden, &i, &st);
	ck_assert_msg(r != EPERM && r != -1000, "%s fails with %s without the filter too", forbidden[_i].name,
		      r == -1000 ? "no answer" : "EPERM");
}
END_TEST

/* The holder's line in the lock file: "cmd=<want>\n" at its end, or the
 * file empty (want NULL).  1 when it is so. */
static int lock_line_is(const char *dir, const char *want)
{
	char path[96], buf[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	if (!want)
		return n == 0;
	return strncmp(buf, "pid=", 4) == 0 && strstr(buf, want) && strlen(strstr(buf, want)) == strlen(want);
}

/* What the hook does after confining itself: parse a policy, and a whole
 * ledger cycle (mkdir 0700, lock and its holder's line, temp file, fsync,
 * rename, readdir, the line emptied as the lock is let go). */
static int run_hook_work(void *arg)
{
	const char *dir = arg;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_default(&err);
	struct cc_ledger_lock lk = { .wait_ms = 0, .holder = "corecarve confined" };
	struct cc_ledger *l;
	struct cc_carve c;
	int r;

	if (!p)
		return 10;
	l = cc_ledger_open_as(dir, CC_LEDGER_WRITE, &lk, &err);
	if (!l)
		return 11;
	if (!lock_line_is(dir, " cmd=corecarve confined\n")) {
		cc_ledger_close(l);
		return 16;
	}
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "confined");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set(c.cpus, 3);
	r = cc_ledger_add(l, &c, &err) < 0 ? 12 : cc_ledger_commit(l, &err) < 0 ? 13 : 0;
	cc_carve_fini(&c);
	cc_ledger_close(l);
	if (r)
		return r;
	if (!lock_line_is(dir, NULL))
		return 17;
	l = cc_ledger_open(dir, &err);
	if (!l)
		return 14;
	r = cc_ledger_find(l, "confined") ? 0 : 15;
	cc_ledger_close(l);
	if (r)
		return r;
	/* The read-only probe of irqbalance's directory (irqbalance.h). */
	{
		struct statvfs sv;
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		r = fd < 0 ? 16 : fstatvfs(fd, &sv) < 0 ? 17 : 0;
		if (fd >= 0)
			close(fd);
	}
	return r;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

START_TEST(test_hook_work_allowed)
{
	char base[] = "/tmp/cc-seccomp-XXXXXX", dir[64];
	int st, r;

	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/state", base);
	r = confined(run_hook_work, dir, &st);
	nftw(base, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	ck_assert_msg(r == 0, "step %d of the confined ledger cycle failed", r);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

/* The bounded wait for the ledger lock under the filter: the naps
 * (clock_nanosleep), the deadline, and naming the holder from the lock
 * file and /proc/locks.  The holder is this process (the test), the waiter
 * the confined child, on a descriptor of its own. */
struct lock_case {
	const char *dir;
	const char *want[2]; /* in the waiter's message */
};

static int run_lock_wait(void *arg)
{
	const struct lock_case *lc = arg;
	struct cc_ledger_lock lk = { .wait_ms = 200, .holder = "corecarve confined" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open_as(lc->dir, CC_LEDGER_WRITE, &lk, &err);

	if (l)
		return 1;
	if (err.code != ETIMEDOUT || !strstr(err.msg, "; gave up after 0.2 s")) {
		fprintf(stderr, "confined waiter: %s\n", err.msg);
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if (lc->want[i] && !strstr(err.msg, lc->want[i])) {
			fprintf(stderr, "confined waiter: \"%s\" not in \"%s\"\n", lc->want[i], err.msg);
			return 3 + i;
		}
	return 0;
}

START_TEST(test_lock_wait_confined)
{
	char base[] = "/tmp/cc-seccomp-XXXXXX", dir[64], lockp[80], want[96];
	struct cc_ledger_lock lk = { .wait_ms = 0, .holder = "corecarve holder" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	int st, r, fd;

	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/state", base);
	snprintf(lockp, sizeof(lockp), "%s/lock", dir);
	/* A holder that recorded itself. */
	l = cc_ledger_open_as(dir, CC_LEDGER_WRITE, &lk, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	snprintf(want, sizeof(want), "held by pid %ld (corecarve holder) for ", (long)getpid());
	r = confined(run_lock_wait, &(struct lock_case){ dir, { want, NULL } }, &st);
	cc_ledger_close(l);
	ck_assert_msg(r == 0, "recorded holder: confined waiter step %d", r);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	/* One that did not: named from /proc/locks and /proc/<pid>/cmdline. */
	fd = open(lockp, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	snprintf(want, sizeof(want), "held by pid %ld (", (long)getpid());
	r = confined(run_lock_wait, &(struct lock_case){ dir, { want, "test_seccomp), which did not record itself" } },
		     &st);
	close(fd);
	nftw(base, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	ck_assert_msg(r == 0, "unrecorded holder: confined waiter step %d", r);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

/* A confined waiter stopped and continued in the middle of its naps (the
 * kernel resumes a nap through restart_syscall) takes the lock once it is
 * let go.  Stopped outside a nap, the test passes as well: the nap is
 * where a waiter spends nearly all its time. */
START_TEST(test_lock_stop_cont_confined)
{
	char base[] = "/tmp/cc-seccomp-XXXXXX", dir[64], lockp[80];
	struct timespec ms100 = { 0, 100000000L };
	struct cc_err err = CC_ERR_INIT;
	int fds[2], fd, st, result = -1000;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/state", base);
	snprintf(lockp, sizeof(lockp), "%s/lock", dir);
	cc_ledger_close(cc_ledger_open(dir, &err));
	fd = open(lockp, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(pipe(fds), 0);
	pid = cc_test_fork();
	if (pid == 0) {
		struct cc_ledger_lock lk = { .wait_ms = 60000, .holder = "corecarve confined" };
		struct cc_ledger *l;
		int r = 0;

		close(fds[0]);
		close(fd);
		if (cc_sandbox_hook(-1, -1, 0, &err) < 0)
			r = -2000;
		else if (!(l = cc_ledger_open_as(dir, CC_LEDGER_WRITE, &lk, &err))) {
			fprintf(stderr, "confined waiter: %s\n", err.msg);
			r = 1;
		} else {
			cc_ledger_close(l);
		}
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	nanosleep(&ms100, NULL);
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	nanosleep(&ms100, NULL);
	flock(fd, LOCK_UN);
	close(fd);
	if (read(fds[0], &result, sizeof(result)) != sizeof(result))
		result = -1000;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	nftw(base, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	ck_assert_msg(result == 0, "confined waiter: %d", result);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

static int run_fault(void *arg)
{
	(void)arg;
	cc_fault("after-lock", "after-lock");
	return 99; /* not reached when SIGKILL to itself is allowed */
}

START_TEST(test_fault_switch_still_kills)
{
	int st, r = confined(run_fault, NULL, &st);

	ck_assert_int_eq(r, -1000); /* nothing written: killed first */
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
}
END_TEST

/* "<step>:STOP": the confined process stops itself there (the tests'
 * stuck writer), and goes on when continued. */
START_TEST(test_fault_switch_stops)
{
	int st = 0;
	pid_t pid;
	pid = cc_test_fork();
	if (pid == 0) {
		struct cc_err err = CC_ERR_INIT;

		if (load_hook_filter(&err) < 0)
			_exit(2);
		cc_fault("after-lock:STOP", "after-lock");
		_exit(7);
	}
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "status %#x", st);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 7, "status %#x", st);
}
END_TEST

/* The journal line (journal.h): a socket connected before the filter is
 * the one the hook may send on; every other descriptor, a new socket and
 * a connect are refused.  The listener here stands in for journald's
 * native socket, and receives the structured fields. */
START_TEST(test_log_socket)
{
	char dir[] = "/tmp/cc-seccomp-log-XXXXXX", path[96];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cc_journal_field f[] = { { "CORECARVE_EVENT", "carve" }, { "CORECARVE_CPUS", "2,4" } };
	int lfd, fds[2], result[4] = { -1, -1, -1, -1 }, st;
	char got[1024];
	ssize_t n;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/journal.socket", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ck_assert_int_ge(lfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(pipe(fds), 0);
	pid = cc_test_fork();
	if (pid == 0) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_journal j;
		int other = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		close(fds[0]);
		cc_journal_open(&j, path, "/nonexistent/log");
		if (j.fd < 0 || !j.native || cc_sandbox_hook(j.fd, -1, 0, &err) < 0)
			_exit(4);
		result[0] = cc_journal_send(&j, 6, "carve c1: class latency\nforged=1", f, 2);
		result[1] = err_of(sendto(other, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa)));
		result[2] = err_of(socket(AF_UNIX, SOCK_DGRAM, 0));
		result[3] = err_of(connect(other, (struct sockaddr *)&sa, sizeof(sa)));
		if (write(fds[1], result, sizeof(result)) != sizeof(result))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], result, sizeof(result)), (ssize_t)sizeof(result));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	ck_assert_int_eq(result[0], 0);
	ck_assert_int_eq(result[1], EPERM);
	ck_assert_int_eq(result[2], EPERM);
	ck_assert_int_eq(result[3], EPERM);
	n = recv(lfd, got, sizeof(got) - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	/* One datagram, one field a line; a newline in the message cannot
	 * forge another field. */
	ck_assert_str_eq(got, "PRIORITY=6\nSYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=corecarve\n"
			      "MESSAGE=carve c1: class latency\\nforged=1\nCORECARVE_EVENT=carve\nCORECARVE_CPUS=2,4\n");
	close(lfd);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Without journald, syslog's /dev/log (RFC 3164); without either, no
 * socket, and sending is a harmless no-op. */
START_TEST(test_log_fallbacks)
{
	char dir[] = "/tmp/cc-seccomp-log-XXXXXX", path[96], got[512], want[128];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cc_journal j;
	int lfd;
	ssize_t n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ck_assert_int_ge(lfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cc_journal_open(&j, "/nonexistent/journal.socket", path);
	ck_assert_int_ge(j.fd, 0);
	ck_assert(!j.native);
	ck_assert_int_eq(cc_journal_send(&j, 4, "refuse c2: no capacity", NULL, 0), 0);
	n = recv(lfd, got, sizeof(got) - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	snprintf(want, sizeof(want), "<28>corecarve[%ld]: refuse c2: no capacity", (long)getpid());
	ck_assert_str_eq(got, want);
	cc_journal_close(&j);
	cc_journal_open(&j, "/nonexistent/journal.socket", "/nonexistent/log");
	ck_assert_int_eq(j.fd, -1);
	ck_assert_int_eq(cc_journal_send(&j, 6, "nowhere", NULL, 0), -1);
	close(lfd);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Each system call a libc may make for fstat() and stat(), made directly:
 * Debian 12's glibc makes newfstatat, Debian 13's fstat, and the hook runs
 * on whichever the node has (the filter once lacked fstat, and every start
 * on a Debian 13 node failed). */
static int run_stat_family(void *arg)
{
	const char *path = arg;
	struct stat st;
	struct statx stx;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	if (syscall(SYS_fstat, fd, &st) < 0)
		return 2;
	if (syscall(SYS_stat, path, &st) < 0)
		return 3;
	if (syscall(SYS_lstat, path, &st) < 0)
		return 4;
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) < 0)
		return 5;
	if (syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) < 0)
		return 6;
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_SIZE, &stx) < 0 && errno != ENOSYS)
		return 7;
	close(fd);
	return 0;
}

START_TEST(test_stat_family_allowed)
{
	int st, r = confined(run_stat_family, "/proc/self/status", &st);

	ck_assert_msg(r == 0, "step %d (fstat, stat, lstat, newfstatat, newfstatat AT_EMPTY_PATH, statx) failed"
		      " under the filter", r);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

/* Every name resolves on this architecture or is one it lacks, and
 * nothing that could start a program or reach a network is listed. */
START_TEST(test_list_sane)
{
	static const char *const never[] = { "execve", "execveat", "socket", "connect", "ptrace",
					     "process_vm_readv", "process_vm_writev", "clone", "clone3",
					     "fork", "vfork", "mount", "bpf", "ioctl", "setuid", NULL };
	int n = cc_sandbox_hook_count();

	ck_assert_int_gt(n, 10);
	ck_assert_ptr_null(cc_sandbox_hook_name(n));
	for (int i = 0; i < n; i++) {
		const char *name = cc_sandbox_hook_name(i);

		for (int k = 0; never[k]; k++)
			ck_assert_msg(strcmp(name, never[k]) != 0, "%s is allow-listed", name);
		for (int k = 0; k < i; k++)
			ck_assert_msg(strcmp(name, cc_sandbox_hook_name(k)) != 0, "%s listed twice", name);
	}
	ck_assert_int_ne(seccomp_syscall_resolve_name("openat"), __NR_SCMP_ERROR);
}
END_TEST

/* ---- the first stage's filter (cc_sandbox_first_stage) ----------------- */

/* Run `body` in a forked child under the first stage's filter; it may not
 * write, so its result (an errno, < 256) is its exit status; 200: the
 * filter did not load. */
static int first_stage_child(int (*body)(void *), void *arg)
{
	int status = 0;
	pid_t pid = cc_test_fork();
	if (pid == 0) {
		struct cc_err err = CC_ERR_INIT;

		if (cc_sandbox_first_stage(&err) < 0)
			_exit(200);
		_exit(body(arg) & 0xff);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static int do_open_write(void)
{
	return err_of(open("/tmp/cc-first-stage-filter-probe", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

static int do_open_trunc(void)
{
	return err_of(open("/dev/null", O_RDONLY | O_TRUNC | O_CLOEXEC));
}

static int do_write_stderr(void)
{
	return err_of(write(STDERR_FILENO, "", 0));
}

static int run_first_forbidden(void *arg)
{
	int i = *(int *)arg;
	static int (*const more[])(void) = { do_open_write, do_open_trunc, do_write_stderr };
	int n = (int)(sizeof(forbidden) / sizeof(forbidden[0]));

	return i < n ? forbidden[i].op() : more[i - n]();
}

/* Everything the hook's filter refuses, and writing: refused with EPERM
 * to the process that parses every container's config.json. */
START_TEST(test_first_stage_forbidden)
{
	int i = _i, r = first_stage_child(run_first_forbidden, &i);

	ck_assert_msg(r != 200, "the filter did not load");
	ck_assert_msg(r == EPERM, "case %d under the first stage's filter: %s", _i, r == 0 ? "succeeded" : strerror(r));
}
END_TEST

/* What the first stage's decision does still works under it: the state
 * and config.json parsed, the state directory opened and the ledger
 * read. */
static int __attribute__((unused)) run_first_work(void *arg)
{
	const char *dir = arg;
	static const char state[] = "{\"id\":\"c1\",\"annotations\":{\"a\":\"b\"}}";
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;
	struct cc_oci_config cfg;
	_cleanup_free_ char *buf = NULL;
	char path[512];
	size_t len = 0;
	int fd;

	if (cc_oci_state_parse(state, strlen(state), &st, &err) < 0)
		return 10;
	cc_oci_state_fini(&st);
	if (cc_oci_config_load(dir, &cfg, &err) < 0)
		return 11;
	if (!json_object_get(cfg.annotations, "corecarve.io/placement"))
		return 12;
	cc_oci_config_fini(&cfg);
	snprintf(path, sizeof(path), "%s/state", dir);
	fd = cc_state_dir_open(path, false, NULL, &err);
	if (fd < 0)
		return 13;
	if (cc_state_ledger_read(fd, path, &buf, &len, &err) < 0 || !buf || !strstr(buf, "\"version\""))
		return 14;
	close(fd);
	return 0;
}

#if defined(__SANITIZE_ADDRESS__)
/* In a SANITIZE=1 build the sanitizers' own runtime makes calls the
 * first stage's filter refuses (sigaltstack, gettid, futex, as it winds
 * up), so the work is shown under the filter where it ships: the real
 * first stage, built without the sanitizers in that tree too
 * (mk/first-stage.mk), alone in a directory so that it cannot hand over
 * to a full hook.  Exit 0 means its confined child parsed the state and
 * config.json (createRuntime) and read the ledger (poststop) itself. */
START_TEST(test_first_stage_work_allowed)
{
	char dir[] = "/tmp/cc-first-filter-XXXXXX";
	const char *bin = getenv("CORECARVE_FIRST_STAGE_BIN");
	char *out = NULL;

	ck_assert_msg(bin && *bin, "CORECARVE_FIRST_STAGE_BIN is not set (make unit sets it)");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(NULL,
				    "cd %s && cp '%s' corecarve-hook && mkdir b && mkdir -m 0700 state && "
				    "printf '{\"version\":2}\\n' >state/" CC_LEDGER_FILE
				    " && printf '{\"annotations\":{\"a\":\"b\"}}' >b/config.json",
				    dir, bin),
			 0);
	ck_assert_msg(cc_test_sh(&out,
				 "cd %s && printf '{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\","
				 "\"pid\":1,\"bundle\":\"%s/b\"}' | ./corecarve-hook createRuntime --state %s/state",
				 dir, dir, dir) == 0,
		      "createRuntime: %s", out);
	free(out);
	out = NULL;
	ck_assert_msg(cc_test_sh(&out,
				 "cd %s && printf '{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"stopped\","
				 "\"bundle\":\"%s/b\"}' | ./corecarve-hook poststop --state %s/state",
				 dir, dir, dir) == 0,
		      "poststop: %s", out);
	free(out);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST
#else
START_TEST(test_first_stage_work_allowed)
{
	char dir[] = "/tmp/cc-first-filter-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(NULL,
				    "cd %s && mkdir -m 0700 state && printf '{\"version\":2}\\n' >state/" CC_LEDGER_FILE
				    " && printf '{\"annotations\":{\"corecarve.io/placement\":\"{class: x}\"}}' >config.json",
				    dir),
			 0);
	ck_assert_int_eq(first_stage_child(run_first_work, dir), 0);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST
#endif

/* ---- the tools' deny-list: audit, vm/irq reconcile, capture ------------------ */

static int do_clone_newuser(void)
{
	long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return err_of(r);
}

/* No arguments: EFAULT or EINVAL unconfined, whatever the kernel. */
static int do_clone3(void)
{
	return err_of(syscall(SYS_clone3, NULL, 0));
}

static int do_perf_event_open(void)
{
	return err_of(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

/* KEYCTL_GET_KEYRING_ID of the session keyring, without creating it. */
static int do_keyctl(void)
{
	return err_of(syscall(SYS_keyctl, 0, -3, 0));
}

static int do_io_uring_setup(void)
{
	return err_of(syscall(SYS_io_uring_setup, 0, NULL));
}

static int do_setns(void)
{
	return err_of(setns(-1, 0));
}

static int do_finit_module(void)
{
	return err_of(syscall(SYS_finit_module, -1, "", 0));
}

static int do_open_by_handle_at(void)
{
	return err_of(syscall(SYS_open_by_handle_at, -1, NULL, 0));
}

static int do_chroot(void)
{
	return err_of(chroot("/"));
}

/* What the tools' filters refuse, with the errno they answer.  `control`
 * as in `forbidden`: harmless unconfined, where it must not fail with that
 * errno. */
static const struct {
	const char *name;
	int (*op)(void);
	int want;
	bool control;
} tool_forbidden[] = {
	{ "execve", do_execve, EPERM, false },
	{ "execveat", do_execveat, EPERM, false },
	{ "socket(AF_INET)", do_socket_inet, EPERM, true },
	{ "socket(AF_NETLINK)", do_socket_netlink, EPERM, true },
#if !defined(__SANITIZE_ADDRESS__) /* kept for LeakSanitizer (sandbox.c) */
	{ "ptrace", do_ptrace, EPERM, true },
#endif
	{ "process_vm_readv", do_process_vm_readv, EPERM, true },
	{ "process_vm_writev", do_process_vm_writev, EPERM, true },
	{ "mount", do_mount, EPERM, false },
	{ "unshare", do_unshare, EPERM, false },
	{ "setuid", do_setuid, EPERM, false },
	{ "ioctl(TIOCSTI)", do_ioctl_tiocsti, EPERM, false },
	{ "bpf", do_bpf, EPERM, true },
	{ "clone(CLONE_NEWUSER)", do_clone_newuser, EPERM, true },
	{ "clone3", do_clone3, ENOSYS, true },
	{ "perf_event_open", do_perf_event_open, EPERM, true },
	{ "keyctl", do_keyctl, EPERM, true },
	{ "io_uring_setup", do_io_uring_setup, EPERM, true },
	{ "setns", do_setns, EPERM, true },
	{ "finit_module", do_finit_module, EPERM, true },
	{ "open_by_handle_at", do_open_by_handle_at, EPERM, true },
	{ "chroot", do_chroot, EPERM, false },
};

#define NTOOL_FORBIDDEN ((int)(sizeof(tool_forbidden) / sizeof(tool_forbidden[0])))

static const struct {
	const char *name;
	int (*load)(struct cc_err *);
	bool unix_sockets;
} tools[] = {
	{ "audit", cc_sandbox_audit, true },
	{ "vm reconcile", cc_sandbox_vm_reconcile, true },
	{ "irq reconcile", cc_sandbox_irq_reconcile, true },
	{ "capture", cc_sandbox_capture, false },
};

#define NTOOLS ((int)(sizeof(tools) / sizeof(tools[0])))

static int run_tool_op(void *arg)
{
	return tool_forbidden[*(int *)arg].op();
}

/* Every tool's filter refuses every call of the table. */
START_TEST(test_tool_forbidden)
{
	int t = _i / NTOOL_FORBIDDEN, op = _i % NTOOL_FORBIDDEN;
	int got = cc_test_filtered(tools[t].load, run_tool_op, &op);

	ck_assert_msg(got == tool_forbidden[op].want, "%s: %s returned %d (%s), want %s", tools[t].name,
		      tool_forbidden[op].name, got, got > 0 ? strerror(got) : "no errno", strerror(tool_forbidden[op].want));
}
END_TEST

/* Unconfined, the harmless ones do not fail that way: the errno above is
 * the filter's. */
START_TEST(test_tool_forbidden_control)
{
	int got;

	if (!tool_forbidden[_i].control)
		return;
	got = cc_test_filtered(NULL, run_tool_op, &_i);
	ck_assert_msg(got != tool_forbidden[_i].want, "%s fails with %s even unconfined", tool_forbidden[_i].name,
		      strerror(got));
}
END_TEST

/* What the tools still need: fork (the filter is no allow-list), AF_UNIX
 * sockets for journald and irqbalance (none for capture), reading and
 * writing files. */
static int run_tool_allowed(void *arg)
{
	bool unix_sockets = *(bool *)arg;
	int sv[2], fd, e;
	char path[] = "/tmp/cc-tool-filter-XXXXXX";

	if (do_fork() != 0)
		return 1;
	e = do_socket_unix();
	if (e != (unix_sockets ? 0 : EPERM))
		return 2;
	e = err_of(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	if (e != (unix_sockets ? 0 : EPERM))
		return 3;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "x", 1) != 1 || unlink(path) < 0)
		return 4;
	close(fd);
	return 0;
}

START_TEST(test_tool_allowed)
{
	bool unix_sockets = tools[_i].unix_sockets;

	ck_assert_int_eq(cc_test_filtered(tools[_i].load, run_tool_allowed, &unix_sockets), 0);
}
END_TEST

START_TEST(test_tool_list_sane)
{
	ck_assert_int_ge(cc_sandbox_tool_denied_count(), 40);
	for (int i = 0; i < cc_sandbox_tool_denied_count(); i++) {
		const char *n = cc_sandbox_tool_denied_name(i);

		ck_assert_ptr_nonnull(n);
		/* A call the tools make must never be on it. */
		ck_assert_msg(strcmp(n, "openat") && strcmp(n, "write") && strcmp(n, "sched_setaffinity") &&
				      strcmp(n, "connect") && strcmp(n, "clone"),
			      "%s is denied", n);
	}
	ck_assert_ptr_null(cc_sandbox_tool_denied_name(cc_sandbox_tool_denied_count()));
}
END_TEST

struct capture_job {
	const char *src, *dest;
};

static int run_capture(void *arg)
{
	const struct capture_job *j = arg;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(j->src, &err);
	struct cc_capture_opts o = { .version = "test" };
	struct cc_capture_stats st;

	if (!root)
		return 1;
	if (cc_capture(root, j->dest, &o, &st, &err) < 0) {
		fprintf(stderr, "cc_capture: %s\n", err.msg);
		return 2;
	}
	return st.files > 100 ? 0 : 3;
}

/* capture's work under its filter: a real machine's tree copied. */
START_TEST(test_capture_under_filter)
{
	const char *fx = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	char dir[] = "/tmp/cc-capture-filter-XXXXXX", src[4096], dest[4096], a[4200], b[4200];
	_cleanup_free_ char *want = NULL, *got = NULL;
	struct capture_job j = { src, dest };

	if (!fx)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/sample1", fx);
	snprintf(dest, sizeof(dest), "%s/cap", dir);
	ck_assert_int_eq(cc_test_filtered(cc_sandbox_capture, run_capture, &j), 0);
	snprintf(a, sizeof(a), "%s/sys/devices/system/cpu/online", src);
	snprintf(b, sizeof(b), "%s/sys/devices/system/cpu/online", dest);
	want = cc_test_slurp(a);
	got = cc_test_slurp(b);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* ---- the systemctl helper: the one exec a filtered tool keeps ------------- */

static const char *const h_opts[] = { "--no-block", "try-restart", NULL };
static const char *const h_units[] = { "irqbalance.service", NULL };
static const char *const other_opts[] = { "start", NULL };
static char h_path[64];

static int helper_then_filter(struct cc_err *err)
{
	if (cc_systemctl_helper_start(h_path, h_opts, h_units, err) < 0)
		return -1;
	return cc_sandbox_irq_reconcile(err);
}

static int run_helper(void *arg)
{
	struct cc_err err = CC_ERR_INIT;

	(void)arg;
	/* Asked twice: the helper serves until this process is done. */
	for (int i = 0; i < 2; i++)
		if (cc_systemctl(h_opts, h_units, &err) < 0) {
			fprintf(stderr, "helper: %s\n", err.msg);
			return 1 + i;
		}
	/* Any other command is this process's own spawn, which the filter refuses. */
	if (cc_systemctl(other_opts, h_units, &err) == 0 || err.code != EPERM)
		return 3;
	if (do_execve() != EPERM)
		return 4;
	return 0;
}

/* Run BODY in a child that loaded FILTER after starting a helper on a
 * stand-in systemctl (h_path) that appends its arguments, one a line, to
 * a file; the child must return 0; what the stand-in got. */
static char *through_standin(int (*filter)(struct cc_err *), int (*body)(void *))
{
	char dir[] = "/tmp/cc-helper-XXXXXX";
	char path[128];
	char *args;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(h_path, sizeof(h_path), "%s/systemctl", dir);
	ck_assert_int_eq(cc_test_sh(NULL,
				    "printf '#!/bin/sh\\nprintf \"%%%%s\\\\n\" \"$@\" >>%s/args\\n' >%s && chmod 0755 %s",
				    dir, h_path, h_path),
			 0);
	ck_assert_int_eq(cc_test_filtered(filter, body, NULL), 0);
	snprintf(path, sizeof(path), "%s/args", dir);
	args = cc_test_slurp(path);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
	return args;
}

START_TEST(test_systemctl_helper)
{
	_cleanup_free_ char *args = through_standin(helper_then_filter, run_helper);

	ck_assert_str_eq(args, "--no-block\ntry-restart\n--\nirqbalance.service\n"
			       "--no-block\ntry-restart\n--\nirqbalance.service\n");
}
END_TEST

/* The hook's helper (no fixed command) forked before the hook's own
 * allow-list: a slice's properties go through it (send and receive on its
 * socket), and the hook reaps it at exit (wait4 on its pid) without one
 * denial; wait4 on any other child and a spawn stay refused. */
static int hook_helper_then_filter(struct cc_err *err)
{
	if (cc_systemctl_helper_start(h_path, NULL, NULL, err) < 0)
		return -1;
	return cc_sandbox_hook(-1, cc_systemctl_helper_fd(), cc_systemctl_helper_pid(), err);
}

static int run_hook_helper(void *arg)
{
	static const char *const props[] = { "AllowedCPUs=0-1", NULL };
	struct cc_err err = CC_ERR_INIT;
	int st;

	(void)arg;
	if (cc_systemd_set("kubepods-besteffort.slice", props, &err) < 0) {
		fprintf(stderr, "helper: %s\n", err.msg);
		return 1;
	}
	if (waitpid(1, &st, WNOHANG) >= 0 || errno != EPERM)
		return 2;
	/* Refused: EPERM from the filter, or ENOENT where no systemctl is. */
	if (cc_systemctl(other_opts, h_units, &err) == 0)
		return 3;
	/* What atexit does: the socket closed, the helper leaves, reaped. */
	close(cc_systemctl_helper_fd());
	if (waitpid(cc_systemctl_helper_pid(), &st, 0) != cc_systemctl_helper_pid())
		return 4;
	return 0;
}

START_TEST(test_hook_systemctl_helper)
{
	_cleanup_free_ char *args = through_standin(hook_helper_then_filter, run_hook_helper);

	ck_assert_str_eq(args, "set-property\n--runtime\n--\nkubepods-besteffort.slice\nAllowedCPUs=0-1\n");
}
END_TEST

/* ---- the real binary: each command loads its filter and still works ------ */

/* `corecarve ARGS` under strace, which must show the filter loaded
 * (libseccomp's seccomp(2) with a program) and the command exit 0. */
static void traced(const char *dir, const char *bin, const char *args)
{
	char *out = NULL;
	int rc;

	/* LeakSanitizer stops the threads with ptrace at exit, which it
	 * cannot under strace (a SANITIZE=1 build): leaks are the other
	 * suites' to find. */
	rc = cc_test_sh(&out,
			"CORECARVE_STATE_DIR= ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=seccomp -o '%s/trace' '%s' %s",
			dir, bin, args);
	ck_assert_msg(rc == 0, "corecarve %s: exit %d\n%s", args, rc, out);
	free(out);
	out = NULL;
	rc = cc_test_sh(&out, "grep -c 'SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, {len=.*= 0$' '%s/trace'", dir);
	ck_assert_msg(rc == 0 && !strcmp(out, "1\n"), "corecarve %s: loaded %s filter(s), not 1", args, out);
	free(out);
}

START_TEST(test_commands_load_their_filter)
{
	const char *bin = cc_test_bin("the tools' filters");
	const char *f03 = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	char dir[] = "/tmp/cc-tool-bin-XXXXXX", args[8192], fx[4096];
	const char *vmfx;

	/* The helper's answer is a buffer of its own, overwritten by the next call. */
	if (!bin || !f03)
		return;
	snprintf(fx, sizeof(fx), "%s", f03);
	vmfx = cc_test_fixture_tree("F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2");
	if (!vmfx)
		return;
	if (cc_test_sh(NULL, "command -v strace >/dev/null") != 0) {
		cc_test_skip("strace is not installed (scripts/deps.sh installs it)");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* F03's sysfs with the least cgroupfs the audit reads, and
	 * /proc/irq for irq reconcile. */
	ck_assert_int_eq(cc_test_sh(NULL,
				    "cd %s && cp -a '%s/sample1' src && mkdir -m 0700 st && mkdir -p src/sys/fs/cgroup "
				    "src/proc/irq/24/virtio0 && echo 'cpuset cpu' >src/sys/fs/cgroup/cgroup.controllers && "
				    "echo 'cpuset cpu' >src/sys/fs/cgroup/cgroup.subtree_control && "
				    "echo 0-15 >src/sys/fs/cgroup/cpuset.cpus.effective && "
				    "echo ffff >src/proc/irq/default_smp_affinity && echo 0-15 >src/proc/irq/24/smp_affinity_list",
				    dir, fx),
			 0);
	snprintf(args, sizeof(args), "capture --root '%s/src' '%s/cap'", dir, dir);
	traced(dir, bin, args);
	snprintf(args, sizeof(args), "audit --root '%s/cap' --state '%s/st' --sample-ms 0", dir, dir);
	traced(dir, bin, args);
	snprintf(args, sizeof(args), "irq reconcile --dry-run --root '%s/src' --state '%s/st'", dir, dir);
	traced(dir, bin, args);
	snprintf(args, sizeof(args),
		 "vm reconcile --dry-run --root '%s/32intel64-2p8co2t+8ve' --config '%s/examples/vms.yaml' "
		 "--policy '%s/examples/policy-vm-host.yaml' --state '%s/st'",
		 vmfx, CC_SOURCE_DIR, CC_SOURCE_DIR, dir);
	traced(dir, bin, args);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("hook");
	TCase *tools_tc;

	tcase_add_loop_test(tc, test_forbidden_eperm, 0, (int)(sizeof(forbidden) / sizeof(forbidden[0])));
	tcase_add_test(tc, test_filter_mode_in_status);
	tcase_add_loop_test(tc, test_forbidden_control, 0, (int)(sizeof(forbidden) / sizeof(forbidden[0])));
	tcase_add_test(tc, test_hook_work_allowed);
	tcase_add_test(tc, test_stat_family_allowed);
	tcase_add_test(tc, test_fault_switch_still_kills);
	tcase_add_test(tc, test_fault_switch_stops);
	tcase_add_test(tc, test_lock_wait_confined);
	tcase_add_test(tc, test_lock_stop_cont_confined);
	tcase_add_test(tc, test_list_sane);
	tcase_add_test(tc, test_log_socket);
	tcase_add_test(tc, test_log_fallbacks);
	tcase_add_loop_test(tc, test_first_stage_forbidden, 0, (int)(sizeof(forbidden) / sizeof(forbidden[0])) + 3);
	tcase_add_test(tc, test_first_stage_work_allowed);
	suite_add_tcase(s, tc);
	tools_tc = tcase_create("tools");
	tcase_add_loop_test(tools_tc, test_tool_forbidden, 0, NTOOLS * NTOOL_FORBIDDEN);
	tcase_add_loop_test(tools_tc, test_tool_forbidden_control, 0, NTOOL_FORBIDDEN);
	tcase_add_loop_test(tools_tc, test_tool_allowed, 0, NTOOLS);
	tcase_add_test(tools_tc, test_tool_list_sane);
	tcase_add_test(tools_tc, test_capture_under_filter);
	tcase_add_test(tools_tc, test_systemctl_helper);
	tcase_add_test(tools_tc, test_hook_systemctl_helper);
	/* Four commands under strace, each discovering a fixture's topology:
	 * far past Check's default 4 s on a loaded 2-core machine. */
	tcase_set_timeout(tools_tc, 120);
	tcase_add_test(tools_tc, test_commands_load_their_filter);
	suite_add_tcase(s, tools_tc);
	return s;
}

CC_TEST_MAIN(suite)
