/* corecarve calibrate: measure this node's placement table and keep it as
 * its baseline (plugin/report/calibrate.h, docs/calibrate.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibrate.h"
#include "cleanup.h"
#include "commands.h"

#define ROUNDS_DEFAULT 5
#define MS_DEFAULT 200

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve calibrate [--rounds N] [--ms MS] [--output FILE] [--json] [--dry-run]\n"
		"                           [--root DIR | --hwloc-xml FILE | --synthetic DESC] [--policy FILE]\n\n"
		"Measure how much two workloads slow each other on this node, per relation of their CPUs:\n"
		"SMT siblings (smt), two cores of one L2 cluster (l2), one L3 with separate L2s (l3), two L3s\n"
		"of one NUMA node (l3x), two NUMA nodes of one package (numa), two packages (package), the\n"
		"most and the least performant core class (class).  A relation the node does not have is\n"
		"skipped, with the reason.  Each pair runs a CPU loop (dependent integer and FP chains) and a\n"
		"memory stream over a buffer larger than L2, alone on each CPU and then on both at once,\n"
		"started on one barrier; ratio = pair throughput / solo throughput, medians over the rounds.\n\n"
		"  --rounds N     rounds per pair and workload (default %d, 1 to 101)\n"
		"  --ms MS        each measured interval (default %d, 1 to 10000)\n"
		"  --output FILE  where the baseline goes (default $CORECARVE_BASELINE, else\n"
		"                 " CC_BASELINE_PATH "; \"-\": nowhere, printed only)\n"
		"  --json         print the baseline (or, with --dry-run, the pairs) as JSON\n"
		"  --dry-run      print the pairs it would measure and change nothing (also on --root,\n"
		"                 --hwloc-xml and --synthetic topologies)\n\n"
		"A measurement takes about 2 workloads x 3 intervals x rounds x ms per pair, on the real host\n"
		"only; run it on an idle node.  `corecarve doctor` re-measures briefly against the baseline.\n\n"
		"exit status: 0 measured (or planned), 2 bad input or could not measure\n",
		ROUNDS_DEFAULT, MS_DEFAULT);
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out, struct cc_err *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return cc_err_set(err, EINVAL, "%s: expected an integer from %d to %d, got \"%s\"", opt, lo, hi, s);
	*out = (int)v;
	return 0;
}

struct opts {
	struct cc_cli_common common;
	struct cc_calib_opts run;
	const char *output;
	bool dry_run;
};

enum { OPT_DRY_RUN = 1, OPT_ROUNDS, OPT_MS, OPT_OUTPUT };

const struct cc_opt cc_opts_calibrate[] = {
	{ "--rounds", NULL, "N", OPT_ROUNDS, 0, NULL },
	{ "--ms", NULL, "N", OPT_MS, 0, NULL },
	{ "--output", NULL, "FILE", OPT_OUTPUT, 0, NULL },
	{ "--dry-run", NULL, NULL, OPT_DRY_RUN, 0, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(0, NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	o->run.rounds = ROUNDS_DEFAULT;
	o->run.ms = MS_DEFAULT;
	o->common.caller_view = true; /* the threads are pinned with this process's affinity */
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_calibrate, NULL, argc, argv, &i, &v, err);

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_OUTPUT:
			o->output = v;
			break;
		case OPT_ROUNDS:
		case OPT_MS:
			if (parse_int(id == OPT_MS ? "--ms" : "--rounds", v, 1, id == OPT_MS ? 10000 : 101,
				      id == OPT_MS ? &o->run.ms : &o->run.rounds, err) < 0)
				return -1;
			break;
		default:
			if (!cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL, "calibrate: unexpected argument \"%s\" (see corecarve calibrate --help)", v);
		}
	}
	if (o->output && !*o->output)
		return cc_err_set(err, EINVAL, "--output: empty file name (\"-\" writes nothing)");
	if (!o->output)
		o->output = getenv("CORECARVE_BASELINE");
	if (!o->output || !*o->output)
		o->output = CC_BASELINE_PATH;
	return 0;
}

static int print_json(json_t *doc, struct cc_err *err)
{
	if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) < 0 || fputc('\n', stdout) == EOF)
		return cc_err_set(err, EIO, "calibrate: cannot write the result");
	return 0;
}

static int dry_run(const struct opts *o, const struct cc_topo *t, const struct cc_calib_plan *p, struct cc_err *err)
{
	int n = 0;

	for (int r = 0; r < CC_REL_N; r++)
		n += p->pairs[r].present;
	if (o->common.json) {
		_cleanup_json_ json_t *doc = json_pack("{s:s,s:I,s:i,s:i,s:[],s:[]}", "source", t->source, "mem_bytes",
						       (json_int_t)p->mem_bytes, "rounds", o->run.rounds, "ms", o->run.ms,
						       "pairs", "skipped");

		for (int r = 0; doc && r < CC_REL_N; r++) {
			const struct cc_calib_pair *pr = &p->pairs[r];

			if (pr->present)
				json_array_append_new(json_object_get(doc, "pairs"),
						      json_pack("{s:s,s:[i,i],s:s}", "relation", cc_rel_name(pr->rel), "cpus",
								pr->a, pr->b, "what", pr->what));
			else
				json_array_append_new(json_object_get(doc, "skipped"),
						      json_pack("{s:s,s:s}", "relation", cc_rel_name(pr->rel), "reason",
								pr->what));
		}
		return print_json(doc, err);
	}
	printf("calibrate: %s: %d pair%s, memory stream buffer %llu MiB, %d rounds x %d ms (about %d s)\n", t->source,
	       n, n == 1 ? "" : "s", p->mem_bytes >> 20, o->run.rounds, o->run.ms,
	       (int)((long)n * CC_WORK_N * 3 * o->run.rounds * o->run.ms / 1000));
	for (int r = 0; r < CC_REL_N; r++) {
		const struct cc_calib_pair *pr = &p->pairs[r];

		printf("  %-8s %s%s\n", cc_rel_name(pr->rel), pr->present ? "" : "skipped: ", pr->what);
	}
	printf("nothing was measured (--dry-run)\n");
	return 0;
}

