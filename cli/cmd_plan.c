/* corecarve plan: what the allocator would carve for a request, and why.
 * Reads the topology, the policy and (read-only) the ledger; changes
 * nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "ledger.h"
#include "power.h"
#include "table.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve plan --class NAME --cpus N [--smt isolate|full] [--memory local|spread|any]\n"
		"                      [--irq steer-away|leave] [--root DIR | --hwloc-xml FILE | --synthetic DESC]\n"
		"                      [--policy FILE] [--state DIR] [--json] [--explain] [--raw] [--width N]\n\n"
		"Show which CPUs a container of placement class NAME asking for N CPUs would get, the\n"
		"parked SMT siblings, the memory nodes, and why.  Changes nothing.\n\n"
		"CPUs already carved are read from the ledger in --state DIR, else $CORECARVE_STATE_DIR,\n"
		"else " CC_LEDGER_DIR " (that default only when looking at this host, not with --root,\n"
		"--hwloc-xml or --synthetic).  --smt, --memory and --irq override the class, as the\n"
		"annotation's keys do, and only where the class lets an annotation set them\n"
		"(annotationMaySet): plan refuses the rest as the hook would.  --explain adds what the\n"
		"carve avoids on this node, in the numbers of its baseline (corecarve calibrate).\n"
		"--raw separates the two columns by one space; --width N lays them out for N columns.\n\n"
		"exit status: 0 planned, 1 refused for lack of capacity, 2 bad input (including a request\n"
		"the policy or topology cannot express, such as an unknown class)\n");
}

static int parse_count(const char *s, int *out, struct cc_err *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > INT_MAX)
		return cc_err_set(err, EINVAL, "--cpus: expected a non-negative integer, got \"%s\"", s);
	*out = (int)v;
	return 0;
}

/* Match `s` against the names an enum prints as. */
static int parse_enum(const char *opt, const char *s, const char *(*name)(int), int n, int *out, struct cc_err *err)
{
	char choices[256] = "";
	size_t off = 0;

	for (int v = 0; v < n; v++) {
		if (!strcmp(s, name(v))) {
			*out = v;
			return 0;
		}
		off += (size_t)snprintf(choices + off, sizeof(choices) - off, "%s%s", v ? ", " : "", name(v));
	}
	return cc_err_set(err, EINVAL, "%s: expected one of %s, got \"%s\"", opt, choices, s);
}

static const char *smt_name(int v)
{
	return cc_smt_name((enum cc_smt)v);
}

static const char *memory_name(int v)
{
	return cc_memory_name((enum cc_memory)v);
}

static const char *irq_name(int v)
{
	return cc_irq_name((enum cc_irq)v);
}

/* What the class looked like before the carve: the "why" of the plan. */
struct context {
	hwloc_bitmap_t reserved, taken;
	int cores, free_cores, reserved_cores, taken_cores, pool;
	char free_list[512];
	bool has_power;             /* the class has power settings and the node's sysfs was probed */
	struct cc_power_plan power; /* what the hook would write, and its warnings */
};

static void context_fini(struct context *c)
{
	hwloc_bitmap_free(c->reserved);
	hwloc_bitmap_free(c->taken);
	if (c->has_power)
		cc_power_plan_fini(&c->power);
}

/* The class's power settings as the hook would apply them now: probed on
 * the node's sysfs and planned against the ledger's records (read only). */
static int plan_power(const struct cc_root *root, const struct cc_ledger *l, const struct cc_policy *p,
		      const struct cc_decision *d, struct context *cx, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(p, d->class_name);
	_cleanup_bitmap_ hwloc_bitmap_t cores = hwloc_bitmap_dup(d->cpus);
	struct cc_noderecs st;
	struct cc_power_targets t;
	int rc;

	if (!pc || cc_power_spec_empty(&pc->power) || !d->exclusive)
		return 0;
	if (!cores)
		return cc_err_sys(err, ENOMEM, "plan");
	hwloc_bitmap_or(cores, cores, d->parked);
	cc_noderecs_init(&st);
	if (l && cc_power_recs_load(l, &st, err) < 0)
		return -1;
	if (cc_power_probe(root, &pc->power, d->cpus, cores, &t, err) < 0) {
		cc_noderecs_fini(&st);
		return cc_err_prefix(err, "plan: power settings");
	}
	rc = cc_power_plan(&st, &t, "(plan)", &cx->power, err);
	cx->has_power = rc == 0;
	cc_power_targets_fini(&t);
	cc_noderecs_fini(&st);
	return rc;
}

