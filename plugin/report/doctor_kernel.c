/* corecarve doctor: what the kernel exposes (cgroup v2, cpuset partitions,
 * SMT, PMU lists, topology, cpufreq, THP, NUMA balancing, the command line).
 * Everything is read through the root; nothing is written. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "doctor.h"

/* Is `word` one of the `sep`-separated words of `list`? */
static bool has_word_sep(const char *list, const char *word, char sep)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == sep) && (p[n] == sep || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

static bool has_word(const char *list, const char *word)
{
	return has_word_sep(list, word, ' ');
}

/* A captured tree that does not hold `path` at all: what lies below it is
 * unknown there, not absent. */
static bool tree_lacks(const struct cc_doctor_ctx *ctx, const char *path, struct cc_doctor_item *it, const char *why)
{
	if (!cc_doctor_captured(ctx) || cc_root_exists(ctx->root, path))
		return false;
	cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "the captured tree has no %s", path);
	return true;
}

/* ---- the cgroup hierarchies ---------------------------------------------- */

/* The n-th space-separated field of a mountinfo line into buf. */
static bool field(const char *line, int n, char *buf, size_t len)
{
	const char *p = line;

	for (int i = 0; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(p, " \n"), p);
	return true;
}

void cc_doctor_parse_mountinfo(const char *text, struct cc_cgroup_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->known = true;
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		/* id parent maj:min root mountpoint options [optional...] - fstype source superoptions */
		const char *sep = strstr(line, " - ");
		const char *eol = strchr(line, '\n');
		char mnt[256], fstype[32], super[512];

		if (!sep || (eol && sep > eol) || !field(line, 4, mnt, sizeof(mnt)) ||
		    !field(sep + 3, 0, fstype, sizeof(fstype)) || !field(sep + 3, 2, super, sizeof(super)))
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			if (!out->v2_mount[0] || !strcmp(mnt, "/sys/fs/cgroup"))
				snprintf(out->v2_mount, sizeof(out->v2_mount), "%s", mnt);
			out->unified |= !strcmp(mnt, "/sys/fs/cgroup");
		} else if (!strcmp(fstype, "cgroup")) {
			out->nv1++;
			/* superoptions: rw,cpu,cpuacct / rw,cpuset / rw,name=systemd */
			if (has_word_sep(super, "cpuset", ',') && !out->v1_cpuset[0])
				snprintf(out->v1_cpuset, sizeof(out->v1_cpuset), "%s", mnt);
			if (has_word_sep(super, "cpu", ',') && !out->v1_cpu[0])
				snprintf(out->v1_cpu, sizeof(out->v1_cpu), "%s", mnt);
		}
	}
}

void cc_doctor_cgroup_layout(const struct cc_root *root, struct cc_cgroup_layout *out)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = cc_root_read(root, "/proc/self/mountinfo", 1u << 20, &err);

	if (!text) {
		memset(out, 0, sizeof(*out));
		return;
	}
	cc_doctor_parse_mountinfo(text, out);
}

/* A controller list of cgroup2's root, "none" when empty. */
static void v2_controllers(const struct cc_root *root, const char *mnt, char *buf, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	char path[PATH_MAX];
	_cleanup_free_ char *ctl = NULL;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
	ctl = cc_root_read(root, path, 0, &err);
	snprintf(buf, len, "%s", ctl && *ctl ? ctl : ctl ? "none" : "unreadable");
}

