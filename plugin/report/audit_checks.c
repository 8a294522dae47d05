/* corecarve audit: the checks.  Pure functions of the ledger, the
 * topology, the policy and the snapshot; each appends findings (the
 * records' and the carves' are audit_records.c, the quotas' audit_quota.c).
 * Every check is linear in cgroups + carves (+ tasks or IRQs for those
 * that look at them): per-CPU owner tables and the snapshot's index stand
 * in for pairwise comparisons. */
#define _GNU_SOURCE
#include "audit_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"

/* ---- helpers ---------------------------------------------------------- */

/* A cpu-list into a buffer; "none" for the empty set. */
const char *audit_fmt(char *buf, size_t len, hwloc_const_bitmap_t set)
{
	_cleanup_free_ char *s = set ? cc_cpulist_format(set) : NULL;

	snprintf(buf, len, "%s", s && *s ? s : "none");
	return buf;
}

bool audit_partition_word(const char *p)
{
	return !strncmp(p, "root", 4) || !strncmp(p, "isolated", 8);
}

const char *audit_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int audit_carve_mode(const struct cc_carve *c, enum cc_cg_mode *m)
{
	return c->cgroup[0] ? cc_cg_mode_parse(c->mode, m) : -1;
}

/* A partition-mode carve whose cgroup is not a valid partition now: its
 * effective CPUs say nothing about the carve, PARTITION_* reports it. */
static bool partition_broken(const struct cc_carve *c, const struct cc_audit_cgroup *g)
{
	enum cc_cg_mode m;

	return audit_carve_mode(c, &m) == 0 && m != CC_MODE_CPUSET_ONLY && !cc_cg_partition_valid(g->partition);
}

/* The carve's cgroup in the snapshot, -1 when it has none or it is gone. */
int audit_carve_cgroup(const struct cc_audit_in *in, const struct cc_carve *c)
{
	return c->cgroup[0] ? cc_audit_snap_find(in->snap, c->cgroup) : -1;
}

/* NUMA node numbers of `cpus`. */
void audit_numa_of(const struct cc_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
	int cpu;

	hwloc_bitmap_zero(out);
	hwloc_bitmap_foreach_begin(cpu, cpus) {
		int pu = cc_topo_pu_index(t, cpu);

		if (pu >= 0 && t->pus[pu].numa >= 0)
			hwloc_bitmap_set(out, (unsigned)t->numa[t->pus[pu].numa].os);
	}
	hwloc_bitmap_foreach_end();
}

/* Per-CPU owner: the ledger index of the carve whose cpus or parked hold
 * each CPU, -1 for none.  The ledger refuses overlapping carves, so one
 * owner per CPU. */
static int *owners(const struct cc_ledger *l, struct cc_err *err)
{
	int *own = malloc(CC_CPU_LIMIT * sizeof(*own));
	int cpu;

	if (!own)
		return cc_err_sys(err, ENOMEM, "audit"), NULL;
	for (int i = 0; i < CC_CPU_LIMIT; i++)
		own[i] = -1;
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		hwloc_bitmap_foreach_begin(cpu, cc_ledger_carve_at(l, k)->cpus) {
			if (cpu < CC_CPU_LIMIT)
				own[cpu] = k;
		}
		hwloc_bitmap_foreach_end();
		hwloc_bitmap_foreach_begin(cpu, cc_ledger_carve_at(l, k)->parked) {
			if (cpu < CC_CPU_LIMIT)
				own[cpu] = k;
		}
		hwloc_bitmap_foreach_end();
	}
	return own;
}

static const char *owner_id(const struct cc_ledger *l, const int *own, hwloc_const_bitmap_t set)
{
	int cpu = hwloc_bitmap_first(set);

	return cpu >= 0 && cpu < CC_CPU_LIMIT && own[cpu] >= 0 ? cc_ledger_carve_at(l, own[cpu])->id : "";
}


/* ---- drift: CARVE_DRIFT, MEMS_MISALIGNED ------------------------------- */

