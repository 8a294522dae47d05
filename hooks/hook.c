/* corecarve hook: the OCI hook stage dispatcher.
 *
 * Registered for createRuntime (or prestart) and poststop.  The runtime
 * passes the container state on stdin; the stage comes from our argument,
 * never from the state's status (crun 1.8 reports "created" to
 * createRuntime hooks).  A non-zero exit makes the runtime refuse to start
 * the container; the one-line reason goes to stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syslog.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "hook_opts.h"
#include "container.h"
#include "cpulist.h"
#include "fileio.h"
#include "journal.h"
#include "landlock.h"
#include "ledger.h"
#include "sandbox.h"
#include "systemctl.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve hook createRuntime|prestart|poststop [--root DIR] [--policy FILE] [--state DIR] [--verbose]\n\n"
		"OCI hook: reads the container state JSON on stdin.\n"
		"createRuntime/prestart carve the CPUs the corecarve.io/placement annotation asks for;\n"
		"poststop gives them back.  Containers without the annotation are left alone.\n"
		"--root DIR (debugging) is a dry run: DIR's state (DIR/run/corecarve unless --state) read\n"
		"only, no gc, what it would do on stderr; nothing is written.\n\n"
		"environment: CORECARVE_POLICY, CORECARVE_STATE_DIR (defaults: /etc/corecarve/policy.yaml,\n"
		"/run/corecarve); CORECARVE_LOCK_TIMEOUT=<seconds> bounds the wait for the ledger lock\n"
		"(default %u; keep it well inside the runtime's hook timeout).\n"
		"Each decision is one line in the journal (syslog identifier corecarve).\n",
		CC_LEDGER_WAIT_MS / 1000);
}

/* The decision's line: what was decided, for which container, and the
 * fields journalctl can select on (journalctl CORECARVE_EVENT=refuse). */
static void journal_line(const struct cc_journal *j, int prio, const char *event, const char *stage, const char *id,
			 const char *class_name, const char *cpus, const char *mode, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));

static void journal_line(const struct cc_journal *j, int prio, const char *event, const char *stage, const char *id,
			 const char *class_name, const char *cpus, const char *mode, const char *fmt, ...)
{
	char msg[1024 + CC_ERR_MSG_MAX];
	struct cc_journal_field f[] = {
		{ "CORECARVE_EVENT", event }, { "CORECARVE_STAGE", stage }, { "CORECARVE_CONTAINER", id },
		{ "CORECARVE_CLASS", class_name }, { "CORECARVE_CPUS", cpus }, { "CORECARVE_MODE", mode },
	};
	va_list ap;

	if (j->fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cc_journal_send(j, prio, msg, f, (int)(sizeof(f) / sizeof(f[0])));
}

/* A refusal the container can be fixed for (no capacity, a bad,
 * out-of-range, oversized or forbidden annotation) is a warning; anything
 * else (the node's fault) an error. */
static int refusal_priority(const struct cc_err *err)
{
	switch (err->code) {
	case ENOSPC:
	case EINVAL:
	case ERANGE:
	case EFBIG:
	case EPERM:
		return LOG_WARNING;
	default:
		return LOG_ERR;
	}
}

/* What the command line asks for. */
struct args {
	struct cc_cli_common common;
	const char *stage, *state_dir;
	bool verbose;
};

/* argv into `a`: the stage is the first word that is not an option.
 * 1: --help was printed (exit 0); 2: no stage, usage on stderr (exit 2);
 * -1 with err set. */
static int parse_args(int argc, char **argv, struct args *a, struct cc_err *err)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_hook, NULL, argc, argv, &i, &v, err);

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case CC_HOOK_OPT_VERBOSE:
			a->verbose = true;
			break;
		case CC_HOOK_OPT_STATE:
			a->state_dir = v;
			break;
		case CC_OPT_WORD:
			if (!a->stage && v[0] != '-') {
				a->stage = v;
				break;
			}
			return cc_err_set(err, EINVAL, "hook: unexpected argument \"%s\"", v);
		default:
			cc_cli_common_set(&a->common, id, v);
		}
	}
	if (!a->stage) {
		usage(stderr);
		return 2;
	}
	if (strcmp(a->stage, "createRuntime") && strcmp(a->stage, "prestart") && strcmp(a->stage, "poststop"))
		return cc_err_set(err, EINVAL, "hook: unknown stage \"%s\" (expected createRuntime, prestart or poststop)",
				  a->stage);
	if (a->common.xml || a->common.synthetic)
		return cc_err_set(err, EINVAL,
				  "hook: --hwloc-xml and --synthetic describe other machines; the hook acts on this one");
	return 0;
}

/* poststop: give the container's carve back; the journal says what was
 * given back, or that nothing was recorded. */
