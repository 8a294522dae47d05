/* corecarve: a carve's cgroups given back: the records it owns recomputed
 * without it, the last owner restoring (carve.c has the record rules;
 * cgroup_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"

/* ---- undo ---------------------------------------------------------------- */

/* Undo order: quotas, peers, ancestors' exclusive sets bottom-up (a
 * parent's must cover its children's), the parked partition last. */
static int undo_rank(const struct cc_noderec *r)
{
	int depth = 0;

	for (const char *p = r->path; *p; p++)
		depth += *p == '/';
	switch (cg_rec_kind(r)) {
	case K_QUOTA:
		return 0;
	case K_PEER:
	case K_SHARED:
		return 1;
	case K_EXCLUSIVE:
		return 2 + (CG_MAX_DEPTH + 2 - depth);
	default:
		return 2 * CG_MAX_DEPTH + 8;
	}
}

static int by_undo_rank(const void *a, const void *b)
{
	const struct cc_noderec *const *x = a, *const *y = b;
	int rx = undo_rank(*x), ry = undo_rank(*y);

	if (rx != ry)
		return rx - ry;
	return (*x)->seq < (*y)->seq ? 1 : (*x)->seq > (*y)->seq ? -1 : 0;
}

/* A set that inherits goes back to inheriting.  Linux 6.1 refuses an
 * empty cpuset.cpus or cpuset.mems on a cgroup with tasks (ENOSPC)
 * although it means "inherit": then it gets what it would inherit written
 * out (`parent_set`: the parent's effective set, and for a peer the CPUs
 * its ancestors give up for live carves, ancestors_taken), and a --verbose
 * note says so. */
static int write_inherit(struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
			 hwloc_const_bitmap_t parent_set, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *all = NULL;

	if (value[0] || cg_put(cg, cgroup, file, "", &e) == 0)
		return value[0] ? cg_put(cg, cgroup, file, value, err) : 0;
	if (e.code != ENOSPC) {
		*err = e;
		return -1;
	}
	all = cc_cpulist_format(parent_set);
	if (!all)
		return cc_err_sys(err, ENOMEM, "cgroup");
	cg_note(msgs, "%s/%s: the kernel refuses the empty (inheriting) set on a cgroup with tasks; "
	     "it gets the CPUs it inherits, %s, written out", cgroup, file, all);
	return cg_put(cg, cgroup, file, all, err);
}

/* One of a failed apply's writes back as it was: a partition to its
 * first word, an emptied cpuset file inheriting again (on 6.1, with the
 * tasks of the refused container still there, its parent's). */
static int undo_step(struct cc_cg *cg, const struct cc_cg_step *s, struct cc_err *err)
{
	if (s->op == STEP_PARTITION) {
		_cleanup_free_ char *first = strndup(s->old, strcspn(s->old, " "));

		return first ? cc_cg_write(cg, s->cgroup, s->file, first, NULL, err) : cc_err_sys(err, ENOMEM, "undo");
	}
	if (!s->old[0] && !cg_is_cpuset_file(s->file))
		return 0;
	if ((!strcmp(s->file, "cpuset.cpus") || !strcmp(s->file, "cpuset.mems")) && !s->old[0]) {
		_cleanup_bitmap_ hwloc_bitmap_t parent_set = hwloc_bitmap_alloc();
		char parent[PATH_MAX], eff[64];

		cc_cg_parent(s->cgroup, parent, sizeof(parent));
		snprintf(eff, sizeof(eff), "%s.effective", s->file);
		if (!parent_set)
			return cc_err_sys(err, ENOMEM, "undo");
		if (cc_cg_read_cpus(cg, parent, eff, parent_set, err) < 0)
			return -1;
		return write_inherit(cg, s->cgroup, s->file, "", parent_set, NULL, err);
	}
	return cg_put(cg, s->cgroup, s->file, s->old, err);
}

/* The carve's own files back as they were before a failed apply, in
 * reverse: its partition gives its CPUs back before anything above it
 * narrows. */