int cc_audit_check_drift(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	_cleanup_bitmap_ hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

	if (!nodes)
		return cc_err_sys(err, ENOMEM, "audit");
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		int i = audit_carve_cgroup(in, c);
		const struct cc_audit_cgroup *g;
		enum cc_cg_mode mode;
		char a[AUDIT_BUF], b[AUDIT_BUF], x[AUDIT_BUF];
		struct cc_finding *f;

		if (i < 0 || audit_carve_mode(c, &mode) < 0)
			continue;
		g = &in->snap->cgroups[i];
		if ((!hwloc_bitmap_isequal(g->effective, c->cpus) && !partition_broken(c, g)) ||
		    (g->has_cpuset && !hwloc_bitmap_isequal(g->cpus, c->cpus))) {
			bool runs_elsewhere = !hwloc_bitmap_isequal(g->effective, c->cpus) && !partition_broken(c, g);

			f = ADD(CC_AUDIT_CARVE_DRIFT, c->id);
			/* A wider cpuset.cpus under a valid partition changes
			 * nothing yet: the partition still decides.  It is the
			 * value the kernel falls back to when it breaks. */
			if (!runs_elsewhere)
				f->severity = CC_AUDIT_WARNING;
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", c->cgroup);
			CC_AUDIT_TARGET(f->target, c->cgroup);
			CC_AUDIT_SET(f->expected, "cpuset.cpus and .effective %s", audit_fmt(a, sizeof(a), c->cpus));
			CC_AUDIT_SET(f->actual, "cpuset.cpus %s, effective %s",
				 g->has_cpuset ? audit_fmt(b, sizeof(b), g->cpus) : "absent", audit_fmt(x, sizeof(x), g->effective));
			CC_AUDIT_SET(f->fix, "--fix writes the carve's cpuset again");
		}
		if (mode == CC_MODE_REMOTE && g->exclusive && !hwloc_bitmap_isequal(g->exclusive, c->cpus)) {
			f = ADD(CC_AUDIT_CARVE_DRIFT, c->id);
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", c->cgroup);
			CC_AUDIT_TARGET(f->target, c->cgroup);
			CC_AUDIT_SET(f->expected, "cpuset.cpus.exclusive %s", audit_fmt(a, sizeof(a), c->cpus));
			CC_AUDIT_SET(f->actual, "cpuset.cpus.exclusive %s", audit_fmt(b, sizeof(b), g->exclusive));
			CC_AUDIT_SET(f->fix, "--fix writes the carve's exclusive CPUs again");
		}
		if (!hwloc_bitmap_iszero(c->mems) && g->mems && !hwloc_bitmap_isequal(g->mems, c->mems)) {
			/* The ledger's mems are the carve's own NUMA nodes when it
			 * was made memory: local: then the mismatch is memory
			 * pulled away from the carve's CPUs. */
			bool local;

			audit_numa_of(in->topo, c->cpus, nodes);
			local = hwloc_bitmap_isequal(nodes, c->mems);
			f = ADD(local ? CC_AUDIT_MEMS_MISALIGNED : CC_AUDIT_CARVE_DRIFT, c->id);
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", c->cgroup);
			CC_AUDIT_TARGET(f->target, c->cgroup);
			CC_AUDIT_SET(f->expected, "cpuset.mems.effective %s%s", audit_fmt(a, sizeof(a), c->mems),
				 local ? " (the NUMA nodes of its CPUs)" : "");
			CC_AUDIT_SET(f->actual, "cpuset.mems.effective %s", audit_fmt(b, sizeof(b), g->mems));
			CC_AUDIT_SET(f->fix, "--fix writes cpuset.mems again");
		}
	}
	return 0;
}

/* ---- partitions: PARTITION_INVALID, PARTITION_MISSING ------------------- */

/* A cgroup outside every carve whose own cpuset.cpus claims some of
 * `cpus`: the usual reason a partition turns invalid.  -1 when none. */
static int claimant(const struct cc_audit_snap *s, hwloc_const_bitmap_t cpus)
{
	for (int i = 1; i < s->ncgroups; i++) {
		const struct cc_audit_cgroup *g = &s->cgroups[i];

		if (g->within < 0 && !g->above_carve && strcmp(audit_base_name(g->path), CC_PARKED_NAME) &&
		    hwloc_bitmap_intersects(g->cpus, cpus))
			return i;
	}
	return -1;
}

/* An invalid remote partition whose CPUs the kernel still keeps out of
 * the root's effective set: the kernel did not release it.  Linux 6.7 to
 * 6.x (6.12.95 seen; not 7.3): update_cpumask() invalidates a sibling
 * partition that a cpuset.cpus write overlaps with partcmd_invalidate,
 * which leaves a remote partition on remote_children with its CPUs in
 * subpartitions_cpus; every write that takes it off again
 * (remote_partition_disable) reaches partition_xcpus_del()'s
 * WARN_ON_ONCE(old_prs < 0), and no write makes it valid first (its own
 * CPUs are "allocated to other partitions").  docs/audit.md. */
static bool kernel_kept(const struct cc_audit_snap *s, bool remote, bool invalid, hwloc_const_bitmap_t cpus)
{
	return remote && invalid && !hwloc_bitmap_iszero(cpus) && !hwloc_bitmap_intersects(s->cgroups[0].effective, cpus);
}

#define KEPT_WARNS "through member, which on this kernel makes it warn once (partition_xcpus_del, docs/audit.md)"

/* What --fix does about the partition: waits for the cgroup that claims
 * its CPUs, else writes it again.  One the kernel kept is re-armed only
 * through a write that warns once: not tried while a claim lasts (the
 * re-arm would fail after the warning), nor where a warning panics the
 * node. */
