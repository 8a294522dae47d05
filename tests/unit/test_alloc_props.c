/* Allocator properties over real fixtures and synthetic shapes: seeded
 * random create/delete sequences, checking after every step that carves
 * never overlap, never split a core, keep to their class, leave reserved
 * CPUs and the minShared pool alone, get local mems, and that a request is
 * refused exactly when an independent count of capacity says it must be. */
#include <errno.h>
#include <string.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"
#include "testlib.h"

#define STEPS 3000
#define MAX_LIVE 64
#define MAX_PCLASSES 16

/* ---- topologies ------------------------------------------------------- */

struct shape {
	const char *name;
	enum cc_topo_kind kind;
	const char *dir, *file, *top; /* fixtures */
	const char *desc;             /* synthetic */
	const char *ov_perf, *ov_eff; /* class overrides for synthetic hybrids */
};

static const struct shape shapes[] = {
	{ "F03", CC_TOPO_HOST, "F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1" },
	{ "F05", CC_TOPO_XML, "F05-amd-zen5-strixpoint-ryzen-ai9-hx370", "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml" },
	{ "F06", CC_TOPO_HOST, "F06-amd-epyc-7451-2s", "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451" },
	{ "F10", CC_TOPO_HOST, "F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve" },
	{ "F11", CC_TOPO_HOST, "F11-arm-X3-A715-A710-A510", "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3" },
	{ "1x4x2", CC_TOPO_SYNTHETIC, .desc = "pack:1 core:4 pu:2" },
	{ "2x6x2 sib n/n+12", CC_TOPO_SYNTHETIC, .desc = "pack:2 core:6 pu:2(indexes=2*12:1*2)" },
	{ "2x6x2 numa sib n/n+12", CC_TOPO_SYNTHETIC, .desc = "pack:2 numa:1 core:6 pu:2(indexes=2*12:1*2)" },
	{ "2x8x4", CC_TOPO_SYNTHETIC, .desc = "pack:2 core:8 pu:4" },
	{ "8 numa", CC_TOPO_SYNTHETIC, .desc = "pack:2 numa:4 core:6 pu:2" },
	{ "hybrid 4P+12E", CC_TOPO_SYNTHETIC, .desc = "pack:1 l3:1 l2:4 core:4 pu:1", .ov_perf = "0-3", .ov_eff = "4-15" },
	{ "hybrid smt", CC_TOPO_SYNTHETIC, .desc = "pack:1 l3:2 l2:4 core:2 pu:2", .ov_perf = "0-15", .ov_eff = "16-31" },
};
#define NSHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

static struct cc_topo *load_shape(const struct shape *s)
{
	struct cc_err err = CC_ERR_INIT;
	char path[4096];
	const char *rootp = "/";
	struct cc_class_override ov[2];
	struct cc_topo_source src = { .kind = s->kind, .arg = s->desc };
	struct cc_root *root;
	struct cc_topo *t;

	memset(ov, 0, sizeof(ov));
	if (s->kind == CC_TOPO_HOST) {
		const char *tree = cc_test_fixture_tree(s->dir, s->file);

		if (!tree)
			return NULL;
		snprintf(path, sizeof(path), "%s/%s", tree, s->top);
		rootp = path;
	} else if (s->kind == CC_TOPO_XML) {
		src.arg = cc_test_fixture_file(s->dir, s->file);
		if (!src.arg)
			return NULL;
	}
	if (s->ov_perf) {
		snprintf(ov[0].name, sizeof(ov[0].name), "performance");
		snprintf(ov[1].name, sizeof(ov[1].name), "efficient");
		ov[0].cpus = hwloc_bitmap_alloc();
		ov[1].cpus = hwloc_bitmap_alloc();
		ck_assert_int_eq(cc_cpulist_parse(s->ov_perf, ov[0].cpus, "ov", &err), 0);
		ck_assert_int_eq(cc_cpulist_parse(s->ov_eff, ov[1].cpus, "ov", &err), 0);
		src.overrides = ov;
		src.noverrides = 2;
	}
	root = cc_root_open(rootp, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	src.root = root;
	t = cc_topo_load(&src, &err);
	cc_root_free(root);
	hwloc_bitmap_free(ov[0].cpus);
	hwloc_bitmap_free(ov[1].cpus);
	ck_assert_msg(t != NULL, "%s: %s", s->name, err.msg);
	return t;
}

/* ---- policy ----------------------------------------------------------- */

static struct cc_pclass *add(struct cc_policy *p, const char *name, const char *type, enum cc_smt smt)
{
	struct cc_pclass *c = &p->classes[p->nclasses++];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->core_type, sizeof(c->core_type), "%s", type);
	c->smt = smt;
	c->exclusive = true;
	c->memory = CC_MEM_LOCAL;
	return c;
}

