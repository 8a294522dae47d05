#define _GNU_SOURCE
#include "affinity.h"

#include <errno.h>
#include <sched.h>

#include "cleanup.h"
#include "cpulist.h"

int cc_affinity_set(pid_t tid, hwloc_const_bitmap_t cpus, struct cc_err *err)
{
	int last = hwloc_bitmap_last(cpus), cpu;
	size_t size;
	cpu_set_t *set;
	int r;

	/* An empty or infinite set is no affinity: refuse rather than let the
	 * kernel pick (EINVAL) or allocate a mask for "all CPUs ever". */
	if (last < 0)
		return cc_err_set(err, EINVAL, "sched_setaffinity: empty cpu set");
	size = CPU_ALLOC_SIZE(last + 1);
	set = CPU_ALLOC(last + 1);
	if (!set)
		return cc_err_sys(err, ENOMEM, "affinity");
	CPU_ZERO_S(size, set);
	hwloc_bitmap_foreach_begin(cpu, cpus)
	{
		CPU_SET_S((size_t)cpu, size, set);
	}
	hwloc_bitmap_foreach_end();
	r = sched_setaffinity(tid, size, set);
	CPU_FREE(set);
	if (r < 0) {
		int e = errno;
		_cleanup_free_ char *list = cc_cpulist_format(cpus);

		if (tid)
			return cc_err_sys(err, e, "sched_setaffinity(thread %d, %s)", (int)tid, list ? list : "?");
		return cc_err_sys(err, e, "sched_setaffinity(%s)", list ? list : "?");
	}
	return 0;
}
