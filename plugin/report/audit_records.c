/* corecarve audit: the checks of the ledger's records and carves
 * (RECORD_ORPHAN, RECORD_DRIFT, SHARED_NARROW, STALE_RECORD,
 * RELEASE_PENDING, UNKNOWN_CARVE, LEDGER_MISSING): pure functions of the
 * ledger, the topology, the policy and the snapshot, as the other checks
 * in audit_checks.c. */
#define _GNU_SOURCE
#include "audit_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"

/* ---- records: STALE_RECORD, UNKNOWN_CARVE ----------------------------- */

/* What the record's file reads in the snapshot, in the record's words;
 * NULL when the cgroup is gone (a parked cgroup: absent). */
static char *record_now(const struct cc_audit_snap *s, const char *cgroup, const char *file)
{
	int i = cc_audit_snap_find(s, cgroup);
	const struct cc_audit_cgroup *g;
	char buf[64];

	if (i < 0)
		return NULL;
	g = &s->cgroups[i];
	if (!strcmp(file, "cpu.max")) {
		if (g->quota < 0)
			snprintf(buf, sizeof(buf), "max %lld", g->period);
		else
			snprintf(buf, sizeof(buf), "%lld %lld", g->quota, g->period);
		return strdup(buf);
	}
	if (!strcmp(file, "cpuset.cpus.exclusive"))
		return g->exclusive ? cc_cpulist_format(g->exclusive) : NULL;
	return cc_cpulist_format(g->cpus);
}

/* A held record (noderec.h) holds exactly the shares of the carves its
 * rule names: a remote carve below an ancestor's exclusive set, a carve
 * parking in a parked partition.  CPUs no such carve has are an orphan
 * share (their owner went without taking them out); a live carve whose
 * share is missing would lose its CPUs at the next change of the file.
 * *owner: the first carve it holds, for RECORD_DRIFT. */
static int check_held(const struct cc_audit_in *in, const struct cc_noderec *r, const char *cgroup,
		      const char **owner, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	bool parked = !strcmp(r->kind, "parked");
	const hwloc_const_bitmap_t held = r->held;
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc(), orphan = hwloc_bitmap_alloc();
	char a[AUDIT_BUF], b[AUDIT_BUF];
	struct cc_finding *f;

	if (!all || !orphan)
		return cc_err_sys(err, ENOMEM, "audit");
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		hwloc_const_bitmap_t share = parked ? c->parked : c->cpus;
		enum cc_cg_mode m;

		if (audit_carve_mode(c, &m) < 0 || !c->exclusive || hwloc_bitmap_iszero(share) ||
		    !cc_cg_rec_held_by(r, cgroup, m, c->cgroup))
			continue;
		hwloc_bitmap_or(all, all, share);
		if (hwloc_bitmap_isincluded(share, held)) {
			if (!*owner)
				*owner = c->id;
			continue;
		}
		/* One kept as releasing may have given it back already. */
		if (c->releasing && !hwloc_bitmap_intersects(share, held))
			continue;
		if (!(f = cc_audit_add(out, CC_AUDIT_RECORD_DRIFT, c->id, err)))
			return -1;
		f->repair = CC_REPAIR_REAPPLY;
		CC_AUDIT_SET(f->object, "record %s", r->path);
		CC_AUDIT_SET(f->expected, "holds %s of carve %s", audit_fmt(a, sizeof(a), share), c->id);
		CC_AUDIT_SET(f->actual, "held %s", audit_fmt(b, sizeof(b), held));
		CC_AUDIT_SET(f->fix, "--fix re-applies carve %s: its share is recorded again", c->id);
	}
	hwloc_bitmap_andnot(orphan, held, all);
	if (hwloc_bitmap_iszero(orphan))
		return 0;
	if (!(f = cc_audit_add(out, CC_AUDIT_RECORD_ORPHAN, "", err)))
		return -1;
	f->repair = CC_REPAIR_DROP_OWNER;
	CC_AUDIT_SET(f->object, "record %s", r->path);
	CC_AUDIT_SET(f->expected, "held for carves of the ledger");
	CC_AUDIT_SET(f->actual, "CPUs %s held for no carve", audit_fmt(b, sizeof(b), orphan));
	CC_AUDIT_SET(f->fix, "--fix recomputes the file without them (the last owner restores the original)");
	CC_AUDIT_TARGET(f->target, r->path);
	return 0;
}

/* A shared container's record (its cpuset.cpus: the pool minus the live
 * carves in it).  RECORD_DRIFT: a live carve in its pool that is no owner
 * (its release would not give its CPUs back).  SHARED_NARROW: the file,
 * as corecarve wrote it, lacks CPUs of the pool no live carve holds (CPUs
 * freed that never came back).  A file someone else wrote since is
 * theirs (the next carve takes it as the pool); one gone is dropped by
 * the next carve. */