static struct cc_policy *make_policy(const struct cc_topo *t, hwloc_bitmap_t reserved, int min_shared)
{
	struct cc_policy *p = calloc(1, sizeof(*p));
	const char *top = t->classes[0].name, *last = t->classes[t->nclasses - 1].name;
	struct cc_pclass *c;

	ck_assert_ptr_nonnull(p);
	p->classes = calloc(MAX_PCLASSES, sizeof(*p->classes));
	ck_assert_ptr_nonnull(p->classes);
	p->min_shared = min_shared;
	p->has_reserved = reserved != NULL;
	p->reserved = reserved;
	add(p, "lat", top, CC_SMT_ISOLATE);
	add(p, "full", top, CC_SMT_FULL);
	c = add(p, "lowfull", last, CC_SMT_FULL);
	c->align = CC_ALIGN_L2;
	c = add(p, "lowiso", last, CC_SMT_ISOLATE);
	c->align = CC_ALIGN_L2;
	c->memory = CC_MEM_SPREAD;
	c = add(p, "strict", last, CC_SMT_ISOLATE);
	c->align = CC_ALIGN_L2;
	c->strict_clusters = true;
	c = add(p, "thr", "efficient", CC_SMT_FULL);
	snprintf(c->fallback, sizeof(c->fallback), "%s", top);
	add(p, "any", "any", CC_SMT_ISOLATE);
	add(p, "anyfull", "any", CC_SMT_FULL);
	if (t->nclasses > 2)
		add(p, "mid", t->classes[1].name, CC_SMT_ISOLATE);
	c = add(p, "shared", last, CC_SMT_FULL);
	c->exclusive = false;
	return p;
}

static void free_policy(struct cc_policy *p)
{
	hwloc_bitmap_free(p->reserved);
	free(p->classes);
	free(p);
}

/* ---- the independent model -------------------------------------------- */

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (unsigned)(rng_state % n) : 0;
}

struct live {
	hwloc_bitmap_t cpus, parked;
};

struct world {
	const struct cc_topo *t;
	const struct cc_policy *p;
	hwloc_bitmap_t reserved, taken, usable;
	struct live live[MAX_LIVE];
	int nlive;
};

static void rebuild_taken(struct world *w)
{
	hwloc_bitmap_zero(w->taken);
	for (int i = 0; i < w->nlive; i++) {
		hwloc_bitmap_or(w->taken, w->taken, w->live[i].cpus);
		hwloc_bitmap_or(w->taken, w->taken, w->live[i].parked);
	}
}

static int class_of(const struct cc_topo *t, const struct cc_pclass *pc)
{
	int ci;

	if (!strcmp(pc->core_type, "any"))
		return -1;
	ci = cc_topo_class_index(t, pc->core_type);
	if (ci < 0)
		ci = cc_topo_class_index(t, pc->fallback);
	return ci;
}

static int tpc_of(const struct cc_topo *t, int cls)
{
	int m = 1;

	for (int c = 0; c < t->nclasses; c++)
		if ((cls < 0 || c == cls) && t->classes[c].threads_per_core > m)
			m = t->classes[c].threads_per_core;
	return m;
}

