/* corecarve calibrate: which CPU pairs stand for which relation.  Pure: a
 * function of the topology and the usable CPUs, so it is tested on every
 * fixture. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "cleanup.h"

static const char *const rel_names[CC_REL_N] = { "smt", "l2", "l3", "l3x", "numa", "package", "class" };

const char *cc_rel_name(enum cc_rel r)
{
	return (unsigned)r < CC_REL_N ? rel_names[r] : "?";
}

int cc_rel_parse(const char *name)
{
	for (int r = 0; r < CC_REL_N; r++)
		if (!strcmp(name, rel_names[r]))
			return r;
	return -1;
}

const char *cc_work_name(enum cc_work w)
{
	return w == CC_WORK_CPU ? "cpu" : w == CC_WORK_MEM ? "mem" : "?";
}

int cc_calib_relation(const struct cc_topo *t, int a, int b)
{
	int ia = cc_topo_pu_index(t, a), ib = cc_topo_pu_index(t, b);
	const struct cc_pu *pa, *pb;

	if (ia < 0 || ib < 0 || a == b)
		return -1;
	pa = &t->pus[ia];
	pb = &t->pus[ib];
	if (pa->core < 0 || pb->core < 0)
		return -1;
	if (pa->core == pb->core)
		return CC_REL_SMT;
	if (pa->l2 >= 0 && pa->l2 == pb->l2)
		return CC_REL_L2;
	if (pa->llc >= 0 && pa->llc == pb->llc)
		return CC_REL_L3;
	if (pa->package != pb->package)
		return CC_REL_PACKAGE;
	/* Without L3 information two cores of one domain stand at no
	 * relation this table can name. */
	if (pa->llc < 0 || pb->llc < 0)
		return -1;
	/* Without NUMA information (an XML export from CPUID) one package is
	 * taken as one memory domain. */
	if (pa->numa < 0 || pb->numa < 0 || pa->numa == pb->numa)
		return CC_REL_L3X;
	return CC_REL_NUMA;
}

/* The first usable PU of core `c`, or -1; the second when `second`. */
static int core_pu(const struct cc_topo *t, int c, hwloc_const_bitmap_t usable, bool second)
{
	int seen = 0, pu;

	hwloc_bitmap_foreach_begin(pu, t->cores[c].pus)
	{
		if (hwloc_bitmap_isset(usable, (unsigned)pu) && seen++ == (second ? 1 : 0))
			return pu;
	}
	hwloc_bitmap_foreach_end();
	return -1;
}

/* First pair of cores (c1 < c2, both of class `cls`, or any when -1) whose
 * first usable PUs stand at relation `r`. */
static bool find_pair(const struct cc_topo *t, hwloc_const_bitmap_t usable, int cls, enum cc_rel r, int *a,
		      int *b)
{
	for (int c1 = 0; c1 < t->ncores; c1++) {
		int p1 = core_pu(t, c1, usable, false);

		if (p1 < 0 || (cls >= 0 && t->cores[c1].cls != cls))
			continue;
		if (r == CC_REL_SMT) {
			int p2 = core_pu(t, c1, usable, true);

			if (p2 >= 0) {
				*a = p1;
				*b = p2;
				return true;
			}
			continue;
		}
		for (int c2 = c1 + 1; c2 < t->ncores; c2++) {
			int p2 = core_pu(t, c2, usable, false);

			if (p2 < 0 || (cls >= 0 && t->cores[c2].cls != cls))
				continue;
			if (cc_calib_relation(t, p1, p2) == (int)r) {
				*a = p1;
				*b = p2;
				return true;
			}
		}
	}
	return false;
}

static const char *absent_reason(const struct cc_topo *t, enum cc_rel r)
{
	switch (r) {
	case CC_REL_SMT:
		return "no core has two usable CPUs (no SMT, or SMT is off)";
	case CC_REL_L2:
		return t->nl2s ? "no L2 is shared by two usable cores" : "the topology has no L2 caches";
	case CC_REL_L3:
		return t->nllcs ? "no L3 holds two usable cores with separate L2s" : "the topology has no L3 caches";
	case CC_REL_L3X:
		return "no NUMA node (package) holds two L3s with usable cores";
	case CC_REL_NUMA:
		return t->nnuma > 1 ? "no package holds two NUMA nodes with usable cores"
				    : t->nnuma ? "one NUMA node" : "the topology has no NUMA information";
	case CC_REL_PACKAGE:
		return t->npackages > 1 ? "no two packages have usable cores" : "one package";
	case CC_REL_CLASS:
		return t->nclasses > 1 ? "no two core classes have usable cores" : "one core class";
	case CC_REL_N:
		break;
	}
	return "?";
}

