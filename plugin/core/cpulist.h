/* corecarve: Linux cpu-list ("0-3,8") and cpumask ("ff,00000001") strings.
 *
 * hwloc does the set arithmetic and the printing; it is lenient on input
 * ("5-2" reads as empty, "0-" as infinite, "0x3" as 3, "010" as 8), so
 * cpu-lists are parsed here, decimal only, and cpumasks checked for shape
 * before hwloc reads them.
 */
#ifndef CC_CPULIST_H
#define CC_CPULIST_H

#include <hwloc.h>

#include "error.h"

/* Largest CPU or node number corecarve accepts (Linux NR_CPUS max). */
#define CC_CPU_LIMIT 8192

/* Parse a cpu-list into `out` (replaced).  Empty string is the empty set.
 * `what` names the field for the error message. */
int cc_cpulist_parse(const char *s, hwloc_bitmap_t out, const char *what,
		     struct cc_err *err);

/* Parse a Linux hex cpumask (comma-separated 32-bit words, most
 * significant first), as in /proc/irq/N/smp_affinity. */
int cc_cpumask_parse(const char *s, hwloc_bitmap_t out, const char *what,
		     struct cc_err *err);

/* Format as a cpu-list; "" for the empty set.  Caller frees. NULL on ENOMEM. */
char *cc_cpulist_format(hwloc_const_bitmap_t set);

/* Format as a Linux hex cpumask covering at least `nbits` bits. */
char *cc_cpumask_format(hwloc_const_bitmap_t set, unsigned nbits);

#endif