static bool core_free(const struct world *w, int i, bool full, int tpc)
{
	const struct cc_core *c = &w->t->cores[i];

	return c->npus > 0 && hwloc_bitmap_isincluded(c->pus, w->usable) && !hwloc_bitmap_intersects(c->pus, w->reserved) &&
	       !hwloc_bitmap_intersects(c->pus, w->taken) && (!full || c->npus == tpc);
}

static int pool_size(const struct world *w, int cls)
{
	_cleanup_bitmap_ hwloc_bitmap_t s = hwloc_bitmap_dup(w->usable);

	hwloc_bitmap_and(s, s, w->t->classes[cls].cpus);
	hwloc_bitmap_andnot(s, s, w->reserved);
	hwloc_bitmap_andnot(s, s, w->taken);
	return hwloc_bitmap_weight(s);
}

/* What minShared keeps in class `cls`'s pool: minShared where a shared
 * placement class runs on it, nothing elsewhere. */
static int floor_of(const struct world *w, int cls)
{
	for (int i = 0; i < w->p->nclasses; i++) {
		int c = class_of(w->t, &w->p->classes[i]);

		if (!w->p->classes[i].exclusive && (c == cls || c < 0))
			return w->p->min_shared > 0 ? w->p->min_shared : 0;
	}
	return 0;
}

/* Most cores of class `cls` that fit the budget (pool - its floor),
 * smallest first; `only` restricts to a mask of core ids (NULL: all). */
static int node_budget(const struct world *w)
{
	int all = 0;

	for (int c = 0; c < w->t->nclasses; c++)
		all += pool_size(w, c);
	return all - (w->p->min_shared > 0 ? w->p->min_shared : 0);
}

static int class_capacity(const struct world *w, int cls, bool full, int tpc, const bool *only)
{
	int budget = pool_size(w, cls) - floor_of(w, cls);

	/* The node as a whole keeps minShared too. */
	if (node_budget(w) < budget)
		budget = node_budget(w);
	int n = 0, used = 0;

	/* Cores of one class have at most two thread counts in practice:
	 * take the small ones first. */
	for (int npus = 1; npus <= 8; npus++)
		for (int i = 0; i < w->t->ncores; i++) {
			const struct cc_core *c = &w->t->cores[i];

			if (c->cls != cls || c->npus != npus || !core_free(w, i, full, tpc) || (only && !only[i]))
				continue;
			if (used + npus > budget)
				return n;
			used += npus;
			n++;
		}
	return n;
}

/* L2 clusters of class `cls`: sizes, and the cores in fully free ones. */
static void l2_shape(const struct world *w, int cls, bool full, int tpc, int *smin, int *smax, bool *whole,
		     int *wsize, int *nw)
{
	const struct cc_topo *t = w->t;
	int *size = calloc((size_t)t->nl2s + 1, sizeof(int)), *nfree = calloc((size_t)t->nl2s + 1, sizeof(int));

	ck_assert(size && nfree);
	*smin = 1 << 30;
	*smax = 0;
	for (int i = 0; i < t->ncores; i++) {
		int l = t->cores[i].l2;

		if ((cls >= 0 && t->cores[i].cls != cls) || t->cores[i].npus <= 0 || l < 0)
			continue;
		size[l]++;
		nfree[l] += core_free(w, i, full, tpc);
	}
	*nw = 0;
	for (int l = 0; l < t->nl2s; l++)
		if (size[l]) {
			*smin = size[l] < *smin ? size[l] : *smin;
			*smax = size[l] > *smax ? size[l] : *smax;
			if (nfree[l] == size[l])
				wsize[(*nw)++] = size[l];
		}
	for (int i = 0; i < t->ncores; i++) {
		int l = t->cores[i].l2;

		whole[i] = l >= 0 && size[l] && nfree[l] == size[l] && core_free(w, i, full, tpc) &&
			   (cls < 0 || t->cores[i].cls == cls);
	}
	free(size);
	free(nfree);
}

enum verdict { V_ACCEPT, V_NOSPACE, V_INVALID };

