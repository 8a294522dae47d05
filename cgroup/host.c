/* corecarve: the host's cgroup writes (cc_cg_host_ops, cgroup.h).
 *
 * Controller files go through libcgroup: it names the controller, builds
 * the path from its own mount table and maps the kernel's refusal into
 * ECGOTHER + the last errno.  The cgroup core files ("cgroup.*": procs,
 * subtree_control, kill), which libcgroup has no controller for, are
 * written through the root like every other kernel file. */
#define _GNU_SOURCE
#include "cgroup.h"

#include <errno.h>
#include <libcgroup.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "systemctl.h"

static int lcg_write(struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
		     struct cc_err *err)
{
	struct cgroup *c = NULL;
	struct cgroup_controller *ctl;
	char controller[32];
	const char *dot = strchr(file, '.');
	int r;

	if (!dot || (size_t)(dot - file) >= sizeof(controller))
		return cc_err_set(err, EINVAL, "%s: not a controller file", file);
	memcpy(controller, file, (size_t)(dot - file));
	controller[dot - file] = '\0';
	if (!cg->libcgroup_ready) {
		r = cgroup_init();
		if (r)
			return cc_err_set(err, EIO, "libcgroup: cgroup_init: %s", cgroup_strerror(r));
		cg->libcgroup_ready = true;
	}
	c = cgroup_new_cgroup(cgroup);
	if (!c)
		return cc_err_sys(err, ENOMEM, "libcgroup: %s", cgroup);
	ctl = cgroup_add_controller(c, controller);
	if (!ctl) {
		cgroup_free(&c);
		return cc_err_set(err, EINVAL, "libcgroup: %s: cannot add controller %s", cgroup, controller);
	}
	/* An empty value must still reach the kernel as a write: libcgroup
	 * 2.0 writes nothing for "" and strips a lone "\n" (seen with strace),
	 * so send one space, which cpuset strips (strstrip) to the empty set. */
	r = cgroup_add_value_string(ctl, file, *value ? value : " ");
	if (!r)
		r = cgroup_modify_cgroup(c);
	cgroup_free(&c);
	if (r) {
		/* A cgroup removed under us is "gone" (cc_cg_gone), like the
		 * kernel's own ENOENT: libcgroup says ECGROUPNOTEXIST for the
		 * directory, ECGROUPVALUENOTEXIST for its file once the kernel
		 * removed it (a shared container deleted while a release widens
		 * it: 45-busy-node on 7.3 kept the carve as releasing). */
		int e = r == ECGOTHER ? cgroup_get_last_errno()
			: r == ECGROUPNOTEXIST || r == ECGROUPVALUENOTEXIST ? ENOENT : 0;

		if (e)
			return cc_err_sys(err, e, "write \"%s\" to %s/%s", value, cgroup, file);
		return cc_err_set(err, EIO, "write \"%s\" to %s/%s: %s", value, cgroup, file, cgroup_strerror(r));
	}
	return 0;
}

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
	char path[PATH_MAX];

	if (strncmp(file, "cgroup.", 7) != 0) {
		if (lcg_write(cg, cgroup, file, value, err) < 0)
			return -1;
		if (cg->systemd)
			tell_systemd(cg, cgroup, file, value);
		return 0;
	}
	if (cc_path(path, sizeof(path), err, "%s%s/%s", cg->mount, strcmp(cgroup, "/") ? cgroup : "", file) < 0)
		return -1;
	return cc_root_write(cg->root, path, *value ? value : "\n", err);
}

static int host_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	char path[PATH_MAX];

	if (cc_path(path, sizeof(path), err, "%s%s", cg->mount, cgroup) < 0)
		return -1;
	return cc_root_mkdir(cg->root, path, 0755, err);
}

static int host_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	char path[PATH_MAX];

	/* The root is "/" here, so the absolute path is the real one. */
	if (cc_path(path, sizeof(path), err, "%s%s", cg->mount, cgroup) < 0)
		return -1;
	if (rmdir(path) < 0 && errno != ENOENT)
		return cc_err_sys(err, errno, "rmdir %s", cgroup);
	return 0;
}

const struct cc_cg_ops cc_cg_host_ops = {
	.write = host_write,
	.mkdir = host_mkdir,
	.rmdir = host_rmdir,
};
