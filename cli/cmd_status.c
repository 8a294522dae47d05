/* corecarve status: the carves in the ledger, and which carve owns which
 * CPU of the topology.  Reads a snapshot (shared lock): never changes the
 * ledger, never creates the state directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "ledger.h"
#include "power.h"
#include "svg.h"

#define SHORT_ID 12

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve status [--json] [--state DIR] [--root DIR | --hwloc-xml FILE | --synthetic DESC]\n"
		     "                        [--policy FILE] [--svg FILE]\n\n"
		     "Show the carves recorded in the ledger (--state, else $CORECARVE_STATE_DIR, else\n"
		     CC_LEDGER_DIR ") and the owner of every CPU: run (a carve runs there), parked\n"
		     "(an idle sibling held for a carve), reserved (kept by the policy for the host)\n"
		     "or free.  --svg FILE also draws it as an SVG picture (\"-\": only the picture,\n"
		     "on stdout), with each CPU's interrupt load.\n");
}

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
		for (int i = 0; i < s->ledger->ncarves; i++) {
			const struct cc_carve *c = &s->ledger->carves[i];

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

	if (!doc || json_object_set_new(doc, "carves", carves) < 0 || json_object_set_new(doc, "cpus", cpus) < 0)
		return cc_err_sys(err, ENOMEM, "status");
	for (int i = 0; i < s->ledger->ncarves; i++) {
		const struct cc_carve *c = &s->ledger->carves[i];
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
		    json_object_set_new(o, "created", json_integer(c->created)) < 0)
			return cc_err_sys(err, ENOMEM, "status");
	}
	for (int i = 0; i < s->nrows; i++) {
		const struct cpu_row *r = &s->rows[i];
		json_t *o = json_object();

		if (!o || json_array_append_new(cpus, o) < 0 || json_object_set_new(o, "cpu", json_integer(r->cpu)) < 0 ||
		    json_object_set_new(o, "owner",
					r->carve >= 0 ? json_string(s->ledger->carves[r->carve].id) : json_null()) < 0 ||
		    json_object_set_new(o, "role", json_string(role_names[r->role])) < 0)
			return cc_err_sys(err, ENOMEM, "status");
	}
	/* The power records as the ledger holds them (docs/power.md). */
	{
		json_t *power = json_object_get(json_object_get(s->ledger->sections, CC_POWER_SECTION), "files");

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

/* One line per power setting held: how many files, the values set, who
 * relies on them. */
static int print_power(const struct status *s, struct cc_err *err)
{
	struct cc_noderecs st;

	if (cc_power_recs_load(s->ledger, &st, err) < 0)
		return -1;
	if (st.n)
		printf("\npower settings held (originals are restored by the last carve that needs them):\n");
	for (int k = 0; k < CC_POWER_NKINDS; k++) {
		char values[128] = "", owners[256] = "", id[16];
		int n = 0;

		for (int i = 0; i < st.n; i++) {
			const struct cc_noderec *r = &st.r[i];

			if ((int)cc_power_rec_kind(r) != k)
				continue;
			n++;
			list_add(values, sizeof(values), cc_power_rec_value(r));
			for (int o = 0; o < r->nowners; o++) {
				snprintf(id, sizeof(id), "%.12s", r->owners[o].id);
				list_add(owners, sizeof(owners), id);
			}
		}
		if (n)
			printf("  %-10s %s on %d file%s, for %s\n", cc_power_kind_name((enum cc_power_kind)k), values, n,
			       n == 1 ? "" : "s", owners[0] ? owners : "(no carve: not restored, see corecarve audit)");
	}
	cc_noderecs_fini(&st);
	return 0;
}

#define NCOLS 8

/* Columns as wide as their widest cell; the last one is not padded. */
static void print_table(const char *const (*rows)[NCOLS], int nrows, int ncols)
{
	int width[NCOLS] = { 0 };

	for (int r = 0; r < nrows; r++)
		for (int c = 0; c < ncols; c++)
			if ((int)strlen(rows[r][c]) > width[c])
				width[c] = (int)strlen(rows[r][c]);
	for (int r = 0; r < nrows; r++) {
		int last = ncols - 1;

		while (last > 0 && !rows[r][last][0])
			last--;
		for (int c = 0; c <= last; c++)
			printf(c < last ? "%-*s  " : "%-*s\n", c < last ? width[c] : 0, rows[r][c]);
	}
}

static void short_id(const char *id, char out[SHORT_ID + 1])
{
	snprintf(out, SHORT_ID + 1, "%.*s", SHORT_ID, id);
}

static int print_carves(const struct status *s, struct cc_err *err)
{
	const struct cc_ledger *l = s->ledger;
	int n = l->ncarves + 1;
	const char *(*rows)[NCOLS] = calloc((size_t)n, sizeof(*rows));
	char (*ids)[SHORT_ID + 1] = calloc((size_t)n, sizeof(*ids));
	char **lists = calloc((size_t)n * 3, sizeof(*lists));
	int rc = 0;

	if (!rows || !ids || !lists) {
		rc = cc_err_sys(err, ENOMEM, "status");
		goto out;
	}
	rows[0][0] = "CARVE";
	rows[0][1] = "CLASS";
	rows[0][2] = "CORE CLASS";
	rows[0][3] = "CPUS";
	rows[0][4] = "PARKED";
	rows[0][5] = "MEMS";
	rows[0][6] = "MODE";
	rows[0][7] = "CGROUP";
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = &l->carves[i];
		const char **row = rows[i + 1];

		short_id(c->id, ids[i]);
		lists[3 * i] = cc_cpulist_format(c->cpus);
		lists[3 * i + 1] = cc_cpulist_format(c->parked);
		lists[3 * i + 2] = cc_cpulist_format(c->mems);
		if (!lists[3 * i] || !lists[3 * i + 1] || !lists[3 * i + 2]) {
			rc = cc_err_sys(err, ENOMEM, "status");
			goto out;
		}
		row[0] = ids[i];
		row[1] = c->class_name[0] ? c->class_name : "-";
		row[2] = c->core_class[0] ? c->core_class : "-";
		row[3] = lists[3 * i][0] ? lists[3 * i] : "-";
		row[4] = lists[3 * i + 1][0] ? lists[3 * i + 1] : "-";
		row[5] = lists[3 * i + 2][0] ? lists[3 * i + 2] : "-";
		row[6] = c->mode;
		row[7] = c->cgroup[0] ? c->cgroup : "-";
	}
	print_table((const char *const (*)[NCOLS])rows, n, NCOLS);
out:
	if (lists)
		for (int i = 0; i < 3 * n; i++)
			free(lists[i]);
	free(lists);
	free(ids);
	free(rows);
	return rc;
}