static int undo_own_steps(struct cc_cg *cg, const struct cc_cg_plan *plan, struct cc_err *err)
{
	int rc = 0;

	for (int i = plan->done < plan->n ? plan->done : plan->n - 1; i >= 0; i--) {
		const struct cc_cg_step *s = &plan->steps[i];
		struct cc_err step = CC_ERR_INIT;

		if (s->rec || !s->old || s->op == STEP_MKDIR || s->op == STEP_FAULT)
			continue;
		if (undo_step(cg, s, &step) < 0 && rc == 0) {
			*err = step;
			rc = -1;
		}
	}
	return rc;
}

/* A refused start's own cpuset.cpus record (a shared container's) goes,
 * and the record the plan replaced there (a peer's: the cgroup was
 * narrowed for a carve beside it) comes back with the value it had. */
static int put_back_replaced(struct cc_cg *cg, const struct cc_cg_carve *c, const struct cc_cg_plan *plan,
			     struct cc_noderecs *recs, struct cc_err *err)
{
	char key[PATH_MAX + 64];
	int rc = 0;

	if (cg_rec_key(key, sizeof(key), c->cgroup, "cpuset.cpus", err) < 0)
		return -1;
	cc_noderecs_del(recs, key);
	for (int i = 0; i < plan->replaced.n; i++)
		if (!cc_noderecs_add_copy(recs, plan->replaced.r[i]))
			return cc_err_sys(err, ENOMEM, "cgroup records");
	for (int i = 0; i < plan->n && i <= plan->done; i++) {
		const struct cc_cg_step *s = &plan->steps[i];

		if (s->rec && s->old && !strcmp(s->rec, key) && undo_step(cg, s, err) < 0)
			rc = -1;
	}
	return rc;
}

/* A poststop's cgroup is usually gone; one still there (crun runs
 * poststop even when it could not remove it, a failed start, a repair)
 * goes back to inheriting: a member again, its exclusive set and
 * cpuset.cpus emptied.  Left holding the carve's CPUs, it would claim
 * them beside the next carve of them (6.12: "root invalid (Cpu list in
 * cpuset.cpus not exclusive)").  With tasks on 6.1 (ENOSPC) it gets its
 * parent's effective set, which no live partition is in, without the
 * released CPUs.  A cpuset-only survivor keeps the released CPUs:
 * inheriting, its tasks would run on the live carves' CPUs, which its
 * parent's set still holds, and the next carve of them narrows it as a
 * peer. */
static int release_own(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_set = hwloc_bitmap_alloc();
	_cleanup_free_ char *part = NULL;
	struct cc_err step = CC_ERR_INIT;
	char parent[PATH_MAX];
	int rc = 0;

	if (!parent_set)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (c->mode == CC_MODE_CPUSET_ONLY || !c->cgroup[0])
		return 0;
	if (cg_read_opt(cg, c->cgroup, "cpuset.cpus.partition", &part, err) < 0)
		return -1;
	if (!part)
		return 0;
	if (strcmp(part, "member") && cc_cg_write(cg, c->cgroup, "cpuset.cpus.partition", "member", NULL, &step) < 0) {
		*err = step;
		rc = -1;
	}
	cc_err_clear(&step);
	if (c->mode == CC_MODE_REMOTE && cc_cg_exists(cg, c->cgroup, "cpuset.cpus.exclusive") &&
	    cg_put(cg, c->cgroup, "cpuset.cpus.exclusive", "", &step) < 0 && rc == 0) {
		*err = step;
		rc = -1;
	}
	cc_err_clear(&step);
	cc_cg_parent(c->cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_set, &step) == 0) {
		/* The fallback keeps off the released CPUs too: the next carve
		 * of them must not find them claimed. */
		hwloc_bitmap_andnot(parent_set, parent_set, c->cpus);
		if (c->parked)
			hwloc_bitmap_andnot(parent_set, parent_set, c->parked);
		write_inherit(cg, c->cgroup, "cpuset.cpus", "", parent_set, msgs, &step);
	}
	if (cc_err_isset(&step) && !cc_cg_gone(step.code) && rc == 0) {
		*err = step;
		rc = -1;
	}
	return rc;
}