static int context_fill(const struct cc_topo *t, const struct cc_decision *d, struct context *cx, struct cc_err *err)
{
	int cls = strcmp(d->core_class, "any") ? cc_topo_class_index(t, d->core_class) : -1;
	_cleanup_bitmap_ hwloc_bitmap_t free_pus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t usable = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;

	if (!free_pus || !usable || !pool)
		return cc_err_set(err, ENOMEM, "plan: out of memory");
	hwloc_bitmap_and(usable, t->online, t->allowed);
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if ((cls >= 0 && c->cls != cls) || !c->pus || c->npus <= 0)
			continue;
		cx->cores++;
		if (hwloc_bitmap_intersects(c->pus, cx->reserved))
			cx->reserved_cores++;
		else if (hwloc_bitmap_intersects(c->pus, cx->taken))
			cx->taken_cores++;
		else if (hwloc_bitmap_isincluded(c->pus, usable)) {
			cx->free_cores++;
			hwloc_bitmap_or(free_pus, free_pus, c->pus);
		}
	}
	hwloc_bitmap_copy(pool, usable);
	if (cls >= 0)
		hwloc_bitmap_and(pool, pool, t->classes[cls].cpus);
	hwloc_bitmap_andnot(pool, pool, cx->reserved);
	hwloc_bitmap_andnot(pool, pool, cx->taken);
	cx->pool = hwloc_bitmap_weight(pool);
	s = cc_cpulist_format(free_pus);
	snprintf(cx->free_list, sizeof(cx->free_list), "%s", s ? s : "?");
	return 0;
}

static char *fmt(hwloc_const_bitmap_t b)
{
	char *s = cc_cpulist_format(b);

	return s ? s : strdup("?");
}

