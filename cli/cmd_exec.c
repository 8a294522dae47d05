/* corecarve exec: run a command on the CPUs of a placement class, as a
 * class-aware taskset + numactl (see plugin/flows/exec.h).  A wrapper, so it
 * follows the wrappers' exit convention (env, nice, timeout): the
 * command's own status, 125 when corecarve itself failed, 126 when the
 * command could not be run, 127 when it was not found. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "container.h"
#include "cpulist.h"
#include "exec.h"
#include "ledger.h"

#define EXIT_FAILED 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve exec --class NAME [--cpus N] [--carve [--cgroup-parent CGROUP]]\n"
		"                      [--lock-affinity] [--policy FILE] [--state DIR] [--verbose] [--] CMD [ARG...]\n\n"
		"Run CMD on CPUs of placement class NAME, with the class's memory policy: a class-aware\n"
		"taskset + numactl.\n\n"
		"  --class NAME      placement class of the policy (latency, throughput, ...)\n"
		"  --cpus N          how many CPUs (counted as the annotation counts them: cores under\n"
		"                    smt isolate); without it, every free CPU of the class, whole cores\n"
		"  --carve           carve them exclusively, as for a container, in a transient cgroup\n"
		"                    CGROUP/exec-<pid> (default " CC_EXEC_CGROUP_PARENT "), recorded in the ledger\n"
		"                    and released when CMD exits (needs --cpus; root)\n"
		"  --lock-affinity   CMD and its children cannot change CPU affinity: sched_setaffinity\n"
		"                    fails with EPERM (seccomp), so no taskset stacks on the carve\n"
		"  --verbose         print the CPUs and nodes chosen on stderr\n\n"
		"Memory: local binds to the NUMA nodes of the CPUs, spread interleaves over the nodes of\n"
		"the class, any leaves the memory policy alone.  Without --carve nothing is recorded:\n"
		"CPUs that carves hold are avoided, others may run on the same CPUs.\n\n"
		"exit status: CMD's status (128+N when --carve and CMD was killed by signal N);\n"
		"125 corecarve failed (bad input, refused, carve failed; one line on stderr);\n"
		"126 CMD could not be run; 127 CMD was not found\n");
}

static int fail(const struct cc_err *err)
{
	cc_cli_fail(err);
	return EXIT_FAILED;
}

static void print_choice(const struct cc_decision *d)
{
	_cleanup_free_ char *cpus = cc_cpulist_format(d->cpus);
	_cleanup_free_ char *mems = cc_cpulist_format(d->mems);

	fprintf(stderr, "corecarve: exec: class %s on %s cpus %s mems %s memory %s (affinity, not carved)\n",
		d->class_name, d->core_class, cpus ? cpus : "?", mems && *mems ? mems : "-",
		cc_memory_name(d->memory));
	for (int i = 0; i < d->nwarnings; i++)
		fprintf(stderr, "corecarve: exec: warning: %s\n", d->warnings[i]);
}

/* Without --carve: decide, apply to this process, become the command. */
static int run_uncarved(struct cc_cli_common *common, const char *state, const struct cc_ledger_lock *ll,
			const char *class_name, int cpus, bool lock, bool verbose, char **cmd)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = NULL;
	struct cc_decision d;
	struct cc_exec_self self;
	int e;

	/* The caller's view: affinity can only be set inside its cpuset. */
	common->caller_view = true;
	if (cc_cli_load(common, &root, &policy, &topo, &err) < 0)
		return fail(&err);
	ledger = cc_cli_ledger_open(state, CC_LEDGER_READ, ll, &err);
	if (!ledger)
		return fail(&err);
	taken = cc_ledger_taken(ledger);
	if (!taken) {
		cc_err_sys(&err, ENOMEM, "exec");
		return fail(&err);
	}
	if (cc_exec_place(topo, policy, taken, class_name, cpus, &d, &err) < 0) {
		cc_err_prefix(&err, "exec");
		return fail(&err);
	}
	if (verbose)
		print_choice(&d);
	self = (struct cc_exec_self){ d.cpus, d.mems, d.memory, lock };
	if (cc_exec_apply_self(&self, &err) < 0) {
		cc_decision_fini(&d);
		cc_err_prefix(&err, "exec");
		return fail(&err);
	}
	cc_decision_fini(&d);
	execvp(cmd[0], cmd);
	e = errno;
	cc_err_sys(&err, e, "exec: %s", cmd[0]);
	cc_cli_fail(&err);
	return e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}