void cc_doctor_cgroup_explain(const struct cc_root *root, const struct cc_cgroup_layout *l, char *found,
			      size_t flen, char *fix, size_t xlen)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *cmdline = cc_root_read(root, "/proc/cmdline", 0, &err);
	char v1[600] = "", ctl[256];
	const char *legacy = NULL;

	/* systemd picks the layout at boot; these parameters pin the old ones. */
	if (cmdline && (strstr(cmdline, "systemd.unified_cgroup_hierarchy=0") ||
			strstr(cmdline, "systemd.unified_cgroup_hierarchy=false") ||
			strstr(cmdline, "systemd.unified_cgroup_hierarchy=no")))
		legacy = "systemd.unified_cgroup_hierarchy=0";
	else if (cmdline && strstr(cmdline, "systemd.legacy_systemd_cgroup_controller"))
		legacy = "systemd.legacy_systemd_cgroup_controller";
	if (l->v1_cpuset[0] && l->v1_cpu[0])
		snprintf(v1, sizeof(v1), "cpuset and cpu are on cgroup v1 (%s, %s)", l->v1_cpuset, l->v1_cpu);
	else if (l->v1_cpuset[0] || l->v1_cpu[0])
		snprintf(v1, sizeof(v1), "%s is on cgroup v1 (%s)", l->v1_cpuset[0] ? "cpuset" : "cpu",
			 l->v1_cpuset[0] ? l->v1_cpuset : l->v1_cpu);
	if (l->v2_mount[0]) {
		v2_controllers(root, l->v2_mount, ctl, sizeof(ctl));
		snprintf(found, flen, "hybrid hierarchy: cgroup2 is mounted at %s with controllers \"%s\"%s%s", l->v2_mount,
			 ctl, v1[0] ? "; " : "", v1);
	} else {
		snprintf(found, flen, "legacy hierarchy: no cgroup2 mount%s%s", v1[0] ? "; " : "", v1);
	}
	snprintf(fix, xlen,
		 "%s%s%sboot with systemd.unified_cgroup_hierarchy=1 (Debian: add it to GRUB_CMDLINE_LINUX in "
		 "/etc/default/grub, run update-grub, reboot). Do not mount cgroup2 over /sys/fs/cgroup on a running "
		 "host: it hides systemd's hierarchy, and cpuset stays bound to v1 while a v1 hierarchy holds it",
		 legacy ? "remove " : "", legacy ? legacy : "", legacy ? " from the kernel command line and " : "");
}

void cc_doctor_check_cgroup(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *ctl = cc_root_read(ctx->root, "/sys/fs/cgroup/cgroup.controllers", 0, &err);
	_cleanup_free_ char *sub = NULL;
	struct cc_cgroup_layout l;
	char found[CC_DOCTOR_TEXT_MAX], fix[CC_DOCTOR_TEXT_MAX];
	const char *why = "carves are cgroup-v2 cpuset partitions; the cpu controller is where CFS quota is dropped";

	cc_doctor_cgroup_layout(ctx->root, &l);
	if (!ctl) {
		if (cc_doctor_captured(ctx) && !l.known && !cc_root_exists(ctx->root, "/sys/fs/cgroup")) {
			cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL,
				      "the captured tree has no /sys/fs/cgroup and no /proc/self/mountinfo");
			return;
		}
		cc_doctor_cgroup_explain(ctx->root, &l, found, sizeof(found), fix, sizeof(fix));
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, fix, "%s", l.known ? found : "no cgroup v2 at /sys/fs/cgroup");
		return;
	}
	if (!has_word(ctl, "cpuset") || !has_word(ctl, "cpu")) {
		/* A v1 hierarchy that still holds a controller keeps it from v2. */
		snprintf(fix, sizeof(fix), "%s%s%s",
			 l.v1_cpuset[0] || l.v1_cpu[0] ? "unmount the cgroup v1 hierarchy holding it (" : "",
			 l.v1_cpuset[0] ? l.v1_cpuset : l.v1_cpu,
			 l.v1_cpuset[0] || l.v1_cpu[0] ? "), or reboot without it"
						      : "free the controllers from cgroup v1 (remove cgroup_no_v1 "
							"exceptions and v1 cpuset mounts)");
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, fix, "cgroup v2 controllers \"%s\": %s%s%s missing", ctl,
			      has_word(ctl, "cpuset") ? "" : "cpuset",
			      !has_word(ctl, "cpuset") && !has_word(ctl, "cpu") ? " and " : "",
			      has_word(ctl, "cpu") ? "" : "cpu");
		return;
	}
	sub = cc_root_read(ctx->root, "/sys/fs/cgroup/cgroup.subtree_control", 0, &err);
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
		      "cgroup v2 with cpuset and cpu; root subtree_control \"%s\"%s", sub ? sub : "?",
		      sub && has_word(sub, "cpuset") ? "" : " (corecarve enables +cpuset on the parents it uses)");
}

