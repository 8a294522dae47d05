/* corecarve: the allocator — a pure function of a topology, a policy, the
 * CPUs already taken and a request.  It reads nothing and writes nothing. */
#ifndef CC_ALLOC_H
#define CC_ALLOC_H

#include <hwloc.h>
#include <stdbool.h>

#include "error.h"
#include "policy.h"
#include "topo.h"

#define CC_WARN_MAX 4

struct cc_decision {
	char class_name[64];           /* placement class */
	char core_class[CC_NAME_MAX];  /* core class actually drawn from */
	bool fell_back;                /* core_class is the placement class's fallback */
	bool exclusive;                /* false: shared pool of the class, nothing carved */
	enum cc_smt smt;
	enum cc_memory memory;
	enum cc_irq irq;
	enum cc_partition partition;
	enum cc_quota quota;
	hwloc_bitmap_t cpus;   /* CPUs the container runs on */
	hwloc_bitmap_t parked; /* SMT siblings held idle for it (smt: isolate) */
	hwloc_bitmap_t mems;   /* NUMA node numbers for cpuset.mems */
	int numa_nodes, llcs, l2s; /* domains the carve spans */
	int nwarnings;
	char warnings[CC_WARN_MAX][256];
};

/* Allocate.  `taken` holds every CPU owned by a carve (cpus and parked).
 * Returns 0 with *out filled (caller runs cc_decision_fini), or -1 with err:
 * code ENOSPC for a refusal for lack of capacity (message names the numbers),
 * EINVAL for a request the policy/topology cannot express, EPERM for a
 * request read from an annotation (req->annotation set) that sets a key
 * its class's annotationMaySet does not list (cc_request_permitted). */
int cc_allocate(const struct cc_topo *t, const struct cc_policy *p,
		hwloc_const_bitmap_t taken, const struct cc_request *req,
		struct cc_decision *out, struct cc_err *err);

void cc_decision_fini(struct cc_decision *d);

/* The core class placement class `pc` draws from on `t`, as cc_allocate
 * resolves it: its index into t->classes, -1 for "any", or -2 with err set
 * when the host has neither coreType nor fallback cores.  `name` receives
 * the class name ("any" for -1); *fell_back whether it is the fallback. */
/* The CPUs minShared keeps in core class `cls`'s shared pool: the
 * policy's minShared where a shared placement class (exclusive: false)
 * runs on that class (its names into `who`, may be NULL), else 0.  The
 * node's unreserved CPUs as a whole keep minShared too. */
int cc_alloc_shared_floor(const struct cc_topo *t, const struct cc_policy *p, int cls, char *who, size_t len);

int cc_alloc_core_class(const struct cc_topo *t, const struct cc_pclass *pc, char name[CC_NAME_MAX],
			bool *fell_back, struct cc_err *err);

/* The CPUs an exclusive carve from core class index `cls` (-1: any) may
 * still take with `taken` held (carves and parked siblings): the smaller
 * of what its core class's shared pool and the node's unreserved CPUs
 * have above their minShared floors, as cc_allocate counts them; may be
 * negative; -1 also when out of memory (nothing fits either way).  The
 * device plugin offers no more cores than this pays for. */
int cc_alloc_budget(const struct cc_topo *t, const struct cc_policy *p, int cls, hwloc_const_bitmap_t taken);

#endif
