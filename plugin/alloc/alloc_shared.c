/* corecarve: the shared pools (alloc_int.h).  A shared placement class
 * (exclusive: false) runs on its core class's pool, the CPUs no carve owns;
 * minShared keeps a floor in each pool a shared class runs on, so that an
 * exclusive carve never takes its last CPUs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"
#include "cleanup.h"

/* The shared pool of class `cls` (-1: every class): online, allowed, not
 * reserved, not taken. */
void alloc_shared_pool(const struct cc_topo *t, int cls, hwloc_const_bitmap_t reserved,
		       hwloc_const_bitmap_t taken, hwloc_bitmap_t out)
{
	hwloc_bitmap_and(out, t->online, t->allowed);
	if (cls >= 0)
		hwloc_bitmap_and(out, out, t->classes[cls].cpus);
	hwloc_bitmap_andnot(out, out, reserved);
	if (taken)
		hwloc_bitmap_andnot(out, out, taken);
}

int alloc_shared(const struct cc_topo *t, const struct cc_request *req, int cls, hwloc_const_bitmap_t reserved,
		 hwloc_const_bitmap_t taken, struct cc_decision *d, struct cc_err *err)
{
	int n;

	alloc_shared_pool(t, cls, reserved, taken, d->cpus);
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
		alloc_warn(d, "class %s: the shared %s pool has %d CPU%s, fewer than the %d requested (cpus is a hint for a shared class)",
			   d->class_name, d->core_class, n, alloc_plural(n), req->cpus);
	alloc_fill_mems(t, d, cls);
	alloc_fill_spans(t, d);
	return 0;
}

/* The class a shared placement class runs on, -1 for "any", -2 none. */
static int shared_class_index(const struct cc_topo *t, const struct cc_pclass *pc)
{
	struct cc_decision d;
	struct cc_err e = CC_ERR_INIT;

	memset(&d, 0, sizeof(d));
	return alloc_resolve_class(t, pc, &d, &e);
}

/* floor[c]: the CPUs class c's pool keeps, minShared where a shared
 * placement class (exclusive: false) runs, 0 elsewhere: a pool that no
 * container shares needs no floor, and a class every core of which may be
 * carved is what makes `{class: latency, cpus: 4}` fit 4 P-cores.  A
 * minShared share ("25%") is of the class's unreserved CPUs, so the floor
 * does not move as carves come and go. */
void alloc_shared_floors(const struct cc_topo *t, const struct cc_policy *p, int min_shared,
			 hwloc_const_bitmap_t reserved, int *floor)
{
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc();

	for (int i = 0; i < p->nclasses; i++) {
		int c;

		if (p->classes[i].exclusive)
			continue;
		c = shared_class_index(t, &p->classes[i]);
		for (int k = 0; k < t->nclasses; k++) {
			if (c != k && c != -1)
				continue;
			floor[k] = min_shared;
			if (p->min_shared_share && pool) {
				alloc_shared_pool(t, k, reserved, NULL, pool);
				floor[k] = cc_policy_min_shared(p, hwloc_bitmap_weight(pool));
			}
		}
	}
}

/* The shared classes that keep class `cls`'s floor, "a, b". */
void alloc_floor_users(const struct cc_topo *t, const struct cc_policy *p, int cls, char *buf, size_t len)
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

int cc_alloc_shared_floor(const struct cc_topo *t, const struct cc_policy *p, int cls, char *who, size_t len)
{
	_cleanup_free_ int *floor = calloc((size_t)t->nclasses + 1, sizeof(int));

	if (who && len)
		who[0] = '\0';
	if (!floor || cls < 0 || cls >= t->nclasses)
		return 0;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(p, t);

	if (!reserved)
		return 0;
	alloc_shared_floors(t, p, p->min_shared < 0 ? 0 : p->min_shared, reserved, floor);
	if (who && len)
		alloc_floor_users(t, p, cls, who, len);
	return floor[cls];
}

void alloc_budgets(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t reserved,
		   hwloc_const_bitmap_t taken, hwloc_bitmap_t pool, int *floor, int *budget, int *node_budget,
		   int *min_shared)
{
	*min_shared = p->min_shared < 0 ? 0 : p->min_shared;
	alloc_shared_floors(t, p, *min_shared, reserved, floor);
	for (int i = 0; i < t->nclasses; i++) {
		alloc_shared_pool(t, i, reserved, taken, pool);
		budget[i] = hwloc_bitmap_weight(pool) - floor[i];
	}
	/* A share is of the node's unreserved CPUs as a whole. */
	if (p->min_shared_share) {
		alloc_shared_pool(t, -1, reserved, NULL, pool);
		*min_shared = cc_policy_min_shared(p, hwloc_bitmap_weight(pool));
	}
	alloc_shared_pool(t, -1, reserved, taken, pool);
	*node_budget = hwloc_bitmap_weight(pool) - *min_shared;
}

int cc_alloc_budget(const struct cc_topo *t, const struct cc_policy *p, int cls, hwloc_const_bitmap_t taken)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(p, t);
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	_cleanup_free_ int *floor = calloc((size_t)t->nclasses + 1, sizeof(int));
	_cleanup_free_ int *budget = calloc((size_t)t->nclasses + 1, sizeof(int));
	int node, min_shared;

	if (!reserved || !pool || !floor || !budget)
		return -1;
	alloc_budgets(t, p, reserved, taken, pool, floor, budget, &node, &min_shared);
	return cls >= 0 && cls < t->nclasses && budget[cls] < node ? budget[cls] : node;
}