static int print_json(const struct cc_decision *d, const struct context *cx, const struct cc_policy *p)
{
	_cleanup_json_ json_t *o = json_object(), *w = json_array();
	_cleanup_free_ char *cpus = fmt(d->cpus), *parked = fmt(d->parked), *mems = fmt(d->mems);
	_cleanup_free_ char *res = fmt(cx->reserved), *taken = fmt(cx->taken);

	if (!o || !w)
		return -1;
	for (int i = 0; i < d->nwarnings; i++)
		json_array_append_new(w, json_string(d->warnings[i]));
	json_object_set_new(o, "schema_version", json_integer(1));
	json_object_set_new(o, "class", json_string(d->class_name));
	json_object_set_new(o, "core_class", json_string(d->core_class));
	json_object_set_new(o, "fell_back", json_boolean(d->fell_back));
	json_object_set_new(o, "exclusive", json_boolean(d->exclusive));
	json_object_set_new(o, "smt", json_string(cc_smt_name(d->smt)));
	json_object_set_new(o, "memory", json_string(cc_memory_name(d->memory)));
	json_object_set_new(o, "irq", json_string(cc_irq_name(d->irq)));
	json_object_set_new(o, "partition", json_string(cc_partition_name(d->partition)));
	json_object_set_new(o, "quota", json_string(cc_quota_name(d->quota)));
	json_object_set_new(o, "cpus", json_string(cpus));
	json_object_set_new(o, "parked", json_string(parked));
	json_object_set_new(o, "mems", json_string(mems));
	json_object_set_new(o, "numa_nodes", json_integer(d->numa_nodes));
	json_object_set_new(o, "llcs", json_integer(d->llcs));
	json_object_set_new(o, "l2s", json_integer(d->l2s));
	json_object_set_new(o, "reserved", json_string(res));
	json_object_set_new(o, "taken", json_string(taken));
	json_object_set_new(o, "min_shared", json_integer(p->min_shared));
	if (cx->has_power) {
		json_t *pw = json_array();

		for (int i = 0; pw && i < cx->power.n; i++) {
			const struct cc_power_step *st = &cx->power.steps[i];

			json_array_append_new(pw, json_pack("{s:s,s:s,s:s,s:s}", "path", st->path, "setting",
							    cc_power_kind_name(st->kind), "from", st->from, "to", st->to));
		}
		json_object_set_new(o, "power", pw ? pw : json_null());
		for (int i = 0; i < cx->power.msgs.nwarnings; i++)
			json_array_append_new(w, json_string(cx->power.msgs.warnings[i]));
	}
	json_object_set(o, "warnings", w);
	if (json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return -1;
	putchar('\n');
	return 0;
}

/* One FIELD VALUE row; the value wraps to the terminal. */
static int row(struct cc_table *t, const char *field, struct cc_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int row(struct cc_table *t, const char *field, struct cc_err *err, const char *fmt, ...)
{
	_cleanup_free_ char *v = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (n < 0) {
		v = NULL;
		return cc_err_sys(err, ENOMEM, "plan");
	}
	return cc_table_row(t, (const char *[]){ field, v }, err);
}

static int print_text(const struct cc_decision *d, const struct context *cx, const struct cc_policy *p,
		      const struct cc_topo *topo, const char *ledger_dir, const struct cc_table_opts *o, struct cc_err *err)
{
	static const struct cc_table_col cols[] = { { "FIELD", 0, 0, NULL }, { "VALUE", 0.9, CC_COL_WRAP, NULL } };
	struct cc_table_opts to = { .noheadings = true, .raw = o->raw, .width = o->width };
	_cleanup_table_ struct cc_table *t = cc_table_new(cols, 2, "FIELD,VALUE", &to, err);
	_cleanup_free_ char *cpus = fmt(d->cpus), *parked = fmt(d->parked), *mems = fmt(d->mems);
	_cleanup_free_ char *res = fmt(cx->reserved), *taken = fmt(cx->taken);
	char rule[512], floor[256] = "";
	int n = hwloc_bitmap_weight(d->cpus), cls = cc_topo_class_index(topo, d->core_class), keep = 0;
	int rc = 0;

	if (!t)
		return -1;
	cc_policy_reserved_why(p, topo, rule, sizeof(rule));
	if (cls >= 0)
		keep = cc_alloc_shared_floor(topo, p, cls, floor, sizeof(floor));
	if (d->exclusive)
		printf("class %s: carve %d CPU%s on %s cores%s\n", d->class_name, n, n == 1 ? "" : "s", d->core_class,
		       d->fell_back ? " (fallback)" : "");
	else
		printf("class %s: no carve; runs on the shared %s pool (%d CPU%s)\n", d->class_name, d->core_class, n,
		       n == 1 ? "" : "s");
	rc |= row(t, "cpus", err, "%s", cpus);
	if (d->exclusive)
		rc |= row(t, "parked", err, "%s%s", *parked ? parked : "(none)",
			  d->smt == CC_SMT_ISOLATE && *parked ? "  (SMT siblings held idle)" : "");
	rc |= row(t, "mems", err, "%s", *mems ? mems : "(left as is: no NUMA information)");
	rc |= row(t, "spans", err, "%d NUMA node%s, %d LLC%s, %d L2%s", d->numa_nodes, d->numa_nodes == 1 ? "" : "s",
		  d->llcs, d->llcs == 1 ? "" : "s", d->l2s, d->l2s == 1 ? "" : "s");
	rc |= row(t, "settings", err, "%s, smt %s, memory %s, irq %s, partition %s, quota %s",
		  d->exclusive ? "exclusive" : "shared", cc_smt_name(d->smt), cc_memory_name(d->memory),
		  cc_irq_name(d->irq), cc_partition_name(d->partition), cc_quota_name(d->quota));
	rc |= row(t, "why", err, "%s: %d core%s, %d with reserved CPUs, %d taken, %d free (%s); shared pool %d CPU%s%s",
		  d->core_class, cx->cores, cx->cores == 1 ? "" : "s", cx->reserved_cores, cx->taken_cores,
		  cx->free_cores, cx->free_list[0] ? cx->free_list : "none", cx->pool, cx->pool == 1 ? "" : "s",
		  keep ? "" : ", no floor (no shared class runs there)");
	if (keep)
		rc |= row(t, "minShared", err, "%d kept in the %s pool for %s", keep, d->core_class, floor);
	rc |= row(t, "reserved", err, "%s (%s)", *res ? res : "(none)", rule);
	rc |= row(t, "taken", err, "%s%s%s%s", *taken ? taken : "(none)", ledger_dir ? " (ledger " : " (no ledger read)",
		  ledger_dir ? ledger_dir : "", ledger_dir ? ")" : "");
	for (int i = 0; cx->has_power && i < cx->power.n; i++)
		rc |= row(t, "power", err, "%s: %s -> %s", cx->power.steps[i].path, cx->power.steps[i].from,
			  cx->power.steps[i].to);
	if (cx->has_power && !cx->power.n)
		rc |= row(t, "power", err, "nothing to write");
	for (int i = 0; cx->has_power && i < cx->power.msgs.nnotes; i++)
		rc |= row(t, "note", err, "%s", cx->power.msgs.notes[i]);
	for (int i = 0; i < d->nwarnings; i++)
		rc |= row(t, "warning", err, "%s", d->warnings[i]);
	for (int i = 0; cx->has_power && i < cx->power.msgs.nwarnings; i++)
		rc |= row(t, "warning", err, "%s", cx->power.msgs.warnings[i]);
	if (rc || cc_table_print(t, stdout, err) < 0)
		return -1;
	printf("nothing was changed\n");
	return 0;
}

static int refuse(const struct cc_err *err, bool json)
{
	if (json) {
		_cleanup_json_ json_t *o = json_pack("{s:s}", "error", err->msg);

		if (o && json_dumpf(o, stdout, JSON_INDENT(2)) == 0)
			putchar('\n');
	}
	fprintf(stderr, "corecarve: %s\n", err->msg);
	return err->code == ENOSPC ? CC_EXIT_REFUSED : CC_EXIT_ERROR;
}

/* What the command line asks for.  `lock` holds a pointer into itself:
 * this struct stays where cc_cmd_plan put it. */
struct args {
	struct cc_cli_common common;
	struct cc_table_opts table;
	struct cc_request req;
	const char *state;
	bool explain;
	struct cc_cli_lock lock;
};

enum { OPT_CLASS = 1, OPT_CPUS, OPT_STATE, OPT_SMT, OPT_MEMORY, OPT_IRQ, OPT_EXPLAIN };

const struct cc_opt cc_opts_plan[] = {
	{ "--class", NULL, "NAME", OPT_CLASS, 0, NULL },
	{ "--cpus", NULL, "N", OPT_CPUS, 0, NULL },
	{ "--smt", NULL, "isolate|full", OPT_SMT, 0, NULL },
	{ "--memory", NULL, "local|spread|any", OPT_MEMORY, 0, NULL },
	{ "--irq", NULL, "steer-away|leave", OPT_IRQ, 0, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	{ "--explain", NULL, NULL, OPT_EXPLAIN, 0, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(0, NULL),
	/* The plan is a two-column table without headers: how it is laid
	 * out, not which columns. */
	{ "--raw", "-r", NULL, CC_CLI_OPT_RAW, 0, NULL },
	{ "--width", NULL, "N", CC_CLI_OPT_WIDTH, 0, NULL },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* A placement override (--smt, --memory, --irq) into the request, as the
 * annotation's key would set it. */
static int parse_override(int id, const char *v, struct args *a, struct cc_err *err)
{
	int e;

	switch (id) {
	case OPT_SMT:
		if (parse_enum("--smt", v, smt_name, 2, &e, err) < 0)
			return -1;
		a->req.has_smt = true;
		a->req.smt = (enum cc_smt)e;
		break;
	case OPT_MEMORY:
		if (parse_enum("--memory", v, memory_name, 3, &e, err) < 0)
			return -1;
		a->req.has_memory = true;
		a->req.memory = (enum cc_memory)e;
		break;
	case OPT_IRQ:
		if (parse_enum("--irq", v, irq_name, 2, &e, err) < 0)
			return -1;
		a->req.has_irq = true;
		a->req.irq = (enum cc_irq)e;
		break;
	}
	return 0;
}

/* argv into `a`, the request checked as far as it can be without the
 * policy.  1: --help was printed; -1 with err set. */
static int parse_args(int argc, char **argv, struct args *a, struct cc_err *err)
{
	const char *cls = NULL, *cpus = NULL;

	memset(&a->req, 0, sizeof(a->req));
	/* Planned as the annotation would be asked for, so an override the
	 * class does not grant is refused here with the hook's words. */
	snprintf(a->req.annotation, sizeof(a->req.annotation), "%s", CC_ANNOTATION_KEY);
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_plan, NULL, argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_EXPLAIN:
			a->explain = true;
			break;
		case OPT_CLASS:
			cls = v;
			break;
		case OPT_CPUS:
			cpus = v;
			break;
		case OPT_STATE:
			a->state = v;
			break;
		case OPT_SMT:
		case OPT_MEMORY:
		case OPT_IRQ:
			if (parse_override(id, v, a, err) < 0)
				return -1;
			break;
		default:
			if ((r = cc_table_set(&a->table, id, v, err)) < 0)
				return -1;
			if (!r && !cc_cli_common_set(&a->common, id, v))
				return cc_err_set(err, EINVAL, "plan: unexpected argument \"%s\" (see corecarve plan --help)", v);
		}
	}
	if (!cls || !cpus)
		return cc_err_set(err, EINVAL, "plan: --class and --cpus are required (see corecarve plan --help)");
	if (strlen(cls) >= sizeof(a->req.class_name))
		return cc_err_set(err, EINVAL, "--class: name longer than %zu bytes", sizeof(a->req.class_name) - 1);
	snprintf(a->req.class_name, sizeof(a->req.class_name), "%s", cls);
	if (parse_count(cpus, &a->req.cpus, err) < 0 || cc_cli_lock(&a->lock, argc, argv, err) < 0)
		return -1;
	return 0;
}

/* The CPUs the policy reserves and those the ledger records as carved,
 * into cx; the ledger, when one is read, stays open in *ledger for the
 * power plan.  *ledger_dir: the one read, NULL for none. */
static int read_taken(const struct args *a, const struct cc_root *root, const struct cc_policy *policy,
		      const struct cc_topo *topo, char *state_buf, size_t state_len, const char **ledger_dir,
		      struct cc_ledger **ledger, struct context *cx, struct cc_err *err)
{
	/* The host's ledger describes the host: never apply it to a captured
	 * tree, an XML export or a synthetic shape unless asked to. */
	bool host = !a->common.xml && !a->common.synthetic && (!a->common.root || root->is_host);

	/* --state or the variable, else this host's, else a captured tree's own. */
	if (cc_cli_state_dir(a->state, a->common.root, state_buf, state_len, ledger_dir, err) < 0)
		return -1;
	if (!*ledger_dir && host)
		*ledger_dir = CC_LEDGER_DIR;
	else if (*ledger_dir == state_buf && access(state_buf, F_OK) < 0)
		*ledger_dir = NULL; /* a tree without a ledger: nothing taken */
	cx->reserved = cc_policy_reserved(policy, topo);
	if (*ledger_dir) {
		*ledger = cc_cli_ledger_open(*ledger_dir, CC_LEDGER_READ, &a->lock.lock, err);
		if (!*ledger)
			return -1;
		cx->taken = cc_ledger_taken(*ledger);
	} else {
		cx->taken = hwloc_bitmap_alloc();
	}
	if (!cx->reserved || !cx->taken)
		return cc_err_set(err, ENOMEM, "plan: out of memory");
	return 0;
}

int cc_cmd_plan(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct args a = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	struct cc_decision d;
	struct context cx = { 0 };
	const char *ledger_dir = NULL;
	char state_buf[PATH_MAX];
	int rc;

	rc = parse_args(argc, argv, &a, &err);
	if (rc > 0)
		return CC_EXIT_OK;
	if (rc < 0)
		return cc_cli_fail(&err);

	if (cc_cli_load(&a.common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	if (read_taken(&a, root, policy, topo, state_buf, sizeof(state_buf), &ledger_dir, &ledger, &cx, &err) < 0) {
		context_fini(&cx);
		return cc_cli_fail(&err);
	}

	if (cc_allocate(topo, policy, cx.taken, &a.req, &d, &err) < 0) {
		context_fini(&cx);
		return refuse(&err, a.common.json);
	}
	rc = context_fill(topo, &d, &cx, &err);
	/* Power files exist only in a real sysfs: the host or a --root tree. */
	if (rc == 0 && !a.common.xml && !a.common.synthetic)
		rc = plan_power(root, ledger, policy, &d, &cx, &err);
	if (rc == 0) {
		if (a.common.json)
			rc = print_json(&d, &cx, policy);
		else
			rc = print_text(&d, &cx, policy, topo, ledger_dir, &a.table, &err);
		if (rc == 0 && a.explain && !a.common.json && d.exclusive)
			rc = cc_cli_plan_explain(&a.common, root, topo, d.cpus, d.parked);
	}
	cc_decision_fini(&d);
	context_fini(&cx);
	if (rc < 0) {
		if (!cc_err_isset(&err))
			cc_err_set(&err, EIO, "plan: cannot write the result");
		return cc_cli_fail(&err);
	}
	return CC_EXIT_OK;
}
