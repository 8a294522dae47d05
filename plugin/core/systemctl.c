/* corecarve: systemctl, run and read (see systemctl.h). */
#define _GNU_SOURCE
#include "systemctl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

bool cc_systemd_booted(const struct cc_root *root)
{
	struct cc_err err = CC_ERR_INIT;

	return root->is_host && cc_root_is_dir(root, "/run/systemd/system", &err) == 1;
}

const char *cc_slice_unit(const char *cgroup)
{
	const char *p = cgroup, *last = NULL;
	static const char suffix[] = ".slice";
	const size_t ns = sizeof(suffix) - 1;

	if (!cgroup || cgroup[0] != '/')
		return NULL;
	while (*p == '/') {
		const char *start = ++p, *end = strchrnul(start, '/');
		size_t n = (size_t)(end - start);

		if (n <= ns || memcmp(end - ns, suffix, ns) != 0)
			return NULL;
		last = start;
		p = end;
	}
	return *p ? NULL : last;
}

/* The command as one string, for the error. */
static void join(const char *const argv[], char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/* "systemctl OPTS... -- UNITS..." (no "--" without units), NULL-ended;
 * NULL past CC_SYSTEMCTL_ARGS_MAX. */
static bool build_argv(const char *const opts[], const char *const units[], const char **argv)
{
	int n = 0;

	argv[n++] = "systemctl";
	for (int i = 0; opts && opts[i]; i++)
		if (n < CC_SYSTEMCTL_ARGS_MAX)
			argv[n++] = opts[i];
	if (units && units[0] && n < CC_SYSTEMCTL_ARGS_MAX)
		argv[n++] = "--";
	for (int i = 0; units && units[i]; i++)
		if (n < CC_SYSTEMCTL_ARGS_MAX)
			argv[n++] = units[i];
	argv[n] = NULL;
	return n < CC_SYSTEMCTL_ARGS_MAX;
}

/* Read the child's stderr into msg (its first line is the error's) until
 * EOF or the deadline; true at EOF. */
static bool read_until(int rd, char *msg, size_t len, const struct timespec *deadline)
{
	size_t got = 0;

	msg[0] = '\0';
	for (;;) {
		struct pollfd p = { .fd = rd, .events = POLLIN };
		struct timespec now;
		long left;
		char sink[256];
		ssize_t n;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		/* Past the buffer, what it writes is drained, not kept: a full
		 * pipe would stall it. */
		n = got < len - 1 ? read(rd, msg + got, len - 1 - got) : read(rd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got < len - 1)
			got += (size_t)n;
	}
	msg[got] = '\0';
	msg[strcspn(msg, "\n")] = '\0';
	return true;
}

/* Wait for the child; past the deadline it is killed.  0 with *status,
 * 1 when it was killed for the deadline, -1 with errno. */
static int reap(pid_t pid, bool in_time, int *status)
{
	pid_t r;

	if (!in_time) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		kill(pid, SIGKILL);
	}
	while ((r = waitpid(pid, status, 0)) < 0)
		if (errno != EINTR)
			return -1;
	return in_time ? 0 : 1;
}

/* The environment systemctl runs with: nothing of the caller's (a hook
 * inherits the runtime's, a CLI the admin's shell's: SYSTEMD_* variables
 * change what systemctl connects to and runs, a PATH what it executes). */
static char *const fixed_env[] = { (char *)"PATH=/usr/sbin:/usr/bin:/sbin:/bin", (char *)"LANG=C", NULL };

int cc_systemctl_at(const char *path, const char *const opts[], const char *const units[], unsigned timeout_ms,
		    struct cc_err *err)
{
	const char *argv[CC_SYSTEMCTL_ARGS_MAX + 1];
	posix_spawn_file_actions_t fa;
	_cleanup_close_ int rd = -1;
	char cmd[512], msg[512];
	int pipefd[2], status = 0, rc;
	struct timespec deadline;
	bool in_time;
	pid_t pid;

	if (!build_argv(opts, units, argv))
		return cc_err_set(err, E2BIG, "systemctl: more than %d arguments", CC_SYSTEMCTL_ARGS_MAX - 2);
	join(argv, cmd, sizeof(cmd));
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return cc_err_sys(err, errno, "%s: pipe", cmd);
	rd = pipefd[0];
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(pipefd[1]);
		return cc_err_sys(err, ENOMEM, "%s", cmd);
	}
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	rc = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, fixed_env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0)
		return cc_err_sys(err, rc, "%s", path);
	in_time = read_until(rd, msg, sizeof(msg), &deadline);
	rc = reap(pid, in_time, &status);
	if (rc < 0)
		return cc_err_sys(err, errno, "%s: waitpid", cmd);
	if (rc > 0)
		return cc_err_set(err, ETIMEDOUT,
				  "%s: no answer within %u.%03u s, killed (is systemd's manager hung? systemctl status)",
				  cmd, timeout_ms / 1000, timeout_ms % 1000);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return cc_err_set(err, EIO, "%s: exited with status %d%s%s", cmd, WEXITSTATUS(status), *msg ? ": " : "",
				  msg);
	return cc_err_set(err, EIO, "%s: killed by signal %d", cmd, WTERMSIG(status));
}

