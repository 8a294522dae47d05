/* corecarve: the host model as text, for the topology cache (topo_cache.h).
 *
 * One record per line, fields separated by single spaces, every field of
 * struct cc_topo written out (nothing is re-derived on reading, so the
 * model read back is the model discovered, whatever topo_build.c computes).
 * Strings are %XX-escaped so that no field holds a space or a newline; CPU
 * sets are cpu-lists ("-" for the empty set).  The last line carries an
 * FNV-1a checksum of everything before it: a truncated or damaged file is
 * refused, never half-read.
 *
 *   corecarve-topology-cache 1
 *   stamp STAMP
 *   source TEXT
 *   class_source TEXT
 *   sets ONLINE ALLOWED OFFLINE PRESENT POSSIBLE
 *   counts NPUS NCORES NPACKAGES NNUMA NLLCS NL2S NCLASSES NDIST
 *   package|numa|llc|l2 ID OS PACKAGE NUMA LEVEL SIZE NCORES CPUS CORES
 *   core ID PACKAGE NUMA L2 LLC CLASS NPUS PUS
 *   pu OS CORE PACKAGE NUMA L2 LLC CLASS ONLINE ALLOWED
 *   class RANK THREADS NCORES CPUS CORES NAME KIND
 *   distance V...                       (NDIST*NDIST values, when NDIST > 0)
 *   end CHECKSUM
 */
#define _GNU_SOURCE
#include "topo_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "cleanup.h"
#include "cpulist.h"
#include "digest.h"

#define MAGIC "corecarve-topology-cache 1"

/* ---- writing ----------------------------------------------------------- */

static void put_str(FILE *f, const char *s)
{
	if (!*s) {
		fputs("%", f); /* "%" alone: the empty string */
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '%' || c >= 0x7f)
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

static int put_set(FILE *f, hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = NULL;

	if (!b || hwloc_bitmap_iszero(b)) {
		fputs(" -", f);
		return 0;
	}
	s = cc_cpulist_format(b);
	if (!s)
		return -1;
	fprintf(f, " %s", s);
	return 0;
}

static int put_domains(FILE *f, const char *kind, const struct cc_domain *d, int n)
{
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s %d %d %d %d %d %llu %d", kind, d[i].id, d[i].os, d[i].package, d[i].numa,
			d[i].level, d[i].size, d[i].ncores);
		if (put_set(f, d[i].cpus) < 0 || put_set(f, d[i].cores) < 0)
			return -1;
		fputc('\n', f);
	}
	return 0;
}

char *cc_topo_serialize(const struct cc_topo *t, const char *stamp, struct cc_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ndist = t->distance ? t->nnuma : 0, rc = 0;

	if (!f)
		return cc_err_sys(err, errno, "topology cache"), NULL;
	fputs(MAGIC "\nstamp ", f);
	put_str(f, stamp ? stamp : "");
	fputs("\nsource ", f);
	put_str(f, t->source);
	fputs("\nclass_source ", f);
	put_str(f, t->class_source);
	fputs("\nsets", f);
	rc |= put_set(f, t->online) | put_set(f, t->allowed) | put_set(f, t->offline) | put_set(f, t->present) |
	      put_set(f, t->possible);
	fprintf(f, "\ncounts %d %d %d %d %d %d %d %d\n", t->npus, t->ncores, t->npackages, t->nnuma, t->nllcs, t->nl2s,
		t->nclasses, ndist);
	rc |= put_domains(f, "package", t->packages, t->npackages) | put_domains(f, "numa", t->numa, t->nnuma) |
	      put_domains(f, "llc", t->llcs, t->nllcs) | put_domains(f, "l2", t->l2s, t->nl2s);
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		fprintf(f, "core %d %d %d %d %d %d %d", c->id, c->package, c->numa, c->l2, c->llc, c->cls, c->npus);
		rc |= put_set(f, c->pus);
		fputc('\n', f);
	}
	for (int i = 0; i < t->npus; i++) {
		const struct cc_pu *p = &t->pus[i];

		fprintf(f, "pu %d %d %d %d %d %d %d %d %d\n", p->os, p->core, p->package, p->numa, p->l2, p->llc,
			p->cls, p->online, p->allowed);
	}
	for (int i = 0; i < t->nclasses; i++) {
		const struct cc_class *c = &t->classes[i];

		fprintf(f, "class %d %d %d", c->rank, c->threads_per_core, c->ncores);
		rc |= put_set(f, c->cpus) | put_set(f, c->cores);
		fputc(' ', f);
		put_str(f, c->name);
		fputc(' ', f);
		put_str(f, c->kind);
		fputc('\n', f);
	}
	if (ndist) {
		fputs("distance", f);
		for (int i = 0; i < ndist * ndist; i++)
			fprintf(f, " %d", t->distance[i]);
		fputc('\n', f);
	}
	if (fflush(f) != 0 || rc) {
		fclose(f);
		free(buf);
		return cc_err_sys(err, ENOMEM, "topology cache"), NULL;
	}
	fprintf(f, "end %016" PRIx64 "\n", cc_fnv1a(CC_FNV1A_INIT, buf, len));
	if (fclose(f) != 0) {
		free(buf);
		return cc_err_sys(err, ENOMEM, "topology cache"), NULL;
	}
	return buf;
}

