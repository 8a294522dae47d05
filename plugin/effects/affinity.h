/* corecarve: a thread's CPU affinity from a cpu set (exec, VM pinning).
 * sched_setaffinity(2) cannot be redirected to a --root: callers act only
 * on the real host. */
#ifndef CC_AFFINITY_H
#define CC_AFFINITY_H

#include <hwloc.h>
#include <sys/types.h>

#include "error.h"

/* Pin thread `tid` (0: the calling thread) to `cpus`.  Errors read
 * "sched_setaffinity(LIST): <strerror>", or "sched_setaffinity(thread
 * TID, LIST): ..." for another thread. */
int cc_affinity_set(pid_t tid, hwloc_const_bitmap_t cpus, struct cc_err *err);

#endif
