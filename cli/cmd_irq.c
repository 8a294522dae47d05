/* corecarve irq: where device interrupts go, and keeping them off carved
 * CPUs.  `status` reads (ledger snapshot, /proc/irq, two samples of
 * /proc/interrupts); `reconcile` steers IRQs that appeared since the carves
 * were made (a hot-plugged device, a new queue) and restores what no carve
 * needs, under the ledger lock. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "irq.h"
#include "irqbalance.h"
#include "ledger.h"
#include "sandbox.h"
#include "table.h"

#define SAMPLE_MS_DEFAULT 1000
#define SAMPLE_MS_MAX 60000

static const struct cc_table_col cols[] = {
	{ "IRQ", 0, CC_COL_RIGHT, "the IRQ number, or default (default_smp_affinity)" },
	{ "NAME", 0.2, CC_COL_TRUNC, "its handlers" },
	{ "AFFINITY", 0, 0, "smp_affinity_list" },
	{ "EFFECTIVE", 0, 0, "effective_affinity_list" },
	{ "STATE", 0, 0, "untouched, steered (was: its affinity before) or unmovable (why the kernel refused)" },
	{ "ON-CARVED", 0, CC_COL_WRAP, "interrupts on carved CPUs: total (cpu:count ...)" },
	{ "NODE", 0, CC_COL_RIGHT, "its device's NUMA node (-1: none)" },
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))
#define COLS_DEFAULT "IRQ,NAME,AFFINITY,EFFECTIVE,STATE,ON-CARVED"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve irq status [--json] [--sample-ms N] [--state DIR] [--root DIR] [table options]\n"
		"       corecarve irq reconcile [--dry-run] [--verbose] [--state DIR] [--root DIR] [--policy FILE]\n"
		"       corecarve irq notify [--state DIR]\n\n"
		"status: every IRQ with its device, affinity, effective affinity, whether corecarve\n"
		"steered it or the kernel refused (managed, unmovable), and the interrupts it raised\n"
		"on carved CPUs during --sample-ms (default %d; 0: since boot).\n"
		"reconcile: move IRQs off the CPUs of steer-away carves (IRQs that appeared since\n"
		"the carves were made), give back what no carve needs, update irqbalance's banned\n"
		"CPUs.  --verbose prints every write; --dry-run prints what it would write and\n"
		"writes nothing.\n"
		"notify: tell a running irqbalance which CPUs to ban now (its control socket, else\n"
		"a restart of irqbalance.service); run by corecarve-irqbalance.path, because the\n"
		"hook's sandbox lets it rewrite /etc/default/irqbalance but not talk to the daemon.\n\n",
		SAMPLE_MS_DEFAULT);
	cc_table_usage(out, cols, NCOLS, COLS_DEFAULT);
}

struct opts {
	struct cc_cli_common common;
	struct cc_table_opts table;
	const char *state;
	char state_buf[PATH_MAX];
	long sample_ms;
	bool verbose, dry_run;
	struct cc_cli_lock lock;
};

enum { OPT_VERBOSE = 1, OPT_DRY_RUN, OPT_STATE, OPT_SAMPLE_MS };

const struct cc_opt cc_opts_irq[] = {
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	{ "--sample-ms", NULL, "N", OPT_SAMPLE_MS, 0, "status" },
	{ "--dry-run", NULL, NULL, OPT_DRY_RUN, 0, "reconcile" },
	{ "--verbose", NULL, NULL, OPT_VERBOSE, 0, "reconcile" },
	CC_CLI_OPTS_JSON(0, "status"),
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, "status reconcile" },
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, "reconcile" },
	{ "--hwloc-xml", NULL, "FILE", CC_CLI_OPT_XML, CC_CLI_REFUSED, "status reconcile" },
	{ "--synthetic", NULL, "DESC", CC_CLI_OPT_SYNTHETIC, CC_CLI_REFUSED, "status reconcile" },
	CC_CLI_OPTS_TABLE("status"),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	o->sample_ms = SAMPLE_MS_DEFAULT;
	for (int i = 2; i < argc; i++) {
		const char *v;
		char *end;
		int id = cc_opts_next(cc_opts_irq, argv[1], argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case OPT_VERBOSE:
			o->verbose = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		case OPT_SAMPLE_MS:
			errno = 0;
			o->sample_ms = strtol(v, &end, 10);
			if (!*v || *end || errno || o->sample_ms < 0 || o->sample_ms > SAMPLE_MS_MAX)
				return cc_err_set(err, EINVAL, "--sample-ms: expected 0 to %d, got \"%.32s\"",
						  SAMPLE_MS_MAX, v);
			break;
		default:
			if ((r = cc_table_set(&o->table, id, v, err)) < 0)
				return -1;
			if (!r && !cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL, "irq %s: unexpected argument \"%s\" (see corecarve irq --help)",
						  argv[1], v);
		}
	}
	if (o->common.xml || o->common.synthetic)
		return cc_err_set(err, EINVAL, "irq: --hwloc-xml and --synthetic have no interrupts; use --root");
	if (cc_cli_state_dir(o->state, o->common.root, o->state_buf, sizeof(o->state_buf), &o->state, err) < 0)
		return -1;
	return cc_cli_lock(&o->lock, argc, argv, err);
}

/* ---- status ------------------------------------------------------------------ */

