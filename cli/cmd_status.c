/* corecarve status: the carves in the ledger, which carve owns which CPU
 * of the topology, and what each placement class can still carve.  Reads
 * a snapshot (shared lock): never changes the ledger, never creates the
 * state directory.  --kernel shows the node's partitions, exclusive sets
 * and quotas from cgroupfs alone, for when the ledger cannot be read. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "capacity.h"
#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "ledger.h"
#include "power.h"
#include "svg.h"
#include "table.h"

#define SHORT_ID 12
#define STATUS_SCHEMA 1

enum role { ROLE_FREE, ROLE_RESERVED, ROLE_RUN, ROLE_PARKED };
static const char *const role_names[] = { "free", "reserved", "run", "parked" };

/* The owner of one CPU. */
struct cpu_row {
	int cpu;
	enum role role;
	int carve; /* index into ledger->carves, -1 for none */
};

struct status {
	const struct cc_ledger *ledger;
	const struct cc_topo *topo;
	struct cpu_row *rows;
	int nrows;
	struct cc_capacity *cap;
	int ncap;
};

/* Every online CPU, plus carved ones that are offline now (hotplug). */
static int build_rows(struct status *s, hwloc_const_bitmap_t reserved, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = cc_ledger_taken(s->ledger);
	int cpu, n = 0;

	if (!all || hwloc_bitmap_or(all, all, s->topo->online) < 0)
		return cc_err_sys(err, ENOMEM, "status");
	s->rows = calloc((size_t)hwloc_bitmap_weight(all) + 1, sizeof(*s->rows));
	if (!s->rows)
		return cc_err_sys(err, ENOMEM, "status");
	hwloc_bitmap_foreach_begin(cpu, all) {
		struct cpu_row *r = &s->rows[n++];

		r->cpu = cpu;
		r->carve = -1;
		r->role = reserved && hwloc_bitmap_isset(reserved, (unsigned)cpu) ? ROLE_RESERVED : ROLE_FREE;
		const struct cc_carve *c;

		cc_ledger_foreach_carve(s->ledger, i, c) {
			if (hwloc_bitmap_isset(c->cpus, (unsigned)cpu))
				r->role = ROLE_RUN;
			else if (hwloc_bitmap_isset(c->parked, (unsigned)cpu))
				r->role = ROLE_PARKED;
			else
				continue;
			r->carve = i;
			break;
		}
	}
	hwloc_bitmap_foreach_end();
	s->nrows = n;
	return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *list_json(hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	return s ? json_string(s) : NULL;
}

static int print_json(const struct status *s, struct cc_err *err)
{
	_cleanup_json_ json_t *doc = json_object();
	json_t *carves = json_array(), *cpus = json_array();
	const struct cc_carve *c;

	if (!doc || json_object_set_new(doc, "schema_version", json_integer(STATUS_SCHEMA)) < 0 ||
	    json_object_set_new(doc, "carves", carves) < 0 || json_object_set_new(doc, "cpus", cpus) < 0 ||
	    json_object_set_new(doc, "capacity", cc_capacity_json(s->cap, s->ncap)) < 0)
		return cc_err_sys(err, ENOMEM, "status");
	cc_ledger_foreach_carve(s->ledger, i, c) {
		json_t *o = json_object();

		if (!o || json_array_append_new(carves, o) < 0 ||
		    json_object_set_new(o, "id", json_string(c->id)) < 0 ||
		    json_object_set_new(o, "kind", json_string(c->kind)) < 0 ||
		    json_object_set_new(o, "class", json_string(c->class_name)) < 0 ||
		    json_object_set_new(o, "core_class", json_string(c->core_class)) < 0 ||
		    json_object_set_new(o, "cpus", list_json(c->cpus)) < 0 ||
		    json_object_set_new(o, "parked", list_json(c->parked)) < 0 ||
		    json_object_set_new(o, "mems", list_json(c->mems)) < 0 ||
		    json_object_set_new(o, "mode", json_string(c->mode)) < 0 ||
		    json_object_set_new(o, "cgroup", json_string(c->cgroup)) < 0 ||
		    json_object_set_new(o, "state", json_string(c->releasing ? "releasing" : "live")) < 0 ||
		    json_object_set_new(o, "created", json_integer(c->created)) < 0 ||
		    /* The grant a container was carved from; never a token. */
		    (c->grant[0] && json_object_set_new(o, "grant", json_string(c->grant)) < 0))
			return cc_err_sys(err, ENOMEM, "status");
	}
	for (int i = 0; i < s->nrows; i++) {
		const struct cpu_row *r = &s->rows[i];
		json_t *o = json_object();

		if (!o || json_array_append_new(cpus, o) < 0 || json_object_set_new(o, "cpu", json_integer(r->cpu)) < 0 ||
		    json_object_set_new(o, "owner", r->carve >= 0 ? json_string(cc_ledger_carve_at(s->ledger, r->carve)->id)
								  : json_null()) < 0 ||
		    json_object_set_new(o, "role", json_string(role_names[r->role])) < 0)
			return cc_err_sys(err, ENOMEM, "status");
	}
	/* The power records as the ledger holds them (docs/power.md). */
	{
		json_t *power = json_object_get(cc_ledger_section_get(s->ledger, CC_POWER_SECTION), "files");

		if (json_object_set_new(doc, "power", power ? json_deep_copy(power) : json_array()) < 0)
			return cc_err_sys(err, ENOMEM, "status");
	}
	if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
		return cc_err_sys(err, EIO, "status: write");
	fputc('\n', stdout);
	return 0;
}

/* ---- text ---------------------------------------------------------------- */

/* Append `item` to the comma-separated `list` unless it is one of its
 * items already (whole items: "a" is not in "ab"). */
static void list_add(char *list, size_t size, const char *item)
{
	size_t n = strlen(item), len = strlen(list);

	for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, item, n) && (p[n] == ',' || p[n] == '\0'))
			return;
	snprintf(list + len, size - len, "%s%s", len ? "," : "", item);
}

