/* corecarve capture: write the tree `--root DIR` reads (like
 * hwloc-gather-topology): what topology, plan, status, doctor, irq status
 * and audit read of a node, copied from it, so a bug report carries the
 * node and the fixtures of the future are made by one command.
 *
 * What is copied (each through the root, so a tree can be captured again):
 *   sysfs    /sys/devices/system/cpu and /node whole (files, directories
 *            and links as links: the trees are full of relative links and
 *            some loop), /sys/bus/{cpu,node}/devices, every PMU's
 *            /sys/devices/<pmu>/cpus, THP's mode;
 *   cgroupfs every cgroup below /sys/fs/cgroup (up to CC_CAPTURE_MAX_CGROUPS)
 *            with the files corecarve reads: cgroup.controllers,
 *            .subtree_control, .events, .procs, .threads, .type, cpuset.*,
 *            cpu.max;
 *   procfs   cpuinfo, meminfo, mounts, self/mountinfo, self/cgroup, cmdline,
 *            interrupts, stat, kernel.osrelease and numa_balancing, /proc/irq,
 *            each process's comm and status and each thread's status;
 *   config   the policy, vms.yaml, irqbalance's environment file, the
 *            hooks.d files (and an empty file where they name the binary,
 *            so doctor can see it), kubelet's CPU manager state, dpkg's
 *            irqbalance stanza;
 *   state    the ledger, as <DIR>/run/corecarve/ledger.json (the state
 *            directory a --root tree is read with);
 *   and CC_CAPTURE_MANIFEST: how, when and by what it was made.
 * Unreadable files (write-only attributes, EIO) are skipped and counted.
 */
#ifndef CC_CAPTURE_H
#define CC_CAPTURE_H

#include "error.h"
#include "root.h"

#define CC_CAPTURE_MANIFEST "corecarve-capture.txt"
#define CC_CAPTURE_MAX_CGROUPS 20000
#define CC_CAPTURE_FILE_MAX (4u << 20) /* one file; /proc/interrupts on 4096 CPUs fits */

struct cc_capture_opts {
	const char *policy_path; /* the policy file (NULL: /etc/corecarve/policy.yaml) */
	const char *state_dir;   /* the ledger's directory (NULL: /run/corecarve) */
	const char *version;     /* corecarve's, for the manifest */
};

struct cc_capture_stats {
	int files, links, dirs, skipped, cgroups;
	long long bytes;
};

/* Copy what `src` shows into `dest`, which must be absent (made 0700) or
 * an empty directory the caller owns that its group and others cannot
 * write, and not a link.  Every entry is opened beneath dest's descriptor
 * without following a link, files are created O_EXCL.  -1 with err for
 * what stops the capture (dest unsafe or not empty, a link in it, a write
 * failing); a source file that cannot be read only counts as skipped. */
int cc_capture(const struct cc_root *src, const char *dest, const struct cc_capture_opts *o,
	       struct cc_capture_stats *st, struct cc_err *err);

#endif