/* The kernel's release, "" when unknown. */
static void release(const struct cc_root *root, char *buf, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *r = cc_root_read(root, "/proc/sys/kernel/osrelease", 128, &err);

	snprintf(buf, len, "%s", r ? r : "");
}

/* Partition support is a property of non-root cgroups (the root has no
 * cpuset.cpus.partition or .exclusive), so look at the first-level children
 * that already have cpuset files: systemd's slices on a host. */
void cc_doctor_check_partition(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *ctl = cc_root_read(ctx->root, "/sys/fs/cgroup/cgroup.controllers", 0, &err);
	_cleanup_free_ char *sub = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	const char *why = "exclusivity: the kernel takes partition CPUs from every other cgroup only in a valid "
			  "partition; remote partitions (cpuset.cpus.exclusive, Linux >= 6.7) can sit deep in a "
			  "hierarchy such as kubepods/pod/ctr, local ones only below a partition root";
	bool remote = false, local = false, cpuset_child = false;
	char probe[512] = "", rel[128], squeezer[256] = "";
	struct cc_err perr = CC_ERR_INIT;
	const char *kubelet;
	struct dirent *de;

	/* Nothing to probe without cgroup v2's cpuset: the cgroup line says
	 * why; guessing here would only repeat it with a wrong fix. */
	if (!ctl || !has_word(ctl, "cpuset")) {
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL,
			      "needs cgroup v2 with the cpuset controller at /sys/fs/cgroup (see the cgroup line)");
		return;
	}
	d = cc_root_opendir(ctx->root, "/sys/fs/cgroup", &err);
	while (d && (de = readdir(d)) && !remote) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cpuset.cpus", de->d_name);
		cpuset_child |= cc_root_exists(ctx->root, path);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cpuset.cpus.exclusive", de->d_name);
		if (cc_root_exists(ctx->root, path)) {
			remote = true;
			snprintf(probe, sizeof(probe), "%s", de->d_name);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cpuset.cpus.partition", de->d_name);
		if (!local && cc_root_exists(ctx->root, path)) {
			local = true;
			snprintf(probe, sizeof(probe), "%s", de->d_name);
		}
		/* A partition root that is not the kubelet's own (a parent
		 * init-parent made, /corecarve.slice). */
		if (!squeezer[0] && strncmp(de->d_name, "kubepods", 8)) {
			_cleanup_free_ char *part = cc_root_read(ctx->root, path, 64, &perr);

			if (part && !strncmp(part, "root", 4) && !strstr(part, "invalid"))
				snprintf(squeezer, sizeof(squeezer), "%s", de->d_name);
			cc_err_clear(&perr);
		}
	}
	release(ctx->root, rel, sizeof(rel));
	kubelet = cc_kubelet_evidence(ctx->root);
	if (remote) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
			      "remote: cpuset.cpus.exclusive present (seen on /%s): carves are partitions wherever the "
			      "container's cgroup is", probe);
	} else if (kubelet && squeezer[0]) {
		/* A partition root beside the kubelet's pods takes its CPUs
		 * from them: every ordinary pod runs on what it leaves. */
		char fix[512];

		snprintf(fix, sizeof(fix),
			 "write member to /sys/fs/cgroup/%s/cpuset.cpus.partition and disable the partition parent "
			 "(corecarve-prepare skips it on a kubelet node); on Kubernetes before Linux 6.7 carves are "
			 "cpuset-only", squeezer);
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, fix,
			      "a kubelet node (%s) with /%s a partition root: the kubelet's pods outside it run only on "
			      "the CPUs it leaves (the reserved ones)", kubelet, squeezer);
	} else if (kubelet) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "keep the DaemonSet's AUTOFIX (or corecarve-audit.timer) repairing SOFT_EXCLUSIVITY_LEAK and "
			      "SPLIT_CORE, or move to Linux >= 6.7 for carves the kernel enforces",
			      "%s on a kubelet node (%s): carves below the kubelet's pod cgroups are cpuset-only (a local "
			      "partition needs its parent, the pod's cgroup, to be a partition root, and the kubelet makes "
			      "those); a pod started after a carve runs on its CPUs until the audit takes them back",
			      local ? "local partitions only" : "no partitions", kubelet);
	} else if (local) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "run `corecarve init-parent CGROUP` for the containers' parent (e.g. /corecarve.slice with "
			      "podman --cgroup-parent) so carves below it are local partitions (corecarve-prepare.service "
			      "does it at boot), or move to Linux >= 6.7",
			      "local: cpuset.cpus.partition but no cpuset.cpus.exclusive (seen on /%s): a carve is a "
			      "partition only when its parent is a partition root; elsewhere it is cpuset-only", probe);
	} else if (!cpuset_child) {
		/* The files appear only on cgroups with the cpuset controller. */
		sub = cc_root_read(ctx->root, "/sys/fs/cgroup/cgroup.subtree_control", 0, &err);
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why,
			      "echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control (corecarve-prepare.service and the "
			      "first carve do it), then run doctor again",
			      "no child cgroup has the cpuset controller yet (root subtree_control \"%s\"), so the "
			      "kernel's partition files cannot be seen", sub ? sub : "?");
	} else {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "use a kernel with cpuset partitions (Linux 5.11 or later)",
			      "none: child cgroups have cpuset.cpus but no cpuset.cpus.partition%s%s%s: carves are "
			      "cpuset-only (peers are narrowed, the kernel does not enforce exclusivity)",
			      rel[0] ? " (kernel " : "", rel, rel[0] ? ")" : "");
	}
}

