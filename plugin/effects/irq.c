/* IRQ steering decisions: pure functions of the table read from /proc/irq,
 * the records of the ledger section "irq" and the CPUs to avoid. */
#define _GNU_SOURCE
#include "irq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "topo.h"

hwloc_bitmap_t cc_irq_avoid(const struct cc_ledger *l, const char *except)
{
	return cc_ledger_held(l, except, true);
}

bool cc_irq_same_device(const char *recorded, const char *now)
{
	return !recorded[0] || !now[0] || !strcmp(recorded, now);
}

static hwloc_const_bitmap_t node_cpus(const struct cc_irq_fallback *fb, int node)
{
	if (!fb || node < 0)
		return NULL;
	for (int i = 0; i < fb->nnodes; i++)
		if (fb->nodes[i].node == node)
			return fb->nodes[i].cpus;
	return NULL;
}

int cc_irq_target(hwloc_const_bitmap_t cur, hwloc_const_bitmap_t avoid, int node,
		  const struct cc_irq_fallback *fb, hwloc_const_bitmap_t online, hwloc_bitmap_t out,
		  bool *fell_back, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t cand = hwloc_bitmap_alloc();
	hwloc_const_bitmap_t ncpus = node_cpus(fb, node);
	hwloc_const_bitmap_t reserved = fb ? fb->reserved : NULL;

	if (!cand)
		return cc_err_sys(err, ENOMEM, "IRQ target");
	*fell_back = false;
	hwloc_bitmap_andnot(out, cur, avoid);
	/* The kernel silently replaces a mask without an online CPU by its
	 * default affinity: that is "empty" here too. */
	if (hwloc_bitmap_intersects(out, online))
		return 0;
	*fell_back = true;
	for (int k = 0; k < 4; k++) {
		switch (k) {
		case 0: /* reserved CPUs of the device's node */
			if (!reserved || !ncpus)
				continue;
			hwloc_bitmap_and(cand, reserved, ncpus);
			break;
		case 1: /* any reserved CPU */
			if (!reserved)
				continue;
			hwloc_bitmap_copy(cand, reserved);
			break;
		case 2: /* the node's other CPUs */
			if (!ncpus)
				continue;
			hwloc_bitmap_copy(cand, ncpus);
			break;
		default:
			hwloc_bitmap_copy(cand, online);
			break;
		}
		hwloc_bitmap_andnot(cand, cand, avoid);
		hwloc_bitmap_and(cand, cand, online);
		if (!hwloc_bitmap_iszero(cand)) {
			hwloc_bitmap_copy(out, cand);
			return 0;
		}
	}
	return cc_err_set(err, ENOSPC, "no online CPU is left outside the steer-away carves for interrupts");
}

/* ---- plan ---------------------------------------------------------------- */

static int add_step(struct cc_irq_plan *p, int irq, const char *name, enum cc_irq_why why, bool fell_back,
		    hwloc_const_bitmap_t from, hwloc_const_bitmap_t to)
{
	struct cc_irq_step *grown = realloc(p->steps, (size_t)(p->n + 1) * sizeof(*grown));
	struct cc_irq_step *s;

	if (!grown)
		return -1;
	p->steps = grown;
	s = &p->steps[p->n];
	memset(s, 0, sizeof(*s));
	s->irq = irq;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->why = why;
	s->fell_back = fell_back;
	s->from = hwloc_bitmap_dup(from);
	s->to = hwloc_bitmap_dup(to);
	p->n++;
	if (!s->from || !s->to)
		return -1;
	return 0;
}

static int put_steered(struct cc_irq_state *next, int irq, const char *name, hwloc_const_bitmap_t orig,
		       hwloc_const_bitmap_t set)
{
	struct cc_irq_rec r = { .irq = irq, .orig = (hwloc_bitmap_t)orig, .set = (hwloc_bitmap_t)set };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return cc_irq_state_put(next, &r);
}

static int put_unmovable(struct cc_irq_state *next, const struct cc_irq_rec *prev, hwloc_const_bitmap_t cur)
{
	struct cc_irq_rec r = *prev;

	r.orig = (hwloc_bitmap_t)cur;
	r.set = r.pending = NULL;
	return cc_irq_state_put(next, &r);
}

/* An IRQ allocated while corecarve had steered default_smp_affinity (a
 * driver rebound, a device hot-plugged) starts with the steered default:
 * that is corecarve's doing too, and its original is the default's. */
static bool born_under_default(const struct cc_irq_state *st, hwloc_const_bitmap_t cur)
{
	const struct cc_irq_rec *def = cc_irq_state_find(st, CC_IRQ_DEFAULT);

	return def && !def->unmovable && def->set && !hwloc_bitmap_isequal(def->set, def->orig) &&
	       hwloc_bitmap_isequal(cur, def->set);
}

