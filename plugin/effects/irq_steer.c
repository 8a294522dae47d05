/* One IRQ reconcile under the ledger lock: read /proc/irq and the records,
 * decide, write the IRQs, then irqbalance's file, then store the records.
 * The hook runs it on carve (strict) and release (best effort); `corecarve
 * irq reconcile` runs it for IRQs that appeared since. */
#define _GNU_SOURCE
#include "irq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fault.h"

static void report(const struct cc_irq_plan *p, const enum cc_irq_outcome *outcome, struct cc_irq_report *rep)
{
	size_t used = 0;

	for (int i = 0; i < p->n; i++) {
		if (outcome[i] == CC_IRQ_VANISHED)
			rep->vanished++;
		if (outcome[i] != CC_IRQ_WRITTEN)
			continue;
		if (p->steps[i].why == CC_IRQ_WHY_RESTORE)
			rep->restored++;
		else
			rep->moved++;
		rep->fell_back += p->steps[i].fell_back;
	}
	rep->foreign = p->dropped_foreign;
	rep->unmovable_list[0] = '\0';
	for (int i = 0; i < p->next.n; i++) {
		const struct cc_irq_rec *r = &p->next.recs[i];
		char one[24];
		int w;

		if (!r->unmovable)
			continue;
		rep->unmovable++;
		if (r->irq == CC_IRQ_DEFAULT)
			snprintf(one, sizeof(one), "%sdefault", used ? " " : "");
		else
			snprintf(one, sizeof(one), "%s%d", used ? " " : "", r->irq);
		w = (int)strlen(one);
		if (used + (size_t)w + 4 < sizeof(rep->unmovable_list)) {
			memcpy(rep->unmovable_list + used, one, (size_t)w + 1);
			used += (size_t)w;
		} else if (used + 4 < sizeof(rep->unmovable_list) && strcmp(rep->unmovable_list + used - 3, "...")) {
			memcpy(rep->unmovable_list + used, "...", 4);
			used += 3;
		}
	}
}

/* A strict reconcile that failed leaves the section as it found it. */
static void restore_section(struct cc_ledger *l, const struct cc_irq_state *st)
{
	struct cc_err ignored = CC_ERR_INIT;

	cc_irq_state_store(l, st, &ignored);
}

/* The journal put in the ledger (not committed): the plan's records with
 * an irqbalance record that recognises the file whether or not a crash let
 * its rewrite happen: the first time, the new record (it holds the
 * operator's values; the file holds them or corecarve's); then the old
 * one with the new list pending; when giving back, the old one (a file
 * already given back reads as the operator's own). */
static int journal(struct cc_ledger *l, struct cc_irq_pass *p, const struct cc_irq_opts *o, struct cc_err *err)
{
	const struct cc_irqbalance_pending *ib = p->ib_ok ? &p->ib : NULL;
	const struct cc_irqbalance_rec *old = &p->st.irqbalance;
	const struct cc_irqbalance_rec *keep = ib && ib->next.active && !old->active ? &ib->next : old;
	struct cc_irqbalance_rec *j = &p->plan.journal.irqbalance;
	struct cc_err *e = o->best_effort ? &p->later : err;

	if (cc_irqbalance_rec_copy(j, keep) < 0 ||
	    (ib && ib->next.active && old->active && !(j->pending = hwloc_bitmap_dup(ib->next.banned)))) {
		cc_err_sys(e, ENOMEM, "IRQ journal");
		return o->best_effort ? 0 : -1;
	}
	if (cc_irq_state_store(l, &p->plan.journal, e) < 0) {
		if (o->best_effort)
			return 0; /* giving back matters more than the journal */
		restore_section(l, &p->st);
		return cc_err_prefix(err, "IRQ journal");
	}
	p->journaled = true;
	return 0;
}

