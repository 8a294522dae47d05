/* corecarve: topology discovery.  hwloc reads the machine (the host, a
 * captured tree under a root, an XML export or a synthetic description);
 * sysfs through the cc_root fills in what hwloc 2.9 does not read (online,
 * present and possible CPUs, the hybrid PMU lists); the result is copied
 * into the plain model of topo.h and hwloc is released.  The steps are in
 * the other topo_*.c files (topo_int.h); this one runs them in order. */
#define _GNU_SOURCE
#include "topo_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

static void cc_hwloc_destroyp(hwloc_topology_t *t)
{
	if (*t)
		hwloc_topology_destroy(*t);
}
#define _cleanup_hwloc_ __attribute__((cleanup(cc_hwloc_destroyp)))

static int topo_sets_alloc(struct cc_topo *topo)
{
	topo->online = hwloc_bitmap_alloc();
	topo->allowed = hwloc_bitmap_alloc();
	topo->offline = hwloc_bitmap_alloc();
	topo->present = hwloc_bitmap_alloc();
	topo->possible = hwloc_bitmap_alloc();
	return topo->online && topo->allowed && topo->offline && topo->present && topo->possible ? 0 : -1;
}

/* topo->source, the name errors and the map give the topology; a
 * synthetic description is parsed here into hwloc's (*desc) and the
 * classes it names (*syn). */
static int name_source(const struct cc_topo_source *src, struct cc_topo *topo, char **desc,
		       struct cc_class_override **syn, int *nsyn, struct cc_err *err)
{
	switch (src->kind) {
	case CC_TOPO_HOST:
		if (src->root->is_host)
			snprintf(topo->source, sizeof(topo->source), "host");
		else
			snprintf(topo->source, sizeof(topo->source), "--root %s", src->root->path);
		break;
	case CC_TOPO_XML:
		snprintf(topo->source, sizeof(topo->source), "--hwloc-xml %s", src->arg);
		break;
	case CC_TOPO_SYNTHETIC:
		if (topo_parse_synthetic(src->arg, desc, syn, nsyn, err) < 0)
			return -1;
		snprintf(topo->source, sizeof(topo->source), "synthetic:%s", *desc);
		break;
	}
	return 0;
}

/* The online, present, possible, offline and allowed sets: hwloc's
 * online set checked against the kernel's (`cs`, read from sysfs) on a
 * host or --root tree, hwloc's complete cpuset for the other sources. */
static int cpu_sets(hwloc_topology_t t, const struct cc_topo_source *src, const struct topo_cpu_state *cs,
		    struct cc_topo *topo, struct cc_err *err)
{
	hwloc_bitmap_copy(topo->online, hwloc_topology_get_topology_cpuset(t));
	if (src->kind == CC_TOPO_HOST) {
		/* hwloc quietly drops CPUs whose sysfs entries it cannot use;
		 * the model must be the kernel's. */
		if (!hwloc_bitmap_isequal(topo->online, cs->online)) {
			_cleanup_free_ char *h = cc_cpulist_format(topo->online);
			_cleanup_free_ char *k = cc_cpulist_format(cs->online);

			return cc_err_set(err, EINVAL, "%s: hwloc found CPUs %s but /sys/devices/system/cpu/online lists %s",
					  src->root->path, h ? h : "?", k ? k : "?");
		}
		hwloc_bitmap_copy(topo->present, cs->present);
		hwloc_bitmap_copy(topo->possible, cs->possible);
	} else {
		/* An XML export keeps offline CPUs in its complete cpuset. */
		hwloc_bitmap_copy(topo->present, hwloc_topology_get_complete_cpuset(t));
		hwloc_bitmap_or(topo->present, topo->present, topo->online);
		hwloc_bitmap_copy(topo->possible, topo->present);
	}
	hwloc_bitmap_andnot(topo->offline, topo->present, topo->online);
	hwloc_bitmap_copy(topo->allowed, topo->online);
	if (src->kind == CC_TOPO_HOST && src->root->is_host && src->caller_view)
		topo_host_allowed(t, topo->allowed);
	return 0;
}

struct cc_topo *cc_topo_load(const struct cc_topo_source *src, struct cc_err *err)
{
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_hwloc_ hwloc_topology_t t = NULL;
	_cleanup_free_ char *desc = NULL;
	_cleanup_free_ int *llc_level = NULL;
	struct cc_class_override *syn = NULL;
	struct topo_cpu_state cs = { 0 };
	int nsyn = 0, r = -1;

