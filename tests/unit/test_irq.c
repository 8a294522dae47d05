/* IRQ steering: the mask arithmetic, the plan (union semantics, originals
 * recorded once, restore minus CPUs still carved, foreign changes, the
 * journal), the ledger section, and the read-only parsing of /proc/irq and
 * /proc/interrupts from trees written under a temporary --root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "irq.h"
#include "ledger_int.h" /* white-box: a ledger made in memory */
#include "sandbox.h"
#include "testlib.h"

/* ---- helpers ------------------------------------------------------------- */

static hwloc_bitmap_t L(const char *list)
{
	struct cc_err err = CC_ERR_INIT;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	ck_assert_ptr_nonnull(b);
	ck_assert_msg(cc_cpulist_parse(list, b, "test", &err) == 0, "%s", err.msg);
	return b;
}

static void eq_list(hwloc_const_bitmap_t b, const char *want)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	ck_assert_str_eq(s, want);
}

struct spec {
	int irq;
	const char *name;
	const char *aff;
	int node;
};

/* An in-memory /proc/irq: what cc_irq_table_read would return. */
static void table_make(struct cc_irq_table *t, const char *online, const char *def, const struct spec *v, int n)
{
	memset(t, 0, sizeof(*t));
	t->online = L(online);
	t->default_affinity = L(def);
	t->irqs = calloc((size_t)n + 1, sizeof(*t->irqs));
	ck_assert_ptr_nonnull(t->irqs);
	for (int i = 0; i < n; i++) {
		t->irqs[i].irq = v[i].irq;
		snprintf(t->irqs[i].name, sizeof(t->irqs[i].name), "%s", v[i].name);
		t->irqs[i].affinity = L(v[i].aff);
		t->irqs[i].effective = hwloc_bitmap_alloc();
		t->irqs[i].node = v[i].node;
	}
	t->n = n;
}

static struct cc_irq_info *table_irq(struct cc_irq_table *t, int irq)
{
	return (struct cc_irq_info *)cc_irq_find(t, irq);
}

/* The test host: 16 CPUs, node 0 = 0-7, node 1 = 8-15, reserved 0-1,8-9
 * (the e2e guest and the harness policy). */
static void fb_make(struct cc_irq_fallback *fb)
{
	memset(fb, 0, sizeof(*fb));
	fb->reserved = L("0-1,8-9");
	fb->nodes = calloc(2, sizeof(*fb->nodes));
	ck_assert_ptr_nonnull(fb->nodes);
	fb->nodes[0] = (struct cc_irq_node){ 0, L("0-7") };
	fb->nodes[1] = (struct cc_irq_node){ 1, L("8-15") };
	fb->nnodes = 2;
}

static const struct spec guest[] = {
	{ 0, "timer", "0-15", -1 },
	{ 24, "virtio0-config", "0-15", -1 },
	{ 25, "virtio0-input.0", "0-15", -1 },
	{ 27, "virtio1-config", "2-3", 1 },
	{ 28, "virtio1-req.0", "8-11", -1 },
};

/* What the kernel would look like after every step was written, and the
 * records that go with it: the plan's `next`. */
static void pretend_written(struct cc_irq_table *t, struct cc_irq_plan *p, struct cc_irq_state *st)
{
	for (int i = 0; i < p->n; i++) {
		struct cc_irq_step *s = &p->steps[i];

		if (s->irq == CC_IRQ_DEFAULT)
			hwloc_bitmap_copy(t->default_affinity, s->to);
		else
			hwloc_bitmap_copy(table_irq(t, s->irq)->affinity, s->to);
	}
	ck_assert_int_eq(cc_irq_state_copy(st, &p->next), 0);
}

static const struct cc_irq_step *step_of(const struct cc_irq_plan *p, int irq)
{
	for (int i = 0; i < p->n; i++)
		if (p->steps[i].irq == irq)
			return &p->steps[i];
	return NULL;
}

/* Plan for `avoid`, check the plan succeeded, and apply it on paper. */
static void plan_apply(struct cc_irq_table *t, struct cc_irq_state *st, const char *avoid,
		       const struct cc_irq_fallback *fb, struct cc_irq_plan *p)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t a = L(avoid);

	ck_assert_msg(cc_irq_plan(t, st, a, fb, p, &err) == 0, "%s", err.msg);
	pretend_written(t, p, st);
}

/* ---- cc_irq_target ----------------------------------------------------------- */

static const struct {
	const char *cur, *avoid;
	int node;
	const char *want; /* NULL: refused */
	bool fell_back;
	const char *why;
} target_cases[] = {
	{ "0-15", "2-5", -1, "0-1,6-15", false, NULL },
	{ "0-15", "2-5,10-13", 0, "0-1,6-9,14-15", false, NULL },
	{ "2-3", "2-5", 0, "0-1", true, NULL },           /* reserved CPUs of node 0 */
	{ "10-11", "10-13", 1, "8-9", true, NULL },       /* reserved CPUs of node 1 */
	{ "2-3", "2-5", -1, "0-1,8-9", true, NULL },      /* node unknown: every reserved CPU */
	{ "2-3", "2-5", 7, "0-1,8-9", true, NULL },       /* node without CPUs here */
	{ "16-17", "2-5", -1, "0-1,8-9", true, NULL },    /* only offline CPUs left: empty */
	{ "2-4,20", "2-5", 1, "8-9", true, NULL },        /* ditto, with the node known */
	{ "2-3", "0-5,8-9", 0, "6-7", true, NULL },       /* reserved all carved: the node */
	{ "2-3", "0-7,8-9", 0, "10-15", true, NULL },     /* node all carved: any online CPU */
	{ "2-3", "0-15", 0, NULL, false, "no online CPU is left" },
	{ "", "2-5", -1, "0-1,8-9", true, NULL },         /* an empty mask has nowhere to go either */
};