/* The parked partition at `value` (NULL: gone): out of partition mode
 * first when it empties (an empty partition is invalid), the exclusive
 * set before cpuset.cpus as the kernel wants when it narrows. */
static int write_parked(struct cc_cg *cg, const char *pk, const char *value, struct cc_err *err)
{
	bool empty = !value || !value[0];

	if (empty && cc_cg_write(cg, pk, "cpuset.cpus.partition", "member", NULL, err) < 0)
		return -1;
	if (cc_cg_exists(cg, pk, "cpuset.cpus.exclusive") &&
	    cg_put(cg, pk, "cpuset.cpus.exclusive", value ? value : "", err) < 0)
		return -1;
	if (cg_put(cg, pk, "cpuset.cpus", value ? value : "", err) < 0)
		return -1;
	return value ? 0 : cc_cg_rmdir(cg, pk, err);
}

/* Someone else's quota (a kubelet resize), met while carves below still
 * own the record: theirs is the original now, restored by the last owner,
 * and the pod goes back to no quota meanwhile. */
static int rebase_quota(struct cc_cg *cg, struct cc_noderec *r, const char *cgroup, const char *file,
			const char *cur, struct cc_err *err)
{
	_cleanup_free_ char *target = NULL, *now = NULL;

	if (cc_noderec_put(&r->orig, cur) < 0 || cc_noderec_put(&r->set, NULL) < 0 ||
	    cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, NULL, &target, err) < 0)
		return -1;
	if (cg_same(K_QUOTA, cur, target))
		return 0;
	if (cg_put(cg, cgroup, file, target, err) < 0)
		return -1;
	if (cg_read_opt(cg, cgroup, file, &now, err) < 0)
		return -1;
	return cc_noderec_put(&r->set, now ? now : target) < 0 ? cc_err_sys(err, ENOMEM, "cgroup records") : 0;
}

/* A record whose cgroup went: the carve is no owner any more, and it goes
 * with its last owner. */
static int forget(struct cc_noderec *r, const struct cc_cg_carve *c, bool listed, hwloc_const_bitmap_t mine,
		  struct cc_noderecs *recs, struct cc_err *err)
{
	if (listed)
		cc_noderec_del_owner(r, c->id);
	else if (cg_held_update(r, mine, false, err) < 0)
		return -1;
	/* A shared container's record goes with its cgroup. */
	if (!cc_noderec_owned(r) || cg_rec_kind(r) == K_SHARED)
		cc_noderecs_del(recs, r->path);
	return 0;
}

/* The carve's share of a record: its owner entry, or its part of what
 * the record holds. */
static char *undo_share(const struct cc_cg_carve *c, const struct cc_noderec *r, enum rec_kind k, bool listed,
			hwloc_bitmap_t mine, struct cc_err *err)
{
	char *share;

	if (listed) {
		share = strdup(cc_noderec_share(r, c->id));
	} else {
		if (!cg_held_kind(k) || !r->held) {
			cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s holds nothing of carve %s", r->path, c->id);
			return NULL;
		}
		hwloc_bitmap_and(mine, r->held, cg_held_share(c, k));
		share = cc_cpulist_format(mine);
	}
	if (!share)
		cc_err_sys(err, ENOMEM, "cgroup");
	return share;
}

/* Someone else wrote it since: theirs stays.  What an interrupted undo
 * of this carve left (the target) is corecarve's too — for a parked
 * cgroup that was to go, an empty one still there.  1 when it was
 * theirs and is settled, 0 when it is ours, -1 on an error. */
