/* corecarve: the allocator.  See docs/allocator.md for the rules.
 *
 * Works on core ids (indexes into topo->cores) in plain int arrays; bitmaps
 * are built only for the decision.  Packing is hierarchical best fit:
 * NUMA node, then package (for nodes that span packages), then LLC, then
 * L2, then lowest core id.  At each level the
 * fewest domains that can hold the request are chosen; among those, the
 * closest (NUMA distance) and then the fullest (fewest free cores), then the
 * lowest ids, so the same input always gives the same carve.
 */
#define _GNU_SOURCE
#include "alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

enum { LVL_NUMA, LVL_PACKAGE, LVL_LLC, LVL_L2, LVL_CORE };

/* Above this many candidate sets the exact search gives way to a greedy
 * choice (largest domains first); real hosts stay far below it. */
#define COMBO_LIMIT 200000

struct ctx {
	const struct cc_topo *t;
	int *dist; /* nnuma*nnuma, always present (synthesised when unknown) */
};

struct group {
	int dom;  /* domain index, or the "none" slot (ndom) */
	int free; /* candidate cores in it */
	int take;
};

static void warn(struct cc_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const char *plural(int n)
{
	return n == 1 ? "" : "s";
}

static void warn(struct cc_decision *d, const char *fmt, ...)
{
	va_list ap;

	if (d->nwarnings >= CC_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(d->warnings[d->nwarnings++], sizeof(d->warnings[0]), fmt, ap);
	va_end(ap);
}

static int core_dom(const struct cc_core *c, int level)
{
	switch (level) {
	case LVL_NUMA:
		return c->numa;
	case LVL_PACKAGE:
		return c->package;
	case LVL_LLC:
		return c->llc;
	default:
		return c->l2;
	}
}

static int level_ndom(const struct cc_topo *t, int level)
{
	switch (level) {
	case LVL_NUMA:
		return t->nnuma;
	case LVL_PACKAGE:
		return t->npackages;
	case LVL_LLC:
		return t->nllcs;
	default:
		return t->nl2s;
	}
}

/* NUMA distances: the topology's matrix, or when it has none 10 (same
 * node), 20 (same package), 30 (other package), the usual SLIT shape. */
static int *make_distances(const struct cc_topo *t)
{
	int n = t->nnuma > 0 ? t->nnuma : 1;
	int *d = calloc((size_t)n * n, sizeof(*d));

	if (!d)
		return NULL;
	for (int i = 0; i < t->nnuma; i++)
		for (int j = 0; j < t->nnuma; j++) {
			if (t->distance)
				d[i * n + j] = t->distance[i * t->nnuma + j];
			else if (i == j)
				d[i * n + j] = 10;
			else if (t->numa[i].package >= 0 && t->numa[i].package == t->numa[j].package)
				d[i * n + j] = 20;
			else
				d[i * n + j] = 30;
		}
	return d;
}

static long set_distance(const struct ctx *cx, int level, const struct group *g, const int *idx, int m)
{
	long sum = 0;
	int n = cx->t->nnuma;

	if (level != LVL_NUMA)
		return 0;
	for (int a = 0; a < m; a++)
		for (int b = a + 1; b < m; b++) {
			int i = g[idx[a]].dom, j = g[idx[b]].dom;

			/* The "no NUMA node" slot has no distance: count it far. */
			sum += (i >= n || j >= n) ? 1000 : cx->dist[i * n + j];
		}
	return sum;
}

static int cmp_int_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

/* Choose which groups (sorted by dom) hold `k` cores and how many each
 * gives.  Sets g[i].take; returns 0, or -1 when the groups cannot hold k
 * or on ENOMEM. */
static int choose_groups(const struct ctx *cx, int level, struct group *g, int ng, int k)
{
	_cleanup_free_ int *frees = NULL, *cur = NULL, *best = NULL;
	int m = 0, sum = 0, bi = -1;
	long combos = 0, best_dist = 0, best_free = 0;

	for (int i = 0; i < ng; i++)
		if (g[i].free >= k && (bi < 0 || g[i].free < g[bi].free))
			bi = i;
	if (bi >= 0) {
		g[bi].take = k;
		return 0;
	}
	/* Equal groups away from the NUMA level (private L2s, identical
	 * CCXs): every m-subset is as tight as any other, so the lowest ids
	 * win without a search. */
	if (level != LVL_NUMA) {
		bool equal = true;

		for (int i = 1; i < ng; i++)
			equal &= g[i].free == g[0].free;
		if (equal) {
			for (int i = 0; i < ng && k > 0; i++) {
				g[i].take = g[i].free < k ? g[i].free : k;
				k -= g[i].take;
			}
			return k > 0 ? -1 : 0;
		}
	}
	frees = malloc(sizeof(int) * (size_t)ng);
	cur = malloc(sizeof(int) * (size_t)ng);
	best = malloc(sizeof(int) * (size_t)ng);
	if (!frees || !cur || !best)
		return -1;
	for (int i = 0; i < ng; i++)
		frees[i] = g[i].free;
	qsort(frees, (size_t)ng, sizeof(int), cmp_int_desc);
	while (m < ng && sum < k)
		sum += frees[m++];
	if (sum < k)
		return -1;

	/* Every m-subset in lexicographic order; strict improvement keeps the
	 * lowest ids on ties. */
	for (int i = 0; i < m; i++)
		cur[i] = i;
	bi = -1;
	for (;;) {
		int tot = 0, pos;

		for (int i = 0; i < m; i++)
			tot += g[cur[i]].free;
		if (tot >= k) {
			long dd = set_distance(cx, level, g, cur, m);

			if (bi < 0 || dd < best_dist || (dd == best_dist && tot < best_free)) {
				memcpy(best, cur, sizeof(int) * (size_t)m);
				best_dist = dd;
				best_free = tot;
				bi = 0;
			}
		}
		if (++combos > COMBO_LIMIT) {
			bi = -1;
			break;
		}
		pos = m - 1;
		while (pos >= 0 && cur[pos] == ng - m + pos)
			pos--;
		if (pos < 0)
			break;
		cur[pos]++;
		for (int i = pos + 1; i < m; i++)
			cur[i] = cur[i - 1] + 1;
	}
	if (bi < 0) {
		/* Greedy: the m largest, lowest id first on ties. */
		for (int i = 0; i < m; i++) {
			int pick = -1;

			for (int j = 0; j < ng; j++) {
				bool used = false;

				for (int u = 0; u < i; u++)
					used |= best[u] == j;
				if (!used && (pick < 0 || g[j].free > g[pick].free))
					pick = j;
			}
			best[i] = pick;
		}
	}

	/* Fill the fullest groups completely and leave the remainder in the
	 * one with the most free cores, so free space stays in one place.  m
	 * is minimal, so any m-1 groups hold fewer than k. */
	for (int a = 1; a < m; a++)
		for (int b = a; b > 0; b--) {
			struct group *x = &g[best[b - 1]], *y = &g[best[b]];

			if (x->free > y->free || (x->free == y->free && x->dom > y->dom)) {
				int tmp = best[b - 1];

				best[b - 1] = best[b];
				best[b] = tmp;
			}
		}
	for (int i = 0; i < m - 1; i++) {
		g[best[i]].take = g[best[i]].free;
		k -= g[best[i]].free;
	}
	g[best[m - 1]].take = k;
	return 0;
}

/* Pick `k` of the `n` candidate core ids (ascending) into out[*nout...]. */
static int pick(const struct ctx *cx, const int *cands, int n, int k, int level, int *out, int *nout)
{
	const struct cc_topo *t = cx->t;
	_cleanup_free_ struct group *g = NULL;
	_cleanup_free_ int *slot = NULL, *sub = NULL; /* slot: cores per domain */
	int nd, ng = 0;

	if (k <= 0)
		return 0;
	if (k >= n || level == LVL_CORE) {
		for (int i = 0; i < k && i < n; i++)
			out[(*nout)++] = cands[i];
		return k <= n ? 0 : -1;
	}
	nd = level_ndom(t, level);
	slot = malloc(sizeof(int) * (size_t)(nd + 1));
	g = calloc((size_t)nd + 1, sizeof(*g));
	sub = malloc(sizeof(int) * (size_t)n);
	if (!slot || !g || !sub)
		return -1;
	for (int d = 0; d <= nd; d++)
		slot[d] = 0;
	for (int i = 0; i < n; i++) {
		int cd = core_dom(&t->cores[cands[i]], level);

		slot[cd < 0 || cd >= nd ? nd : cd]++;
	}
	for (int d = 0; d <= nd; d++) {
		if (!slot[d])
			continue;
		g[ng].dom = d;
		g[ng].free = slot[d];
		g[ng].take = 0;
		ng++;
	}
	if (choose_groups(cx, level, g, ng, k) < 0)
		return -1;
	for (int gi = 0; gi < ng; gi++) {
		int ns = 0;

		if (!g[gi].take)
			continue;
		for (int i = 0; i < n; i++) {
			int cd = core_dom(&t->cores[cands[i]], level);

			if ((cd < 0 || cd >= nd ? nd : cd) == g[gi].dom)
				sub[ns++] = cands[i];
		}
		if (pick(cx, sub, ns, g[gi].take, level + 1, out, nout) < 0)
			return -1;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Count distinct domains of `level` touched by a set of PUs. */
static int count_domains(const struct cc_topo *t, hwloc_const_bitmap_t set, int level)
{
	int nd = level_ndom(t, level), n = 0;
	_cleanup_free_ bool *seen = calloc((size_t)nd + 1, sizeof(bool));
	int os;

	if (!seen)
		return 0;
	hwloc_bitmap_foreach_begin(os, set)
	{
		int pi = cc_topo_pu_index(t, os), d;

		if (pi < 0)
			continue;
		d = level == LVL_NUMA ? t->pus[pi].numa : level == LVL_LLC ? t->pus[pi].llc : t->pus[pi].l2;
		if (d >= 0 && d < nd && !seen[d]) {
			seen[d] = true;
			n++;
		}
	}
	hwloc_bitmap_foreach_end();
	return n;
}

/* cpuset.mems for the decision.  Empty when the topology has no NUMA
 * information: the apply step then leaves cpuset.mems as it is. */
static void fill_mems(const struct cc_topo *t, struct cc_decision *d, int cls)
{
	int os;

	hwloc_bitmap_zero(d->mems);
	if (t->nnuma <= 0)
		return;
	switch (d->memory) {
	case CC_MEM_LOCAL:
		hwloc_bitmap_foreach_begin(os, d->cpus)
		{
			int pi = cc_topo_pu_index(t, os);

			if (pi < 0 || t->pus[pi].numa < 0 || t->pus[pi].numa >= t->nnuma) {
				hwloc_bitmap_zero(d->mems);
				return;
			}
			hwloc_bitmap_set(d->mems, (unsigned)t->numa[t->pus[pi].numa].os);
		}
		hwloc_bitmap_foreach_end();
		break;
	case CC_MEM_SPREAD:
		for (int i = 0; i < t->nnuma; i++) {
			bool has = cls < 0 ? !hwloc_bitmap_iszero(t->numa[i].cpus)
					   : hwloc_bitmap_intersects(t->numa[i].cpus, t->classes[cls].cpus);

			if (has)
				hwloc_bitmap_set(d->mems, (unsigned)t->numa[i].os);
		}
		break;
	case CC_MEM_ANY:
		for (int i = 0; i < t->nnuma; i++)
			hwloc_bitmap_set(d->mems, (unsigned)t->numa[i].os);
		break;
	}
}

static void fill_spans(const struct cc_topo *t, struct cc_decision *d)
{
	d->numa_nodes = count_domains(t, d->cpus, LVL_NUMA);
	d->llcs = count_domains(t, d->cpus, LVL_LLC);
	d->l2s = count_domains(t, d->cpus, LVL_L2);
}

static void known_classes(const struct cc_policy *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nclasses && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", p->classes[i].name);
	if (!p->nclasses)
		snprintf(buf, len, "none");
}

static void host_classes(const struct cc_topo *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->nclasses && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", t->classes[i].name);
	if (!t->nclasses)
		snprintf(buf, len, "none");
}

/* Resolve the core class: its index, or -1 for "any".  -2 with err set. */
static int resolve_class(const struct cc_topo *t, const struct cc_pclass *pc, struct cc_decision *d,
			 struct cc_err *err)
{
	char names[512];
	int ci;

	if (strcmp(pc->core_type, "any") == 0) {
		snprintf(d->core_class, sizeof(d->core_class), "any");
		return -1;
	}
	ci = cc_topo_class_index(t, pc->core_type);
	if (ci >= 0) {
		snprintf(d->core_class, sizeof(d->core_class), "%s", t->classes[ci].name);
		return ci;
	}
	host_classes(t, names, sizeof(names));
	if (!pc->fallback[0]) {
		cc_err_set(err, EINVAL, "class %s: host has no %s cores (host classes: %s) and the class has no fallback",
			   pc->name, pc->core_type, names);
		return -2;
	}
	if (strcmp(pc->fallback, "any") == 0)
		ci = -1;
	else if ((ci = cc_topo_class_index(t, pc->fallback)) < 0) {
		cc_err_set(err, EINVAL, "class %s: host has no %s cores and no %s cores for the fallback (host classes: %s)",
			   pc->name, pc->core_type, pc->fallback, names);
		return -2;
	}
	d->fell_back = true;
	snprintf(d->core_class, sizeof(d->core_class), "%s", ci < 0 ? "any" : t->classes[ci].name);
	warn(d, "%s: host has no %s cores; using %s", pc->name, pc->core_type, pc->fallback);
	return ci;
}

/* The shared pool of class `cls` (-1: every class): online, allowed, not
 * reserved, not taken. */
static void shared_pool(const struct cc_topo *t, int cls, hwloc_const_bitmap_t reserved,
			hwloc_const_bitmap_t taken, hwloc_bitmap_t out)
{
	hwloc_bitmap_and(out, t->online, t->allowed);
	if (cls >= 0)
		hwloc_bitmap_and(out, out, t->classes[cls].cpus);
	hwloc_bitmap_andnot(out, out, reserved);
	if (taken)
		hwloc_bitmap_andnot(out, out, taken);
}

static int alloc_shared(const struct cc_topo *t, const struct cc_request *req, int cls,
			hwloc_const_bitmap_t reserved, hwloc_const_bitmap_t taken,
			struct cc_decision *d, struct cc_err *err)
{
	int n;

	shared_pool(t, cls, reserved, taken, d->cpus);
	n = hwloc_bitmap_weight(d->cpus);
	if (n <= 0) {
		_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
		int total, nres;

		if (!all)
			return cc_err_set(err, ENOMEM, "out of memory");
		hwloc_bitmap_and(all, t->online, t->allowed);
		if (cls >= 0)
			hwloc_bitmap_and(all, all, t->classes[cls].cpus);
		total = hwloc_bitmap_weight(all);
		hwloc_bitmap_and(all, all, reserved);
		nres = hwloc_bitmap_weight(all);
		return cc_err_set(err, ENOSPC,
				  "class %s: the shared %s pool is empty (%d usable %s CPUs: %d reserved, %d taken by carves)",
				  d->class_name, d->core_class, total, d->core_class, nres, total - nres);
	}
	if (req->cpus > n)
		warn(d, "class %s: the shared %s pool has %d CPU%s, fewer than the %d requested (cpus is a hint for a shared class)",
		     d->class_name, d->core_class, n, plural(n), req->cpus);
	fill_mems(t, d, cls);
	fill_spans(t, d);
	return 0;
}

/* Per-core state for an exclusive carve. */
enum core_state {
	CS_OTHER,    /* not of the requested class, or no online PU */
	CS_FREE,     /* usable */
	CS_RESERVED, /* holds a reserved CPU */
	CS_TAKEN,    /* holds a CPU owned by a carve */
	CS_BLOCKED,  /* holds a CPU the caller may not use */
	CS_THREADS,  /* smt full: fewer online threads than the class has */
	CS_SHARED,   /* "any": kept back for its class's shared pool */
};

struct census {
	int total, free, reserved, taken, blocked, threads, shared;
};

static void describe(const struct census *c, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "%d core%s", c->total, plural(c->total));
	const struct {
		int n;
		const char *what;
	} parts[] = {
		{ c->reserved, "with reserved CPUs" },
		{ c->taken, "taken" },
		{ c->blocked, "outside the allowed cpuset" },
		{ c->threads, "with offline SMT threads" },
		{ c->shared, "kept for the shared pools" },
	};
	bool first = true;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && off < len; i++) {
		if (!parts[i].n)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%d %s", first ? ": " : ", ", parts[i].n, parts[i].what);
		first = false;
	}
}

/* Most free cores of one NUMA node among `state == CS_FREE` cores. */
static int max_free_per_node(const struct cc_topo *t, const unsigned char *state)
{
	_cleanup_free_ int *cnt = calloc((size_t)t->nnuma + 1, sizeof(int));
	int best = 0;

	if (!cnt)
		return 0;
	for (int i = 0; i < t->ncores; i++) {
		int d = t->cores[i].numa;

		if (state[i] != CS_FREE)
			continue;
		d = d < 0 || d >= t->nnuma ? t->nnuma : d;
		if (++cnt[d] > best)
			best = cnt[d];
	}
	return best;
}

static int cmp_by_npus(const void *a, const void *b, void *arg)
{
	const struct cc_topo *t = arg;
	int x = *(const int *)a, y = *(const int *)b;
	int nx = t->cores[x].npus, ny = t->cores[y].npus;

	return nx != ny ? (nx > ny) - (nx < ny) : (x > y) - (x < y);
}

/* Most cores of `cands` whose PUs fit into `budget` CPUs. */
static int max_cores_in_budget(const struct cc_topo *t, const int *cands, int n, int budget)
{
	_cleanup_free_ int *s = malloc(sizeof(int) * (size_t)(n ? n : 1));
	int used = 0, k = 0;

	if (!s)
		return 0;
	memcpy(s, cands, sizeof(int) * (size_t)n);
	qsort_r(s, (size_t)n, sizeof(int), cmp_by_npus, (void *)t);
	while (k < n && used + t->cores[s[k]].npus <= budget)
		used += t->cores[s[k++]].npus;
	return k;
}

struct l2info {
	int smin, smax;      /* class cores per L2 cluster (clusters with any) */
	int *size;           /* class cores per L2, nl2s+1 */
	int *nfree;          /* free class cores per L2 */
};

static void l2info_fini(struct l2info *li)
{
	free(li->size);
	free(li->nfree);
}

static int l2info_fill(const struct cc_topo *t, const unsigned char *state, const bool *inclass,
		       struct l2info *li)
{
	li->size = calloc((size_t)t->nl2s + 1, sizeof(int));
	li->nfree = calloc((size_t)t->nl2s + 1, sizeof(int));
	li->smin = INT_MAX;
	li->smax = 0;
	if (!li->size || !li->nfree)
		return -1;
	for (int i = 0; i < t->ncores; i++) {
		int l = t->cores[i].l2;

		if (!inclass[i] || l < 0 || l >= t->nl2s)
			continue;
		li->size[l]++;
		li->nfree[l] += state[i] == CS_FREE;
	}
	for (int l = 0; l < t->nl2s; l++) {
		if (!li->size[l])
			continue;
		if (li->size[l] < li->smin)
			li->smin = li->size[l];
		if (li->size[l] > li->smax)
			li->smax = li->size[l];
	}
	if (li->smax == 0)
		li->smin = 0;
	return 0;
}

/* Clusters touched by the chosen cores, and how many of them the carve
 * does not fill (shares with others). */
static void l2_touch(const struct cc_topo *t, const struct l2info *li, const int *chosen, int k,
		     int *touched, int *partial)
{
	_cleanup_free_ int *cnt = calloc((size_t)t->nl2s + 1, sizeof(int));

	*touched = *partial = 0;
	if (!cnt)
		return;
	for (int i = 0; i < k; i++) {
		int l = t->cores[chosen[i]].l2;

		if (l >= 0 && l < t->nl2s)
			cnt[l]++;
	}
	for (int l = 0; l < t->nl2s; l++) {
		if (!cnt[l])
			continue;
		(*touched)++;
		*partial += cnt[l] < li->size[l];
	}
}

/* The class a shared placement class runs on, -1 for "any", -2 none. */
static int shared_class_index(const struct cc_topo *t, const struct cc_pclass *pc)
{
	struct cc_decision d;
	struct cc_err e = CC_ERR_INIT;

	memset(&d, 0, sizeof(d));
	return resolve_class(t, pc, &d, &e);
}

/* floor[c]: the CPUs class c's pool keeps, min_shared where a shared
 * placement class (exclusive: false) runs, 0 elsewhere: a pool that no
 * container shares needs no floor, and a class every core of which may be
 * carved is what makes `{class: latency, cpus: 4}` fit 4 P-cores. */
static void shared_floors(const struct cc_topo *t, const struct cc_policy *p, int min_shared, int *floor)
{
	for (int i = 0; i < p->nclasses; i++) {
		int c;

		if (p->classes[i].exclusive)
			continue;
		c = shared_class_index(t, &p->classes[i]);
		for (int k = 0; k < t->nclasses; k++)
			if (c == k || c == -1)
				floor[k] = min_shared;
	}
}

/* The shared classes that keep class `cls`'s floor, "a, b". */
static void floor_users(const struct cc_topo *t, const struct cc_policy *p, int cls, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nclasses && off < len; i++) {
		int c;

		if (p->classes[i].exclusive)
			continue;
		c = shared_class_index(t, &p->classes[i]);
		if (c == cls || c == -1)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", p->classes[i].name);
	}
}

/* A refusal's first fix: "ask for at most 6 CPUs", or, when nothing fits,
 * "wait for a carve to go". */
static const char *fewer(int maxk, int unit, char *buf, size_t len)
{
	if (maxk <= 0)
		snprintf(buf, len, "wait for a carve to go");
	else
		snprintf(buf, len, "ask for at most %d CPU%s", maxk * unit, plural(maxk * unit));
	return buf;
}

int cc_alloc_shared_floor(const struct cc_topo *t, const struct cc_policy *p, int cls, char *who, size_t len)
{
	_cleanup_free_ int *floor = calloc((size_t)t->nclasses + 1, sizeof(int));

	if (who && len)
		who[0] = '\0';
	if (!floor || cls < 0 || cls >= t->nclasses)
		return 0;
	shared_floors(t, p, p->min_shared < 0 ? 0 : p->min_shared, floor);
	if (who && len)
		floor_users(t, p, cls, who, len);
	return floor[cls];
}

static int alloc_exclusive(const struct ctx *cx, const struct cc_pclass *pc, const struct cc_policy *p,
			   const struct cc_request *req, int cls, hwloc_const_bitmap_t reserved,
			   hwloc_const_bitmap_t taken, struct cc_decision *d, struct cc_err *err)
{
	const struct cc_topo *t = cx->t;
	_cleanup_free_ unsigned char *state = NULL;
	_cleanup_free_ bool *inclass = NULL;
	_cleanup_free_ int *cands = NULL, *chosen = NULL, *budget = NULL, *floor = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t usable = hwloc_bitmap_alloc();
	struct l2info li __attribute__((cleanup(l2info_fini))) = { 0 };
	struct census cs = { 0 };
	char kind[64], what[128], desc[256], buf[64];
	int tpc = 0, unit, k, ncand = 0, nchosen = 0, maxk, min_shared = p->min_shared, node_budget;
	char who[256];
	bool whole_clusters = false; /* pack only cores of wholly free L2 clusters */

	if (!pool || !usable)
		return cc_err_set(err, ENOMEM, "out of memory");
	if (req->cpus < 1)
		return cc_err_set(err, EINVAL, "class %s: cpus must be at least 1, got %d", d->class_name, req->cpus);
	if (min_shared < 0)
		min_shared = 0;

	/* Threads per core: the class's, or under "any" the host's most. */
	for (int c = 0; c < t->nclasses; c++)
		if ((cls < 0 || c == cls) && t->classes[c].threads_per_core > tpc)
			tpc = t->classes[c].threads_per_core;
	if (tpc < 1)
		tpc = 1;
	unit = d->smt == CC_SMT_FULL ? tpc : 1;
	if (req->cpus % unit) {
		int lo = req->cpus / unit * unit;

		if (lo)
			return cc_err_set(err, EINVAL, "class %s: cpus %d is not a multiple of %d threads per core; use %d or %d",
					  d->class_name, req->cpus, unit, lo, lo + unit);
		return cc_err_set(err, EINVAL, "class %s: cpus %d is not a multiple of %d threads per core; use %d",
				  d->class_name, req->cpus, unit, unit);
	}
	k = req->cpus / unit;
	/* "3 whole performance cores", "3 whole cores of any class" */
	if (cls >= 0)
		snprintf(kind, sizeof(kind), "%s core%s", d->core_class, plural(k));
	else
		snprintf(kind, sizeof(kind), "core%s of any class", plural(k));
	if (d->smt == CC_SMT_FULL)
		snprintf(what, sizeof(what), "%d CPU%s (%d whole %s)", req->cpus, plural(req->cpus), k, kind);
	else
		snprintf(what, sizeof(what), "%d whole %s", k, kind);

	state = calloc((size_t)t->ncores + 1, 1);
	inclass = calloc((size_t)t->ncores + 1, sizeof(bool));
	cands = malloc(sizeof(int) * (size_t)(t->ncores + 1));
	chosen = malloc(sizeof(int) * (size_t)(t->ncores + 1));
	budget = calloc((size_t)t->nclasses + 1, sizeof(int));
	floor = calloc((size_t)t->nclasses + 1, sizeof(int));
	if (!state || !inclass || !cands || !chosen || !budget || !floor)
		return cc_err_set(err, ENOMEM, "out of memory");

	hwloc_bitmap_and(usable, t->online, t->allowed);
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if ((cls >= 0 && c->cls != cls) || c->npus <= 0 || !c->pus) {
			state[i] = CS_OTHER;
			continue;
		}
		inclass[i] = true;
		cs.total++;
		if (hwloc_bitmap_intersects(c->pus, reserved))
			state[i] = CS_RESERVED, cs.reserved++;
		else if (taken && hwloc_bitmap_intersects(c->pus, taken))
			state[i] = CS_TAKEN, cs.taken++;
		else if (!hwloc_bitmap_isincluded(c->pus, usable))
			state[i] = CS_BLOCKED, cs.blocked++;
		else if (d->smt == CC_SMT_FULL && c->npus != tpc)
			state[i] = CS_THREADS, cs.threads++;
		else
			state[i] = CS_FREE, cs.free++;
	}

	/* minShared (docs/allocator.md, step 5): the pool of each core class
	 * a shared placement class runs on keeps min_shared CPUs, and so do
	 * the node's unreserved CPUs as a whole. */
	shared_floors(t, p, min_shared, floor);
	for (int c = 0; c < t->nclasses; c++) {
		shared_pool(t, c, reserved, taken, pool);
		budget[c] = hwloc_bitmap_weight(pool) - floor[c];
	}
	shared_pool(t, -1, reserved, taken, pool);
	node_budget = hwloc_bitmap_weight(pool) - min_shared;
	if (cls < 0) {
		/* Under "any" the remainder kept for each class's pool is its
		 * highest-numbered free cores, decided before packing. */
		_cleanup_free_ int *used = calloc((size_t)t->nclasses + 1, sizeof(int));
		int used_all = 0;

		if (!used)
			return cc_err_set(err, ENOMEM, "out of memory");
		for (int i = 0; i < t->ncores; i++) {
			int c = t->cores[i].cls;

			if (state[i] != CS_FREE || c < 0 || c >= t->nclasses)
				continue;
			if (used[c] + t->cores[i].npus > budget[c] || used_all + t->cores[i].npus > node_budget) {
				state[i] = CS_SHARED;
				cs.free--;
				cs.shared++;
			} else {
				used[c] += t->cores[i].npus;
				used_all += t->cores[i].npus;
			}
		}
	}

	/* align: l2 — whole L2 clusters when the class has shared L2s. */
	if (pc->align == CC_ALIGN_L2) {
		if (l2info_fill(t, state, inclass, &li) < 0)
			return cc_err_set(err, ENOMEM, "out of memory");
		if (li.smax > 1) {
			bool uniform = li.smin == li.smax;
			bool multiple = uniform && k % li.smax == 0;

			if (pc->strict_clusters && uniform && !multiple) {
				int lo = k / li.smax * li.smax * unit, hi = lo + li.smax * unit;

				if (lo)
					return cc_err_set(err, EINVAL,
							  "class %s: cpus %d is not a whole number of %s L2 clusters of %d cores (strictClusters); use %d or %d",
							  d->class_name, req->cpus, d->core_class, li.smax, lo, hi);
				return cc_err_set(err, EINVAL,
						  "class %s: cpus %d is not a whole number of %s L2 clusters of %d cores (strictClusters); use %d",
						  d->class_name, req->cpus, d->core_class, li.smax, hi);
			}
			whole_clusters = pc->strict_clusters || multiple;
		}
	}

	if (whole_clusters) {
		int nwhole = 0;

		for (int i = 0; i < t->ncores; i++) {
			int l = t->cores[i].l2;

			if (state[i] == CS_FREE && l >= 0 && l < t->nl2s && li.nfree[l] == li.size[l])
				cands[ncand++] = i;
		}
		for (int l = 0; l < t->nl2s; l++)
			nwhole += li.size[l] && li.nfree[l] == li.size[l];
		if (ncand < k && pc->strict_clusters) {
			int sz = li.smax;

			describe(&cs, desc, sizeof(desc));
			return cc_err_set(err, ENOSPC,
					  "class %s: %s requested as whole L2 clusters (strictClusters, %d cores each), %d whole cluster%s (%d core%s) free; %s has %s",
					  d->class_name, what, sz, nwhole, plural(nwhole), ncand, plural(ncand), d->core_class, desc);
		}
		if (ncand < k) {
			/* Not enough whole clusters: fall back to any free cores. */
			whole_clusters = false;
			ncand = 0;
		}
	}
	if (!whole_clusters)
		for (int i = 0; i < t->ncores; i++)
			if (state[i] == CS_FREE)
				cands[ncand++] = i;

	if (cs.free < k || ncand < k) {
		int per = max_free_per_node(t, state);

		describe(&cs, desc, sizeof(desc));
		return cc_err_set(err, ENOSPC,
				  "class %s: %s requested, %d free in total (%d at most on one NUMA node); %s has %s; refused: not enough free whole cores: %s%s (corecarve status shows what each class can carve)",
				  d->class_name, what, cs.free, per, d->core_class, desc,
				  fewer(ncand < cs.free ? ncand : cs.free, unit, buf, sizeof(buf)),
				  cs.reserved ? ", or reserve other cores (policy reserved)" : "");
	}
	if (cls >= 0) {
		maxk = max_cores_in_budget(t, cands, ncand, budget[cls]);
		if (maxk < k) {
			floor_users(t, p, cls, who, sizeof(who));
			return cc_err_set(err, ENOSPC,
					  "class %s: %s requested, %d free in total (%d at most on one NUMA node), but the shared %s pool (%d CPU%s) must keep %d (minShared, for %s): at most %d core%s can be carved; refused: %s, or lower minShared in the policy",
					  d->class_name, what, cs.free, max_free_per_node(t, state), d->core_class,
					  budget[cls] + floor[cls], plural(budget[cls] + floor[cls]), floor[cls], who, maxk, plural(maxk), fewer(maxk, unit, buf, sizeof(buf)));
		}
		maxk = max_cores_in_budget(t, cands, ncand, node_budget);
		if (maxk < k)
			return cc_err_set(err, ENOSPC,
					  "class %s: %s requested, %d free in total (%d at most on one NUMA node), but the node's unreserved shared CPUs (%d) must keep %d (minShared): at most %d core%s can be carved; refused: %s, or lower minShared in the policy",
					  d->class_name, what, cs.free, max_free_per_node(t, state), node_budget + min_shared,
					  min_shared, maxk, plural(maxk), fewer(maxk, unit, buf, sizeof(buf)));
	}

	if (pick(cx, cands, ncand, k, LVL_NUMA, chosen, &nchosen) < 0 || nchosen != k)
		return cc_err_set(err, ENOMEM, "class %s: out of memory while packing", d->class_name);
	qsort(chosen, (size_t)k, sizeof(int), cmp_int);

	if (cls >= 0) {
		int npu = 0;

		for (int i = 0; i < k; i++)
			npu += t->cores[chosen[i]].npus;
		/* Only when cores of one class differ in thread count. */
		if (npu > budget[cls])
			return cc_err_set(err, ENOSPC,
					  "class %s: %s need %d CPUs, but the shared %s pool (%d CPU%s) must keep %d (minShared); refused: ask for fewer, or lower minShared in the policy",
					  d->class_name, what, npu, d->core_class, budget[cls] + floor[cls],
					  plural(budget[cls] + floor[cls]), floor[cls]);
		if (npu > node_budget)
			return cc_err_set(err, ENOSPC,
					  "class %s: %s need %d CPUs, but the node's unreserved shared CPUs (%d) must keep %d (minShared); refused: ask for fewer, or lower minShared in the policy",
					  d->class_name, what, npu, node_budget + min_shared, min_shared);
	}

	for (int i = 0; i < k; i++) {
		const struct cc_core *c = &t->cores[chosen[i]];
		int first = hwloc_bitmap_first(c->pus);

		if (d->smt == CC_SMT_FULL) {
			hwloc_bitmap_or(d->cpus, d->cpus, c->pus);
		} else {
			hwloc_bitmap_set(d->cpus, (unsigned)first);
			hwloc_bitmap_or(d->parked, d->parked, c->pus);
			hwloc_bitmap_clr(d->parked, (unsigned)first);
		}
	}

	if (pc->align == CC_ALIGN_L2 && li.smax > 1) {
		int touched, partial;

		l2_touch(t, &li, chosen, k, &touched, &partial);
		if (pc->strict_clusters && partial) {
			return cc_err_set(err, ENOSPC,
					  "class %s: no set of free whole %s L2 clusters (%d-%d cores each) holds exactly %d cores (strictClusters); refused",
					  d->class_name, d->core_class, li.smin, li.smax, k);
		}
		if (partial && li.smin == li.smax && k % li.smax)
			warn(d, "class %s: %d core%s do%s not fill whole %s L2 clusters of %d; using %d cluster%s, sharing %d with others",
			     d->class_name, k, plural(k), k == 1 ? "es" : "", d->core_class, li.smax, touched, plural(touched),
			     partial);
		else if (partial)
			warn(d, "class %s: not enough free whole %s L2 clusters; using %d cluster%s, sharing %d with others",
			     d->class_name, d->core_class, touched, plural(touched), partial);
	}

	fill_mems(t, d, cls);
	fill_spans(t, d);
	if (d->numa_nodes > 1) {
		_cleanup_free_ char *nodes = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();

		if (set) {
			for (int i = 0; i < k; i++) {
				int nd = t->cores[chosen[i]].numa;

				if (nd >= 0 && nd < t->nnuma)
					hwloc_bitmap_set(set, (unsigned)t->numa[nd].os);
			}
			nodes = cc_cpulist_format(set);
		}
		warn(d, "class %s: no single NUMA node has %d free whole %s (at most %d); the carve spans nodes %s",
		     d->class_name, k, kind, max_free_per_node(t, state), nodes ? nodes : "?");
	}
	return 0;
}

