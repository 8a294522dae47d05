/* corecarve capture: write this node's --root tree (plugin/report/capture.h), for
 * bug reports and fixtures: `corecarve capture DIR`, then
 * `corecarve doctor --root DIR` (or topology, plan, status, irq status,
 * audit) on any machine. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "cleanup.h"
#include "commands.h"
#include "ledger.h"
#include "sandbox.h"

#ifndef CC_VERSION
#define CC_VERSION "0.1.0"
#endif

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve capture DIR [--root SRC] [--policy FILE] [--state DIR]\n\n"
		     "Copy what corecarve reads of this node into DIR: sysfs CPUs, NUMA nodes,\n"
		     "caches and PMU lists, every cgroup's cpuset and cpu files, /proc/irq and\n"
		     "/proc/interrupts, mountinfo and the command line, each process's comm and status,\n"
		     "the policy, irqbalance's file, the hooks.d files, kubelet's CPU manager state and\n"
		     "the ledger (--state, else $CORECARVE_STATE_DIR, else " CC_LEDGER_DIR "), with a\n"
		     "manifest of versions (" CC_CAPTURE_MANIFEST ").  DIR is new (made 0700), or empty, yours\n"
		     "and writable by nobody else; never a link.  DIR is then a --root tree:\n\n"
		     "  d=$(mktemp -d) && corecarve capture $d/node && tar -C $d/node -czf node.tar.gz .\n"
		     "  corecarve doctor --root $d/node     (topology, plan, status, irq status, audit too)\n\n"
		     "Reads only.  --root SRC copies another tree instead of this host.\n");
}

enum { OPT_STATE = 1 };

const struct cc_opt cc_opts_capture[] = {
	{ "--state", NULL, "DIR", OPT_STATE, CC_OPT_NONEMPTY, NULL },
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, NULL },
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, NULL },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

int cc_cmd_capture(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	struct cc_capture_opts o = { .version = CC_VERSION };
	struct cc_capture_stats st;
	_cleanup_root_ struct cc_root *root = NULL;
	const char *dest = NULL, *state = NULL;
	char state_buf[PATH_MAX];

	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_capture, NULL, argc, argv, &i, &v, &err);

		switch (id) {
		case -1:
			return cc_cli_fail(&err);
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return CC_EXIT_OK;
		case OPT_STATE:
			state = v;
			break;
		case CC_OPT_WORD:
			if (!dest && v[0] != '-') {
				dest = v;
				break;
			}
			cc_err_set(&err, EINVAL, "capture: unexpected argument \"%s\" (see corecarve capture --help)", v);
			return cc_cli_fail(&err);
		default:
			cc_cli_common_set(&common, id, v);
		}
	}
	if (!dest) {
		cc_err_set(&err, EINVAL, "capture: name the directory to write (corecarve capture DIR)");
		return cc_cli_fail(&err);
	}
	root = cc_root_open(common.root ? common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		return cc_cli_fail(&err);
	}
	/* Before the tree (the host's or a received one) is read. */
	if (cc_sandbox_capture(&err) < 0)
		return cc_cli_fail(&err);
	if (cc_cli_state_dir(state, common.root, state_buf, sizeof(state_buf), &o.state_dir, &err) < 0)
		return cc_cli_fail(&err);
	o.policy_path = cc_cli_policy_path(&common);
	if (cc_capture(root, dest, &o, &st, &err) < 0)
		return cc_cli_fail(&err);
	printf("captured %s into %s: %d files, %d links, %d directories (%d cgroups), %lld bytes; %d unreadable "
	       "skipped\nread it with: corecarve doctor --root %s\n",
	       root->is_host ? "this host" : root->path, dest, st.files, st.links, st.dirs, st.cgroups, st.bytes,
	       st.skipped, dest);
	return CC_EXIT_OK;
}
