/* corecarve: what sysfs says about CPUs (topo_int.h), read through the
 * cc_root: the online, present and possible CPUs and the hybrid PMU lists,
 * which hwloc 2.9 does not read, and the checks that a captured tree holds
 * every online CPU's topology. */
#define _GNU_SOURCE
#include "topo_int.h"

#include <errno.h>

#include "cleanup.h"
#include "cpulist.h"

static const char cpu_dir[] = "/sys/devices/system/cpu";

void topo_cpu_state_free(struct topo_cpu_state *s)
{
	hwloc_bitmap_free(s->online);
	hwloc_bitmap_free(s->present);
	hwloc_bitmap_free(s->possible);
	hwloc_bitmap_free(s->pmu_core);
	hwloc_bitmap_free(s->pmu_atom);
}

/* Read a cpu-list file; 0 ok, 1 absent (when optional), -1 error. */
static int read_cpulist(const struct cc_root *root, const char *path, hwloc_bitmap_t out,
			bool optional, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 0, &e);

	if (!s) {
		if (optional && e.code == ENOENT)
			return 1;
		*err = e;
		return -1;
	}
	return cc_cpulist_parse(s, out, path, err);
}

/* A captured tree must look like sysfs and hold every online CPU's
 * topology: hwloc itself quietly builds a smaller machine from a truncated
 * dump, so the checks are made here, naming the first missing piece. */
int topo_read_cpu_state(const struct cc_root *root, struct topo_cpu_state *s, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t sib = hwloc_bitmap_alloc();
	char path[256];
	int cpu, r, first;
	bool caches;

	if (!sib)
		return cc_err_sys(err, ENOMEM, "topology");
	if (!cc_root_exists(root, cpu_dir))
		return cc_err_set(err, ENOENT, "%s is not a sysfs tree: %s is missing", root->path, cpu_dir);
	if (read_cpulist(root, "/sys/devices/system/cpu/online", s->online, false, err) < 0)
		return cc_err_prefix(err, "%s: truncated sysfs tree", root->path);
	if (hwloc_bitmap_iszero(s->online))
		return cc_err_set(err, EINVAL, "%s: /sys/devices/system/cpu/online lists no CPU", root->path);
	r = read_cpulist(root, "/sys/devices/system/cpu/present", s->present, true, err);
	if (r < 0)
		return -1;
	if (r > 0)
		hwloc_bitmap_copy(s->present, s->online);
	r = read_cpulist(root, "/sys/devices/system/cpu/possible", s->possible, true, err);
	if (r < 0)
		return -1;
	if (r > 0)
		hwloc_bitmap_copy(s->possible, s->present);
	if (!hwloc_bitmap_isincluded(s->online, s->present) || !hwloc_bitmap_isincluded(s->present, s->possible))
		return cc_err_set(err, EINVAL, "%s: inconsistent sysfs tree: online CPUs are not all present and possible",
				  root->path);
	/* Cache directories are optional (some VMs and boards have none),
	 * but all online CPUs have them or none does. */
	first = hwloc_bitmap_first(s->online);
	if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/cache", first) < 0)
		return -1;
	caches = cc_root_exists(root, path);
	hwloc_bitmap_foreach_begin(cpu, s->online)
	{
		static const char *const ids[] = { "core_id", "physical_package_id" };
		long v;

		if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) < 0)
			return -1;
		if (read_cpulist(root, path, sib, false, err) < 0)
			return cc_err_prefix(err, "%s: truncated sysfs tree (CPU %d is online)", root->path, cpu);
		if (!hwloc_bitmap_isset(sib, (unsigned)cpu))
			return cc_err_set(err, EINVAL, "%s: %s does not list CPU %d itself", root->path, path, cpu);
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, ids[k]) < 0)
				return -1;
			if (cc_root_read_long(root, path, &v, err) < 0)
				return cc_err_prefix(err, "%s: truncated sysfs tree (CPU %d is online)", root->path, cpu);
		}
		if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/cache", cpu) < 0)
			return -1;
		if (cc_root_exists(root, path) != caches)
			return cc_err_set(err, ENOENT,
					  "%s: truncated sysfs tree: /sys/devices/system/cpu/cpu%d/cache is missing (CPU %d has one)",
					  root->path, caches ? cpu : first, caches ? first : cpu);
	}
	hwloc_bitmap_foreach_end();

	/* Intel hybrid: the kernel registers one PMU per core type.  hwloc
	 * 2.9's Linux backend does not read these (2.10 does). */
	if (cc_root_exists(root, "/sys/devices/cpu_core/cpus") && cc_root_exists(root, "/sys/devices/cpu_atom/cpus")) {
		s->pmu_core = hwloc_bitmap_alloc();
		s->pmu_atom = hwloc_bitmap_alloc();
		if (!s->pmu_core || !s->pmu_atom)
			return cc_err_sys(err, ENOMEM, "topology");
		if (read_cpulist(root, "/sys/devices/cpu_core/cpus", s->pmu_core, false, err) < 0 ||
		    read_cpulist(root, "/sys/devices/cpu_atom/cpus", s->pmu_atom, false, err) < 0)
			return cc_err_prefix(err, "%s", root->path);
	}
	return 0;
}