static int check_shared(const struct cc_audit_in *in, const struct cc_noderec *r, const char *cgroup,
			struct cc_audit_report *out, struct cc_err *err)
{
	_cleanup_free_ char *now = record_now(in->snap, cgroup, "cpuset.cpus");
	_cleanup_bitmap_ hwloc_bitmap_t have = hwloc_bitmap_alloc(), want = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
	const struct cc_ledger *l = in->ledger;
	struct cc_err e = CC_ERR_INIT;
	struct cc_finding *f;
	char a[AUDIT_BUF], b[AUDIT_BUF];

	if (!have || !want || !both)
		return cc_err_sys(err, ENOMEM, "audit");
	if (!now || !r->set || !r->orig || !r->orig[0] || !cc_cg_rec_ours(r, now))
		return 0;
	/* A malformed record is the plan's to refuse, not a finding. */
	if (cc_cpulist_parse(r->orig, want, r->path, &e) < 0 || cc_cpulist_parse(now, have, r->path, &e) < 0)
		return 0;
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);

		hwloc_bitmap_or(both, c->cpus, c->parked);
		if (!c->exclusive || !hwloc_bitmap_intersects(both, want))
			continue;
		if (!cc_noderec_share(r, c->id)) {
			if (!(f = cc_audit_add(out, CC_AUDIT_RECORD_DRIFT, c->id, err)))
				return -1;
			f->repair = CC_REPAIR_REAPPLY;
			CC_AUDIT_SET(f->object, "record %s", r->path);
			CC_AUDIT_SET(f->expected, "owned by carve %s (its CPUs %s are in the shared pool %s)", c->id,
				     audit_fmt(a, sizeof(a), both), r->orig);
			CC_AUDIT_SET(f->actual, "not an owner: its release would not give them back");
			CC_AUDIT_SET(f->fix, "--fix re-applies carve %s: it owns the record again", c->id);
		}
	}
	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		hwloc_bitmap_andnot(want, want, cc_ledger_carve_at(l, k)->cpus);
		hwloc_bitmap_andnot(want, want, cc_ledger_carve_at(l, k)->parked);
	}
	hwloc_bitmap_andnot(both, want, have);
	if (hwloc_bitmap_iszero(both))
		return 0;
	if (!(f = cc_audit_add(out, CC_AUDIT_SHARED_NARROW, "", err)))
		return -1;
	f->repair = CC_REPAIR_WIDEN_SHARED;
	CC_AUDIT_SET(f->object, "shared container %s", cgroup);
	CC_AUDIT_SET(f->expected, "cpuset.cpus %s (its pool %s without the live carves)", audit_fmt(a, sizeof(a), want),
		     r->orig);
	CC_AUDIT_SET(f->actual, "\"%s\": %s free but not given back", now, audit_fmt(b, sizeof(b), both));
	CC_AUDIT_SET(f->fix, "--fix writes %s", a);
	CC_AUDIT_TARGET(f->target, r->path);
	return 0;
}

/* The restore model's invariant over the cgroup records: every owner is a
 * carve of the ledger, and every file written holds what corecarve wrote
 * (or a write in flight). */
