/* corecarve audit: the CFS quota checks (QUOTA_ON_CARVE,
 * QUOTA_WITH_PINNING).  The rule is the cgroup effect's
 * (cc_effect_drops_quota, cc_cg_below): a carve drops the quota of its
 * cgroup and its pod, and a quota above the pod must not fall below the
 * CPUs of the quota-dropping carves under it.  Linear in cgroups + carves
 * x depth + tasks. */
#define _GNU_SOURCE
#include "audit_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "effect.h"

/* ---- quota: QUOTA_ON_CARVE, QUOTA_WITH_PINNING --------------------------- */

static void quota_text(char *buf, size_t len, const struct cc_audit_cgroup *g)
{
	snprintf(buf, len, "cpu.max %lld %lld", g->quota, g->period);
}

static bool keeps_quota(const struct cc_audit_in *in, const struct cc_carve *c)
{
	return !cc_effect_drops_quota(c, in->policy);
}

/* For each cgroup of the snapshot, the CPUs of the quota-dropping carves
 * strictly below it (cc_effect_drops_quota, cc_cg_below): each carve
 * adds its CPUs to the cgroups on its path, found by the path index, so
 * the whole table costs carves x depth lookups.  NULL on ENOMEM. */
static long long *cpus_below_table(const struct cc_audit_in *in)
{
	const struct cc_audit_snap *s = in->snap;
	long long *below = calloc((size_t)s->ncgroups + 1, sizeof(*below));

	if (!below)
		return NULL;
	for (int k = 0; k < cc_ledger_ncarves(in->ledger); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(in->ledger, k);
		char path[PATH_MAX];
		int w;

		if (!cc_effect_drops_quota(c, in->policy) || snprintf(path, sizeof(path), "%s", c->cgroup) >= (int)sizeof(path))
			continue;
		w = hwloc_bitmap_weight(c->cpus);
		/* Every proper prefix ending before a '/': "/a" and "/a/b" of
		 * "/a/b/c" (the root is never a pod's ancestor with a quota). */
		for (char *slash = strrchr(path, '/'); slash && slash > path; slash = strrchr(path, '/')) {
			int i;

			*slash = '\0';
			i = cc_audit_snap_find(s, path);
			if (i >= 0)
				below[i] += w;
		}
	}
	return below;
}

/* A carve's cgroup and its pod: no quota at all, as the kubelet since
 * 1.33.  Above the pod, one below the CPUs of all the carves under it
 * throttles them; nothing there is corecarve's to lift (the hook refuses
 * such a carve): the admin raises it. */
static int check_carves(const struct cc_audit_in *in, const long long *below, struct cc_audit_report *out,
			struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;

	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		int i = audit_carve_cgroup(in, c);
		struct cc_finding *f;

		if (i < 0 || keeps_quota(in, c))
			continue;
		for (int p = i; p > 0; p = s->cgroups[p].parent) {
			const struct cc_audit_cgroup *g = &s->cgroups[p];
			bool above = p != i && p != s->cgroups[i].parent;
			long long demand;

			if (g->quota < 0 || (above && !__builtin_mul_overflow(below[p], g->period, &demand) &&
					     g->quota >= demand))
				continue;

			f = ADD(CC_AUDIT_QUOTA_ON_CARVE, c->id);
			f->repair = above ? CC_REPAIR_NONE : CC_REPAIR_REAPPLY;
			CC_AUDIT_TARGET(f->target, c->cgroup);
			CC_AUDIT_SET(f->object, "cgroup %s%s", g->path, p == i ? "" : above ? " (above the pod)" : " (parent)");
			if (!above)
				CC_AUDIT_SET(f->expected, "cpu.max max");
			else
				CC_AUDIT_SET(f->expected, "no quota below the %lld CPUs carved under it", below[p]);
			quota_text(f->actual, sizeof(f->actual), g);
			if (above)
				CC_AUDIT_SET(f->fix, "raise the quota of %s: corecarve lifts a container's and its pod's only",
					     g->path);
			else
				CC_AUDIT_SET(f->fix, "--fix lifts the quota (the parent's is restored at release)");
		}
	}
	return 0;
}

/* A cgroup inside a carve (a runtime's nested leaf) throttles the carve's
 * tasks just the same. */
static int check_nested(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;

	for (int i = 1; i < s->ncgroups; i++) {
		const struct cc_audit_cgroup *g = &s->cgroups[i];
		struct cc_finding *f;

		if (g->within < 0 || g->carve >= 0 || g->quota < 0 || keeps_quota(in, cc_ledger_carve_at(l, g->within)))
			continue;
		f = ADD(CC_AUDIT_QUOTA_ON_CARVE, cc_ledger_carve_at(l, g->within)->id);
		f->repair = CC_REPAIR_DROP_QUOTA;
		CC_AUDIT_SET(f->object, "cgroup %s (inside the carve)", g->path);
		CC_AUDIT_TARGET(f->target, g->path);
		CC_AUDIT_SET(f->expected, "cpu.max max");
		quota_text(f->actual, sizeof(f->actual), g);
		CC_AUDIT_SET(f->fix, "--fix writes cpu.max max");
	}
	return 0;
}

/* A task pinned by hand to part of its cgroup's CPUs under a quota. */
static int check_pinning(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;
	_cleanup_bitmap_ hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	char a[AUDIT_BUF], b[AUDIT_BUF], q[AUDIT_BUF];

	if (!nodes)
		return cc_err_sys(err, ENOMEM, "audit");
	for (int t = 0; t < s->ntasks; t++) {
		const struct cc_audit_task *task = &s->tasks[t];
		const struct cc_audit_cgroup *g = &s->cgroups[task->cgroup];
		const struct cc_audit_cgroup *qg;
		struct cc_finding *f;

		if (g->within >= 0 || g->quota_at < 0 || hwloc_bitmap_isequal(task->affinity, g->effective) ||
		    !hwloc_bitmap_isincluded(task->affinity, g->effective))
			continue;
		qg = &s->cgroups[g->quota_at];
		audit_numa_of(in->topo, task->affinity, nodes);
		f = ADD(CC_AUDIT_QUOTA_WITH_PINNING, "");
		f->num = task->tid;
		CC_AUDIT_SET(f->object, "task %d (cgroup %s)", task->tid, g->path);
		CC_AUDIT_SET(f->expected, "no hand pinning under a CFS quota");
		quota_text(q, sizeof(q), qg);
		CC_AUDIT_SET(f->actual, "pinned to %s of %s%s, %s at %s", audit_fmt(a, sizeof(a), task->affinity),
			 audit_fmt(b, sizeof(b), g->effective), hwloc_bitmap_weight(nodes) > 1 ? " across NUMA nodes" : "", q,
			 qg->path);
		CC_AUDIT_SET(f->fix, "drop the quota or the pinning: the quota is sized for %d CPUs, the task can use %d",
			 hwloc_bitmap_weight(g->effective), hwloc_bitmap_weight(task->affinity));
	}
	return 0;
}

int cc_audit_check_quota(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	_cleanup_free_ long long *below = cpus_below_table(in);

	if (!below)
		return cc_err_sys(err, ENOMEM, "audit");
	if (check_carves(in, below, out, err) < 0 || check_nested(in, out, err) < 0)
		return -1;
	return check_pinning(in, out, err);
}