static int undo_theirs(struct cc_cg *cg, struct cc_noderecs *recs, struct cc_noderec *r, enum rec_kind k,
		       const char *cgroup, const char *file, const char *cur, const char *target,
		       struct cc_cg_msgs *msgs, struct cc_err *err)
{
	if (cc_cg_rec_ours(r, cur) || cg_same(k, cur, target) || (k == K_PARKED && !target && !cur[0]))
		return 0;
	if (r->set)
		cg_msg(msgs, "%s was changed by someone else (\"%s\", corecarve had written \"%s\"); kept, "
		    "and no longer restored by corecarve", r->path, cur, r->set);
	if (!r->set && cc_noderec_owned(r)) {
		/* Never written: their value is simply the original now. */
		return cc_noderec_put(&r->orig, cur) < 0 ? cc_err_sys(err, ENOMEM, "cgroup records") : 1;
	}
	/* A quota others still need lifted is re-based on their value (the
	 * one restored when the last carve goes), not forgotten: the carves
	 * below would otherwise run under a quota. */
	if (k == K_QUOTA && cc_noderec_owned(r))
		return rebase_quota(cg, r, cgroup, file, cur, err) < 0 ? -1 : 1;
	cc_noderecs_del(recs, r->path);
	return 1;
}

/* The CPUs `cgroup`'s ancestors give up for live carves (their peer
 * records' owners), into `taken`.  Written out where 6.1 refuses the
 * empty set, the parent's effective CPUs and these are what the cgroup
 * inherits once no carve narrows its ancestors: it then follows them back
 * as inheriting would (its effective set is this and its parent's), where
 * the parent's effective set alone would keep another carve's CPUs out for
 * good once that carve went too.  It may read the ancestors' records into
 * `recs` (the records there keep their place). */
static int ancestors_taken(struct cc_noderecs *recs, const char *cgroup, hwloc_bitmap_t taken, struct cc_err *err)
{
	char a[PATH_MAX], up[PATH_MAX];

	for (cc_cg_parent(cgroup, a, sizeof(a)); strcmp(a, "/"); snprintf(a, sizeof(a), "%s", up)) {
		char key[PATH_MAX + 64];
		struct cc_noderec *r;

		cc_cg_parent(a, up, sizeof(up));
		if (cg_rec_key(key, sizeof(key), a, "cpuset.cpus", err) < 0)
			return -1;
		r = cc_noderecs_find(recs, key);
		if (r && cg_rec_kind(r) == K_PEER && cg_rec_taken(r, taken, err) < 0)
			return -1;
	}
	return 0;
}

/* The file brought to the value.  The parked partition is more than its
 * cpuset.cpus (the exclusive set may be wider after a write that failed
 * half-way): every file is brought to the value, and one corecarve made
 * goes with its last owner; a peer or shared cgroup inherits again (6.1:
 * `later` written out, ancestors_taken).  1 when the cgroup went
 * meanwhile (the record settled), 0 when written, -1 on an error. */
static int undo_write(struct cc_cg *cg, struct cc_noderecs *recs, struct cc_noderec *r, enum rec_kind k,
		      const char *cgroup, const char *file, const char *target, hwloc_const_bitmap_t later,
		      struct cc_cg_msgs *msgs, struct cc_err *err)
{
	int rc;

	if (k == K_PARKED)
		rc = write_parked(cg, cgroup, target, err);
	else if (k == K_PEER || k == K_SHARED)
		rc = write_inherit(cg, cgroup, "cpuset.cpus", target, later, msgs, err);
	else
		rc = cg_put(cg, cgroup, file, target, err);
	/* Gone between the read and the write: as a cgroup gone before (the
	 * carve is no owner already). */
	if (rc < 0 && cc_cg_gone(err->code) && k != K_PARKED) {
		cc_err_clear(err);
		if (!cc_noderec_owned(r) || k == K_SHARED)
			cc_noderecs_del(recs, r->path);
		return 1;
	}
	return rc < 0 ? -1 : 0;
}

/* The record after the write: the last owner gone, it goes; a shared
 * container's stays its own, reading orig again, for the next carve to
 * narrow; else it remembers what corecarve's value now reads. */
static int undo_settle(struct cc_cg *cg, struct cc_noderecs *recs, struct cc_noderec *r, enum rec_kind k,
		       const char *cgroup, const char *file, const char *cur, const char *target, bool written,
		       struct cc_err *err)
{
	_cleanup_free_ char *now = NULL;

