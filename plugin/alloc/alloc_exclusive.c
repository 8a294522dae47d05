/* corecarve: an exclusive carve (alloc_int.h): whole cores of one core
 * class, none of them reserved, taken or kept for a shared pool, packed by
 * hierarchical best fit (alloc.c's header says the order).  alloc_exclusive
 * runs the steps in the order docs/allocator.md gives the rules, so the
 * first rule a request breaks is the one its refusal names. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"
#include "cleanup.h"

/* Above this many candidate sets the exact search gives way to a greedy
 * choice (largest domains first); real hosts stay far below it. */
#define COMBO_LIMIT 200000

struct group {
	int dom;  /* domain index, or the "none" slot (ndom) */
	int free; /* candidate cores in it */
	int take;
};

/* ---- the search ------------------------------------------------------ */

/* NUMA distances: the topology's matrix, or when it has none 10 (same
 * node), 20 (same package), 30 (other package), the usual SLIT shape. */
int *alloc_distances(const struct cc_topo *t)
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

static long set_distance(const struct alloc_ctx *cx, int level, const struct group *g, const int *idx, int m)
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

/* One group that holds all k: the tightest such (lowest id on ties), so
 * the larger ones stay whole. */
static bool fits_one(struct group *g, int ng, int k)
{
	int bi = -1;

	for (int i = 0; i < ng; i++)
		if (g[i].free >= k && (bi < 0 || g[i].free < g[bi].free))
			bi = i;
	if (bi < 0)
		return false;
	g[bi].take = k;
	return true;
}

/* Equal groups away from the NUMA level (private L2s, identical CCXs):
 * every m-subset is as tight as any other, so the lowest ids win without
 * a search. */
static bool all_equal(const struct group *g, int ng)
{
	bool equal = true;

	for (int i = 1; i < ng; i++)
		equal &= g[i].free == g[0].free;
	return equal;
}

/* The lowest ids first, for equal groups; -1 when they cannot hold k. */
static int equal_split(struct group *g, int ng, int k)
{
	for (int i = 0; i < ng && k > 0; i++) {
		g[i].take = g[i].free < k ? g[i].free : k;
		k -= g[i].take;
	}
	return k > 0 ? -1 : 0;
}

/* The fewest groups that can hold k (the largest ones), -1 when all of
 * them cannot or on ENOMEM: the search looks at sets of exactly this many. */
static int min_groups(const struct group *g, int ng, int k)
{
	_cleanup_free_ int *frees = malloc(sizeof(int) * (size_t)ng);
	int m = 0, sum = 0;

	if (!frees)
		return -1;
	for (int i = 0; i < ng; i++)
		frees[i] = g[i].free;
	qsort(frees, (size_t)ng, sizeof(int), cmp_int_desc);
	while (m < ng && sum < k)
		sum += frees[m++];
	return sum < k ? -1 : m;
}

/* The closest, then tightest m groups that hold k, into best: every
 * m-subset in lexicographic order, strict improvement keeping the lowest
 * ids on ties.  false past COMBO_LIMIT sets. */
static bool best_subset(const struct alloc_ctx *cx, int level, const struct group *g, int ng, int m, int k,
			int *cur, int *best)
{
	long combos = 0, best_dist = 0, best_free = 0;
	bool found = false;

	for (int i = 0; i < m; i++)
		cur[i] = i;
	for (;;) {
		int tot = 0, pos;

		for (int i = 0; i < m; i++)
			tot += g[cur[i]].free;
		if (tot >= k) {
			long dd = set_distance(cx, level, g, cur, m);

			if (!found || dd < best_dist || (dd == best_dist && tot < best_free)) {
				memcpy(best, cur, sizeof(int) * (size_t)m);
				best_dist = dd;
				best_free = tot;
				found = true;
			}
		}
		if (++combos > COMBO_LIMIT)
			return false;
		pos = m - 1;
		while (pos >= 0 && cur[pos] == ng - m + pos)
			pos--;
		if (pos < 0)
			return found;
		cur[pos]++;
		for (int i = pos + 1; i < m; i++)
			cur[i] = cur[i - 1] + 1;
	}
}