static void short_id(const char *id, char out[SHORT_ID + 1])
{
	snprintf(out, SHORT_ID + 1, "%.*s", SHORT_ID, id);
}

/* The tables, each with the columns --output may choose from. */
enum { T_CARVES, T_CPUS, T_CAPACITY, T_POWER, T_KERNEL, NTABLES };
static const char *const table_names[NTABLES] = { "carves", "cpus", "capacity", "power", "kernel" };

static const struct cc_table_col carve_cols[] = {
	{ "CARVE", 0, 0, "the carve's id, cut to 12 characters" },
	{ "ID", 0, 0, "the whole id" },
	{ "KIND", 0, 0, "container, exec or vm" },
	{ "CLASS", 0, 0, "the placement class asked for" },
	{ "CORE-CLASS", 0, 0, "the core class drawn from" },
	{ "CPUS", 0, CC_COL_WRAP, "the CPUs it runs on" },
	{ "PARKED", 0, CC_COL_WRAP, "SMT siblings held idle for it" },
	{ "MEMS", 0, 0, "the NUMA nodes of its cpuset.mems" },
	{ "MODE", 0, 0, "remote-partition, local-partition, cpuset-only or affinity" },
	{ "STATE", 0, 0, "live, or releasing (an undo failed; retried)" },
	{ "CGROUP", 0.3, CC_COL_TRUNC, "its cgroup below the cgroup2 mount" },
};
#define CARVE_DEFAULT "CARVE,CLASS,CORE-CLASS,CPUS,PARKED,MEMS,MODE,CGROUP"

static const struct cc_table_col cpu_cols[] = {
	{ "CPUS", 0, 0, "a run of CPUs with one role and owner" },
	{ "ROLE", 0, 0, "run, parked, reserved or free" },
	{ "OWNER", 0, 0, "the carve's id (12 characters)" },
};
#define CPU_DEFAULT "CPUS,ROLE,OWNER"

