/* Power settings into sysfs and back: probe, plan, journal, write, read
 * back, record.  Power settings make a carve better, never possible: a
 * refused write or a missing file is a warning; only a journal that
 * cannot be committed fails (nothing is written then). */
#define _GNU_SOURCE
#include "power.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fault.h"

void cc_power_now_fini(struct cc_power_now *now)
{
	for (int i = 0; i < now->n; i++)
		free(now->value[i]);
	free(now->value);
	memset(now, 0, sizeof(*now));
}

static int read_now(const struct cc_root *root, const char *path, char **out, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	char *s = cc_root_read(root, path, 4096, &e);

	*out = s;
	if (s || e.code == ENOENT || e.code == ENOTDIR)
		return 0;
	*err = e;
	return -1;
}

int cc_power_read_now(const struct cc_root *root, const struct cc_noderecs *st, struct cc_power_now *now,
		      struct cc_err *err)
{
	memset(now, 0, sizeof(*now));
	now->value = calloc((size_t)st->n + 1, sizeof(*now->value));
	if (!now->value)
		return cc_err_sys(err, ENOMEM, "power");
	now->n = st->n;
	for (int i = 0; i < st->n; i++)
		if (read_now(root, st->r[i]->path, &now->value[i], err) < 0) {
			cc_power_now_fini(now);
			return -1;
		}
	return 0;
}

/* Write one value and read it back into `back` ("" when unreadable). */
static int write_step(const struct cc_root *root, const struct cc_power_step *s, FILE *trace, char *back,
		      size_t size, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *v = NULL;
	int rc;

	if (trace)
		fprintf(trace, "corecarve: power: %s: %s -> %s\n", s->path, s->from, s->to);
	rc = cc_root_write(root, s->path, s->to, err);
	v = cc_root_read(root, s->path, 4096, &e);
	snprintf(back, size, "%s", v ? v : "");
	return rc;
}

int cc_power_pass_plan(const struct cc_root *root, struct cc_ledger *l, const struct cc_power_spec *spec,
		       const char *id, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked,
		       struct cc_power_pass *p, struct cc_power_report *rep, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cores = hwloc_bitmap_dup(cpus);
	struct cc_err e = CC_ERR_INIT;

	memset(p, 0, sizeof(*p));
	memset(rep, 0, sizeof(*rep));
	cc_noderecs_init(&p->st);
	p->id = id;
	if (!cores)
		return cc_err_sys(err, ENOMEM, "power");
	if (parked)
		hwloc_bitmap_or(cores, cores, parked);
	if (cc_power_recs_load(l, &p->st, err) < 0)
		return -1;
	/* A host whose sysfs cannot be read as expected keeps its settings:
	 * the carve itself is sound. */
	if (cc_power_probe(root, spec, cpus, cores, &p->t, &e) < 0) {
		cc_power_warn(&rep->msgs, "power: %s; settings left as they are", e.msg);
		return 0;
	}
	if (cc_power_plan(&p->st, &p->t, id, &p->plan, err) < 0)
		return -1;
	cc_power_msgs_add(&rep->msgs, &p->plan.msgs);
	/* The journal: the originals and the pending values, committed by
	 * the caller before the first write. */
	if (cc_power_recs_store(l, &p->plan.next, err) < 0)
		return -1;
	p->journaled = p->plan.n > 0;
	return 0;
}

/* A write the kernel refused: it did not happen.  The record loses this
 * carve and its pending value; without owners it goes when the file reads
 * its original, else it stays for the audit to report and put back. */
static int refused(struct cc_power_pass *p, const struct cc_power_step *s, struct cc_noderec *r, const char *back)
{
	if (!r)
		return 0;
	cc_noderec_del_owner(r, p->id);
	cc_noderec_put(&r->pending, NULL);
	if (r->nowners)
		return 0;
	if (!strcmp(back, r->orig)) {
		cc_noderecs_del(&p->plan.next, s->path);
		return 0;
	}
	return cc_noderec_put(&r->set, back);
}

