/* corecarve: what the allocator's files share, private to them.
 *
 *   alloc.c            the public entry points (cc_allocate,
 *                      cc_alloc_core_class, cc_decision_fini), the core
 *                      class a placement class resolves to, and the parts
 *                      of a decision both kinds fill (mems, spans)
 *   alloc_exclusive.c  an exclusive carve: the census of the class's
 *                      cores, the minShared budgets, L2 alignment and the
 *                      hierarchical best-fit search
 *   alloc_shared.c     the shared pools, and the floors minShared keeps
 *                      in them
 *   alloc_refusal.c    what an exclusive carve's refusals and warnings
 *                      say: the census in words, the fix each one names
 *
 * Everything here works on core ids (indexes into topo->cores) and on the
 * decision being filled; nothing reads or writes outside it. */
#ifndef CC_ALLOC_INT_H
#define CC_ALLOC_INT_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"

/* The levels the search packs at, outermost first. */
enum alloc_level { LVL_NUMA, LVL_PACKAGE, LVL_LLC, LVL_L2, LVL_CORE };

/* What one decision's search reads besides the request. */
struct alloc_ctx {
	const struct cc_topo *t;
	int *dist; /* nnuma*nnuma, always present (synthesised when unknown) */
};

/* Per-core state for an exclusive carve. */
enum alloc_core_state {
	CS_OTHER,    /* not of the requested class, or no online PU */
	CS_FREE,     /* usable */
	CS_RESERVED, /* holds a reserved CPU */
	CS_TAKEN,    /* holds a CPU owned by a carve */
	CS_BLOCKED,  /* holds a CPU the caller may not use */
	CS_THREADS,  /* smt full: fewer online threads than the class has */
	CS_SHARED,   /* "any": kept back for its class's shared pool */
};

/* How many of the class's cores are in each state, for the refusals. */
struct alloc_census {
	int total, free, reserved, taken, blocked, threads, shared;
};

/* The class's L2 clusters, for align: l2. */
struct alloc_l2info {
	int smin, smax; /* class cores per L2 cluster (clusters with any) */
	int *size;      /* class cores per L2, nl2s+1 */
	int *nfree;     /* free class cores per L2 */
};

/* One exclusive carve being decided: what alloc_exclusive's steps hand
 * each other, and what its refusals quote. */
struct alloc_carve {
	const struct alloc_ctx *cx;
	const struct cc_pclass *pc;
	const struct cc_policy *p;
	const struct cc_request *req;
	int cls; /* core class index, -1 for "any" */
	hwloc_const_bitmap_t reserved, taken;
	struct cc_decision *d;

	int tpc;  /* threads per core of the class (the host's most under "any") */
	int unit; /* CPUs per whole core carved: tpc under smt full, else 1 */
	int k;    /* whole cores requested */
	char kind[64], what[128]; /* "3 whole performance cores", the request in words */

	unsigned char *state; /* enum alloc_core_state per core */
	bool *inclass;
	struct alloc_census cs;
	struct alloc_l2info li;
	bool whole_clusters; /* pack only cores of wholly free L2 clusters */
	int *cands, ncand;   /* the cores the search may choose, ascending */
	int *chosen, nchosen;

	int min_shared;  /* the policy's, never negative */
	int *budget;     /* CPUs class c may still carve with its floor kept */
	int *floor;      /* CPUs class c's shared pool keeps */
	int node_budget; /* the same for the node's unreserved CPUs */
	hwloc_bitmap_t pool, usable;
};

/* The level's domain of a core, and how many domains the level has. */
static inline int alloc_core_dom(const struct cc_core *c, enum alloc_level level)
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

static inline int alloc_level_ndom(const struct cc_topo *t, enum alloc_level level)
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

/* ---- alloc.c ---- */
/* The core class: its index, or -1 for "any"; -2 with err set. */
int alloc_resolve_class(const struct cc_topo *t, const struct cc_pclass *pc, struct cc_decision *d,
			struct cc_err *err);
void alloc_fill_mems(const struct cc_topo *t, struct cc_decision *d, int cls);
void alloc_fill_spans(const struct cc_topo *t, struct cc_decision *d);

/* ---- alloc_exclusive.c ---- */
int *alloc_distances(const struct cc_topo *t);
int alloc_exclusive(const struct alloc_ctx *cx, const struct cc_pclass *pc, const struct cc_policy *p,
		    const struct cc_request *req, int cls, hwloc_const_bitmap_t reserved,
		    hwloc_const_bitmap_t taken, struct cc_decision *d, struct cc_err *err);

/* ---- alloc_shared.c ---- */
void alloc_shared_pool(const struct cc_topo *t, int cls, hwloc_const_bitmap_t reserved,
		       hwloc_const_bitmap_t taken, hwloc_bitmap_t out);
int alloc_shared(const struct cc_topo *t, const struct cc_request *req, int cls, hwloc_const_bitmap_t reserved,
		 hwloc_const_bitmap_t taken, struct cc_decision *d, struct cc_err *err);
void alloc_shared_floors(const struct cc_topo *t, const struct cc_policy *p, int min_shared,
			 hwloc_const_bitmap_t reserved, int *floor);
void alloc_floor_users(const struct cc_topo *t, const struct cc_policy *p, int cls, char *buf, size_t len);
/* minShared's budgets with `taken` held: floor[c] and budget[c] (CPUs
 * core class c may still carve, its pool's floor kept) for every class,
 * *node_budget the same for the node's unreserved CPUs as a whole, and
 * *min_shared the node's floor in CPUs (a share resolved).  `pool` is
 * scratch. */
void alloc_budgets(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t reserved,
		   hwloc_const_bitmap_t taken, hwloc_bitmap_t pool, int *floor, int *budget, int *node_budget,
		   int *min_shared);

/* ---- alloc_refusal.c ---- */
const char *alloc_plural(int n);
void alloc_warn(struct cc_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int alloc_refuse_clusters(const struct alloc_carve *c, int nwhole, struct cc_err *err);
int alloc_refuse_free(const struct alloc_carve *c, struct cc_err *err);
int alloc_refuse_class_floor(const struct alloc_carve *c, int maxk, struct cc_err *err);
int alloc_refuse_node_floor(const struct alloc_carve *c, int maxk, struct cc_err *err);
int alloc_refuse_class_cpus(const struct alloc_carve *c, int npu, struct cc_err *err);
int alloc_refuse_node_cpus(const struct alloc_carve *c, int npu, struct cc_err *err);
int alloc_refuse_partial(const struct alloc_carve *c, struct cc_err *err);
void alloc_warn_l2(const struct alloc_carve *c, int touched, int partial);
void alloc_warn_numa(const struct alloc_carve *c);

#endif