static const struct cc_table_col cap_cols[] = {
	{ "CLASS", 0, 0, "the placement class" },
	{ "CORE-CLASS", 0, 0, "the core class it draws from (\"-\": none on this node)" },
	{ "TOTAL", 0, CC_COL_RIGHT, "online CPUs of that core class" },
	{ "RESERVED", 0, CC_COL_RIGHT, "of them kept by the policy for the host" },
	{ "CARVED", 0, CC_COL_RIGHT, "of them run a carve" },
	{ "PARKED", 0, CC_COL_RIGHT, "of them are siblings parked for a carve" },
	{ "FREE", 0, CC_COL_RIGHT, "the rest" },
	{ "LARGEST", 0, CC_COL_RIGHT, "the largest cpus request that fits now" },
	{ "EMPTY", 0, CC_COL_RIGHT, "the largest that would fit with no carve" },
	{ "SMALLEST", 0, CC_COL_RIGHT, "the smallest request the class can express" },
	{ "CARVES", 0, CC_COL_RIGHT, "carves of this class" },
	{ "NOTE", 0.3, CC_COL_WRAP, "why the class can never carve here" },
};
#define CAP_DEFAULT "CLASS,CORE-CLASS,TOTAL,RESERVED,CARVED,PARKED,FREE,LARGEST"

static const struct cc_table_col power_cols[] = {
	{ "SETTING", 0, 0, "governor, epp, min-freq, max-freq, cstate, uncore-min, uncore-max" },
	{ "VALUES", 0, CC_COL_WRAP, "the values corecarve set" },
	{ "FILES", 0, CC_COL_RIGHT, "how many sysfs files hold them" },
	{ "FOR", 0, CC_COL_WRAP, "the carves that need them (12 characters each)" },
};
#define POWER_DEFAULT "SETTING,VALUES,FILES,FOR"

static const struct cc_table_col kernel_cols[] = {
	{ "CGROUP", 0.4, CC_COL_TRUNC, "below the cgroup2 mount" },
	{ "PARTITION", 0, 0, "cpuset.cpus.partition (root, isolated, invalid ...)" },
	{ "CPUS", 0, CC_COL_WRAP, "cpuset.cpus" },
	{ "EFFECTIVE", 0, CC_COL_WRAP, "cpuset.cpus.effective" },
	{ "EXCLUSIVE", 0, CC_COL_WRAP, "cpuset.cpus.exclusive" },
	{ "QUOTA", 0, 0, "cpu.max" },
	{ "TASKS", 0, 0, "populated: tasks here or below" },
};
#define KERNEL_DEFAULT "CGROUP,PARTITION,CPUS,EFFECTIVE,EXCLUSIVE,QUOTA,TASKS"

static const struct {
	const struct cc_table_col *cols;
	int n;
	const char *defaults;
} tables[NTABLES] = {
	[T_CARVES] = { carve_cols, sizeof(carve_cols) / sizeof(carve_cols[0]), CARVE_DEFAULT },
	[T_CPUS] = { cpu_cols, sizeof(cpu_cols) / sizeof(cpu_cols[0]), CPU_DEFAULT },
	[T_CAPACITY] = { cap_cols, sizeof(cap_cols) / sizeof(cap_cols[0]), CAP_DEFAULT },
	[T_POWER] = { power_cols, sizeof(power_cols) / sizeof(power_cols[0]), POWER_DEFAULT },
	[T_KERNEL] = { kernel_cols, sizeof(kernel_cols) / sizeof(kernel_cols[0]), KERNEL_DEFAULT },
};

static struct cc_table *new_table(int which, const struct cc_table_opts *o, struct cc_err *err)
{
	return cc_table_new(tables[which].cols, tables[which].n, tables[which].defaults, o, err);
}

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

