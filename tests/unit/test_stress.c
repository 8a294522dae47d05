/* 32 hooks at once against one ledger, as processes: each does what the
 * hook does between reading its inputs and writing cgroups — lock the
 * ledger, read what is taken, run the allocator, record, commit — all
 * released by one gate.  However the lock orders them, the outcome must be
 * the one a serial run gives: exactly as many carves as fit, the others
 * refused for capacity (ENOSPC, exit 1 in the hook), no CPU in two carves.
 * The kernel side of the same race runs under real crun in
 * tests/e2e/scenarios/41-concurrent.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"
#include "policy.h"
#include "testlib.h"

#define HOOKS 32

/* The e2e guest's shape (2 packages x 4 cores x 2 threads, a NUMA node
 * each, siblings adjacent) and its harness policy. */
static const char shape[] = "pack:2 numa:1 core:4 pu:2";
static const char policy_text[] = "reserved: \"0-1,8-9\"\n"
				  "minShared: 1\n"
				  "classes:\n"
				  "  latency:\n"
				  "    coreType: performance\n"
				  "    smt: isolate\n"
				  "    memory: local\n"
				  "    irq: steer-away\n";

struct world {
	struct cc_topo *topo;
	struct cc_policy *policy;
	struct cc_request req;
};

static void world_load(struct world *w)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = shape };

	ck_assert_msg(root != NULL, "%s", err.msg);
	w->policy = cc_policy_parse(policy_text, strlen(policy_text), "stress policy", &err);
	ck_assert_msg(w->policy != NULL, "%s", err.msg);
	src.root = root;
	src.overrides = w->policy->overrides;
	src.noverrides = w->policy->noverrides;
	w->topo = cc_topo_load(&src, &err);
	ck_assert_msg(w->topo != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_request_parse("{class: latency, cpus: 1}", 25, &w->req, &err), 0);
}

static void world_free(struct world *w)
{
	cc_topo_free(w->topo);
	cc_policy_free(w->policy);
}

/* One carve's decision into a ledger carve. */
static void to_carve(const struct cc_decision *d, const char *id, struct cc_carve *c)
{
	cc_carve_init(c);
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->kind, sizeof(c->kind), "container");
	snprintf(c->mode, sizeof(c->mode), "remote-partition");
	snprintf(c->cgroup, sizeof(c->cgroup), "/kubepods/stress/%s", id);
	snprintf(c->class_name, sizeof(c->class_name), "%s", d->class_name);
	hwloc_bitmap_copy(c->cpus, d->cpus);
	hwloc_bitmap_copy(c->parked, d->parked);
	hwloc_bitmap_copy(c->mems, d->mems);
	c->exclusive = true;
}

/* The hook's decide-and-record, under the ledger lock.  0 placed, 1
 * refused for capacity, 2 anything else (printed). */
static int hook(const struct world *w, const char *state, const char *id)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(state, &err);
	_cleanup_bitmap_ hwloc_bitmap_t taken = NULL;
	struct cc_decision d;
	struct cc_carve c;
	int r;

	if (!l || !(taken = cc_ledger_taken(l)))
		goto fail;
	if (cc_allocate(w->topo, w->policy, taken, &w->req, &d, &err) < 0) {
		if (err.code == ENOSPC)
			return 1;
		goto fail;
	}
	to_carve(&d, id, &c);
	r = cc_ledger_add(l, &c, &err) < 0 ? -1 : cc_ledger_commit(l, &err);
	cc_carve_fini(&c);
	cc_decision_fini(&d);
	if (r < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "hook %s: %s\n", id, err.msg);
	return 2;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* The serial run, in memory: how many fit and which CPUs they take. */
static int serial(const struct world *w, hwloc_bitmap_t used)
{
	int n = 0;

	hwloc_bitmap_zero(used);
	for (;;) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_decision d;

		if (cc_allocate(w->topo, w->policy, used, &w->req, &d, &err) < 0) {
			ck_assert_msg(err.code == ENOSPC, "serial run: %s", err.msg);
			return n;
		}
		hwloc_bitmap_or(used, used, d.cpus);
		hwloc_bitmap_or(used, used, d.parked);
		cc_decision_fini(&d);
		n++;
		ck_assert_int_le(n, HOOKS);
	}
}

START_TEST(test_32_hooks_at_once)
{
	struct world w;
	char base[] = "/tmp/cc-stress-XXXXXX", state[64];
	_cleanup_bitmap_ hwloc_bitmap_t want = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	pid_t pids[HOOKS];
	int gate[2], placed = 0, refused = 0, fit;

	world_load(&w);
	fit = serial(&w, want);
	/* Independently (docs/allocator.md, the minShared rule): 12 CPUs are
	 * not reserved, a carve costs a whole core (2), the pool keeps 1. */
	ck_assert_int_eq(fit, (12 - 1) / 2);
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(state, sizeof(state), "%s/state", base);
	ck_assert_int_eq(pipe(gate), 0);
	for (int i = 0; i < HOOKS; i++) {
		pids[i] = cc_test_fork();
		if (pids[i] == 0) {
			char id[32], c;

			close(gate[1]);
			/* Blocks until the parent closes its end: all start together. */
			if (read(gate[0], &c, 1) != 0)
				_exit(3);
			snprintf(id, sizeof(id), "ctr%02d", i);
			_exit(hook(&w, state, id));
		}
	}
	close(gate[0]);
	close(gate[1]);
	for (int i = 0; i < HOOKS; i++) {
		int st;

		ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "hook %d: status %#x", i, st);
		if (WEXITSTATUS(st) == 0)
			placed++;
		else
			refused++;
	}
	ck_assert_int_eq(placed, fit);
	ck_assert_int_eq(refused, HOOKS - fit);

	/* The ledger's strict loader refuses overlapping carves itself; check
	 * the union too, and that every carve is one whole core. */
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_ncarves(l), fit);
	reserved = cc_policy_reserved(w.policy, w.topo);
	for (int i = 0; i < cc_ledger_ncarves(l); i++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, i);

		ck_assert_int_eq(hwloc_bitmap_weight(c->cpus), 1);
		ck_assert_int_eq(hwloc_bitmap_weight(c->parked), 1);
		ck_assert(!hwloc_bitmap_intersects(got, c->cpus) && !hwloc_bitmap_intersects(got, c->parked));
		hwloc_bitmap_or(got, got, c->cpus);
		hwloc_bitmap_or(got, got, c->parked);
		ck_assert(!hwloc_bitmap_intersects(c->cpus, reserved) && !hwloc_bitmap_intersects(c->parked, reserved));
	}
	ck_assert_msg(hwloc_bitmap_isequal(got, want), "the racing hooks took other CPUs than a serial run");
	cc_ledger_close(l);
	nftw(base, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	world_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("hooks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_32_hooks_at_once);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