/* Decide one IRQ (or the default affinity). */
static int plan_one(const struct cc_irq_state *st, int irq, const char *name, hwloc_const_bitmap_t cur, int node,
		    hwloc_const_bitmap_t avoid, hwloc_const_bitmap_t online, struct cc_irq_plan *p,
		    struct cc_err *err)
{
	const struct cc_irq_rec *rec = cc_irq_state_find(st, irq);
	const struct cc_irq_fallback *fb = &p->next.fb;
	_cleanup_bitmap_ hwloc_bitmap_t want = hwloc_bitmap_alloc();
	bool restoring = hwloc_bitmap_iszero(avoid), meets = hwloc_bitmap_intersects(cur, avoid), fell = false;
	bool ours = false;
	hwloc_const_bitmap_t orig = NULL; /* set when the IRQ's affinity is corecarve's doing */
	enum cc_irq_why why = CC_IRQ_WHY_ADJUST;
	char what[48];

	if (!want)
		return cc_err_sys(err, ENOMEM, "IRQ plan");
	if (irq == CC_IRQ_DEFAULT)
		snprintf(what, sizeof(what), "/proc/irq/default_smp_affinity");
	else
		snprintf(what, sizeof(what), "IRQ %d", irq);
	/* A number freed and handed to another device: the record is stale.
	 * (A handler requested since, on an IRQ recorded without one, is the
	 * same descriptor: its affinity stayed.) */
	if (rec && irq != CC_IRQ_DEFAULT && !cc_irq_same_device(rec->name, name))
		rec = NULL;

	if (rec && rec->unmovable) {
		/* Nothing to write; keep reporting it while it meets the carves. */
		if (meets && put_unmovable(&p->next, rec, cur) < 0)
			return cc_err_sys(err, ENOMEM, "IRQ plan");
		return 0;
	}
	/* A journal left by a killed process: the write may have happened. */
	if (rec && rec->pending && hwloc_bitmap_isequal(cur, rec->pending))
		ours = true;
	else if (rec)
		ours = hwloc_bitmap_isequal(cur, rec->set);
	if (rec && ours)
		orig = rec->orig;
	else if (irq != CC_IRQ_DEFAULT && born_under_default(st, cur))
		orig = cc_irq_state_find(st, CC_IRQ_DEFAULT)->orig;
	if (rec && !orig) {
		/* Moved by someone else since corecarve wrote it: theirs now,
		 * unless it landed on carved CPUs again; then it gets what
		 * corecarve would set (so a second reconcile changes nothing),
		 * and its first original stays recorded. */
		if (!meets) {
			p->dropped_foreign++;
			return 0;
		}
		orig = rec->orig;
		why = CC_IRQ_WHY_STEER;
	}
	if (orig) {
		/* corecarve's doing: original minus the carves now, or the
		 * original itself when none is left. */
		if (restoring) {
			hwloc_bitmap_copy(want, orig);
		} else if (cc_irq_target(orig, avoid, node, fb, online, want, &fell, err) < 0) {
			return cc_err_prefix(err, "%s", what);
		}
		if (why != CC_IRQ_WHY_STEER)
			why = restoring || hwloc_bitmap_isequal(want, orig) ? CC_IRQ_WHY_RESTORE : CC_IRQ_WHY_ADJUST;
		if (!hwloc_bitmap_isequal(want, cur) && add_step(p, irq, name, why, fell, cur, want) < 0)
			return cc_err_sys(err, ENOMEM, "IRQ plan");
		/* Only a change needs a record: at its original, an IRQ has
		 * nothing to give back. */
		if (!hwloc_bitmap_isequal(want, orig) && put_steered(&p->next, irq, name, orig, want) < 0)
			return cc_err_sys(err, ENOMEM, "IRQ plan");
		return 0;
	}
	if (!meets)
		return 0;
	/* First steer: the affinity now is the original, recorded once. */
	if (cc_irq_target(cur, avoid, node, fb, online, want, &fell, err) < 0)
		return cc_err_prefix(err, "%s", what);
	if (add_step(p, irq, name, CC_IRQ_WHY_STEER, fell, cur, want) < 0 ||
	    put_steered(&p->next, irq, name, cur, want) < 0)
		return cc_err_sys(err, ENOMEM, "IRQ plan");
	return 0;
}

