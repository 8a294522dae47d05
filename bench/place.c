/* Placement quality: a deterministic, seeded stream of create/delete
 * requests replayed through corecarve's allocator and through the two
 * baselines of baselines.h, on every fixture and on synthetic hosts.
 *
 * The stream: each event creates a request (class latency or throughput,
 * half each; k whole cores, k drawn from 1, 2, 3, 4, 6, 8, 16, 32 and
 * capped at half the cores of the class) or deletes a live one, chosen at
 * random.  Creation is likelier while the live requests ask for less than
 * the host's carvable CPUs, so the host runs close to full and packing
 * decides what fits.  The stream is the same for every strategy; a request
 * a strategy refused is not live for it, and its delete is a no-op there.
 *
 * Every strategy is asked for the same number of logical CPUs: what
 * corecarve's carve costs, k cores times the threads per core of the class
 * (latency isolates: it runs on k CPUs and parks their siblings; throughput
 * takes whole cores with all threads).  The baselines get the same free
 * set (online, not reserved, not taken) and know no core classes.
 *
 * Per strategy: acceptance; "clean" placements (no split core, no CPU
 * outside the class asked for); SMT splits (a core partly in the
 * placement); class violations; mean NUMA nodes and L3s spanned, against
 * the minimum possible at that moment (the fewest domains whose free CPUs
 * hold the request, a bound no strategy can beat); E-core cluster
 * alignment (throughput placements that are whole L2 clusters of the
 * class, plus at most one partial cluster when k is not a multiple; and
 * separately for k a multiple of the cluster size, where `align: l2`
 * promises whole clusters when enough are free).
 *
 *   place [--events N] [--seed S] [--only HOST]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "baselines.h"
#include "bench.h"
#include "cleanup.h"
#include "policy.h"

enum { REQ_LATENCY, REQ_THROUGHPUT };
static const char *const req_class[] = { "latency", "throughput" };

struct req {
	int cls;   /* REQ_* */
	int k;     /* whole cores */
	int cost;  /* logical CPUs */
};

struct event {
	bool create;
	int req; /* index into the requests */
};

struct stream {
	struct req *reqs;
	int nreqs;
	struct event *ev;
	int nev;
};

enum strat { S_CORECARVE, S_CORECARVE_MS0, S_FIRST_FIT, S_KUBELET, NSTRAT };
static const char *const strat_name[NSTRAT] = { "corecarve", "corecarve minShared 0", "first-fit by CPU id",
						"kubelet static, packed" };

struct metrics {
	int creates, accepted, clean, split_place, split_cores, violations;
	double numa_span, numa_min, l3_span, l3_min;
	int ecl_eligible, ecl_aligned;
	int ecl_whole_eligible, ecl_whole; /* k a multiple of the cluster: whole clusters only */
	uint64_t ns;
};

/* What the host offers the stream. */
struct hostinfo {
	const struct cc_topo *t;
	const struct cc_policy *p;
	hwloc_bitmap_t reserved;
	int cls[2];       /* topology class each request class draws from */
	int tpc[2];       /* threads per core of that class */
	int cap[2];       /* most cores one request asks for */
	int cluster[2];   /* cores per L2 cluster of that class when > 1, else 0 */
	int capacity;     /* online CPUs not reserved */
};

/* ---- the stream ----------------------------------------------------------- */

static int draw_k(uint64_t *rng, int cap)
{
	static const int size[] = { 1, 2, 3, 4, 6, 8, 16, 32 };
	static const int weight[] = { 25, 22, 8, 18, 7, 10, 6, 4 };
	unsigned r = bench_below(rng, 100), acc = 0;
	int k = 1;

	for (size_t i = 0; i < sizeof(size) / sizeof(size[0]); i++) {
		acc += (unsigned)weight[i];
		if (r < acc) {
			k = size[i];
			break;
		}
	}
	return k < cap ? k : cap;
}

