/* corecarve: the SVG picture of a topology (see svg.h).
 *
 * A small flow layout: every box lays its children left to right and
 * wraps at the page width, so a laptop and a 2-socket EPYC both come out
 * readable without per-host tuning.  Nothing here reads the system. */
#define _GNU_SOURCE
#include "svg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

#define PAGE_W 1200 /* wrap width in px; wide hosts grow downwards */
#define PU_W 50
#define PU_H 58
#define PU_GAP 2
#define CORE_PAD 4
#define CORE_HEAD 14
#define BOX_PAD 8
#define BOX_HEAD 18
#define BOX_GAP 8
#define CHAR_W 6.6 /* average width of an 11px sans-serif glyph */
#define MARGIN 12

enum kind { K_ROOT, K_PACKAGE, K_NUMA, K_LLC, K_L2, K_CORE };

struct box {
	enum kind kind;
	int core;           /* K_CORE: core id */
	char label[128];
	int *child;
	int nchild, cap;
	int x, y, w, h;     /* x, y relative to the parent while measuring */
};

struct layout {
	const struct cc_topo *t;
	const struct cc_svg_view *v;
	struct box *b;
	int n, cap;
	bool oom;
};

/* Colours by class name where the name is a standard one, so the same
 * class looks the same on every host; other names take the next free one. */
static const char *const palette[] = { "#4e79a7", "#59a14f", "#f28e2b", "#b07aa1",
				       "#edc948", "#76b7b2", "#ff9da7", "#9c755f" };
#define NPALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

static const char *class_colour(const struct cc_topo *t, int cls)
{
	static const char *const std[] = { "performance", "efficient", "mid", "low-power" };
	const char *n;
	int used = 0;

	if (cls < 0)
		return "#bbbbbb";
	n = t->classes[cls].name;
	for (int i = 0; i < 4; i++)
		if (!strcmp(n, std[i]))
			return palette[i];
	/* mid-1, mid-2, overrides: after the standard four, in rank order. */
	for (int i = 0; i < cls; i++) {
		bool standard = false;

		for (int k = 0; k < 4; k++)
			standard |= !strcmp(t->classes[i].name, std[k]);
		used += !standard;
	}
	return palette[4 + used % (NPALETTE - 4)];
}

static int box_new(struct layout *L, enum kind kind, int parent)
{
	struct box *b;

	if (L->oom)
		return -1;
	if (L->n == L->cap) {
		int cap = L->cap ? 2 * L->cap : 64;
		struct box *nb = realloc(L->b, (size_t)cap * sizeof(*nb));

		if (!nb)
			return L->oom = true, -1;
		L->b = nb;
		L->cap = cap;
	}
	b = &L->b[L->n];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->core = -1;
	if (parent >= 0) {
		struct box *p = &L->b[parent];

		if (p->nchild == p->cap) {
			int cap = p->cap ? 2 * p->cap : 8;
			int *nc = realloc(p->child, (size_t)cap * sizeof(*nc));

			if (!nc)
				return L->oom = true, -1;
			p->child = nc;
			p->cap = cap;
		}
		p->child[p->nchild++] = L->n;
	}
	return L->n++;
}

static void size_str(unsigned long long size, char *buf, size_t len)
{
	if (!size)
		buf[0] = '\0';
	else if (size >= (1ull << 20))
		snprintf(buf, len, " (%llu MiB)", (size + (1ull << 19)) >> 20);
	else
		snprintf(buf, len, " (%llu KiB)", size >> 10);
}

/* Distinct values of `key(core)` among the cores matching the filter, in
 * the order of the first core having each. */
struct filter {
	int package, numa, llc; /* ANY: any value */
};
#define ANY (-1000)

static bool core_matches(const struct cc_core *c, const struct filter *f)
{
	return (f->package == ANY || c->package == f->package) && (f->numa == ANY || c->numa == f->numa) &&
	       (f->llc == ANY || c->llc == f->llc);
}

static int distinct(const struct cc_topo *t, const struct filter *f, int (*key)(const struct cc_core *),
		    int *out)
{
	int n = 0;

	for (int id = 0; id < t->ncores; id++) {
		const struct cc_core *c = &t->cores[id];
		int k = key(c);
		bool seen = false;

		if (!core_matches(c, f))
			continue;
		for (int i = 0; i < n && !seen; i++)
			seen = out[i] == k;
		if (!seen)
			out[n++] = k;
	}
	return n;
}