START_TEST(test_target_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_fallback fb;
	_cleanup_bitmap_ hwloc_bitmap_t cur = L(target_cases[_i].cur);
	_cleanup_bitmap_ hwloc_bitmap_t avoid = L(target_cases[_i].avoid);
	_cleanup_bitmap_ hwloc_bitmap_t online = L("0-15");
	_cleanup_bitmap_ hwloc_bitmap_t out = hwloc_bitmap_alloc();
	bool fell = false;
	int r;

	fb_make(&fb);
	r = cc_irq_target(cur, avoid, target_cases[_i].node, &fb, online, out, &fell, &err);
	if (target_cases[_i].want) {
		ck_assert_msg(r == 0, "case %d: %s", _i, err.msg);
		eq_list(out, target_cases[_i].want);
		ck_assert_int_eq(fell, target_cases[_i].fell_back);
		ck_assert(!hwloc_bitmap_intersects(out, avoid));
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(err.code, ENOSPC);
		ck_assert_msg(strstr(err.msg, target_cases[_i].why), "%s", err.msg);
	}
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* ---- the plan --------------------------------------------------------------- */

START_TEST(test_steer_records_originals)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;
	const struct cc_irq_rec *r;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "2-5", &fb, &p);
	/* default, 0, 24, 25 and 27 meet 2-5; 28 (8-11) does not. */
	ck_assert_int_eq(p.n, 5);
	ck_assert_int_eq(p.steps[0].irq, CC_IRQ_DEFAULT); /* the default first */
	eq_list(step_of(&p, 24)->to, "0-1,6-15");
	ck_assert(!step_of(&p, 24)->fell_back);
	/* 2-3 minus 2-5 is empty: the reserved CPUs of its node (1). */
	eq_list(step_of(&p, 27)->to, "8-9");
	ck_assert(step_of(&p, 27)->fell_back);
	ck_assert_ptr_null(step_of(&p, 28));
	ck_assert_int_eq(step_of(&p, 24)->why, CC_IRQ_WHY_STEER);
	r = cc_irq_state_find(&st, 27);
	ck_assert_ptr_nonnull(r);
	eq_list(r->orig, "2-3");
	eq_list(r->set, "8-9");
	ck_assert_str_eq(r->name, "virtio1-config");
	ck_assert_ptr_null(cc_irq_state_find(&st, 28));
	eq_list(cc_irq_state_find(&st, CC_IRQ_DEFAULT)->orig, "0-15");
	/* The fallback the plan used is kept for the release. */
	eq_list(st.fb.reserved, "0-1,8-9");
	ck_assert_int_eq(st.fb.nnodes, 2);
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* Two overlapping steer-away carves: A (2-5), then B (10-13).  Releasing A
 * must not bring IRQs back onto B; releasing B restores the originals. */
START_TEST(test_union_two_carves)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;
	const struct cc_irq_rec *r;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "2-5", &fb, &p);
	cc_irq_plan_fini(&p);

	plan_apply(&t, &st, "2-5,10-13", &fb, &p);
	eq_list(table_irq(&t, 24)->affinity, "0-1,6-9,14-15");
	eq_list(table_irq(&t, 28)->affinity, "8-9");
	/* The original is recorded once: still the one before A. */
	eq_list(cc_irq_state_find(&st, 24)->orig, "0-15");
	eq_list(cc_irq_state_find(&st, 28)->orig, "8-11");
	/* 27 is on its fallback, off both carves: nothing to do for it. */
	ck_assert_ptr_null(step_of(&p, 27));
	cc_irq_plan_fini(&p);

	/* A goes: originals minus B. */
	plan_apply(&t, &st, "10-13", NULL, &p);
	eq_list(table_irq(&t, 24)->affinity, "0-9,14-15");
	eq_list(table_irq(&t, 27)->affinity, "2-3");
	eq_list(table_irq(&t, 28)->affinity, "8-9"); /* 8-11 minus B */
	eq_list(t.default_affinity, "0-9,14-15");
	ck_assert_int_eq(step_of(&p, 24)->why, CC_IRQ_WHY_ADJUST);
	ck_assert_ptr_null(step_of(&p, 28)); /* already there */
	r = cc_irq_state_find(&st, 24);
	ck_assert_ptr_nonnull(r);
	eq_list(r->orig, "0-15");
	/* Nothing came back onto B. */
	{
		_cleanup_bitmap_ hwloc_bitmap_t b = L("10-13");

		for (int i = 0; i < t.n; i++)
			ck_assert_msg(!hwloc_bitmap_intersects(t.irqs[i].affinity, b), "IRQ %d", t.irqs[i].irq);
		ck_assert(!hwloc_bitmap_intersects(t.default_affinity, b));
	}
	cc_irq_plan_fini(&p);

	/* B goes too: everything back, nothing recorded. */
	plan_apply(&t, &st, "", NULL, &p);
	eq_list(table_irq(&t, 0)->affinity, "0-15");
	eq_list(table_irq(&t, 24)->affinity, "0-15");
	eq_list(table_irq(&t, 27)->affinity, "2-3");
	eq_list(table_irq(&t, 28)->affinity, "8-11");
	eq_list(t.default_affinity, "0-15");
	ck_assert_int_eq(step_of(&p, 24)->why, CC_IRQ_WHY_RESTORE);
	ck_assert_int_eq(st.n, 0);
	ck_assert(cc_irq_state_empty(&st));
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* A carve that does not touch an IRQ's CPUs changes nothing for it, and
 * a plan for the same carves twice writes nothing the second time. */
START_TEST(test_idempotent)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "12-13", &fb, &p);
	ck_assert_ptr_null(step_of(&p, 27));
	ck_assert_ptr_nonnull(step_of(&p, 24));
	cc_irq_plan_fini(&p);
	plan_apply(&t, &st, "12-13", &fb, &p);
	ck_assert_int_eq(p.n, 0);
	ck_assert_int_eq(p.journal.n, st.n);
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* Moved by someone else (irqbalance, an operator) since corecarve wrote
 * it: theirs, left alone, record dropped; unless it is back on a carve. */