static int run_carved(const struct cc_cli_common *common, const char *state, const struct cc_ledger_lock *ll,
		      const struct cc_exec_carve *opt, bool verbose, char **cmd)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);
	struct cc_ctx ctx = { 0 };
	struct cc_create_result res;
	int status = -1, r;

	if (!root)
		return fail(&err);
	ctx.root = root;
	ctx.policy_path = cc_cli_policy_path(common);
	ctx.state_dir = state;
	ctx.lock = ll;
	ctx.fault = cc_cli_fault();
	ctx.log = stderr;
	ctx.verbose = verbose;
	r = cc_exec_carved(&ctx, opt, cmd, &status, &res, &err);
	cc_decision_fini(&res.decision);
	if (r < 0) {
		cc_err_prefix(&err, "exec");
		cc_cli_fail(&err);
		if (status < 0)
			return EXIT_FAILED;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

enum { OPT_CARVE = 1, OPT_LOCK_AFFINITY, OPT_VERBOSE, OPT_CLASS, OPT_CPUS, OPT_CGROUP_PARENT, OPT_STATE };

const struct cc_opt cc_opts_exec[] = {
	{ "--class", NULL, "NAME", OPT_CLASS, 0, NULL },
	{ "--cpus", NULL, "N", OPT_CPUS, 0, NULL },
	{ "--carve", NULL, NULL, OPT_CARVE, 0, NULL },
	{ "--cgroup-parent", NULL, "CGROUP", OPT_CGROUP_PARENT, 0, NULL },
	{ "--lock-affinity", NULL, NULL, OPT_LOCK_AFFINITY, 0, NULL },
	{ "--verbose", NULL, NULL, OPT_VERBOSE, 0, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, NULL },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static int parse_cpus(const char *v, int *cpus, struct cc_err *err)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 1 || n > CC_CPU_LIMIT)
		return cc_err_set(err, EINVAL, "--cpus: expected an integer from 1 to %d, got \"%s\"", CC_CPU_LIMIT, v);
	*cpus = (int)n;
	return 0;
}

int cc_cmd_exec(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	struct cc_exec_carve opt = { 0 };
	struct cc_cli_lock ll;
	const char *state = NULL, *v;
	char state_buf[PATH_MAX];
	bool carve = false, verbose = false;
	int i;

	for (i = 1; i < argc; i++) {
		int id = cc_opts_next(cc_opts_exec, NULL, argc, argv, &i, &v, &err);

		if (id == CC_OPT_WORD && !strcmp(v, "--")) {
			i++;
			break;
		}
		if (id == CC_OPT_WORD && v[0] != '-')
			break;
		switch (id) {
		case -1:
			return fail(&err);
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return CC_EXIT_OK;
		case OPT_CARVE:
			carve = true;
			break;
		case OPT_LOCK_AFFINITY:
			opt.lock_affinity = true;
			break;
		case OPT_VERBOSE:
			verbose = true;
			break;
		case OPT_CLASS:
			opt.class_name = v;
			break;
		case OPT_CPUS:
			if (parse_cpus(v, &opt.cpus, &err) < 0)
				return fail(&err);
			break;
		case OPT_CGROUP_PARENT:
			opt.cgroup_parent = v;
			break;
		case OPT_STATE:
			state = v;
			break;
		case CC_CLI_OPT_POLICY:
			common.policy = v;
			break;
		default:
			cc_err_set(&err, EINVAL, "exec: unknown option \"%s\" (see corecarve exec --help)", v);
			return fail(&err);
		}
	}
	if (!opt.class_name || !*opt.class_name) {
		cc_err_set(&err, EINVAL, "--class: missing (which placement class should the command run in?)");
		return fail(&err);
	}
	if (i >= argc) {
		cc_err_set(&err, EINVAL, "exec: no command given (corecarve exec --class NAME -- CMD ARGS)");
		return fail(&err);
	}
	if (opt.cgroup_parent && !carve) {
		cc_err_set(&err, EINVAL, "exec: --cgroup-parent only means something with --carve");
		return fail(&err);
	}
	/* A --state that does not exist would start a second ledger beside the
	 * hook's: the carves would not see each other. */
	if (cc_cli_state_dir(state, common.root, state_buf, sizeof(state_buf), &state, &err) < 0 ||
	    cc_cli_lock(&ll, argc, argv, &err) < 0)
		return fail(&err);
	if (carve)
		return run_carved(&common, state, &ll.lock, &opt, verbose, argv + i);
	return run_uncarved(&common, state, &ll.lock, opt.class_name, opt.cpus, opt.lock_affinity, verbose, argv + i);
}
