/* corecarve audit: what the audit's check files share (audit_checks.c,
 * audit_records.c, audit_quota.c), private to plugin/report/audit*. */
#ifndef CC_AUDIT_INT_H
#define CC_AUDIT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"

/* Room for a cpu-list or a value in a finding's text. */
#define AUDIT_BUF 256

/* A cpu-list into a buffer; "none" for the empty set. */
const char *audit_fmt(char *buf, size_t len, hwloc_const_bitmap_t set);
/* A partition state that is a partition ("root", "isolated", valid or not). */
bool audit_partition_word(const char *p);
/* The last component of a path. */
const char *audit_base_name(const char *path);
/* The carve's mode; -1 for one without a cgroup (an exec's affinity). */
int audit_carve_mode(const struct cc_carve *c, enum cc_cg_mode *m);
/* The snapshot's index of the carve's cgroup, -1 when none. */
int audit_carve_cgroup(const struct cc_audit_in *in, const struct cc_carve *c);
/* NUMA node numbers of `cpus`. */
void audit_numa_of(const struct cc_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out);

/* Append a finding, or return -1 from the check (`out`, `err` in scope). */
#define ADD(code, carve)                                                       \
	({                                                                     \
		struct cc_finding *_f = cc_audit_add(out, (code), (carve), err); \
		if (!_f)                                                       \
			return -1;                                             \
		_f;                                                            \
	})

#endif