START_TEST(test_foreign_change)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "2-5", &fb, &p);
	cc_irq_plan_fini(&p);

	hwloc_bitmap_only(table_irq(&t, 24)->affinity, 7);
	hwloc_bitmap_only(table_irq(&t, 25)->affinity, 3);
	plan_apply(&t, &st, "2-5", &fb, &p);
	ck_assert_ptr_null(step_of(&p, 24));
	ck_assert_ptr_null(cc_irq_state_find(&st, 24));
	ck_assert_int_eq(p.dropped_foreign, 1);
	/* 25 landed on CPU 3: steered again to what corecarve sets (its
	 * first original minus the carve), the original kept. */
	eq_list(step_of(&p, 25)->to, "0-1,6-15");
	ck_assert_int_eq(step_of(&p, 25)->why, CC_IRQ_WHY_STEER);
	eq_list(cc_irq_state_find(&st, 25)->orig, "0-15");
	cc_irq_plan_fini(&p);
	/* ... and a second reconcile has nothing to do. */
	plan_apply(&t, &st, "2-5", &fb, &p);
	ck_assert_int_eq(p.n, 0);
	cc_irq_plan_fini(&p);

	/* The release leaves 24 where its new owner put it. */
	plan_apply(&t, &st, "", NULL, &p);
	eq_list(table_irq(&t, 24)->affinity, "7");
	eq_list(table_irq(&t, 25)->affinity, "0-15");
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* A kernel-managed IRQ: never written again, reported while it meets the
 * carves, forgotten after. */
START_TEST(test_unmovable_kept_then_dropped)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_plan p;
	struct cc_irq_rec um = { .irq = 28, .name = "virtio1-req.0", .unmovable = true, .refused = "EPERM" };

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	um.orig = L("8-11");
	ck_assert_int_eq(cc_irq_state_put(&st, &um), 0);
	hwloc_bitmap_free(um.orig);

	plan_apply(&t, &st, "10-13", NULL, &p);
	ck_assert_ptr_null(step_of(&p, 28));
	ck_assert_ptr_nonnull(cc_irq_state_find(&st, 28));
	ck_assert(cc_irq_state_find(&st, 28)->unmovable);
	ck_assert_str_eq(cc_irq_state_find(&st, 28)->refused, "EPERM");
	cc_irq_plan_fini(&p);

	plan_apply(&t, &st, "2-5", NULL, &p);
	ck_assert_ptr_null(step_of(&p, 28));
	ck_assert_ptr_null(cc_irq_state_find(&st, 28));
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
}
END_TEST

/* A record whose IRQ number now belongs to another device is stale; one
 * whose IRQ went away is dropped. */
START_TEST(test_stale_records)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_plan p;
	struct cc_irq_rec old = { .irq = 24, .name = "nvme0q3" };
	struct cc_irq_rec gone = { .irq = 99, .name = "eth9-rx" };

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	old.orig = L("4-5");
	old.set = L("0-15");
	gone.orig = L("0-15");
	gone.set = L("0-1");
	ck_assert_int_eq(cc_irq_state_put(&st, &old), 0);
	ck_assert_int_eq(cc_irq_state_put(&st, &gone), 0);
	hwloc_bitmap_free(old.orig);
	hwloc_bitmap_free(old.set);
	hwloc_bitmap_free(gone.orig);
	hwloc_bitmap_free(gone.set);

	plan_apply(&t, &st, "2-5", NULL, &p);
	/* Not nvme0q3's original: virtio0-config's own affinity is. */
	eq_list(cc_irq_state_find(&st, 24)->orig, "0-15");
	ck_assert_str_eq(cc_irq_state_find(&st, 24)->name, "virtio0-config");
	ck_assert_ptr_null(cc_irq_state_find(&st, 99));
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
}
END_TEST

/* The journal written before the first write, and what the next plan
 * makes of it after a crash on either side of the write. */
START_TEST(test_journal_and_recovery)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_table t;
	struct cc_irq_state st, crashed;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p, q;
	_cleanup_bitmap_ hwloc_bitmap_t none = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t a = L("2-5");
	const struct cc_irq_rec *r;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	cc_irq_state_init(&crashed);
	fb_make(&fb);
	ck_assert_int_eq(cc_irq_plan(&t, &st, a, &fb, &p, &err), 0);
	r = cc_irq_state_find(&p.journal, 24);
	ck_assert_ptr_nonnull(r);
	eq_list(r->orig, "0-15");
	eq_list(r->set, "0-15");
	eq_list(r->pending, "0-1,6-15");
	ck_assert_int_eq(cc_irq_state_copy(&crashed, &p.journal), 0);

	/* Killed before any write: nothing moved, nothing is foreign, the
	 * release has nothing to write. */
	ck_assert_int_eq(cc_irq_plan(&t, &crashed, none, NULL, &q, &err), 0);
	ck_assert_int_eq(q.n, 0);
	ck_assert_int_eq(q.dropped_foreign, 0);
	ck_assert_int_eq(q.next.n, 0);
	cc_irq_plan_fini(&q);

	/* Killed after 24's write: the release puts it back. */
	hwloc_bitmap_copy(table_irq(&t, 24)->affinity, step_of(&p, 24)->to);
	ck_assert_int_eq(cc_irq_plan(&t, &crashed, none, NULL, &q, &err), 0);
	ck_assert_int_eq(q.dropped_foreign, 0);
	eq_list(step_of(&q, 24)->to, "0-15");
	ck_assert_int_eq(step_of(&q, 24)->why, CC_IRQ_WHY_RESTORE);
	/* A restore journals the record it is about to drop. */
	r = cc_irq_state_find(&q.journal, 24);
	ck_assert_ptr_nonnull(r);
	eq_list(r->pending, "0-15");
	ck_assert_ptr_null(cc_irq_state_find(&q.next, 24));
	cc_irq_plan_fini(&q);
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&crashed);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* A device hot-plugged (or a driver rebound) while the default was
 * steered starts on the steered default: given the default's original
 * back at the end, like the IRQs corecarve moved itself. */
START_TEST(test_born_under_steered_default)
{
	static const struct spec later[] = {
		{ 24, "virtio0-config", "0-15", -1 },
		{ 40, "eth1-rx", "0-15", -1 },
	};
	struct cc_irq_table t, u;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;
	const struct cc_irq_rec *r;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "2-5", &fb, &p);
	cc_irq_plan_fini(&p);
	/* IRQ 40 appears, with the default of the moment. */
	table_make(&u, "0-15", "0-15", later, 2);
	hwloc_bitmap_copy(u.default_affinity, t.default_affinity);
	hwloc_bitmap_copy(table_irq(&u, 24)->affinity, table_irq(&t, 24)->affinity);
	hwloc_bitmap_copy(table_irq(&u, 40)->affinity, t.default_affinity);
	plan_apply(&u, &st, "2-5", NULL, &p);
	ck_assert_ptr_null(step_of(&p, 40));
	r = cc_irq_state_find(&st, 40);
	ck_assert_ptr_nonnull(r);
	eq_list(r->orig, "0-15");
	cc_irq_plan_fini(&p);
	plan_apply(&u, &st, "", NULL, &p);
	eq_list(table_irq(&u, 40)->affinity, "0-15");
	eq_list(u.default_affinity, "0-15");
	ck_assert(cc_irq_state_empty(&st));
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_table_fini(&u);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* A journal record of a write that never changed anything (the kernel
 * refused it, or the process died first) leaves no record behind. */