/* The write-ahead records: see struct cc_irq_plan. */
static int build_journal(const struct cc_irq_state *st, struct cc_irq_plan *p)
{
	if (cc_irq_state_copy(&p->journal, &p->next) < 0)
		return -1;
	for (int i = 0; i < p->n; i++) {
		const struct cc_irq_step *s = &p->steps[i];
		const struct cc_irq_rec *old = cc_irq_state_find(st, s->irq);
		struct cc_irq_rec r = { .irq = s->irq, .set = s->from, .pending = s->to };

		if (old && s->irq != CC_IRQ_DEFAULT && !cc_irq_same_device(old->name, s->name))
			old = NULL;
		/* First steer: the affinity now is the original. */
		r.orig = old && !old->unmovable ? old->orig : s->from;
		snprintf(r.name, sizeof(r.name), "%s", s->name);
		if (cc_irq_state_put(&p->journal, &r) < 0)
			return -1;
	}
	return 0;
}

int cc_irq_plan(const struct cc_irq_table *t, const struct cc_irq_state *st, hwloc_const_bitmap_t avoid,
		const struct cc_irq_fallback *fb, struct cc_irq_plan *p, struct cc_err *err)
{
	memset(p, 0, sizeof(*p));
	cc_irq_state_init(&p->next);
	cc_irq_state_init(&p->journal);
	if (cc_irq_fallback_copy(&p->next.fb, fb ? fb : &st->fb) < 0 ||
	    cc_irqbalance_rec_copy(&p->next.irqbalance, &st->irqbalance) < 0)
		goto nomem;
	/* The default first, so IRQs allocated meanwhile start off the carves. */
	if (plan_one(st, CC_IRQ_DEFAULT, "", t->default_affinity, -1, avoid, t->online, p, err) < 0)
		goto fail;
	for (int i = 0; i < t->n; i++) {
		const struct cc_irq_info *q = &t->irqs[i];

		if (plan_one(st, q->irq, q->name, q->affinity, q->node, avoid, t->online, p, err) < 0)
			goto fail;
	}
	/* Records of IRQs no longer in the table are dropped: the device went. */
	if (build_journal(st, p) < 0)
		goto nomem;
	return 0;
nomem:
	cc_err_sys(err, ENOMEM, "IRQ plan");
fail:
	cc_irq_plan_fini(p);
	return -1;
}

void cc_irq_plan_fini(struct cc_irq_plan *p)
{
	for (int i = 0; i < p->n; i++) {
		if (p->steps[i].from)
			hwloc_bitmap_free(p->steps[i].from);
		if (p->steps[i].to)
			hwloc_bitmap_free(p->steps[i].to);
	}
	free(p->steps);
	cc_irq_state_fini(&p->next);
	cc_irq_state_fini(&p->journal);
	memset(p, 0, sizeof(*p));
}

/* ---- fallback ------------------------------------------------------------ */

void cc_irq_fallback_fini(struct cc_irq_fallback *fb)
{
	if (fb->reserved)
		hwloc_bitmap_free(fb->reserved);
	for (int i = 0; i < fb->nnodes; i++)
		if (fb->nodes[i].cpus)
			hwloc_bitmap_free(fb->nodes[i].cpus);
	free(fb->nodes);
	memset(fb, 0, sizeof(*fb));
}

int cc_irq_fallback_copy(struct cc_irq_fallback *dst, const struct cc_irq_fallback *src)
{
	cc_irq_fallback_fini(dst);
	if (src->reserved && !(dst->reserved = hwloc_bitmap_dup(src->reserved)))
		return -1;
	if (!src->nnodes)
		return 0;
	dst->nodes = calloc((size_t)src->nnodes, sizeof(*dst->nodes));
	if (!dst->nodes)
		return -1;
	for (int i = 0; i < src->nnodes; i++) {
		dst->nodes[i].node = src->nodes[i].node;
		dst->nodes[i].cpus = hwloc_bitmap_dup(src->nodes[i].cpus);
		dst->nnodes = i + 1;
		if (!dst->nodes[i].cpus)
			return -1;
	}
	return 0;
}

int cc_irq_fallback_from_topo(const struct cc_topo *topo, hwloc_const_bitmap_t reserved,
			      struct cc_irq_fallback *fb, struct cc_err *err)
{
	memset(fb, 0, sizeof(*fb));
	fb->reserved = hwloc_bitmap_dup(reserved);
	fb->nodes = calloc((size_t)topo->nnuma + 1, sizeof(*fb->nodes));
	if (!fb->reserved || !fb->nodes)
		goto nomem;
	for (int i = 0; i < topo->nnuma; i++) {
		if (topo->numa[i].os < 0)
			continue;
		fb->nodes[fb->nnodes].node = topo->numa[i].os;
		fb->nodes[fb->nnodes].cpus = hwloc_bitmap_dup(topo->numa[i].cpus);
		if (!fb->nodes[fb->nnodes++].cpus)
			goto nomem;
	}
	return 0;
nomem:
	cc_irq_fallback_fini(fb);
	return cc_err_sys(err, ENOMEM, "IRQ fallback");
}