static int key_package(const struct cc_core *c) { return c->package; }
static int key_numa(const struct cc_core *c) { return c->numa; }
static int key_llc(const struct cc_core *c) { return c->llc; }

static int numa_os(const struct cc_topo *t, int n)
{
	return t->numa[n].os >= 0 ? t->numa[n].os : n;
}

/* Cores of one (package, numa, llc): shared-L2 clusters get a box; cores
 * with a private L2 sit directly in the LLC. */
static void add_cores(struct layout *L, int parent, const struct filter *f)
{
	const struct cc_topo *t = L->t;
	int *cluster_box = calloc((size_t)t->nl2s + 1, sizeof(int));

	if (!cluster_box) {
		L->oom = true;
		return;
	}
	for (int i = 0; i < t->nl2s; i++)
		cluster_box[i] = -1;
	for (int id = 0; id < t->ncores; id++) {
		const struct cc_core *c = &t->cores[id];
		int into = parent, b;

		if (!core_matches(c, f))
			continue;
		if (c->l2 >= 0 && t->l2s[c->l2].ncores > 1) {
			if (cluster_box[c->l2] < 0) {
				char sz[32];

				cluster_box[c->l2] = box_new(L, K_L2, parent);
				if (cluster_box[c->l2] < 0)
					break;
				size_str(t->l2s[c->l2].size, sz, sizeof(sz));
				snprintf(L->b[cluster_box[c->l2]].label, sizeof(L->b[0].label), "L2 cluster%s", sz);
			}
			into = cluster_box[c->l2];
		}
		b = box_new(L, K_CORE, into);
		if (b < 0)
			break;
		L->b[b].core = id;
		snprintf(L->b[b].label, sizeof(L->b[b].label), "core %d", id);
	}
	free(cluster_box);
}

static void build(struct layout *L)
{
	const struct cc_topo *t = L->t;
	int n = t->ncores + 1;
	_cleanup_free_ int *pk = calloc((size_t)n, sizeof(int));
	_cleanup_free_ int *nu = calloc((size_t)n, sizeof(int));
	_cleanup_free_ int *ll = calloc((size_t)n, sizeof(int));
	struct filter f = { ANY, ANY, ANY };
	int root, npk;

	if (!pk || !nu || !ll || (root = box_new(L, K_ROOT, -1)) < 0) {
		L->oom = true;
		return;
	}
	npk = distinct(t, &f, key_package, pk);
	for (int i = 0; i < npk && !L->oom; i++) {
		int pb = box_new(L, K_PACKAGE, root), nnu;
		size_t len;

		if (pb < 0)
			return;
		f = (struct filter){ pk[i], ANY, ANY };
		nnu = distinct(t, &f, key_numa, nu);
		len = (size_t)snprintf(L->b[pb].label, sizeof(L->b[pb].label), "Package %d", pk[i]);
		/* One NUMA node per package (desktops, most servers): one box. */
		if (nnu == 1 && nu[0] >= 0)
			snprintf(L->b[pb].label + len, sizeof(L->b[pb].label) - len, " \xc2\xb7 NUMA node %d",
				 numa_os(t, nu[0]));
		for (int j = 0; j < nnu && !L->oom; j++) {
			int nb = pb, nll;

			if (nnu > 1) {
				nb = box_new(L, K_NUMA, pb);
				if (nb < 0)
					return;
				if (nu[j] >= 0)
					snprintf(L->b[nb].label, sizeof(L->b[nb].label), "NUMA node %d", numa_os(t, nu[j]));
				else
					snprintf(L->b[nb].label, sizeof(L->b[nb].label), "no NUMA node");
			}
			f = (struct filter){ pk[i], nu[j], ANY };
			nll = distinct(t, &f, key_llc, ll);
			for (int k = 0; k < nll && !L->oom; k++) {
				int lb = nb;

				f = (struct filter){ pk[i], nu[j], ll[k] };
				if (ll[k] >= 0) {
					const struct cc_domain *d = &t->llcs[ll[k]];
					char sz[32];

					lb = box_new(L, K_LLC, nb);
					if (lb < 0)
						return;
					size_str(d->size, sz, sizeof(sz));
					snprintf(L->b[lb].label, sizeof(L->b[lb].label), "L%d #%d%s", d->level ? d->level : 3,
						 d->id, sz);
				}
				add_cores(L, lb, &f);
			}
		}
	}
}

static int text_w(const char *s)
{
	return (int)(strlen(s) * CHAR_W) + 4;
}

