/* corecarve doctor: is this node ready?  Reads the world (root, policy,
 * topology), runs plugin/report/doctor.c's checks, prints one line per check with
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
#include "table.h"

static const struct cc_table_col cols[] = {
	{ "STATUS", 0, 0, "ok, warn, fail, or unknown (cannot be answered here)" },
	{ "CHECK", 0, 0, "the check's id (docs/doctor.md)" },
	{ "FOUND", 0.5, CC_COL_WRAP, "what was found" },
	{ "WHY", 0.3, CC_COL_WRAP, "why it matters" },
	{ "FIX", 0.3, CC_COL_WRAP, "what to do, when there is something to do" },
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))
#define COLS_DEFAULT "STATUS,CHECK,FOUND"

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve doctor [--json] [--problems] [--root DIR] [--policy FILE] [--state DIR]\n"
		     "                        [table options]\n\n"
		     "Check whether this node is ready for carving: cgroup v2 controllers, kernel partition\n"
		     "support (remote, local, none), SMT, hybrid PMU lists, hwloc against sysfs, the policy and\n"
		     "what each of its classes can carve, irqbalance, cpufreq governors, THP,\n"
		     "kernel.numa_balancing, isolcpus/nohz_full against the reserved set, kubelet's CPU manager,\n"
		     "the hooks.d files and the ledger (--state, else $CORECARVE_STATE_DIR, else " CC_LEDGER_DIR ";\n"
		     "with --root the tree's own).  Reads only; --root examines a captured tree (corecarve capture),\n"
		     "where what the tree does not hold is unknown.  The fix of every problem follows the table.\n\n"
		     "  --problems   only the checks that are not ok\n\n");
	cc_table_usage(out, cols, NCOLS, COLS_DEFAULT);
	fprintf(out, "\nexit status: 0 ready, 1 warnings, 2 not usable (or bad arguments); unknowns do not count\n");
}

struct opts {
	struct cc_cli_common common;
	struct cc_table_opts table;
	const char *state;
	bool problems;
	struct cc_cli_lock lock;
};

enum { OPT_PROBLEMS = 1, OPT_STATE };

const struct cc_opt cc_opts_doctor[] = {
	{ "--problems", NULL, NULL, OPT_PROBLEMS, 0, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(CC_CLI_REFUSED, NULL),
	CC_CLI_OPTS_TABLE(NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_doctor, NULL, argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_PROBLEMS:
			o->problems = true;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		default:
			if ((r = cc_table_set(&o->table, id, v, err)) < 0)
				return -1;
			if (!r && !cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL, "doctor: unexpected argument \"%s\" (see corecarve doctor --help)", v);
		}
	}
	if (o->common.xml || o->common.synthetic)
		return cc_err_set(err, EINVAL, "doctor: --hwloc-xml and --synthetic describe no node to check; use --root");
	return cc_cli_lock(&o->lock, argc, argv, err);
}

static int print_text(const struct cc_doctor_report *r, const struct opts *o, struct cc_err *err)
{
	_cleanup_table_ struct cc_table *t = cc_table_new(cols, NCOLS, COLS_DEFAULT, &o->table, err);
	_cleanup_table_ struct cc_table *fixes = NULL;
	static const struct cc_table_col fix_cols[] = { { "CHECK", 0, 0, NULL }, { "FIX", 0.8, CC_COL_WRAP, NULL } };
	char verdict[128];
	int nfix = 0;

	if (!t)
		return -1;
	for (int i = 0; i < r->n; i++) {
		const struct cc_doctor_item *it = &r->items[i];

		if (o->problems && it->status == CC_DOCTOR_OK)
			continue;
		if (cc_table_row(t, (const char *[]){ cc_doctor_status_name(it->status), it->id, it->found, it->why, it->fix },
				 err) < 0)
			return -1;
		nfix += it->fix[0] != '\0';
	}
	if ((!o->problems || nfix < r->n) && cc_table_print(t, stdout, err) < 0)
		return -1;
	cc_doctor_verdict(r, verdict, sizeof(verdict));
	printf("doctor: %s\n", verdict);
	/* The fixes below the table, unless the columns already show them. */
	if (!nfix || (o->table.output && strcasestr(o->table.output, "fix")))
		return 0;
	if (!(fixes = cc_table_new(fix_cols, 2, "CHECK,FIX", &(struct cc_table_opts){ .width = o->table.width, .raw = o->table.raw }, err)))
		return -1;
	for (int i = 0; i < r->n; i++)
		if (r->items[i].fix[0] && cc_table_row(fixes, (const char *[]){ r->items[i].id, r->items[i].fix }, err) < 0)
			return -1;
	printf("\n");
	return cc_table_print(fixes, stdout, err);
}

int cc_cmd_doctor(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT, perr = CC_ERR_INIT, terr = CC_ERR_INIT, serr = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct cc_topo_source src = { 0 };
	struct cc_topo *topo = NULL;
	struct cc_doctor_ctx ctx = { 0 };
	struct cc_doctor_report report;
	const char *state = NULL;
	char buf[PATH_MAX];
	int r = parse(argc, argv, &o, &err);

	if (r)
		return r > 0 ? CC_EXIT_OK : cc_cli_fail(&err);
	root = cc_root_open(o.common.root ? o.common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		return cc_cli_fail(&err);
	}
	/* A wrong state directory is the ledger line's finding. */
	cc_cli_state_dir(o.state, o.common.root, buf, sizeof(buf), &state, &serr);
	/* A policy or topology that does not load is a finding, not the end. */
	policy = cc_policy_load_in(root, cc_cli_policy_path(&o.common), &perr);
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
				      .policy_error = perr.msg, .reserved = reserved, .state_dir = state,
				      .state_error = serr.msg[0] ? serr.msg : NULL, .lock = &o.lock.lock };
	cc_doctor_run(&ctx, &report);
	cc_topo_free(topo);
	if (o.common.json) {
		_cleanup_json_ json_t *doc = cc_doctor_json(&report);

		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
			cc_err_set(&err, EIO, "doctor: cannot write the report");
			return cc_cli_fail(&err);
		}
		fputc('\n', stdout);
	} else if (print_text(&report, &o, &err) < 0) {
		return cc_cli_fail(&err);
	}
	return cc_doctor_exit_code(&report);
}
