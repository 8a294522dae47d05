/* corecarve: the discovered host model, cached.
 *
 * Discovery (cc_topo_load) asks hwloc to read the machine: hundreds of
 * sysfs files, 10 to 30 ms on the hosts of ../shared/fixtures and far
 * more on large synthetic ones, while the allocator needs well under a
 * millisecond.  Every hook invocation needs the same model until the
 * machine changes, so the hook keeps it in its state directory
 * (/run/corecarve/topology.cache: tmpfs, gone with a reboot), keyed by a
 * stamp of everything the model is made from:
 *
 *   - the program that wrote it (GNU build id of the running executable)
 *     and the hwloc library version: another build never trusts a model
 *     this one did not write;
 *   - the source: the root path and, on a live kernel, the boot id
 *     (/proc/sys/kernel/random/boot_id) — a captured tree without one is
 *     keyed by the identity (device, inode, ctime) of its
 *     /sys/devices/system/cpu; an XML file by its identity; a synthetic
 *     description by its text;
 *   - what hotplug and late drivers change without a reboot: the online,
 *     present and possible CPUs, the online NUMA nodes, the cpufreq policy
 *     directories (a cpufreq driver loaded late rescales cpu_capacity and
 *     adds frequencies), the hybrid PMU CPU lists;
 *   - the policy's coreClasses overrides.
 *
 * A stamp costs a few small reads; a model whose stamp differs in any byte
 * is discovered again and replaces the file.  The caller's own view
 * (caller_view: its cgroup and affinity) is never cached.
 */
#ifndef CC_TOPO_CACHE_H
#define CC_TOPO_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "topo.h"

#define CC_TOPO_CACHE_FILE "topology.cache"
/* A cache file larger than this is not read (a 8192-CPU model is ~1 MiB). */
#define CC_TOPO_CACHE_MAX (8u << 20)

/* What happened, for --verbose and the benchmarks. */
struct cc_topo_cache_info {
	bool hit;      /* the model came from the cache */
	bool stored;   /* a fresh model was written to the cache */
	char why[256]; /* on a miss: why ("stale: online", "absent", "not cacheable: ...") */
};

/* Load the model `src` describes through the cache in state directory
 * `dir` (NULL: CC_LEDGER_DIR).  Never fails because of the cache: a cache
 * that is absent, stale, corrupt, unreadable or unwritable only means a
 * discovery (cc_topo_load, whose errors are returned as they are) and, when
 * possible, a new cache file.  `info` may be NULL. */
struct cc_topo *cc_topo_cache_load(const struct cc_topo_source *src, const char *dir,
				   struct cc_topo_cache_info *info, struct cc_err *err);

/* The stamp of a source (one line, see above); NULL with err when the
 * source cannot be cached (caller view, no build id, a live kernel without
 * a boot id).  Caller frees. */
char *cc_topo_stamp(const struct cc_topo_source *src, struct cc_err *err);

/* The model as text (topo_serial.c): a versioned line format with a
 * checksum, carrying `stamp`.  Caller frees. */
char *cc_topo_serialize(const struct cc_topo *t, const char *stamp, struct cc_err *err);

/* Parse cc_topo_serialize() output.  Strict: every count, index and CPU
 * list is checked, and the checksum.  When `stamp` is not NULL a different
 * stamp is refused with code ESTALE.  Errors read
 * "topology cache: line N: <field>: <reason>". */
struct cc_topo *cc_topo_deserialize(const char *text, size_t len, const char *stamp,
				    struct cc_err *err);

#endif