void cc_doctor_check_smt(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *control = cc_root_read(ctx->root, "/sys/devices/system/cpu/smt/control", 0, &err);
	long active = -1;
	int threads = 0;
	const char *why = "with SMT on, a carve takes whole cores and parks or shares the siblings (class `smt`); "
			  "a sibling left to another tenant shares the core's caches and ports";

	if (tree_lacks(ctx, "/sys/devices/system/cpu", it, why))
		return;
	cc_root_read_long(ctx->root, "/sys/devices/system/cpu/smt/active", &active, &err);
	for (int i = 0; ctx->topo && i < ctx->topo->ncores; i++)
		if (ctx->topo->cores[i].npus > threads)
			threads = ctx->topo->cores[i].npus;
	if (!control)
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
			      "no SMT control in sysfs (kernel without HOTPLUG_SMT, or not x86); up to %d thread%s per core",
			      threads, threads == 1 ? "" : "s");
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "SMT %s (control=%s), up to %d thread%s per core",
			      active == 1 ? "on" : active == 0 ? "off" : "?", control, threads, threads == 1 ? "" : "s");
}

/* Hybrid parts expose one PMU per core kind, each with its CPU list
 * (/sys/devices/cpu_core/cpus and cpu_atom/cpus on Intel, one armv8_* PMU
 * per core type on Arm); that is how corecarve tells P from E cores. */
void cc_doctor_check_hybrid(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(ctx->root, "/sys/devices", &err);
	const char *why = "core classes come from the hybrid PMU lists first; without them corecarve falls back "
			  "to hwloc's cpukinds, then frequency and capacity";
	char found[CC_DOCTOR_TEXT_MAX] = "";
	size_t used = 0;
	int nlists = 0;
	struct dirent *de;

	if (tree_lacks(ctx, "/sys/devices", it, why))
		return;
	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		_cleanup_free_ char *cpus = NULL;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/devices/%s/cpus", de->d_name);
		if (!cc_root_exists(ctx->root, path) || !(cpus = cc_root_read(ctx->root, path, 4096, &err)))
			continue;
		nlists++;
		if (used < sizeof(found))
			used += (size_t)snprintf(found + used, sizeof(found) - used, "%s%s %s", used ? ", " : "",
						 de->d_name, cpus);
	}
	if (nlists < 2) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "not hybrid: %s", nlists ? found : "no per-kind PMU CPU lists");
		return;
	}
	if (ctx->topo && ctx->topo->nclasses < 2)
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "check `corecarve topology`; name the classes in the policy's coreClasses",
			      "PMU lists %s, but the topology has %d core class", found, ctx->topo->nclasses);
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "hybrid PMU lists: %s", found);
}

