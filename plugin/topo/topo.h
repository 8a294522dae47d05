/* corecarve: the host model every decision is made on.
 *
 * Discovery (hwloc, sysfs through a cc_root) fills a plain model of arrays
 * and bitmaps; decisions (classes, allocator, audit) read only this model,
 * so they are pure functions testable on any topology.  All cpu bitmaps are
 * in Linux CPU numbers (hwloc OS indexes).
 */
#ifndef CC_TOPO_H
#define CC_TOPO_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>

#include "classes.h"
#include "error.h"
#include "root.h"

/* One logical CPU. Indexes refer to the arrays of struct cc_topo. */
struct cc_pu {
	int os;       /* Linux CPU number */
	int core;     /* index into topo->cores, -1 if offline/unknown */
	int package;  /* index into topo->packages */
	int numa;     /* index into topo->numa, -1 when unknown */
	int l2;       /* index into topo->l2s, -1 when none */
	int llc;      /* index into topo->llcs, -1 when none */
	int cls;      /* index into topo->classes, -1 when offline */
	bool online;
	bool allowed; /* in the caller's allowed cpuset */
};

/* One physical core (all its SMT threads). Ids are unique machine-wide. */
struct cc_core {
	int id;           /* == index in topo->cores */
	int package, numa, l2, llc, cls;
	hwloc_bitmap_t pus; /* online PUs of this core */
	int npus;
};

/* A package, NUMA node, LLC or L2 domain. */
struct cc_domain {
	int id;             /* index in its array */
	int os;             /* OS index (NUMA node number, package id, cache id or -1) */
	hwloc_bitmap_t cpus; /* online PUs */
	hwloc_bitmap_t cores; /* bitmap of core ids */
	int ncores;
	int package;        /* for NUMA/LLC/L2: the package index, -1 if it spans */
	int numa;           /* for LLC/L2: the NUMA index, -1 if it spans */
	int level;          /* caches: 2 for L2, 3 for L3...; 0 otherwise */
	unsigned long long size; /* caches: bytes, 0 when unknown */
};

/* A core class: a set of cores of one hardware kind. Index 0 is the most
 * performant; the last is the least. */
struct cc_class {
	char name[CC_NAME_MAX];   /* performance, mid, mid-1, efficient, low-power, or an override name */
	int rank;                 /* 0 = most performant */
	hwloc_bitmap_t cpus;      /* online PUs of the class */
	hwloc_bitmap_t cores;     /* core ids */
	int ncores;
	int threads_per_core;     /* max SMT threads of its cores */
	char kind[64];            /* hardware description, e.g. "IntelCore", "cpu_capacity 1024" */
};

struct cc_topo {
	int npus;
	struct cc_pu *pus;          /* sorted by os */
	int ncores;
	struct cc_core *cores;
	int npackages;
	struct cc_domain *packages;
	int nnuma;
	struct cc_domain *numa;
	int *distance;              /* nnuma*nnuma, row-major; NULL when unknown */
	int nllcs;
	struct cc_domain *llcs;
	int nl2s;
	struct cc_domain *l2s;      /* every L2, private or shared */
	int nclasses;
	struct cc_class *classes;
	hwloc_bitmap_t online;      /* online PUs */
	hwloc_bitmap_t allowed;     /* PUs the caller may use */
	hwloc_bitmap_t offline;     /* present but offline (listed in pus with online=false) */
	hwloc_bitmap_t present;     /* present CPUs (online + offline) */
	hwloc_bitmap_t possible;    /* possible CPUs (hotplug slots included) */
	char class_source[64];      /* override, synthetic, hybrid-pmu, hwloc-cpukinds, frequency, capacity, uniform */
	char source[128];           /* host, --root DIR, --hwloc-xml FILE, synthetic:... */
};

enum cc_topo_kind {
	CC_TOPO_HOST,      /* the running machine, or a captured tree when root is not "/" */
	CC_TOPO_XML,       /* an hwloc XML v2 export */
	CC_TOPO_SYNTHETIC, /* an hwloc synthetic description, e.g. "pack:2 numa:2 core:6 pu:2" */
};

struct cc_topo_source {
	enum cc_topo_kind kind;
	const struct cc_root *root; /* CC_TOPO_HOST: sysfs/procfs prefix */
	const char *arg;            /* XML path or synthetic description */
	const struct cc_class_override *overrides; /* policy coreClasses, may be NULL */
	int noverrides;
	/* Whose view of "allowed": false (the node's, for placement decisions:
	 * every online CPU, because carves are made with cgroups, not with the
	 * affinity of whoever runs corecarve — a hook runs in the runtime's
	 * cgroup, which the carves themselves shrink), true (the calling
	 * process's cgroup cpuset and affinity: `topology` and `exec`). */
	bool caller_view;
};
/* CC_TOPO_SYNTHETIC: `arg` may end in "| name=cpulist name=cpulist ...",
 * classes of the synthetic host (e.g. "pack:1 core:12 pu:1 | performance=0-3
 * efficient=4-11"), validated like coreClasses; src->overrides wins over them. */

struct cc_topo *cc_topo_load(const struct cc_topo_source *src, struct cc_err *err);
void cc_topo_free(struct cc_topo *topo);
void cc_topo_freep(struct cc_topo **topo);
#define _cleanup_topo_ __attribute__((cleanup(cc_topo_freep)))

/* Index into topo->pus of Linux CPU `os`, or -1. */
int cc_topo_pu_index(const struct cc_topo *topo, int os);
/* Class index by name, or -1. */
int cc_topo_class_index(const struct cc_topo *topo, const char *name);
/* Number of online PUs. */
int cc_topo_online_pus(const struct cc_topo *topo);

/* Output: the human map (topo_map.c) and the JSON document (topo_json.c).
 * Both only read the model, so other commands reuse them with a view. */
struct cc_topo_view {
	/* Optional per-PU labels indexed like topo->pus (e.g. the owner of a
	 * carved CPU); a NULL array or NULL entries mean none.  The map then
	 * shows one core per line with its CPUs' labels; the JSON adds
	 * cpus[].label. */
	const char *const *pu_labels;
	/* Map heading line, replacing "host: <source>", or NULL. */
	const char *title;
};

struct json_t;
/* The JSON document described in docs/topology.md; NULL with err set. */
struct json_t *cc_topo_json(const struct cc_topo *topo, const struct cc_topo_view *view,
			    struct cc_err *err);
/* Write the human map (80 columns) to `out`. */
int cc_topo_map(FILE *out, const struct cc_topo *topo, const struct cc_topo_view *view,
		struct cc_err *err);

#endif