int cc_power_pass_apply(const struct cc_root *root, struct cc_ledger *l, struct cc_power_pass *p, FILE *trace,
			struct cc_power_report *rep, struct cc_err *err)
{
	for (int i = 0; i < p->plan.n; i++) {
		const struct cc_power_step *s = &p->plan.steps[i];
		struct cc_noderec *r = cc_noderecs_find(&p->plan.next, s->path);
		char back[CC_POWER_VALUE_MAX];
		struct cc_err e = CC_ERR_INIT;

		if (write_step(root, s, trace, back, sizeof(back), &e) < 0) {
			cc_power_warn(&rep->msgs, "power.%s: %s; left as it is", cc_power_kind_name(s->kind), e.msg);
			if (refused(p, s, r, back) < 0)
				return cc_err_sys(err, ENOMEM, "power");
			continue;
		}
		if (i == 0)
			cc_fault(cc_ledger_fault(l), "mid-power-write");
		rep->written++;
		if (!r)
			continue;
		if (back[0] && strcmp(back, s->to) != 0)
			cc_power_warn(&rep->msgs, "power.%s: %s reads back \"%s\" after writing \"%s\"",
				    cc_power_kind_name(s->kind), s->path, back, s->to);
		/* Written: `set` as read back (what was written when it
		 * cannot be read), nothing in flight. */
		if (cc_noderec_put(&r->set, back[0] ? back : s->to) < 0)
			return cc_err_sys(err, ENOMEM, "power");
		cc_noderec_put(&r->pending, NULL);
	}
	return p->plan.n ? cc_power_recs_store(l, &p->plan.next, err) : 0;
}

void cc_power_pass_fini(struct cc_power_pass *p)
{
	cc_power_plan_fini(&p->plan);
	cc_power_targets_fini(&p->t);
	cc_noderecs_fini(&p->st);
}

int cc_power_apply(const struct cc_root *root, struct cc_ledger *l, const struct cc_power_spec *spec,
		   const char *id, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked, FILE *trace,
		   struct cc_power_report *rep, struct cc_err *err)
{
	struct cc_power_pass p;
	int rc = -1;

	if (cc_power_pass_plan(root, l, spec, id, cpus, parked, &p, rep, err) < 0)
		goto out;
	if (p.journaled) {
		/* Write-ahead: the originals are on disk before the first
		 * write, so a crash leaves records the next hook restores. */
		if (cc_ledger_commit(l, err) < 0)
			goto out;
		cc_fault(cc_ledger_fault(l), "after-power-journal");
	}
	rc = cc_power_pass_apply(root, l, &p, trace, rep, err);
out:
	cc_power_pass_fini(&p);
	return rc;
}

int cc_power_release(const struct cc_root *root, struct cc_ledger *l, const char *except, FILE *trace,
		     struct cc_power_report *rep, struct cc_err *err)
{
	_cleanup_free_ const char **live = NULL;
	struct cc_noderecs st;
	struct cc_power_now now = { 0 };
	struct cc_power_plan plan = { 0 };
	int n = 0, rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (!cc_ledger_section_get(l, CC_POWER_SECTION))
		return 0;
	cc_noderecs_init(&st);
	if (cc_ledger_refs(l, except, &live, NULL, &n) < 0)
		return cc_err_sys(err, errno ? errno : ENOMEM, "power: the carves of the ledger");
	if (cc_power_recs_load(l, &st, err) < 0 || cc_power_read_now(root, &st, &now, err) < 0 ||
	    cc_power_release_plan(&st, &now, live, &plan, err) < 0)
		goto out;
	cc_power_msgs_add(&rep->msgs, &plan.msgs);
	rep->kept = plan.msgs.nwarnings;
	rc = 0;
	for (int i = 0; i < plan.n; i++) {
		const struct cc_power_step *s = &plan.steps[i];
		struct cc_err e = CC_ERR_INIT;
		char back[CC_POWER_VALUE_MAX];

		if (write_step(root, s, trace, back, sizeof(back), &e) == 0) {
			rep->restored++;
			continue;
		}
		/* Kept without owners: the audit reports it and --fix tries
		 * again. */
		if (cc_power_recs_put(&plan.next, cc_noderecs_find(&st, s->path), false) < 0) {
			cc_err_sys(err, ENOMEM, "power");
			rc = -1;
			goto out;
		}
		if (rc == 0) {
			*err = e;
			cc_err_prefix(err, "power: restoring %s", cc_power_kind_name(s->kind));
			rc = -1;
		}
	}
	if (cc_power_recs_store(l, &plan.next, rc < 0 ? &(struct cc_err)CC_ERR_INIT : err) < 0 && rc == 0)
		rc = -1;
out:
	cc_power_plan_fini(&plan);
	cc_power_now_fini(&now);
	cc_noderecs_fini(&st);
	return rc;
}