static int check_cgroup_records(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	struct cc_noderecs recs;
	int rc = -1;

	if (cc_noderecs_open(&recs, in->ledger, CC_CG_SECTION, &cc_cg_rec_schema, err) < 0)
		return -1;
	if (cc_noderecs_load_all(&recs, err) < 0)
		goto out;
	for (int i = 0; i < recs.n; i++) {
		const struct cc_noderec *r = recs.r[i];
		const char *slash = strrchr(r->path, '/');
		char cgroup[PATH_MAX];
		_cleanup_free_ char *now = NULL;
		const char *owner = r->nowners ? r->owners[0].id : NULL;
		struct cc_finding *f;

		snprintf(cgroup, sizeof(cgroup), "%.*s", slash && slash != r->path ? (int)(slash - r->path) : 1,
			 slash && slash != r->path ? r->path : "/");
		for (int k = 0; k < r->nowners; k++) {
			bool known = false;

			for (int j = 0; j < cc_ledger_ncarves(in->ledger) && !known; j++)
				known = !strcmp(cc_ledger_carve_at(in->ledger, j)->id, r->owners[k].id);
			if (known)
				continue;
			if (!(f = cc_audit_add(out, CC_AUDIT_RECORD_ORPHAN, r->owners[k].id, err)))
				goto out;
			f->repair = CC_REPAIR_DROP_OWNER;
			CC_AUDIT_SET(f->object, "record %s", r->path);
			CC_AUDIT_SET(f->expected, "owned by carves of the ledger");
			CC_AUDIT_SET(f->actual, "owner \"%s\" is no carve", r->owners[k].id);
			CC_AUDIT_SET(f->fix, "--fix recomputes the file without it (the last owner restores the original)");
		}
		if (r->held && check_held(in, r, cgroup, &owner, out, err) < 0)
			goto out;
		if (!strcmp(r->kind, "shared") && check_shared(in, r, cgroup, out, err) < 0)
			goto out;
		if (!r->set || !owner)
			continue;
		now = record_now(in->snap, cgroup, slash ? slash + 1 : "");
		/* A peer or a shared container that exited: nothing is left to
		 * give back, and its owner's release forgets the record. */
		if (!now && (!strcmp(r->kind, "peer") || !strcmp(r->kind, "shared")))
			continue;
		if (cc_cg_rec_ours(r, now))
			continue;
		if (!(f = cc_audit_add(out, CC_AUDIT_RECORD_DRIFT, owner, err)))
			goto out;
		f->repair = CC_REPAIR_REAPPLY;
		CC_AUDIT_SET(f->object, "%s", r->path);
		CC_AUDIT_SET(f->expected, "\"%s\", as corecarve wrote it", r->set);
		CC_AUDIT_SET(f->actual, "\"%s\"", now ? now : "(gone)");
		CC_AUDIT_SET(f->fix, "--fix re-applies carve %s: the new value becomes the one restored at its release",
			     owner);
	}
	rc = 0;
out:
	cc_noderecs_fini(&recs);
	return rc;
}

/* RELEASE_PENDING and STALE_RECORD: the ledger's carves whose release
 * failed, or whose cgroup is gone without a poststop. */
static int check_stale(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;

	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, k);
		struct cc_finding *f;

		if (c->releasing) {
			f = cc_audit_add(out, CC_AUDIT_RELEASE_PENDING, c->id, err);
			if (!f)
				return -1;
			f->repair = CC_REPAIR_RELEASE;
			CC_AUDIT_SET(f->object, "carve %s", c->id);
			CC_AUDIT_SET(f->expected, "released: its container is gone or was refused");
			CC_AUDIT_SET(f->actual, "kept as releasing: undoing what it changed failed; its CPUs stay taken");
			CC_AUDIT_SET(f->fix, "--fix (or the next hook) tries the undo again");
			CC_AUDIT_TARGET(f->target, c->cgroup);
			continue;
		}
		if (!c->cgroup[0] || cc_audit_snap_find(in->snap, c->cgroup) >= 0)
			continue;
		f = cc_audit_add(out, CC_AUDIT_STALE_RECORD, c->id, err);
		if (!f)
			return -1;
		f->repair = CC_REPAIR_RELEASE;
		CC_AUDIT_SET(f->object, "cgroup %s", c->cgroup);
		CC_AUDIT_SET(f->expected, "the carve's cgroup exists");
		CC_AUDIT_SET(f->actual, "gone: the %s ended without its poststop hook", c->kind);
		CC_AUDIT_SET(f->fix, "--fix undoes what it recorded and frees its CPUs");
		CC_AUDIT_TARGET(f->target, c->cgroup);
	}
	return 0;
}

/* What the carves below each ancestor hold exclusively (remote
 * partitions draw cpuset.cpus.exclusive down the chain), into below[] by
 * snapshot index (NULL: none).  Ancestors are found by path: a stale
 * carve's cgroup is gone, its parents may still hold its CPUs, and that is
 * STALE_RECORD's repair. */
static int exclusive_below(const struct cc_audit_in *in, hwloc_bitmap_t *below, struct cc_err *err)
{
	const struct cc_ledger *l = in->ledger;
	const struct cc_audit_snap *s = in->snap;

	for (int k = 0; k < cc_ledger_ncarves(l); k++) {
		char path[PATH_MAX], up[PATH_MAX];

		if (!cc_ledger_carve_at(l, k)->cgroup[0])
			continue;
		snprintf(path, sizeof(path), "%s", cc_ledger_carve_at(l, k)->cgroup);
		while (strcmp(path, "/")) {
			int p;

			cc_cg_parent(path, up, sizeof(up));
			memcpy(path, up, sizeof(path));
			p = cc_audit_snap_find(s, path);
			if (p < 0 || !s->cgroups[p].exclusive || hwloc_bitmap_iszero(s->cgroups[p].exclusive))
				continue;
			if (!below[p] && !(below[p] = hwloc_bitmap_alloc()))
				return cc_err_sys(err, ENOMEM, "audit");
			hwloc_bitmap_or(below[p], below[p], cc_ledger_carve_at(l, k)->cpus);
		}
	}
	return 0;
}