/* The helper of this process (cc_systemctl_helper_start): its socket and
 * the command it runs.  Process state, not a context's: it describes the
 * one child this process forked, which every caller of cc_systemctl() in
 * the process shares. */
static struct {
	int fd;
	pid_t pid;
	const char *const *opts, *const *units;
} helper = { -1, 0, NULL, NULL };

struct helper_reply {
	int code;
	char msg[CC_ERR_MSG_MAX];
};

static int spawn(const char *const opts[], const char *const units[], struct cc_err *err);

static void helper_serve(int fd, const char *path, const char *const opts[], const char *const units[])
{
	char c;

	while (recv(fd, &c, 1, 0) == 1) {
		struct cc_err e = CC_ERR_INIT;
		struct helper_reply rep = { 0 };

		if ((path ? cc_systemctl_at(path, opts, units, CC_SYSTEMCTL_TIMEOUT_MS, &e) : spawn(opts, units, &e)) < 0) {
			rep.code = e.code ? e.code : EIO;
			memcpy(rep.msg, e.msg, sizeof(rep.msg));
		}
		if (send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
			break;
	}
	_exit(0);
}

/* At exit: the helper sees its socket close and leaves (at most a
 * systemctl's deadline later); reaped here, it leaves no zombie named
 * corecarve behind for init. */
static void helper_stop(void)
{
	if (helper.fd < 0)
		return;
	close(helper.fd);
	helper.fd = -1;
	while (waitpid(helper.pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int cc_systemctl_helper_start(const char *path, const char *const opts[], const char *const units[],
			      struct cc_err *err)
{
	int sv[2];
	pid_t pid;

	if (helper.fd >= 0)
		return cc_err_set(err, EBUSY, "systemctl helper: already started");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cc_err_sys(err, errno, "systemctl helper: socketpair");
	/* stdout is flushed first: the child would otherwise hold a copy of
	 * what is buffered (it leaves with _exit, which writes nothing). */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return cc_err_sys(err, errno, "systemctl helper: fork");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* It prints nothing: the caller's pipes close when the caller
		 * is done, not when the helper is. */
		for (int fd = 0; fd <= 2 && null >= 0; fd++)
			dup2(null, fd);
		close(sv[0]);
		helper_serve(sv[1], path, opts, units);
	}
	close(sv[1]);
	helper.fd = sv[0];
	helper.pid = pid;
	atexit(helper_stop);
	helper.opts = opts;
	helper.units = units;
	return 0;
}

static int ask_helper(struct cc_err *err)
{
	struct helper_reply rep;
	const char *argv[CC_SYSTEMCTL_ARGS_MAX + 1];
	char cmd[512], c = 'r';
	ssize_t n;

	build_argv(helper.opts, helper.units, argv);
	join(argv, cmd, sizeof(cmd));
	if (send(helper.fd, &c, 1, MSG_NOSIGNAL) != 1)
		return cc_err_sys(err, errno ? errno : EPIPE, "%s: the helper is gone", cmd);
	do
		n = recv(helper.fd, &rep, sizeof(rep), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(rep))
		return cc_err_set(err, EPIPE, "%s: the helper did not answer", cmd);
	if (!rep.code)
		return 0;
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	return cc_err_set(err, rep.code, "%s", rep.msg);
}

int cc_systemctl(const char *const opts[], const char *const units[], struct cc_err *err)
{
	if (helper.fd >= 0 && opts == helper.opts && units == helper.units)
		return ask_helper(err);
	return spawn(opts, units, err);
}

static int spawn(const char *const opts[], const char *const units[], struct cc_err *err)
{
	static const char *const paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };
	const char *argv[CC_SYSTEMCTL_ARGS_MAX + 1];
	char cmd[512];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], X_OK) == 0)
			return cc_systemctl_at(paths[i], opts, units, CC_SYSTEMCTL_TIMEOUT_MS, err);
	build_argv(opts, units, argv);
	join(argv, cmd, sizeof(cmd));
	return cc_err_set(err, ENOENT, "%s: systemctl not found in /usr/bin or /bin", cmd);
}