static int print_carves(const struct status *s, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_table_ struct cc_table *t = new_table(T_CARVES, o, err);
	const struct cc_carve *c;

	if (!t)
		return -1;
	cc_ledger_foreach_carve(s->ledger, i, c) {
		_cleanup_free_ char *cpus = cc_cpulist_format(c->cpus), *parked = cc_cpulist_format(c->parked);
		_cleanup_free_ char *mems = cc_cpulist_format(c->mems);
		char id[SHORT_ID + 1];
		const char *row[] = { id, c->id, c->kind, dash(c->class_name), dash(c->core_class), dash(cpus),
				      dash(parked), dash(mems), c->mode, c->releasing ? "releasing" : "live",
				      dash(c->cgroup) };

		if (!cpus || !parked || !mems)
			return cc_err_sys(err, ENOMEM, "status");
		short_id(c->id, id);
		if (cc_table_row(t, row, err) < 0)
			return -1;
	}
	return cc_table_print(t, stdout, err);
}

/* One line per run of consecutive CPUs with the same role and owner. */
static int print_owners(const struct status *s, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_table_ struct cc_table *t = new_table(T_CPUS, o, err);

	if (!t)
		return -1;
	for (int i = 0; i < s->nrows;) {
		const struct cpu_row *r = &s->rows[i];
		char cpus[32], id[SHORT_ID + 1] = "";
		int j = i + 1;

		while (j < s->nrows && s->rows[j].cpu == s->rows[j - 1].cpu + 1 && s->rows[j].role == r->role &&
		       s->rows[j].carve == r->carve)
			j++;
		if (j - i == 1)
			snprintf(cpus, sizeof(cpus), "%d", r->cpu);
		else
			snprintf(cpus, sizeof(cpus), "%d-%d", r->cpu, s->rows[j - 1].cpu);
		if (r->carve >= 0)
			short_id(cc_ledger_carve_at(s->ledger, r->carve)->id, id);
		if (cc_table_row(t, (const char *[]){ cpus, role_names[r->role], id }, err) < 0)
			return -1;
		i = j;
	}
	return cc_table_print(t, stdout, err);
}

static int print_capacity(const struct status *s, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_table_ struct cc_table *t = new_table(T_CAPACITY, o, err);

	if (!t)
		return -1;
	for (int i = 0; i < s->ncap; i++) {
		const struct cc_capacity *c = &s->cap[i];
		char v[9][16];
		const int n[] = { c->total, c->reserved, c->carved, c->parked, c->free, c->largest, c->largest_empty,
				  c->smallest, c->carves };
		char note[CC_ERR_MSG_MAX + 32];

		for (int k = 0; k < 9; k++)
			snprintf(v[k], sizeof(v[k]), "%d", n[k]);
		if (c->never[0])
			snprintf(note, sizeof(note), "%s", c->never);
		else if (!c->exclusive)
			snprintf(note, sizeof(note), "shared: LARGEST is its pool, nothing is carved");
		else
			note[0] = '\0';
		if (cc_table_row(t, (const char *[]){ c->name, dash(c->core_class), v[0], v[1], v[2], v[3], v[4], v[5],
						       v[6], v[7], v[8], note },
				 err) < 0)
			return -1;
	}
	if (cc_table_print(t, stdout, err) < 0)
		return -1;
	/* A class that can never carve here is a policy to fix: say why below
	 * the table unless the NOTE column does. */
	if (o && o->output)
		return 0;
	for (int i = 0; i < s->ncap; i++)
		if (s->cap[i].never[0])
			printf("class %s: %s on this node: %s\n", s->cap[i].name,
			       s->cap[i].exclusive ? "can never carve" : "has no CPUs", s->cap[i].never);
	return 0;
}

/* One row per power setting held: the values set, how many files, who
 * relies on them. */