static void partition_fix(const struct cc_audit_snap *s, hwloc_const_bitmap_t cpus, bool kept, struct cc_finding *f)
{
	int who = claimant(s, cpus);
	_cleanup_bitmap_ hwloc_bitmap_t x = NULL;
	char a[AUDIT_BUF];

	if (kept && s->panic_on_warn) {
		f->repair = CC_REPAIR_NONE;
		CC_AUDIT_SET(f->fix,
			     "not re-armed: kernel.panic_on_warn is 1, and on this kernel taking an invalid remote "
			     "partition back makes the kernel warn (partition_xcpus_del, docs/audit.md), which would "
			     "panic the node; CPUs %s stay the container's meanwhile; restart the container in a "
			     "maintenance window (its release takes the partition back the same way), or set "
			     "kernel.panic_on_warn=0 first",
			     audit_fmt(a, sizeof(a), cpus));
		return;
	}
	if (who < 0 || !(x = hwloc_bitmap_alloc())) {
		CC_AUDIT_SET(f->fix, "%s",
			     kept ? "--fix re-arms it " KEPT_WARNS "; no other write takes the partition back"
				  : "--fix writes the partition again");
		return;
	}
	hwloc_bitmap_and(x, s->cgroups[who].cpus, cpus);
	if (kept)
		f->repair = CC_REPAIR_NONE;
	CC_AUDIT_SET(f->fix, "cgroup %s claims %s in its cpuset.cpus: its owner must drop them, then --fix re-arms it%s",
		     s->cgroups[who].path, audit_fmt(a, sizeof(a), x), kept ? " " KEPT_WARNS : "");
}

/* One finding about the partition state `got` of `path`, if it is not
 * `want`; `remote`: a remote partition's (its parent is none). */
static int partition_state(const struct cc_audit_in *in, const char *carve, const char *path, const char *got,
			   const char *want, bool remote, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t effective,
			   struct cc_audit_report *out, struct cc_err *err)
{
	char a[AUDIT_BUF], b[AUDIT_BUF];
	size_t n = strcspn(got, " ");
	bool invalid = strstr(got, "invalid") != NULL;
	bool kept = kernel_kept(in->snap, remote, invalid, cpus);
	struct cc_finding *f;

	if (!invalid && audit_partition_word(got) && (!want || (strlen(want) == n && !strncmp(got, want, n))))
		return 0;
	f = ADD(invalid ? CC_AUDIT_PARTITION_INVALID : CC_AUDIT_PARTITION_MISSING, carve);
	f->repair = CC_REPAIR_REAPPLY;
	CC_AUDIT_SET(f->object, "cgroup %s", path);
	CC_AUDIT_SET(f->expected, "cpuset.cpus.partition %s", want ? want : "root or isolated");
	/* Where its tasks run instead, when that moved too; whether the
	 * kernel still holds its CPUs for it. */
	CC_AUDIT_SET(f->actual, "cpuset.cpus.partition %s%s%s%s%s%s", *got ? got : "absent",
		     hwloc_bitmap_isincluded(effective, cpus) ? "" : "; effective ",
		     hwloc_bitmap_isincluded(effective, cpus) ? "" : audit_fmt(a, sizeof(a), effective),
		     kept ? "; the kernel still keeps CPUs " : "", kept ? audit_fmt(b, sizeof(b), cpus) : "",
		     kept ? " for it alone (it left the invalid remote partition on its list)" : "");
	partition_fix(in->snap, cpus, kept, f);
	return 0;
}

int cc_audit_check_partitions(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;
	_cleanup_json_ json_t *seen = json_object();

	if (!seen)
		return cc_err_sys(err, ENOMEM, "audit");
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		const struct cc_pclass *cls = cc_policy_class(in->policy, c->class_name);
		const char *want = cls ? (cls->partition == CC_PART_ISOLATED ? "isolated" : "root") : NULL;
		_cleanup_bitmap_ hwloc_bitmap_t held = NULL;
		int i = audit_carve_cgroup(in, c), j;
		enum cc_cg_mode mode;
		char pk[PATH_MAX], a[AUDIT_BUF], b[AUDIT_BUF];
		struct cc_finding *f;

		if (i < 0 || audit_carve_mode(c, &mode) < 0 || mode == CC_MODE_CPUSET_ONLY)
			continue;
		if (partition_state(in, c->id, c->cgroup, s->cgroups[i].partition, want, mode == CC_MODE_REMOTE, c->cpus,
				    s->cgroups[i].effective,
				    out, err) < 0)
			return -1;
		if (hwloc_bitmap_iszero(c->parked))
			continue;
		/* The parked siblings' partition, once per parked cgroup, with
		 * the parked CPUs of every carve that parks there. */
		if (cc_cg_parked_cgroup(mode, c->cgroup, pk, sizeof(pk), err) < 0)
			return -1;
		if (json_object_get(seen, pk))
			continue;
		if (json_object_set_new(seen, pk, json_true()) < 0 || !(held = hwloc_bitmap_alloc()))
			return cc_err_sys(err, ENOMEM, "audit");
		for (int m = k; m < cc_ledger_ncarves(l); m++) {
			enum cc_cg_mode mm;
			char other[PATH_MAX];

			if (audit_carve_mode(cc_ledger_carve_at(l, m), &mm) == 0 && mm != CC_MODE_CPUSET_ONLY &&
			    cc_cg_parked_cgroup(mm, cc_ledger_carve_at(l, m)->cgroup, other, sizeof(other), err) == 0 &&
			    !strcmp(other, pk))
				hwloc_bitmap_or(held, held, cc_ledger_carve_at(l, m)->parked);
		}
		j = cc_audit_snap_find(s, pk);
		if (j < 0) {
			f = ADD(CC_AUDIT_PARTITION_MISSING, c->id);
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", pk);
			CC_AUDIT_SET(f->expected, "isolated partition holding parked %s",
				 audit_fmt(a, sizeof(a), held));
			CC_AUDIT_SET(f->actual, "no such cgroup");
			CC_AUDIT_SET(f->fix, "--fix parks the siblings again");
			continue;
		}
		if (partition_state(in, c->id, pk, s->cgroups[j].partition, "isolated", false, held, s->cgroups[j].effective,
				    out, err) < 0)
			return -1;
		if (!hwloc_bitmap_isincluded(held, s->cgroups[j].effective)) {
			f = ADD(CC_AUDIT_CARVE_DRIFT, c->id);
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", pk);
			CC_AUDIT_SET(f->expected, "cpuset.cpus.effective holds parked %s",
				 audit_fmt(a, sizeof(a), held));
			CC_AUDIT_SET(f->actual, "cpuset.cpus.effective %s",
				 audit_fmt(b, sizeof(b), s->cgroups[j].effective));
			CC_AUDIT_SET(f->fix, "--fix parks the siblings again");
		}
	}
	return 0;
}