static enum verdict predict(const struct world *w, const struct cc_pclass *pc, const struct cc_request *r, int *kout)
{
	const struct cc_topo *t = w->t;
	int cls = class_of(t, pc);
	bool full = (r->has_smt ? r->smt : pc->smt) == CC_SMT_FULL;
	int tpc = tpc_of(t, cls), unit = full ? tpc : 1, k, cap = 0;

	if (r->cpus < 1 || r->cpus % unit)
		return V_INVALID;
	k = *kout = r->cpus / unit;
	if (cls < 0) {
		int node = node_budget(w), cpus = 0;

		/* Each class up to its own budget, all of them up to the node's,
		 * in core order as the allocator sets the rest aside. */
		for (int c = 0; c < t->nclasses; c++) {
			int n = class_capacity(w, c, full, tpc, NULL);

			for (int i = 0; i < t->ncores && n; i++)
				if (t->cores[i].cls == c && core_free(w, i, full, tpc) && cpus + t->cores[i].npus <= node) {
					cpus += t->cores[i].npus;
					cap++;
					n--;
				}
		}
		return k <= cap ? V_ACCEPT : V_NOSPACE;
	}
	if (pc->align == CC_ALIGN_L2 && pc->strict_clusters) {
		int smin, smax, nw;
		_cleanup_free_ bool *whole = calloc((size_t)t->ncores + 1, sizeof(bool));
		_cleanup_free_ int *wsize = calloc((size_t)t->nl2s + 1, sizeof(int));
		_cleanup_free_ bool *sum = calloc((size_t)t->ncores + 2, sizeof(bool));

		ck_assert(whole && wsize && sum);
		l2_shape(w, cls, full, tpc, &smin, &smax, whole, wsize, &nw);
		if (smax > 1) {
			if (smin == smax && k % smax)
				return V_INVALID;
			/* Whole clusters only: k must be a sum of free cluster sizes. */
			sum[0] = true;
			for (int i = 0; i < nw; i++)
				for (int v = t->ncores; v >= wsize[i]; v--)
					sum[v] |= sum[v - wsize[i]];
			if (k > t->ncores || !sum[k])
				return V_NOSPACE;
			return k <= class_capacity(w, cls, full, tpc, whole) ? V_ACCEPT : V_NOSPACE;
		}
	}
	return k <= class_capacity(w, cls, full, tpc, NULL) ? V_ACCEPT : V_NOSPACE;
}

/* Fewest NUMA nodes that could hold k free cores of the class. */
static int min_nodes(const struct world *w, int cls, bool full, int tpc, int k)
{
	const struct cc_topo *t = w->t;
	int *cnt = calloc((size_t)t->nnuma + 1, sizeof(int)), m = 0, sum = 0;

	ck_assert_ptr_nonnull(cnt);
	for (int i = 0; i < t->ncores; i++)
		if (t->cores[i].cls == cls && t->cores[i].numa >= 0 && core_free(w, i, full, tpc))
			cnt[t->cores[i].numa]++;
	while (sum < k) {
		int b = 0;

		for (int n = 1; n < t->nnuma; n++)
			b = cnt[n] > cnt[b] ? n : b;
		sum += cnt[b];
		cnt[b] = 0;
		m++;
	}
	free(cnt);
	return m;
}

/* ---- checks ----------------------------------------------------------- */