static void measure(struct layout *L, int i, int maxw)
{
	struct box *b = &L->b[i];
	int pad = b->kind == K_ROOT ? 0 : BOX_PAD, head = b->kind == K_ROOT ? 0 : BOX_HEAD;
	int inner = maxw - 2 * pad, x = 0, y = 0, rowh = 0, w = 0;

	if (b->kind == K_CORE) {
		int npus = L->t->cores[b->core].npus;

		if (npus < 1)
			npus = 1;
		b->w = npus * PU_W + (npus - 1) * PU_GAP + 2 * CORE_PAD;
		b->h = CORE_HEAD + PU_H + CORE_PAD;
		return;
	}
	for (int k = 0; k < b->nchild; k++) {
		struct box *c;

		measure(L, b->child[k], inner);
		c = &L->b[b->child[k]];
		if (x > 0 && x + c->w > inner) {
			y += rowh + BOX_GAP;
			x = 0;
			rowh = 0;
		}
		c->x = x;
		c->y = y;
		x += c->w + BOX_GAP;
		if (x - BOX_GAP > w)
			w = x - BOX_GAP;
		if (c->h > rowh)
			rowh = c->h;
	}
	if (text_w(b->label) > w)
		w = text_w(b->label);
	b->w = w + 2 * pad;
	b->h = head + y + rowh + pad;
}

/* ---- output --------------------------------------------------------------- */

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

static void text(FILE *out, int x, int y, const char *attrs, const char *s)
{
	fprintf(out, "<text x=\"%d\" y=\"%d\"%s%s>", x, y, attrs ? " " : "", attrs ? attrs : "");
	put_escaped(out, s);
	fputs("</text>\n", out);
}

static enum cc_svg_role role_of(const struct layout *L, int pu)
{
	return L->v && L->v->roles ? L->v->roles[pu] : CC_SVG_FREE;
}

static const char *owner_of(const struct layout *L, int pu)
{
	return L->v && L->v->owners ? L->v->owners[pu] : NULL;
}

static const struct cc_interrupts *irqs_of(const struct layout *L)
{
	return L->v && L->v->irqs && L->v->irqs->ncpus > 0 ? L->v->irqs : NULL;
}


/* The owner as a cell fits it: 9 characters at font-size 9 (7 in a parked
 * sibling's parentheses).  A container id is cut (its first characters are
 * what `status` shows); `exec:4343` or `vm:db1` is whole when it fits, else
 * the part after the kind, so no two exec carves read the same. */
static void short_owner(const char *owner, bool parked, char *buf, size_t len)
{
	int room = parked ? 7 : 9;
	const char *colon = strchr(owner, ':');
	const char *s = (int)strlen(owner) <= room || !colon ? owner : colon + 1;
	int n = (int)strlen(s) <= room ? (int)strlen(s) : colon ? room : 7;

	snprintf(buf, len, parked ? "(%.*s)" : "%.*s", n, s);
}