static void print_table(const struct cc_baseline *b, const char *output)
{
	printf("%-8s %-7s %-9s %-9s %s\n", "relation", "cpus", "cpu", "mem", "what");
	for (int i = 0; i < b->n; i++) {
		const struct cc_calib_entry *e = &b->entries[i];
		char cpus[24];

		snprintf(cpus, sizeof(cpus), "%d,%d", e->pair.a, e->pair.b);
		printf("%-8s %-7s %5.2fx    %5.2fx    %s\n", cc_rel_name(e->pair.rel), cpus, e->res[CC_WORK_CPU].ratio,
		       e->res[CC_WORK_MEM].ratio, e->pair.what);
	}
	for (int i = 0; i < b->nskipped; i++)
		printf("%-8s skipped: %s\n", cc_rel_name(b->skipped[i].rel), b->skipped[i].what);
	if (b->n)
		printf("solo: cpu %.0f Mops/s, mem %.0f MB/s on CPU %d; %d rounds x %d ms, buffer %llu MiB\n",
		       b->entries[0].res[CC_WORK_CPU].solo_a, b->entries[0].res[CC_WORK_MEM].solo_a, b->entries[0].pair.a,
		       b->rounds, b->ms, b->mem_bytes >> 20);
	if (strcmp(output, "-"))
		printf("baseline written to %s\n", output);
	else
		printf("baseline not written (--output -)\n");
}

int cc_cmd_calibrate(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_free_ struct cc_baseline *b = NULL;
	struct cc_calib_plan plan;
	time_t now = time(NULL);
	struct tm tm;
	int r = parse(argc, argv, &o, &err);

	if (r)
		return r > 0 ? CC_EXIT_OK : cc_cli_fail(&err);
	if (cc_cli_load(&o.common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	if (cc_calib_plan(topo, NULL, &plan, &err) < 0)
		return cc_cli_fail(&err);
	if (o.dry_run)
		return dry_run(&o, topo, &plan, &err) < 0 ? cc_cli_fail(&err) : CC_EXIT_OK;
	if (o.common.xml || o.common.synthetic) {
		cc_err_set(&err, EINVAL, "calibrate: --hwloc-xml and --synthetic describe no CPUs to measure on; add --dry-run");
		return cc_cli_fail(&err);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		cc_err_sys(&err, ENOMEM, "calibrate");
		return cc_cli_fail(&err);
	}
	b->schema_version = CC_BASELINE_SCHEMA;
	gmtime_r(&now, &tm);
	strftime(b->taken, sizeof(b->taken), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (cc_calib_measure(root, &plan, &o.run, stderr, b, &err) < 0)
		return cc_cli_fail(&err);
	cc_calib_facts_read(root, b->n ? b->entries[0].pair.a : 0, &b->facts);
	if (strcmp(o.output, "-") && cc_baseline_write(o.output, b, &err) < 0)
		return cc_cli_fail(&err);
	if (o.common.json) {
		_cleanup_json_ json_t *doc = cc_baseline_json(b);

		if (print_json(doc, &err) < 0)
			return cc_cli_fail(&err);
	} else {
		print_table(b, o.output);
	}
	return CC_EXIT_OK;
}

int cc_cli_plan_explain(const struct cc_cli_common *c, const struct cc_root *root, const struct cc_topo *t,
			hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked)
{
	struct cc_err err = CC_ERR_INIT;
	const char *env = getenv("CORECARVE_BASELINE");
	_cleanup_free_ struct cc_baseline *b = calloc(1, sizeof(*b));
	_cleanup_bitmap_ hwloc_bitmap_t owned = hwloc_bitmap_dup(cpus);
	const char *path = env && *env ? env : CC_BASELINE_PATH;
	int rc = -1;

	if (!b || !owned)
		return -1;
	hwloc_bitmap_or(owned, owned, parked);
	/* The node's baseline describes the node: a captured tree carries its
	 * own (read through the root), an XML export or a synthetic shape
	 * none unless one is named. */
	if (env && *env)
		rc = cc_baseline_load_file(env, b, &err);
	else if (!c->xml && !c->synthetic)
		rc = cc_baseline_load_root(root, CC_BASELINE_PATH, b, &err);
	else
		cc_err_set(&err, EINVAL, "no baseline for a --hwloc-xml or --synthetic topology (set CORECARVE_BASELINE=FILE)");
	if (rc == 0)
		printf("  baseline  %s (%s, %d rounds x %d ms)\n", path, b->taken, b->rounds, b->ms);
	else if (err.code == ENOENT && !(env && *env))
		printf("  baseline  none at %s: run corecarve calibrate for measured numbers\n", path);
	else if (err.code == EINVAL && (c->xml || c->synthetic) && !(env && *env))
		printf("  baseline  none: %s\n", err.msg);
	else
		printf("  baseline  unusable: %s\n", err.msg);
	cc_calib_explain(stdout, t, cpus, owned, rc == 0 ? b : NULL);
	return 0;
}