/* ---- exclusivity: OVERLAP, RESERVED_CARVED, SOFT_EXCLUSIVITY_LEAK, SPLIT_CORE */

/* The one cgroup of a subtree outside the carves where carved CPUs must be
 * taken away: its parent is the root or an ancestor of a carve.  Below it
 * the kernel narrows every effective set by itself. */
static bool boundary(const struct cc_audit_snap *s, int i)
{
	const struct cc_audit_cgroup *g = &s->cgroups[i];

	if (i == 0 || g->within >= 0 || g->above_carve || !strcmp(audit_base_name(g->path), CC_PARKED_NAME))
		return false;
	return g->parent == 0 || s->cgroups[g->parent].above_carve;
}

/* The CPU sets the exclusivity checks share: the carves' CPUs gathered by
 * check_carves_exclusive, then read by check_outside_carves; `x` is
 * scratch. */
struct excl_sets {
	hwloc_bitmap_t reserved, taken;
	hwloc_bitmap_t soft;        /* CPUs of cpuset-only carves */
	hwloc_bitmap_t parked;      /* every carve's parked siblings */
	hwloc_bitmap_t parked_part; /* those of partition carves */
	hwloc_bitmap_t x;
};

/* RESERVED_CARVED and OVERLAP, carve by carve; fills the soft and parked
 * sets for check_outside_carves. */
static int check_carves_exclusive(const struct cc_audit_in *in, const int *own, struct excl_sets *e,
				  struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;
	hwloc_bitmap_t x = e->x;
	char a[AUDIT_BUF], b[AUDIT_BUF];

	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		enum cc_cg_mode mode;
		int i = audit_carve_cgroup(in, c);
		struct cc_finding *f;

		hwloc_bitmap_or(x, c->cpus, c->parked);
		hwloc_bitmap_and(x, x, e->reserved);
		if (!hwloc_bitmap_iszero(x)) {
			f = ADD(CC_AUDIT_RESERVED_CARVED, c->id);
			CC_AUDIT_SET(f->object, "carve %s", c->id);
			CC_AUDIT_SET(f->expected, "none of the reserved CPUs %s", audit_fmt(a, sizeof(a), e->reserved));
			CC_AUDIT_SET(f->actual, "holds %s", audit_fmt(b, sizeof(b), x));
			CC_AUDIT_SET(f->fix, "the policy's reserved set changed under a running carve: restart the container to carve it again");
		}
		/* A stale carve's CPUs are its record's to release. */
		if (i >= 0 && audit_carve_mode(c, &mode) == 0) {
			if (mode == CC_MODE_CPUSET_ONLY)
				hwloc_bitmap_or(e->soft, e->soft, c->cpus);
			else
				hwloc_bitmap_or(e->parked_part, e->parked_part, c->parked);
			hwloc_bitmap_or(e->parked, e->parked, c->parked);
		}
		if (i < 0 || partition_broken(c, &s->cgroups[i]))
			continue;
		/* Runs on CPUs another carve owns. */
		hwloc_bitmap_and(x, s->cgroups[i].effective, e->taken);
		hwloc_bitmap_andnot(x, x, c->cpus);
		hwloc_bitmap_andnot(x, x, c->parked);
		if (!hwloc_bitmap_iszero(x)) {
			f = ADD(CC_AUDIT_OVERLAP, c->id);
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "cgroup %s", c->cgroup);
			CC_AUDIT_TARGET(f->target, c->cgroup);
			CC_AUDIT_SET(f->expected, "only its own CPUs %s", audit_fmt(a, sizeof(a), c->cpus));
			CC_AUDIT_SET(f->actual, "also runs on %s of carve %.64s", audit_fmt(b, sizeof(b), x),
				 owner_id(l, own, x));
			CC_AUDIT_SET(f->fix, "--fix writes the carve's cpuset again");
		}
	}
	return 0;
}