	if (!cc_noderec_owned(r) && k != K_SHARED) {
		cc_noderecs_del(recs, r->path);
		return 0;
	}
	if (written) {
		if (cg_read_opt(cg, cgroup, file, &now, err) < 0)
			return -1;
		if (cc_noderec_put(&r->set, now ? now : target) < 0)
			return -1;
	} else if (r->set && cc_noderec_put(&r->set, cur) < 0) {
		/* Already at the target: what an undo whose commit did not
		 * happen (a full disk, a kill) wrote is corecarve's value now,
		 * or the next owner's undo would take it for someone else's. */
		return -1;
	}
	return cc_noderec_put(&r->pending, NULL) < 0 ? -1 : 0;
}

/* One record without the carve. */
static int undo_record(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_noderecs *recs,
		       struct cc_noderec *r, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t later = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *target = NULL, *share = NULL;
	char cgroup[PATH_MAX], parent[PATH_MAX];
	enum rec_kind k = cg_rec_kind(r);
	const char *file = NULL;
	bool written = false, listed;
	int rc;

	if (!parent_cpus || !mine || !later)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (cg_rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0)
		return -1;
	/* It may read the ancestors' records: `r` stays where it is. */
	if ((k == K_PEER || k == K_SHARED) && ancestors_taken(recs, cgroup, later, err) < 0)
		return -1;
	listed = cc_noderec_share(r, c->id) != NULL;
	share = undo_share(c, r, k, listed, mine, err);
	if (!share)
		return -1;
	if (cg_read_opt(cg, cgroup, file, &cur, err) < 0)
		return -1;
	/* The cgroup went (a pod removed, a peer container gone): nothing
	 * left to give back.  Other owners of a parked partition someone
	 * removed keep the record: the audit reports it. */
	if (!cur)
		return forget(r, c, listed, mine, recs, err);
	if (k == K_PEER || k == K_SHARED) {
		cc_cg_parent(cgroup, parent, sizeof(parent));
		if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0)
			return -1;
		hwloc_bitmap_or(later, later, parent_cpus);
	}
	if (listed)
		cc_noderec_del_owner(r, c->id);
	else if (cg_held_update(r, mine, false, err) < 0)
		return -1;
	if (cc_cg_rec_value(r, parent_cpus, &target, err) < 0)
		goto keep;
	rc = undo_theirs(cg, recs, r, k, cgroup, file, cur, target, msgs, err);
	if (rc)
		goto theirs_or_keep;
	if (!cg_same(k, cur, target) || k == K_PARKED) {
		written = true;
		rc = undo_write(cg, recs, r, k, cgroup, file, target, later, msgs, err);
		if (rc)
			goto theirs_or_keep;
	}
	if (undo_settle(cg, recs, r, k, cgroup, file, cur, target, written, err) < 0)
		goto keep;
	return 0;
theirs_or_keep:
	if (rc > 0)
		return 0;
keep:
	/* Kept with the carve as owner: a retry computes the same value. */
	if (listed ? cc_noderec_set_owner(r, c->id, share) < 0 : cg_held_update(r, mine, true, &(struct cc_err)CC_ERR_INIT) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return cc_err_prefix(err, "%s", r->path);
}

/* The keys of the records a carve's rules give it (ancestors' exclusive
 * sets and quotas, its parked partition), and those that name it. */
static int load_owned(struct cc_noderecs *recs, const struct cc_cg_carve *c, struct cc_err *err)
{
	/* ~400 KiB together: on the heap, not the hook's stack. */
	_cleanup_free_ char(*anc)[PATH_MAX] = NULL;
	_cleanup_free_ char(*keys)[PATH_MAX + 64] = NULL;
	char pk[PATH_MAX];
	const char *ptrs[2 * CG_MAX_DEPTH + 1];
	int nanc = 0, n = 0;

	if (!recs->src)
		return 0;
	anc = calloc(CG_MAX_DEPTH, PATH_MAX);
	keys = calloc(2 * CG_MAX_DEPTH + 1, PATH_MAX + 64);
	if (!anc || !keys)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (c->cgroup[0])
		nanc = cg_ancestors(c->cgroup, anc, CG_MAX_DEPTH);
	for (int i = 0; i < nanc && i < CG_MAX_DEPTH; i++) {
		if (cg_rec_key(keys[n], sizeof(keys[n]), anc[i], "cpuset.cpus.exclusive", err) < 0 ||
		    cg_rec_key(keys[n + 1], sizeof(keys[n + 1]), anc[i], "cpu.max", err) < 0)
			return -1;
		n += 2;
	}
	if (c->cgroup[0] && c->mode != CC_MODE_CPUSET_ONLY &&
	    cc_cg_parked_cgroup(c->mode, c->cgroup, pk, sizeof(pk), &(struct cc_err)CC_ERR_INIT) == 0) {
		if (cg_rec_key(keys[n], sizeof(keys[n]), pk, "cpuset.cpus", err) < 0)
			return -1;
		n++;
	}
	for (int i = 0; i < n; i++)
		ptrs[i] = keys[i];
	return cc_noderecs_load(recs, ptrs, n, c->id, err);
}

