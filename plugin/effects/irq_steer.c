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

/* Write-ahead: commit the plan's journal before the first write, with an
 * irqbalance record that recognises the file whether or not a crash let
 * its rewrite happen: the first time, the new record (it holds the
 * operator's values; the file holds them or corecarve's); then the old
 * one with the new list pending; when giving back, the old one (a file
 * already given back reads as the operator's own). */
static int journal(struct cc_ledger *l, struct cc_irq_plan *plan, const struct cc_irq_state *st,
		   const struct cc_irqbalance_pending *ib, const struct cc_irq_opts *o, struct cc_err *later,
		   struct cc_err *err)
{
	const struct cc_irqbalance_rec *old = &st->irqbalance;
	const struct cc_irqbalance_rec *keep = ib && ib->next.active && !old->active ? &ib->next : old;
	struct cc_irqbalance_rec *j = &plan->journal.irqbalance;
	struct cc_err *e = o->best_effort ? later : err;

	if (cc_irqbalance_rec_copy(j, keep) < 0 ||
	    (ib && ib->next.active && old->active && !(j->pending = hwloc_bitmap_dup(ib->next.banned)))) {
		cc_err_sys(e, ENOMEM, "IRQ journal");
		return o->best_effort ? 0 : -1;
	}
	if (cc_irq_state_store(l, &plan->journal, e) < 0 || cc_ledger_commit(l, e) < 0) {
		if (o->best_effort)
			return 0; /* giving back matters more than the journal */
		restore_section(l, st);
		return cc_err_prefix(err, "IRQ journal");
	}
	cc_fault(cc_ledger_fault(l), "after-irq-journal");
	return 0;
}

int cc_irq_reconcile(struct cc_ledger *l, const struct cc_irq_opts *o, struct cc_irq_report *rep,
		     struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t avoid = cc_irq_avoid(l, o->except);
	_cleanup_free_ enum cc_irq_outcome *outcome = NULL;
	struct cc_irq_apply_opts ao = { .best_effort = o->best_effort, .trace = o->trace, .fault = cc_ledger_fault(l) };
	struct cc_irqbalance_pending ib = { 0 };
	struct cc_irq_state st;
	struct cc_irq_table t = { 0 };
	struct cc_irq_plan plan = { 0 };
	struct cc_err later = CC_ERR_INIT; /* best effort: the first failure, returned at the end */
	bool ib_ok = true;
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (!avoid)
		return cc_err_sys(err, ENOMEM, "IRQ reconcile");
	if (cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &st, err) < 0)
		return cc_err_prefix(err, "%s/" CC_LEDGER_FILE, cc_ledger_dir(l));
	/* Everything is read and decided before the first write. */
	if (cc_irq_table_read(o->root, &t, err) < 0 || cc_irq_plan(&t, &st, avoid, o->fb, &plan, err) < 0)
		goto out;
	if (cc_irqbalance_prepare(o->root, &st.irqbalance, avoid, &ib, o->best_effort ? &later : err) < 0) {
		if (!o->best_effort)
			goto out;
		ib_ok = false;
	}
	/* A read-only /etc is the OS's choice, not a failure: the IRQs are
	 * steered, the record stays as it was (nothing of irqbalance is
	 * journaled or told) and the report warns. */
	if (ib_ok && ib.read_only) {
		cc_irqbalance_read_only(&ib, &rep->irqbalance);
		ib_ok = false;
	}
	outcome = calloc((size_t)plan.n + 1, sizeof(*outcome));
	if (!outcome) {
		cc_err_sys(err, ENOMEM, "IRQ reconcile");
		goto out;
	}
	if ((plan.n || (ib_ok && ib.new_text)) && journal(l, &plan, &st, ib_ok ? &ib : NULL, o, &later, err) < 0)
		goto out;
	if (cc_irq_apply(o->root, &plan, &st, &ao, outcome, o->best_effort ? &later : err) < 0 && !o->best_effort) {
		restore_section(l, &st);
		goto out;
	}
	if (ib_ok && cc_irqbalance_write(o->root, &ib, &rep->irqbalance, o->best_effort ? &later : err) < 0) {
		if (!o->best_effort) {
			cc_irq_undo(o->root, &plan, outcome, o->trace, err);
			restore_section(l, &st);
			goto out;
		}
		ib_ok = false;
	}
	if (ib_ok && rep->irqbalance.read_only)
		ib_ok = false; /* found read-only only at the write: as above */
	if (ib_ok) {
		cc_irqbalance_rec_fini(&plan.next.irqbalance);
		plan.next.irqbalance = ib.next;
		cc_irqbalance_rec_init(&ib.next);
	}
	if (cc_irq_state_store(l, &plan.next, err) < 0) {
		if (!o->best_effort) {
			cc_irq_undo(o->root, &plan, outcome, o->trace, err);
			restore_section(l, &st);
		}
		goto out;
	}
	report(&plan, outcome, rep);
	if (ib_ok)
		cc_irqbalance_notify(o->root, &ib, o->notify, &rep->irqbalance);
	if (cc_err_isset(&later)) {
		*err = later;
		goto out;
	}
	rc = 0;
out:
	cc_irqbalance_pending_fini(&ib);
	cc_irq_plan_fini(&plan);
	cc_irq_table_fini(&t);
	cc_irq_state_fini(&st);
	return rc;
}