struct view {
	const struct cc_irq_table *t;
	const struct cc_irq_state *st;
	hwloc_const_bitmap_t carved, avoid;
	const struct cc_irq_counts *c0, *c1; /* c0 NULL: counts since boot */
	long sample_ms;
	const char *ib_warning; /* what reconcile would warn of irqbalance's file, "" for nothing */
};

static unsigned long long delta(const struct view *v, int irq, int cpu)
{
	unsigned long long b = cc_irq_counts_get(v->c1, irq, cpu);
	unsigned long long a = v->c0 ? cc_irq_counts_get(v->c0, irq, cpu) : 0;

	return b >= a ? b - a : 0;
}

static const char *state_name(const struct cc_irq_rec *r)
{
	return !r ? "untouched" : r->unmovable ? "unmovable" : "steered";
}

static json_t *list_json(hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	return s ? json_string(s) : NULL;
}

static int status_json(const struct view *v, struct cc_err *err)
{
	_cleanup_json_ json_t *doc = json_object();
	json_t *irqs = json_array(), *o;
	const struct cc_irq_rec *r = cc_irq_state_find(v->st, CC_IRQ_DEFAULT);
	const struct cc_irqbalance_rec *ib = &v->st->irqbalance;

	if (!doc || !irqs || json_object_set_new(doc, "schema_version", json_integer(1)) < 0 ||
	    json_object_set_new(doc, "steer_away", list_json(v->avoid)) < 0 ||
	    json_object_set_new(doc, "carved", list_json(v->carved)) < 0 ||
	    json_object_set_new(doc, "sample_ms", v->c0 ? json_integer(v->sample_ms) : json_null()) < 0 ||
	    json_object_set_new(doc, "default", o = json_object()) < 0 ||
	    json_object_set_new(o, "affinity", list_json(v->t->default_affinity)) < 0 ||
	    json_object_set_new(o, "state", json_string(state_name(r))) < 0 ||
	    (r && !r->unmovable && json_object_set_new(o, "orig", list_json(r->orig)) < 0) ||
	    json_object_set_new(doc, "irqs", irqs) < 0)
		return cc_err_sys(err, ENOMEM, "irq status");
	for (int i = 0; i < v->t->n; i++) {
		const struct cc_irq_info *q = &v->t->irqs[i];
		json_t *e = json_object(), *counts = json_object();
		unsigned long long total = 0;
		int cpu;

		r = cc_irq_state_find(v->st, q->irq);
		if (r && !cc_irq_same_device(r->name, q->name))
			r = NULL;
		if (!e || !counts || json_array_append_new(irqs, e) < 0 ||
		    json_object_set_new(e, "irq", json_integer(q->irq)) < 0 ||
		    json_object_set_new(e, "name", json_string(q->name)) < 0 ||
		    json_object_set_new(e, "affinity", list_json(q->affinity)) < 0 ||
		    json_object_set_new(e, "effective", q->has_effective ? list_json(q->effective) : json_null()) < 0 ||
		    json_object_set_new(e, "node", json_integer(q->node)) < 0 ||
		    json_object_set_new(e, "state", json_string(state_name(r))) < 0 ||
		    (r && r->unmovable && json_object_set_new(e, "refused", json_string(r->refused)) < 0) ||
		    (r && !r->unmovable && json_object_set_new(e, "orig", list_json(r->orig)) < 0) ||
		    json_object_set_new(e, "on_steer_away",
					json_boolean(hwloc_bitmap_intersects(q->affinity, v->avoid))) < 0 ||
		    json_object_set_new(e, "carved_counts", counts) < 0)
			return cc_err_sys(err, ENOMEM, "irq status");
		hwloc_bitmap_foreach_begin(cpu, v->carved) {
			unsigned long long d = delta(v, q->irq, cpu);
			char k[16];

			snprintf(k, sizeof(k), "%d", cpu);
			total += d;
			if (d && json_object_set_new(counts, k, json_integer((json_int_t)d)) < 0)
				return cc_err_sys(err, ENOMEM, "irq status");
		}
		hwloc_bitmap_foreach_end();
		if (json_object_set_new(e, "carved_total", json_integer((json_int_t)total)) < 0)
			return cc_err_sys(err, ENOMEM, "irq status");
	}
	if (json_object_set_new(doc, "irqbalance", ib->active ? o = json_object() : json_null()) < 0 ||
	    (ib->active && (json_object_set_new(o, "file", json_string(ib->file)) < 0 ||
			    json_object_set_new(o, "banned", list_json(ib->banned)) < 0)) ||
	    json_object_set_new(doc, "irqbalance_warning",
				v->ib_warning[0] ? json_string(v->ib_warning) : json_null()) < 0)
		return cc_err_sys(err, ENOMEM, "irq status");
	if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
		return cc_err_sys(err, EIO, "irq status: write");
	fputc('\n', stdout);
	return 0;
}

