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

/* A slice's name as cc_slice_unit gives it: nothing that could read as an
 * option. */
static bool slice_ok(const char *unit)
{
	size_t n = strlen(unit);

	return n > 6 && n <= 255 && !strcmp(unit + n - 6, ".slice") && unit[0] != '-' &&
	       strspn(unit, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:_.-\\") == n;
}

/* "NAME=VALUE" of a property corecarve gives a slice: AllowedCPUs= a CPU
 * list, CPUQuota= empty or a percentage with at most two decimals,
 * CPUQuotaPeriodSec= microseconds.  Nothing else: checked by the caller
 * and again by the helper, which a confined process taken over could send
 * anything. */
static bool property_ok(const char *p)
{
	const char *v;
	size_t n;

	if (!strncmp(p, "AllowedCPUs=", 12)) {
		v = p + 12;
		n = strlen(v);
		return n < CC_SYSTEMD_CPUS_MAX && strspn(v, "0123456789,-") == n;
	}
	if (!strncmp(p, "CPUQuota=", 9)) {
		v = p + 9;
		n = strspn(v, "0123456789");
		if (!*v)
			return true;
		if (!n || n > 9)
			return false;
		v += n;
		if (*v == '.') {
			n = strspn(++v, "0123456789");
			if (!n || n > 2)
				return false;
			v += n;
		}
		return !strcmp(v, "%");
	}
	if (!strncmp(p, "CPUQuotaPeriodSec=", 18)) {
		v = p + 18;
		n = strspn(v, "0123456789");
		return n && n <= 9 && !strcmp(v + n, "us");
	}
	return false;
}

/* `systemctl set-property --runtime -- UNIT PROPS...` (NULL-ended). */
static int run_set(const char *path, const char *unit, const char *const props[], struct cc_err *err)
{
	static const char *const opts[] = { "set-property", "--runtime", NULL };
	const char *units[CC_SYSTEMD_PROPS_MAX + 2] = { unit };
	int n = 0;

	while (props[n] && n < CC_SYSTEMD_PROPS_MAX) {
		units[n + 1] = props[n];
		n++;
	}
	units[n + 1] = NULL;
	return path ? cc_systemctl_at(path, opts, units, CC_SYSTEMCTL_TIMEOUT_MS, err) : spawn(opts, units, err);
}

/* One request: 'r' runs the fixed command (when there is one); 'p' UNIT
 * NUL then each property NUL sets a slice's properties; anything else is
 * refused. */
static void serve_one(const char *req, size_t n, const char *path, const char *const opts[],
		      const char *const units[], struct cc_err *e)
{
	const char *props[CC_SYSTEMD_PROPS_MAX + 1] = { NULL }, *p, *end = req + n;
	int k = 0;

	if (n == 1 && req[0] == 'r' && opts) {
		if (path)
			cc_systemctl_at(path, opts, units, CC_SYSTEMCTL_TIMEOUT_MS, e);
		else
			spawn(opts, units, e);
		return;
	}
	if (n < 3 || req[0] != 'p' || req[n - 1] != '\0' || !slice_ok(req + 1))
		goto refuse;
	for (p = req + 2 + strlen(req + 1); p < end; p += strlen(p) + 1) {
		if (k == CC_SYSTEMD_PROPS_MAX || !property_ok(p))
			goto refuse;
		props[k++] = p;
	}
	if (!k)
		goto refuse;
	run_set(path, req + 1, props, e);
	return;
refuse:
	cc_err_set(e, EINVAL, "systemctl helper: a request it does not serve");
}

static void helper_serve(int fd, const char *path, const char *const opts[], const char *const units[])
{
	char req[CC_SYSTEMD_REQ_MAX];
	ssize_t n;

	while ((n = recv(fd, req, sizeof(req), 0)) > 0) {
		struct cc_err e = CC_ERR_INIT;
		struct helper_reply rep = { 0 };

		serve_one(req, (size_t)n, path, opts, units, &e);
		if (cc_err_isset(&e)) {
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

/* Send REQ (N bytes) to the helper and take its answer; CMD names the
 * command in errors. */
static int ask_helper(const char *req, size_t n, const char *cmd, struct cc_err *err)
{
	struct helper_reply rep;
	ssize_t got;

	if (send(helper.fd, req, n, MSG_NOSIGNAL) != (ssize_t)n)
		return cc_err_sys(err, errno ? errno : EPIPE, "%s: the helper is gone", cmd);
	do
		got = recv(helper.fd, &rep, sizeof(rep), 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(rep))
		return cc_err_set(err, EPIPE, "%s: the helper did not answer", cmd);
	if (!rep.code)
		return 0;
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	return cc_err_set(err, rep.code, "%s", rep.msg);
}

int cc_systemctl(const char *const opts[], const char *const units[], struct cc_err *err)
{
	if (helper.fd >= 0 && helper.opts && opts == helper.opts && units == helper.units) {
		const char *argv[CC_SYSTEMCTL_ARGS_MAX + 1];
		char cmd[512];

		build_argv(helper.opts, helper.units, argv);
		join(argv, cmd, sizeof(cmd));
		return ask_helper("r", 1, cmd, err);
	}
	return spawn(opts, units, err);
}

int cc_systemd_set(const char *unit, const char *const props[], struct cc_err *err)
{
	char req[CC_SYSTEMD_REQ_MAX], cmd[CC_SYSTEMD_REQ_MAX + 64];
	size_t off, cmd_off;
	int k;

	if (!unit || !slice_ok(unit))
		return cc_err_set(err, EINVAL, "systemctl set-property: \"%.64s\": not a slice", unit ? unit : "");
	for (k = 0; props[k]; k++)
		if (k == CC_SYSTEMD_PROPS_MAX || !property_ok(props[k]))
			return cc_err_set(err, EINVAL, "systemctl set-property %s: \"%.64s\": not a property corecarve sets",
					  unit, props[k]);
	if (!k)
		return cc_err_set(err, EINVAL, "systemctl set-property %s: no property", unit);
	if (helper.fd < 0)
		return run_set(NULL, unit, props, err);
	req[0] = 'p';
	off = 1;
	cmd_off = (size_t)snprintf(cmd, sizeof(cmd), "systemctl set-property --runtime -- %s", unit);
	memcpy(req + off, unit, strlen(unit) + 1);
	off += strlen(unit) + 1;
	for (k = 0; props[k]; k++) {
		size_t n = strlen(props[k]) + 1;

		if (off + n > sizeof(req))
			return cc_err_set(err, E2BIG, "%s: too long", cmd);
		memcpy(req + off, props[k], n);
		off += n;
		cmd_off += (size_t)snprintf(cmd + cmd_off, cmd_off < sizeof(cmd) ? sizeof(cmd) - cmd_off : 0, " %s",
					    props[k]);
		if (cmd_off >= sizeof(cmd))
			cmd_off = sizeof(cmd) - 1;
	}
	return ask_helper(req, off, cmd, err);
}

int cc_systemctl_helper_fd(void)
{
	return helper.fd;
}

pid_t cc_systemctl_helper_pid(void)
{
	return helper.fd >= 0 ? helper.pid : 0;
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