static void make_stream(const struct hostinfo *hi, int nev, uint64_t seed, struct stream *s)
{
	_cleanup_free_ int *live = calloc((size_t)nev, sizeof(int));
	uint64_t rng = seed;
	int nlive = 0, demand = 0;

	s->reqs = calloc((size_t)nev, sizeof(*s->reqs));
	s->ev = calloc((size_t)nev, sizeof(*s->ev));
	if (!live || !s->reqs || !s->ev)
		bench_die("out of memory");
	s->nreqs = s->nev = 0;
	for (int i = 0; i < nev; i++) {
		/* Pressure: create mostly while the live requests ask for less
		 * than the host has, delete mostly once they ask for more. */
		unsigned pct = demand < hi->capacity ? 75 : 25;
		bool create = nlive == 0 || bench_below(&rng, 100) < pct;

		if (create) {
			struct req *r = &s->reqs[s->nreqs];

			r->cls = (int)bench_below(&rng, 2);
			r->k = draw_k(&rng, hi->cap[r->cls]);
			r->cost = r->k * hi->tpc[r->cls];
			demand += r->cost;
			live[nlive++] = s->nreqs;
			s->ev[s->nev++] = (struct event){ true, s->nreqs++ };
		} else {
			int j = (int)bench_below(&rng, (unsigned)nlive);

			demand -= s->reqs[live[j]].cost;
			s->ev[s->nev++] = (struct event){ false, live[j] };
			live[j] = live[--nlive];
		}
	}
}

/* ---- measuring one placement -------------------------------------------- */

/* Distinct domains (NUMA nodes or L3s) a set touches. */
static int span(const struct cc_topo *t, hwloc_const_bitmap_t set, bool l3)
{
	int nd = l3 ? t->nllcs : t->nnuma, n = 0, cpu;
	_cleanup_free_ bool *seen = calloc((size_t)nd + 1, sizeof(bool));

	if (!seen)
		bench_die("out of memory");
	hwloc_bitmap_foreach_begin(cpu, set)
	{
		const struct cc_pu *p = &t->pus[cc_topo_pu_index(t, cpu)];
		int d = l3 ? p->llc : p->numa;

		d = d < 0 || d >= nd ? nd : d;
		n += !seen[d];
		seen[d] = true;
	}
	hwloc_bitmap_foreach_end();
	return n;
}

static int cmp_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

/* The fewest domains whose free CPUs hold `cost`: no placement spans
 * fewer. */
static int min_span(const struct cc_topo *t, hwloc_const_bitmap_t free, int cost, bool l3)
{
	int nd = l3 ? t->nllcs : t->nnuma, cpu, m = 0, sum = 0;
	_cleanup_free_ int *cnt = calloc((size_t)nd + 1, sizeof(int));

	if (!cnt)
		bench_die("out of memory");
	hwloc_bitmap_foreach_begin(cpu, free)
	{
		const struct cc_pu *p = &t->pus[cc_topo_pu_index(t, cpu)];
		int d = l3 ? p->llc : p->numa;

		cnt[d < 0 || d >= nd ? nd : d]++;
	}
	hwloc_bitmap_foreach_end();
	qsort(cnt, (size_t)nd + 1, sizeof(int), cmp_desc);
	while (m <= nd && sum < cost)
		sum += cnt[m++];
	return m;
}

/* Cores partly in the set. */
static int split_cores(const struct cc_topo *t, hwloc_const_bitmap_t set)
{
	int n = 0;

	for (int c = 0; c < t->ncores; c++)
		if (hwloc_bitmap_intersects(t->cores[c].pus, set) && !hwloc_bitmap_isincluded(t->cores[c].pus, set))
			n++;
	return n;
}

/* Whole L2 clusters of the class, and at most one partial one when k is
 * not a multiple of the cluster size. */
static bool cluster_aligned(const struct hostinfo *hi, hwloc_const_bitmap_t set, const struct req *r)
{
	const struct cc_topo *t = hi->t;
	int cls = hi->cls[r->cls], partial = 0;

	if (!hwloc_bitmap_isincluded(set, t->classes[cls].cpus))
		return false;
	for (int l = 0; l < t->nl2s; l++) {
		_cleanup_bitmap_ hwloc_bitmap_t in = hwloc_bitmap_alloc();

		if (!in)
			bench_die("out of memory");
		hwloc_bitmap_and(in, t->l2s[l].cpus, t->classes[cls].cpus);
		if (hwloc_bitmap_intersects(in, set) && !hwloc_bitmap_isincluded(in, set))
			partial++;
	}
	return partial <= (r->k % hi->cluster[r->cls] ? 1 : 0);
}