/* Greedy, where the search gave up: the m largest, lowest id first on ties. */
static void largest_groups(const struct group *g, int ng, int m, int *best)
{
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

/* Fill the fullest groups completely and leave the remainder in the one
 * with the most free cores, so free space stays in one place.  m is
 * minimal, so any m-1 groups hold fewer than k. */
static void take_from(struct group *g, int *best, int m, int k)
{
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
}

/* Choose which groups (sorted by dom) hold `k` cores and how many each
 * gives.  Sets g[i].take; returns 0, or -1 when the groups cannot hold k
 * or on ENOMEM. */
static int choose_groups(const struct alloc_ctx *cx, int level, struct group *g, int ng, int k)
{
	_cleanup_free_ int *cur = NULL, *best = NULL;
	int m;

	if (fits_one(g, ng, k))
		return 0;
	if (level != LVL_NUMA && all_equal(g, ng))
		return equal_split(g, ng, k);
	cur = malloc(sizeof(int) * (size_t)ng);
	best = malloc(sizeof(int) * (size_t)ng);
	if (!cur || !best)
		return -1;
	m = min_groups(g, ng, k);
	if (m < 0)
		return -1;
	if (!best_subset(cx, level, g, ng, m, k, cur, best))
		largest_groups(g, ng, m, best);
	take_from(g, best, m, k);
	return 0;
}

/* Pick `k` of the `n` candidate core ids (ascending) into out[*nout...]. */
static int pick(const struct alloc_ctx *cx, const int *cands, int n, int k, int level, int *out, int *nout)
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
	nd = alloc_level_ndom(t, level);
	slot = malloc(sizeof(int) * (size_t)(nd + 1));
	g = calloc((size_t)nd + 1, sizeof(*g));
	sub = malloc(sizeof(int) * (size_t)n);
	if (!slot || !g || !sub)
		return -1;
	for (int d = 0; d <= nd; d++)
		slot[d] = 0;
	for (int i = 0; i < n; i++) {
		int cd = alloc_core_dom(&t->cores[cands[i]], level);

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
			int cd = alloc_core_dom(&t->cores[cands[i]], level);

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

static void l2info_fini(struct alloc_l2info *li)
{
	free(li->size);
	free(li->nfree);
}

/* Each L2 cluster's class cores and free ones, and the smallest and
 * largest cluster of the class. */
static int l2info_fill(const struct cc_topo *t, const unsigned char *state, const bool *inclass,
		       struct alloc_l2info *li)
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
static void l2_touch(const struct cc_topo *t, const struct alloc_l2info *li, const int *chosen, int k,
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


/* ---- the steps of one carve ------------------------------------------ */

static void carve_fini(struct alloc_carve *c)
{
	free(c->state);
	free(c->inclass);
	free(c->cands);
	free(c->chosen);
	free(c->budget);
	free(c->floor);
	l2info_fini(&c->li);
	hwloc_bitmap_free(c->pool);
	hwloc_bitmap_free(c->usable);
}

/* Whole cores: cpus must be a multiple of a core's threads under smt
 * full; k and the words every refusal quotes follow from it. */
static int carve_shape(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	struct cc_decision *d = c->d;
	int cpus = c->req->cpus;

	/* Threads per core: the class's, or under "any" the host's most. */
	for (int i = 0; i < t->nclasses; i++)
		if ((c->cls < 0 || i == c->cls) && t->classes[i].threads_per_core > c->tpc)
			c->tpc = t->classes[i].threads_per_core;
	if (c->tpc < 1)
		c->tpc = 1;
	c->unit = d->smt == CC_SMT_FULL ? c->tpc : 1;
	if (cpus % c->unit) {
		int lo = cpus / c->unit * c->unit;

		if (lo)
			return cc_err_set(err, EINVAL, "class %s: cpus %d is not a multiple of %d threads per core; use %d or %d",
					  d->class_name, cpus, c->unit, lo, lo + c->unit);
		return cc_err_set(err, EINVAL, "class %s: cpus %d is not a multiple of %d threads per core; use %d",
				  d->class_name, cpus, c->unit, c->unit);
	}
	c->k = cpus / c->unit;
	/* "3 whole performance cores", "3 whole cores of any class" */
	if (c->cls >= 0)
		snprintf(c->kind, sizeof(c->kind), "%s core%s", d->core_class, alloc_plural(c->k));
	else
		snprintf(c->kind, sizeof(c->kind), "core%s of any class", alloc_plural(c->k));
	if (d->smt == CC_SMT_FULL)
		snprintf(c->what, sizeof(c->what), "%d CPU%s (%d whole %s)", cpus, alloc_plural(cpus), c->k, c->kind);
	else
		snprintf(c->what, sizeof(c->what), "%d whole %s", c->k, c->kind);
	return 0;
}

/* The per-core and per-class arrays, sized by the topology once. */
static int carve_buffers(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;

	c->state = calloc((size_t)t->ncores + 1, 1);
	c->inclass = calloc((size_t)t->ncores + 1, sizeof(bool));
	c->cands = malloc(sizeof(int) * (size_t)(t->ncores + 1));
	c->chosen = malloc(sizeof(int) * (size_t)(t->ncores + 1));
	c->budget = calloc((size_t)t->nclasses + 1, sizeof(int));
	c->floor = calloc((size_t)t->nclasses + 1, sizeof(int));
	if (!c->state || !c->inclass || !c->cands || !c->chosen || !c->budget || !c->floor)
		return cc_err_set(err, ENOMEM, "out of memory");
	return 0;
}

/* Each core of the class, free or the first reason it is not: the
 * refusals count them by reason. */
static void carve_census(struct alloc_carve *c)
{
	const struct cc_topo *t = c->cx->t;

	hwloc_bitmap_and(c->usable, t->online, t->allowed);
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *core = &t->cores[i];

		if ((c->cls >= 0 && core->cls != c->cls) || core->npus <= 0 || !core->pus ||
		    (c->req->within && !hwloc_bitmap_isincluded(core->pus, c->req->within))) {
			c->state[i] = CS_OTHER;
			continue;
		}
		c->inclass[i] = true;
		c->cs.total++;
		if (hwloc_bitmap_intersects(core->pus, c->reserved))
			c->state[i] = CS_RESERVED, c->cs.reserved++;
		else if (c->taken && hwloc_bitmap_intersects(core->pus, c->taken))
			c->state[i] = CS_TAKEN, c->cs.taken++;
		else if (!hwloc_bitmap_isincluded(core->pus, c->usable))
			c->state[i] = CS_BLOCKED, c->cs.blocked++;
		else if (c->d->smt == CC_SMT_FULL && core->npus != c->tpc)
			c->state[i] = CS_THREADS, c->cs.threads++;
		else
			c->state[i] = CS_FREE, c->cs.free++;
	}
}

/* minShared (docs/allocator.md, step 5): the pool of each core class a
 * shared placement class runs on keeps min_shared CPUs, and so do the
 * node's unreserved CPUs as a whole. */
static int carve_budgets(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	_cleanup_free_ int *used = NULL;
	int used_all = 0;

	alloc_budgets(t, c->p, c->reserved, c->taken, c->pool, c->floor, c->budget, &c->node_budget, &c->min_shared);
	if (c->cls >= 0)
		return 0;
	/* Under "any" the remainder kept for each class's pool is its
	 * highest-numbered free cores, decided before packing. */
	used = calloc((size_t)t->nclasses + 1, sizeof(int));
	if (!used)
		return cc_err_set(err, ENOMEM, "out of memory");
	for (int i = 0; i < t->ncores; i++) {
		int cl = t->cores[i].cls, n = t->cores[i].npus;

		if (c->state[i] != CS_FREE || cl < 0 || cl >= t->nclasses)
			continue;
		if (used[cl] + n > c->budget[cl] || used_all + n > c->node_budget) {
			c->state[i] = CS_SHARED;
			c->cs.free--;
			c->cs.shared++;
		} else {
			used[cl] += n;
			used_all += n;
		}
	}
	return 0;
}

/* align: l2 — whole L2 clusters when the class has shared L2s; a
 * strictClusters size that no number of uniform clusters makes is a bad
 * request, refused before any capacity is counted. */
static int carve_align(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_pclass *pc = c->pc;
	struct alloc_l2info *li = &c->li;
	bool uniform, multiple;

	if (pc->align != CC_ALIGN_L2)
		return 0;
	if (l2info_fill(c->cx->t, c->state, c->inclass, li) < 0)
		return cc_err_set(err, ENOMEM, "out of memory");
	if (li->smax <= 1)
		return 0;
	uniform = li->smin == li->smax;
	multiple = uniform && c->k % li->smax == 0;
	if (pc->strict_clusters && uniform && !multiple) {
		int lo = c->k / li->smax * li->smax * c->unit, hi = lo + li->smax * c->unit;

		if (lo)
			return cc_err_set(err, EINVAL,
					  "class %s: cpus %d is not a whole number of %s L2 clusters of %d cores (strictClusters); use %d or %d",
					  c->d->class_name, c->req->cpus, c->d->core_class, li->smax, lo, hi);
		return cc_err_set(err, EINVAL,
				  "class %s: cpus %d is not a whole number of %s L2 clusters of %d cores (strictClusters); use %d",
				  c->d->class_name, c->req->cpus, c->d->core_class, li->smax, hi);
	}
	c->whole_clusters = pc->strict_clusters || multiple;
	return 0;
}

/* The cores the search may choose: those of wholly free clusters when
 * packing whole clusters and enough are free (strictClusters refuses
 * otherwise), else every free core. */
static int carve_candidates(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	const struct alloc_l2info *li = &c->li;

	if (c->whole_clusters) {
		int nwhole = 0;

		for (int i = 0; i < t->ncores; i++) {
			int l = t->cores[i].l2;

			if (c->state[i] == CS_FREE && l >= 0 && l < t->nl2s && li->nfree[l] == li->size[l])
				c->cands[c->ncand++] = i;
		}
		for (int l = 0; l < t->nl2s; l++)
			nwhole += li->size[l] && li->nfree[l] == li->size[l];
		if (c->ncand < c->k && c->pc->strict_clusters)
			return alloc_refuse_clusters(c, nwhole, err);
		if (c->ncand < c->k) {
			/* Not enough whole clusters: fall back to any free cores. */
			c->whole_clusters = false;
			c->ncand = 0;
		}
	}
	if (!c->whole_clusters)
		for (int i = 0; i < t->ncores; i++)
			if (c->state[i] == CS_FREE)
				c->cands[c->ncand++] = i;
	return 0;
}

/* Refuse before packing when the free cores, or the CPUs the minShared
 * floors leave, cannot hold k: the refusal then names the most that fit. */
static int carve_capacity(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	int maxk;

	if (c->cs.free < c->k || c->ncand < c->k)
		return alloc_refuse_free(c, err);
	if (c->cls < 0)
		return 0;
	maxk = max_cores_in_budget(t, c->cands, c->ncand, c->budget[c->cls]);
	if (maxk < c->k)
		return alloc_refuse_class_floor(c, maxk, err);
	maxk = max_cores_in_budget(t, c->cands, c->ncand, c->node_budget);
	if (maxk < c->k)
		return alloc_refuse_node_floor(c, maxk, err);
	return 0;
}

/* Pack k cores, then hold the cores chosen to the budgets in CPUs: only
 * cores of one class that differ in thread count get past the count in
 * cores and fail here. */
static int carve_pack(struct alloc_carve *c, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	int npu = 0;

	if (pick(c->cx, c->cands, c->ncand, c->k, LVL_NUMA, c->chosen, &c->nchosen) < 0 || c->nchosen != c->k)
		return cc_err_set(err, ENOMEM, "class %s: out of memory while packing", c->d->class_name);
	qsort(c->chosen, (size_t)c->k, sizeof(int), cmp_int);
	if (c->cls < 0)
		return 0;
	for (int i = 0; i < c->k; i++)
		npu += t->cores[c->chosen[i]].npus;
	if (npu > c->budget[c->cls])
		return alloc_refuse_class_cpus(c, npu, err);
	if (npu > c->node_budget)
		return alloc_refuse_node_cpus(c, npu, err);
	return 0;
}

/* The decision's CPUs: every thread under smt full, else the first
 * thread of each core, its siblings parked. */
static void carve_fill(struct alloc_carve *c)
{
	struct cc_decision *d = c->d;

	for (int i = 0; i < c->k; i++) {
		const struct cc_core *core = &c->cx->t->cores[c->chosen[i]];
		int first = hwloc_bitmap_first(core->pus);

		if (d->smt == CC_SMT_FULL) {
			hwloc_bitmap_or(d->cpus, d->cpus, core->pus);
		} else {
			hwloc_bitmap_set(d->cpus, (unsigned)first);
			hwloc_bitmap_or(d->parked, d->parked, core->pus);
			hwloc_bitmap_clr(d->parked, (unsigned)first);
		}
	}
}

/* What the packing did to the L2 clusters: strictClusters refuses a
 * carve that shares one; otherwise the sharing is a warning. */
static int carve_clusters(struct alloc_carve *c, struct cc_err *err)
{
	int touched, partial;

	if (c->pc->align != CC_ALIGN_L2 || c->li.smax <= 1)
		return 0;
	l2_touch(c->cx->t, &c->li, c->chosen, c->k, &touched, &partial);
	if (c->pc->strict_clusters && partial)
		return alloc_refuse_partial(c, err);
	alloc_warn_l2(c, touched, partial);
	return 0;
}

int alloc_exclusive(const struct alloc_ctx *cx, const struct cc_pclass *pc, const struct cc_policy *p,
		    const struct cc_request *req, int cls, hwloc_const_bitmap_t reserved,
		    hwloc_const_bitmap_t taken, struct cc_decision *d, struct cc_err *err)
{
	struct alloc_carve c __attribute__((cleanup(carve_fini))) = {
		.cx = cx, .pc = pc, .p = p, .req = req, .cls = cls, .reserved = reserved, .taken = taken, .d = d,
		.min_shared = p->min_shared < 0 ? 0 : p->min_shared,
	};

	c.pool = hwloc_bitmap_alloc();
	c.usable = hwloc_bitmap_alloc();
	if (!c.pool || !c.usable)
		return cc_err_set(err, ENOMEM, "out of memory");
	if (req->cpus < 1)
		return cc_err_set(err, EINVAL, "class %s: cpus must be at least 1, got %d", d->class_name, req->cpus);
	if (carve_shape(&c, err) < 0 || carve_buffers(&c, err) < 0)
		return -1;
	carve_census(&c);
	if (carve_budgets(&c, err) < 0 || carve_align(&c, err) < 0 || carve_candidates(&c, err) < 0 ||
	    carve_capacity(&c, err) < 0 || carve_pack(&c, err) < 0)
		return -1;
	carve_fill(&c);
	if (carve_clusters(&c, err) < 0)
		return -1;
	alloc_fill_mems(cx->t, d, cls);
	alloc_fill_spans(cx->t, d);
	if (d->numa_nodes > 1)
		alloc_warn_numa(&c);
	return 0;
}