/* ---- reading ----------------------------------------------------------- */

struct rd {
	char *p;       /* next unread byte */
	char *end;     /* end of the text */
	char *line;    /* current line (NUL-terminated in place) */
	bool cut;      /* the byte at `line` was a space, now a NUL */
	int lineno;
	struct cc_err *err;
};

static int bad(struct rd *r, int code, const char *field, const char *reason)
{
	return cc_err_set(r->err, code, "topology cache: line %d: %s: %s", r->lineno, field, reason);
}

/* Advance to the next line, which must start with `kw` and a space (or
 * be `kw` alone); r->line then points after it. */
static int next_line(struct rd *r, const char *kw)
{
	size_t n = strlen(kw);
	char *nl;

	r->lineno++;
	if (r->p >= r->end)
		return bad(r, EINVAL, kw, "missing (truncated file)");
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	if (!nl)
		return bad(r, EINVAL, kw, "missing (truncated file)");
	*nl = '\0';
	r->line = r->p;
	r->cut = false;
	r->p = nl + 1;
	if (strncmp(r->line, kw, n) != 0 || (r->line[n] != ' ' && r->line[n] != '\0'))
		return bad(r, EINVAL, kw, "expected this record here");
	r->line += n;
	return 0;
}

/* The next space-separated field of the current line.  The space that
 * ends it is overwritten with a NUL; `cut` remembers that it was there. */
static int get_tok(struct rd *r, const char *field, char **out)
{
	char *s = r->line, *e;

	/* At a separator: a space, or the NUL a previous field left. */
	if (!r->cut && *s != ' ')
		return bad(r, EINVAL, field, "missing");
	s++;
	r->cut = false;
	if (*s == '\0' || *s == ' ')
		return bad(r, EINVAL, field, "missing");
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		r->cut = true;
		r->line = e;
	} else {
		r->line = s + strlen(s);
	}
	*out = s;
	return 0;
}

static int end_of_line(struct rd *r, const char *field)
{
	if (r->cut || *r->line != '\0')
		return bad(r, EINVAL, field, "unexpected data at the end of the line");
	return 0;
}

/* Decimal integers are most of the file (a 4096-CPU model holds ~55 000):
 * read them by hand, strtol's locale handling was a third of the time. */
static int get_int(struct rd *r, const char *field, long min, long max, int *out)
{
	char *s, *p;
	bool neg;
	long v = 0;

	if (get_tok(r, field, &s) < 0)
		return -1;
	p = s;
	neg = *p == '-';
	p += neg;
	if (*p < '0' || *p > '9')
		return bad(r, EINVAL, field, "expected an integer");
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > (long)INT_MAX + 1)
			return bad(r, ERANGE, field, "out of range");
	}
	if (*p)
		return bad(r, EINVAL, field, "expected an integer");
	v = neg ? -v : v;
	if (v < min || v > max) {
		char why[96];

		snprintf(why, sizeof(why), "%ld is out of range [%ld, %ld]", v, min, max);
		return bad(r, ERANGE, field, why);
	}
	*out = (int)v;
	return 0;
}