static void check_accepted(struct world *w, const struct shape *s, int step, const struct cc_pclass *pc,
			   const struct cc_request *r, const struct cc_decision *d, int k)
{
	const struct cc_topo *t = w->t;
	int cls = class_of(t, pc), ncores = 0;
	bool full = d->smt == CC_SMT_FULL;
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc(), mems = hwloc_bitmap_alloc();
	int os;

	ck_assert_msg(hwloc_bitmap_weight(d->cpus) == r->cpus, "%s step %d: %s %d got %d CPUs", s->name, step,
		      r->class_name, r->cpus, hwloc_bitmap_weight(d->cpus));
	ck_assert_msg(!hwloc_bitmap_intersects(d->cpus, d->parked), "%s step %d: cpus and parked overlap", s->name, step);
	hwloc_bitmap_or(all, d->cpus, d->parked);
	ck_assert_msg(!hwloc_bitmap_intersects(all, w->taken), "%s step %d: overlaps a live carve", s->name, step);
	ck_assert_msg(!hwloc_bitmap_intersects(all, w->reserved), "%s step %d: touches reserved CPUs", s->name, step);
	ck_assert_msg(hwloc_bitmap_isincluded(all, w->usable), "%s step %d: offline or disallowed CPU", s->name, step);
	if (full)
		ck_assert_msg(hwloc_bitmap_iszero(d->parked), "%s step %d: smt full parks CPUs", s->name, step);

	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if (!c->pus || !hwloc_bitmap_intersects(c->pus, all))
			continue;
		ncores++;
		ck_assert_msg(hwloc_bitmap_isincluded(c->pus, all), "%s step %d: core %d split", s->name, step, i);
		ck_assert_msg(cls < 0 || c->cls == cls, "%s step %d: core %d of class %d in a carve of class %d", s->name,
			      step, i, c->cls, cls);
		if (!full) {
			_cleanup_bitmap_ hwloc_bitmap_t run = hwloc_bitmap_alloc();

			hwloc_bitmap_and(run, c->pus, d->cpus);
			ck_assert_msg(hwloc_bitmap_weight(run) == 1 && hwloc_bitmap_first(run) == hwloc_bitmap_first(c->pus),
				      "%s step %d: isolate must run on the first thread of core %d", s->name, step, i);
		}
	}
	ck_assert_msg(ncores == k, "%s step %d: %d cores, want %d", s->name, step, ncores, k);

	/* Local memory: the nodes of the CPUs. */
	if (d->memory == CC_MEM_LOCAL) {
		hwloc_bitmap_foreach_begin(os, d->cpus)
		{
			int pi = cc_topo_pu_index(t, os);

			ck_assert_int_ge(pi, 0);
			if (t->pus[pi].numa >= 0)
				hwloc_bitmap_set(mems, (unsigned)t->numa[t->pus[pi].numa].os);
		}
		hwloc_bitmap_foreach_end();
		ck_assert_msg(hwloc_bitmap_isequal(mems, d->mems), "%s step %d: mems do not match the CPUs", s->name, step);
		ck_assert_int_eq(d->numa_nodes, hwloc_bitmap_weight(mems));
	} else if (d->memory == CC_MEM_SPREAD) {
		for (int n = 0; n < t->nnuma; n++)
			if (cls < 0 ? !hwloc_bitmap_iszero(t->numa[n].cpus) : hwloc_bitmap_intersects(t->numa[n].cpus, t->classes[cls].cpus))
				hwloc_bitmap_set(mems, (unsigned)t->numa[n].os);
		ck_assert_msg(hwloc_bitmap_isequal(mems, d->mems), "%s step %d: spread mems", s->name, step);
	}

	/* Fewest NUMA nodes, for classes packed over all free cores. */
	if (cls >= 0 && pc->align == CC_ALIGN_NONE && t->nnuma > 0)
		ck_assert_msg(d->numa_nodes == min_nodes(w, cls, full, tpc_of(t, cls), k),
			      "%s step %d: %s %d spans %d NUMA nodes, %d would do", s->name, step, r->class_name, r->cpus,
			      d->numa_nodes, min_nodes(w, cls, full, tpc_of(t, cls), k));
}

/* After the step: minShared holds for every class a shared class runs on
 * that lost CPUs, and for the node; every core belongs to one carve or
 * none. */