/* The CPUs of `soft` that tasks below boundary cgroup i may run on: the
 * effective sets of the populated cgroups with no populated child in its
 * subtree (cgroup v2 keeps a cgroup's tasks out of one whose controllers
 * it delegates), so that a pod whose every container is narrowed (a
 * shared container, peers) is no leak although the pod's own set is
 * wide. */
static void leak_below(const struct cc_audit_snap *s, const bool *pop_child, int i, hwloc_const_bitmap_t soft,
		       hwloc_bitmap_t out)
{
	hwloc_bitmap_zero(out);
	for (int j = i; j < s->ncgroups; j++) {
		const struct cc_audit_cgroup *g = &s->cgroups[j];
		int up = j;

		if (!g->populated || pop_child[j])
			continue;
		while (up > i)
			up = s->cgroups[up].parent;
		if (up != i)
			continue;
		hwloc_bitmap_t tmp = hwloc_bitmap_alloc();

		if (!tmp) {
			hwloc_bitmap_copy(out, soft); /* out of memory: the whole subtree counts */
			return;
		}
		hwloc_bitmap_and(tmp, g->effective, soft);
		hwloc_bitmap_or(out, out, tmp);
		hwloc_bitmap_free(tmp);
	}
}

/* SOFT_EXCLUSIVITY_LEAK and SPLIT_CORE: tasks outside the carves on a
 * cpuset-only carve's CPUs or on parked siblings. */
static int check_outside_carves(const struct cc_audit_in *in, const int *own, const struct excl_sets *e,
				struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;
	hwloc_bitmap_t x = e->x;
	_cleanup_free_ bool *pop_child = calloc((size_t)s->ncgroups + 1, sizeof(bool));
	char a[AUDIT_BUF], b[AUDIT_BUF];

	if (!pop_child)
		return cc_err_sys(err, ENOMEM, "audit");
	for (int i = 1; i < s->ncgroups; i++)
		if (s->cgroups[i].populated && s->cgroups[i].parent >= 0)
			pop_child[s->cgroups[i].parent] = true;
	for (int i = 0; i < s->ncgroups; i++) {
		const struct cc_audit_cgroup *g = &s->cgroups[i];
		bool root = i == 0;
		struct cc_finding *f;

		/* Only cgroups with tasks run anything; a partition of its own
		 * is UNKNOWN_CARVE's business.  The root cgroup cannot be
		 * narrowed: cpuset-only carves cannot keep its tasks away
		 * (that is why they are soft), partitions take their CPUs out
		 * of its effective set. */
		if (!g->populated || audit_partition_word(g->partition) || (!root && !boundary(s, i)))
			continue;
		hwloc_bitmap_and(x, g->effective, e->soft);
		if (!root && !hwloc_bitmap_iszero(x))
			leak_below(s, pop_child, i, e->soft, x);
		if (!root && !hwloc_bitmap_iszero(x)) {
			f = ADD(CC_AUDIT_SOFT_EXCLUSIVITY_LEAK, owner_id(l, own, x));
			f->repair = CC_REPAIR_TAKE_BACK;
			CC_AUDIT_SET(f->object, "cgroup %s", g->path);
			CC_AUDIT_TARGET(f->target, g->path);
			CC_AUDIT_SET(f->expected, "no CPU of a cpuset-only carve");
			CC_AUDIT_SET(f->actual, "runs tasks on carved %s (effective %s)", audit_fmt(a, sizeof(a), x),
				 audit_fmt(b, sizeof(b), g->effective));
			CC_AUDIT_SET(f->fix, "--fix takes the carved CPUs out of its cpuset.cpus");
		}
		hwloc_bitmap_and(x, g->effective, root ? e->parked_part : e->parked);
		if (!root && !hwloc_bitmap_iszero(x))
			leak_below(s, pop_child, i, e->parked, x);
		if (!hwloc_bitmap_iszero(x)) {
			const char *id = owner_id(l, own, x);
			const struct cc_carve *c = cc_ledger_find(in->ledger, id);
			enum cc_cg_mode mode = CC_MODE_CPUSET_ONLY;

			if (c)
				audit_carve_mode(c, &mode);
			f = ADD(CC_AUDIT_SPLIT_CORE, id);
			CC_AUDIT_SET(f->object, "cgroup %s", g->path);
			CC_AUDIT_SET(f->expected, "no task on the parked siblings");
			CC_AUDIT_SET(f->actual, "runs tasks on parked %s (effective %s)", audit_fmt(a, sizeof(a), x),
				 audit_fmt(b, sizeof(b), g->effective));
			if (mode == CC_MODE_CPUSET_ONLY) {
				f->repair = CC_REPAIR_TAKE_BACK;
				CC_AUDIT_TARGET(f->target, g->path);
				CC_AUDIT_SET(f->fix, "--fix takes the parked CPUs out of its cpuset.cpus");
			} else {
				f->repair = CC_REPAIR_REAPPLY;
				CC_AUDIT_TARGET(f->target, c ? c->cgroup : "");
				CC_AUDIT_SET(f->fix, "--fix parks the siblings in their partition again");
			}
		}
	}
	return 0;
}

