/* corecarve: core classes, decided from per-core facts.
 *
 * Discovery (topo_build.c) collects what hwloc and sysfs say about each physical
 * core into a struct cc_core_facts; the rules here turn those facts into
 * named classes.  They are pure functions, so every rule (Turbo Boost Max
 * 3.0, near-equal ARM capacities, Meteor Lake low-power E-cores, operator
 * overrides) is tested on made-up inputs.  docs/topology.md explains them.
 *
 * Sources, strongest first (the first that describes every core wins):
 *   override       policy coreClasses (cc_classify_override)
 *   hybrid-pmu     /sys/devices/cpu_core/cpus, /sys/devices/cpu_atom/cpus
 *   hwloc-cpukinds hwloc CPU kinds with a CoreType (IntelCore, AMDEfficiency...)
 *   capacity       cpu_capacity (ARM, RISC-V), ranked in tiers
 *   frequency      base frequency, else max frequency, ranked in tiers
 *   hwloc-cpukinds hwloc kinds with only an efficiency rank
 *   uniform        nothing tells cores apart: one class, "performance"
 */
#ifndef CC_CLASSES_H
#define CC_CLASSES_H

#include <hwloc.h>

#include "error.h"

/* Room for a class name, NUL included (core classes, policy placement classes). */
#define CC_NAME_MAX 32

/* Two values of a metric (capacity or MHz) belong to the same tier when the
 * lower is within this many percent of the next higher distinct value.
 * Same-type variation seen on real hosts stays under ~7% (Turbo Boost Max
 * 3.0, AMD preferred cores, ARM capacity tables); different core types
 * differ by 12% or more (X3 vs A715: 17%, P vs E base clock: 25%). */
#define CC_CLASS_TIER_PCT 10

/* Most classes a host may have (performance, mid-1..mid-N, efficient, low-power). */
#define CC_CLASSES_MAX 16

#define CC_KIND_MAX 64

enum cc_pmu {
	CC_PMU_NONE = 0, /* not listed in a hybrid PMU (or no hybrid PMU) */
	CC_PMU_CORE,     /* in /sys/devices/cpu_core/cpus (Intel P-core) */
	CC_PMU_ATOM,     /* in /sys/devices/cpu_atom/cpus (Intel E-core) */
};

/* What discovery knows about one physical core; 0 / "" / -1 = unknown. */
struct cc_core_facts {
	enum cc_pmu pmu;
	int llc_level;              /* level of the last cache above the core (3 = L3), 0 if none */
	char core_type[32];         /* hwloc cpukind info CoreType */
	int efficiency;             /* hwloc cpukind efficiency rank, -1 unknown */
	unsigned long base_mhz;     /* hwloc FrequencyBaseMHz (cpufreq base_frequency) */
	unsigned long max_mhz;      /* hwloc FrequencyMaxMHz (cpuinfo_max_freq) */
	unsigned long capacity;     /* hwloc LinuxCapacity (cpu_capacity) */
};

struct cc_class_desc {
	char name[CC_NAME_MAX];
	char kind[CC_KIND_MAX];     /* what the hardware said, e.g. "cpu_capacity 855" */
};

/* The outcome: classes in rank order (0 = most performant). */
struct cc_classing {
	int nclasses;
	struct cc_class_desc classes[CC_CLASSES_MAX];
	char source[64];            /* one of the sources listed above */
};

/* An operator's class (policy coreClasses, a synthetic host's classes):
 * its name and the CPUs it holds (cc_classify_override checks them). */
struct cc_class_override {
	char name[CC_NAME_MAX];
	hwloc_bitmap_t cpus;
};

/* Split metric values into tiers, highest first: sort the distinct
 * positive values and cut wherever the next lower value is more than
 * CC_CLASS_TIER_PCT percent below its neighbour.  tier[i] receives the
 * tier of values[i] (0 = highest).  Returns the number of tiers, or 0 when
 * some value is 0 (unknown). */
int cc_class_tiers(const unsigned long *values, int n, int *tier);

/* Name `ntiers` unnamed tiers: "performance", then "mid" (or "mid-1",
 * "mid-2", ... when several), then "efficient".  One tier: "performance". */
void cc_class_tier_name(int t, int ntiers, char name[CC_NAME_MAX]);

/* Map a hardware core type (hwloc CoreType) to a class name, or NULL. */
const char *cc_class_for_core_type(const char *core_type);

/* Classify `ncores` cores from their facts: core_class[i] receives the
 * class index of core i.  Fails only when the facts would need more than
 * CC_CLASSES_MAX classes. */
int cc_classify(const struct cc_core_facts *facts, int ncores, int *core_class,
		struct cc_classing *out, struct cc_err *err);

/* Apply an operator override (policy coreClasses) to cores whose online
 * PUs are core_pus[i].  Validated: each class names at least one online
 * CPU and only CPUs in `known` (present CPUs), classes do not overlap,
 * each core lies whole in one class, every online CPU is covered.  `what`
 * names the origin in errors ("coreClasses").  Classes keep the order
 * given, unless every name is a standard one (performance, mid, mid-N,
 * efficient, low-power): then they are put in that order. */
int cc_classify_override(const struct cc_class_override *ov, int nov,
			 const hwloc_const_bitmap_t *core_pus, int ncores,
			 hwloc_const_bitmap_t online, hwloc_const_bitmap_t known,
			 const char *what, int *core_class,
			 struct cc_classing *out, struct cc_err *err);

#endif
