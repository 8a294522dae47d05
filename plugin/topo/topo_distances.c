/* corecarve: the NUMA distance matrix (topo_int.h): hwloc's, else the
 * kernel's rows read through the cc_root. */
#define _GNU_SOURCE
#include "topo_int.h"

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"

int topo_build_distances(hwloc_topology_t t, struct cc_topo *topo, struct cc_err *err)
{
	struct hwloc_distances_s *dist[4];
	unsigned nr = 4;

	if (topo->nnuma < 1)
		return 0;
	if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0)
		return 0;
	if (nr > 4)
		nr = 4;
	for (unsigned k = 0; k < nr; k++) {
		struct hwloc_distances_s *d = dist[k];

		if (!topo->distance && d->nbobjs == (unsigned)topo->nnuma) {
			topo->distance = calloc((size_t)topo->nnuma * (size_t)topo->nnuma, sizeof(int));
			if (!topo->distance) {
				for (unsigned j = k; j < nr; j++)
					hwloc_distances_release(t, dist[j]);
				return cc_err_sys(err, ENOMEM, "topology");
			}
			for (unsigned a = 0; a < d->nbobjs; a++)
				for (unsigned b = 0; b < d->nbobjs; b++)
					topo->distance[d->objs[a]->logical_index * (unsigned)topo->nnuma +
						       d->objs[b]->logical_index] =
						(int)d->values[a * d->nbobjs + b];
		}
		hwloc_distances_release(t, d);
	}
	return 0;
}

/* hwloc keeps no distance matrix for a single node (and none when it
 * rejected the kernel's): read the kernel's rows, which list the distance
 * to every node in increasing node number.  Missing or odd rows leave the
 * distances unknown. */
int topo_sysfs_distances(const struct cc_root *root, struct cc_topo *topo, struct cc_err *err)
{
	int n = topo->nnuma;
	_cleanup_free_ int *d = calloc((size_t)n * (size_t)n, sizeof(int));
	_cleanup_free_ int *rank = calloc((size_t)n, sizeof(int));

	if (!d || !rank)
		return cc_err_sys(err, ENOMEM, "topology");
	for (int i = 0; i < n; i++) {
		if (topo->numa[i].os < 0)
			return 0;
		for (int j = 0; j < n; j++)
			rank[i] += topo->numa[j].os < topo->numa[i].os;
	}
	for (int i = 0; i < n; i++) {
		struct cc_err e = CC_ERR_INIT;
		_cleanup_free_ char *row = NULL;
		char path[96], *p, *end;
		int count = 0;

		if (cc_path(path, sizeof(path), &e, "/sys/devices/system/node/node%d/distance", topo->numa[i].os) < 0)
			return 0;
		row = cc_root_read(root, path, 0, &e);
		if (!row)
			return 0;
		for (p = row;; p = end) {
			long v;

			while (*p == ' ')
				p++;
			if (!*p)
				break;
			errno = 0;
			v = strtol(p, &end, 10);
			if (errno || end == p || v <= 0 || v > 255 || count >= n)
				return 0;
			for (int j = 0; j < n; j++)
				if (rank[j] == count)
					d[i * n + j] = (int)v;
			count++;
		}
		if (count != n)
			return 0;
	}
	topo->distance = cc_steal_ptr(d);
	return 0;
}