int cc_audit_check_exclusivity(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	_cleanup_free_ int *own = owners(l, err);
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(in->policy, in->topo);
	_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);
	_cleanup_bitmap_ hwloc_bitmap_t soft = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t parked = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t parked_part = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();
	struct excl_sets e = { reserved, taken, soft, parked, parked_part, x };

	if (!own)
		return -1;
	if (!reserved || !taken || !soft || !parked || !parked_part || !x)
		return cc_err_sys(err, ENOMEM, "audit");
	if (check_carves_exclusive(in, own, &e, out, err) < 0)
		return -1;
	return check_outside_carves(in, own, &e, out, err);
}

/* ---- tasks: TASK_ESCAPED ------------------------------------------------- */

int cc_audit_check_tasks(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;
	char a[AUDIT_BUF], b[AUDIT_BUF];

	for (int t = 0; t < s->ntasks; t++) {
		const struct cc_audit_task *task = &s->tasks[t];
		const struct cc_audit_cgroup *g = &s->cgroups[task->cgroup];
		const struct cc_carve *c;
		struct cc_finding *f;

		if (g->within < 0)
			continue;
		c = cc_ledger_carve_at(in->ledger, g->within);
		/* Following a drifted cpuset is CARVE_DRIFT's finding; a task
		 * that differs from its own cgroup set its affinity itself. */
		if (hwloc_bitmap_isequal(task->affinity, c->cpus) || hwloc_bitmap_isequal(task->affinity, g->effective))
			continue;
		f = ADD(CC_AUDIT_TASK_ESCAPED, c->id);
		f->repair = CC_REPAIR_REPIN;
		f->num = task->tid;
		f->start = task->start;
		CC_AUDIT_TARGET(f->target, g->path);
		CC_AUDIT_SET(f->object, "task %d (cgroup %s)", task->tid, g->path);
		CC_AUDIT_SET(f->expected, "affinity %s", audit_fmt(a, sizeof(a), c->cpus));
		CC_AUDIT_SET(f->actual, "affinity %s", audit_fmt(b, sizeof(b), task->affinity));
		CC_AUDIT_SET(f->fix, "--fix sets its affinity back to the carve");
	}
	/* Threads this reader cannot see (PID 0 in cgroup.threads: another
	 * PID namespace) have affinities nobody checked: saying nothing would
	 * read as clean.  Node-wide, once. */
	if (s->hidden_tasks > 0) {
		const struct cc_audit_cgroup *g = &s->cgroups[s->hidden_at];
		const struct cc_carve *c = g->within >= 0 ? cc_ledger_carve_at(in->ledger, g->within) : NULL;
		struct cc_finding *f = ADD(CC_AUDIT_TASKS_HIDDEN, c ? c->id : "");

		CC_AUDIT_SET(f->object, "tasks of %d cgroup%s (first: %s)", s->hidden_cgroups,
			     s->hidden_cgroups == 1 ? "" : "s", g->path);
		CC_AUDIT_SET(f->expected, "every task's affinity readable (the host's PID namespace)");
		CC_AUDIT_SET(f->actual, "%d of %d threads read as PID 0: outside this PID namespace, not checked",
			     s->hidden_tasks, s->listed_tasks);
		CC_AUDIT_SET(f->fix, "run the audit in the host's PID namespace (Kubernetes: hostPID: true)");
	}
	/* Threads past the bound of their cgroup: unchecked, and said so. */
	if (s->unread_tasks > 0) {
		const struct cc_audit_cgroup *g = &s->cgroups[s->unread_at];
		const struct cc_carve *c = g->within >= 0 ? cc_ledger_carve_at(in->ledger, g->within) : NULL;
		struct cc_finding *f = ADD(CC_AUDIT_TASKS_UNREAD, c ? c->id : "");

		CC_AUDIT_SET(f->object, "tasks of %d cgroup%s (first: %s)", s->unread_cgroups,
			     s->unread_cgroups == 1 ? "" : "s", g->path);
		CC_AUDIT_SET(f->expected, "every thread's affinity read (at most %d per cgroup)", s->max_tasks);
		CC_AUDIT_SET(f->actual, "%d of %d threads past the first %d of their cgroup: not looked at",
			     s->unread_tasks, s->listed_tasks, s->max_tasks);
		CC_AUDIT_SET(f->fix, "audit --max-threads N reads more of them (time and memory grow with N)");
	}
	/* Cgroups the reader skipped: their carves and tasks went unchecked,
	 * which must not read as clean either.  Node-wide, once. */
	if (s->unreadable > 0) {
		struct cc_finding *f = ADD(CC_AUDIT_CGROUP_UNREADABLE, "");
		char more[32] = "";

		if (s->unreadable > 1)
			snprintf(more, sizeof(more), " and %d more", s->unreadable - 1);
		CC_AUDIT_SET(f->object, "cgroup %s%s", s->unreadable_path ? s->unreadable_path : "?", more);
		CC_AUDIT_SET(f->expected, "every cgroup readable, at most %d levels deep", CC_AUDIT_DEPTH_MAX);
		if (s->unreadable_errno == ELOOP)
			CC_AUDIT_SET(f->actual, "nested deeper than %d levels; %d cgroup%s skipped with their subtrees",
				     CC_AUDIT_DEPTH_MAX, s->unreadable, s->unreadable == 1 ? "" : "s");
		else
			CC_AUDIT_SET(f->actual, "%s; %d cgroup%s skipped with their subtrees", strerror(s->unreadable_errno),
				     s->unreadable, s->unreadable == 1 ? "" : "s");
		CC_AUDIT_SET(f->fix, "run the audit as root with CAP_DAC_READ_SEARCH, or ask the subtree's owner to "
				     "make it readable and flatter; a carve below it is not audited");
	}
	return 0;
}