/* "12 (3:10 5:2)": interrupts on carved CPUs, by CPU. */
static void carved_counts(const struct view *v, int irq, char *buf, size_t len)
{
	unsigned long long total = 0;
	size_t used;
	int cpu, k = 0;

	hwloc_bitmap_foreach_begin(cpu, v->carved) total += delta(v, irq, cpu);
	hwloc_bitmap_foreach_end();
	used = (size_t)snprintf(buf, len, "%llu", total);
	hwloc_bitmap_foreach_begin(cpu, v->carved) {
		unsigned long long d = delta(v, irq, cpu);

		if (d && used + 32 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%d:%llu", k++ ? " " : " (", cpu, d);
	}
	hwloc_bitmap_foreach_end();
	if (k && used + 2 < len)
		snprintf(buf + used, len - used, ")");
}


/* A record's state: the JSON's word first ("untouched", never "-"), the
 * detail after it. */
static void state_text(const struct cc_irq_rec *r, char *buf, size_t len)
{
	_cleanup_free_ char *orig = r && !r->unmovable ? cc_cpulist_format(r->orig) : NULL;

	if (!r)
		snprintf(buf, len, "%s", state_name(r));
	else if (r->unmovable)
		snprintf(buf, len, "unmovable (%s)", r->refused);
	else
		snprintf(buf, len, "steered (was %s)", orig ? orig : "?");
}

static int status_text(const struct view *v, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_free_ char *avoid = cc_cpulist_format(v->avoid);
	_cleanup_free_ char *carved = cc_cpulist_format(v->carved);
	_cleanup_free_ char *def = cc_cpulist_format(v->t->default_affinity);
	_cleanup_table_ struct cc_table *t = cc_table_new(cols, NCOLS, COLS_DEFAULT, o, err);
	const struct cc_irqbalance_rec *ib = &v->st->irqbalance;
	const struct cc_irq_rec *dr = cc_irq_state_find(v->st, CC_IRQ_DEFAULT);
	char st[160];

	if (!t)
		return -1;
	if (!avoid || !carved || !def)
		return cc_err_sys(err, ENOMEM, "irq status");
	printf("steer-away CPUs: %s   carved CPUs: %s   ", avoid[0] ? avoid : "none", carved[0] ? carved : "none");
	if (v->c0)
		printf("interrupts on carved CPUs over %ld ms\n", v->sample_ms);
	else
		printf("interrupts on carved CPUs since boot\n");
	if (ib->active) {
		_cleanup_free_ char *b = cc_cpulist_format(ib->banned);

		printf("irqbalance: %s bans %s\n", ib->file, b ? b : "?");
	}
	if (v->ib_warning[0])
		printf("irqbalance: warning: %s\n", v->ib_warning);
	state_text(dr, st, sizeof(st));
	if (cc_table_row(t, (const char *[]){ "default", "-", def, "-", st, "-", "-" }, err) < 0)
		return -1;
	for (int i = 0; i < v->t->n; i++) {
		const struct cc_irq_info *q = &v->t->irqs[i];
		const struct cc_irq_rec *r = cc_irq_state_find(v->st, q->irq);
		_cleanup_free_ char *aff = cc_cpulist_format(q->affinity);
		_cleanup_free_ char *eff = q->has_effective ? cc_cpulist_format(q->effective) : strdup("-");
		char irq[16], counts[160], node[16];

		if (!aff || !eff)
			return cc_err_sys(err, ENOMEM, "irq status");
		if (r && !cc_irq_same_device(r->name, q->name))
			r = NULL;
		state_text(r, st, sizeof(st));
		carved_counts(v, q->irq, counts, sizeof(counts));
		snprintf(irq, sizeof(irq), "%d", q->irq);
		snprintf(node, sizeof(node), "%d", q->node);
		if (cc_table_row(t, (const char *[]){ irq, q->name[0] ? q->name : "-", aff, eff[0] ? eff : "-", st, counts, node },
				 err) < 0)
			return -1;
	}
	return cc_table_print(t, stdout, err);
}

/* /proc/interrupts may be absent from a captured tree: no counts then. */
static int read_counts(const struct cc_root *root, struct cc_irq_counts *c, bool *have, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;

	*have = cc_irq_counts_read(root, c, &e) == 0;
	if (*have || e.code == ENOENT)
		return 0;
	*err = e;
	return -1;
}

/* What a reconcile would say of irqbalance's file now: the hook's warning
 * about a read-only /etc is not recorded, so status looks again.  The
 * file is only read; one corecarve cannot read is reconcile's to report. */
static void ib_warning(const struct cc_root *root, const struct cc_irq_state *st, hwloc_const_bitmap_t avoid,
		       struct cc_irqbalance_result *res)
{
	struct cc_irqbalance_pending p = { 0 };
	struct cc_err ignored = CC_ERR_INIT;

	if (cc_irqbalance_prepare(root, &st->irqbalance, avoid, &p, &ignored) == 0 && p.read_only)
		cc_irqbalance_read_only(&p, res);
	cc_irqbalance_pending_fini(&p);
}

static int status(const struct opts *o, struct cc_err *err)
{
	_cleanup_root_ struct cc_root *root = cc_root_open(o->common.root ? o->common.root : "/", err);
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t carved = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t avoid = NULL;
	struct cc_irq_table t = { 0 };
	struct cc_irq_state st;
	struct cc_irq_counts c0 = { 0 }, c1 = { 0 };
	struct cc_irqbalance_result ibres = { 0 };
	struct view v = { 0 };
	bool have0 = false, have1 = false;
	int rc = -1;

	cc_irq_state_init(&st);
	if (!root)
		return cc_err_prefix(err, "--root");
	l = cc_cli_ledger_open(o->state, CC_LEDGER_READ, &o->lock.lock, err);
	if (!l)
		goto out;
	cc_irq_state_fini(&st);
	if (cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &st, err) < 0) {
		cc_err_prefix(err, "%s/" CC_LEDGER_FILE, cc_ledger_dir(l));
		goto out;
	}
	carved = cc_ledger_taken(l);
	avoid = cc_irq_avoid(l, NULL);
	if (!carved || !avoid) {
		cc_err_sys(err, ENOMEM, "irq status");
		goto out;
	}
	if (o->sample_ms > 0 && read_counts(root, &c0, &have0, err) < 0)
		goto out;
	if (have0) {
		struct timespec ts = { o->sample_ms / 1000, (o->sample_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (read_counts(root, &c1, &have1, err) < 0 || cc_irq_table_read(root, &t, err) < 0)
		goto out;
	ib_warning(root, &st, avoid, &ibres);
	v = (struct view){ &t, &st, carved, avoid, have0 && have1 ? &c0 : NULL, &c1, o->sample_ms, ibres.warning };
	rc = o->common.json ? status_json(&v, err) : status_text(&v, &o->table, err);
out:
	cc_irq_counts_fini(&c0);
	cc_irq_counts_fini(&c1);
	cc_irq_table_fini(&t);
	cc_irq_state_fini(&st);
	return rc;
}

/* ---- reconcile ------------------------------------------------------------------ */

/* reconcile --dry-run: the same plan from a snapshot of the ledger, each
 * write it would make, nothing written and nothing locked. */
static int dry_run(const struct opts *o, const struct cc_root *root, const struct cc_irq_fallback *fb,
		   struct cc_err *err)
{
	static const char *const why[] = { "steer", "adjust", "restore" };
	static const struct cc_table_col dcols[] = {
		{ "IRQ", 0, CC_COL_RIGHT, NULL }, { "NAME", 0.2, CC_COL_TRUNC, NULL }, { "FROM", 0, 0, NULL },
		{ "TO", 0, 0, NULL },            { "WHY", 0, 0, NULL },
	};
	_cleanup_ledger_ struct cc_ledger *l = cc_cli_ledger_open(o->state, CC_LEDGER_READ, &o->lock.lock, err);
	_cleanup_bitmap_ hwloc_bitmap_t avoid = NULL;
	_cleanup_table_ struct cc_table *tb = NULL;
	struct cc_irq_table t = { 0 };
	struct cc_irq_state st;
	struct cc_irq_plan plan = { 0 };
	struct cc_irqbalance_pending ib = { 0 };
	struct cc_err ignored = CC_ERR_INIT;
	int rc = -1;

	cc_irq_state_init(&st);
	if (!l || !(avoid = cc_irq_avoid(l, NULL)))
		goto out;
	cc_irq_state_fini(&st);
	if (cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &st, err) < 0 ||
	    cc_irq_table_read(root, &t, err) < 0 || cc_irq_plan(&t, &st, avoid, fb, &plan, err) < 0)
		goto out;
	printf("irq reconcile --dry-run: %d write%s; nothing was changed\n", plan.n, plan.n == 1 ? "" : "s");
	if (plan.n) {
		if (!(tb = cc_table_new(dcols, 5, "IRQ,NAME,FROM,TO,WHY", &(struct cc_table_opts){ 0 }, err)))
			goto out;
		for (int i = 0; i < plan.n; i++) {
			const struct cc_irq_step *p = &plan.steps[i];
			_cleanup_free_ char *from = cc_cpulist_format(p->from), *to = cc_cpulist_format(p->to);
			char irq[16], w[32];

			if (p->irq == CC_IRQ_DEFAULT)
				snprintf(irq, sizeof(irq), "default");
			else
				snprintf(irq, sizeof(irq), "%d", p->irq);
			snprintf(w, sizeof(w), "%s%s", why[p->why], p->fell_back ? " (fallback)" : "");
			if (cc_table_row(tb, (const char *[]){ irq, p->name, from, to, w }, err) < 0)
				goto out;
		}
		if (cc_table_print(tb, stdout, err) < 0)
			goto out;
	}
	if (cc_irqbalance_prepare(root, &st.irqbalance, avoid, &ib, &ignored) == 0 && ib.new_text)
		printf("irqbalance: would rewrite %s%s\n", ib.file, ib.read_only ? " (a read-only mount: it cannot)" : "");
	rc = 0;
out:
	cc_irqbalance_pending_fini(&ib);
	cc_irq_plan_fini(&plan);
	cc_irq_table_fini(&t);
	cc_irq_state_fini(&st);
	return rc;
}

static int reconcile(const struct opts *o, struct cc_err *err)
{
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct cc_irq_table t = { 0 };
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts io = { 0 };
	struct cc_irq_report rep;
	int rc = -1;

	/* A malformed /proc/irq says so before anything else is loaded. */
	root = cc_root_open(o->common.root ? o->common.root : "/", err);
	if (!root)
		return cc_err_prefix(err, "--root");
	/* --root never touches the node: a tree's reconcile would commit the
	 * ledger named by --state and tell this host's irqbalance. */
	if (!root->is_host && !o->dry_run)
		return cc_err_set(err, EPERM, "irq reconcile moves this host's IRQs and records them in its ledger: the "
					      "root must be \"/\" (--dry-run shows the plan for --root %s)",
				  root->path);
	/* Before /proc/irq, the policy, sysfs and the ledger are read; the
	 * helper is the one process that may still run systemctl (irqbalance
	 * re-reads its file on a restart). */
	if ((!o->dry_run && cc_irqbalance_restart_helper(err) < 0) || cc_sandbox_irq_reconcile(err) < 0)
		return -1;
	if (cc_irq_table_read(root, &t, err) < 0)
		return -1;
	cc_irq_table_fini(&t);
	if (cc_cli_load(&o->common, NULL, &policy, &topo, err) < 0)
		return -1;
	reserved = cc_policy_reserved(policy, topo);
	if (!reserved)
		return cc_err_sys(err, ENOMEM, "irq reconcile");
	if (cc_irq_fallback_from_topo(topo, reserved, &fb, err) < 0)
		return -1;
	if (o->dry_run) {
		rc = dry_run(o, root, &fb, err);
		goto out;
	}
	l = cc_cli_ledger_open(o->state, CC_LEDGER_WRITE, &o->lock.lock, err);
	if (!l)
		goto out;
	cc_ledger_set_fault(l, cc_cli_fault());
	io = (struct cc_irq_opts){ .root = root, .fb = &fb, .notify = true, .trace = o->verbose ? stderr : NULL };
	if (cc_irq_reconcile(l, &io, &rep, err) < 0 || cc_ledger_commit(l, err) < 0)
		goto out;
	printf("irq: %d moved (%d to the fallback), %d restored, %d unmovable%s%s, %d left to others, %d gone\n",
	       rep.moved, rep.fell_back, rep.restored, rep.unmovable, rep.unmovable ? ": " : "", rep.unmovable_list,
	       rep.foreign, rep.vanished);
	if (rep.irqbalance.file_written)
		printf("irqbalance: rewrote %s\n", rep.irqbalance.file);
	if (rep.irqbalance.action[0])
		printf("irqbalance: %s\n", rep.irqbalance.action);
	if (rep.irqbalance.warning[0])
		fprintf(stderr, "corecarve: warning: %s\n", rep.irqbalance.warning);
	rc = 0;
out:
	cc_irq_fallback_fini(&fb);
	return rc;
}

/* ---- notify ----------------------------------------------------------------- */

/* What corecarve-irqbalance.path runs when the environment file changes:
 * the sandboxed hook rewrites the file but may not talk to the daemon. */
static int notify(const struct opts *o, struct cc_err *err)
{
	_cleanup_root_ struct cc_root *root = cc_root_open(o->common.root ? o->common.root : "/", err);
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	struct cc_irqbalance_pending p = { 0 };
	struct cc_irqbalance_result res = { 0 };
	struct cc_irq_state st;
	int rc = -1;

	cc_irq_state_init(&st);
	if (!root)
		return cc_err_prefix(err, "--root");
	l = cc_cli_ledger_open(o->state, CC_LEDGER_READ, &o->lock.lock, err);
	if (!l)
		goto out;
	cc_irq_state_fini(&st);
	if (cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &st, err) < 0) {
		cc_err_prefix(err, "%s/" CC_LEDGER_FILE, cc_ledger_dir(l));
		goto out;
	}
	if (cc_irqbalance_current(root, &st.irqbalance, &p, err) < 0)
		goto out;
	if (!p.file[0]) {
		printf("irqbalance: no environment file (%s): nothing to tell\n", cc_irqbalance_files[0]);
		rc = 0;
		goto out;
	}
	cc_irqbalance_notify(root, &p, true, &res);
	if (res.action[0])
		printf("irqbalance: %s\n", res.action);
	else if (!res.pid && !res.warning[0])
		printf("irqbalance: not running; %s is what it reads when it starts\n", p.file);
	if (res.warning[0]) {
		cc_err_set(err, EAGAIN, "%s", res.warning);
		goto out;
	}
	rc = 0;
out:
	cc_irqbalance_pending_fini(&p);
	cc_irq_state_fini(&st);
	return rc;
}

int cc_cmd_irq(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CC_EXIT_ERROR : CC_EXIT_OK;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CC_EXIT_OK;
		}
	if (strcmp(argv[1], "status") && strcmp(argv[1], "reconcile") && strcmp(argv[1], "notify")) {
		cc_err_set(&err, EINVAL, "irq: unknown subcommand \"%s\" (expected status, reconcile or notify)",
			   argv[1]);
		return cc_cli_fail(&err);
	}
	if (parse(argc, argv, &o, &err) < 0)
		return cc_cli_fail(&err);
	if (!strcmp(argv[1], "status") && status(&o, &err) < 0)
		return cc_cli_fail(&err);
	if (!strcmp(argv[1], "reconcile") && reconcile(&o, &err) < 0)
		return cc_cli_fail(&err);
	if (!strcmp(argv[1], "notify") && notify(&o, &err) < 0)
		return cc_cli_fail(&err);
	return CC_EXIT_OK;
}
