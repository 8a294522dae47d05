/* corecarve: the human topology map.
 *
 * One block per package / NUMA node, one sub-block per last-level cache,
 * then one row per run of cores: cores with a private L2 and the same
 * class share a row; the cores of an L2 cluster get a row of their own,
 * marked as such.  Each row starts with the class tag, each core shows its
 * id and its CPUs (SMT siblings).  Lines stay within 80 columns. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "topo.h"

#define MAP_WIDTH 80
#define TAG_MAX 8

struct map {
	FILE *out;
	const struct cc_topo *t;
	const struct cc_topo_view *view;
	char (*tags)[TAG_MAX]; /* per class */
	int tagw;
	char **cells; /* per core: "c3 [6,7]" */
	int cellw;
	int notecol; /* column where cluster notes start */
	int listw;   /* width of the cpu-list column of the class table */
	bool failed;
};

/* Class tags: P, M (or M1, M2...), E, L for the standard names; other
 * names (overrides) take their upper-cased initial, or the first free
 * letter. */
static void make_tags(struct map *m)
{
	const struct cc_topo *t = m->t;

	for (int i = 0; i < t->nclasses; i++) {
		const char *n = t->classes[i].name;
		char *tag = m->tags[i];

		if (strcmp(n, "performance") == 0)
			snprintf(tag, TAG_MAX, "P");
		else if (strcmp(n, "efficient") == 0)
			snprintf(tag, TAG_MAX, "E");
		else if (strcmp(n, "low-power") == 0)
			snprintf(tag, TAG_MAX, "L");
		else if (strcmp(n, "mid") == 0)
			snprintf(tag, TAG_MAX, "M");
		else if (strncmp(n, "mid-", 4) == 0 && strlen(n) < TAG_MAX + 3)
			snprintf(tag, TAG_MAX, "M%s", n + 4);
		else
			tag[0] = '\0';
	}
	for (int i = 0; i < t->nclasses; i++) {
		char *tag = m->tags[i];
		char cand[2] = { 0, 0 };

		if (tag[0])
			continue;
		cand[0] = (char)toupper((unsigned char)t->classes[i].name[0]);
		for (int tries = 0; tries < 27; tries++) {
			bool used = !isalpha((unsigned char)cand[0]);

			for (int j = 0; j < t->nclasses && !used; j++)
				used = j != i && strcmp(m->tags[j], cand) == 0;
			if (!used)
				break;
			cand[0] = (char)('A' + tries % 26);
		}
		snprintf(tag, TAG_MAX, "%s", cand);
	}
	m->tagw = 1;
	for (int i = 0; i < t->nclasses; i++)
		if ((int)strlen(m->tags[i]) > m->tagw)
			m->tagw = (int)strlen(m->tags[i]);
}

