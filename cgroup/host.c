/* corecarve: the host's cgroup writes (cc_cg_host_ops, cgroup.h).
 *
 * Every write, mkdir and rmdir goes beneath the mount's directory fd
 * (io.c), controller and core files alike; a slice's cpuset.cpus and
 * cpu.max are told to systemd as well (below). */
#define _GNU_SOURCE
#include "cgroup_int.h"

#include <stdio.h>
#include <string.h>

#include "systemctl.h"

/* The properties that make systemd write a value to a slice's file itself. */
struct slice_props {
	char cpus[CC_SYSTEMD_CPUS_MAX + 16], quota[64], period[64];
	const char *list[3];
};

/* cpuset.cpus "LIST" is AllowedCPUs=LIST; cpu.max "max P" is CPUQuota=
 * (none) and "Q P" CPUQuota=Q/P as a percentage (the kubelet's quotas are
 * whole milli-CPUs: one decimal), both with CPUQuotaPeriodSec=P.  False
 * for a value no property gives exactly (nothing is told). */
static bool properties_of(const char *file, const char *value, struct slice_props *sp)
{
	unsigned long long q, p;
	int n;

	memset(sp->list, 0, sizeof(sp->list));
	if (!strcmp(file, "cpuset.cpus")) {
		snprintf(sp->cpus, sizeof(sp->cpus), "AllowedCPUs=%.*s", CC_SYSTEMD_CPUS_MAX, value);
		sp->list[0] = sp->cpus;
		return true;
	}
	if (strcmp(file, "cpu.max"))
		return false;
	if (sscanf(value, "max %llu%n", &p, &n) == 1 && !value[n])
		snprintf(sp->quota, sizeof(sp->quota), "CPUQuota=");
	else if (sscanf(value, "%llu %llu%n", &q, &p, &n) == 2 && !value[n] && p && (q * 10000) % p == 0)
		snprintf(sp->quota, sizeof(sp->quota), "CPUQuota=%llu.%02llu%%", q * 100 / p, (q * 10000 / p) % 100);
	else
		return false;
	snprintf(sp->period, sizeof(sp->period), "CPUQuotaPeriodSec=%lluus", p);
	sp->list[0] = sp->quota;
	sp->list[1] = sp->period;
	return true;
}

/* systemd writes a slice's cpuset.cpus and cpu.max back to its
 * AllowedCPUs= and CPUQuota= whenever it applies the unit again: a
 * property set through it (the kubelet's QoS update sets CPUWeight= on
 * kubepods-besteffort.slice and kubepods-burstable.slice at each pod's
 * admission and every minute), a daemon-reload.  Unset, cpuset.cpus is ""
 * (every CPU again: a cpuset-only carve's narrowing gone, 55-kubelet saw
 * it on Linux 6.1) and cpu.max the unit's quota.  So systemd is given
 * each value written to a slice's two files, and applying the unit again
 * writes the same (telling it one file while it holds an older value of
 * the other would make it write that one back).  Best effort: the file
 * holds the value now, and a slice systemd changed back is the audit's
 * RECORD_DRIFT, which --fix writes again. */
static void tell_systemd(struct cc_cg *cg, const char *cgroup, const char *file, const char *value)
{
	struct cc_err e = CC_ERR_INIT;
	const char *unit = cc_slice_unit(cgroup);
	struct slice_props sp;

	if (!unit || !properties_of(file, value, &sp))
		return;
	if (cg->trace)
		fprintf(cg->trace, "corecarve: systemctl set-property --runtime -- %s %s%s%s\n", unit, sp.list[0],
			sp.list[1] ? " " : "", sp.list[1] ? sp.list[1] : "");
	if (cc_systemd_set(unit, sp.list, &e) < 0)
		fprintf(cg->trace ? cg->trace : stderr, "corecarve: warning: %s (the audit reports the slice if systemd "
			"writes its own value back: RECORD_DRIFT)\n", e.msg);
}

static int host_write(struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
		      struct cc_err *err)
{
	if (cg_write_file(cg, cgroup, file, value, err) < 0)
		return -1;
	if (cg->systemd && strncmp(file, "cgroup.", 7))
		tell_systemd(cg, cgroup, file, value);
	return 0;
}

static int host_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	return cg_mkdir_beneath(cg, cgroup, err);
}

static int host_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	return cg_rmdir_beneath(cg, cgroup, err);
}

const struct cc_cg_ops cc_cg_host_ops = {
	.write = host_write,
	.mkdir = host_mkdir,
	.rmdir = host_rmdir,
};
