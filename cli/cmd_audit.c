/* corecarve audit: compare the ledger with the live kernel; --fix repairs
 * what is safe and audits again.  The work is in plugin/report/audit*.c; this
 * reads argv and the environment, prints, and maps to the exit status. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "capacity.h"
#include "cleanup.h"
#include "commands.h"
#include "ctx.h"
#include "irqbalance.h"
#include "sandbox.h"
#include "table.h"
#include "vm.h"

#define SAMPLE_DEFAULT_MS 1000
#define SAMPLE_MAX_MS 60000
#define READ_TRIES 3

static const struct cc_table_col cols[] = {
	{ "CODE", 0, 0, "the finding's stable code (docs/audit.md)" },
	{ "SEVERITY", 0, 0, "critical (a promise broken now) or warning" },
	{ "CARVE", 0, 0, "the carve concerned, cut to 12 characters (\"-\": node-wide)" },
	{ "OBJECT", 0.2, CC_COL_WRAP, "the cgroup, task, IRQ or file" },
	{ "EXPECTED", 0.15, CC_COL_WRAP, "what the ledger promises" },
	{ "ACTUAL", 0.15, CC_COL_WRAP, "what the kernel shows" },
	{ "FIX", 0.3, CC_COL_WRAP, "what --fix does, or what a person must do" },
	{ "REPAIR", 0, 0, "how --fix repairs it (none: by a person)" },
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))
#define COLS_DEFAULT "CODE,SEVERITY,CARVE,OBJECT,EXPECTED,ACTUAL,FIX"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve audit [--json] [--prometheus FILE.prom] [--fix[=CODE,...]] [--sample-ms N]\n"
		"                       [--max-threads N] [--state DIR] [--root DIR] [--policy FILE]\n"
		"                       [table options]\n"
		"       corecarve audit --set-aside-ledger [--state DIR]\n\n"
		"Compare the carves in the ledger with the kernel: cpusets, partitions, memory\n"
		"nodes, CFS quotas, task affinities, IRQs, stale and unknown carves, kubelet's\n"
		"static CPU manager.  Every finding has a stable code (docs/audit.md).\n\n"
		"  --json             findings as JSON, for tools\n"
		"  --prometheus FILE  also write a node_exporter textfile (a *.prom name), atomically:\n"
		"                     findings per code and each class's CPUs by state\n"
		"  --fix              repair what is safe, print every change, audit again\n"
		"  --fix=CODE,...     repair only findings with these codes (QUOTA_ON_CARVE, ...);\n"
		"                     the others are reported as usual; --fix=none repairs nothing\n"
		"  --sample-ms N      count interrupts on carved CPUs for N ms (default %d, 0: no sample)\n"
		"  --max-threads N    read the affinity of at most N threads per cgroup (default %d);\n"
		"                     the rest are counted (TASKS_UNREAD)\n"
		"  --root DIR         audit a captured tree (/sys, /proc and cgroupfs under DIR)\n"
		"  --state DIR        the ledger (else $CORECARVE_STATE_DIR, else " CC_LEDGER_DIR ")\n"
		"  --set-aside-ledger a ledger that does not load: rename it to ledger.json.damaged.<time>\n"
		"                     under the lock, so hooks start afresh; then audit (corecarve(8),\n"
		"                     DAMAGED LEDGER)\n\n",
		SAMPLE_DEFAULT_MS, CC_AUDIT_TASKS_PER_CGROUP);
	cc_table_usage(out, cols, NCOLS, COLS_DEFAULT);
	fprintf(out, "\nexit status: 0 clean, 1 findings (with --fix: findings left), 2 could not audit\n");
}

struct opts {
	struct cc_cli_common common;
	struct cc_table_opts table;
	const char *state;
	const char *prom;
	bool fix, set_aside;
	/* --fix=CODE,...: only these codes are repaired; all of them with --fix. */
	bool fix_some;
	bool fix_code[CC_AUDIT_NCODES];
	int sample_ms;
	int max_tasks;
	char state_buf[PATH_MAX];
	struct cc_cli_lock lock;
};

static int parse_int(const char *opt, const char *s, int max, int *out, struct cc_err *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > max)
		return cc_err_set(err, EINVAL, "%s: expected an integer from 0 to %d, got \"%.32s\"", opt, max, s);
	*out = (int)v;
	return 0;
}

/* --fix=CODE,...: finding codes as docs/audit.md names them.  Repeating
 * the option adds to the list. */
