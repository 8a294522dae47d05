/* corecarve: what the topology loader's files share, private to them.
 *
 *   topo.c            cc_topo_load (the order of the steps below), freeing
 *                     the model, the small lookups of topo.h
 *   topo_hwloc.c      hwloc: loading a host, XML or synthetic source, the
 *                     synthetic "DESC | name=list" split, the caller's
 *                     allowed CPUs
 *   topo_cpustate.c   what sysfs says about CPUs (online, present,
 *                     possible, the hybrid PMU lists), and the checks that
 *                     a captured tree is whole
 *   topo_build.c      the model from hwloc: cores, domains, PUs, classes
 *   topo_distances.c  the NUMA distance matrix, from hwloc or sysfs
 *
 * hwloc is used only while loading: nothing here outlives cc_topo_load. */
#ifndef CC_TOPO_INT_H
#define CC_TOPO_INT_H

#include "topo.h"

/* ---- topo_hwloc.c ---- */

/* Configure `t` (disallowed CPUs kept, caches kept, no I/O objects) and
 * load it from `src`; `desc` is the synthetic description without its
 * classes (topo_parse_synthetic), NULL for the other kinds. */
int topo_load_hwloc(hwloc_topology_t t, const struct cc_topo_source *src, const char *desc,
		    struct cc_err *err);
/* Split "DESC | name=list name=list": *desc (caller frees) and the classes
 * after the bar (topo_free_overrides); none without a bar. */
int topo_parse_synthetic(const char *arg, char **desc, struct cc_class_override **ov, int *nov,
			 struct cc_err *err);
void topo_free_overrides(struct cc_class_override *ov, int nov);
/* Narrow `allowed` to what the calling process may run on (the real host
 * only). */
void topo_host_allowed(hwloc_topology_t t, hwloc_bitmap_t allowed);

/* ---- topo_cpustate.c ---- */

/* What the kernel says about CPUs, read through the root. */
struct topo_cpu_state {
	hwloc_bitmap_t online, present, possible;
	hwloc_bitmap_t pmu_core, pmu_atom; /* NULL when the host is not hybrid */
};

/* Fill `s` (online, present and possible already allocated) from the
 * root's sysfs, refusing a truncated or inconsistent tree. */
int topo_read_cpu_state(const struct cc_root *root, struct topo_cpu_state *s, struct cc_err *err);
void topo_cpu_state_free(struct topo_cpu_state *s);

/* ---- topo_build.c ---- */

/* Cores, packages, caches and NUMA nodes of the online CPUs; llc_level[id]
 * gets each core's last-level cache depth (0: none). */
int topo_build_structure(hwloc_topology_t t, struct cc_topo *topo, hwloc_const_bitmap_t online,
			 int *llc_level, struct cc_err *err);
/* Each domain's cpus and cores, and its package / NUMA node when one
 * holds it (after topo_build_structure). */
void topo_fill_domains(struct cc_topo *topo);
/* topo->pus: every present CPU, online or not (-1: ENOMEM). */
int topo_build_pus(struct cc_topo *topo, hwloc_const_bitmap_t online);
/* The core classes: src's coreClasses, else the synthetic ones, else the
 * rules of classes.h on the facts hwloc and `cs` (NULL off the host) give. */
int topo_build_classes(hwloc_topology_t t, struct cc_topo *topo, const struct cc_topo_source *src,
		       const struct cc_class_override *syn, int nsyn, const struct topo_cpu_state *cs,
		       const int *llc_level, struct cc_err *err);
void topo_domains_free(struct cc_domain *d, int n);

/* ---- topo_distances.c ---- */

/* topo->distance from hwloc's latency matrix over the NUMA nodes; left
 * NULL when hwloc has none of the right size. */
int topo_build_distances(hwloc_topology_t t, struct cc_topo *topo, struct cc_err *err);
/* topo->distance from the kernel's node rows (a host without hwloc's
 * matrix); left NULL when a row is missing or odd. */
int topo_sysfs_distances(const struct cc_root *root, struct cc_topo *topo, struct cc_err *err);

#endif
