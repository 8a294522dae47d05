/* corecarve plan: what the allocator would carve for a request, and why.
 * Reads the topology, the policy and (read-only) the ledger; changes
 * nothing. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "ledger.h"
#include "power.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve plan --class NAME --cpus N [--smt isolate|full] [--memory local|spread|any]\n"
		"                      [--irq steer-away|leave] [--root DIR | --hwloc-xml FILE | --synthetic DESC]\n"
		"                      [--policy FILE] [--state DIR] [--json]\n\n"
		"Show which CPUs a container of placement class NAME asking for N CPUs would get, the\n"
		"parked SMT siblings, the memory nodes, and why.  Changes nothing.\n\n"
		"CPUs already carved are read from the ledger in --state DIR, else $CORECARVE_STATE_DIR,\n"
		"else " CC_LEDGER_DIR " (that default only when looking at this host, not with --root,\n"
		"--hwloc-xml or --synthetic).  --smt, --memory and --irq override the class, as the\n"
		"annotation's keys do, and only where the class lets an annotation set them\n"
		"(annotationMaySet): plan refuses the rest as the hook would.\n\n"
		"exit status: 0 planned, 1 refused for lack of capacity, 2 bad input (including a request\n"
		"the policy or topology cannot express, such as an unknown class)\n");
}

/* This command's own options, in the order cc_cmd_plan's switch uses. */
static const char *const own[] = { "--class", "--cpus", "--state", "--smt", "--memory", "--irq" };

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