/* "c3 [6,7]"; a CPU outside the caller's allowed set gets a '!'. */
static char *core_cell(const struct cc_topo *t, int id)
{
	const struct cc_core *c = &t->cores[id];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int cpu, n = 0;

	if (!f)
		return NULL;
	fprintf(f, "c%d [", id);
	hwloc_bitmap_foreach_begin(cpu, c->pus)
	{
		fprintf(f, "%s%d%s", n++ ? "," : "", cpu,
			hwloc_bitmap_isset(t->allowed, (unsigned)cpu) ? "" : "!");
	}
	hwloc_bitmap_foreach_end();
	fputc(']', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void size_str(unsigned long long size, char *buf, size_t len)
{
	if (!size)
		snprintf(buf, len, "%s", "");
	else if (size >= (1ull << 20) && size % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", size >> 20);
	else if (size >= (1ull << 20))
		snprintf(buf, len, "%.2f MiB", (double)size / (1 << 20));
	else
		snprintf(buf, len, "%llu KiB", size >> 10);
}

static const char *plural(int n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* One row: indent, tag column, cells packed to the width, and a note after
 * the cells of the first line (or on a line of its own if it does not fit). */
static void emit_row(struct map *m, const char *tag, const int *cores, int n, const char *note)
{
	int prefix = 4 + m->tagw + 2;
	int per = (MAP_WIDTH - prefix) / m->cellw;
	int nlines;

	if (per < 1)
		per = 1;
	nlines = (n + per - 1) / per;
	for (int line = 0; line < nlines; line++) {
		int col = fprintf(m->out, "    %-*s  ", m->tagw, line == 0 ? tag : "");

		for (int k = line * per; k < n && k < (line + 1) * per; k++) {
			bool last = k + 1 == n || k + 1 == (line + 1) * per;
			const char *cell = m->cells[cores[k]];

			if (last)
				col += fprintf(m->out, "%s", cell);
			else
				col += fprintf(m->out, "%-*s", m->cellw, cell);
		}
		if (line == 0 && note && *note) {
			if (col < m->notecol && m->notecol + 2 + (int)strlen(note) <= MAP_WIDTH)
				col += fprintf(m->out, "%*s", m->notecol - col, "");
			if (col + 2 + (int)strlen(note) <= MAP_WIDTH)
				fprintf(m->out, "  %s", note);
			else
				fprintf(m->out, "\n    %-*s  %s", m->tagw, "", note);
		}
		fputc('\n', m->out);
	}
}

/* With labels: one core per line, then each CPU's label (or one label for
 * the whole core when its CPUs agree). */
static void emit_labelled(struct map *m, const char *tag, int id)
{
	const struct cc_topo *t = m->t;
	const struct cc_core *c = &t->cores[id];
	const char *first = NULL;
	bool same = true;
	int cpu, col, items = 0;

	hwloc_bitmap_foreach_begin(cpu, c->pus)
	{
		const char *l = m->view->pu_labels[cc_topo_pu_index(t, cpu)];

		if (!first)
			first = l ? l : "";
		else if (strcmp(first, l ? l : "") != 0)
			same = false;
	}
	hwloc_bitmap_foreach_end();
	if (same && !(first && *first)) {
		fprintf(m->out, "    %-*s  %s\n", m->tagw, tag, m->cells[id]);
		return;
	}
	col = fprintf(m->out, "    %-*s  %-*s", m->tagw, tag, m->cellw, m->cells[id]);
	if (same) {
		/* Long labels (container ids) are cut to the width. */
		int room = MAP_WIDTH - col;

		if ((int)strlen(first) <= room || room < 4)
			fprintf(m->out, "%s", first);
		else
			fprintf(m->out, "%.*s...", room - 3, first);
	} else {
		hwloc_bitmap_foreach_begin(cpu, c->pus)
		{
			const char *l = m->view->pu_labels[cc_topo_pu_index(t, cpu)];
			char item[96];
			int w;

			int indent = 4 + m->tagw + 2 + m->cellw;

			w = snprintf(item, sizeof(item), "%s%d=%s", items++ ? " " : "", cpu, l && *l ? l : "-");
			if (col + w > MAP_WIDTH && items > 1) {
				fprintf(m->out, "\n%*s", indent, "");
				col = indent;
				w = snprintf(item, sizeof(item), "%d=%s", cpu, l && *l ? l : "-");
			}
			if (w >= (int)sizeof(item))
				w = (int)sizeof(item) - 1;
			if (col + w > MAP_WIDTH && MAP_WIDTH - col > 4)
				snprintf(item + (MAP_WIDTH - col - 3), 4, "...");
			col += fprintf(m->out, "%s", item);
		}
		hwloc_bitmap_foreach_end();
	}
	fputc('\n', m->out);
}

static const char *row_tag(struct map *m, const int *cores, int n)
{
	int cls = m->t->cores[cores[0]].cls;

	for (int k = 1; k < n; k++)
		if (m->t->cores[cores[k]].cls != cls)
			return "*";
	return cls >= 0 ? m->tags[cls] : "?";
}

/* The rows of the cores of `block` (a package/NUMA pair) under one LLC
 * (-1: cores without a last-level cache). */
static void emit_llc_rows(struct map *m, int pkg, int numa, int llc, int *buf)
{
	const struct cc_topo *t = m->t;
	bool labels = m->view && m->view->pu_labels;
	int n = 0;

	for (int id = 0; id <= t->ncores; id++) {
		const struct cc_core *c = id < t->ncores ? &t->cores[id] : NULL;
		bool mine = c && c->package == pkg && c->numa == numa && c->llc == llc;
		bool shared = mine && c->l2 >= 0 && t->l2s[c->l2].ncores > 1;
		bool joins = mine && n > 0 && !shared &&
			     !(t->cores[buf[0]].l2 >= 0 && t->l2s[t->cores[buf[0]].l2].ncores > 1) &&
			     t->cores[buf[0]].cls == c->cls;
		bool same_cluster = mine && shared && n > 0 && t->cores[buf[0]].l2 == c->l2;

		if (c && !mine)
			continue;
		if (n > 0 && !joins && !same_cluster) {
			const struct cc_core *f = &t->cores[buf[0]];
			char note[96] = "";

			if (f->l2 >= 0 && t->l2s[f->l2].ncores > 1) {
				char sz[32];

				size_str(t->l2s[f->l2].size, sz, sizeof(sz));
				snprintf(note, sizeof(note), "= L2 #%d cluster of %d%s%s%s", f->l2,
					 t->l2s[f->l2].ncores, sz[0] ? " (" : "", sz, sz[0] ? ")" : "");
			}
			if (labels) {
				if (note[0])
					fprintf(m->out, "    %-*s  %s\n", m->tagw, "", note);
				for (int k = 0; k < n; k++)
					emit_labelled(m, row_tag(m, &buf[k], 1), buf[k]);
			} else {
				emit_row(m, row_tag(m, buf, n), buf, n, note);
			}
			n = 0;
		}
		if (mine)
			buf[n++] = id;
	}
}

static void emit_block(struct map *m, int pkg, int numa, int *buf)
{
	const struct cc_topo *t = m->t;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t llcs = hwloc_bitmap_alloc();
	_cleanup_free_ char *list = NULL;
	bool nollc = false;
	int ncores = 0, l;

	if (!cpus || !llcs) {
		m->failed = true;
		return;
	}
	for (int id = 0; id < t->ncores; id++) {
		const struct cc_core *c = &t->cores[id];

		if (c->package != pkg || c->numa != numa)
			continue;
		ncores++;
		hwloc_bitmap_or(cpus, cpus, c->pus);
		if (c->llc >= 0)
			hwloc_bitmap_set(llcs, (unsigned)c->llc);
		else
			nollc = true;
	}
	list = cc_cpulist_format(cpus);
	fprintf(m->out, "\nPackage %d", pkg);
	if (pkg >= 0 && t->packages[pkg].os >= 0 && t->packages[pkg].os != pkg)
		fprintf(m->out, " (id %d)", t->packages[pkg].os);
	if (numa >= 0)
		fprintf(m->out, ", NUMA node %d", t->numa[numa].os >= 0 ? t->numa[numa].os : numa);
	fprintf(m->out, ": %d %s, CPUs %s\n", ncores, plural(ncores, "core", "cores"), list ? list : "?");

	hwloc_bitmap_foreach_begin(l, llcs)
	{
		const struct cc_domain *d = &t->llcs[l];
		_cleanup_free_ char *ll = cc_cpulist_format(d->cpus);
		char sz[32];

		size_str(d->size, sz, sizeof(sz));
		fprintf(m->out, "  L%d #%d%s%s%s: %d %s, CPUs %s%s\n", d->level, d->id, sz[0] ? " (" : "", sz,
			sz[0] ? ")" : "", d->ncores, plural(d->ncores, "core", "cores"), ll ? ll : "?",
			hwloc_bitmap_isincluded(d->cpus, cpus) ? "" : " (spans blocks)");
		emit_llc_rows(m, pkg, numa, l, buf);
	}
	hwloc_bitmap_foreach_end();
	if (nollc) {
		fprintf(m->out, "  no shared cache reported:\n");
		emit_llc_rows(m, pkg, numa, -1, buf);
	}
}

static void emit_classes(struct map *m)
{
	const struct cc_topo *t = m->t;

	fprintf(m->out, "\nClasses (from %s):\n", t->class_source);
	for (int i = 0; i < t->nclasses; i++) {
		const struct cc_class *c = &t->classes[i];
		_cleanup_free_ char *list = cc_cpulist_format(c->cpus);
		int nclusters = 0, size = 0, col;
		char notes[160], left[256];
		bool even = true;

		for (int l = 0; l < t->nl2s; l++) {
			if (t->l2s[l].ncores < 2 || !hwloc_bitmap_isincluded(t->l2s[l].cpus, c->cpus))
				continue;
			if (size && size != t->l2s[l].ncores)
				even = false;
			size = t->l2s[l].ncores;
			nclusters++;
		}
		col = snprintf(notes, sizeof(notes), "%s", c->kind);
		if (c->threads_per_core > 1)
			col += snprintf(notes + col, sizeof(notes) - (size_t)col, ", SMT%d", c->threads_per_core);
		if (nclusters && even)
			snprintf(notes + col, sizeof(notes) - (size_t)col, ", %d %s of %d", nclusters,
				 plural(nclusters, "L2 cluster", "L2 clusters"), size);
		else if (nclusters)
			snprintf(notes + col, sizeof(notes) - (size_t)col, ", %d %s", nclusters,
				 plural(nclusters, "L2 cluster", "L2 clusters"));
		snprintf(left, sizeof(left), "  %-*s  %-12s %4d %-5s %4d %-4s  %-*s", m->tagw, m->tags[i], c->name,
			 c->ncores, plural(c->ncores, "core", "cores"), hwloc_bitmap_weight(c->cpus),
			 plural(hwloc_bitmap_weight(c->cpus), "CPU", "CPUs"), m->listw, list ? list : "?");
		if ((int)strlen(left) + 2 + (int)strlen(notes) <= MAP_WIDTH) {
			fprintf(m->out, "%s  %s\n", left, notes);
		} else {
			size_t n = strlen(left);

			while (n && left[n - 1] == ' ')
				left[--n] = '\0';
			fprintf(m->out, "%s\n  %-*s  %s\n", left, m->tagw, "", notes);
		}
	}
}

static void emit_distances(struct map *m)
{
	const struct cc_topo *t = m->t;

	if (!t->distance || t->nnuma < 2)
		return;
	fprintf(m->out, "\nNUMA distances:\n");
	if (6 + 5 * t->nnuma > MAP_WIDTH) {
		fprintf(m->out, "  %d nodes: see --json\n", t->nnuma);
		return;
	}
	fprintf(m->out, "  node");
	for (int j = 0; j < t->nnuma; j++)
		fprintf(m->out, "%5d", t->numa[j].os);
	fputc('\n', m->out);
	for (int i = 0; i < t->nnuma; i++) {
		fprintf(m->out, "  %4d", t->numa[i].os);
		for (int j = 0; j < t->nnuma; j++)
			fprintf(m->out, "%5d", t->distance[i * t->nnuma + j]);
		fputc('\n', m->out);
	}
}

/* The map's columns: every core's cell (m->cells, allocated by the
 * caller) and the widest, the class tags, the class table's list column,
 * and where cluster notes start.  -1: out of memory. */
static int layout(struct map *m, struct cc_err *err)
{
	const struct cc_topo *t = m->t;
	int prefix, per, widest = 0;

	m->cellw = 0;
	for (int id = 0; id < t->ncores; id++) {
		m->cells[id] = core_cell(t, id);
		if (!m->cells[id])
			return cc_err_sys(err, ENOMEM, "topology map");
		if ((int)strlen(m->cells[id]) + 2 > m->cellw)
			m->cellw = (int)strlen(m->cells[id]) + 2;
	}
	make_tags(m);
	for (int i = 0; i < t->nclasses; i++) {
		_cleanup_free_ char *l = cc_cpulist_format(t->classes[i].cpus);
		int w = l ? (int)strlen(l) : 1;

		if (w > m->listw)
			m->listw = w < 24 ? w : 24;
	}
	/* Cluster notes start in one column: after the widest first line of
	 * a cluster row. */
	prefix = 4 + m->tagw + 2;
	per = (MAP_WIDTH - prefix) / m->cellw;
	for (int l = 0; l < t->nl2s; l++)
		if (t->l2s[l].ncores > widest)
			widest = t->l2s[l].ncores;
	if (per < 1)
		per = 1;
	m->notecol = prefix + (widest < per ? widest : per) * m->cellw - 2;
	return 0;
}

/* The title and the counts, then the CPUs the map leaves out: not
 * present, offline, or outside the allowed set. */
static void emit_header(const struct map *m, const char *online, hwloc_bitmap_t disallowed)
{
	const struct cc_topo *t = m->t;
	FILE *out = m->out;
	int npus = cc_topo_online_pus(t);

	if (m->view && m->view->title) {
		fprintf(out, "%s\n", m->view->title);
	} else {
		/* Long --root paths keep their informative end. */
		int room = MAP_WIDTH - (int)strlen("Topology: ");
		int len = (int)strlen(t->source);

		if (len <= room)
			fprintf(out, "Topology: %s\n", t->source);
		else
			fprintf(out, "Topology: ...%s\n", t->source + len - (room - 3));
	}
	fprintf(out, "%d %s, %d NUMA %s, %d %s, %d L2, %d %s, %d %s online (%s)\n", t->npackages,
		plural(t->npackages, "package", "packages"), t->nnuma, plural(t->nnuma, "node", "nodes"),
		t->nllcs, plural(t->nllcs, "LLC", "LLCs"), t->nl2s, t->ncores, plural(t->ncores, "core", "cores"),
		npus, plural(npus, "CPU", "CPUs"), online);
	if (!hwloc_bitmap_isequal(t->possible, t->online)) {
		_cleanup_free_ char *s = cc_cpulist_format(t->possible);
		_cleanup_free_ char *p = cc_cpulist_format(t->present);

		fprintf(out, "possible CPUs %s, present %s\n", s ? s : "?", p ? p : "?");
	}
	if (!hwloc_bitmap_iszero(t->offline)) {
		_cleanup_free_ char *s = cc_cpulist_format(t->offline);

		fprintf(out, "offline CPUs (never used): %s\n", s ? s : "?");
	}
	hwloc_bitmap_andnot(disallowed, t->online, t->allowed);
	if (!hwloc_bitmap_iszero(disallowed)) {
		_cleanup_free_ char *s = cc_cpulist_format(disallowed);

		fprintf(out, "outside the allowed set (never used, marked !): %s\n", s ? s : "?");
	}
}

/* Memory-only nodes (HBM, CXL) have no block of their own: named once. */
static void emit_memless(const struct map *m)
{
	const struct cc_topo *t = m->t;
	int cmemless = 0;

	for (int n = 0; n < t->nnuma; n++)
		if (t->numa[n].ncores == 0)
			cmemless++;
	if (cmemless) {
		fprintf(m->out, "\nNUMA nodes without CPUs:");
		for (int n = 0; n < t->nnuma; n++)
			if (t->numa[n].ncores == 0)
				fprintf(m->out, " %d", t->numa[n].os);
		fputc('\n', m->out);
	}
}

int cc_topo_map(FILE *out, const struct cc_topo *t, const struct cc_topo_view *view, struct cc_err *err)
{
	_cleanup_free_ char(*tags)[TAG_MAX] = calloc((size_t)t->nclasses + 1, sizeof(*tags));
	_cleanup_free_ int *buf = calloc((size_t)t->ncores + 1, sizeof(int));
	_cleanup_free_ char *online = cc_cpulist_format(t->online);
	_cleanup_bitmap_ hwloc_bitmap_t disallowed = hwloc_bitmap_alloc();
	struct map m = { .out = out, .t = t, .view = view, .tags = tags };
	int rc = 0;

	if (!tags || !buf || !online || !disallowed)
		return cc_err_sys(err, ENOMEM, "topology map");
	m.cells = calloc((size_t)t->ncores + 1, sizeof(char *));
	if (!m.cells)
		return cc_err_sys(err, ENOMEM, "topology map");
	if (layout(&m, err) < 0) {
		rc = -1;
		goto out;
	}
	emit_header(&m, online, disallowed);
	emit_classes(&m);

	/* Blocks in the order their first core appears. */
	for (int id = 0; id < t->ncores; id++) {
		bool seen = false;

		for (int k = 0; k < id && !seen; k++)
			seen = t->cores[k].package == t->cores[id].package && t->cores[k].numa == t->cores[id].numa;
		if (!seen)
			emit_block(&m, t->cores[id].package, t->cores[id].numa, buf);
	}
	emit_memless(&m);
	emit_distances(&m);
	fprintf(out, "\ncN [CPUs] = core N and its hardware threads; \"= L2 ... cluster\" = cores\n"
		     "sharing one L2; rows start with the class tag (* = mixed classes).\n");
	if (ferror(out))
		rc = cc_err_sys(err, errno ? errno : EIO, "topology map: write");
	if (m.failed && rc == 0)
		rc = cc_err_sys(err, ENOMEM, "topology map");
out:
	for (int id = 0; id < t->ncores; id++)
		free(m.cells[id]);
	free(m.cells);
	return rc;
}
