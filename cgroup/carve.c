/* corecarve: a carve's cgroups — plan, apply and undo over the node
 * records of the "cgroup" section (cgroup.h says what each kind of record
 * computes; docs/design.md, "One restore model").  This file: the record
 * rules (kinds, owners, keys, values) and reading; the plan, the apply,
 * the undo and the audit's repairs are carve_plan.c, carve_apply.c,
 * carve_undo.c and carve_repair.c (cgroup_int.h says what they share). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"

const char *const cc_cg_rec_kinds[] = { "exclusive", "parked", "peer", "quota", "shared", NULL };
/* Their owners are every carve a rule names (cgroup.h): kept as `held`. */
const char *const cc_cg_rec_held_kinds[] = { "exclusive", "parked", NULL };

/* A value of a record of kind k, as the rules read it (NULL passes:
 * "none", checked by the parser). */
static int check_value(enum rec_kind k, const char *v, const char *where, const char *field, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t set = NULL;
	char what[320];
	long long quota, period;

	if (!v)
		return 0;
	snprintf(what, sizeof(what), "%.200s.%.100s", where, field);
	if (k == K_QUOTA)
		return cc_cg_parse_cpu_max(v, &quota, &period) == 0 ? 0
			: cc_err_set(err, EINVAL, "%s: \"%.32s\" is not a cpu.max value (\"max P\" or \"Q P\")", what, v);
	if (!(set = hwloc_bitmap_alloc()))
		return cc_err_sys(err, ENOMEM, "%s", what);
	return cc_cpulist_parse(v, set, what, err);
}

/* A quota owner's share is its CPU count, the others' their CPU lists. */
static int check_share(enum rec_kind k, const char *v, const char *where, const char *id, struct cc_err *err)
{
	char field[300];
	char *end;
	long long n;

	snprintf(field, sizeof(field), "owners.%.256s", id);
	if (k != K_QUOTA)
		return check_value(k, v, where, field, err);
	n = strtoll(v, &end, 10);
	if (*end || end == v || n < 1 || n > 100000)
		return cc_err_set(err, EINVAL, "%.200s.%s: \"%.32s\" is not a CPU count", where, field, v);
	return 0;
}

static int check_rec(const struct cc_noderec *r, const char *where, struct cc_err *err)
{
	enum rec_kind k = cg_rec_kind(r);

	if (check_value(k, r->orig, where, "orig", err) < 0 || check_value(k, r->set, where, "set", err) < 0 ||
	    check_value(k, r->pending, where, "pending", err) < 0)
		return -1;
	for (int i = 0; i < r->nowners; i++)
		if (check_share(k, r->owners[i].share, where, r->owners[i].id, err) < 0)
			return -1;
	return 0;
}

const struct cc_noderec_schema cc_cg_rec_schema = {
	.where = "sections." CC_CG_SECTION,
	.kinds = cc_cg_rec_kinds,
	.held_kinds = cc_cg_rec_held_kinds,
	.check = check_rec,
};

enum rec_kind cg_rec_kind(const struct cc_noderec *r)
{
	for (int k = 0; cc_cg_rec_kinds[k]; k++)
		if (!strcmp(r->kind, cc_cg_rec_kinds[k]))
			return (enum rec_kind)k;
	return K_UNKNOWN;
}

bool cg_held_kind(enum rec_kind k)
{
	return k == K_EXCLUSIVE || k == K_PARKED;
}

/* The share a carve has in a held record of kind k: its CPUs in its
 * ancestors' exclusive sets, its parked siblings in the parked partition. */
hwloc_const_bitmap_t cg_held_share(const struct cc_cg_carve *c, enum rec_kind k)
{
	return k == K_EXCLUSIVE ? c->cpus : k == K_PARKED ? c->parked : NULL;
}

/* Add `share` to a held record's owners, or take it away (the carves are
 * disjoint: what one holds is no other's). */
int cg_held_update(struct cc_noderec *r, hwloc_const_bitmap_t share, bool add, struct cc_err *err)
{
	if (!r->held && !(r->held = hwloc_bitmap_alloc()))
		return cc_err_sys(err, ENOMEM, "cgroup records");
	if (add)
		hwloc_bitmap_or(r->held, r->held, share);
	else
		hwloc_bitmap_andnot(r->held, r->held, share);
	if (hwloc_bitmap_iszero(r->held))
		r->held = (hwloc_bitmap_free(r->held), NULL);
	return 0;
}

