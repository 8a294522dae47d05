/* The placement strategies corecarve is compared with (bench/place.c).
 * Both are asked for a number of logical CPUs and know nothing of core
 * classes; both are given the same free set as corecarve (online, not
 * reserved, not taken), so they never touch the reserved CPUs. */
#ifndef CC_BENCH_BASELINES_H
#define CC_BENCH_BASELINES_H

#include <hwloc.h>

#include "topo.h"

/* Naive first-fit by CPU id: the n lowest-numbered free CPUs, what a
 * hand-written `taskset -c` list does.  0, or -1 when fewer are free. */
int bl_first_fit(const struct cc_topo *t, hwloc_const_bitmap_t free, int n, hwloc_bitmap_t out);

/* kubelet's static CPU manager, packed (takeByTopologyNUMAPacked): whole
 * free packages, then whole free NUMA nodes, while the request needs at
 * least that many; then whole free cores, then single threads.  Cores and
 * threads come from the fullest NUMA node first (fewest free CPUs, as
 * kubelet sorts them), threads from the fullest core first, ties by id.
 * Nothing is chosen to fit: a request larger than what the fullest node
 * has left continues in the next node.  0, or -1 when fewer are free. */
int bl_kubelet_packed(const struct cc_topo *t, hwloc_const_bitmap_t free, int n, hwloc_bitmap_t out);

#endif