int cc_irq_pass_plan(struct cc_ledger *l, const struct cc_irq_opts *o, struct cc_irq_pass *p, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t avoid = cc_irq_avoid(l, o->except);

	memset(p, 0, sizeof(*p));
	p->later = (struct cc_err)CC_ERR_INIT;
	p->ib_ok = true;
	if (!avoid)
		return cc_err_sys(err, ENOMEM, "IRQ reconcile");
	if (cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &p->st, err) < 0)
		return cc_err_prefix(err, "%s/" CC_LEDGER_FILE, cc_ledger_dir(l));
	p->parsed = true;
	/* Everything is read and decided before the first write. */
	if (cc_irq_table_read(o->root, &p->t, err) < 0 || cc_irq_plan(&p->t, &p->st, avoid, o->fb, &p->plan, err) < 0)
		return -1;
	if (cc_irqbalance_prepare(o->root, &p->st.irqbalance, avoid, &p->ib, o->best_effort ? &p->later : err) < 0) {
		if (!o->best_effort)
			return -1;
		p->ib_ok = false;
	}
	/* A read-only /etc is the OS's choice, not a failure: the IRQs are
	 * steered, the record stays as it was (nothing of irqbalance is
	 * journaled or told) and the report warns. */
	if (p->ib_ok && p->ib.read_only) {
		cc_irqbalance_read_only(&p->ib, &p->read_only);
		p->ib_ok = false;
	}
	p->outcome = calloc((size_t)p->plan.n + 1, sizeof(*p->outcome));
	if (!p->outcome)
		return cc_err_sys(err, ENOMEM, "IRQ reconcile");
	if (p->plan.n || (p->ib_ok && p->ib.new_text))
		return journal(l, p, o, err);
	return 0;
}

int cc_irq_pass_apply(struct cc_ledger *l, const struct cc_irq_opts *o, struct cc_irq_pass *p,
		      struct cc_irq_report *rep, struct cc_err *err)
{
	struct cc_irq_apply_opts ao = { .best_effort = o->best_effort, .trace = o->trace, .fault = cc_ledger_fault(l) };
	struct cc_err *e = o->best_effort ? &p->later : err;

	memset(rep, 0, sizeof(*rep));
	rep->irqbalance = p->read_only;
	if (cc_irq_apply(o->root, &p->plan, &p->st, &ao, p->outcome, e) < 0 && !o->best_effort) {
		restore_section(l, &p->st);
		return -1;
	}
	if (p->ib_ok && cc_irqbalance_write(o->root, &p->ib, &rep->irqbalance, e) < 0) {
		if (!o->best_effort) {
			cc_irq_undo(o->root, &p->plan, p->outcome, o->trace, err);
			restore_section(l, &p->st);
			return -1;
		}
		p->ib_ok = false;
	}
	if (p->ib_ok && rep->irqbalance.read_only)
		p->ib_ok = false; /* found read-only only at the write: as above */
	if (p->ib_ok) {
		cc_irqbalance_rec_fini(&p->plan.next.irqbalance);
		p->plan.next.irqbalance = p->ib.next;
		cc_irqbalance_rec_init(&p->ib.next);
	}
	if (cc_irq_state_store(l, &p->plan.next, err) < 0) {
		if (!o->best_effort) {
			cc_irq_undo(o->root, &p->plan, p->outcome, o->trace, err);
			restore_section(l, &p->st);
		}
		return -1;
	}
	report(&p->plan, p->outcome, rep);
	if (p->ib_ok)
		cc_irqbalance_notify(o->root, &p->ib, o->notify, &rep->irqbalance);
	if (cc_err_isset(&p->later)) {
		*err = p->later;
		return -1;
	}
	return 0;
}

void cc_irq_pass_fini(struct cc_irq_pass *p)
{
	cc_irqbalance_pending_fini(&p->ib);
	cc_irq_plan_fini(&p->plan);
	cc_irq_table_fini(&p->t);
	if (p->parsed)
		cc_irq_state_fini(&p->st);
	free(p->outcome);
	memset(p, 0, sizeof(*p));
}

int cc_irq_reconcile(struct cc_ledger *l, const struct cc_irq_opts *o, struct cc_irq_report *rep,
		     struct cc_err *err)
{
	struct cc_irq_pass p;
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (cc_irq_pass_plan(l, o, &p, err) < 0)
		goto out;
	/* Write-ahead: the journal on disk before the first write. */
	if (p.journaled) {
		if (cc_ledger_commit(l, o->best_effort ? &p.later : err) < 0) {
			if (!o->best_effort) {
				restore_section(l, &p.st);
				cc_err_prefix(err, "IRQ journal");
				goto out;
			}
		} else {
			cc_fault(cc_ledger_fault(l), "after-irq-journal");
		}
	}
	rc = cc_irq_pass_apply(l, o, &p, rep, err);
out:
	if (rc < 0 && p.read_only.warning[0] && !rep->irqbalance.warning[0])
		rep->irqbalance = p.read_only;
	cc_irq_pass_fini(&p);
	return rc;
}
