/* Power decisions: pure functions of the targets a probe found, the
 * records of the ledger and the live carves.  Nothing here reads or writes
 * a file (power.h says what the records mean). */
#define _GNU_SOURCE
#include "power.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cc_power_plan_fini(struct cc_power_plan *plan)
{
	free(plan->steps);
	cc_noderecs_fini(&plan->next);
	memset(plan, 0, sizeof(*plan));
}

static int add_step(struct cc_power_plan *plan, const char *path, enum cc_power_kind kind, const char *from,
		    const char *to)
{
	struct cc_power_step *grown = realloc(plan->steps, (size_t)(plan->n + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	plan->steps = grown;
	memset(&grown[plan->n], 0, sizeof(grown[0]));
	snprintf(grown[plan->n].path, sizeof(grown[0].path), "%s", path);
	grown[plan->n].kind = kind;
	snprintf(grown[plan->n].from, sizeof(grown[0].from), "%s", from);
	snprintf(grown[plan->n].to, sizeof(grown[0].to), "%s", to);
	plan->n++;
	return 0;
}

int cc_power_plan(const struct cc_noderecs *st, const struct cc_power_targets *t, const char *id,
		  struct cc_power_plan *plan, struct cc_err *err)
{
	memset(plan, 0, sizeof(*plan));
	if (cc_power_recs_copy(&plan->next, st) < 0)
		return cc_err_sys(err, ENOMEM, "power plan");
	plan->msgs = t->msgs;
	for (int i = 0; i < t->n; i++) {
		const struct cc_power_target *tg = &t->t[i];
		struct cc_noderec *r = cc_noderecs_find(&plan->next, tg->path);

		if (r && r->nowners && strcmp(cc_power_rec_value(r), tg->want) != 0) {
			/* Shared with a carve whose class wants another
			 * value: the first one keeps it (a write now would
			 * change a running neighbour). */
			cc_power_warn(&plan->msgs, "power.%s: %s is held at \"%s\" for %s%s; \"%s\" not applied",
				      cc_power_kind_name(tg->kind), tg->path, cc_power_rec_value(r), r->owners[0].id,
				      r->nowners > 1 ? " and others" : "", tg->want);
			continue;
		}
		if (!r) {
			/* Not recorded: the original is its value now, and a
			 * file that holds the value wanted already is recorded
			 * (for the count of owners) but not written. */
			r = cc_noderecs_add(&plan->next, tg->path, cc_power_kind_name(tg->kind), tg->cur);
			if (!r)
				goto nomem;
		}
		/* Same value, or a record no carve owns any more (its restore
		 * failed): this carve takes it, the original stays what it was
		 * before corecarve's first write. */
		if (strcmp(cc_power_rec_value(r), tg->want) != 0 || strcmp(tg->cur, tg->want) != 0) {
			if (add_step(plan, tg->path, tg->kind, tg->cur, tg->want) < 0 ||
			    cc_noderec_put(&r->pending, tg->want) < 0)
				goto nomem;
		}
		if (cc_power_rec_add_owner(r, id) < 0)
			goto nomem;
	}
	return 0;
nomem:
	cc_power_plan_fini(plan);
	return cc_err_sys(err, ENOMEM, "power plan");
}

static bool is_live(const char *const *live, const char *id)
{
	for (; live && *live; live++)
		if (!strcmp(*live, id))
			return true;
	return false;
}

/* A record no live carve owns any more, with its place in `st` (and in
 * now->value, in the same order). */
struct orphan {
	const struct cc_noderec *r;
	int at;
};

static int by_seq_desc(const void *a, const void *b)
{
	const struct orphan *x = a, *y = b;

	return x->r->seq < y->r->seq ? 1 : x->r->seq > y->r->seq ? -1 : 0;
}

int cc_power_release_plan(const struct cc_noderecs *st, const struct cc_power_now *now,
			  const char *const *live, struct cc_power_plan *plan, struct cc_err *err)
{
	struct orphan *orphans = NULL;
	int norphans = 0;

	memset(plan, 0, sizeof(*plan));
	if (now->n != st->n)
		return cc_err_set(err, EINVAL, "power release: %d values for %d records", now->n, st->n);
	if (cc_power_recs_copy(&plan->next, st) < 0)
		return cc_err_sys(err, ENOMEM, "power release");
	orphans = calloc((size_t)st->n + 1, sizeof(*orphans));
	if (!orphans)
		goto nomem;
	for (int i = 0; i < plan->next.n; i++) {
		struct cc_noderec *r = plan->next.r[i];

		for (int k = r->nowners - 1; k >= 0; k--)
			if (!is_live(live, r->owners[k].id))
				cc_noderec_del_owner(r, r->owners[k].id);
		if (!r->nowners)
			orphans[norphans++] = (struct orphan){ st->r[i], i };
	}
	qsort(orphans, (size_t)norphans, sizeof(*orphans), by_seq_desc);
	for (int i = 0; i < norphans; i++) {
		const struct cc_noderec *r = orphans[i].r;
		const char *cur = now->value[orphans[i].at];
		enum cc_power_kind kind = cc_power_rec_kind(r);

		if (!cur) {
			cc_power_warn(&plan->msgs, "power.%s: %s is gone; nothing to restore", r->kind, r->path);
		} else if (!strcmp(cur, r->orig)) {
			/* Back already (a crash after the write, before the
			 * commit; or never written). */
		} else if (cc_power_rec_ours(r, cur)) {
			/* What corecarve wrote, or the write a crash left in
			 * flight. */
			if (add_step(plan, r->path, kind, cur, r->orig) < 0)
				goto nomem;
		} else {
			cc_power_warn(&plan->msgs,
				      "power.%s: %s was changed to \"%s\" since corecarve set \"%s\"; left as it is "
				      "(it was \"%s\" before)",
				      r->kind, r->path, cur, cc_power_rec_value(r), r->orig);
		}
	}
	/* What remains once the steps are written: the records still owned. */
	for (int i = plan->next.n - 1; i >= 0; i--)
		if (!plan->next.r[i]->nowners)
			cc_noderecs_del(&plan->next, plan->next.r[i]->path);
	free(orphans);
	return 0;
nomem:
	free(orphans);
	cc_power_plan_fini(plan);
	return cc_err_sys(err, ENOMEM, "power release");
}