int cc_cg_undo_carve(struct cc_cg *cg, const struct cc_cg_carve *c, const struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_free_ const struct cc_noderec **mine = NULL;
	struct cc_err step = CC_ERR_INIT;
	char **paths = NULL;
	int n = 0, rc = 0;

	if (!cg->ops)
		return cc_err_set(err, EPERM, "carve %s: cgroups are only changed on the real host (root is %s)", c->id,
				  cg->root->path);
	if ((plan ? undo_own_steps(cg, plan, &step) : release_own(cg, c, msgs, &step)) < 0) {
		cc_err_prefix(&step, "%s", c->cgroup);
		*err = step;
		rc = -1;
	}
	/* A lazy set reads the records the carve may own: those of its
	 * ancestors and its parked partition (found by key), and those that
	 * list it (peers, quotas: found by its id). */
	if (load_owned(recs, c, err) < 0)
		return -1;
	mine = calloc((size_t)recs->n + 1, sizeof(*mine));
	paths = calloc((size_t)recs->n + 1, sizeof(*paths));
	if (!mine || !paths) {
		free(paths);
		return cc_err_sys(err, ENOMEM, "cgroup records");
	}
	for (int i = 0; i < recs->n; i++)
		if (cg_owns(recs->r[i], c))
			mine[n++] = recs->r[i];
	qsort(mine, (size_t)n, sizeof(*mine), by_undo_rank);
	/* By path from here: undoing one record may drop it from recs. */
	for (int i = 0; i < n; i++)
		if (!(paths[i] = strdup(mine[i]->path)))
			rc = cc_err_sys(err, ENOMEM, "cgroup records");
	for (int i = 0; i < n; i++) {
		struct cc_noderec *r = paths[i] ? cc_noderecs_find(recs, paths[i]) : NULL;
		if (!r || !cg_owns(r, c))
			continue;
		cc_err_clear(&step);
		if (undo_record(cg, c, recs, r, msgs, &step) < 0 && rc == 0) {
			*err = step;
			rc = -1;
		}
	}
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (plan && put_back_replaced(cg, c, plan, recs, &step) < 0 && rc == 0) {
		*err = step;
		rc = -1;
	}
	return rc;
}

int cc_cg_drop_held(struct cc_cg *cg, const char *path, hwloc_const_bitmap_t carved, struct cc_noderecs *recs,
		    struct cc_cg_msgs *msgs, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t orphan = hwloc_bitmap_alloc();
	struct cc_noderec *r = cc_noderecs_find(recs, path);
	struct cc_cg_carve none = { .id = "", .cgroup = "", .mode = CC_MODE_CPUSET_ONLY };
	enum rec_kind k;

	if (!orphan)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", path);
	if (!r || !r->held)
		return 0;
	k = cg_rec_kind(r);
	if (!cg_held_kind(k))
		return 0;
	hwloc_bitmap_andnot(orphan, r->held, carved);
	if (hwloc_bitmap_iszero(orphan))
		return 0;
	/* An owner that had exactly those. */
	if (k == K_EXCLUSIVE)
		none.cpus = orphan;
	else
		none.parked = orphan;
	return undo_record(cg, &none, recs, r, msgs, err);
}