START_TEST(test_noop_record_dropped)
{
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_plan p;
	struct cc_irq_rec r = { .irq = 28, .name = "virtio1-req.0" };

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	r.orig = L("8-11");
	r.set = L("8-11");
	r.pending = L("8-9");
	ck_assert_int_eq(cc_irq_state_put(&st, &r), 0);
	hwloc_bitmap_free(r.orig);
	hwloc_bitmap_free(r.set);
	hwloc_bitmap_free(r.pending);
	plan_apply(&t, &st, "2-5", NULL, &p);
	ck_assert_ptr_null(step_of(&p, 28));
	ck_assert_ptr_null(cc_irq_state_find(&st, 28));
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
}
END_TEST

START_TEST(test_plan_refuses_full_host)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_table t;
	struct cc_irq_state st;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;
	_cleanup_bitmap_ hwloc_bitmap_t a = L("0-15");

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	ck_assert_int_eq(cc_irq_plan(&t, &st, a, &fb, &p, &err), -1);
	ck_assert_msg(strstr(err.msg, "default_smp_affinity") && strstr(err.msg, "no online CPU"), "%s", err.msg);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

/* ---- the CPUs to avoid ----------------------------------------------------------- */

START_TEST(test_avoid_union)
{
	struct cc_carve c[3];
	struct cc_carve *handles[3] = { &c[0], &c[1], &c[2] };
	struct cc_ledger l = { .ncarves = 3, .carves = handles };
	_cleanup_bitmap_ hwloc_bitmap_t all = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t less = NULL;

	for (int i = 0; i < 3; i++)
		cc_carve_init(&c[i]);
	snprintf(c[0].id, sizeof(c[0].id), "a");
	hwloc_bitmap_from_ith_ulong(c[0].cpus, 0, 0x14); /* 2,4 */
	hwloc_bitmap_from_ith_ulong(c[0].parked, 0, 0x28); /* 3,5 */
	c[0].steer_irqs = true;
	snprintf(c[1].id, sizeof(c[1].id), "b");           /* irq: leave */
	hwloc_bitmap_from_ith_ulong(c[1].cpus, 0, 0xc0);
	snprintf(c[2].id, sizeof(c[2].id), "c");
	hwloc_bitmap_from_ith_ulong(c[2].cpus, 0, 0x3c00); /* 10-13 */
	c[2].steer_irqs = true;
	all = cc_irq_avoid(&l, NULL);
	less = cc_irq_avoid(&l, "c");
	eq_list(all, "2-5,10-13");
	eq_list(less, "2-5");
	for (int i = 0; i < 3; i++)
		cc_carve_fini(&c[i]);
}
END_TEST

/* ---- the ledger section ------------------------------------------------------- */

START_TEST(test_state_roundtrip)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_table t;
	struct cc_irq_state st, back;
	struct cc_irq_fallback fb;
	struct cc_irq_plan p;
	struct cc_irq_rec um = { .irq = 30, .name = "virtio1-req.2", .unmovable = true, .refused = "EIO" };
	_cleanup_json_ json_t *j = NULL;
	_cleanup_json_ json_t *j2 = NULL;

	table_make(&t, "0-15", "0-15", guest, 5);
	cc_irq_state_init(&st);
	fb_make(&fb);
	plan_apply(&t, &st, "2-5", &fb, &p);
	um.orig = L("0-3");
	ck_assert_int_eq(cc_irq_state_put(&st, &um), 0);
	hwloc_bitmap_free(um.orig);
	j = cc_irq_state_json(&p.journal, &err); /* with "pending" */
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(cc_irq_state_parse(j, &back, &err), 0);
	eq_list(cc_irq_state_find(&back, 24)->pending, "0-1,6-15");
	cc_irq_state_fini(&back);
	json_decref(j);
	j = cc_irq_state_json(&st, &err);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "irqs"), "30"),
							   "unmovable")), "EIO");
	ck_assert_msg(cc_irq_state_parse(j, &back, &err) == 0, "%s", err.msg);
	j2 = cc_irq_state_json(&back, &err);
	ck_assert(json_equal(j, j2));
	ck_assert_ptr_null(cc_irq_state_find(&back, 24)->pending);
	cc_irq_state_fini(&back);
	cc_irq_plan_fini(&p);
	cc_irq_state_fini(&st);
	cc_irq_table_fini(&t);
	cc_irq_fallback_fini(&fb);
}
END_TEST