static int parse_codes(const char *list, struct opts *o, struct cc_err *err)
{
	_cleanup_free_ char *copy = strdup(list);
	char *save = NULL;
	int n = 0;

	if (!copy)
		return cc_err_sys(err, ENOMEM, "audit");
	/* A schedule's switch set to report only (AUTOFIX=none). */
	if (!strcmp(list, "none")) {
		o->fix = o->fix_some = false;
		memset(o->fix_code, 0, sizeof(o->fix_code));
		return 0;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int c = cc_audit_code_parse(tok);

		if (c < 0)
			return cc_err_set(err, EINVAL,
					  "--fix: unknown finding code \"%.64s\" (the codes are in docs/audit.md, e.g. QUOTA_ON_CARVE)",
					  tok);
		o->fix_code[c] = true;
		n++;
	}
	if (!n)
		return cc_err_set(err, EINVAL, "--fix=: expected finding codes, e.g. --fix=QUOTA_ON_CARVE");
	o->fix = o->fix_some = true;
	return 0;
}

static bool fixes(const struct opts *o, enum cc_audit_code c)
{
	return o->fix && (!o->fix_some || o->fix_code[c]);
}

/* The findings --fix=CODE,... repairs, copied out of `r`. */
static int selected(const struct opts *o, const struct cc_audit_report *r, struct cc_audit_report *out,
		    struct cc_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!r->n)
		return 0;
	out->f = calloc((size_t)r->n, sizeof(*out->f));
	if (!out->f)
		return cc_err_sys(err, ENOMEM, "audit");
	out->cap = r->n;
	for (int i = 0; i < r->n; i++)
		if (fixes(o, r->f[i].code))
			out->f[out->n++] = r->f[i];
	return 0;
}

static bool fixes_vms(const struct opts *o)
{
	static const enum cc_audit_code vm[] = { CC_AUDIT_VM_MIXED_CLASSES, CC_AUDIT_VM_SHARED_CPU, CC_AUDIT_VM_DRIFT,
						 CC_AUDIT_VM_GONE };

	for (size_t i = 0; i < sizeof(vm) / sizeof(vm[0]); i++)
		if (fixes(o, vm[i]))
			return true;
	return false;
}

enum { OPT_FIX = 1, OPT_SET_ASIDE, OPT_STATE, OPT_PROMETHEUS, OPT_SAMPLE_MS, OPT_MAX_THREADS };

