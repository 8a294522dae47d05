/* corecarve: the audit's repairs of cgroup records: a peer taken in, a
 * shared container widened (carve.c has the record rules; cgroup_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"

/* ---- a peer taken in by audit --fix ------------------------------------- */

int cc_cg_take_peer(struct cc_cg *cg, const char *peer, const struct cc_cg_share *owners, int n,
		    struct cc_noderecs *recs,
		    int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		    struct cc_cg_msgs *msgs, struct cc_err *err)
{
	struct cc_cg_plan scratch = { 0 };
	struct planner p = { .cg = cg, .recs = recs, .plan = &scratch };
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *part = NULL, *value = NULL, *now = NULL;
	char parent[PATH_MAX], key[PATH_MAX + 64];
	struct cc_noderec *r;
	bool fresh;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", peer);
	part = cc_cg_read(cg, peer, "cpuset.cpus.partition", err);
	if (!part)
		return -1;
	/* A partition of its own is not a peer to narrow: UNKNOWN_CARVE. */
	if (strcmp(part, "member"))
		return cc_err_set(err, EPERM, "%s is a partition (%s): not corecarve's to narrow", peer, part);
	cur = cc_cg_read(cg, peer, "cpuset.cpus", err);
	if (!cur)
		return -1;
	cc_cg_parent(peer, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    cg_rec_key(key, sizeof(key), peer, "cpuset.cpus", err) < 0)
		return -1;
	fresh = !cc_noderecs_find(recs, key);
	r = cg_take_record(&p, key, K_PEER, cur, true, err);
	for (int i = 0; i < scratch.msgs.n; i++)
		(scratch.msgs.note[i] ? cg_note : cg_msg)(msgs, "%s", scratch.msgs.line[i]);
	if (!r)
		return -1;
	for (int i = 0; i < n; i++)
		if (cc_noderec_set_owner(r, owners[i].id, owners[i].share) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records");
	if (cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (cg_same(K_PEER, value, cur)) {
		if (fresh)
			cc_noderecs_del(recs, key);
		return 0;
	}
	if (cc_noderec_put(&r->pending, value) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (journal(arg, recs, err) < 0 || cg_put(cg, peer, "cpuset.cpus", value, err) < 0)
		return -1;
	r = cc_noderecs_find(recs, key);
	now = cc_cg_read(cg, peer, "cpuset.cpus", err);
	if (!r || !now)
		return r ? -1 : 0;
	if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return 0;
}

/* ---- a shared container widened by audit --fix -------------------------- */

int cc_cg_shared_widen(struct cc_cg *cg, const char *path, const struct cc_cg_share *owners, int n,
		       struct cc_noderecs *recs,
		       int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		       struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t parent_cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t pool = hwloc_bitmap_alloc(), share = hwloc_bitmap_alloc();
	_cleanup_free_ char *cur = NULL, *value = NULL, *now = NULL;
	char cgroup[PATH_MAX], parent[PATH_MAX];
	struct cc_noderec *r = cc_noderecs_find(recs, path);
	const char *file;

	if (!parent_cpus)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (!cg->ops)
		return cc_err_set(err, EPERM, "%s: cgroups are only changed on the real host", path);
	if (!r || cg_rec_kind(r) != K_SHARED)
		return 0; /* gone since the audit read it */
	if (cg_rec_split(r, cgroup, sizeof(cgroup), &file, err) < 0 || cg_read_opt(cg, cgroup, file, &cur, err) < 0)
		return -1;
	if (!cur)
		return 0;
	/* Someone else's value since is theirs: the next carve takes it as
	 * the pool. */
	if (!cc_cg_rec_ours(r, cur))
		return cc_err_set(err, EBUSY, "%s reads \"%s\", not what corecarve wrote (\"%s\"): someone else changed it",
				  path, cur, r->set ? r->set : r->orig);
	if (!pool || !share || !r->orig[0] || cg_parse_cpus(r->orig, pool, r, "orig", err) < 0)
		return cc_err_isset(err) ? -1 : 0;
	/* The carves in its pool, and only those, own it. */
	while (r->nowners > 0)
		cc_noderec_del_owner(r, r->owners[0].id);
	for (int i = 0; i < n; i++) {
		if (cc_cpulist_parse(owners[i].share, share, owners[i].id, err) < 0)
			return -1;
		if (hwloc_bitmap_intersects(share, pool) && cc_noderec_set_owner(r, owners[i].id, owners[i].share) < 0)
			return cc_err_sys(err, ENOMEM, "cgroup records");
	}
	cc_cg_parent(cgroup, parent, sizeof(parent));
	if (cc_cg_read_cpus(cg, parent, "cpuset.cpus.effective", parent_cpus, err) < 0 ||
	    cc_cg_rec_value(r, parent_cpus, &value, err) < 0)
		return -1;
	if (cg_same(K_SHARED, cur, value))
		return 0;
	if (cc_noderec_put(&r->pending, value) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (journal(arg, recs, err) < 0 || cg_put(cg, cgroup, file, value, err) < 0)
		return -1;
	now = cc_cg_read(cg, cgroup, file, err);
	r = cc_noderecs_find(recs, path);
	if (!now || !r)
		return now ? 0 : -1;
	if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0)
		return cc_err_sys(err, ENOMEM, "cgroup records");
	return 0;
}