int cc_allocate(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken,
		const struct cc_request *req, struct cc_decision *out, struct cc_err *err)
{
	const struct cc_pclass *pc;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct ctx cx = { .t = t };
	int cls, r;

	memset(out, 0, sizeof(*out));
	snprintf(out->class_name, sizeof(out->class_name), "%s", req->class_name);
	pc = cc_policy_class(p, req->class_name);
	if (!pc) {
		char names[512];

		known_classes(p, names, sizeof(names));
		return cc_err_set(err, EINVAL, "unknown placement class \"%s\" (known: %s)", req->class_name, names);
	}
	/* Here, where the overrides take effect: no caller can apply an
	 * override its class does not grant an annotation, and the refusal
	 * comes before anything is decided, let alone written. */
	if (req->annotation[0] && cc_request_permitted(req, pc, err) < 0)
		return cc_err_prefix(err, "annotation %s", req->annotation);
	out->exclusive = pc->exclusive;
	out->smt = req->has_smt ? req->smt : pc->smt;
	out->memory = req->has_memory ? req->memory : pc->memory;
	out->irq = req->has_irq ? req->irq : pc->irq;
	out->partition = pc->partition;
	out->quota = pc->quota;

	cls = resolve_class(t, pc, out, err);
	if (cls == -2)
		goto fail;
	out->cpus = hwloc_bitmap_alloc();
	out->parked = hwloc_bitmap_alloc();
	out->mems = hwloc_bitmap_alloc();
	reserved = cc_policy_reserved(p, t);
	cx.dist = make_distances(t);
	if (!out->cpus || !out->parked || !out->mems || !reserved || !cx.dist) {
		cc_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	if (!pc->exclusive) {
		if (req->cpus < 0) {
			cc_err_set(err, EINVAL, "class %s: cpus must not be negative, got %d", out->class_name, req->cpus);
			goto fail;
		}
		r = alloc_shared(t, req, cls, reserved, taken, out, err);
	} else {
		r = alloc_exclusive(&cx, pc, p, req, cls, reserved, taken, out, err);
	}
	free(cx.dist);
	if (r == 0)
		return 0;
	cc_decision_fini(out);
	return -1;
fail:
	free(cx.dist);
	cc_decision_fini(out);
	return -1;
}

int cc_alloc_core_class(const struct cc_topo *t, const struct cc_pclass *pc, char name[CC_NAME_MAX],
			bool *fell_back, struct cc_err *err)
{
	struct cc_decision d;
	int ci;

	memset(&d, 0, sizeof(d));
	ci = resolve_class(t, pc, &d, err);
	snprintf(name, CC_NAME_MAX, "%s", ci == -2 ? "" : d.core_class);
	if (fell_back)
		*fell_back = d.fell_back;
	return ci;
}

void cc_decision_fini(struct cc_decision *d)
{
	if (!d)
		return;
	hwloc_bitmap_free(d->cpus);
	hwloc_bitmap_free(d->parked);
	hwloc_bitmap_free(d->mems);
	d->cpus = d->parked = d->mems = NULL;
}