/* ---- IRQs: IRQ_ON_CARVE, IRQ_COUNTS_ON_CARVE ------------------------------ */

static const struct cc_irq_rec *unmovable(const struct cc_irq_state *st, int irq, const char *name)
{
	const struct cc_irq_rec *r = cc_irq_state_find(st, irq);

	/* A record under another handler name is a reused number. */
	if (!r || !r->unmovable || (irq != CC_IRQ_DEFAULT && name && strcmp(r->name, name)))
		return NULL;
	return r;
}

static int irq_on_carve(const struct cc_audit_in *in, const struct cc_irq_state *st, const int *own,
			hwloc_const_bitmap_t avoid, int irq, const char *name, hwloc_const_bitmap_t aff,
			struct cc_audit_report *out, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();
	char a[AUDIT_BUF], b[AUDIT_BUF];
	struct cc_finding *f;

	if (!x)
		return cc_err_sys(err, ENOMEM, "audit");
	/* What cc_irq_plan() would move: it meets the carves and the kernel
	 * has not refused a write to it before. */
	hwloc_bitmap_and(x, aff, avoid);
	if (hwloc_bitmap_iszero(x) || unmovable(st, irq, name))
		return 0;
	f = ADD(CC_AUDIT_IRQ_ON_CARVE, owner_id(in->ledger, own, x));
	f->repair = CC_REPAIR_STEER_IRQS;
	f->num = irq;
	if (irq == CC_IRQ_DEFAULT)
		CC_AUDIT_SET(f->object, "/proc/irq/default_smp_affinity");
	else
		CC_AUDIT_SET(f->object, "irq %d (%s)", irq, *name ? name : "no handler");
	CC_AUDIT_SET(f->expected, "affinity outside steer-away carves %s", audit_fmt(a, sizeof(a), avoid));
	CC_AUDIT_SET(f->actual, "affinity %s", audit_fmt(b, sizeof(b), aff));
	CC_AUDIT_SET(f->fix, "--fix steers it off the carves");
	return 0;
}

int cc_audit_check_irqs(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;
	_cleanup_bitmap_ hwloc_bitmap_t avoid = cc_irq_avoid(in->ledger, NULL);
	_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();
	_cleanup_free_ int *own = NULL;
	struct cc_irq_state st;
	char a[AUDIT_BUF], b[AUDIT_BUF];
	int rc = -1;

	if (!avoid || !x)
		return cc_err_sys(err, ENOMEM, "audit");
	if (hwloc_bitmap_iszero(avoid) || (!s->has_irqs && !s->ngrowth))
		return 0;
	own = owners(in->ledger, err);
	if (!own)
		return -1;
	/* Parsing initialises `st`, and cleans it up when it fails. */
	if (cc_irq_state_parse(cc_ledger_section_get(in->ledger, CC_IRQ_SECTION), &st, err) < 0)
		return -1;
	if (s->has_irqs) {
		if (irq_on_carve(in, &st, own, avoid, CC_IRQ_DEFAULT, NULL, s->irqs.default_affinity, out, err) < 0)
			goto out;
		for (int i = 0; i < s->irqs.n; i++) {
			const struct cc_irq_info *q = &s->irqs.irqs[i];

			if (irq_on_carve(in, &st, own, avoid, q->irq, q->name, q->affinity, out, err) < 0)
				goto out;
		}
	}
	for (int i = 0; i < s->ngrowth; i++) {
		const struct cc_audit_irq_growth *g = &s->growth[i];
		const struct cc_irq_info *q = s->has_irqs ? cc_irq_find(&s->irqs, g->irq) : NULL;
		const struct cc_irq_rec *r = unmovable(&st, g->irq, q ? q->name : NULL);
		struct cc_finding *f;

		hwloc_bitmap_and(x, g->cpus, avoid);
		/* One that still points at the carves is IRQ_ON_CARVE already. */
		if (hwloc_bitmap_iszero(x) || (q && !r && hwloc_bitmap_intersects(q->affinity, avoid)))
			continue;
		f = cc_audit_add(out, CC_AUDIT_IRQ_COUNTS_ON_CARVE, owner_id(in->ledger, own, x), err);
		if (!f)
			goto out;
		f->num = g->irq;
		CC_AUDIT_SET(f->object, "irq %d (%s)", g->irq, q && *q->name ? q->name : "no handler");
		CC_AUDIT_SET(f->expected, "no interrupt on %s in %d ms", audit_fmt(a, sizeof(a), avoid),
			 s->sample_ms);
		CC_AUDIT_SET(f->actual, "fired on %s", audit_fmt(b, sizeof(b), x));
		if (r)
			CC_AUDIT_SET(f->fix, "kernel-managed (writes refused with %s): boot with isolcpus=managed_irq,<carved CPUs> or move the device's queues",
				 r->refused[0] ? r->refused : "an error");
		else
			CC_AUDIT_SET(f->fix, "its affinity already avoids the carves; x86 moves a vector at its next interrupt: audit again");
	}
	rc = 0;
out:
	cc_irq_state_fini(&st);
	return rc;
}