bool cc_cg_rec_held_by(const struct cc_noderec *r, const char *rec_cgroup, enum cc_cg_mode m,
		       const char *carve_cgroup)
{
	char pk[PATH_MAX];

	switch (cg_rec_kind(r)) {
	case K_EXCLUSIVE:
		return m == CC_MODE_REMOTE && cc_cg_below(carve_cgroup, rec_cgroup);
	case K_PARKED:
		return m != CC_MODE_CPUSET_ONLY &&
		       cc_cg_parked_cgroup(m, carve_cgroup, pk, sizeof(pk), &(struct cc_err)CC_ERR_INIT) == 0 &&
		       !strcmp(pk, rec_cgroup);
	default:
		return false;
	}
}

/* Whether carve c owns record r: listed, or its share in r's held CPUs. */
bool cg_owns(const struct cc_noderec *r, const struct cc_cg_carve *c)
{
	enum rec_kind k = cg_rec_kind(r);
	hwloc_const_bitmap_t share;

	if (cc_noderec_share(r, c->id))
		return true;
	if (!cg_held_kind(k) || !r->held || !(share = cg_held_share(c, k)) || hwloc_bitmap_iszero(share))
		return false;
	return hwloc_bitmap_intersects(r->held, share);
}

static void vmsg(struct cc_cg_msgs *m, bool note, const char *fmt, va_list ap)
{
	if (!m || m->n >= CC_CG_MSG_MAX)
		return;
	m->note[m->n] = note;
	vsnprintf(m->line[m->n++], sizeof(m->line[0]), fmt, ap);
}

void cg_msg(struct cc_cg_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, false, fmt, ap);
	va_end(ap);
}

void cg_note(struct cc_cg_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, true, fmt, ap);
	va_end(ap);
}

/* ---- records: keys, values ------------------------------------------- */

int cg_rec_key(char *buf, size_t len, const char *cgroup, const char *file, struct cc_err *err)
{
	return cc_path(buf, len, err, "%s/%s", strcmp(cgroup, "/") ? cgroup : "", file);
}

/* "<cgroup>/<file>" back into its parts. */
int cg_rec_split(const struct cc_noderec *r, char *cgroup, size_t len, const char **file, struct cc_err *err)
{
	const char *slash = strrchr(r->path, '/');

	if (!slash || slash == r->path || !slash[1])
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": \"%.200s\" is not a cgroup file", r->path);
	snprintf(cgroup, len, "%.*s", (int)(slash - r->path), r->path);
	*file = slash + 1;
	return 0;
}

int cg_parse_cpus(const char *s, hwloc_bitmap_t out, const struct cc_noderec *r, const char *field,
		      struct cc_err *err)
{
	char what[PATH_MAX + 64];

	snprintf(what, sizeof(what), "sections." CC_CG_SECTION ": %s.%s", r->path, field);
	return cc_cpulist_parse(s, out, what, err);
}

/* A quota record's value while owned: no quota at all. A pod holding a
 * carve has no quota, as the kubelet does since 1.33
 * (DisableCPUQuotaWithExclusiveCPUs removes the pod-level quota of a pod
 * with exclusive CPUs): CFS bandwidth throttles per period, so a quota
 * even above the carves' average throttles a busy carve beside its pod's
 * other containers and the pause process. */
static int rec_quota_value(const struct cc_noderec *r, char **value, struct cc_err *err)
{
	long long quota, period;
	char buf[64];

	/* The schema checked the record's values as it was read (check_rec);
	 * a record made here has the kernel's value as orig. */
	if (cc_cg_parse_cpu_max(r->orig, &quota, &period) < 0)
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s.orig: \"%.32s\" is not a cpu.max value",
				  r->path, r->orig);
	snprintf(buf, sizeof(buf), "max %lld", period);
	return (*value = strdup(buf)) ? 0 : cc_err_sys(err, ENOMEM, "cgroup record");
}

int cg_rec_taken(const struct cc_noderec *r, hwloc_bitmap_t all, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t share = hwloc_bitmap_alloc();

	if (!share)
		return cc_err_sys(err, ENOMEM, "cgroup record");
	for (int i = 0; i < r->nowners; i++) {
		char field[300];

		snprintf(field, sizeof(field), "owners.%.256s", r->owners[i].id);
		if (cg_parse_cpus(r->owners[i].share, share, r, field, err) < 0)
			return -1;
		hwloc_bitmap_or(all, all, share);
	}
	if (r->held)
		hwloc_bitmap_or(all, all, r->held);
	return 0;
}

/* A peer or shared cgroup keeps its CPUs less the taken ones, and must
 * keep some. */
