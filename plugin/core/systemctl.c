/* corecarve: systemctl, run and read (see systemctl.h). */
#define _GNU_SOURCE
#include "systemctl.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

extern char **environ;

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

int cc_systemctl(const char *const argv[], struct cc_err *err)
{
	static const char *const paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };
	const char *path = NULL;
	posix_spawn_file_actions_t fa;
	_cleanup_close_ int rd = -1;
	char cmd[512], msg[512];
	int pipefd[2], status = 0, rc;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	join(argv, cmd, sizeof(cmd));
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && !path; i++)
		if (access(paths[i], X_OK) == 0)
			path = paths[i];
	if (!path)
		return cc_err_set(err, ENOENT, "%s: systemctl not found in /usr/bin or /bin", cmd);
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
	rc = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0)
		return cc_err_sys(err, rc, "%s", path);
	/* Read to the end before waiting: a full pipe would stall it. */
	while ((n = read(rd, msg + got, sizeof(msg) - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
		if (got == sizeof(msg) - 1) {
			char sink[256];

			while (read(rd, sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	msg[got] = '\0';
	msg[strcspn(msg, "\n")] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return cc_err_sys(err, errno, "%s: waitpid", cmd);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return cc_err_set(err, EIO, "%s: exited with status %d%s%s", cmd, WEXITSTATUS(status), *msg ? ": " : "",
				  msg);
	return cc_err_set(err, EIO, "%s: killed by signal %d", cmd, WTERMSIG(status));
}