static void draw_pu(struct layout *L, FILE *out, int cpu, int x, int y)
{
	const struct cc_topo *t = L->t;
	int pu = cc_topo_pu_index(t, cpu);
	const struct cc_pu *p = &t->pus[pu];
	const char *colour = class_colour(t, p->cls);
	enum cc_svg_role role = role_of(L, pu);
	const char *owner = owner_of(L, pu);
	const struct cc_interrupts *irq = irqs_of(L);
	unsigned long long n = irq && cpu < irq->ncpus ? irq->count[cpu] : 0;
	static const char *const role_word[] = { "free", "reserved", "runs", "parked" };
	char line[64], num[16];

	fprintf(out, "<g class=\"cpu %s\" data-cpu=\"%d\">\n<title>CPU %d: %s", role_word[role], cpu, cpu,
		p->cls >= 0 ? t->classes[p->cls].name : "no class");
	if (owner && *owner) {
		fprintf(out, ", %s ", role == CC_SVG_PARKED ? "parked for" : "carved by");
		put_escaped(out, owner);
	} else if (role == CC_SVG_RESERVED) {
		fputs(", reserved for the host", out);
	}
	if (irq)
		fprintf(out, ", %llu interrupts", n);
	if (!p->allowed)
		fputs(", outside the allowed cpuset", out);
	fputs("</title>\n", out);
	/* The body says who owns the CPU; the band on top always shows its class. */
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
		x, y, PU_W, PU_H, role == CC_SVG_RESERVED ? "#9a9a9a" : colour,
		role == CC_SVG_RUN ? "0.75" : role == CC_SVG_RESERVED ? "0.55" : "0.18",
		role == CC_SVG_RUN ? "#111111" : "#777777", role == CC_SVG_RUN ? "2.5" : "0.8");
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"6\" fill=\"%s\"/>\n", x, y, PU_W, colour);
	if (role == CC_SVG_PARKED)
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#parked)\"/>\n", x,
			y + 6, PU_W, PU_H - 6);
	snprintf(num, sizeof(num), "%d", cpu);
	text(out, x + PU_W / 2, y + 21, "text-anchor=\"middle\" font-weight=\"bold\" font-size=\"12\"", num);
	if (owner && *owner)
		short_owner(owner, role == CC_SVG_PARKED, line, sizeof(line));
	else
		snprintf(line, sizeof(line), "%s", role == CC_SVG_RESERVED ? "reserved" : "");
	if (line[0])
		text(out, x + PU_W / 2, y + 35, "text-anchor=\"middle\" font-size=\"9\"", line);
	if (!p->allowed)
		text(out, x + PU_W - 7, y + 17, "text-anchor=\"middle\" fill=\"#b00\"", "!");
	if (irq) {
		int w = irq->max ? (int)((double)n / (double)irq->max * (PU_W - 8) + 0.5) : 0;

		if (n && w < 1)
			w = 1;
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"4\" fill=\"#eeeeee\"/>\n", x + 4,
			y + PU_H - 9, PU_W - 8);
		if (w)
			fprintf(out, "<rect class=\"irq\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"4\" fill=\"#d62728\"/>\n",
				x + 4, y + PU_H - 9, w);
	}
	fputs("</g>\n", out);
}

static void draw(struct layout *L, FILE *out, int i, int ox, int oy)
{
	const struct box *b = &L->b[i];
	int x = ox + b->x, y = oy + b->y, cx, cy;

	switch (b->kind) {
	case K_ROOT:
		break;
	case K_PACKAGE:
		fprintf(out, "<rect class=\"package\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"#f3f3f3\" stroke=\"#444444\" stroke-width=\"1.5\"/>\n",
			x, y, b->w, b->h);
		break;
	case K_NUMA:
		fprintf(out, "<rect class=\"numa\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"5\" fill=\"#fbfbfb\" stroke=\"#777777\"/>\n",
			x, y, b->w, b->h);
		break;
	case K_LLC:
		fprintf(out, "<rect class=\"llc\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"4\" fill=\"#ffffff\" stroke=\"#2c7c5a\"/>\n",
			x, y, b->w, b->h);
		break;
	case K_L2:
		fprintf(out, "<rect class=\"l2\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"4\" fill=\"none\" stroke=\"#b5651d\" stroke-dasharray=\"5,3\"/>\n",
			x, y, b->w, b->h);
		break;
	case K_CORE: {
		const struct cc_core *c = &L->t->cores[b->core];
		int cpu, k = 0;

		fprintf(out, "<rect class=\"core\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"#ffffff\" stroke=\"#666666\"/>\n",
			x, y, b->w, b->h);
		text(out, x + CORE_PAD, y + 11, "font-size=\"9\" fill=\"#555\"", b->label);
		hwloc_bitmap_foreach_begin(cpu, c->pus)
		{
			draw_pu(L, out, cpu, x + CORE_PAD + k * (PU_W + PU_GAP), y + CORE_HEAD);
			k++;
		}
		hwloc_bitmap_foreach_end();
		return;
	}
	}
	if (b->kind != K_ROOT)
		text(out, x + BOX_PAD, y + 13, "font-weight=\"bold\"", b->label);
	cx = x + (b->kind == K_ROOT ? 0 : BOX_PAD);
	cy = y + (b->kind == K_ROOT ? 0 : BOX_HEAD);
	for (int k = 0; k < b->nchild; k++)
		draw(L, out, b->child[k], cx, cy);
}

#define LEGEND_ROW 18

static int legend_rows(const struct layout *L)
{
	return 1 + L->t->nclasses + 1 + 1 + (irqs_of(L) && L->v->note ? 1 : 0);
}