const struct cc_opt cc_opts_audit[] = {
	{ "--fix", NULL, NULL, OPT_FIX, CC_OPT_OPTIONAL_VALUE, NULL },
	{ "--set-aside-ledger", NULL, NULL, OPT_SET_ASIDE, 0, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	{ "--prometheus", NULL, "FILE.prom", OPT_PROMETHEUS, 0, NULL },
	{ "--sample-ms", NULL, "N", OPT_SAMPLE_MS, 0, NULL },
	{ "--max-threads", NULL, "N", OPT_MAX_THREADS, 0, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(CC_CLI_REFUSED, NULL),
	CC_CLI_OPTS_TABLE(NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	o->sample_ms = SAMPLE_DEFAULT_MS;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_audit, NULL, argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_FIX:
			if (!v)
				o->fix = true;
			else if (parse_codes(v, o, err) < 0)
				return -1;
			break;
		case OPT_SET_ASIDE:
			o->set_aside = true;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		case OPT_PROMETHEUS:
			o->prom = v;
			break;
		case OPT_SAMPLE_MS:
			if (parse_int("--sample-ms", v, SAMPLE_MAX_MS, &o->sample_ms, err) < 0)
				return -1;
			break;
		case OPT_MAX_THREADS:
			if (parse_int("--max-threads", v, 1 << 22, &o->max_tasks, err) < 0)
				return -1;
			if (o->max_tasks < 1)
				return cc_err_set(err, EINVAL, "--max-threads: expected at least 1, got %d", o->max_tasks);
			break;
		default:
			if ((r = cc_table_set(&o->table, id, v, err)) < 0)
				return -1;
			if (!r && !cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL, "audit: unexpected argument \"%s\" (see corecarve audit --help)", v);
		}
	}
	if (o->common.xml || o->common.synthetic)
		return cc_err_set(err, EINVAL, "audit: --hwloc-xml and --synthetic describe no kernel to audit; use --root");
	if (o->fix && o->common.root && strcmp(o->common.root, "/"))
		return cc_err_set(err, EINVAL, "audit: --fix changes the running kernel; it cannot act on --root %s",
				  o->common.root);
	if (o->prom && !*o->prom)
		return cc_err_set(err, EINVAL, "--prometheus: empty file name");
	/* node_exporter's textfile collector reads only *.prom: any other
	 * name would be written faithfully and never scraped. */
	if (o->prom && (strlen(o->prom) < 6 || strcmp(o->prom + strlen(o->prom) - 5, ".prom") ||
			o->prom[strlen(o->prom) - 6] == '/'))
		return cc_err_set(err, EINVAL,
				  "--prometheus %s: node_exporter's textfile collector reads only files named *.prom; "
				  "name it e.g. corecarve.prom in its --collector.textfile.directory",
				  o->prom);
	if (o->set_aside && (o->fix || o->prom || o->common.json || o->common.root))
		return cc_err_set(err, EINVAL, "audit: --set-aside-ledger acts on this host's ledger alone: "
					       "--fix, --prometheus, --json and --root do not go with it");
	return cc_cli_lock(&o->lock, argc, argv, err);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The carves the snapshot was indexed with are still the ledger's. */
static bool same_carves(const struct cc_ledger *a, const struct cc_ledger *b)
{
	const struct cc_carve *x;

	if (cc_ledger_ncarves(a) != cc_ledger_ncarves(b))
		return false;
	cc_ledger_foreach_carve(a, i, x) {
		const struct cc_carve *y = cc_ledger_carve_at(b, i);

		if (strcmp(x->id, y->id) || strcmp(x->cgroup, y->cgroup) || !hwloc_bitmap_isequal(x->cpus, y->cpus))
			return false;
	}
	return true;
}

/* Read the node and run the checks.  Without the ledger lock (a plain
 * audit), a hook may carve or release while the tree is read: a partition
 * not yet committed would look unknown, a cgroup just removed stale.  The
 * ledger is read again afterwards and the audit repeated when it moved. */
static int audit(const struct opts *o, const struct cc_root *root, struct cc_ledger **lp,
		 const struct cc_topo *topo, const struct cc_policy *policy, struct cc_audit_report *rep,
		 struct cc_audit_stats *st, struct cc_err *err)
{
	struct cc_audit_read_opts ro = { .sample_ms = o->sample_ms, .max_tasks = o->max_tasks };

	for (int attempt = 0;; attempt++) {
		struct cc_audit_snap snap;
		struct cc_audit_in in;
		double t0 = now_ms(), t1;
		int rc;

		if (cc_audit_snap_read(root, *lp, &ro, &snap, err) < 0)
			return -1;
		t1 = now_ms();
		in = (struct cc_audit_in){ *lp, topo, policy, &snap };
		cc_audit_report_fini(rep);
		rc = cc_audit_run(&in, rep, err);
		memset(st, 0, sizeof(*st));
		cc_audit_stats_fill(st, *lp, &snap);
		st->read_ms = t1 - t0;
		st->check_ms = now_ms() - t1;
		st->finished = (long long)time(NULL);
		cc_audit_snap_fini(&snap);
		if (rc < 0)
			return -1;
		if (!cc_ledger_readonly(*lp) || attempt + 1 >= READ_TRIES)
			return 0;
		{
			struct cc_ledger *again = cc_ledger_open_as(o->state, CC_LEDGER_READ, &o->lock.lock, err);

			if (!again)
				return -1;
			if (same_carves(*lp, again)) {
				cc_ledger_close(again);
				return 0;
			}
			cc_ledger_close(*lp);
			*lp = again;
		}
	}
}

/* The people's table, one finding per row; "no findings" when clean. */
static int print_table(FILE *out, const struct cc_audit_report *r, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_table_ struct cc_table *t = NULL;

	if (r->n == 0) {
		fprintf(out, "no findings\n");
		return 0;
	}
	if (!(t = cc_table_new(cols, NCOLS, COLS_DEFAULT, o, err)))
		return -1;
	for (int i = 0; i < r->n; i++) {
		const struct cc_finding *f = &r->f[i];
		char id[13];

		snprintf(id, sizeof(id), "%.12s", f->carve[0] ? f->carve : "-");
		if (cc_table_row(t,
				 (const char *[]){ cc_audit_code_name(f->code), cc_audit_severity_name(f->severity), id,
						   f->object, f->expected, f->actual, f->fix, cc_audit_repair_name(f->repair) },
				 err) < 0)
			return -1;
	}
	return cc_table_print(t, out, err);
}

static void summary(FILE *out, const struct cc_audit_report *r, const struct cc_audit_stats *st)
{
	int critical = 0;

	for (int i = 0; i < r->n; i++)
		critical += r->f[i].severity == CC_AUDIT_CRITICAL;
	fprintf(out, "audit: %d finding%s (%d critical); %d carve%s, %d carved CPUs; read %d cgroups, %d tasks, %d IRQs "
		     "in %.1f ms%s, checked in %.1f ms",
		r->n, r->n == 1 ? "" : "s", critical, st->carves, st->carves == 1 ? "" : "s", st->carved_cpus, st->cgroups,
		st->tasks, st->irqs, st->read_ms, st->sample_ms ? " (with the IRQ sample)" : "", st->check_ms);
	if (st->lock_ms > 0)
		fprintf(out, "; held the ledger lock %.1f ms to repair", st->lock_ms);
	fprintf(out, "\n");
}

static int print_json(const struct cc_audit_report *found, const struct cc_audit_report *left,
		      const struct cc_audit_stats *st, const struct cc_audit_fix_result *fixed, int skipped,
		      struct cc_err *err)
{
	_cleanup_json_ json_t *doc = json_pack("{s:i, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f}", "schema_version",
					       1, "clean", left->n == 0, "carves", st->carves, "carved_cpus",
					       st->carved_cpus, "cgroups", st->cgroups, "tasks", st->tasks, "irqs",
					       st->irqs, "sample_ms", st->sample_ms, "read_ms", st->read_ms, "check_ms",
					       st->check_ms, "lock_held_ms", st->lock_ms);
	json_t *arr;

	if (!doc)
		return cc_err_sys(err, ENOMEM, "audit");
	arr = cc_audit_findings_json(left, err);
	if (!arr || json_object_set_new(doc, "findings", arr) < 0)
		return -1;
	if (fixed) {
		arr = cc_audit_findings_json(found, err);
		if (!arr || json_object_set_new(doc, "found", arr) < 0 ||
		    json_object_set_new(doc, "repaired", json_integer(fixed->repaired)) < 0 ||
		    json_object_set_new(doc, "repairs_failed", json_integer(fixed->failed)) < 0 ||
		    json_object_set_new(doc, "manual", json_integer(fixed->manual)) < 0 ||
		    json_object_set_new(doc, "not_selected", json_integer(skipped)) < 0)
			return cc_err_sys(err, ENOMEM, "audit");
	}
	if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
		return cc_err_sys(err, EIO, "audit: write");
	fputc('\n', stdout);
	return 0;
}

static int fail(const struct opts *o, struct cc_err *err)
{
	struct cc_audit_report none = { 0 };
	struct cc_audit_stats st = { .finished = (long long)time(NULL) };
	struct cc_err ignored = CC_ERR_INIT;

	/* The metrics say the audit could not run, so an alert can fire. */
	if (o->prom)
		cc_prom_write(o->prom, &none, &st, false, &ignored);
	if (o->common.json) {
		_cleanup_json_ json_t *doc = json_pack("{s:s}", "error", err->msg);

		if (doc && json_dumpf(doc, stdout, JSON_INDENT(2)) == 0)
			fputc('\n', stdout);
	}
	return cc_cli_fail(err);
}

/* The VMs' findings (vm status), and with --fix a vm reconcile.  The VM
 * module takes the ledger lock itself, so the audit's own ledger (and its
 * lock, held under --fix) is let go first: the VM part is a second,
 * separately locked step. */
static int vm_part(const struct opts *o, const struct cc_root *root, struct cc_ledger **lp,
		   struct cc_audit_report *found, struct cc_audit_report *left, FILE *log, struct cc_err *err)
{
	struct cc_ctx ctx = { .root = root, .policy_path = cc_cli_policy_path(&o->common),
			      .state_dir = o->state, .log = log };
	struct cc_vm_opts vo = { 0 };
	struct cc_vm_result res;
	struct cc_vm_finding *f = NULL;
	int n = 0, rc;

	cc_ledger_close(*lp);
	*lp = NULL;
	rc = cc_vm_status(&ctx, &vo, &res, &f, &n, err);
	cc_vm_result_fini(&res);
	if (rc < 0) {
		free(f);
		return cc_err_prefix(err, "VMs");
	}
	rc = cc_audit_add_vm(fixes_vms(o) && n ? found : left, f, n, err);
	free(f);
	if (rc < 0 || !fixes_vms(o) || !n)
		return rc;
	f = NULL;
	n = 0;
	rc = cc_vm_reconcile(&ctx, &vo, &res, err);
	if (rc == 0)
		fprintf(log, "vm reconcile: %d change%s made\n", res.applied, res.applied == 1 ? "" : "s");
	cc_vm_result_fini(&res);
	if (rc < 0)
		return cc_err_prefix(err, "vm reconcile");
	rc = cc_vm_status(&ctx, &vo, &res, &f, &n, err);
	cc_vm_result_fini(&res);
	if (rc == 0)
		rc = cc_audit_add_vm(left, f, n, err);
	free(f);
	return rc;
}

/* The repairs under the hooks' lock, taken only now: the ledger is read
 * again under it, and the node audited again there (into `relocked`)
 * should a hook have moved the carves since the audit without the lock;
 * the repairs then run (each revalidates what it changes, audit_fix.c)
 * and are committed.  The lock goes before the audit after the repair:
 * `*lp` is then a read-only ledger again.  *held_ms: how long it was held. */
static int repair_locked(const struct opts *o, const struct cc_root *root, struct cc_ledger **lp,
			 const struct cc_topo *topo, const struct cc_policy *policy, const struct cc_audit_report *found,
			 struct cc_audit_fix_result *fixed, struct cc_err *fix_err, int *skipped, FILE *log,
			 double *held_ms, struct cc_err *err)
{
	struct cc_audit_report sel = { 0 }, relocked = { 0 };
	struct cc_audit_stats st;
	struct cc_audit_fix_ctx fx;
	struct cc_ledger *locked;
	double t0;
	int rc = -1;

	locked = cc_cli_ledger_open(o->state, CC_LEDGER_WRITE, &o->lock.lock, err);
	if (!locked)
		return -1;
	t0 = now_ms();
	if (!same_carves(*lp, locked)) {
		/* One audit under the lock: nothing moves under it now. */
		if (audit(o, root, &locked, topo, policy, &relocked, &st, err) < 0)
			goto out;
		found = &relocked;
	}
	if (selected(o, found, &sel, err) < 0)
		goto out;
	fx = (struct cc_audit_fix_ctx){ .root = root, .ledger = locked, .topo = topo, .policy = policy, .out = log };
	if (sel.n)
		cc_audit_fix(&fx, &sel, fixed, fix_err);
	*skipped = found->n - sel.n;
	rc = cc_ledger_commit(locked, err);
out:
	cc_audit_report_fini(&sel);
	cc_audit_report_fini(&relocked);
	cc_ledger_close(locked);
	*held_ms = now_ms() - t0;
	if (rc == 0) {
		cc_ledger_close(*lp);
		*lp = cc_cli_ledger_open(o->state, CC_LEDGER_READ, &o->lock.lock, err);
		if (!*lp)
			rc = -1;
	}
	return rc;
}

/* --fix: show what was found, repair the findings --fix=... selects
 * (into *fixed, a repair's failure into fix_err: the others still run)
 * under the lock, and audit again, without it, into `left`. */
static int fix_part(const struct opts *o, const struct cc_root *root, struct cc_ledger **lp,
		    const struct cc_topo *topo, const struct cc_policy *policy, const struct cc_audit_report *found,
		    struct cc_audit_report *left, struct cc_audit_stats *st, struct cc_audit_fix_result *fixed,
		    struct cc_err *fix_err, int *skipped, FILE *log, struct cc_err *err)
{
	double held = 0;
	int n = 0;

	if (!o->common.json) {
		fprintf(log, "found:\n");
		if (print_table(log, found, &o->table, err) < 0)
			return -1;
		fprintf(log, "\n");
	}
	for (int i = 0; i < found->n; i++)
		n += fixes(o, found->f[i].code);
	/* Nothing --fix=... repairs: the lock is never taken. */
	if (!n)
		*skipped = found->n;
	else if (repair_locked(o, root, lp, topo, policy, found, fixed, fix_err, skipped, log, &held, err) < 0)
		return -1;
	if (audit(o, root, lp, topo, policy, left, st, err) < 0)
		return -1;
	st->lock_ms = held;
	if (!o->common.json)
		fprintf(log, "\n%d repaired, %d failed, %d left to a person; after repair:\n", fixed->repaired,
			fixed->failed, fixed->manual);
	if (!o->common.json && *skipped)
		fprintf(log, "(%d finding%s not repaired: their codes are not in --fix=...)\n", *skipped,
			*skipped == 1 ? "" : "s");
	return 0;
}

/* --prometheus: the findings left and each class's CPUs by state.  The
 * ledger went to the VM part: capacity reads it again, into *lp. */
static int prom_part(const struct opts *o, const struct cc_topo *topo, const struct cc_policy *policy,
		     struct cc_ledger **lp, const struct cc_audit_report *left, struct cc_audit_stats *st,
		     struct cc_err *err)
{
	struct cc_capacity *cap = NULL;
	int ncap = 0, r;

	if (!(*lp = cc_cli_ledger_open(o->state, CC_LEDGER_READ, &o->lock.lock, err)) ||
	    cc_capacity_compute(topo, policy, *lp, &cap, &ncap, err) < 0)
		return -1;
	st->capacity = cap;
	st->ncapacity = ncap;
	r = cc_prom_write(o->prom, left, st, true, err);
	free(cap);
	st->capacity = NULL;
	return r;
}

int cc_cmd_audit(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	struct cc_audit_report found = { 0 }, left = { 0 };
	struct cc_audit_stats st = { 0 };
	struct cc_audit_fix_result fixed = { 0 };
	struct cc_err fix_err = CC_ERR_INIT;
	FILE *log = stdout;
	int r, rc = CC_EXIT_ERROR, skipped = 0;

	r = parse(argc, argv, &o, &err);
	if (r > 0)
		return CC_EXIT_OK;
	if (r < 0)
		return cc_cli_fail(&err);
	/* A wrong state directory is an audit that could not run: the
	 * metrics say so (success 0). */
	if (cc_cli_state_dir(o.state, o.common.root, o.state_buf, sizeof(o.state_buf), &o.state, &err) < 0)
		return fail(&o, &err);
	if (o.set_aside) {
		char saved[PATH_MAX + 64];

		if (cc_ledger_set_aside(o.state, &o.lock.lock, saved, sizeof(saved), &err) < 0)
			return cc_cli_fail(&err);
		printf("ledger set aside as %s: hooks start an empty ledger; what it recorded is not undone.\n"
		       "The carves still in the kernel follow (UNKNOWN_CARVE, LEDGER_MISSING): fix each as it says,\n"
		       "or stop those containers and reboot.\n\n",
		       saved);
	}
	/* Before the ledger, the cgroup tree and /proc (or a --root tree) are
	 * read.  --fix's VM part may restart irqbalance (vm reconcile): its
	 * helper is forked first. */
	if ((o.fix && cc_irqbalance_restart_helper(&err) < 0) || cc_sandbox_audit(&err) < 0)
		return fail(&o, &err);
	/* The node is read without the hooks' lock, --fix too: topology
	 * discovery, the cgroup walk, every thread of every cgroup under a
	 * quota and the IRQ sample take seconds, and every hook would wait
	 * behind them (issue #31).  Only a repair takes the lock
	 * (repair_locked). */
	ledger = cc_cli_ledger_open(o.state, CC_LEDGER_READ, &o.lock.lock, &err);
	if (!ledger || cc_cli_load(&o.common, &root, &policy, &topo, &err) < 0)
		return fail(&o, &err);
	if (audit(&o, root, &ledger, topo, policy, &found, &st, &err) < 0)
		goto out;
	if (o.fix && found.n) {
		/* With --json the changes go to stderr, so stdout stays one document. */
		log = o.common.json ? stderr : stdout;
		if (fix_part(&o, root, &ledger, topo, policy, &found, &left, &st, &fixed, &fix_err, &skipped, log,
			     &err) < 0)
			goto out;
	} else {
		left = found;
		memset(&found, 0, sizeof(found));
	}
	if (vm_part(&o, root, &ledger, &found, &left, log, &err) < 0)
		goto out;
	if (o.common.json) {
		if (print_json(&found, &left, &st, o.fix ? &fixed : NULL, skipped, &err) < 0)
			goto out;
	} else {
		if (print_table(stdout, &left, &o.table, &err) < 0)
			goto out;
		summary(stdout, &left, &st);
	}
	if (o.prom && prom_part(&o, topo, policy, &ledger, &left, &st, &err) < 0)
		goto out;
	if (cc_err_isset(&fix_err))
		fprintf(stderr, "corecarve: audit --fix: %s\n", fix_err.msg);
	rc = left.n ? CC_EXIT_REFUSED : CC_EXIT_OK;
out:
	cc_audit_report_fini(&found);
	cc_audit_report_fini(&left);
	if (rc == CC_EXIT_ERROR)
		return fail(&o, &err);
	return rc;
}
