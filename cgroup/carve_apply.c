/* corecarve: a carve's plan applied, its writes read back (carve.c has the
 * record rules; cgroup_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_int.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"

/* ---- apply ------------------------------------------------------------- */

bool cg_is_cpuset_file(const char *file)
{
	return !strcmp(file, "cpuset.cpus") || !strcmp(file, "cpuset.mems") || !strcmp(file, "cpuset.cpus.exclusive");
}

/* A value into a file: sets only when they differ (a cpuset write that
 * changes nothing still costs the kernel a rebuild of the domains). */
int cg_put(struct cc_cg *cg, const char *cgroup, const char *file, const char *value, struct cc_err *err)
{
	if (cg_is_cpuset_file(file)) {
		_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
		char what[PATH_MAX + 64];

		snprintf(what, sizeof(what), "%s/%s", cgroup, file);
		if (!set)
			return cc_err_sys(err, ENOMEM, "cgroup");
		if (cc_cpulist_parse(value, set, what, err) < 0)
			return -1;
		return cg_write_cpus(cg, cgroup, file, set, NULL, err);
	}
	return cc_cg_write(cg, cgroup, file, value, NULL, err);
}

static int step_do(struct cc_cg *cg, const struct cc_cg_step *s, struct cc_err *err)
{
	switch (s->op) {
	case STEP_MKDIR:
		return cc_cg_mkdir(cg, s->cgroup, err);
	case STEP_PARTITION:
		return cg_make_partition(cg, s->cgroup, !strcmp(s->value, "isolated"), NULL, err);
	case STEP_FAULT:
		cc_fault(cg->fault, "mid-cgroup-write");
		return 0;
	case STEP_WRITE:
		break;
	}
	return cg_put(cg, s->cgroup, s->file, s->value, err);
}

/* A cgroup runs on exactly the CPUs it was given: nothing else proves it
 * (Linux 7.0 strips CPUs a sibling partition holds instead of failing the
 * write, and keeps the partition valid on what is left). */
static int check_effective(struct cc_cg *cg, const char *cgroup, const char *file, hwloc_const_bitmap_t want,
			   const char *what, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_free_ char *g = NULL, *w = NULL;

	if (!got)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (cc_cg_read_cpus(cg, cgroup, file, got, err) < 0)
		return -1;
	if (hwloc_bitmap_isequal(got, want))
		return 0;
	g = cc_cpulist_format(got);
	w = cc_cpulist_format(want);
	return cc_err_set(err, EIO,
			  "%s/%s reads \"%s\", not the carved \"%s\": the kernel runs %s on other CPUs "
			  "(a partition elsewhere holds some of them?); refused",
			  cgroup, file, g ? g : "?", w ? w : "?", what);
}

/* The carve's memory nodes, read back like its CPUs: a parent whose
 * cpuset.mems leaves them out makes the kernel place the memory on the
 * parent's nodes instead (effective = the parent's when nothing is left),
 * which would turn `memory: local` silently into remote memory.  That is
 * a refusal, with the fix in the message. */
static int check_mems(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_free_ char *g = NULL, *w = NULL;

	if (!got)
		return cc_err_sys(err, ENOMEM, "cgroup");
	if (cc_cg_read_cpus(cg, c->cgroup, "cpuset.mems.effective", got, err) < 0)
		return -1;
	if (hwloc_bitmap_isequal(got, c->mems))
		return 0;
	g = cc_cpulist_format(got);
	w = cc_cpulist_format(c->mems);
	return cc_err_set(err, EIO,
			  "%s/cpuset.mems.effective reads \"%s\", not the carve's memory nodes \"%s\": a parent's "
			  "cpuset.mems leaves them out; refused (allow those nodes in the parents' cpuset.mems)",
			  c->cgroup, g ? g : "?", w ? w : "?");
}

/* The parked partition holds every parked sibling it was given. */
static int check_parked(struct cc_cg *cg, const struct cc_cg_plan *plan, const struct cc_noderecs *recs,
			struct cc_err *err)
{
	for (int i = 0; i < plan->n; i++) {
		const struct cc_cg_step *s = &plan->steps[i];
		_cleanup_bitmap_ hwloc_bitmap_t want = NULL;
		const struct cc_noderec *r;
		struct cc_err e = CC_ERR_INIT;

		if (!s->rec || strcmp(s->file, "cpuset.cpus") || !(r = cc_noderecs_find(recs, s->rec)) ||
		    strcmp(r->kind, "parked") || !r->set)
			continue;
		want = hwloc_bitmap_alloc();
		if (!want)
			return cc_err_sys(err, ENOMEM, "cgroup");
		if (cc_cpulist_parse(r->set, want, r->path, &e) < 0) {
			*err = e;
			return -1;
		}
		return check_effective(cg, s->cgroup, "cpuset.cpus.effective", want, "the parked siblings", err);
	}
	return 0;
}

/* A peer's cgroup that went between the plan and its write (its container
 * exited: ENOENT, or ENODEV while the kernel removes it) has nothing left
 * to narrow: the carve goes on without it, and its record goes (undo
 * treats the same case alike).  True when `e` says so for a peer step. */
static bool peer_gone(const struct cc_cg_step *s, struct cc_noderecs *recs, const struct cc_err *e)
{
	struct cc_noderec *r = s->rec ? cc_noderecs_find(recs, s->rec) : NULL;

	if (!r || (cg_rec_kind(r) != K_PEER && cg_rec_kind(r) != K_SHARED) || !cc_cg_gone(e->code))
		return false;
	cc_noderecs_del(recs, s->rec);
	return true;
}

int cc_cg_apply_plan(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_err *err)
{
	for (plan->done = 0; plan->done < plan->n; plan->done++) {
		struct cc_cg_step *s = &plan->steps[plan->done];
		struct cc_err e = CC_ERR_INIT;
		struct cc_noderec *r;

		if (step_do(cg, s, &e) < 0) {
			if (peer_gone(s, recs, &e))
				continue;
			*err = e;
			goto fail;
		}
		if (!s->rec || !(r = cc_noderecs_find(recs, s->rec)))
			continue;
		{
			_cleanup_free_ char *now = cc_cg_read(cg, s->cgroup, s->file, &e);

			if (!now && peer_gone(s, recs, &e))
				continue;
			if (!now) {
				*err = e;
				goto fail;
			}
			if (cc_noderec_put(&r->set, now) < 0 || cc_noderec_put(&r->pending, NULL) < 0) {
				cc_err_sys(err, ENOMEM, "cgroup records");
				goto fail;
			}
		}
	}
	if (!hwloc_bitmap_iszero(c->mems) && check_mems(cg, c, err) < 0)
		goto fail;
	/* A shared pool's cgroup runs wherever the pool is. */
	if (!c->exclusive)
		return 0;
	if (check_effective(cg, c->cgroup, "cpuset.cpus.effective", c->cpus, "the container", err) < 0 ||
	    (c->mode != CC_MODE_CPUSET_ONLY && cc_cg_exists(cg, c->cgroup, "cpuset.cpus.exclusive.effective") &&
	     check_effective(cg, c->cgroup, "cpuset.cpus.exclusive.effective", c->cpus, "the container", err) < 0) ||
	    check_parked(cg, plan, recs, err) < 0)
		goto fail;
	return 0;
fail:
	return cc_err_prefix(err, "%s (%s)", c->cgroup, cc_cg_mode_name(c->mode));
}