static void draw_legend(struct layout *L, FILE *out, int x, int y)
{
	const struct cc_topo *t = L->t;
	const struct cc_interrupts *irq = irqs_of(L);
	char line[512];

	text(out, x, y + 12, "font-weight=\"bold\"", "Core classes");
	for (int i = 0; i < t->nclasses; i++) {
		const struct cc_class *c = &t->classes[i];
		_cleanup_free_ char *list = cc_cpulist_format(c->cpus);

		y += LEGEND_ROW;
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>\n", x, y + 2,
			class_colour(t, i));
		snprintf(line, sizeof(line), "%s: %d cores, CPUs %s%s%s%s", c->name, c->ncores, list ? list : "?",
			 c->kind[0] ? " (" : "", c->kind, c->kind[0] ? ")" : "");
		text(out, x + 20, y + 12, NULL, line);
	}
	y += LEGEND_ROW;
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#888888\" fill-opacity=\"0.75\" stroke=\"#111111\" stroke-width=\"2\"/>\n",
		x, y + 2);
	text(out, x + 20, y + 12, NULL, "runs a carve (owner below the number)");
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"url(#parked)\" stroke=\"#777777\"/>\n",
		x + 260, y + 2);
	text(out, x + 280, y + 12, NULL, "parked SMT sibling, held idle");
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#9a9a9a\" fill-opacity=\"0.55\"/>\n",
		x + 480, y + 2);
	text(out, x + 500, y + 12, NULL, "reserved for the host");
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"28\" height=\"12\" rx=\"3\" fill=\"none\" stroke=\"#b5651d\" stroke-dasharray=\"5,3\"/>\n",
		x + 660, y + 2);
	text(out, x + 694, y + 12, NULL, "shared L2 cluster");
	y += LEGEND_ROW;
	if (irq)
		snprintf(line, sizeof(line),
			 "red bar: device interrupts served since boot (/proc/interrupts, %d IRQs), relative to the busiest CPU (%llu)",
			 irq->nlines, irq->max);
	else
		snprintf(line, sizeof(line), "%s",
			 L->v && L->v->note ? L->v->note : "interrupt load: not known for this source");
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>\n", x, y + 6,
		irq ? "#d62728" : "#eeeeee");
	text(out, x + 20, y + 12, NULL, line);
	if (irq && L->v && L->v->note) {
		y += LEGEND_ROW;
		text(out, x, y + 12, "fill=\"#444\"", L->v->note);
	}
}

int cc_svg_write(FILE *out, const struct cc_topo *t, const struct cc_svg_view *view, struct cc_err *err)
{
	struct layout L = { .t = t, .v = view };
	char title[512], sub[256];
	int w, h, top = 48, rc = 0;

	build(&L);
	if (L.oom || L.n == 0) {
		rc = cc_err_sys(err, ENOMEM, "svg");
		goto out;
	}
	measure(&L, 0, PAGE_W);
	if (view && view->title)
		snprintf(title, sizeof(title), "%s", view->title);
	else
		snprintf(title, sizeof(title), "host: %s", t->source);
	snprintf(sub, sizeof(sub), "%d package%s, %d NUMA node%s, %d core%s, %d CPU%s online; classes from %s",
		 t->npackages, t->npackages == 1 ? "" : "s", t->nnuma, t->nnuma == 1 ? "" : "s", t->ncores,
		 t->ncores == 1 ? "" : "s", cc_topo_online_pus(t), cc_topo_online_pus(t) == 1 ? "" : "s",
		 t->class_source);
	w = L.b[0].w + 2 * MARGIN;
	if (w < text_w(title) + 2 * MARGIN)
		w = text_w(title) + 2 * MARGIN;
	h = top + L.b[0].h + 16 + legend_rows(&L) * LEGEND_ROW + MARGIN;
	/* The legend's widest row is about 800 px. */
	if (w < 840)
		w = 840;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\">\n",
		w, h, w, h);
	fputs("<defs><pattern id=\"parked\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"
	      "<rect width=\"2.5\" height=\"6\" fill=\"#333333\" fill-opacity=\"0.55\"/></pattern></defs>\n",
	      out);
	fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
	text(out, MARGIN, 20, "font-size=\"15\" font-weight=\"bold\"", title);
	text(out, MARGIN, 38, "fill=\"#444\"", sub);
	draw(&L, out, 0, MARGIN, top);
	draw_legend(&L, out, MARGIN, top + L.b[0].h + 16);
	fputs("</svg>\n", out);
	if (ferror(out))
		rc = cc_err_sys(err, EIO, "svg: write");
out:
	for (int i = 0; i < L.n; i++)
		free(L.b[i].child);
	free(L.b);
	return rc;
}
