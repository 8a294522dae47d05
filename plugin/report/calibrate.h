/* corecarve calibrate: the node's own placement table.
 *
 * How much two workloads slow each other depends on where they sit (SMT
 * siblings, one L2 cluster, one L3, two L3s, two NUMA nodes, two packages,
 * two core classes) and differs per machine.  calibrate picks one CPU pair
 * per relation the node has (calibrate_plan.c, pure: a function of the
 * topology), measures a CPU loop and a memory stream alone and as a pair
 * (calibrate_run.c), and keeps the table as the node's baseline with the
 * facts it was taken under (baseline.c).  doctor re-measures briefly and
 * compares (doctor_baseline.c); plan --explain says what a carve avoids,
 * in these numbers (calibrate_explain.c).
 */
#ifndef CC_CALIBRATE_H
#define CC_CALIBRATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "root.h"
#include "topo.h"

/* Where the baseline lives: persistent (the ledger in /run is not). */
#define CC_BASELINE_PATH "/var/lib/corecarve/baseline.json"
#define CC_BASELINE_SCHEMA 1

/* Relations, nearest first.  cc_calib_relation() of two CPUs is the
 * nearest that holds. */
enum cc_rel {
	CC_REL_SMT,     /* two threads of one core */
	CC_REL_L2,      /* two cores sharing an L2 (a cluster) */
	CC_REL_L3,      /* two cores with separate L2s in one L3 */
	CC_REL_L3X,     /* two L3s in one NUMA node (one package when NUMA is unknown) */
	CC_REL_NUMA,    /* two NUMA nodes of one package */
	CC_REL_PACKAGE, /* two packages */
	CC_REL_CLASS,   /* two core classes (P vs E): chosen separately */
	CC_REL_N,
};

const char *cc_rel_name(enum cc_rel r);
/* -1 for an unknown name. */
int cc_rel_parse(const char *name);
/* The nearest relation of CPUs `a` and `b` (Linux numbers, a != b); never
 * CC_REL_CLASS; -1 when either is unknown, or for two cores of one
 * package whose L3 is unknown. */
int cc_calib_relation(const struct cc_topo *t, int a, int b);

enum cc_work {
	CC_WORK_CPU, /* a dependent integer and FP chain: the core's pipeline */
	CC_WORK_MEM, /* a read stream over a buffer larger than L2: caches and memory */
	CC_WORK_N,
};
const char *cc_work_name(enum cc_work w);

/* One relation: the pair chosen for it, or why the node has none. */
struct cc_calib_pair {
	enum cc_rel rel;
	bool present;
	int a, b;          /* Linux CPU numbers */
	char what[160];    /* "SMT siblings of core 3", or the reason it is absent */
};

struct cc_calib_plan {
	struct cc_calib_pair pairs[CC_REL_N]; /* indexed by relation */
	unsigned long long mem_bytes;          /* the memory stream's buffer */
};

/* Choose the pairs among the online CPUs in `usable` (NULL: online and
 * allowed).  Pure.  0, or -1 when fewer than 2 CPUs are usable. */
int cc_calib_plan(const struct cc_topo *t, hwloc_const_bitmap_t usable, struct cc_calib_plan *p,
		  struct cc_err *err);

/* The largest ratio a pair can show (a cache warmed by the sibling can
 * speed a side up; no placement runs a side 4x faster than alone): a
 * baseline holding more is refused when read, and calibrate measures a
 * round that shows more again (calibrate_run.c). */
#define CC_CALIB_RATIO_MAX 4.0

/* One workload's result for a pair: medians over rounds. */
struct cc_calib_result {
	double solo_a, solo_b; /* units per second alone (cpu: Mops/s, mem: MB/s) */
	double ratio_a, ratio_b; /* pair throughput / solo throughput, each side */
	double ratio;          /* the mean of the two sides */
};

struct cc_calib_entry {
	struct cc_calib_pair pair;
	struct cc_calib_result res[CC_WORK_N];
};