static int print_power(const struct status *s, const struct cc_table_opts *o, bool heading, struct cc_err *err)
{
	struct cc_noderecs st;
	_cleanup_table_ struct cc_table *t = NULL;
	int rc = 0;

	if (cc_power_recs_load(s->ledger, &st, err) < 0)
		return -1;
	if (!st.n && heading)
		goto out;
	if (!(t = new_table(T_POWER, o, err))) {
		rc = -1;
		goto out;
	}
	if (heading)
		printf("\npower settings held (originals are restored by the last carve that needs them):\n");
	for (int k = 0; k < CC_POWER_NKINDS && rc == 0; k++) {
		char values[128] = "", owners[256] = "", id[16], files[16];
		int n = 0;

		for (int i = 0; i < st.n; i++) {
			const struct cc_noderec *r = st.r[i];

			if ((int)cc_power_rec_kind(r) != k)
				continue;
			n++;
			list_add(values, sizeof(values), cc_power_rec_value(r));
			for (int w = 0; w < r->nowners; w++) {
				snprintf(id, sizeof(id), "%.12s", r->owners[w].id);
				list_add(owners, sizeof(owners), id);
			}
		}
		if (!n)
			continue;
		snprintf(files, sizeof(files), "%d", n);
		rc = cc_table_row(t,
				  (const char *[]){ cc_power_kind_name((enum cc_power_kind)k), values, files,
						    owners[0] ? owners : "(no carve: not restored, see corecarve audit)" },
				  err);
	}
	if (rc == 0)
		rc = cc_table_print(t, stdout, err);
out:
	cc_noderecs_fini(&st);
	return rc;
}

/* The topology map with each carved or reserved CPU labelled. */
static int print_map(const struct status *s, struct cc_err *err)
{
	const char **labels = calloc((size_t)s->topo->npus + 1, sizeof(*labels));
	char (*names)[SHORT_ID + 16] = calloc((size_t)s->topo->npus + 1, sizeof(*names));
	struct cc_topo_view view = { 0 };
	char title[256];
	int rc;

	if (!labels || !names) {
		free(labels);
		free(names);
		return cc_err_sys(err, ENOMEM, "status");
	}
	for (int i = 0; i < s->nrows; i++) {
		const struct cpu_row *r = &s->rows[i];
		int pu = cc_topo_pu_index(s->topo, r->cpu);
		char id[SHORT_ID + 1];

		if (pu < 0)
			continue;
		if (r->role == ROLE_RESERVED) {
			labels[pu] = "reserved";
		} else if (r->carve >= 0) {
			short_id(cc_ledger_carve_at(s->ledger, r->carve)->id, id);
			snprintf(names[pu], sizeof(names[pu]), r->role == ROLE_PARKED ? "(%s)" : "%s", id);
			labels[pu] = names[pu];
		}
	}
	snprintf(title, sizeof(title), "carves on %s (owner per CPU; \"(id)\": parked sibling)", s->topo->source);
	view.pu_labels = labels;
	view.title = title;
	rc = cc_topo_map(stdout, s->topo, &view, err);
	free(labels);
	free(names);
	return rc;
}