/* UNKNOWN_CARVE: a partition, or exclusive CPUs beyond what the carves
 * below hold (`below`, from exclusive_below), on a cgroup no carve owns. */
static int check_unknown(const struct cc_audit_in *in, hwloc_bitmap_t *below, struct cc_audit_report *out,
			 struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;

	for (int i = 1; i < s->ncgroups; i++) {
		const struct cc_audit_cgroup *g = &s->cgroups[i];
		_cleanup_bitmap_ hwloc_bitmap_t extra = NULL;
		bool part = audit_partition_word(g->partition);
		char a[AUDIT_BUF], b[AUDIT_BUF];
		struct cc_finding *f;

		if (g->carve >= 0 || g->within >= 0 || !strcmp(audit_base_name(g->path), CC_PARKED_NAME))
			continue;
		if (g->exclusive && !hwloc_bitmap_iszero(g->exclusive)) {
			extra = hwloc_bitmap_dup(g->exclusive);
			if (!extra)
				return cc_err_sys(err, ENOMEM, "audit");
			if (below[i])
				hwloc_bitmap_andnot(extra, extra, below[i]);
		}
		/* A partition that hands cpuset on to its children is a parent
		 * prepared for local partitions (corecarve init-parent), not a
		 * carve; ancestors of carves are partitions or hold exclusive
		 * CPUs because of them. */
		if (part && (g->above_carve || g->delegates_cpuset))
			part = false;
		if (!part && (!extra || hwloc_bitmap_iszero(extra)))
			continue;
		f = cc_audit_add(out, CC_AUDIT_UNKNOWN_CARVE, "", err);
		if (!f)
			return -1;
		CC_AUDIT_SET(f->object, "cgroup %s", g->path);
		CC_AUDIT_SET(f->expected, "no partition or exclusive CPUs outside the ledger");
		if (part)
			CC_AUDIT_SET(f->actual, "partition \"%s\" on %s", g->partition,
				 audit_fmt(a, sizeof(a), g->effective));
		else
			CC_AUDIT_SET(f->actual, "cpuset.cpus.exclusive %s (%s not held for a carve)",
				 audit_fmt(a, sizeof(a), g->exclusive), audit_fmt(b, sizeof(b), extra));
		CC_AUDIT_SET(f->fix, "not corecarve's: if a crashed hook left it, write member to its partition and clear cpuset.cpus.exclusive; else its owner must");
	}
	return 0;
}

/* LEDGER_MISSING: no carve, yet cgroups only corecarve makes: this is not
 * the ledger the hook keeps (a wrong --state, a misspelt
 * CORECARVE_STATE_DIR, a DaemonSet volume on another path) or it was lost.
 * Without this a wrong directory reads as a clean node. */
static int check_ledger_missing(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;

	for (int i = 1; i < s->ncgroups && !cc_ledger_ncarves(in->ledger); i++) {
		const struct cc_audit_cgroup *g = &s->cgroups[i];
		bool parked = !strcmp(audit_base_name(g->path), CC_PARKED_NAME) && !hwloc_bitmap_iszero(g->cpus);
		bool exec = !strncmp(g->path, "/corecarve.exec/exec-", 21) && g->populated;
		struct cc_finding *f;

		if (!parked && !exec)
			continue;
		if (!(f = cc_audit_add(out, CC_AUDIT_LEDGER_MISSING, "", err)))
			return -1;
		CC_AUDIT_SET(f->object, "cgroup %s", g->path);
		CC_AUDIT_SET(f->expected, "a carve in the ledger that made it");
		CC_AUDIT_SET(f->actual, "the ledger holds no carve; %s", parked ? "parked CPUs held" : "a carved command runs");
		CC_AUDIT_SET(f->fix, "audit the hook's state directory (its --state or CORECARVE_STATE_DIR, "
				     "the DaemonSet's run-corecarve path); if the ledger was lost, see corecarve(8), DAMAGED LEDGER");
	}
	return 0;
}

int cc_audit_check_records(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	const struct cc_audit_snap *s = in->snap;
	_cleanup_free_ hwloc_bitmap_t *below = calloc((size_t)s->ncgroups + 1, sizeof(*below));
	int rc = -1;

	if (!below)
		return cc_err_sys(err, ENOMEM, "audit");
	if (check_stale(in, out, err) == 0 && exclusive_below(in, below, err) == 0 &&
	    check_unknown(in, below, out, err) == 0 && check_ledger_missing(in, out, err) == 0)
		rc = check_cgroup_records(in, out, err);
	for (int i = 0; i < s->ncgroups; i++)
		if (below[i])
			hwloc_bitmap_free(below[i]);
	return rc;
}