/* What the table was taken under; "" where the node does not say. */
struct cc_calib_facts {
	char kernel[256];    /* uname release and version */
	char microcode[32];  /* /proc/cpuinfo of the first CPU */
	char model[128];
	char governor[32];   /* scaling_governor of the first measured CPU */
	char max_khz[32];    /* cpuinfo_max_freq of that CPU */
	char smt[16];        /* /sys/devices/system/cpu/smt/active */
	char online[256];    /* online CPU list */
	char hwloc[32];      /* the hwloc library's API version, e.g. "2.9.0" */
};

struct cc_baseline {
	int schema_version;
	char taken[32]; /* UTC, ISO 8601 */
	struct cc_calib_facts facts;
	int rounds, ms;
	unsigned long long mem_bytes;
	int n;
	struct cc_calib_entry entries[CC_REL_N]; /* measured relations, nearest first */
	int nskipped;
	struct cc_calib_pair skipped[CC_REL_N];  /* absent relations and why */
};

/* ---- measurement (calibrate_run.c; only on the real host) --------------- */

struct cc_calib_opts {
	int rounds; /* medians over this many rounds */
	int ms;     /* each measured interval */
};

/* Measure every present pair of `p` into `b` (facts not filled).  Threads
 * are pinned with sched_setaffinity, start on a barrier and stop on one
 * flag, so solo and pair intervals are alike and both sides of a pair run
 * at once.  `progress` (may be NULL) gets a line per pair. */
int cc_calib_measure(const struct cc_root *root, const struct cc_calib_plan *p, const struct cc_calib_opts *o,
		     FILE *progress, struct cc_baseline *b, struct cc_err *err);

/* The facts of this node, read through the root; `cpu` chooses whose
 * governor and frequency are read. */
void cc_calib_facts_read(const struct cc_root *root, int cpu, struct cc_calib_facts *f);

/* ---- the file (baseline.c) ----------------------------------------------- */

json_t *cc_baseline_json(const struct cc_baseline *b);
/* `where` names the source in errors (a path). */
int cc_baseline_parse(const json_t *doc, const char *where, struct cc_baseline *b, struct cc_err *err);
int cc_baseline_load_root(const struct cc_root *root, const char *path, struct cc_baseline *b, struct cc_err *err);
int cc_baseline_load_file(const char *path, struct cc_baseline *b, struct cc_err *err);
/* Write atomically (temporary file, fsync, rename); parent directories
 * are created 0755. */
int cc_baseline_write(const char *path, const struct cc_baseline *b, struct cc_err *err);
/* The entry for relation r, or NULL. */
const struct cc_calib_entry *cc_baseline_entry(const struct cc_baseline *b, enum cc_rel r);

/* ---- comparison (baseline.c; pure) --------------------------------------- */

struct cc_calib_tolerance {
	double ratio; /* absolute change of a ratio that counts, e.g. 0.10 */
	double solo;  /* relative drop of solo throughput that counts, e.g. 0.15 */
};
#define CC_CALIB_TOLERANCE_DEFAULT { 0.10, 0.15 }

#define CC_CALIB_FINDINGS_MAX 32
struct cc_calib_compare {
	int n;
	char findings[CC_CALIB_FINDINGS_MAX][200]; /* one line each, the first the worst */
	int changed_facts, ratio_moves, slower;
};

/* Compare `now` (facts always; entries when now->n > 0) with `old`.
 * Returns the number of findings (0: as calibrated). */
int cc_baseline_compare(const struct cc_baseline *old, const struct cc_baseline *now,
			const struct cc_calib_tolerance *tol, struct cc_calib_compare *out);

/* ---- plan --explain (calibrate_explain.c; pure) -------------------------- */

/* For a carve on `cpus` that also owns `owned` (cpus and parked), one line
 * per relation the baseline measured: how many CPUs outside the carve sit
 * at that relation to it, and the measured ratios there.  Returns the
 * number of lines printed. */
int cc_calib_explain(FILE *out, const struct cc_topo *t, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t owned,
		     const struct cc_baseline *b);

#endif