/* The same owners as a picture, with each CPU's interrupt load. */
static int write_svg(const struct status *s, const struct cc_cli_common *common,
		     const struct cc_root *root, const char *path, struct cc_err *err)
{
	static const enum cc_svg_role svg_role[] = {
		[ROLE_FREE] = CC_SVG_FREE,
		[ROLE_RESERVED] = CC_SVG_RESERVED,
		[ROLE_RUN] = CC_SVG_RUN,
		[ROLE_PARKED] = CC_SVG_PARKED,
	};
	enum cc_svg_role *roles = calloc((size_t)s->topo->npus + 1, sizeof(*roles));
	const char **owners = calloc((size_t)s->topo->npus + 1, sizeof(*owners));
	struct cc_interrupts irqs = { 0 };
	char note[CC_ERR_MSG_MAX + 64], title[256];
	struct cc_svg_view view = { .roles = roles, .owners = owners, .title = title };
	int rc;

	if (!roles || !owners) {
		free(roles);
		free(owners);
		return cc_err_sys(err, ENOMEM, "status");
	}
	for (int i = 0; i < s->nrows; i++) {
		const struct cpu_row *r = &s->rows[i];
		int pu = cc_topo_pu_index(s->topo, r->cpu);

		if (pu < 0)
			continue;
		roles[pu] = svg_role[r->role];
		owners[pu] = r->carve >= 0 ? cc_ledger_carve_at(s->ledger, r->carve)->id : NULL;
	}
	snprintf(title, sizeof(title), "corecarve status: %d carve%s on %s", cc_ledger_ncarves(s->ledger),
		 cc_ledger_ncarves(s->ledger) == 1 ? "" : "s", s->topo->source);
	if (cc_cli_svg_irqs(common, root, &irqs, note, sizeof(note)) > 0)
		view.irqs = &irqs;
	view.note = note[0] ? note : NULL;
	rc = cc_cli_write_svg(path, s->topo, &view, err);
	cc_interrupts_fini(&irqs);
	free(roles);
	free(owners);
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve status [--json] [--state DIR] [--root DIR | --hwloc-xml FILE | --synthetic DESC]\n"
		     "                        [--policy FILE] [--svg FILE] [--table NAME [table options]]\n"
		     "       corecarve status --kernel [--json] [--root DIR] [table options]\n\n"
		     "Show the carves recorded in the ledger (--state, else $CORECARVE_STATE_DIR, else\n"
		     CC_LEDGER_DIR "; with --root the tree's own), the owner of every CPU: run (a carve\n"
		     "runs there), parked (an idle sibling held for a carve), reserved (kept by the policy\n"
		     "for the host) or free, and each placement class's capacity: the CPUs of its core class\n"
		     "by state and the largest request that fits now.  --svg FILE also draws it as an SVG\n"
		     "picture (\"-\": only the picture, on stdout), with each CPU's interrupt load.\n\n"
		     "  --table NAME  print only that table: carves, cpus, capacity or power\n"
		     "  --kernel      without the ledger: every cpuset partition and exclusive set, with its\n"
		     "                quota, as cgroupfs shows them (for a damaged ledger: corecarve(8))\n\n");
	cc_table_usage(out, NULL, 0, NULL);
	for (int i = 0; i < NTABLES; i++) {
		fprintf(out, "\n%s columns (default %s):\n", table_names[i], tables[i].defaults);
		for (int c = 0; c < tables[i].n; c++)
			fprintf(out, "  %-12s %s\n", tables[i].cols[c].name, tables[i].cols[c].help);
	}
}

/* ---- --kernel: cgroupfs without the ledger ----------------------------------- */

static bool partition_set(const char *p)
{
	return p[0] && strncmp(p, "member", 6);
}

/* Whether `g` belongs in the view: a partition, an exclusive set, one of
 * corecarve's own cgroups, or a quota above one of those. */
static bool kernel_row(const struct cc_audit_snap *snap, int i, const bool *keep)
{
	const struct cc_audit_cgroup *g = &snap->cgroups[i];

	if (keep[i])
		return true;
	if (g->quota < 0)
		return false;
	for (int k = i + 1; k < snap->ncgroups; k++)
		for (int a = snap->cgroups[k].parent; keep[k] && a >= 0; a = snap->cgroups[a].parent)
			if (a == i)
				return true;
	return false;
}