/* One line per run of consecutive CPUs with the same role and owner. */
static int print_owners(const struct status *s, struct cc_err *err)
{
	const char *(*rows)[NCOLS] = calloc((size_t)s->nrows + 1, sizeof(*rows));
	char **lists = calloc((size_t)s->nrows + 1, sizeof(*lists));
	char (*ids)[SHORT_ID + 1] = calloc((size_t)s->nrows + 1, sizeof(*ids));
	int n = 1, rc = 0;

	if (!rows || !lists || !ids) {
		rc = cc_err_sys(err, ENOMEM, "status");
		goto out;
	}
	rows[0][0] = "CPUS";
	rows[0][1] = "ROLE";
	rows[0][2] = "OWNER";
	for (int i = 0; i < s->nrows;) {
		const struct cpu_row *r = &s->rows[i];
		int j = i + 1;

		while (j < s->nrows && s->rows[j].cpu == s->rows[j - 1].cpu + 1 && s->rows[j].role == r->role &&
		       s->rows[j].carve == r->carve)
			j++;
		if (j - i == 1)
			rc = asprintf(&lists[n], "%d", r->cpu);
		else
			rc = asprintf(&lists[n], "%d-%d", r->cpu, s->rows[j - 1].cpu);
		if (rc < 0) {
			lists[n] = NULL;
			rc = cc_err_sys(err, ENOMEM, "status");
			goto out;
		}
		rc = 0;
		if (r->carve >= 0)
			short_id(s->ledger->carves[r->carve].id, ids[n]);
		rows[n][0] = lists[n];
		rows[n][1] = role_names[r->role];
		rows[n][2] = ids[n];
		n++;
		i = j;
	}
	print_table((const char *const (*)[NCOLS])rows, n, 3);
out:
	if (lists)
		for (int i = 0; i < n; i++)
			free(lists[i]);
	free(lists);
	free(ids);
	free(rows);
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
			short_id(s->ledger->carves[r->carve].id, id);
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
		owners[pu] = r->carve >= 0 ? s->ledger->carves[r->carve].id : NULL;
	}
	snprintf(title, sizeof(title), "corecarve status: %d carve%s on %s", s->ledger->ncarves,
		 s->ledger->ncarves == 1 ? "" : "s", s->topo->source);
	if (cc_cli_svg_irqs(common, root, &irqs, note, sizeof(note)) > 0)
		view.irqs = &irqs;
	view.note = note[0] ? note : NULL;
	rc = cc_cli_write_svg(path, s->topo, &view, err);
	cc_interrupts_fini(&irqs);
	free(roles);
	free(owners);
	return rc;
}