/* hwloc's view against the kernel's online mask: a mismatch means a stale
 * topology cache, an old hwloc, or CPUs hot-plugged since. */
void cc_doctor_check_topology(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *online = NULL, *hw = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t sys = hwloc_bitmap_alloc();
	const struct cc_topo *t = ctx->topo;
	const char *why = "every decision is made on this topology; it must match the CPUs the kernel has online";

	if (!t) {
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, "see `corecarve topology` for the full error",
			      "topology did not load: %s", ctx->topo_error ? ctx->topo_error : "unknown error");
		return;
	}
	hw = cc_cpulist_format(t->online);
	online = cc_root_read(ctx->root, "/sys/devices/system/cpu/online", 0, &err);
	if (!online || !sys || cc_cpulist_parse(online, sys, "/sys/devices/system/cpu/online", &err) < 0) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, NULL, "hwloc: online %s; sysfs: %s", hw ? hw : "?", err.msg);
		return;
	}
	if (!hwloc_bitmap_isequal(sys, t->online)) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "refresh the topology cache (it is keyed on the online mask) or upgrade hwloc",
			      "hwloc sees online %s, sysfs says %s", hw ? hw : "?", online);
		return;
	}
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
		      "%d package%s, %d NUMA node%s, %d core%s, %d CPU%s online (%s), %d core class%s from %s",
		      t->npackages, t->npackages == 1 ? "" : "s", t->nnuma, t->nnuma == 1 ? "" : "s", t->ncores,
		      t->ncores == 1 ? "" : "s", hwloc_bitmap_weight(t->online), hwloc_bitmap_weight(t->online) == 1 ? "" : "s",
		      online, t->nclasses, t->nclasses == 1 ? "" : "es", t->class_source);
}

#define MAX_GOVERNORS 8

void cc_doctor_check_governor(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(ctx->root, "/sys/devices/system/cpu", &err);
	_cleanup_free_ char *driver = NULL;
	char names[MAX_GOVERNORS][32];
	int counts[MAX_GOVERNORS] = { 0 }, ngov = 0, other = 0;
	bool all_perf = true;
	char found[CC_DOCTOR_TEXT_MAX] = "";
	size_t used = 0;
	struct dirent *de;
	const char *why = "an on-demand governor makes throughput swing with load (8 000-12 000 QPS seen, "
			  "9 500-10 200 once pinned to performance); latency classes want a fixed frequency";

	if (tree_lacks(ctx, "/sys/devices/system/cpu", it, why))
		return;
	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		_cleanup_free_ char *gov = NULL;
		int i;

		if (strncmp(de->d_name, "cpu", 3) || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/cpufreq/scaling_governor", de->d_name);
		if (!cc_root_exists(ctx->root, path) || !(gov = cc_root_read(ctx->root, path, 64, &err)))
			continue;
		if (!driver) {
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/cpufreq/scaling_driver", de->d_name);
			driver = cc_root_read(ctx->root, path, 64, &err);
		}
		all_perf &= !strcmp(gov, "performance");
		for (i = 0; i < ngov && strcmp(names[i], gov); i++)
			;
		if (i == ngov && ngov < MAX_GOVERNORS)
			snprintf(names[ngov++], sizeof(names[0]), "%s", gov);
		if (i < ngov)
			counts[i]++;
		else
			other++;
	}
	if (!ngov) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
			      "cpufreq not exposed (a VM, or no driver): frequency is the platform's; class power "
			      "settings would be skipped");
		return;
	}
	for (int i = 0; i < ngov; i++)
		used += (size_t)snprintf(found + used, used < sizeof(found) ? sizeof(found) - used : 0, "%s%s on %d CPU%s",
					 i ? ", " : "", names[i], counts[i], counts[i] == 1 ? "" : "s");
	if (all_perf && !other) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "%s (driver %s)", found, driver ? driver : "?");
		return;
	}
	cc_doctor_set(it, CC_DOCTOR_WARN, why,
		      driver && !strcmp(driver, "intel_pstate")
			      ? "cpupower frequency-set -g performance (intel_pstate: or an energy_performance_preference "
				"of performance on the carved CPUs)"
			      : "cpupower frequency-set -g performance, at least on the CPUs latency classes use",
		      "%s%s (driver %s)", found, other ? ", and more" : "", driver ? driver : "?");
}