static const struct {
	const char *json;
	const char *why;
} bad_sections[] = {
	{ "[]", "sections.irq: expected an object" },
	{ "{\"color\": 1}", "sections.irq: unknown field \"color\"" },
	{ "{\"irqs\": []}", "sections.irq.irqs: expected an object" },
	{ "{\"irqs\": {\"abc\": {}}}", "sections.irq.irqs: \"abc\" is not an IRQ number" },
	{ "{\"irqs\": {\"007\": {}}}", "\"007\" is not an IRQ number" },
	{ "{\"irqs\": {\"99999999\": {}}}", "sections.irq.irqs: IRQ 99999999 is out of range" },
	{ "{\"irqs\": {\"24\": 5}}", "sections.irq.irqs.24: expected an object" },
	{ "{\"irqs\": {\"24\": {\"name\": \"x\", \"set\": \"1\"}}}", "sections.irq.irqs.24.orig: missing" },
	{ "{\"irqs\": {\"24\": {\"name\": \"x\", \"orig\": \"5-2\", \"set\": \"1\"}}}",
	  "sections.irq.irqs.24.orig: invalid cpu list \"5-2\": range 5-2 is reversed" },
	{ "{\"irqs\": {\"24\": {\"name\": \"x\", \"orig\": 3, \"set\": \"1\"}}}",
	  "sections.irq.irqs.24.orig: expected a cpu-list string" },
	{ "{\"irqs\": {\"24\": {\"orig\": \"1\", \"set\": \"1\"}}}", "sections.irq.irqs.24.name: missing" },
	{ "{\"irqs\": {\"24\": {\"name\": \"x\", \"unmovable\": \"EIO\", \"affinity\": \"1\", \"set\": \"1\"}}}",
	  "sections.irq.irqs.24: unknown field \"set\"" },
	{ "{\"irqs\": {\"default\": {\"name\": \"x\", \"orig\": \"1\", \"set\": \"1\"}}}",
	  "sections.irq.irqs.default: unknown field \"name\"" },
	{ "{\"fallback\": {\"reserved\": \"0\", \"nodes\": {\"x\": \"1\"}}}",
	  "sections.irq.fallback.nodes.x: not a NUMA node number" },
	{ "{\"fallback\": {\"reserved\": \"0\"}}", "sections.irq.fallback.nodes: expected an object" },
	{ "{\"irqbalance\": {\"file\": \"/etc/passwd\", \"cpulist\": null, \"cpus\": null, \"banned\": \"1\"}}",
	  "sections.irq.irqbalance.file: \"/etc/passwd\" is not an irqbalance environment file" },
	{ "{\"irqbalance\": {\"file\": \"/etc/default/irqbalance\", \"cpulist\": 1, \"cpus\": null, \"banned\": \"1\"}}",
	  "sections.irq.irqbalance.cpulist: expected a string or null" },
};

START_TEST(test_state_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_state st;
	json_error_t je;
	_cleanup_json_ json_t *j = json_loads(bad_sections[_i].json, 0, &je);

	ck_assert_msg(j != NULL, "test JSON: %s", je.text);
	ck_assert_int_eq(cc_irq_state_parse(j, &st, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_sections[_i].why), "case %d: got \"%s\"", _i, err.msg);
}
END_TEST

/* ---- /proc/irq and /proc/interrupts from a tree under --root ------------------ */

static char base[64];

static void put(const char *rel, const char *text)
{
	char path[256], dir[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", base, rel);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(dir), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *rel)
{
	char path[256];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s%s", base, rel);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(getdelim(&buf, &len, '\0', f), 0);
	fclose(f);
	return buf;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* A small capture of a 4-CPU host's /proc/irq, as the kernel lays it out. */
static void tree_setup(void)
{
	char dir[300];

	snprintf(base, sizeof(base), "/tmp/cc-irq-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	put("/sys/devices/system/cpu/online", "0-3\n");
	put("/proc/irq/default_smp_affinity", "f\n");
	put("/proc/irq/0/smp_affinity_list", "0-3\n");
	put("/proc/irq/0/smp_affinity", "f\n");
	put("/proc/irq/24/smp_affinity_list", "0-3\n");
	put("/proc/irq/24/effective_affinity_list", "1\n");
	put("/proc/irq/24/node", "0\n");
	put("/proc/irq/25/smp_affinity_list", "2-3\n");
	put("/proc/irq/25/node", "-1\n");
	snprintf(dir, sizeof(dir), "%s/proc/irq/24/virtio0-input.0", base);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/proc/irq/0/timer", base);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/proc/irq/25/b-dev", base);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/proc/irq/25/a-dev", base);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
}

static void tree_teardown(void)
{
	if (base[0])
		nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

START_TEST(test_table_read)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(base, &err);
	struct cc_irq_table t;

	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_irq_table_read(root, &t, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(t.n, 3);
	eq_list(t.online, "0-3");
	eq_list(t.default_affinity, "0-3");
	ck_assert_int_eq(t.irqs[0].irq, 0);
	ck_assert_str_eq(t.irqs[0].name, "timer");
	ck_assert(!t.irqs[0].has_effective);
	ck_assert_int_eq(t.irqs[0].node, -1);
	ck_assert_int_eq(t.irqs[1].irq, 24);
	ck_assert_str_eq(t.irqs[1].name, "virtio0-input.0");
	eq_list(t.irqs[1].effective, "1");
	ck_assert_int_eq(t.irqs[1].node, 0);
	/* Shared IRQ: every handler, sorted. */
	ck_assert_str_eq(t.irqs[2].name, "a-dev,b-dev");
	eq_list(t.irqs[2].affinity, "2-3");
	cc_irq_table_fini(&t);
}
END_TEST

static const struct {
	const char *file; /* written (NULL: removed) */
	const char *text;
	const char *why;
} bad_entries[] = {
	{ "/proc/irq/24/smp_affinity_list", "zz", "/proc/irq/24/smp_affinity_list: invalid cpu list \"zz\"" },
	{ "/proc/irq/24/smp_affinity_list", "0-", "/proc/irq/24/smp_affinity_list: invalid cpu list \"0-\": range without an end" },
	{ "/proc/irq/24/smp_affinity_list", NULL, "/proc/irq/24/smp_affinity_list: missing" },
	{ "/proc/irq/24/effective_affinity_list", "3-1", "/proc/irq/24/effective_affinity_list: invalid cpu list \"3-1\": range 3-1 is reversed" },
	{ "/proc/irq/24/node", "zero", "/proc/irq/24/node: expected a NUMA node number or -1, got \"zero\"" },
	{ "/proc/irq/24/node", "-2", "/proc/irq/24/node: expected a NUMA node number or -1, got \"-2\"" },
	{ "/proc/irq/default_smp_affinity", "0x3", "/proc/irq/default_smp_affinity: invalid cpumask \"0x3\"" },
	{ "/proc/irq/24x/smp_affinity_list", "0-3", "/proc/irq/24x: not an IRQ number" },
	{ "/proc/irq/99999999/smp_affinity_list", "0-3", "/proc/irq/99999999: IRQ number out of range" },
	{ "/sys/devices/system/cpu/online", "0-3,", "/sys/devices/system/cpu/online: invalid cpu list \"0-3,\": trailing comma" },
};

START_TEST(test_table_bad_entries)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(base, &err);
	struct cc_irq_table t;
	char path[256];

	ck_assert_ptr_nonnull(root);
	if (bad_entries[_i].text) {
		put(bad_entries[_i].file, bad_entries[_i].text);
	} else {
		snprintf(path, sizeof(path), "%s%s", base, bad_entries[_i].file);
		ck_assert_int_eq(unlink(path), 0);
	}
	ck_assert_int_eq(cc_irq_table_read(root, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_entries[_i].why), "case %d: got \"%s\"", _i, err.msg);
}
END_TEST

/* A reconcile that meets a malformed entry writes nothing: not the IRQs
 * read before it, not the ledger.  (Only read here: nothing is written to
 * the tree, which is what the test checks.) */
START_TEST(test_reconcile_malformed_writes_nothing)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(base, &err);
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_free_ char *aff = NULL;
	_cleanup_free_ char *def = NULL;
	struct cc_irq_opts o = { .root = root };
	struct cc_irq_report rep;
	struct cc_carve c;
	char state[128];

	ck_assert_ptr_nonnull(root);
	snprintf(state, sizeof(state), "%s/state", base);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "c1");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set(c.cpus, 2);
	hwloc_bitmap_set(c.parked, 3);
	c.steer_irqs = true;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	put("/proc/irq/25/smp_affinity_list", "2-3,x");
	ck_assert_int_eq(cc_irq_reconcile(l, &o, &rep, &err), -1);
	ck_assert_msg(strstr(err.msg, "/proc/irq/25/smp_affinity_list: invalid cpu list"), "%s", err.msg);
	aff = get("/proc/irq/24/smp_affinity_list");
	def = get("/proc/irq/default_smp_affinity");
	ck_assert_str_eq(aff, "0-3\n");
	ck_assert_str_eq(def, "f\n");
	ck_assert_ptr_null(cc_ledger_section(l, CC_IRQ_SECTION, false));
}
END_TEST

/* What `irq reconcile` does, in a child confined by the filter the command
 * loads (sandbox.h): open the ledger, move the tree's IRQs off a carve,
 * commit.  Returns 0, or the step that failed. */
static int reconcile_confined(void *arg)
{
	const char *state = arg;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(base, &err);
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o = { .root = root, .fb = &fb };
	struct cc_irq_report rep;
	struct cc_carve c;
	int rc = 0;

	if (!root || !(l = cc_ledger_open(state, &err)))
		return 1;
	fb.reserved = L("0");
	fb.nodes = calloc(1, sizeof(*fb.nodes));
	fb.nodes[0] = (struct cc_irq_node){ 0, L("0-3") };
	fb.nnodes = 1;
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "c1");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set(c.cpus, 2);
	hwloc_bitmap_set(c.parked, 3);
	c.steer_irqs = true;
	if (cc_ledger_add(l, &c, &err) < 0)
		rc = 2;
	else if (cc_irq_reconcile(l, &o, &rep, &err) < 0)
		rc = 3;
	else if (rep.moved < 2)
		rc = 4;
	else if (cc_ledger_commit(l, &err) < 0)
		rc = 5;
	if (rc)
		fprintf(stderr, "reconcile_confined step %d: %s\n", rc, err.msg);
	cc_carve_fini(&c);
	cc_irq_fallback_fini(&fb);
	return rc;
}

