/* The two baselines of the placement benchmark; see baselines.h.  The
 * kubelet one follows pkg/kubelet/cm/cpumanager/cpu_assignment.go
 * (takeByTopologyNUMAPacked, CPUSortingStrategyPacked): it is the
 * behaviour of a node running the static policy without a topology
 * manager policy that refuses cross-NUMA placements. */
#include "baselines.h"

#include <stdbool.h>
#include <stdlib.h>

#include "cleanup.h"

int bl_first_fit(const struct cc_topo *t, hwloc_const_bitmap_t free, int n, hwloc_bitmap_t out)
{
	int cpu, got = 0;

	(void)t;
	hwloc_bitmap_zero(out);
	if (hwloc_bitmap_weight(free) < n)
		return -1;
	hwloc_bitmap_foreach_begin(cpu, free)
	{
		if (got == n)
			break;
		hwloc_bitmap_set(out, (unsigned)cpu);
		got++;
	}
	hwloc_bitmap_foreach_end();
	return 0;
}

/* Free CPUs per domain, kept up to date while the accumulator takes. */
struct acc {
	const struct cc_topo *t;
	hwloc_bitmap_t avail; /* still free */
	hwloc_bitmap_t out;
	int need;
	int *node_free; /* per NUMA node, slot nnuma for "none" */
	int *core_free;
};

static int node_of(const struct cc_topo *t, int numa)
{
	return numa < 0 || numa >= t->nnuma ? t->nnuma : numa;
}

static void take_cpu(struct acc *a, int cpu)
{
	int pi = cc_topo_pu_index(a->t, cpu);
	const struct cc_pu *p = &a->t->pus[pi];

	hwloc_bitmap_clr(a->avail, (unsigned)cpu);
	hwloc_bitmap_set(a->out, (unsigned)cpu);
	a->node_free[node_of(a->t, p->numa)]--;
	if (p->core >= 0)
		a->core_free[p->core]--;
	a->need--;
}

static void take_set(struct acc *a, hwloc_const_bitmap_t set)
{
	int cpu;

	hwloc_bitmap_foreach_begin(cpu, set)
	{
		take_cpu(a, cpu);
	}
	hwloc_bitmap_foreach_end();
}

/* Whole free domains (packages or NUMA nodes) while the request needs at
 * least one's worth, lowest id first (all free ones are equally full). */
static void take_full_domains(struct acc *a, const struct cc_domain *d, int n)
{
	for (int i = 0; i < n && a->need > 0; i++) {
		int size = hwloc_bitmap_weight(d[i].cpus);

		if (size > 0 && a->need >= size && hwloc_bitmap_isincluded(d[i].cpus, a->avail))
			take_set(a, d[i].cpus);
	}
}

/* kubelet's packed order: the fullest node first, then (for threads) the
 * fullest core, then the lowest id. */
static bool before(const struct acc *a, int node_x, int core_x, int id_x, int node_y, int core_y, int id_y)
{
	if (a->node_free[node_x] != a->node_free[node_y])
		return a->node_free[node_x] < a->node_free[node_y];
	if (node_x != node_y)
		return node_x < node_y;
	if (core_x != core_y)
		return core_x < core_y;
	return id_x < id_y;
}

static void take_full_cores(struct acc *a)
{
	const struct cc_topo *t = a->t;

	for (;;) {
		int best = -1;

		for (int c = 0; c < t->ncores; c++) {
			const struct cc_core *core = &t->cores[c];

			if (core->npus > a->need || a->core_free[c] != core->npus ||
			    !hwloc_bitmap_isincluded(core->pus, a->avail))
				continue;
			if (best < 0 || before(a, node_of(t, core->numa), 0, c, node_of(t, t->cores[best].numa), 0, best))
				best = c;
		}
		if (best < 0)
			return;
		take_set(a, t->cores[best].pus);
	}
}

static void take_remaining(struct acc *a)
{
	const struct cc_topo *t = a->t;

	while (a->need > 0) {
		int best = -1, cpu;

		hwloc_bitmap_foreach_begin(cpu, a->avail)
		{
			const struct cc_pu *p = &t->pus[cc_topo_pu_index(t, cpu)];
			const struct cc_pu *b = best < 0 ? NULL : &t->pus[cc_topo_pu_index(t, best)];
			int cf = p->core >= 0 ? a->core_free[p->core] : 1;

			if (!b || before(a, node_of(t, p->numa), cf, cpu, node_of(t, b->numa),
					 b->core >= 0 ? a->core_free[b->core] : 1, best))
				best = cpu;
		}
		hwloc_bitmap_foreach_end();
		if (best < 0)
			return;
		take_cpu(a, best);
	}
}

int bl_kubelet_packed(const struct cc_topo *t, hwloc_const_bitmap_t free, int n, hwloc_bitmap_t out)
{
	_cleanup_free_ int *node_free = calloc((size_t)t->nnuma + 1, sizeof(int));
	_cleanup_free_ int *core_free = calloc((size_t)t->ncores + 1, sizeof(int));
	_cleanup_bitmap_ hwloc_bitmap_t avail = hwloc_bitmap_dup(free);
	struct acc a = { t, avail, out, n, node_free, core_free };
	int cpu;

	hwloc_bitmap_zero(out);
	if (!node_free || !core_free || !avail || hwloc_bitmap_weight(free) < n)
		return -1;
	hwloc_bitmap_foreach_begin(cpu, free)
	{
		int pi = cc_topo_pu_index(t, cpu);

		if (pi < 0) {
			hwloc_bitmap_clr(avail, (unsigned)cpu);
			continue;
		}
		node_free[node_of(t, t->pus[pi].numa)]++;
		if (t->pus[pi].core >= 0)
			core_free[t->pus[pi].core]++;
	}
	hwloc_bitmap_foreach_end();
	/* kubelet takes the larger of sockets and NUMA nodes first. */
	if (t->npackages < t->nnuma) {
		take_full_domains(&a, t->packages, t->npackages);
		take_full_domains(&a, t->numa, t->nnuma);
	} else {
		take_full_domains(&a, t->numa, t->nnuma);
		take_full_domains(&a, t->packages, t->npackages);
	}
	take_full_cores(&a);
	take_remaining(&a);
	return a.need == 0 ? 0 : -1;
}
