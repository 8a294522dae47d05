/* corecarve hook: the OCI hook stage dispatcher.
 *
 * Registered for createRuntime (or prestart) and poststop.  The runtime
 * passes the container state on stdin; the stage comes from our argument,
 * never from the state's status (crun 1.8 reports "created" to
 * createRuntime hooks).  A non-zero exit makes the runtime refuse to start
 * the container; the one-line reason goes to stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "container.h"
#include "cpulist.h"
#include "sandbox.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve hook createRuntime|prestart|poststop [--root DIR] [--policy FILE] [--state DIR] [--verbose]\n\n"
		"OCI hook: reads the container state JSON on stdin.\n"
		"createRuntime/prestart carve the CPUs the corecarve.io/placement annotation asks for;\n"
		"poststop gives them back.  Containers without the annotation are left alone.\n\n"
		"environment: CORECARVE_POLICY, CORECARVE_STATE_DIR (defaults: /etc/corecarve/policy.yaml,\n"
		"/run/corecarve); CORECARVE_LOCK_TIMEOUT=<seconds> bounds the wait for the ledger lock\n"
		"(default %u; keep it well inside the runtime's hook timeout);\n"
		"CORECARVE_FAULT=<step> kills the hook at a named step (tests only).\n",
		CC_LEDGER_WAIT_MS / 1000);
}

static char *read_stdin(size_t max, size_t *len, struct cc_err *err)
{
	_cleanup_free_ char *buf = malloc(max + 1);
	size_t n = 0;

	if (!buf)
		return cc_err_sys(err, ENOMEM, "stdin"), NULL;
	for (;;) {
		ssize_t r = read(STDIN_FILENO, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cc_err_sys(err, errno, "read OCI state from stdin"), NULL;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return cc_err_set(err, EFBIG, "OCI state on stdin: larger than %zu bytes", max), NULL;
	}
	buf[n] = '\0';
	*len = n;
	return cc_steal_ptr(buf);
}

int cc_cmd_hook(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	struct cc_oci_state st = { 0 };
	struct cc_ctx ctx = { 0 };
	struct cc_cli_lock lock;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_free_ char *text = NULL;
	const char *stage = NULL, *state_dir = NULL;
	bool verbose = false;
	size_t len = 0;
	int rc = CC_EXIT_ERROR;

	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CC_EXIT_OK;
		}
		if (!strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			state_dir = argv[++i];
			continue;
		}
		r = cc_cli_common_opt(&common, argc, argv, &i, &err);
		if (r < 0)
			return cc_cli_fail(&err);
		if (r > 0)
			continue;
		if (!stage && argv[i][0] != '-') {
			stage = argv[i];
			continue;
		}
		cc_err_set(&err, EINVAL, "hook: unexpected argument \"%s\"", argv[i]);
		return cc_cli_fail(&err);
	}
	if (!stage) {
		usage(stderr);
		return CC_EXIT_ERROR;
	}
	if (strcmp(stage, "createRuntime") && strcmp(stage, "prestart") && strcmp(stage, "poststop")) {
		cc_err_set(&err, EINVAL, "hook: unknown stage \"%s\" (expected createRuntime, prestart or poststop)", stage);
		return cc_cli_fail(&err);
	}
	if (common.xml || common.synthetic) {
		cc_err_set(&err, EINVAL, "hook: --hwloc-xml and --synthetic describe other machines; the hook acts on this one");
		return cc_cli_fail(&err);
	}

	if (cc_cli_lock(&lock, argc, argv, &err) < 0)
		return cc_cli_fail(&err);

	text = read_stdin(CC_OCI_STATE_MAX, &len, &err);
	if (!text)
		return cc_cli_fail(&err);
	if (cc_oci_state_parse(text, len, &st, &err) < 0)
		return cc_cli_fail(&err);
	root = cc_root_open(common.root ? common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		goto out;
	}
	ctx.root = root;
	ctx.policy_path = cc_cli_policy_path(&common);
	ctx.state_dir = state_dir ? state_dir : getenv("CORECARVE_STATE_DIR");
	if (ctx.state_dir && !*ctx.state_dir)
		ctx.state_dir = NULL;
	ctx.fault = getenv("CORECARVE_FAULT");
	/* Who waits on a hook that holds the lock learns which container's. */
	snprintf(lock.holder, sizeof(lock.holder), "corecarve hook %s %.200s", stage, st.id);
	ctx.lock = &lock.lock;
	ctx.log = stderr;
	ctx.verbose = verbose;
	/* Inputs from the runtime are read and every path is resolved: from
	 * here on only file I/O (plugin/sandbox.h).  Host only: with --root
	 * the hook reads a captured tree and changes nothing. */
	if (root->is_host && cc_sandbox_hook(&err) < 0)
		goto out;

	if (!strcmp(stage, "poststop")) {
		if (cc_container_release(&ctx, st.id, &err) < 0) {
			cc_err_prefix(&err, "poststop %s", st.id);
			goto out;
		}
		rc = CC_EXIT_OK;
	} else {
		struct cc_create_result res;

		if (cc_container_create(&ctx, &st, &res, &err) < 0) {
			cc_err_prefix(&err, "%s %s", stage, st.id);
			cc_decision_fini(&res.decision);
			goto out;
		}
		if (verbose && res.carved) {
			_cleanup_free_ char *c = cc_cpulist_format(res.decision.cpus);
			_cleanup_free_ char *p = cc_cpulist_format(res.decision.parked);
			_cleanup_free_ char *m = cc_cpulist_format(res.decision.mems);

			fprintf(stderr, "corecarve: %s: class %s on %s cpus %s parked %s mems %s (%s) in %s\n",
				st.id, res.decision.class_name, res.decision.core_class, c ? c : "?",
				p ? p : "?", m ? m : "?", res.mode, res.cgroup);
		}
		cc_decision_fini(&res.decision);
		rc = CC_EXIT_OK;
	}
out:
	cc_oci_state_fini(&st);
	if (rc != CC_EXIT_OK)
		return cc_cli_fail(&err);
	return rc;
}