/* irq reconcile's work runs under its filter (#26): the IRQs of the tree
 * leave the carve and the ledger records them. */
START_TEST(test_reconcile_under_filter)
{
	char state[128];
	_cleanup_free_ char *aff = NULL, *ledger = NULL;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();

	snprintf(state, sizeof(state), "%s/state", base);
	ck_assert_int_eq(cc_test_filtered(cc_sandbox_irq_reconcile, reconcile_confined, state), 0);
	aff = get("/proc/irq/24/smp_affinity_list");
	ck_assert_int_eq(cc_cpulist_parse(aff, b, "24", &err), 0);
	ck_assert_msg(!hwloc_bitmap_isset(b, 2) && !hwloc_bitmap_isset(b, 3), "IRQ 24 still on the carve: %s", aff);
	ledger = get("/state/" CC_LEDGER_FILE);
	ck_assert_msg(strstr(ledger, "\"c1\"") && strstr(ledger, CC_IRQ_SECTION), "%s", ledger);
}
END_TEST

/* ---- a read-only /etc (CoreOS-, Talos- and Bottlerocket-style hosts) -------- */

/* Make `dir` a read-only bind mount of itself, in a mount namespace of this
 * process only: Check runs each test in a child of its own (CK_FORK), so
 * the namespace and the mount go with it, whatever the test does.  chmod
 * would not do: root writes through it.  false (with a SKIPPED line) when
 * the namespace cannot be had. */
static bool read_only_bind(const char *dir)
{
	const char *fork_mode = getenv("CK_FORK");

	if (fork_mode && !strcmp(fork_mode, "no")) {
		printf("SKIPPED: read-only /etc: CK_FORK=no would leave the runner in the test's mount namespace\n");
		return false;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		printf("SKIPPED: read-only /etc: unshare(CLONE_NEWNS): %s (needs CAP_SYS_ADMIN)\n", strerror(errno));
		return false;
	}
	/* Nothing of this reaches the host's mounts. */
	ck_assert_msg(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %s", strerror(errno));
	ck_assert_msg(mount(dir, dir, NULL, MS_BIND, NULL) == 0, "bind %s: %s", dir, strerror(errno));
	ck_assert_msg(mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0, "remount %s ro: %s", dir,
		      strerror(errno));
	return true;
}

static void remount(const char *dir, bool ro)
{
	ck_assert_msg(mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | (ro ? MS_RDONLY : 0), NULL) == 0, "remount %s: %s",
		      dir, strerror(errno));
}

/* The irqbalance record the ledger holds now. */
static bool ib_active(struct cc_ledger *l, char *banned, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_state st;
	bool active;

	ck_assert_msg(cc_irq_state_parse(cc_ledger_section(l, CC_IRQ_SECTION, false), &st, &err) == 0, "%s", err.msg);
	active = st.irqbalance.active;
	if (active && banned) {
		_cleanup_free_ char *b = cc_cpulist_format(st.irqbalance.banned);

		snprintf(banned, len, "%s", b ? b : "?");
	}
	cc_irq_state_fini(&st);
	return active;
}

/* irqbalance's file on a read-only mount is a warning, not a refusal: the
 * IRQs are steered, the file is left byte for byte, no irqbalance record
 * is kept (so nothing is "given back" later), and `irq status` repeats the
 * warning.  A carve released while it is read-only keeps the record, and
 * the next reconcile after /etc is writable again gives the lines back. */