static void record(const struct hostinfo *hi, struct metrics *m, hwloc_const_bitmap_t set, hwloc_const_bitmap_t free,
		   const struct req *r)
{
	const struct cc_topo *t = hi->t;
	int sp = split_cores(t, set);
	bool viol = !hwloc_bitmap_isincluded(set, t->classes[hi->cls[r->cls]].cpus);

	m->accepted++;
	m->split_cores += sp;
	m->split_place += sp > 0;
	m->violations += viol;
	m->clean += !sp && !viol;
	m->numa_span += span(t, set, false);
	m->numa_min += min_span(t, free, r->cost, false);
	m->l3_span += span(t, set, true);
	m->l3_min += min_span(t, free, r->cost, true);
	if (r->cls == REQ_THROUGHPUT && hi->cluster[r->cls]) {
		bool ok = cluster_aligned(hi, set, r);

		m->ecl_eligible++;
		m->ecl_aligned += ok;
		if (r->k % hi->cluster[r->cls] == 0) {
			m->ecl_whole_eligible++;
			m->ecl_whole += ok;
		}
	}
}

/* ---- replaying ------------------------------------------------------------- */

static int place_one(const struct hostinfo *hi, const struct cc_policy *p, enum strat s, hwloc_const_bitmap_t taken,
		     hwloc_const_bitmap_t free, const struct req *r, hwloc_bitmap_t out)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request rq = { .cpus = r->cls == REQ_LATENCY ? r->k : r->cost };
	struct cc_decision d;

	switch (s) {
	case S_FIRST_FIT:
		return bl_first_fit(hi->t, free, r->cost, out);
	case S_KUBELET:
		return bl_kubelet_packed(hi->t, free, r->cost, out);
	default:
		snprintf(rq.class_name, sizeof(rq.class_name), "%s", req_class[r->cls]);
		if (cc_allocate(hi->t, p, taken, &rq, &d, &err) < 0) {
			if (err.code != ENOSPC)
				bench_die("%s: %s", req_class[r->cls], err.msg);
			return -1;
		}
		hwloc_bitmap_or(out, d.cpus, d.parked);
		cc_decision_fini(&d);
		return 0;
	}
}

static void replay(const struct hostinfo *hi, const struct cc_policy *p, enum strat s, const struct stream *st,
		   struct metrics *m)
{
	const struct cc_topo *t = hi->t;
	hwloc_bitmap_t *owned = calloc((size_t)st->nreqs, sizeof(*owned));
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t avail = hwloc_bitmap_alloc();

	if (!owned || !taken || !avail)
		bench_die("out of memory");
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < st->nev; i++) {
		const struct event *e = &st->ev[i];
		const struct req *r = &st->reqs[e->req];
		hwloc_bitmap_t out;
		uint64_t t0;

		if (!e->create) {
			if (owned[e->req]) {
				hwloc_bitmap_andnot(taken, taken, owned[e->req]);
				hwloc_bitmap_free(owned[e->req]);
				owned[e->req] = NULL;
			}
			continue;
		}
		m->creates++;
		hwloc_bitmap_andnot(avail, t->online, hi->reserved);
		hwloc_bitmap_andnot(avail, avail, taken);
		out = hwloc_bitmap_alloc();
		if (!out)
			bench_die("out of memory");
		t0 = bench_now();
		if (place_one(hi, p, s, taken, avail, r, out) < 0) {
			m->ns += bench_now() - t0;
			hwloc_bitmap_free(out);
			continue;
		}
		m->ns += bench_now() - t0;
		if (hwloc_bitmap_intersects(out, taken) || hwloc_bitmap_intersects(out, hi->reserved) ||
		    hwloc_bitmap_weight(out) != r->cost)
			bench_die("%s: placement of %d CPUs overlaps or has the wrong size", strat_name[s], r->cost);
		record(hi, m, out, avail, r);
		hwloc_bitmap_or(taken, taken, out);
		owned[e->req] = out;
	}
	for (int i = 0; i < st->nreqs; i++)
		hwloc_bitmap_free(owned[i]);
	free(owned);
}

/* ---- per host ---------------------------------------------------------------- */