	if (!src || (src->kind == CC_TOPO_HOST && !src->root) || (src->kind != CC_TOPO_HOST && !src->arg))
		return cc_err_set(err, EINVAL, "topology: incomplete source"), NULL;
	if (src->noverrides > 0 && !src->overrides)
		return cc_err_set(err, EINVAL, "topology: overrides missing"), NULL;
	topo = calloc(1, sizeof(*topo));
	if (!topo || topo_sets_alloc(topo) < 0)
		return cc_err_sys(err, ENOMEM, "topology"), NULL;
	if (name_source(src, topo, &desc, &syn, &nsyn, err) < 0)
		goto out;

	if (src->kind == CC_TOPO_HOST) {
		cs.online = hwloc_bitmap_alloc();
		cs.present = hwloc_bitmap_alloc();
		cs.possible = hwloc_bitmap_alloc();
		if (!cs.online || !cs.present || !cs.possible) {
			cc_err_sys(err, ENOMEM, "topology");
			goto out;
		}
		if (topo_read_cpu_state(src->root, &cs, err) < 0)
			goto out;
	}
	if (hwloc_topology_init(&t) < 0) {
		cc_err_sys(err, errno, "hwloc");
		goto out;
	}
	if (topo_load_hwloc(t, src, desc, err) < 0 || cpu_sets(t, src, &cs, topo, err) < 0)
		goto out;

	llc_level = calloc((size_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) + 1, sizeof(int));
	if (!llc_level) {
		cc_err_sys(err, ENOMEM, "topology");
		goto out;
	}
	if (topo_build_structure(t, topo, topo->online, llc_level, err) < 0)
		goto out;
	topo_fill_domains(topo);
	if (topo_build_distances(t, topo, err) < 0)
		goto out;
	if (!topo->distance && src->kind == CC_TOPO_HOST && topo_sysfs_distances(src->root, topo, err) < 0)
		goto out;
	if (topo_build_pus(topo, topo->online) < 0) {
		cc_err_sys(err, ENOMEM, "topology");
		goto out;
	}
	if (topo_build_classes(t, topo, src, syn, nsyn, src->kind == CC_TOPO_HOST ? &cs : NULL, llc_level, err) < 0)
		goto out;
	r = 0;
out:
	topo_free_overrides(syn, nsyn);
	topo_cpu_state_free(&cs);
	if (r < 0)
		return NULL;
	return cc_steal_ptr(topo);
}

void cc_topo_free(struct cc_topo *topo)
{
	if (!topo)
		return;
	for (int i = 0; i < topo->ncores; i++)
		hwloc_bitmap_free(topo->cores[i].pus);
	free(topo->cores);
	free(topo->pus);
	topo_domains_free(topo->packages, topo->npackages);
	topo_domains_free(topo->numa, topo->nnuma);
	topo_domains_free(topo->llcs, topo->nllcs);
	topo_domains_free(topo->l2s, topo->nl2s);
	free(topo->distance);
	for (int i = 0; i < topo->nclasses; i++) {
		hwloc_bitmap_free(topo->classes[i].cpus);
		hwloc_bitmap_free(topo->classes[i].cores);
	}
	free(topo->classes);
	hwloc_bitmap_free(topo->online);
	hwloc_bitmap_free(topo->allowed);
	hwloc_bitmap_free(topo->offline);
	hwloc_bitmap_free(topo->present);
	hwloc_bitmap_free(topo->possible);
	free(topo);
}

void cc_topo_freep(struct cc_topo **topo)
{
	cc_topo_free(*topo);
}

int cc_topo_pu_index(const struct cc_topo *topo, int os)
{
	int lo = 0, hi = topo->npus - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (topo->pus[mid].os == os)
			return mid;
		if (topo->pus[mid].os < os)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int cc_topo_class_index(const struct cc_topo *topo, const char *name)
{
	for (int i = 0; i < topo->nclasses; i++)
		if (strcmp(topo->classes[i].name, name) == 0)
			return i;
	return -1;
}

int cc_topo_online_pus(const struct cc_topo *topo)
{
	return hwloc_bitmap_weight(topo->online);
}