static int stage_poststop(const struct cc_ctx *ctx, const struct cc_journal *journal, const char *stage,
			  const struct cc_oci_state *st, struct cc_err *err)
{
	const struct cc_release_note *released = ctx->released;

	if (cc_container_release(ctx, st->id, "container", err) < 0) {
		journal_line(journal, LOG_ERR, "error", stage, st->id, released->class_name, released->cpus,
			     released->mode, "poststop %s: release failed, kept as releasing (retried): %s", st->id,
			     err->msg);
		return cc_err_prefix(err, "poststop %s", st->id);
	}
	if (ctx->dry_run) {
		if (released->found)
			fprintf(ctx->log, "corecarve: dry run: poststop %s would give back class %s, cpus %s (%s)\n", st->id,
				released->class_name, released->cpus, released->mode);
		else
			fprintf(ctx->log, "corecarve: dry run: poststop %s: no carve recorded, nothing to give back\n",
				st->id);
		return 0;
	}
	if (released->found)
		journal_line(journal, LOG_INFO, "release", stage, st->id, released->class_name, released->cpus,
			     released->mode, "release %s: class %s, cpus %s (%s) given back", st->id,
			     released->class_name, released->cpus, released->mode);
	else
		journal_line(journal, LOG_DEBUG, "none", stage, st->id, NULL, NULL, NULL,
			     "poststop %s: no carve recorded, nothing to give back", st->id);
	return 0;
}

/* createRuntime or prestart: carve what the annotation asks for; the
 * journal says what was carved, refused, or that there was nothing to do. */
static int stage_create(const struct cc_ctx *ctx, const struct cc_journal *journal, const char *stage,
			const struct cc_oci_state *st, struct cc_err *err)
{
	struct cc_create_result res;

	if (cc_container_create(ctx, st, &res, err) < 0) {
		journal_line(journal, refusal_priority(err), "refuse", stage, st->id, NULL, NULL, NULL,
			     "refuse %s at %s: %s", st->id, stage, err->msg);
		cc_err_prefix(err, "%s %s", stage, st->id);
		cc_decision_fini(&res.decision);
		return -1;
	}
	if (res.would_carve) {
		_cleanup_free_ char *c = cc_cpulist_format(res.decision.cpus);
		_cleanup_free_ char *p = cc_cpulist_format(res.decision.parked);

		fprintf(ctx->log, "corecarve: dry run: %s %s would carve class %s on %s cpus %s parked %s (%s) in %s\n",
			stage, st->id, res.decision.class_name, res.decision.core_class, c ? c : "?", p && *p ? p : "-",
			res.mode, res.cgroup);
	} else if (res.carved) {
		_cleanup_free_ char *c = cc_cpulist_format(res.decision.cpus);
		_cleanup_free_ char *p = cc_cpulist_format(res.decision.parked);
		_cleanup_free_ char *m = cc_cpulist_format(res.decision.mems);

		journal_line(journal, LOG_INFO, res.decision.exclusive ? "carve" : "shared", stage, st->id,
			     res.decision.class_name, c, res.mode,
			     "carve %s: class %s on %s cpus %s parked %s mems %s (%s) in %s", st->id,
			     res.decision.class_name, res.decision.core_class, c ? c : "?", p && *p ? p : "-",
			     m && *m ? m : "-", res.mode, res.cgroup);
		if (ctx->verbose)
			fprintf(stderr, "corecarve: %s: class %s on %s cpus %s parked %s mems %s (%s) in %s\n", st->id,
				res.decision.class_name, res.decision.core_class, c ? c : "?", p ? p : "?", m ? m : "?",
				res.mode, res.cgroup);
	} else {
		/* A hook that ran and matched nothing leaves a trace too
		 * (at debug: crun bundles run it for every container). */
		journal_line(journal, LOG_DEBUG, "none", stage, st->id, NULL, NULL, NULL,
			     "%s %s: no corecarve.io/placement annotation, or carved already: nothing to do", stage,
			     st->id);
	}
	cc_decision_fini(&res.decision);
	return 0;
}

/* The state directory, opened for the Landlock rule that lets the ledger
 * be written: created when missing (as the ledger would create it), and
 * none (-1) when it cannot be used: the ledger then refuses it with its
 * own message, and only if there is work. */
static int state_dir_fd(const char *dir)
{
	struct cc_err err = CC_ERR_INIT;
	bool missing = false;
	int fd;

	if (!dir)
		dir = CC_LEDGER_DIR;
	fd = cc_state_dir_open(dir, false, &missing, &err);
	if (fd < 0 && missing)
		fd = cc_state_dir_open(dir, true, NULL, &err);
	return fd;
}

/* Confine the hook before it interprets any input: Landlock first (its
 * syscalls are not in the seccomp list), then seccomp.  Without Landlock
 * in the kernel, a debug line and seccomp alone. */