static int class_for(const struct cc_topo *t, const struct cc_pclass *pc)
{
	int ci = cc_topo_class_index(t, pc->core_type);

	return ci >= 0 || !pc->fallback[0] ? ci : cc_topo_class_index(t, pc->fallback);
}

/* Cores per L2 cluster of class `cls` when its clusters hold several. */
static int cluster_size(const struct cc_topo *t, int cls)
{
	int most = 0;

	for (int l = 0; l < t->nl2s; l++) {
		int n = 0;

		for (int c = 0; c < t->ncores; c++)
			n += t->cores[c].l2 == l && t->cores[c].cls == cls;
		if (n > most)
			most = n;
	}
	return most > 1 ? most : 0;
}

static bool hostinfo(struct hostinfo *hi, const struct cc_topo *t, const struct cc_policy *p)
{
	memset(hi, 0, sizeof(*hi));
	hi->t = t;
	hi->p = p;
	hi->reserved = cc_policy_reserved(p, t);
	if (!hi->reserved)
		bench_die("out of memory");
	for (int r = 0; r < 2; r++) {
		const struct cc_pclass *pc = cc_policy_class(p, req_class[r]);
		int ci = pc ? class_for(t, pc) : -1;

		if (ci < 0)
			return false;
		hi->cls[r] = ci;
		hi->tpc[r] = t->classes[ci].threads_per_core > 0 ? t->classes[ci].threads_per_core : 1;
		hi->cap[r] = t->classes[ci].ncores / 2 > 0 ? t->classes[ci].ncores / 2 : 1;
		hi->cluster[r] = cluster_size(t, ci);
	}
	{
		_cleanup_bitmap_ hwloc_bitmap_t c = hwloc_bitmap_alloc();

		hwloc_bitmap_andnot(c, t->online, hi->reserved);
		hi->capacity = hwloc_bitmap_weight(c);
	}
	return true;
}

static struct cc_policy *policy(int min_shared)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_default(&err);

	if (!p)
		bench_die("%s", err.msg);
	p->min_shared = min_shared;
	return p;
}

static double pct(int a, int b)
{
	return b ? 100.0 * a / b : 0;
}

static void report(const struct bench_host *h, const struct hostinfo *hi, const struct stream *st,
		   const struct metrics *m, uint64_t seed)
{
	const struct cc_topo *t = hi->t;
	const struct metrics *cc = &m[S_CORECARVE_MS0], *ku = &m[S_KUBELET];

	printf("\n%s: %s — %d PUs, %d cores, %d NUMA, %d L3, classes:", h->name, h->what, t->npus, t->ncores, t->nnuma,
	       t->nllcs);
	for (int c = 0; c < t->nclasses; c++)
		printf(" %s%s", t->classes[c].name, c + 1 < t->nclasses ? "," : "");
	printf("\n  %d events (%d creates), seed %llu; latency -> %s, throughput -> %s%s\n", st->nev, m[0].creates,
	       (unsigned long long)seed, t->classes[hi->cls[0]].name, t->classes[hi->cls[1]].name,
	       hi->cluster[1] ? " (L2 clusters)" : "");
	printf("  %-24s %15s %15s %6s %5s %13s %13s %15s %6s\n", "strategy", "accepted", "clean", "splits", "viol",
	       "NUMA span/min", "L3 span/min", "E-aligned/whole", "us/req");
	for (int s = 0; s < NSTRAT; s++) {
		const struct metrics *x = &m[s];
		double a = x->accepted ? x->accepted : 1;
		char ecl[24];

		if (x->ecl_eligible && x->ecl_whole_eligible)
			snprintf(ecl, sizeof(ecl), "%.1f%%/%.1f%%", pct(x->ecl_aligned, x->ecl_eligible),
				 pct(x->ecl_whole, x->ecl_whole_eligible));
		else if (x->ecl_eligible)
			snprintf(ecl, sizeof(ecl), "%.1f%%/-", pct(x->ecl_aligned, x->ecl_eligible));
		else
			snprintf(ecl, sizeof(ecl), "n/a");
		printf("  %-24s %6d %6.1f%% %6d %6.1f%% %6d %5d %6.3f/%5.3f %6.3f/%5.3f %15s %6.1f\n", strat_name[s], x->accepted,
		       pct(x->accepted, x->creates), x->clean, pct(x->clean, x->creates), x->split_place, x->violations,
		       x->numa_span / a, x->numa_min / a, x->l3_span / a, x->l3_min / a, ecl,
		       x->creates ? (double)x->ns / x->creates / 1e3 : 0);
	}
	for (int s = 0; s < NSTRAT; s++) {
		const struct metrics *x = &m[s];
		double a = x->accepted ? x->accepted : 1;
		static const char *const key[NSTRAT] = { "corecarve", "corecarve-ms0", "first-fit", "kubelet" };

		printf("BENCH place host=%s strategy=%s creates=%d accepted=%d clean=%d split_placements=%d split_cores=%d "
		       "violations=%d numa_span=%.4f numa_min=%.4f l3_span=%.4f l3_min=%.4f ecl_eligible=%d ecl_aligned=%d "
		       "ecl_whole_eligible=%d ecl_whole=%d\n",
		       h->name, key[s], x->creates, x->accepted, x->clean, x->split_place, x->split_cores, x->violations,
		       x->numa_span / a, x->numa_min / a, x->l3_span / a, x->l3_min / a, x->ecl_eligible, x->ecl_aligned,
		       x->ecl_whole_eligible, x->ecl_whole);
	}
	printf("  targets (corecarve minShared 0 vs kubelet): splits %s, class violations %s, acceptance %s "
	       "(%d vs %d; clean %d vs %d), NUMA span %s, L3 span %s\n",
	       cc->split_place ? "MISSED" : "0", cc->violations ? "MISSED" : "0",
	       cc->accepted >= ku->accepted ? ">= kubelet" : "BELOW kubelet", cc->accepted, ku->accepted, cc->clean, ku->clean,
	       cc->numa_span / (cc->accepted ? cc->accepted : 1) <= ku->numa_span / (ku->accepted ? ku->accepted : 1) + 1e-9 ? "<= kubelet" : "ABOVE kubelet",
	       cc->l3_span / (cc->accepted ? cc->accepted : 1) <= ku->l3_span / (ku->accepted ? ku->accepted : 1) + 1e-9 ? "<= kubelet" : "ABOVE kubelet");
}