START_TEST(test_reconcile_read_only_etc)
{
	static const char orig[] = "# irqbalance's defaults\n#IRQBALANCE_BANNED_CPUS=\n";
	static const char warn_ban[] =
		"/etc/default/irqbalance is on a read-only file system: not rewritten, so irqbalance is not told to ban "
		"CPUs 2-3; the IRQs are steered, but a running irqbalance may move them back (make "
		"/etc/default/irqbalance writable, ban those CPUs in the OS's own irqbalance configuration, or stop "
		"irqbalance)";
	static const char warn_restore[] =
		"/etc/default/irqbalance is on a read-only file system: corecarve's banned CPUs stay in it until it is "
		"writable again (then `corecarve irq reconcile` puts the operator's lines back)";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_ledger *l = NULL;
	struct cc_irq_fallback fb = { 0 };
	struct cc_irq_opts o;
	struct cc_irq_report rep;
	struct cc_carve c;
	char state[128], etc[128], probe[160], banned[64];
	const char *bin;
	_cleanup_free_ char *aff = NULL, *text = NULL, *status = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int fd;

	put("/etc/default/irqbalance", orig);
	snprintf(etc, sizeof(etc), "%s/etc/default", base);
	snprintf(state, sizeof(state), "%s/state", base);
	fb.reserved = L("0");
	fb.nodes = calloc(1, sizeof(*fb.nodes));
	ck_assert_ptr_nonnull(fb.nodes);
	fb.nodes[0] = (struct cc_irq_node){ 0, L("0-3") };
	fb.nnodes = 1;
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "c1");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set(c.cpus, 2);
	hwloc_bitmap_set(c.parked, 3);
	c.steer_irqs = true;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);

	if (!read_only_bind(etc)) {
		cc_ledger_close(l);
		cc_irq_fallback_fini(&fb);
		return;
	}
	/* The root is opened in the namespace, as the hook opens its own: a
	 * directory fd from before unshare() would walk the old mount tree. */
	root = cc_root_open(base, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	o = (struct cc_irq_opts){ .root = root, .fb = &fb };
	/* Really read-only, to root too. */
	snprintf(probe, sizeof(probe), "%s/probe", etc);
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_msg(fd < 0 && errno == EROFS, "%s is writable: fd %d, %s", etc, fd, strerror(errno));

	/* The carve: strict, as the hook runs it. */
	ck_assert_msg(cc_irq_reconcile(l, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.irqbalance.read_only);
	ck_assert(!rep.irqbalance.file_written);
	ck_assert_str_eq(rep.irqbalance.warning, warn_ban);
	ck_assert_int_ge(rep.moved, 2);
	aff = get("/proc/irq/24/smp_affinity_list");
	ck_assert_int_eq(cc_cpulist_parse(aff, b, "24", &err), 0);
	ck_assert_msg(!hwloc_bitmap_isset(b, 2) && !hwloc_bitmap_isset(b, 3), "IRQ 24 still on the carve: %s", aff);
	text = get("/etc/default/irqbalance");
	ck_assert_str_eq(text, orig);
	ck_assert(!ib_active(l, NULL, 0));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	l = NULL;

	/* irq status says it again (the ledger records no warning). */
	bin = cc_test_bin("irq status on a read-only /etc");
	if (bin) {
		ck_assert_int_eq(cc_test_sh(&status, "'%s' irq status --root '%s' --state '%s' --sample-ms 0", bin, base, state), 0);
		ck_assert_msg(strstr(status, "\nirqbalance: warning: /etc/default/irqbalance is on a read-only file system: "
					     "not rewritten, so irqbalance is not told to ban CPUs 2-3;"),
			      "%s", status);
		free(status);
		ck_assert_int_eq(cc_test_sh(&status, "'%s' irq status --json --root '%s' --state '%s' --sample-ms 0", bin, base,
					    state),
				 0);
		ck_assert_msg(strstr(status, "\"irqbalance_warning\": \"/etc/default/irqbalance is on a read-only"), "%s",
			      status);
		free(status);
		status = NULL;
	}

	/* Writable again: the next reconcile bans the carve in the file. */
	remount(etc, false);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_msg(cc_irq_reconcile(l, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.irqbalance.file_written);
	ck_assert_str_eq(rep.irqbalance.warning, "");
	ck_assert(ib_active(l, banned, sizeof(banned)));
	ck_assert_str_eq(banned, "2-3");
	free(text);
	text = get("/etc/default/irqbalance");
	ck_assert_msg(strstr(text, "IRQBALANCE_BANNED_CPULIST=2-3\n"), "%s", text);

	/* Released while read-only: IRQs given back, the file and its record
	 * kept for later. */
	remount(etc, true);
	o.except = "c1";
	o.best_effort = true;
	ck_assert_msg(cc_irq_reconcile(l, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.irqbalance.read_only);
	ck_assert_str_eq(rep.irqbalance.warning, warn_restore);
	ck_assert_int_ge(rep.restored, 2);
	free(aff);
	aff = get("/proc/irq/24/smp_affinity_list");
	ck_assert_int_eq(cc_cpulist_parse(aff, b, "24", &err), 0);
	ck_assert_msg(hwloc_bitmap_isset(b, 2), "IRQ 24 not given back: %s", aff);
	ck_assert(ib_active(l, NULL, 0));
	cc_ledger_remove(l, "c1");

	/* Writable again: the operator's lines come back, byte for byte. */
	remount(etc, false);
	o.except = NULL;
	o.best_effort = false;
	ck_assert_msg(cc_irq_reconcile(l, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.irqbalance.file_written);
	free(text);
	text = get("/etc/default/irqbalance");
	ck_assert_str_eq(text, orig);
	ck_assert(!ib_active(l, NULL, 0));
	cc_ledger_close(l);
	cc_irq_fallback_fini(&fb);

	/* Made read-only between the decision and the write: the write finds
	 * it, writes nothing and says so. */
	{
		struct cc_irqbalance_rec none;
		struct cc_irqbalance_pending pend = { 0 };
		struct cc_irqbalance_result res = { 0 };
		_cleanup_bitmap_ hwloc_bitmap_t avoid = L("2");

		cc_irqbalance_rec_init(&none);
		ck_assert_msg(cc_irqbalance_prepare(root, &none, avoid, &pend, &err) == 0, "%s", err.msg);
		ck_assert(!pend.read_only);
		ck_assert_ptr_nonnull(pend.new_text);
		remount(etc, true);
		ck_assert_msg(cc_irqbalance_write(root, &pend, &res, &err) == 0, "%s", err.msg);
		ck_assert(res.read_only);
		ck_assert(!res.file_written);
		ck_assert_msg(strstr(res.warning, "not told to ban CPUs 2;"), "%s", res.warning);
		free(text);
		text = get("/etc/default/irqbalance");
		ck_assert_str_eq(text, orig);
		cc_irqbalance_pending_fini(&pend);
		cc_irqbalance_rec_fini(&none);
	}
}
END_TEST

static const char interrupts[] = "           CPU0       CPU1       CPU2       CPU3       \n"
				 "  0:         44          0          0          0   IO-APIC   2-edge      timer\n"
				 " 24:          1          7          0        300   PCI-MSIX-0000:00:03.0   0-edge      virtio0-config\n"
				 " 25:          5          0          0   PCI-MSI   1-edge\n"
				 "NMI:          0          0          0          0   Non-maskable interrupts\n"
				 "ERR:          0\n";

START_TEST(test_counts_parse)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_counts c;

	ck_assert_msg(cc_irq_counts_parse(interrupts, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(c.ncols, 4);
	ck_assert_int_eq(c.nrows, 3);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 0, 0), 44);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 24, 1), 7);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 24, 3), 300);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 25, 0), 5);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 25, 3), 0); /* fewer counts than columns */
	ck_assert_uint_eq(cc_irq_counts_get(&c, 26, 0), 0);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 24, 9), 0);
	cc_irq_counts_fini(&c);
}
END_TEST