static void print_text(const struct cc_decision *d, const struct context *cx, const struct cc_policy *p,
		       const char *ledger_dir)
{
	_cleanup_free_ char *cpus = fmt(d->cpus), *parked = fmt(d->parked), *mems = fmt(d->mems);
	_cleanup_free_ char *res = fmt(cx->reserved), *taken = fmt(cx->taken);
	int n = hwloc_bitmap_weight(d->cpus);

	if (d->exclusive)
		printf("class %s: carve %d CPU%s on %s cores%s\n", d->class_name, n, n == 1 ? "" : "s", d->core_class,
		       d->fell_back ? " (fallback)" : "");
	else
		printf("class %s: no carve; runs on the shared %s pool (%d CPU%s)\n", d->class_name, d->core_class, n,
		       n == 1 ? "" : "s");
	printf("  cpus      %s\n", cpus);
	if (d->exclusive)
		printf("  parked    %s%s\n", *parked ? parked : "(none)",
		       d->smt == CC_SMT_ISOLATE && *parked ? "  (SMT siblings held idle)" : "");
	printf("  mems      %s\n", *mems ? mems : "(left as is: no NUMA information)");
	printf("  spans     %d NUMA node%s, %d LLC%s, %d L2%s\n", d->numa_nodes, d->numa_nodes == 1 ? "" : "s", d->llcs,
	       d->llcs == 1 ? "" : "s", d->l2s, d->l2s == 1 ? "" : "s");
	printf("  settings  %s, smt %s, memory %s, irq %s, partition %s, quota %s\n",
	       d->exclusive ? "exclusive" : "shared", cc_smt_name(d->smt), cc_memory_name(d->memory), cc_irq_name(d->irq),
	       cc_partition_name(d->partition), cc_quota_name(d->quota));
	printf("  why       %s: %d core%s, %d with reserved CPUs, %d taken, %d free (%s); shared pool %d CPU%s, minShared %d\n",
	       d->core_class, cx->cores, cx->cores == 1 ? "" : "s", cx->reserved_cores, cx->taken_cores, cx->free_cores,
	       cx->free_list[0] ? cx->free_list : "none", cx->pool, cx->pool == 1 ? "" : "s", p->min_shared);
	printf("  reserved  %s\n", *res ? res : "(none)");
	printf("  taken     %s%s%s%s\n", *taken ? taken : "(none)", ledger_dir ? " (ledger " : " (no ledger read)",
	       ledger_dir ? ledger_dir : "", ledger_dir ? ")" : "");
	for (int i = 0; cx->has_power && i < cx->power.n; i++)
		printf("  power     %s: %s -> %s\n", cx->power.steps[i].path, cx->power.steps[i].from,
		       cx->power.steps[i].to);
	if (cx->has_power && !cx->power.n)
		printf("  power     nothing to write\n");
	for (int i = 0; cx->has_power && i < cx->power.msgs.nnotes; i++)
		printf("  note      %s\n", cx->power.msgs.notes[i]);
	for (int i = 0; i < d->nwarnings; i++)
		printf("  warning   %s\n", d->warnings[i]);
	for (int i = 0; cx->has_power && i < cx->power.msgs.nwarnings; i++)
		printf("  warning   %s\n", cx->power.msgs.warnings[i]);
	printf("nothing was changed\n");
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

int cc_cmd_plan(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	struct cc_request req;
	struct cc_decision d;
	struct context cx = { 0 };
	struct cc_cli_lock lock;
	const char *cls = NULL, *cpus = NULL, *state = NULL, *ledger_dir = NULL;
	bool host;
	int rc;

	memset(&req, 0, sizeof(req));
	/* Planned as the annotation would be asked for, so an override the
	 * class does not grant is refused here with the hook's words. */
	snprintf(req.annotation, sizeof(req.annotation), "%s", CC_ANNOTATION_KEY);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		int r, e;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return CC_EXIT_OK;
		}
		r = cc_cli_common_opt(&common, argc, argv, &i, &err);
		if (r < 0)
			return cc_cli_fail(&err);
		if (r > 0)
			continue;
		size_t k;

		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
			size_t n = strlen(own[k]);

			if (!strncmp(a, own[k], n) && a[n] == '=') {
				v = a + n + 1;
				break;
			}
			if (!strcmp(a, own[k])) {
				if (i + 1 >= argc) {
					cc_err_set(&err, EINVAL, "%s: missing argument", own[k]);
					return cc_cli_fail(&err);
				}
				v = argv[++i];
				break;
			}
		}
		switch (k) {
		case 0:
			cls = v;
			break;
		case 1:
			cpus = v;
			break;
		case 2:
			state = v;
			break;
		case 3:
			if (parse_enum("--smt", v, smt_name, 2, &e, &err) < 0)
				return cc_cli_fail(&err);
			req.has_smt = true;
			req.smt = (enum cc_smt)e;
			break;
		case 4:
			if (parse_enum("--memory", v, memory_name, 3, &e, &err) < 0)
				return cc_cli_fail(&err);
			req.has_memory = true;
			req.memory = (enum cc_memory)e;
			break;
		case 5:
			if (parse_enum("--irq", v, irq_name, 2, &e, &err) < 0)
				return cc_cli_fail(&err);
			req.has_irq = true;
			req.irq = (enum cc_irq)e;
			break;
		default:
			cc_err_set(&err, EINVAL, "plan: unexpected argument \"%s\" (see corecarve plan --help)", a);
			return cc_cli_fail(&err);
		}
	}
	if (!cls || !cpus) {
		cc_err_set(&err, EINVAL, "plan: --class and --cpus are required (see corecarve plan --help)");
		return cc_cli_fail(&err);
	}
	if (strlen(cls) >= sizeof(req.class_name)) {
		cc_err_set(&err, EINVAL, "--class: name longer than %zu bytes", sizeof(req.class_name) - 1);
		return cc_cli_fail(&err);
	}
	snprintf(req.class_name, sizeof(req.class_name), "%s", cls);
	if (parse_count(cpus, &req.cpus, &err) < 0 || cc_cli_lock(&lock, argc, argv, &err) < 0)
		return cc_cli_fail(&err);

	if (cc_cli_load(&common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);

	/* The host's ledger describes the host: never apply it to a captured
	 * tree, an XML export or a synthetic shape unless asked to. */
	host = !common.xml && !common.synthetic && (!common.root || root->is_host);
	if (!state || !*state)
		state = getenv("CORECARVE_STATE_DIR");
	if (state && *state)
		ledger_dir = state;
	else if (host)
		ledger_dir = CC_LEDGER_DIR;
	cx.reserved = cc_policy_reserved(policy, topo);
	if (ledger_dir) {
		ledger = cc_ledger_open_as(ledger_dir, CC_LEDGER_READ, &lock.lock, &err);
		if (!ledger) {
			context_fini(&cx);
			return cc_cli_fail(&err);
		}
		cx.taken = cc_ledger_taken(ledger);
	} else {
		cx.taken = hwloc_bitmap_alloc();
	}
	if (!cx.reserved || !cx.taken) {
		context_fini(&cx);
		cc_err_set(&err, ENOMEM, "plan: out of memory");
		return cc_cli_fail(&err);
	}

	if (cc_allocate(topo, policy, cx.taken, &req, &d, &err) < 0) {
		context_fini(&cx);
		return refuse(&err, common.json);
	}
	rc = context_fill(topo, &d, &cx, &err);
	/* Power files exist only in a real sysfs: the host or a --root tree. */
	if (rc == 0 && !common.xml && !common.synthetic)
		rc = plan_power(root, ledger, policy, &d, &cx, &err);
	if (rc == 0) {
		if (common.json)
			rc = print_json(&d, &cx, policy);
		else
			print_text(&d, &cx, policy, ledger_dir);
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
