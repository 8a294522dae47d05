/* corecarve device-plugin: the kubelet device plugin daemon (plugin/devplugin,
 * docs/device-plugin.md).  Parses its options, loads the policy, the
 * topology and the state directory, and serves until SIGTERM or SIGINT. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "devplugin.h"
#include "landlock.h"
#include "sandbox.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve device-plugin [--dir DIR] [--state DIR] [--root DIR] [--policy FILE]\n"
		"                               [--pod-resources SOCKET] [--grace SECONDS]\n\n"
		"Publish each exclusive class of the policy to the kubelet as the extended resource\n"
		"corecarve.io/<class>-cores, one device per whole core the class may carve (ID cpu<N>,\n"
		"N the core's lowest CPU), and record the kubelet's Allocate as a grant in the ledger.\n"
		"Serves the device plugin API (v1beta1) on a socket per resource in --dir (default\n"
		CC_DP_DIR "), registers on its kubelet.sock, and again whenever the\n"
		"kubelet restarts; SIGTERM stops it and removes its sockets.\n\n"
		"Every 2 s it asks the kubelet's PodResources API (--pod-resources, default\n"
		CC_DP_PODRES_SOCK ") which devices its pods hold, and frees the\n"
		"grants none of whose cores a pod holds, once older than --grace seconds (default 60:\n"
		"the kubelet lists a pod's devices only after Allocate).\n\n"
		"exit status: 0 stopped by a signal, 2 bad input or could not run\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	struct cc_cli_common common;
	const char *dir, *state, *podres;
	long long grace;
};

static int parse_grace(const char *s, long long *out, struct cc_err *err)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	if (!*s || *end || errno || *out < 0)
		return cc_err_set(err, EINVAL, "--grace: expected a number of seconds >= 0, got \"%s\"", s);
	return 0;
}

/* --dir as the hook takes its state directory: a directory itself (not a
 * link), this process's user's (or root's), written by nobody else; its
 * sockets are the kubelet's only way to the plugin.  The descriptor. */
static int plugin_dir_open(const char *dir, struct cc_err *err)
{
	struct stat sb;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		/* O_DIRECTORY says ENOTDIR before O_NOFOLLOW says ELOOP. */
		bool link = lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode);

		if (e == ELOOP || e == ENOTDIR || e == ENOENT)
			return cc_err_set(err, e, "--dir %s: %s: name the kubelet's device plugin directory itself "
					  "(default " CC_DP_DIR ")",
					  dir, link ? "a symbolic link" : e == ENOENT ? "does not exist" : "not a directory");
		return cc_err_sys(err, e, "--dir %s: name the kubelet's device plugin directory (default " CC_DP_DIR ")",
				  dir);
	}
	if (fstat(fd, &sb) < 0 || (sb.st_uid != geteuid() && sb.st_uid != 0) || (sb.st_mode & 022)) {
		int e = errno;

		close(fd);
		if (e && !sb.st_mode)
			return cc_err_sys(err, e, "--dir %s", dir);
		return cc_err_set(err, EPERM,
				  "--dir %s: owned by uid %u with mode %04o: whoever else may write there can stand in "
				  "for the kubelet or the plugin; the kubelet makes it root's, mode 0750",
				  dir, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777));
	}
	return fd;
}

enum { OPT_DIR = 1, OPT_STATE, OPT_POD_RESOURCES, OPT_GRACE };

const struct cc_opt cc_opts_device_plugin[] = {
	{ "--dir", NULL, "DIR", OPT_DIR, CC_OPT_NONEMPTY, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, CC_OPT_NONEMPTY, NULL },
	{ "--pod-resources", NULL, "SOCKET", OPT_POD_RESOURCES, CC_OPT_NONEMPTY, NULL },
	{ "--grace", NULL, "SECONDS", OPT_GRACE, CC_OPT_NONEMPTY, NULL },
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, NULL },
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, NULL },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	o->dir = CC_DP_DIR;
	o->podres = CC_DP_PODRES_SOCK;
	o->grace = CC_DP_GRACE_S;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_device_plugin, NULL, argc, argv, &i, &v, err);

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_GRACE:
			if (parse_grace(v, &o->grace, err) < 0)
				return -1;
			break;
		case OPT_DIR:
			o->dir = v;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		case OPT_POD_RESOURCES:
			o->podres = v;
			break;
		default:
			if (!cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL,
						  "device-plugin: unexpected argument \"%s\" (see corecarve device-plugin --help)", v);
		}
	}
	return 0;
}

int cc_cmd_device_plugin(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_free_ struct cc_dp_resource *res = NULL;
	struct cc_devplugin dp = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct cc_cli_lock lock;
	_cleanup_close_ int dir_fd = -1, state_fd = -1;
	char buf[PATH_MAX];
	int rc = parse(argc, argv, &o, &err);

	if (rc)
		return rc > 0 ? CC_EXIT_OK : cc_cli_fail(&err);
	dir_fd = plugin_dir_open(o.dir, &err);
	if (dir_fd < 0)
		return cc_cli_fail(&err);
	if (cc_cli_state_dir(o.state, o.common.root, buf, sizeof(buf), &dp.state, &err) < 0 ||
	    cc_cli_lock(&lock, argc, argv, &err) < 0 || cc_cli_load(&o.common, &root, &policy, &topo, &err) < 0 ||
	    cc_dp_resources(topo, policy, &res, &dp.nres, &err) < 0)
		return cc_cli_fail(&err);
	dp.t = topo;
	dp.p = policy;
	dp.lock = &lock.lock;
	dp.res = res;
	dp.podres = o.podres;
	dp.grace = o.grace;
	/* The state directory checked (and made) as the hook's is, before
	 * anything is served: a wrong one would fail every Allocate later. */
	state_fd = cc_state_dir_open(dp.state ? dp.state : CC_LEDGER_DIR, true, NULL, &err);
	if (state_fd < 0)
		return cc_cli_fail(&err);
	/* Confined before the first byte from a socket is parsed: writes
	 * beneath its two directories only (Landlock, where the kernel has
	 * it), and the tools' syscall filter with unix sockets. */
	if (cc_landlock_device_plugin(dir_fd, state_fd, &err) < 0 || cc_sandbox_device_plugin(&err) < 0)
		return cc_cli_fail(&err);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (cc_dp_serve(&dp, o.dir, &stop, stderr, &err) < 0)
		return cc_cli_fail(&err);
	return CC_EXIT_OK;
}