/* The one /proc/interrupts reader (the pictures sum its rows, test_svg.c):
 * offline CPUs have no column, so a column is a CPU number, not an index;
 * architecture lines with one count (ERR:, MIS:) or names with spaces are
 * not rows; a row's chip and names with spaces end its counts. */
static const char sparse_interrupts[] =
	"           CPU0       CPU2       CPU5\n"
	" 10:          1          2          3   GICv3  27 Level     arch_timer\n"
	" 48:        900          0         70   PCI-MSI 524288-edge      nvme0q0, nvme0q1\n"
	"IPI0:         4          5          6       Rescheduling interrupts\n"
	"ERR:          0\n"
	"MIS:          0\n";

START_TEST(test_counts_sparse_columns)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_counts c;

	ck_assert_msg(cc_irq_counts_parse(sparse_interrupts, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(c.ncols, 3);
	ck_assert_int_eq(c.cpus[0], 0);
	ck_assert_int_eq(c.cpus[1], 2);
	ck_assert_int_eq(c.cpus[2], 5);
	ck_assert_int_eq(c.nrows, 2);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 10, 0), 1);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 10, 2), 2);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 10, 5), 3);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 10, 1), 0); /* offline: no column */
	ck_assert_uint_eq(cc_irq_counts_get(&c, 48, 0), 900);
	ck_assert_uint_eq(cc_irq_counts_get(&c, 48, 5), 70);
	cc_irq_counts_fini(&c);
}
END_TEST

static const struct {
	const char *text;
	const char *why;
} bad_counts[] = {
	{ "IRQ CPU0\n", "/proc/interrupts:1: expected CPU<n> columns" },
	{ "    CPU0 CPUx\n", "/proc/interrupts:1: bad CPU column" },
	{ "\n", "/proc/interrupts:1: no CPU columns" },
	{ "    CPU0\n 24 1 edge\n", "/proc/interrupts:2: expected \"<irq>: <counts>\"" },
	{ "    CPU0\n 2x4: 1\n", "/proc/interrupts:2: bad IRQ number" },
	{ "    CPU0\n 24: 99999999999999999999999\n", "/proc/interrupts:2: count out of range" },
};

START_TEST(test_counts_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irq_counts c;

	ck_assert_int_eq(cc_irq_counts_parse(bad_counts[_i].text, &c, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_counts[_i].why), "case %d: got \"%s\"", _i, err.msg);
}
END_TEST

static Suite *irq_suite(void)
{
	Suite *s = suite_create("irq");
	TCase *tc = tcase_create("target");
	TCase *pl = tcase_create("plan");
	TCase *sec = tcase_create("section");
	TCase *tr = tcase_create("proc");

	tcase_add_loop_test(tc, test_target_table, 0, sizeof(target_cases) / sizeof(target_cases[0]));
	tcase_add_test(tc, test_avoid_union);
	suite_add_tcase(s, tc);
	tcase_add_test(pl, test_steer_records_originals);
	tcase_add_test(pl, test_union_two_carves);
	tcase_add_test(pl, test_idempotent);
	tcase_add_test(pl, test_foreign_change);
	tcase_add_test(pl, test_unmovable_kept_then_dropped);
	tcase_add_test(pl, test_stale_records);
	tcase_add_test(pl, test_journal_and_recovery);
	tcase_add_test(pl, test_born_under_steered_default);
	tcase_add_test(pl, test_noop_record_dropped);
	tcase_add_test(pl, test_plan_refuses_full_host);
	suite_add_tcase(s, pl);
	tcase_add_test(sec, test_state_roundtrip);
	tcase_add_loop_test(sec, test_state_bad_table, 0, sizeof(bad_sections) / sizeof(bad_sections[0]));
	suite_add_tcase(s, sec);
	tcase_add_checked_fixture(tr, tree_setup, tree_teardown);
	tcase_add_test(tr, test_table_read);
	tcase_add_loop_test(tr, test_table_bad_entries, 0, sizeof(bad_entries) / sizeof(bad_entries[0]));
	tcase_add_test(tr, test_reconcile_malformed_writes_nothing);
	tcase_add_test(tr, test_reconcile_read_only_etc);
	tcase_add_test(tr, test_reconcile_under_filter);
	tcase_add_test(tr, test_counts_parse);
	tcase_add_test(tr, test_counts_sparse_columns);
	tcase_add_loop_test(tr, test_counts_bad_table, 0, sizeof(bad_counts) / sizeof(bad_counts[0]));
	suite_add_tcase(s, tr);
	return s;
}

CC_TEST_MAIN(irq_suite)
