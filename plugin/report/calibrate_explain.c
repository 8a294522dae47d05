/* corecarve plan --explain: what a carve's placement avoids on this node,
 * in the node's own measured numbers.  Pure: the topology, the carve and
 * the baseline in, lines out. */
#define _GNU_SOURCE
#include <stdio.h>

#include "calibrate.h"

static const char *const shares[CC_REL_N] = {
	[CC_REL_SMT] = "are SMT siblings of its CPUs",
	[CC_REL_L2] = "share its L2s",
	[CC_REL_L3] = "share its L3 (with separate L2s)",
	[CC_REL_L3X] = "sit in another L3 of its NUMA node",
	[CC_REL_NUMA] = "sit in another NUMA node of its package",
	[CC_REL_PACKAGE] = "sit in another package",
};

int cc_calib_explain(FILE *out, const struct cc_topo *t, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t owned,
		     const struct cc_baseline *b)
{
	int total[CC_REL_N] = { 0 }, foreign[CC_REL_N] = { 0 }, lines = 0;

	/* Each CPU outside the carve counts once, at its nearest relation
	 * to any CPU of the carve. */
	for (int i = 0; i < t->npus; i++) {
		int q = t->pus[i].os, best = -1, p;

		if (!t->pus[i].online || hwloc_bitmap_isset(cpus, (unsigned)q))
			continue;
		hwloc_bitmap_foreach_begin(p, cpus)
		{
			int r = cc_calib_relation(t, p, q);

			if (r >= 0 && (best < 0 || r < best))
				best = r;
		}
		hwloc_bitmap_foreach_end();
		if (best < 0)
			continue;
		total[best]++;
		if (!hwloc_bitmap_isset(owned, (unsigned)q))
			foreign[best]++;
	}
	for (int r = 0; r < CC_REL_PACKAGE + 1; r++) {
		const struct cc_calib_entry *e = b ? cc_baseline_entry(b, (enum cc_rel)r) : NULL;
		char measured[96] = "";

		if (!total[r] && !e)
			continue;
		if (e)
			snprintf(measured, sizeof(measured), "; measured here: cpu %.2fx, mem %.2fx", e->res[CC_WORK_CPU].ratio,
				 e->res[CC_WORK_MEM].ratio);
		else if (b)
			snprintf(measured, sizeof(measured), "; not in the baseline");
		if (!total[r])
			fprintf(out, "  avoided   %-7s no CPU near the carve stands so%s\n", cc_rel_name((enum cc_rel)r),
				measured);
		else if (!foreign[r])
			fprintf(out, "  avoided   %-7s 0 CPUs outside the carve %s (%d held by it)%s\n",
				cc_rel_name((enum cc_rel)r), shares[r], total[r], measured);
		else
			fprintf(out, "  shared    %-7s %d CPU%s outside the carve %s%s\n", cc_rel_name((enum cc_rel)r),
				foreign[r], foreign[r] == 1 ? "" : "s", shares[r], measured);
		lines++;
	}
	return lines;
}