static void describe(const struct cc_topo *t, struct cc_calib_pair *p)
{
	const struct cc_pu *a = &t->pus[cc_topo_pu_index(t, p->a)], *b = &t->pus[cc_topo_pu_index(t, p->b)];
	char *w = p->what;
	size_t n = sizeof(p->what);

	switch (p->rel) {
	case CC_REL_SMT:
		snprintf(w, n, "CPUs %d and %d: SMT siblings of core %d", p->a, p->b, a->core);
		break;
	case CC_REL_L2:
		snprintf(w, n, "CPUs %d and %d: cores %d and %d sharing L2 #%d (%d cores)", p->a, p->b, a->core, b->core,
			 a->l2, t->l2s[a->l2].ncores);
		break;
	case CC_REL_L3:
		snprintf(w, n, "CPUs %d and %d: cores %d and %d in L3 #%d, separate L2s", p->a, p->b, a->core, b->core,
			 a->llc);
		break;
	case CC_REL_L3X:
		snprintf(w, n, "CPUs %d and %d: L3 #%d and #%d in one %s", p->a, p->b, a->llc, b->llc,
			 a->numa >= 0 ? "NUMA node" : "package");
		break;
	case CC_REL_NUMA:
		snprintf(w, n, "CPUs %d and %d: NUMA nodes %d and %d of package %d", p->a, p->b, t->numa[a->numa].os,
			 t->numa[b->numa].os, a->package);
		break;
	case CC_REL_PACKAGE:
		snprintf(w, n, "CPUs %d and %d: packages %d and %d", p->a, p->b, a->package, b->package);
		break;
	case CC_REL_CLASS:
		snprintf(w, n, "CPUs %d and %d: classes %s and %s", p->a, p->b, t->classes[a->cls].name,
			 t->classes[b->cls].name);
		break;
	case CC_REL_N:
		break;
	}
}

/* The buffer of the memory stream: four times the largest L2 and at least
 * the largest L3, so a stream overflows its L2 and presses on the shared
 * L3 and the memory controller, as the placement-bench stream does. */
static unsigned long long mem_bytes(const struct cc_topo *t)
{
	unsigned long long l2 = 0, l3 = 0, n;

	for (int i = 0; i < t->nl2s; i++)
		if (t->l2s[i].size > l2)
			l2 = t->l2s[i].size;
	for (int i = 0; i < t->nllcs; i++)
		if (t->llcs[i].size > l3)
			l3 = t->llcs[i].size;
	n = 4 * l2 > l3 ? 4 * l2 : l3;
	if (n < (8ull << 20))
		n = 8ull << 20;
	if (n > (256ull << 20))
		n = 256ull << 20;
	return n;
}

int cc_calib_plan(const struct cc_topo *t, hwloc_const_bitmap_t usable_in, struct cc_calib_plan *p,
		  struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t usable = hwloc_bitmap_alloc();

	memset(p, 0, sizeof(*p));
	if (!usable)
		return cc_err_set(err, ENOMEM, "calibrate: out of memory");
	hwloc_bitmap_and(usable, t->online, usable_in ? usable_in : t->allowed);
	if (hwloc_bitmap_weight(usable) < 2)
		return cc_err_set(err, EINVAL,
				  "calibrate: %d usable CPU(s): a pair needs two (run it where the process may use more "
				  "CPUs, e.g. outside a cpuset that holds one)",
				  hwloc_bitmap_weight(usable));
	p->mem_bytes = mem_bytes(t);
	for (int r = 0; r < CC_REL_N; r++) {
		struct cc_calib_pair *pr = &p->pairs[r];

		pr->rel = (enum cc_rel)r;
		if (r == CC_REL_CLASS) {
			int a = -1, b = -1;

			/* The most and the least performant class, as a
			 * placement chooses between them. */
			for (int c = 0; t->nclasses > 1 && c < t->ncores; c++) {
				int pu = core_pu(t, c, usable, false);

				if (pu >= 0 && t->cores[c].cls == 0 && a < 0)
					a = pu;
				if (pu >= 0 && t->cores[c].cls == t->nclasses - 1 && b < 0)
					b = pu;
			}
			pr->present = a >= 0 && b >= 0;
			pr->a = a;
			pr->b = b;
		} else {
			/* Within one class first, the most performant first:
			 * a pair of unlike cores measures two effects at once. */
			for (int c = 0; c < t->nclasses && !pr->present; c++)
				pr->present = find_pair(t, usable, c, (enum cc_rel)r, &pr->a, &pr->b);
			if (!pr->present)
				pr->present = find_pair(t, usable, -1, (enum cc_rel)r, &pr->a, &pr->b);
		}
		if (pr->present)
			describe(t, pr);
		else
			snprintf(pr->what, sizeof(pr->what), "%s", absent_reason(t, (enum cc_rel)r));
	}
	return 0;
}