int cc_cmd_status(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	_cleanup_ledger_ struct cc_ledger *ledger = NULL;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct status s = { 0 };
	struct cc_cli_lock lock;
	const char *state = NULL, *svg = NULL;
	int rc;

	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CC_EXIT_OK;
		}
		if (!strncmp(argv[i], "--svg=", 6) || !strcmp(argv[i], "--svg")) {
			svg = argv[i][5] == '=' ? argv[i] + 6 : i + 1 < argc ? argv[++i] : "";
			if (!*svg) {
				cc_err_set(&err, EINVAL, "--svg: missing file name");
				return cc_cli_fail(&err);
			}
			continue;
		}
		if (!strncmp(argv[i], "--state=", 8)) {
			state = argv[i] + 8;
			continue;
		}
		if (!strcmp(argv[i], "--state")) {
			if (i + 1 >= argc) {
				cc_err_set(&err, EINVAL, "--state: missing argument");
				return cc_cli_fail(&err);
			}
			state = argv[++i];
			continue;
		}
		r = cc_cli_common_opt(&common, argc, argv, &i, &err);
		if (r < 0)
			return cc_cli_fail(&err);
		if (r == 0) {
			cc_err_set(&err, EINVAL, "status: unexpected argument \"%s\" (see corecarve status --help)", argv[i]);
			return cc_cli_fail(&err);
		}
	}
	if (!state || !*state)
		state = getenv("CORECARVE_STATE_DIR");
	if (state && !*state)
		state = NULL;
	if (cc_cli_lock(&lock, argc, argv, &err) < 0)
		return cc_cli_fail(&err);

	ledger = cc_ledger_open_as(state, CC_LEDGER_READ, &lock.lock, &err);
	if (!ledger)
		return cc_cli_fail(&err);
	if (ledger->ncarves == 0 && !common.json && !svg) {
		printf("no carves\n");
		return CC_EXIT_OK;
	}
	if (cc_cli_load(&common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	reserved = cc_policy_reserved(policy, topo);
	if (!reserved) {
		cc_err_sys(&err, ENOMEM, "status");
		return cc_cli_fail(&err);
	}
	s.ledger = ledger;
	s.topo = topo;
	if (build_rows(&s, reserved, &err) < 0)
		return cc_cli_fail(&err);
	if (svg) {
		rc = write_svg(&s, &common, root, svg, &err);
		if (rc < 0 || !strcmp(svg, "-")) {
			free(s.rows);
			return rc < 0 ? cc_cli_fail(&err) : CC_EXIT_OK;
		}
		if (ledger->ncarves == 0 && !common.json) {
			free(s.rows);
			printf("no carves\n");
			return CC_EXIT_OK;
		}
	}
	if (common.json) {
		rc = print_json(&s, &err);
	} else {
		rc = print_carves(&s, &err);
		if (rc == 0) {
			printf("\n");
			rc = print_owners(&s, &err);
		}
		if (rc == 0) {
			printf("\n");
			rc = print_map(&s, &err);
		}
		if (rc == 0)
			rc = print_power(&s, &err);
	}
	free(s.rows);
	if (rc < 0)
		return cc_cli_fail(&err);
	return CC_EXIT_OK;
}