static int print_kernel(const struct cc_root *root, bool json, const struct cc_table_opts *o, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *none = cc_ledger_empty(err);
	struct cc_audit_read_opts ro = { .skip_irqs = true };
	struct cc_audit_snap snap;
	_cleanup_table_ struct cc_table *t = NULL;
	_cleanup_json_ json_t *doc = NULL, *arr = NULL;
	_cleanup_free_ bool *keep = NULL;
	int rc = -1, shown = 0;

	if (!none || cc_audit_snap_read(root, none, &ro, &snap, err) < 0)
		return -1;
	keep = calloc((size_t)snap.ncgroups + 1, sizeof(bool));
	if (!keep) {
		cc_err_sys(err, ENOMEM, "status");
		goto out;
	}
	for (int i = 0; i < snap.ncgroups; i++) {
		const struct cc_audit_cgroup *g = &snap.cgroups[i];

		keep[i] = partition_set(g->partition) || (g->exclusive && !hwloc_bitmap_iszero(g->exclusive)) ||
			  strstr(g->path, "/corecarve.") != NULL;
	}
	if (json ? !(arr = json_array()) : !(t = new_table(T_KERNEL, o, err)))
		goto nomem_or_err;
	for (int i = 0; i < snap.ncgroups; i++) {
		const struct cc_audit_cgroup *g = &snap.cgroups[i];
		_cleanup_free_ char *cpus = NULL, *eff = NULL, *exc = NULL;
		char quota[64];

		if (!kernel_row(&snap, i, keep))
			continue;
		cpus = cc_cpulist_format(g->cpus);
		eff = cc_cpulist_format(g->effective);
		exc = g->exclusive ? cc_cpulist_format(g->exclusive) : strdup("");
		if (!cpus || !eff || !exc)
			goto nomem_or_err;
		/* No period: no cpu controller there, so no cpu.max at all. */
		if (g->quota < 0 && g->period <= 0)
			snprintf(quota, sizeof(quota), "-");
		else if (g->quota < 0)
			snprintf(quota, sizeof(quota), "max %lld", g->period);
		else
			snprintf(quota, sizeof(quota), "%lld %lld", g->quota, g->period);
		shown++;
		if (json) {
			json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:b}", "cgroup", g->path, "partition",
						g->partition, "cpus", cpus, "effective", eff, "exclusive",
						g->exclusive ? exc : NULL, "quota", strcmp(quota, "-") ? quota : NULL,
						"populated", g->populated);

			if (!row || json_array_append_new(arr, row) < 0)
				goto nomem_or_err;
		} else if (cc_table_row(t,
					(const char *[]){ g->path, dash(g->partition), dash(cpus), dash(eff),
							  g->exclusive ? dash(exc) : "(none)", quota,
							  g->populated ? "yes" : "no" },
					err) < 0) {
			goto out;
		}
	}
	if (json) {
		doc = json_pack("{s:i, s:O}", "schema_version", STATUS_SCHEMA, "cgroups", arr);
		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			goto nomem_or_err;
		fputc('\n', stdout);
	} else if (!shown) {
		printf("no partition, exclusive set or corecarve cgroup in cgroupfs\n");
	} else if (cc_table_print(t, stdout, err) < 0) {
		goto out;
	}
	rc = 0;
	goto out;
nomem_or_err:
	if (!cc_err_isset(err))
		cc_err_sys(err, ENOMEM, "status");
out:
	cc_audit_snap_fini(&snap);
	return rc;
}

/* ---- the command ---------------------------------------------------------- */

struct opts {
	struct cc_cli_common common;
	struct cc_table_opts table;
	const char *state, *svg;
	int only; /* -1: every table */
	bool kernel;
};

enum { OPT_KERNEL = 1, OPT_SVG, OPT_STATE, OPT_TABLE };

const struct cc_opt cc_opts_status[] = {
	{ "--kernel", NULL, NULL, OPT_KERNEL, 0, NULL },
	{ "--svg", NULL, "FILE", OPT_SVG, CC_OPT_FILE_NAME, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, CC_OPT_NONEMPTY, NULL },
	{ "--table", NULL, "carves|cpus|capacity|power", OPT_TABLE, CC_OPT_NONEMPTY, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(0, NULL),
	CC_CLI_OPTS_TABLE(NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	o->only = -1;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_status, NULL, argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_KERNEL:
			o->kernel = true;
			break;
		case OPT_SVG:
			o->svg = v;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		case OPT_TABLE:
			for (o->only = 0; o->only < T_KERNEL && strcmp(table_names[o->only], v); o->only++)
				;
			if (o->only == T_KERNEL)
				return cc_err_set(err, EINVAL, "--table: expected carves, cpus, capacity or power, got \"%s\"", v);
			break;
		default:
			if ((r = cc_table_set(&o->table, id, v, err)) < 0)
				return -1;
			if (!r && !cc_cli_common_set(&o->common, id, v))
				return cc_err_set(err, EINVAL, "status: unexpected argument \"%s\" (see corecarve status --help)", v);
		}
	}
	if (o->kernel && (o->svg || o->only >= 0 || o->common.xml || o->common.synthetic || o->state))
		return cc_err_set(err, EINVAL,
				  "status: --kernel reads cgroupfs (the host or --root), not the ledger or a topology: "
				  "--svg, --table, --state, --hwloc-xml and --synthetic do not go with it");
	if (o->table.output && o->only < 0 && !o->kernel)
		return cc_err_set(err, EINVAL, "--output: name the table it applies to with --table carves|cpus|capacity|power");
	if (o->svg && !strcmp(o->svg, "-") && o->common.json)
		return cc_err_set(err, EINVAL, "status: --svg - and --json both write stdout; write the picture to a file");
	return 0;
}