void cc_doctor_check_thp(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text =
		cc_root_read(ctx->root, "/sys/kernel/mm/transparent_hugepage/enabled", 0, &err);
	_cleanup_free_ char *mode = text ? cc_doctor_thp_mode(text) : NULL;
	const char *why = "THP `always` lets khugepaged collapse pages behind every process, which shows up as "
			  "periodic latency spikes; `madvise` keeps huge pages for those who ask";
	const char *fix = "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (boot: transparent_hugepage=madvise)";

	if (!text && cc_doctor_captured(ctx))
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "not in the captured tree");
	else if (!text)
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "THP not built in (%s)", err.msg);
	else if (!mode)
		cc_doctor_set(it, CC_DOCTOR_WARN, why, fix, "THP mode unreadable: \"%s\"", text);
	else if (!strcmp(mode, "always"))
		cc_doctor_set(it, CC_DOCTOR_WARN, why, fix, "THP always");
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "THP %s", mode);
}

void cc_doctor_check_numa_balancing(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	long v = 0;
	int nnuma = ctx->topo ? ctx->topo->nnuma : 0;
	const char *why = "automatic NUMA balancing unmaps pages to sample accesses and migrates them: page "
			  "faults on carved CPUs, and memory moved off the node cpuset.mems chose";

	if (cc_root_read_long(ctx->root, "/proc/sys/kernel/numa_balancing", &v, &err) < 0 && cc_doctor_captured(ctx))
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "kernel.numa_balancing is not in the captured tree");
	else if (err.code)
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "kernel.numa_balancing absent (no NUMA balancing built in)");
	else if (!v)
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "kernel.numa_balancing = 0");
	else if (nnuma == 1)
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "kernel.numa_balancing = %ld, one NUMA node: nothing to migrate", v);
	else
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "sysctl -w kernel.numa_balancing=0 (and in /etc/sysctl.d/)",
			      "kernel.numa_balancing = %ld with %d NUMA nodes", v, nnuma);
}

/* isolcpus and nohz_full against the policy's reserved set (the host's
 * housekeeping CPUs). */