static int rec_peer_cpus(const struct cc_noderec *r, enum rec_kind k, hwloc_const_bitmap_t parent_cpus,
			 hwloc_const_bitmap_t taken, hwloc_bitmap_t set, struct cc_err *err)
{
	/* An empty cpuset.cpus inherits: its CPUs are the parent's. */
	if (r->orig[0]) {
		if (cg_parse_cpus(r->orig, set, r, "orig", err) < 0)
			return -1;
	} else if (parent_cpus) {
		hwloc_bitmap_copy(set, parent_cpus);
	} else {
		return cc_err_set(err, EINVAL, "%s: the parent's CPUs are needed for an inheriting peer", r->path);
	}
	hwloc_bitmap_andnot(set, set, taken);
	if (hwloc_bitmap_iszero(set) && k == K_SHARED)
		return cc_err_set(err, ENOSPC, "shared-pool container cgroup %.*s would be left without CPUs",
				  (int)(strrchr(r->path, '/') - r->path), r->path);
	if (hwloc_bitmap_iszero(set))
		return cc_err_set(err, ENOSPC, "cpuset-only mode: peer cgroup %.*s would be left without CPUs",
				  (int)(strrchr(r->path, '/') - r->path), r->path);
	return 0;
}

int cc_cg_rec_value(const struct cc_noderec *r, hwloc_const_bitmap_t parent_cpus, char **value,
		    struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	enum rec_kind k = cg_rec_kind(r);

	*value = NULL;
	if (!set || !all)
		return cc_err_sys(err, ENOMEM, "cgroup record");
	if (k == K_UNKNOWN)
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s: unknown kind \"%s\"", r->path, r->kind);
	if (!r->orig && k != K_PARKED)
		return cc_err_set(err, EINVAL, "sections." CC_CG_SECTION ": %s: orig null is for a parked cgroup only",
				  r->path);
	/* The last owner gone: the original, as it was. */
	if (!cc_noderec_owned(r)) {
		if (r->orig && !(*value = strdup(r->orig)))
			return cc_err_sys(err, ENOMEM, "cgroup record");
		return 0;
	}
	if (k == K_QUOTA)
		return rec_quota_value(r, value, err);
	if (cg_rec_taken(r, all, err) < 0)
		return -1;
	switch (k) {
	case K_EXCLUSIVE:
	case K_PARKED:
		if (r->orig && cg_parse_cpus(r->orig, set, r, "orig", err) < 0)
			return -1;
		hwloc_bitmap_or(set, set, all);
		break;
	case K_PEER:
	case K_SHARED:
		if (rec_peer_cpus(r, k, parent_cpus, all, set, err) < 0)
			return -1;
		break;
	default:
		break;
	}
	*value = cc_cpulist_format(set);
	return *value ? 0 : cc_err_sys(err, ENOMEM, "cgroup record");
}

/* Two values of a record's file mean the same: sets compare as sets,
 * cpu.max as its two numbers; NULL (no cgroup) only equals NULL.  A
 * recorded value always parses (the schema checked it as it was read);
 * one the kernel gave that does not is compared byte for byte. */
bool cg_same(enum rec_kind k, const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	if (k == K_QUOTA) {
		long long qa, pa, qb, pb;

		if (cc_cg_parse_cpu_max(a, &qa, &pa) < 0 || cc_cg_parse_cpu_max(b, &qb, &pb) < 0)
			return !strcmp(a, b);
		return qa == qb && pa == pb;
	}
	{
		_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc();
		_cleanup_bitmap_ hwloc_bitmap_t y = hwloc_bitmap_alloc();
		struct cc_err ignored = CC_ERR_INIT;

		if (!x || !y || cc_cpulist_parse(a, x, "a", &ignored) < 0 || cc_cpulist_parse(b, y, "b", &ignored) < 0)
			return !strcmp(a, b);
		return hwloc_bitmap_isequal(x, y);
	}
}

/* The file holds what corecarve left there: what it wrote last, a write
 * that was in flight, or — never written — the original. */
bool cc_cg_rec_ours(const struct cc_noderec *r, const char *cur)
{
	enum rec_kind k = cg_rec_kind(r);

	/* A parked cgroup corecarve made that reads empty is corecarve's: not
	 * filled yet, or emptied by an undo interrupted before its rmdir
	 * (nobody else writes corecarve's own cgroup). */
	if (k == K_PARKED && !r->orig && cur && !cur[0])
		return true;
	if (r->pending && cg_same(k, cur, r->pending))
		return true;
	return cg_same(k, cur, r->set ? r->set : r->orig);
}

/* ---- reading ----------------------------------------------------------- */

/* A control file's value; *out NULL when the cgroup or the file is gone. */
int cg_read_opt(const struct cc_cg *cg, const char *cgroup, const char *file, char **out, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;

	*out = cc_cg_read(cg, cgroup, file, &e);
	if (*out || cc_cg_gone(e.code))
		return 0;
	*err = e;
	return -1;
}