static void check_world(struct world *w, const struct shape *s, int step)
{
	const struct cc_topo *t = w->t;

	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];
		int owner = -1;

		if (!c->pus)
			continue;
		for (int l = 0; l < w->nlive; l++) {
			_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();

			hwloc_bitmap_or(all, w->live[l].cpus, w->live[l].parked);
			if (!hwloc_bitmap_intersects(all, c->pus))
				continue;
			ck_assert_msg(owner < 0, "%s step %d: core %d in two carves", s->name, step, i);
			ck_assert_msg(hwloc_bitmap_isincluded(c->pus, all), "%s step %d: core %d split", s->name, step, i);
			owner = l;
		}
	}
	for (int c = 0; c < t->nclasses; c++) {
		_cleanup_bitmap_ hwloc_bitmap_t carved = hwloc_bitmap_dup(t->classes[c].cpus);

		hwloc_bitmap_and(carved, carved, w->taken);
		if (!hwloc_bitmap_iszero(carved))
			ck_assert_msg(pool_size(w, c) >= floor_of(w, c), "%s step %d: class %s pool %d < its floor %d",
				      s->name, step, t->classes[c].name, pool_size(w, c), floor_of(w, c));
	}
	/* The node's unreserved CPUs keep minShared too. */
	if (!hwloc_bitmap_iszero(w->taken)) {
		int all = 0;

		for (int c = 0; c < t->nclasses; c++)
			all += pool_size(w, c);
		ck_assert_msg(all >= w->p->min_shared, "%s step %d: node pool %d < minShared %d", s->name, step, all,
			      w->p->min_shared);
	}
}

static void run_sequence(const struct shape *s, const struct cc_topo *t, struct cc_policy *p, unsigned long long seed)
{
	struct world w = { .t = t, .p = p };
	int accepted = 0, refused = 0;

	rng_state = seed;
	w.reserved = cc_policy_reserved(p, t);
	w.taken = hwloc_bitmap_alloc();
	w.usable = hwloc_bitmap_alloc();
	hwloc_bitmap_and(w.usable, t->online, t->allowed);

	for (int step = 0; step < STEPS; step++) {
		if (w.nlive && (rnd(10) < 4 || w.nlive == MAX_LIVE)) {
			int v = (int)rnd((unsigned)w.nlive);

			hwloc_bitmap_free(w.live[v].cpus);
			hwloc_bitmap_free(w.live[v].parked);
			w.live[v] = w.live[--w.nlive];
			rebuild_taken(&w);
			continue;
		}
		{
			const struct cc_pclass *pc = &p->classes[rnd((unsigned)p->nclasses)];
			int cls = class_of(t, pc), span = cls < 0 ? t->npus : hwloc_bitmap_weight(t->classes[cls].cpus);
			struct cc_request r;
			struct cc_decision d, d2;
			struct cc_err err = CC_ERR_INIT, err2 = CC_ERR_INIT;
			enum verdict want;
			int k = 0, rc;

			memset(&r, 0, sizeof(r));
			snprintf(r.class_name, sizeof(r.class_name), "%s", pc->name);
			/* Mostly small requests (so carves accumulate), some large. */
			r.cpus = 1 + (int)rnd(rnd(4) ? (unsigned)(span / 3 + 1) : (unsigned)(span + 2));
			if (rnd(8) == 0) {
				r.has_smt = true;
				r.smt = rnd(2) ? CC_SMT_FULL : CC_SMT_ISOLATE;
			}
			if ((r.has_smt ? r.smt : pc->smt) == CC_SMT_FULL && rnd(5)) {
				int u = tpc_of(t, cls);

				r.cpus = (r.cpus + u - 1) / u * u;
			}
			rc = cc_allocate(t, p, w.taken, &r, &d, &err);
			if (!pc->exclusive) {
				_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_dup(w.usable);

				hwloc_bitmap_and(pool, pool, t->classes[cls].cpus);
				hwloc_bitmap_andnot(pool, pool, w.reserved);
				hwloc_bitmap_andnot(pool, pool, w.taken);
				if (hwloc_bitmap_iszero(pool)) {
					ck_assert_msg(rc == -1 && err.code == ENOSPC, "%s step %d: empty shared pool accepted", s->name, step);
				} else {
					ck_assert_msg(rc == 0, "%s step %d: shared: %s", s->name, step, err.msg);
					ck_assert(hwloc_bitmap_isequal(pool, d.cpus));
					ck_assert(hwloc_bitmap_iszero(d.parked));
					cc_decision_fini(&d);
				}
				continue;
			}
			want = predict(&w, pc, &r, &k);
			if (want != V_ACCEPT) {
				ck_assert_msg(rc == -1, "%s step %d: %s %d (smt %d) accepted, model says %s", s->name, step, pc->name,
					      r.cpus, r.has_smt ? (int)r.smt : (int)pc->smt, want == V_INVALID ? "invalid" : "no capacity");
				ck_assert_msg(err.code == (want == V_INVALID ? EINVAL : ENOSPC), "%s step %d: %s %d: code %d: %s",
					      s->name, step, pc->name, r.cpus, err.code, err.msg);
				ck_assert_msg(strstr(err.msg, pc->name) != NULL, "refusal must name the class: %s", err.msg);
				refused++;
				continue;
			}
			ck_assert_msg(rc == 0, "%s step %d: %s %d refused although capacity suffices: %s", s->name, step, pc->name,
				      r.cpus, err.msg);
			check_accepted(&w, s, step, pc, &r, &d, k);
			if (step % 16 == 0) {
				ck_assert_int_eq(cc_allocate(t, p, w.taken, &r, &d2, &err2), 0);
				ck_assert_msg(hwloc_bitmap_isequal(d.cpus, d2.cpus) && hwloc_bitmap_isequal(d.parked, d2.parked),
					      "%s step %d: not deterministic", s->name, step);
				cc_decision_fini(&d2);
			}
			w.live[w.nlive].cpus = hwloc_bitmap_dup(d.cpus);
			w.live[w.nlive].parked = hwloc_bitmap_dup(d.parked);
			w.nlive++;
			rebuild_taken(&w);
			cc_decision_fini(&d);
			accepted++;
			check_world(&w, s, step);
		}
	}
	/* A sequence that never accepts or never refuses tests little. */
	ck_assert_msg(accepted > 20 && refused > 20, "%s: %d accepted, %d refused", s->name, accepted, refused);
	for (int i = 0; i < w.nlive; i++) {
		hwloc_bitmap_free(w.live[i].cpus);
		hwloc_bitmap_free(w.live[i].parked);
	}
	hwloc_bitmap_free(w.reserved);
	hwloc_bitmap_free(w.taken);
	hwloc_bitmap_free(w.usable);
}