int main(int argc, char **argv)
{
	int nev = 10000, nhosts;
	uint64_t seed = 1;
	const char *only = NULL;
	struct bench_host *hosts = bench_hosts(&nhosts);
	_cleanup_policy_ struct cc_policy *pol = policy(1);
	_cleanup_policy_ struct cc_policy *pol0 = policy(0);
	bool any = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--events") && i + 1 < argc)
			nev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: place [--events N] [--seed S] [--only HOST]\n");
			return 2;
		}
	}
	if (nev < 1)
		bench_die("--events must be at least 1");
	bench_print_machine();
	printf("placement quality: default policy (minShared 1), and the same with minShared 0, the capacity rule\n"
	       "the baselines follow (reserved CPUs excluded, nothing else kept back)\n");
	for (int i = 0; i < nhosts; i++) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_topo_source src;
		struct cc_root *root = NULL;
		struct cc_topo *t;
		struct hostinfo hi;
		struct stream st;
		struct metrics m[NSTRAT];

		if (!hosts[i].placement || (only && strcmp(hosts[i].name, only)))
			continue;
		if (!bench_source(&hosts[i], &src, &root))
			continue;
		src.overrides = pol->overrides;
		src.noverrides = pol->noverrides;
		t = cc_topo_load(&src, &err);
		if (!t)
			bench_die("%s: %s", hosts[i].name, err.msg);
		if (!hostinfo(&hi, t, pol)) {
			printf("\n%s: skipped (the default policy's classes do not resolve)\n", hosts[i].name);
			continue;
		}
		make_stream(&hi, nev, seed, &st);
		for (int s = 0; s < NSTRAT; s++)
			replay(&hi, s == S_CORECARVE ? pol : pol0, (enum strat)s, &st, &m[s]);
		report(&hosts[i], &hi, &st, m, seed);
		fflush(stdout);
		any = true;
		free(st.reqs);
		free(st.ev);
		hwloc_bitmap_free(hi.reserved);
		cc_topo_free(t);
		cc_root_free(root);
	}
	if (!any)
		bench_die("no host to run on");
	return 0;
}