static int get_ull(struct rd *r, const char *field, unsigned long long *out)
{
	char *s, *e;

	if (get_tok(r, field, &s) < 0)
		return -1;
	errno = 0;
	*out = strtoull(s, &e, 10);
	if (errno || e == s || *e || *s == '-')
		return bad(r, EINVAL, field, "expected an unsigned integer");
	return 0;
}

static int get_set(struct rd *r, const char *field, hwloc_bitmap_t out)
{
	struct cc_err e = CC_ERR_INIT;
	char *s;

	if (get_tok(r, field, &s) < 0)
		return -1;
	if (strcmp(s, "-") == 0) {
		hwloc_bitmap_zero(out);
		return 0;
	}
	if (cc_cpulist_parse(s, out, field, &e) < 0)
		return bad(r, e.code, field, "invalid cpu list");
	return 0;
}

static int unhex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int get_str(struct rd *r, const char *field, char *buf, size_t len)
{
	char *s;
	size_t n = 0;

	if (get_tok(r, field, &s) < 0)
		return -1;
	if (strcmp(s, "%") == 0) {
		buf[0] = '\0';
		return 0;
	}
	for (; *s; s++) {
		int c = (unsigned char)*s;

		if (c == '%') {
			int hi = unhex(s[1]), lo = hi < 0 ? -1 : unhex(s[2]);

			if (lo < 0)
				return bad(r, EINVAL, field, "invalid %-escape");
			c = hi * 16 + lo;
			s += 2;
		}
		if (c == 0 || n + 1 >= len)
			return bad(r, EINVAL, field, c ? "too long" : "NUL byte");
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return 0;
}

static hwloc_bitmap_t new_set(void)
{
	return hwloc_bitmap_alloc();
}

static int read_domains(struct rd *r, const char *kind, struct cc_domain *d, int n, const struct cc_topo *t)
{
	for (int i = 0; i < n; i++) {
		int id;

		if (next_line(r, kind) < 0 || get_int(r, "id", i, i, &id) < 0 || get_int(r, "os", -1, INT_MAX, &d[i].os) < 0 ||
		    get_int(r, "package", -1, t->npackages - 1, &d[i].package) < 0 ||
		    get_int(r, "numa", -1, t->nnuma - 1, &d[i].numa) < 0 || get_int(r, "level", 0, 16, &d[i].level) < 0 ||
		    get_ull(r, "size", &d[i].size) < 0 || get_int(r, "ncores", 0, t->ncores, &d[i].ncores) < 0)
			return -1;
		d[i].id = id;
		d[i].cpus = new_set();
		d[i].cores = new_set();
		if (!d[i].cpus || !d[i].cores)
			return cc_err_sys(r->err, ENOMEM, "topology cache");
		if (get_set(r, "cpus", d[i].cpus) < 0 || get_set(r, "cores", d[i].cores) < 0 || end_of_line(r, kind) < 0)
			return -1;
	}
	return 0;
}

struct counts {
	int npus, ncores, npackages, nnuma, nllcs, nl2s, nclasses, ndist;
};

static int read_counts(struct rd *r, struct counts *c)
{
	if (next_line(r, "counts") < 0 || get_int(r, "npus", 1, CC_CPU_LIMIT, &c->npus) < 0 ||
	    get_int(r, "ncores", 1, c->npus, &c->ncores) < 0 ||
	    get_int(r, "npackages", 1, c->ncores, &c->npackages) < 0 ||
	    get_int(r, "nnuma", 0, CC_CPU_LIMIT, &c->nnuma) < 0 || get_int(r, "nllcs", 0, c->ncores, &c->nllcs) < 0 ||
	    get_int(r, "nl2s", 0, c->ncores, &c->nl2s) < 0 ||
	    get_int(r, "nclasses", 1, CC_CLASSES_MAX, &c->nclasses) < 0 ||
	    get_int(r, "ndistance", 0, c->nnuma, &c->ndist) < 0 || end_of_line(r, "counts") < 0)
		return -1;
	if (c->ndist && c->ndist != c->nnuma)
		return bad(r, EINVAL, "ndistance", "must be 0 or nnuma");
	return 0;
}

/* The arrays, zeroed; the counts are set only once all exist, so that
 * cc_topo_free() of a model refused half-way frees exactly what is there
 * (entries not read yet hold NULL bitmaps). */
static int alloc_model(struct cc_topo *t, const struct counts *c, struct cc_err *err)
{
	struct {
		struct cc_domain **d;
		int n;
	} doms[] = { { &t->packages, c->npackages }, { &t->numa, c->nnuma }, { &t->llcs, c->nllcs }, { &t->l2s, c->nl2s } };

	t->pus = calloc((size_t)c->npus, sizeof(*t->pus));
	t->cores = calloc((size_t)c->ncores, sizeof(*t->cores));
	t->classes = calloc((size_t)c->nclasses, sizeof(*t->classes));
	if (!t->pus || !t->cores || !t->classes)
		return cc_err_sys(err, ENOMEM, "topology cache");
	for (size_t k = 0; k < sizeof(doms) / sizeof(doms[0]); k++) {
		*doms[k].d = calloc((size_t)(doms[k].n ? doms[k].n : 1), sizeof(**doms[k].d));
		if (!*doms[k].d)
			return cc_err_sys(err, ENOMEM, "topology cache");
	}
	t->npus = c->npus;
	t->ncores = c->ncores;
	t->npackages = c->npackages;
	t->nnuma = c->nnuma;
	t->nllcs = c->nllcs;
	t->nl2s = c->nl2s;
	t->nclasses = c->nclasses;
	return 0;
}

static int read_cores(struct rd *r, struct cc_topo *t)
{
	for (int i = 0; i < t->ncores; i++) {
		struct cc_core *c = &t->cores[i];

		if (next_line(r, "core") < 0 || get_int(r, "id", i, i, &c->id) < 0 ||
		    get_int(r, "package", 0, t->npackages - 1, &c->package) < 0 ||
		    get_int(r, "numa", -1, t->nnuma - 1, &c->numa) < 0 || get_int(r, "l2", -1, t->nl2s - 1, &c->l2) < 0 ||
		    get_int(r, "llc", -1, t->nllcs - 1, &c->llc) < 0 || get_int(r, "class", -1, t->nclasses - 1, &c->cls) < 0 ||
		    get_int(r, "npus", 1, CC_CPU_LIMIT, &c->npus) < 0)
			return -1;
		c->pus = new_set();
		if (!c->pus)
			return cc_err_sys(r->err, ENOMEM, "topology cache");
		if (get_set(r, "pus", c->pus) < 0 || end_of_line(r, "core") < 0)
			return -1;
	}
	return 0;
}

static int read_pus(struct rd *r, struct cc_topo *t)
{
	for (int i = 0; i < t->npus; i++) {
		struct cc_pu *p = &t->pus[i];
		int online, allowed;

		if (next_line(r, "pu") < 0 || get_int(r, "os", i ? t->pus[i - 1].os + 1 : 0, CC_CPU_LIMIT - 1, &p->os) < 0 ||
		    get_int(r, "core", -1, t->ncores - 1, &p->core) < 0 ||
		    get_int(r, "package", -1, t->npackages - 1, &p->package) < 0 ||
		    get_int(r, "numa", -1, t->nnuma - 1, &p->numa) < 0 || get_int(r, "l2", -1, t->nl2s - 1, &p->l2) < 0 ||
		    get_int(r, "llc", -1, t->nllcs - 1, &p->llc) < 0 || get_int(r, "class", -1, t->nclasses - 1, &p->cls) < 0 ||
		    get_int(r, "online", 0, 1, &online) < 0 || get_int(r, "allowed", 0, 1, &allowed) < 0 ||
		    end_of_line(r, "pu") < 0)
			return -1;
		p->online = online;
		p->allowed = allowed;
	}
	return 0;
}

static int read_classes(struct rd *r, struct cc_topo *t)
{
	for (int i = 0; i < t->nclasses; i++) {
		struct cc_class *c = &t->classes[i];

		if (next_line(r, "class") < 0 || get_int(r, "rank", i, i, &c->rank) < 0 ||
		    get_int(r, "threads", 0, CC_CPU_LIMIT, &c->threads_per_core) < 0 ||
		    get_int(r, "ncores", 0, t->ncores, &c->ncores) < 0)
			return -1;
		c->cpus = new_set();
		c->cores = new_set();
		if (!c->cpus || !c->cores)
			return cc_err_sys(r->err, ENOMEM, "topology cache");
		if (get_set(r, "cpus", c->cpus) < 0 || get_set(r, "cores", c->cores) < 0 ||
		    get_str(r, "name", c->name, sizeof(c->name)) < 0 || get_str(r, "kind", c->kind, sizeof(c->kind)) < 0 ||
		    end_of_line(r, "class") < 0)
			return -1;
		if (!c->name[0])
			return bad(r, EINVAL, "name", "empty");
	}
	return 0;
}

static int read_distance(struct rd *r, struct cc_topo *t, int n)
{
	if (!n)
		return 0;
	t->distance = calloc((size_t)n * (size_t)n, sizeof(int));
	if (!t->distance)
		return cc_err_sys(r->err, ENOMEM, "topology cache");
	if (next_line(r, "distance") < 0)
		return -1;
	for (int i = 0; i < n * n; i++)
		if (get_int(r, "distance", 0, INT_MAX, &t->distance[i]) < 0)
			return -1;
	return end_of_line(r, "distance");
}

/* What a reader relies on beyond the ranges: the records agree with each
 * other, both ways.  Each PU of a core points back at it and the core
 * counts them; each domain counts the cores that point at it and lists
 * them.  Linear in the size: bitmap weights would cost more than all the
 * parsing on a 4096-CPU host, where every bitmap is 64 words long. */
static int disagree(struct rd *r, const char *what, int i, const char *how)
{
	return cc_err_set(r->err, EINVAL, "topology cache: %s %d: %s", what, i, how);
}

static int check_domains(struct rd *r, const struct cc_topo *t, const char *what, const struct cc_domain *d,
			 int n, size_t off, int *cnt)
{
	memset(cnt, 0, sizeof(int) * (size_t)(n + 1));
	for (int c = 0; c < t->ncores; c++) {
		int v = *(const int *)((const char *)&t->cores[c] + off);

		if (v < 0)
			continue;
		if (!hwloc_bitmap_isset(d[v].cores, (unsigned)c))
			return disagree(r, what, v, "does not list a core that points at it");
		cnt[v]++;
	}
	for (int i = 0; i < n; i++)
		if (cnt[i] != d[i].ncores)
			return disagree(r, what, i, "ncores differs from the cores that point at it");
	return 0;
}

static int cross_check(struct rd *r, const struct cc_topo *t)
{
	int most = t->ncores;
	_cleanup_free_ int *cnt = NULL;

	most = most > t->npackages ? most : t->npackages;
	most = most > t->nnuma ? most : t->nnuma;
	most = most > t->nllcs ? most : t->nllcs;
	most = most > t->nl2s ? most : t->nl2s;
	cnt = calloc((size_t)most + 1, sizeof(int));
	if (!cnt)
		return cc_err_sys(r->err, ENOMEM, "topology cache");
	for (int i = 0; i < t->npus; i++) {
		const struct cc_pu *p = &t->pus[i];

		if (p->core < 0)
			continue;
		if (!hwloc_bitmap_isset(t->cores[p->core].pus, (unsigned)p->os)) {
			char why[96];

			snprintf(why, sizeof(why), "does not list CPU %d, whose pu record points at it", p->os);
			return disagree(r, "core", p->core, why);
		}
		cnt[p->core]++;
	}
	for (int c = 0; c < t->ncores; c++)
		if (cnt[c] != t->cores[c].npus)
			return disagree(r, "core", c, "npus differs from the CPUs that point at it");
	if (check_domains(r, t, "package", t->packages, t->npackages, offsetof(struct cc_core, package), cnt) < 0 ||
	    check_domains(r, t, "numa", t->numa, t->nnuma, offsetof(struct cc_core, numa), cnt) < 0 ||
	    check_domains(r, t, "llc", t->llcs, t->nllcs, offsetof(struct cc_core, llc), cnt) < 0 ||
	    check_domains(r, t, "l2", t->l2s, t->nl2s, offsetof(struct cc_core, l2), cnt) < 0)
		return -1;
	return 0;
}

static int read_header(struct rd *r, struct cc_topo *t, const char *stamp)
{
	char buf[4096];

	r->lineno++;
	if ((size_t)(r->end - r->p) < sizeof(MAGIC) || memcmp(r->p, MAGIC "\n", sizeof(MAGIC)) != 0)
		return bad(r, EINVAL, "header", "not a corecarve topology cache of this version");
	r->p += sizeof(MAGIC);
	if (next_line(r, "stamp") < 0 || get_str(r, "stamp", buf, sizeof(buf)) < 0 || end_of_line(r, "stamp") < 0)
		return -1;
	if (stamp && strcmp(buf, stamp) != 0)
		return bad(r, ESTALE, "stamp", "the machine or the program changed since it was written");
	if (next_line(r, "source") < 0 || get_str(r, "source", t->source, sizeof(t->source)) < 0 ||
	    end_of_line(r, "source") < 0 || next_line(r, "class_source") < 0 ||
	    get_str(r, "class_source", t->class_source, sizeof(t->class_source)) < 0 ||
	    end_of_line(r, "class_source") < 0)
		return -1;
	t->online = new_set();
	t->allowed = new_set();
	t->offline = new_set();
	t->present = new_set();
	t->possible = new_set();
	if (!t->online || !t->allowed || !t->offline || !t->present || !t->possible)
		return cc_err_sys(r->err, ENOMEM, "topology cache");
	if (next_line(r, "sets") < 0 || get_set(r, "online", t->online) < 0 || get_set(r, "allowed", t->allowed) < 0 ||
	    get_set(r, "offline", t->offline) < 0 || get_set(r, "present", t->present) < 0 ||
	    get_set(r, "possible", t->possible) < 0 || end_of_line(r, "sets") < 0)
		return -1;
	return 0;
}

static int check_sum(struct rd *r, const char *text, size_t len)
{
	const char *tail;
	char want[32];
	size_t body;

	/* The last line: "end <16 hex digits>\n", 21 bytes. */
	if (len < 21 || text[len - 1] != '\n')
		return cc_err_set(r->err, EINVAL, "topology cache: end: missing (truncated file)");
	tail = text + len - 21;
	if (memcmp(tail, "end ", 4) != 0 || (tail != text && tail[-1] != '\n'))
		return cc_err_set(r->err, EINVAL, "topology cache: end: missing (truncated file)");
	body = (size_t)(tail - text);
	snprintf(want, sizeof(want), "%016" PRIx64, cc_fnv1a(CC_FNV1A_INIT, text, body));
	if (memcmp(tail + 4, want, 16) != 0)
		return cc_err_set(r->err, EINVAL, "topology cache: end: checksum mismatch (damaged file)");
	r->end = r->p + body;
	return 0;
}

struct cc_topo *cc_topo_deserialize(const char *text, size_t len, const char *stamp, struct cc_err *err)
{
	_cleanup_free_ char *copy = malloc(len + 1);
	_cleanup_topo_ struct cc_topo *t = calloc(1, sizeof(*t));
	struct rd r = { .err = err };
	struct counts c = { 0 };

	if (!copy || !t)
		return cc_err_sys(err, ENOMEM, "topology cache"), NULL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	r.p = copy;
	r.end = copy + len;
	if (check_sum(&r, copy, len) < 0 || read_header(&r, t, stamp) < 0 || read_counts(&r, &c) < 0 ||
	    alloc_model(t, &c, err) < 0)
		return NULL;
	if (read_domains(&r, "package", t->packages, t->npackages, t) < 0 ||
	    read_domains(&r, "numa", t->numa, t->nnuma, t) < 0 || read_domains(&r, "llc", t->llcs, t->nllcs, t) < 0 ||
	    read_domains(&r, "l2", t->l2s, t->nl2s, t) < 0 || read_cores(&r, t) < 0 || read_pus(&r, t) < 0 ||
	    read_classes(&r, t) < 0 || read_distance(&r, t, c.ndist) < 0)
		return NULL;
	if (r.p != r.end) {
		r.lineno++;
		return bad(&r, EINVAL, "end", "unexpected records before the end line"), NULL;
	}
	if (cross_check(&r, t) < 0)
		return NULL;
	return cc_steal_ptr(t);
}
