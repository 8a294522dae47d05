/* corecarve: what an exclusive carve's refusals and warnings say
 * (alloc_int.h).  A refusal names the numbers behind it (what was asked,
 * what is free and where the rest went) and the fix that would make it fit,
 * so an operator can act on the one line the hook prints. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc_int.h"
#include "cleanup.h"
#include "cpulist.h"

const char *alloc_plural(int n)
{
	return n == 1 ? "" : "s";
}

void alloc_warn(struct cc_decision *d, const char *fmt, ...)
{
	va_list ap;

	if (d->nwarnings >= CC_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(d->warnings[d->nwarnings++], sizeof(d->warnings[0]), fmt, ap);
	va_end(ap);
}

/* The census in words: "12 cores: 2 taken, 1 with reserved CPUs". */
static void describe(const struct alloc_census *c, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "%d core%s", c->total, alloc_plural(c->total));
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

/* A refusal's first fix: "ask for at most 6 CPUs", or, when nothing fits,
 * "wait for a carve to go". */
static const char *fewer(int maxk, int unit, char *buf, size_t len)
{
	if (maxk <= 0)
		snprintf(buf, len, "wait for a carve to go");
	else
		snprintf(buf, len, "ask for at most %d CPU%s", maxk * unit, alloc_plural(maxk * unit));
	return buf;
}

/* strictClusters, and fewer wholly free clusters than the request needs. */
int alloc_refuse_clusters(const struct alloc_carve *c, int nwhole, struct cc_err *err)
{
	char desc[256];

	describe(&c->cs, desc, sizeof(desc));
	return cc_err_set(err, ENOSPC,
			  "class %s: %s requested as whole L2 clusters (strictClusters, %d cores each), %d whole cluster%s (%d core%s) free; %s has %s",
			  c->d->class_name, c->what, c->li.smax, nwhole, alloc_plural(nwhole), c->ncand,
			  alloc_plural(c->ncand), c->d->core_class, desc);
}

/* Fewer free whole cores (or candidates) than requested. */
int alloc_refuse_free(const struct alloc_carve *c, struct cc_err *err)
{
	int per = max_free_per_node(c->cx->t, c->state);
	char desc[256], buf[64];

	describe(&c->cs, desc, sizeof(desc));
	return cc_err_set(err, ENOSPC,
			  "class %s: %s requested, %d free in total (%d at most on one NUMA node); %s has %s; refused: not enough free whole cores: %s%s (corecarve status shows what each class can carve)",
			  c->d->class_name, c->what, c->cs.free, per, c->d->core_class, desc,
			  fewer(c->ncand < c->cs.free ? c->ncand : c->cs.free, c->unit, buf, sizeof(buf)),
			  c->cs.reserved ? ", or reserve other cores (policy reserved)" : "");
}

/* The class's shared pool would fall below its floor: at most maxk cores fit. */
int alloc_refuse_class_floor(const struct alloc_carve *c, int maxk, struct cc_err *err)
{
	const struct cc_topo *t = c->cx->t;
	int pool = c->budget[c->cls] + c->floor[c->cls];
	char who[256], buf[64];

	alloc_floor_users(t, c->p, c->cls, who, sizeof(who));
	return cc_err_set(err, ENOSPC,
			  "class %s: %s requested, %d free in total (%d at most on one NUMA node), but the shared %s pool (%d CPU%s) must keep %d (minShared, for %s): at most %d core%s can be carved; refused: %s, or lower minShared in the policy",
			  c->d->class_name, c->what, c->cs.free, max_free_per_node(t, c->state), c->d->core_class,
			  pool, alloc_plural(pool), c->floor[c->cls], who, maxk, alloc_plural(maxk),
			  fewer(maxk, c->unit, buf, sizeof(buf)));
}

/* The node's unreserved CPUs would fall below minShared: at most maxk cores fit. */
int alloc_refuse_node_floor(const struct alloc_carve *c, int maxk, struct cc_err *err)
{
	char buf[64];

	return cc_err_set(err, ENOSPC,
			  "class %s: %s requested, %d free in total (%d at most on one NUMA node), but the node's unreserved shared CPUs (%d) must keep %d (minShared): at most %d core%s can be carved; refused: %s, or lower minShared in the policy",
			  c->d->class_name, c->what, c->cs.free, max_free_per_node(c->cx->t, c->state),
			  c->node_budget + c->min_shared, c->min_shared, maxk, alloc_plural(maxk),
			  fewer(maxk, c->unit, buf, sizeof(buf)));
}

/* The cores packed hold more CPUs than the class's budget (cores of one
 * class that differ in thread count). */
int alloc_refuse_class_cpus(const struct alloc_carve *c, int npu, struct cc_err *err)
{
	int pool = c->budget[c->cls] + c->floor[c->cls];

	return cc_err_set(err, ENOSPC,
			  "class %s: %s need %d CPUs, but the shared %s pool (%d CPU%s) must keep %d (minShared); refused: ask for fewer, or lower minShared in the policy",
			  c->d->class_name, c->what, npu, c->d->core_class, pool, alloc_plural(pool), c->floor[c->cls]);
}

/* The same against the node's unreserved CPUs. */
int alloc_refuse_node_cpus(const struct alloc_carve *c, int npu, struct cc_err *err)
{
	return cc_err_set(err, ENOSPC,
			  "class %s: %s need %d CPUs, but the node's unreserved shared CPUs (%d) must keep %d (minShared); refused: ask for fewer, or lower minShared in the policy",
			  c->d->class_name, c->what, npu, c->node_budget + c->min_shared, c->min_shared);
}

/* strictClusters, and the cores packed share a cluster with others. */
int alloc_refuse_partial(const struct alloc_carve *c, struct cc_err *err)
{
	return cc_err_set(err, ENOSPC,
			  "class %s: no set of free whole %s L2 clusters (%d-%d cores each) holds exactly %d cores (strictClusters); refused",
			  c->d->class_name, c->d->core_class, c->li.smin, c->li.smax, c->k);
}

/* A carve that shares `partial` of the `touched` L2 clusters with others. */
void alloc_warn_l2(const struct alloc_carve *c, int touched, int partial)
{
	struct cc_decision *d = c->d;
	int k = c->k;

	if (partial && c->li.smin == c->li.smax && k % c->li.smax)
		alloc_warn(d, "class %s: %d core%s do%s not fill whole %s L2 clusters of %d; using %d cluster%s, sharing %d with others",
			   d->class_name, k, alloc_plural(k), k == 1 ? "es" : "", d->core_class, c->li.smax, touched,
			   alloc_plural(touched), partial);
	else if (partial)
		alloc_warn(d, "class %s: not enough free whole %s L2 clusters; using %d cluster%s, sharing %d with others",
			   d->class_name, d->core_class, touched, alloc_plural(touched), partial);
}

/* A carve that spans NUMA nodes: which ones, and the most one node had. */
void alloc_warn_numa(const struct alloc_carve *c)
{
	const struct cc_topo *t = c->cx->t;
	_cleanup_free_ char *nodes = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();

	if (set) {
		for (int i = 0; i < c->k; i++) {
			int nd = t->cores[c->chosen[i]].numa;

			if (nd >= 0 && nd < t->nnuma)
				hwloc_bitmap_set(set, (unsigned)t->numa[nd].os);
		}
		nodes = cc_cpulist_format(set);
	}
	alloc_warn(c->d, "class %s: no single NUMA node has %d free whole %s (at most %d); the carve spans nodes %s",
		   c->d->class_name, c->k, c->kind, max_free_per_node(t, c->state), nodes ? nodes : "?");
}
