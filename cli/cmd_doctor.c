/* corecarve doctor: is this node ready?  Reads the world (root, policy,
 * topology), runs plugin/doctor.c's checks, prints one line per check with
 * why it matters and the fix.  Exit 0 ready, 1 warnings, 2 not usable. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "doctor.h"
#include "ledger.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve doctor [--json] [--root DIR] [--policy FILE] [--state DIR]\n\n"
		     "Check whether this node is ready for carving: cgroup v2 controllers, kernel partition\n"
		     "support (remote, local, none), SMT, hybrid PMU lists, hwloc against sysfs, the policy,\n"
		     "irqbalance, cpufreq governors, THP, kernel.numa_balancing, isolcpus/nohz_full against\n"
		     "the reserved set, kubelet's CPU manager, the hooks.d files and the ledger (--state, else\n"
		     "$CORECARVE_STATE_DIR, else " CC_LEDGER_DIR ").  Reads only; --root examines a captured tree.\n\n"
		     "exit status: 0 ready, 1 warnings, 2 not usable (or bad arguments)\n");
}

struct opts {
	struct cc_cli_common common;
	const char *state;
	struct cc_cli_lock lock;
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(a, "--state")) {
			if (i + 1 >= argc)
				return cc_err_set(err, EINVAL, "%s: missing argument", a);
			o->state = argv[++i];
			continue;
		}
		r = cc_cli_common_opt(&o->common, argc, argv, &i, err);
		if (r < 0)
			return -1;
		if (r == 0)
			return cc_err_set(err, EINVAL, "doctor: unexpected argument \"%s\" (see corecarve doctor --help)", a);
	}
	if (o->common.xml || o->common.synthetic)
		return cc_err_set(err, EINVAL, "doctor: --hwloc-xml and --synthetic describe no node to check; use --root");
	if (!o->state || !*o->state)
		o->state = getenv("CORECARVE_STATE_DIR");
	if (o->state && !*o->state)
		o->state = NULL;
	return cc_cli_lock(&o->lock, argc, argv, err);
}

static void print_text(const struct cc_doctor_report *r)
{
	static const char *const verdict[] = { "ready", "ready, with warnings", "not usable" };

	for (int i = 0; i < r->n; i++) {
		const struct cc_doctor_item *it = &r->items[i];

		printf("%-4s  %-14s  %s\n", cc_doctor_status_name(it->status), it->id, it->found);
		printf("      %-14s  why: %s\n", "", it->why);
		if (it->fix[0])
			printf("      %-14s  fix: %s\n", "", it->fix);
	}
	printf("doctor: %s\n", verdict[cc_doctor_exit_code(r)]);
}

int cc_cmd_doctor(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT, perr = CC_ERR_INIT, terr = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct cc_topo_source src = { 0 };
	struct cc_topo *topo = NULL;
	struct cc_doctor_ctx ctx = { 0 };
	struct cc_doctor_report report;
	int r = parse(argc, argv, &o, &err);

	if (r)
		return r > 0 ? CC_EXIT_OK : cc_cli_fail(&err);
	root = cc_root_open(o.common.root ? o.common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		return cc_cli_fail(&err);
	}
	/* A policy or topology that does not load is a finding, not the end. */
	policy = cc_policy_load(cc_cli_policy_path(&o.common), &perr);
	src.kind = CC_TOPO_HOST;
	src.root = root;
	if (policy) {
		src.overrides = policy->overrides;
		src.noverrides = policy->noverrides;
	}
	topo = cc_topo_load(&src, &terr);
	if (topo && policy && !(reserved = cc_policy_reserved(policy, topo))) {
		cc_topo_free(topo);
		cc_err_set(&err, ENOMEM, "doctor: reserved set");
		return cc_cli_fail(&err);
	}
	ctx = (struct cc_doctor_ctx){ .root = root, .topo = topo, .topo_error = terr.msg, .policy = policy,
				      .policy_error = perr.msg, .reserved = reserved, .state_dir = o.state,
				      .lock = &o.lock.lock };
	cc_doctor_run(&ctx, &report);
	cc_topo_free(topo);
	if (o.common.json) {
		_cleanup_json_ json_t *doc = cc_doctor_json(&report);

		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
			cc_err_set(&err, EIO, "doctor: cannot write the report");
			return cc_cli_fail(&err);
		}
		fputc('\n', stdout);
	} else {
		print_text(&report);
	}
	return cc_doctor_exit_code(&report);
}