int cc_cmd_status(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct status s = { 0 };
	struct cc_cli_lock lock;
	const char *state = NULL;
	char buf[PATH_MAX];
	int rc = parse(argc, argv, &o, &err);

	if (rc)
		return rc > 0 ? CC_EXIT_OK : cc_cli_fail(&err);
	if (o.kernel) {
		root = cc_root_open(o.common.root ? o.common.root : "/", &err);
		if (!root)
			return cc_err_prefix(&err, "--root"), cc_cli_fail(&err);
		return print_kernel(root, o.common.json, &o.table, &err) < 0 ? cc_cli_fail(&err) : CC_EXIT_OK;
	}
	if (cc_cli_state_dir(o.state, o.common.root, buf, sizeof(buf), &state, &err) < 0 ||
	    cc_cli_lock(&lock, argc, argv, &err) < 0)
		return cc_cli_fail(&err);
	ledger = cc_cli_ledger_open(state, CC_LEDGER_READ, &lock.lock, &err);
	if (!ledger || cc_cli_load(&o.common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	reserved = cc_policy_reserved(policy, topo);
	if (!reserved) {
		cc_err_sys(&err, ENOMEM, "status");
		return cc_cli_fail(&err);
	}
	s.ledger = ledger;
	s.topo = topo;
	if (build_rows(&s, reserved, &err) < 0 || cc_capacity_compute(topo, policy, ledger, &s.cap, &s.ncap, &err) < 0)
		goto fail;
	if (o.svg) {
		if (write_svg(&s, &o.common, root, o.svg, &err) < 0)
			goto fail;
		if (!strcmp(o.svg, "-"))
			goto done;
	}
	if (o.common.json) {
		rc = print_json(&s, &err);
	} else if (o.only == T_CARVES) {
		rc = print_carves(&s, &o.table, &err);
	} else if (o.only == T_CPUS) {
		rc = print_owners(&s, &o.table, &err);
	} else if (o.only == T_CAPACITY) {
		rc = print_capacity(&s, &o.table, &err);
	} else if (o.only == T_POWER) {
		rc = print_power(&s, &o.table, false, &err);
	} else if (!cc_ledger_ncarves(ledger)) {
		/* Still worth showing: what each class could carve. */
		printf("no carves%s\n\n", !state && access(CC_LEDGER_DIR, F_OK) < 0
						   ? " (" CC_LEDGER_DIR " does not exist yet: no carve since boot)"
						   : "");
		rc = print_capacity(&s, &o.table, &err);
	} else {
		rc = print_carves(&s, &o.table, &err);
		if (rc == 0)
			printf("\n");
		if (rc == 0)
			rc = print_owners(&s, &o.table, &err);
		if (rc == 0)
			printf("\n");
		if (rc == 0)
			rc = print_capacity(&s, &o.table, &err);
		if (rc == 0)
			printf("\n");
		if (rc == 0)
			rc = print_map(&s, &err);
		if (rc == 0)
			rc = print_power(&s, &o.table, true, &err);
	}
	if (rc < 0)
		goto fail;
done:
	free(s.rows);
	free(s.cap);
	return CC_EXIT_OK;
fail:
	free(s.rows);
	free(s.cap);
	return cc_cli_fail(&err);
}