void cc_doctor_check_cmdline(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *cmdline = cc_root_read(ctx->root, "/proc/cmdline", 0, &err);
	_cleanup_free_ char *flags = NULL, *iso_s = NULL, *nohz_s = NULL, *res_s = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t iso = hwloc_bitmap_alloc(), nohz = hwloc_bitmap_alloc();
	const char *why = "isolcpus (domain) takes CPUs out of load balancing: threads of a multi-CPU carve there "
			  "are not spread; housekeeping (the reserved set) must not sit on isolated or nohz_full "
			  "CPUs. corecarve's isolated partitions do the same job at run time";
	int has_iso, has_nohz;

	if (!cmdline) {
		cc_doctor_set(it, cc_doctor_captured(ctx) ? CC_DOCTOR_UNKNOWN : CC_DOCTOR_WARN, why, NULL,
			      "cannot read /proc/cmdline (%s)", err.msg);
		return;
	}
	if ((has_iso = cc_doctor_cmdline_cpus(cmdline, "isolcpus", iso, &flags, &err)) < 0 ||
	    (has_nohz = cc_doctor_cmdline_cpus(cmdline, "nohz_full", nohz, NULL, &err)) < 0) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "fix the kernel command line", "/proc/cmdline: %s", err.msg);
		return;
	}
	if (!has_iso && !has_nohz) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "no isolcpus or nohz_full on the command line");
		return;
	}
	iso_s = cc_cpulist_format(iso);
	nohz_s = cc_cpulist_format(nohz);
	res_s = ctx->reserved ? cc_cpulist_format(ctx->reserved) : NULL;
	if (ctx->reserved && (hwloc_bitmap_intersects(iso, ctx->reserved) || hwloc_bitmap_intersects(nohz, ctx->reserved))) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "make the policy's reserved set the housekeeping CPUs: disjoint from isolcpus and nohz_full",
			      "isolcpus=%s%s%s nohz_full=%s overlap the reserved set %s", flags ? flags : "",
			      flags ? "," : "", has_iso ? iso_s : "-", has_nohz ? nohz_s : "-", res_s ? res_s : "?");
		return;
	}
	/* Without flags, or with `domain`, isolcpus removes scheduler domains. */
	if (has_iso && (!flags || strstr(flags, "domain"))) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "prefer isolcpus=managed_irq,<cpus> (or none) and let corecarve's isolated partitions "
			      "remove carves from load balancing",
			      "isolcpus=%s%s%s (scheduler domains removed), nohz_full=%s, reserved %s", flags ? flags : "",
			      flags ? "," : "", iso_s, has_nohz ? nohz_s : "-", res_s ? res_s : "unknown");
		return;
	}
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "isolcpus=%s%s%s nohz_full=%s, disjoint from reserved %s",
		      flags ? flags : "", flags ? "," : "", has_iso ? iso_s : "-", has_nohz ? nohz_s : "-",
		      res_s ? res_s : "unknown");
}

/* The knobs that pin a CPU's power behaviour: idle states (each with its
 * exit latency), the uncore frequency of each package die, and intel_pstate's
 * energy-performance preference.  Absent under VMs and TCG; reported, never
 * a warning, because pinning them is optional. */
void cc_doctor_check_power(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *driver = cc_root_read(ctx->root, "/sys/devices/system/cpu/cpuidle/current_driver", 64, &err);
	_cleanup_free_ char *epp =
		cc_root_read(ctx->root, "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", 64, &err);
	_cleanup_closedir_ DIR *d = cc_root_opendir(ctx->root, "/sys/devices/system/cpu/intel_uncore_frequency", &err);
	char states[CC_DOCTOR_TEXT_MAX / 2] = "";
	size_t used = 0;
	int nstates = 0, ndies = 0;
	struct dirent *de;
	const char *why = "a deep idle state costs its exit latency on each wakeup of an idle carved CPU; a "
			  "floating uncore frequency swings memory-bound services (~18 % seen when fixed); these "
			  "are the files that pin them";

	if (tree_lacks(ctx, "/sys/devices/system/cpu", it, why))
		return;
	for (int i = 0; i < 16; i++) {
		char path[PATH_MAX];
		_cleanup_free_ char *name = NULL;
		long lat = -1;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cpuidle/state%d/name", i);
		if (!(name = cc_root_read(ctx->root, path, 64, &err)))
			break;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cpuidle/state%d/latency", i);
		cc_root_read_long(ctx->root, path, &lat, &err);
		nstates++;
		if (used < sizeof(states))
			used += (size_t)snprintf(states + used, sizeof(states) - used, "%s%s %ldus", used ? ", " : "", name,
						 lat);
	}
	while (d && (de = readdir(d)))
		ndies += de->d_name[0] != '.' && strcmp(de->d_name, "uncore");
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "idle states (driver %s): %s; uncore frequency: %d die%s%s; EPP: %s",
		      driver ? driver : "none", nstates ? states : "none exposed", ndies, ndies == 1 ? "" : "s",
		      ndies ? "" : " (not exposed)", epp ? epp : "not exposed");
}