/* ---- kubelet: KUBELET_STATIC_CPU_MANAGER --------------------------------- */

/* ---- power: POWER_DRIFT, POWER_NOT_RESTORED ------------------------------ */

/* The first owner of `r` that is a carve of the ledger, or NULL. */
static const char *live_owner(const struct cc_ledger *l, const struct cc_noderec *r)
{
	for (int i = 0; i < r->nowners; i++)
		for (int k = 0; k < cc_ledger_ncarves(l); k++)
			if (!strcmp(r->owners[i].id, cc_ledger_carve_at(l, k)->id))
				return r->owners[i].id;
	return NULL;
}

int cc_audit_check_power(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;

	if (s->power_now.n != s->power.n)
		return 0; /* not read (a snapshot built by hand) */
	for (int i = 0; i < s->power.n; i++) {
		const struct cc_noderec *r = s->power.r[i];
		const char *now = s->power_now.value[i];
		const char *owner = live_owner(in->ledger, r);
		const char *held = cc_power_rec_value(r);
		struct cc_finding *f;

		/* A pending record is a hook at work (or one killed: its
		 * carve is stale and STALE_RECORD's release restores it). */
		if (r->pending)
			continue;
		if (owner && (!now || strcmp(now, held) != 0)) {
			f = ADD(CC_AUDIT_POWER_DRIFT, owner);
			CC_AUDIT_SET(f->object, "power %s %s", r->kind, r->path);
			CC_AUDIT_SET(f->expected, "%s", held);
			CC_AUDIT_SET(f->actual, "%s", now ? now : "(file gone)");
			if (now) {
				f->repair = CC_REPAIR_POWER;
				CC_AUDIT_SET(f->fix, "write \"%s\" back (the class of carve %s asks for it)", held, owner);
			} else {
				CC_AUDIT_SET(f->fix, "the driver went away; the setting returns with it, or when carve %s goes",
					     owner);
			}
			CC_AUDIT_TARGET(f->target, r->path);
		} else if (!owner && now && strcmp(now, r->orig) != 0) {
			f = ADD(CC_AUDIT_POWER_NOT_RESTORED, "");
			CC_AUDIT_SET(f->object, "power %s %s", r->kind, r->path);
			CC_AUDIT_SET(f->expected, "%s", r->orig);
			CC_AUDIT_SET(f->actual, "%s", now);
			f->repair = CC_REPAIR_POWER;
			CC_AUDIT_SET(f->fix, "write the original \"%s\" back: no carve needs \"%s\" any more", r->orig,
				     held);
			CC_AUDIT_TARGET(f->target, r->path);
		}
	}
	return 0;
}

int cc_audit_check_kubelet(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	struct cc_finding *f;

	if (strcmp(in->snap->kubelet_policy, "static") != 0)
		return 0;
	f = ADD(CC_AUDIT_KUBELET_STATIC_CPU_MANAGER, "");
	/* With carves on the node, its reconcile loop rewrites their cpusets. */
	if (cc_ledger_ncarves(in->ledger) > 0)
		f->severity = CC_AUDIT_CRITICAL;
	CC_AUDIT_SET(f->object, "%s", CC_KUBELET_CPU_STATE);
	CC_AUDIT_SET(f->expected, "policyName none");
	CC_AUDIT_SET(f->actual, "policyName static");
	CC_AUDIT_SET(f->fix, "kubelet --cpu-manager-policy=none: drain the node, remove the state file, restart the kubelet");
	return 0;
}