static int confine(const struct cc_root *root, const char *state_dir, const struct cc_journal *journal,
		   const char *stage, bool verbose, struct cc_err *err)
{
	_cleanup_close_ int sfd = state_dir_fd(state_dir);
	struct cc_err e = CC_ERR_INIT;
	int r;

	/* What the hook writes to a slice it gives systemd too (AllowedCPUs=,
	 * CPUQuota=: cgroup/host.c), through a helper forked before Landlock
	 * and the filter, which forbid running systemctl.  Without it the hook
	 * still writes the files. */
	if (cc_systemd_booted(root) && cc_systemctl_helper_start(NULL, NULL, NULL, &e) < 0)
		journal_line(journal, LOG_WARNING, "systemctl", stage, NULL, NULL, NULL, NULL, "%s", e.msg);
	r = cc_landlock_hook(root, sfd, err);
	if (r < 0)
		return -1;
	if (r == 0) {
		journal_line(journal, LOG_DEBUG, "landlock", stage, NULL, NULL, NULL, NULL,
			     "landlock: not in this kernel; the seccomp filter alone confines the hook");
		if (verbose)
			fprintf(stderr, "corecarve: landlock: not in this kernel; the seccomp filter alone confines the hook\n");
	}
	return cc_sandbox_hook(journal->fd, cc_systemctl_helper_fd(), cc_systemctl_helper_pid(), err);
}

int cc_cmd_hook(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct args a = { 0 };
	struct cc_oci_state st = { 0 };
	struct cc_ctx ctx = { 0 };
	struct cc_journal journal = { .fd = -1 };
	struct cc_release_note released = { 0 };
	struct cc_cli_lock lock;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_free_ char *text = NULL;
	const char *stage;
	char state_buf[PATH_MAX];
	size_t len = 0;
	int r, rc = CC_EXIT_ERROR;

	r = parse_args(argc, argv, &a, &err);
	if (r == 1)
		return CC_EXIT_OK;
	if (r == 2)
		return CC_EXIT_ERROR;
	if (r < 0)
		return cc_cli_fail(&err);
	stage = a.stage;

	/* A bad $CORECARVE_LOCK_TIMEOUT refuses only a container that needs
	 * the lock: the environment is the runtime's, shared by every
	 * container it starts, and most are none of corecarve's business. */
	cc_cli_lock_deferred(&lock, argc, argv);

	if (cc_read_fd(STDIN_FILENO, "OCI state on stdin", CC_OCI_STATE_MAX, 0, &text, &len, &err) < 0)
		return cc_cli_fail(&err);
	root = cc_root_open(a.common.root ? a.common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		return cc_cli_fail(&err);
	}
	ctx.state_dir = a.state_dir ? a.state_dir : getenv("CORECARVE_STATE_DIR");
	if (ctx.state_dir && !*ctx.state_dir)
		ctx.state_dir = NULL;
	/* --root is a debugging aid that must never touch the node: the
	 * tree's own state (TREE/run/corecarve unless --state names one; the
	 * hook's CORECARVE_STATE_DIR is the node's), read only, no gc, and
	 * what it would do on stderr. */
	if (!root->is_host) {
		if (cc_cli_state_dir(a.state_dir, a.common.root, state_buf, sizeof(state_buf), &ctx.state_dir, &err) < 0)
			goto out;
		ctx.dry_run = true;
	}
	/* The state is read, not yet parsed: the sandbox (Landlock, then the
	 * seccomp filter: plugin/core/landlock.h, sandbox.h) goes on before any
	 * byte of it is interpreted, so that a bug in a parser runs confined.
	 * From here on only file I/O, writes beneath the hook's directories,
	 * and the one log socket, connected now.  Host only: with --root the
	 * hook reads a captured tree, changes nothing and logs nothing. */
	if (root->is_host) {
		cc_journal_open(&journal, NULL, NULL);
		if (confine(root, ctx.state_dir, &journal, stage, a.verbose, &err) < 0)
			goto out;
	}
	if (cc_oci_state_parse(text, len, &st, &err) < 0)
		goto out;
	ctx.root = root;
	ctx.policy_path = cc_cli_policy_path(&a.common);
	ctx.fault = cc_cli_fault();
	/* Who waits on a hook that holds the lock learns which container's. */
	snprintf(lock.holder, sizeof(lock.holder), "corecarve hook %s %.200s", stage, st.id);
	ctx.lock = &lock.lock;
	ctx.log = stderr;
	ctx.verbose = a.verbose;
	ctx.released = &released;

	if (!strcmp(stage, "poststop"))
		r = stage_poststop(&ctx, &journal, stage, &st, &err);
	else
		r = stage_create(&ctx, &journal, stage, &st, &err);
	if (r == 0)
		rc = CC_EXIT_OK;
out:
	cc_journal_close(&journal);
	cc_oci_state_fini(&st);
	if (rc != CC_EXIT_OK)
		return cc_cli_fail(&err);
	return rc;
}