/* The default reserved rule, minShared 1. */
START_TEST(test_sequences_default)
{
	const struct shape *s = &shapes[_i];
	struct cc_topo *t = load_shape(s);
	struct cc_policy *p;

	if (!t)
		return;
	p = make_policy(t, NULL, 1);
	run_sequence(s, t, p, 0x9e3779b97f4a7c15ull + (unsigned long long)_i);
	free_policy(p);
	cc_topo_free(t);
}
END_TEST

/* Odd reservations: one lone thread and one whole core picked by the seed;
 * minShared 2. */
START_TEST(test_sequences_reserved)
{
	const struct shape *s = &shapes[_i];
	struct cc_topo *t = load_shape(s);
	hwloc_bitmap_t res;
	struct cc_policy *p;

	if (!t)
		return;
	rng_state = 0x2545f4914f6cdd1dull * (unsigned long long)(_i + 1);
	res = hwloc_bitmap_alloc();
	hwloc_bitmap_set(res, (unsigned)t->pus[rnd((unsigned)t->npus)].os);
	hwloc_bitmap_or(res, res, t->cores[rnd((unsigned)t->ncores)].pus);
	p = make_policy(t, res, 2);
	run_sequence(s, t, p, 0xda942042e4dd58b5ull + (unsigned long long)_i);
	free_policy(p);
	cc_topo_free(t);
}
END_TEST

static Suite *alloc_props_suite(void)
{
	Suite *s = suite_create("alloc_props");
	TCase *tc = tcase_create("sequences");

	tcase_add_loop_test(tc, test_sequences_default, 0, NSHAPES);
	tcase_add_loop_test(tc, test_sequences_reserved, 0, NSHAPES);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(alloc_props_suite)
