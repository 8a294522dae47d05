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

#include "error.h"
#include "root.h"

#define CC_NAME_MAX 32

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
	hwloc_bitmap_t offline;     /* present/possible but offline */
	char class_source[64];      /* override, hybrid-pmu, hwloc-cpukinds, frequency, capacity, uniform */
	char source[128];           /* host, --root DIR, --hwloc-xml FILE, synthetic:... */
};

enum cc_topo_kind {
	CC_TOPO_HOST,      /* the running machine, or a captured tree when root is not "/" */
	CC_TOPO_XML,       /* an hwloc XML v2 export */
	CC_TOPO_SYNTHETIC, /* an hwloc synthetic description, e.g. "pack:2 numa:2 core:6 pu:2" */
};

struct cc_class_override {
	char name[CC_NAME_MAX];
	hwloc_bitmap_t cpus;
};

struct cc_topo_source {
	enum cc_topo_kind kind;
	const struct cc_root *root; /* CC_TOPO_HOST: sysfs/procfs prefix */
	const char *arg;            /* XML path or synthetic description */
	const struct cc_class_override *overrides; /* policy coreClasses, may be NULL */
	int noverrides;
};

struct cc_topo *cc_topo_load(const struct cc_topo_source *src, struct cc_err *err);
void cc_topo_free(struct cc_topo *topo);
void cc_topo_freep(struct cc_topo **topo);
#define _cleanup_topo_ __attribute__((cleanup(cc_topo_freep)))

/* Index into topo->pus of Linux CPU `os`, or -1. */
int cc_topo_pu_index(const struct cc_topo *topo, int os);
/* Class index by name, or -1. */
int cc_topo_class_index(const struct cc_topo *topo, const char *name);

#endif
