/* The hook's whole kernel half — cc_carve_create and cc_container_release
 * with the ledger, the allocator and the cgroup effect — against the
 * cgroup test double (fakecg.h) on a 2-socket SMT host (the e2e guest's
 * shape): every order of create and release, an uncarved sidecar, a pod
 * quota, sibling cgroups made before and after the carves, outside writes
 * between carve and release, a write failure injected at every step, and
 * seeded random sequences.  After every step: no CPU is owned twice, every
 * live carve runs on exactly its CPUs, the sidecar holds none of them;
 * after the last release every file holds its original value or the
 * outside write (docs/design.md, "One restore model"). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "container.h"
#include "cpulist.h"
#include "digest.h"
#include "effect.h"
#include "fakecg.h"
#include "ledger.h"
#include "testlib.h"
#include "topo.h"

#define SYNTH "pack:2 numa:1 core:4 pu:2"
#define POD "/kubepods/pod1"
#define SIDECAR POD "/x"

static const char policy_yaml[] = "reserved: \"0-1,8-9\"\n"
				  "minShared: 1\n"
				  "classes:\n"
				  "  latency:\n"
				  "    coreType: performance\n"
				  "    smt: isolate\n"
				  "    exclusive: true\n"
				  "    memory: local\n"
				  "    irq: leave\n"
				  "    partition: root\n"
				  "    quota: drop\n"
				  "  wide:\n"
				  "    coreType: performance\n"
				  "    smt: full\n"
				  "    exclusive: true\n"
				  "    memory: local\n"
				  "    irq: leave\n"
				  "    partition: root\n"
				  "    quota: drop\n";

static const enum fakecg_kernel kernels[] = { FAKECG_6_1, FAKECG_6_12, FAKECG_7 };
static const char *const kernel_names[] = { "6.1", "6.12", "7" };

struct env {
	char dir[PATH_MAX];
	char state[PATH_MAX + 16];
	char policy[PATH_MAX + 16];
	enum fakecg_kernel k;
	struct fakecg *f;
	struct cc_root *root;
	struct cc_topo_source src;
	struct cc_ctx ctx;
	char *log;
	size_t loglen;
	char where[256]; /* the step, for messages */
};

static void env_init(struct env *e, enum fakecg_kernel k)
{
	struct cc_err err = CC_ERR_INIT;
	FILE *fp;

	memset(e, 0, sizeof(*e));
	e->k = k;
	/* tmpfs: the ledger fsyncs every commit, thousands of times here. */
	snprintf(e->dir, sizeof(e->dir), "%s/cc-restore-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->state, sizeof(e->state), "%s/state", e->dir);
	snprintf(e->policy, sizeof(e->policy), "%s/policy.yaml", e->dir);
	ck_assert_int_eq(mkdir(e->state, 0700), 0);
	fp = fopen(e->policy, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(policy_yaml, fp);
	fclose(fp);
	e->f = fakecg_new(e->dir, k, "0-15", "0-1");
	ck_assert_ptr_nonnull(e->f);
	e->root = cc_root_open(e->dir, &err);
	ck_assert_msg(e->root != NULL, "%s", err.msg);
	e->src = (struct cc_topo_source){ .kind = CC_TOPO_SYNTHETIC, .arg = SYNTH };
	e->ctx = (struct cc_ctx){ .root = e->root,
				  .policy_path = e->policy,
				  .state_dir = e->state,
				  .log = open_memstream(&e->log, &e->loglen),
				  .cg_ops = &fakecg_ops,
				  .cg_ops_arg = e->f,
				  .topo_src = &e->src };
	ck_assert_ptr_nonnull(e->ctx.log);
}

static void env_fini(struct env *e)
{
	char *out = NULL;

	fclose(e->ctx.log);
	free(e->log);
	cc_root_free(e->root);
	fakecg_free(e->f);
	cc_test_sh(&out, "rm -rf '%s'", e->dir);
	free(out);
}

/* The log so far (the hook's stderr). */
static const char *env_log(struct env *e)
{
	fflush(e->ctx.log);
	return e->log ? e->log : "";
}

static void mk(struct env *e, const char *cgroup, bool populated)
{
	ck_assert_int_eq(fakecg_mkdir(e->f, cgroup, populated), 0);
}

/* A pod as the kubelet makes it: its cgroup with a quota, a sidecar that
 * inherits its cpuset. */
static void mk_pod(struct env *e, const char *quota)
{
	mk(e, "/kubepods", false);
	mk(e, POD, false);
	ck_assert_int_eq(fakecg_write(e->f, POD, "cpu.max", quota), 0);
	mk(e, SIDECAR, true);
}

/* The pod with two containers, a and b, whose cgroups exist. */
static void mk_pod_ab(struct env *e, const char *quota)
{
	mk_pod(e, quota);
	mk(e, POD "/a", true);
	mk(e, POD "/b", true);
}

static int carve_kind(struct env *e, const char *kind, const char *id, const char *cgroup, const char *cls, int cpus,
		      struct cc_err *err)
{
	struct cc_request req = { .cpus = cpus };
	struct cc_carve_spec spec = { .id = id, .kind = kind, .cgroup = cgroup, .req = &req };
	struct cc_create_result res;
	int rc;

	snprintf(req.class_name, sizeof(req.class_name), "%s", cls);
	cc_err_clear(err);
	rc = cc_carve_create(&e->ctx, &spec, &res, err);
	cc_decision_fini(&res.decision);
	return rc;
}

static int carve(struct env *e, const char *id, const char *cgroup, const char *cls, int cpus, struct cc_err *err)
{
	return carve_kind(e, "container", id, cgroup, cls, cpus, err);
}

/* poststop: the runtime has removed the container's cgroup first. */
static int release(struct env *e, const char *id, const char *cgroup, struct cc_err *err)
{
	if (cgroup && fakecg_exists(e->f, cgroup)) {
		fakecg_exit(e->f, cgroup);
		ck_assert_int_eq(fakecg_rmdir(e->f, cgroup), 0);
	}
	cc_err_clear(err);
	return cc_container_release(&e->ctx, id, "container", err);
}

static struct cc_ledger *ledger(struct env *e)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_read(e->state, &err);

	ck_assert_msg(l != NULL, "%s: ledger: %s", e->where, err.msg);
	return l;
}

static bool same_set(const char *a, const char *b)
{
	_cleanup_bitmap_ hwloc_bitmap_t x = hwloc_bitmap_alloc(), y = hwloc_bitmap_alloc();
	struct cc_err err = CC_ERR_INIT;

	if (cc_cpulist_parse(a, x, "a", &err) < 0 || cc_cpulist_parse(b, y, "b", &err) < 0)
		return false;
	return hwloc_bitmap_isequal(x, y);
}

static void set_of(const char *s, hwloc_bitmap_t out)
{
	struct cc_err err = CC_ERR_INIT;

	ck_assert_msg(cc_cpulist_parse(s, out, "set", &err) == 0, "%s", err.msg);
}

/* The invariant after every step.  `cpus_below_pod` (out): the CPUs of
 * the live quota-dropping carves in the pod. */
static void check_invariant(struct env *e, int *cpus_below_pod, int *releasing)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger(e);
	_cleanup_bitmap_ hwloc_bitmap_t held = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t eff = hwloc_bitmap_alloc(), live = hwloc_bitmap_alloc();
	int below = 0;

	for (int i = 0; i < cc_ledger_ncarves(l); i++) {
		const struct cc_carve *c = cc_ledger_carve_at(l, i);
		_cleanup_free_ char *want = cc_cpulist_format(c->cpus);

		hwloc_bitmap_or(mine, c->cpus, c->parked);
		ck_assert_msg(!hwloc_bitmap_intersects(mine, held), "%s: carve %s shares CPUs with another", e->where,
			      c->id);
		hwloc_bitmap_or(held, held, mine);
		if (!c->releasing)
			hwloc_bitmap_or(live, live, mine);
		if (!strncmp(c->cgroup, POD "/", strlen(POD) + 1) && !c->releasing)
			below += hwloc_bitmap_weight(c->cpus);
		if (c->releasing || !fakecg_exists(e->f, c->cgroup))
			continue;
		ck_assert_msg(same_set(fakecg_get(e->f, c->cgroup, "cpuset.cpus.effective"), want),
			      "%s: carve %s runs on %s, not its %s\n%s", e->where, c->id,
			      fakecg_get(e->f, c->cgroup, "cpuset.cpus.effective"), want, env_log(e));
	}
	/* The sidecar, and any other cgroup of the pod that is no carve,
	 * holds none of the carves' CPUs or parked siblings. */
	if (fakecg_exists(e->f, SIDECAR)) {
		set_of(fakecg_get(e->f, SIDECAR, "cpuset.cpus.effective"), eff);
		ck_assert_msg(!hwloc_bitmap_intersects(eff, live), "%s: the sidecar runs on %s, carved CPUs among them\n%s",
			      e->where, fakecg_get(e->f, SIDECAR, "cpuset.cpus.effective"), env_log(e));
	}
	if (cpus_below_pod)
		*cpus_below_pod = below;
	if (releasing) {
		*releasing = 0;
		for (int i = 0; i < cc_ledger_ncarves(l); i++)
			*releasing += cc_ledger_carve_at(l, i)->releasing;
	}
}

/* After the last release: the node as it was (or as others left it). */
static void check_restored(struct env *e, const char *quota)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger(e);
	const char *sc;

	ck_assert_msg(cc_ledger_ncarves(l) == 0, "%s: %d carves left", e->where, cc_ledger_ncarves(l));
	ck_assert_msg(!cc_ledger_section(l, "cgroup", false), "%s: cgroup records left:\n%s", e->where,
		      json_dumps(cc_ledger_section(l, "cgroup", false), JSON_COMPACT));
	if (quota)
		ck_assert_msg(!strcmp(fakecg_get(e->f, POD, "cpu.max"), quota), "%s: pod cpu.max \"%s\", not \"%s\"",
			      e->where, fakecg_get(e->f, POD, "cpu.max"), quota);
	if (fakecg_exists(e->f, SIDECAR)) {
		sc = fakecg_get(e->f, SIDECAR, "cpuset.cpus");
		/* Linux 6.1 refuses the empty (inheriting) set on a cgroup with
		 * tasks: the parent's CPUs are written out instead. */
		ck_assert_msg(!strcmp(sc, "") ||
				      (e->k == FAKECG_6_1 && same_set(sc, fakecg_get(e->f, POD, "cpuset.cpus.effective"))),
			      "%s: sidecar cpuset.cpus \"%s\"", e->where, sc);
		ck_assert_msg(same_set(fakecg_get(e->f, SIDECAR, "cpuset.cpus.effective"),
				       fakecg_get(e->f, POD, "cpuset.cpus.effective")),
			      "%s: sidecar effective %s, pod %s", e->where, fakecg_get(e->f, SIDECAR, "cpuset.cpus.effective"),
			      fakecg_get(e->f, POD, "cpuset.cpus.effective"));
	}
	if (e->k != FAKECG_6_1) {
		ck_assert_msg(!strcmp(fakecg_get(e->f, "/kubepods", "cpuset.cpus.exclusive"), ""),
			      "%s: /kubepods exclusive \"%s\"", e->where, fakecg_get(e->f, "/kubepods", "cpuset.cpus.exclusive"));
		ck_assert_msg(!strcmp(fakecg_get(e->f, POD, "cpuset.cpus.exclusive"), ""), "%s: pod exclusive \"%s\"",
			      e->where, fakecg_get(e->f, POD, "cpuset.cpus.exclusive"));
	}
	ck_assert_msg(!fakecg_exists(e->f, "/" CC_PARKED_NAME), "%s: the parked partition is still there (cpus \"%s\")\n%s",
		      e->where, fakecg_get(e->f, "/" CC_PARKED_NAME, "cpuset.cpus"), env_log(e));
	ck_assert_msg(!strcmp(fakecg_get(e->f, "/", "cpuset.cpus.effective"), "0-15"), "%s: root effective %s", e->where,
		      fakecg_get(e->f, "/", "cpuset.cpus.effective"));
}

/* The pod's quota with `cpus` carved CPUs below it: none while any carve
 * of the pod lives (the kubelet's DisableCPUQuotaWithExclusiveCPUs). */
static const char *quota_for(const char *orig, int cpus)
{
	long long q, p;

	ck_assert_int_eq(cc_cg_parse_cpu_max(orig, &q, &p), 0);
	return q >= 0 && cpus > 0 ? "max 100000" : orig;
}

static void check_quota(struct env *e, const char *orig, int cpus)
{
	const char *want = quota_for(orig, cpus);

	ck_assert_msg(!strcmp(fakecg_get(e->f, POD, "cpu.max"), want), "%s: pod cpu.max \"%s\", want \"%s\" (%d CPUs)\n%s",
		      e->where, fakecg_get(e->f, POD, "cpu.max"), want, cpus, env_log(e));
}

/* A step that must succeed, with the step and the error in the message. */
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", e.where, err.msg)

/* ---- every order -------------------------------------------------------- */

static bool next_perm(int *a, int n)
{
	int i = n - 2, j = n - 1;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return false;
	while (a[j] <= a[i])
		j--;
	int t = a[i];
	a[i] = a[j];
	a[j] = t;
	for (int l = i + 1, r = n - 1; l < r; l++, r--) {
		t = a[l];
		a[l] = a[r];
		a[r] = t;
	}
	return true;
}

/* One pod, `n` carves created in `create` order and released in `rel`
 * order; the containers' cgroups all exist before the first carve
 * (`early`, as under a pod start or a kubelet starting them together) or
 * each is made just before its own carve. */
static void run_order(enum fakecg_kernel k, int n, const int *create, const int *rel, bool early, const char *quota)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char id[8], cg[64];
	int below;

	env_init(&e, k);
	mk_pod(&e, quota);
	for (int i = 0; early && i < n; i++) {
		snprintf(cg, sizeof(cg), POD "/c%d", i);
		mk(&e, cg, true);
	}
	for (int s = 0; s < n; s++) {
		snprintf(id, sizeof(id), "c%d", create[s]);
		snprintf(cg, sizeof(cg), POD "/c%d", create[s]);
		snprintf(e.where, sizeof(e.where), "kernel %s, create %s (step %d)", kernel_names[k], id, s);
		if (!early)
			mk(&e, cg, true);
		ck_assert_msg(carve(&e, id, cg, "latency", 1, &err) == 0, "%s: %s", e.where, err.msg);
		check_invariant(&e, &below, NULL);
		check_quota(&e, quota, below);
	}
	for (int s = 0; s < n; s++) {
		snprintf(id, sizeof(id), "c%d", rel[s]);
		snprintf(cg, sizeof(cg), POD "/c%d", rel[s]);
		snprintf(e.where, sizeof(e.where), "kernel %s, release %s (step %d)", kernel_names[k], id, s);
		ck_assert_msg(release(&e, id, cg, &err) == 0, "%s: %s", e.where, err.msg);
		check_invariant(&e, &below, NULL);
		check_quota(&e, quota, below);
	}
	check_restored(&e, quota);
	env_fini(&e);
}

/* 3 carves: every create order with every release order. */
START_TEST(test_every_order_3)
{
	int create[3] = { 0, 1, 2 };

	do {
		int rel[3] = { 0, 1, 2 };

		do
			run_order(kernels[_i], 3, create, rel, true, "50000 100000");
		while (next_perm(rel, 3));
	} while (next_perm(create, 3));
}
END_TEST

/* 4 carves: every release order, the containers' cgroups made one by one
 * (a sibling made after a carve) and all at once. */
START_TEST(test_every_release_order_4)
{
	int create[4] = { 0, 1, 2, 3 }, rel[4] = { 0, 1, 2, 3 };

	do {
		run_order(kernels[_i], 4, create, rel, false, "50000 100000");
		run_order(kernels[_i], 4, create, rel, true, "250000 100000");
	} while (next_perm(rel, 4));
}
END_TEST

/* Issue #38 item 2: a pod limit that covers its carves (request = limit
 * = 3, carves of 2 and 1) stayed on them, a CFS quota on top of pinning.
 * Now none while either lives, in both release orders, and the pod's
 * comes back after the last. */
START_TEST(test_pod_quota_none_while_carved)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	for (int order = 0; order < 2; order++) {
		env_init(&e, kernels[_i]);
		mk_pod_ab(&e, "300000 100000");
		snprintf(e.where, sizeof(e.where), "kernel %s, %s first", kernel_names[_i], order ? "b" : "a");
		OK(carve(&e, "a", POD "/a", "latency", 2, &err));
		ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
		ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpu.max"), "max 100000");
		OK(carve(&e, "b", POD "/b", "latency", 1, &err));
		ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
		OK(release(&e, order ? "b" : "a", order ? POD "/b" : POD "/a", &err));
		ck_assert_msg(!strcmp(fakecg_get(e.f, POD, "cpu.max"), "max 100000"), "%s: pod %s with one carve left",
			      e.where, fakecg_get(e.f, POD, "cpu.max"));
		OK(release(&e, order ? "a" : "b", order ? POD "/a" : POD "/b", &err));
		check_restored(&e, "300000 100000");
		env_fini(&e);
	}
}
END_TEST

/* The kubelet resizes the pod in place while it is carved: its value is
 * the one restored at the end, and the hook says so once.  While carves
 * live it is the record's original (re-based, issue #31 item 3), and the
 * pod has no quota again until the last carve goes, whatever the size. */
START_TEST(test_outside_write_wins)
{
	static const char *const resize[] = { "300000 100000", "50000 100000" };
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	for (int r = 0; r < 2; r++) {
		env_init(&e, kernels[_i]);
		snprintf(e.where, sizeof(e.where), "kernel %s, resize to %s", kernel_names[_i], resize[r]);
		mk_pod_ab(&e, "100000 100000");
		OK(carve(&e, "a", POD "/a", "latency", 1, &err));
		OK(carve(&e, "b", POD "/b", "latency", 1, &err));
		ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
		ck_assert_int_eq(fakecg_write(e.f, POD, "cpu.max", resize[r]), 0);
		OK(release(&e, "a", POD "/a", &err));
		ck_assert_msg(!strcmp(fakecg_get(e.f, POD, "cpu.max"), "max 100000"), "%s: %s",
			      e.where, fakecg_get(e.f, POD, "cpu.max"));
		ck_assert_msg(strstr(env_log(&e), POD "/cpu.max was changed by someone else"), "%s: log:\n%s", e.where,
			      env_log(&e));
		OK(release(&e, "b", POD "/b", &err));
		check_restored(&e, resize[r]);
		/* Said once: b's release found no record to complain about. */
		ck_assert_ptr_null(strstr(strstr(env_log(&e), "changed by someone else") + 1, "changed by someone else"));
		env_fini(&e);
	}
}
END_TEST

/* A quota put on the pod after a carve arrived (the pod was at max: no
 * record; then a resize, or systemd re-applying CPUQuota=): the record a
 * second carve makes counts every live carve below it, not the newcomer
 * alone (issue #31 item 3: 3 exclusive CPUs ran throttled to 1.5). */
START_TEST(test_quota_record_seeded)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod_ab(&e, "max 100000");
	OK(carve(&e, "a", POD "/a", "wide", 2, &err));
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
	ck_assert_int_eq(fakecg_write(e.f, POD, "cpu.max", "150000 100000"), 0);
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	ck_assert_msg(!strcmp(fakecg_get(e.f, POD, "cpu.max"), "max 100000"), "%s: pod %s with 3 CPUs carved\n%s",
		      e.where, fakecg_get(e.f, POD, "cpu.max"), env_log(&e));
	OK(release(&e, "b", POD "/b", &err));
	/* a still lives. */
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
	OK(release(&e, "a", POD "/a", &err));
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "150000 100000");
	env_fini(&e);
}
END_TEST

/* A value someone else wrote before a carve arrives is the one restored:
 * the arriving carve takes it as the original. */
START_TEST(test_outside_write_before_arrival)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod_ab(&e, "50000 100000");
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	ck_assert_int_eq(fakecg_write(e.f, POD, "cpu.max", "70000 100000"), 0);
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
	OK(release(&e, "b", POD "/b", &err));
	OK(release(&e, "a", POD "/a", &err));
	check_restored(&e, "70000 100000");
	env_fini(&e);
}
END_TEST

/* The measured 6.1 bug: d's cgroup was there when c was carved, so c made
 * it a peer; once d is carved it holds its own CPUs, and c's release must
 * not hand it c's. */
START_TEST(test_carve_was_a_peer)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod(&e, "max 100000");
	mk(&e, POD "/c", true);
	mk(&e, POD "/d", true);
	OK(carve(&e, "c", POD "/c", "latency", 1, &err));
	OK(carve(&e, "d", POD "/d", "latency", 1, &err));
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "c", POD "/c", &err));
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "d", POD "/d", &err));
	check_restored(&e, "max 100000");
	env_fini(&e);
}
END_TEST

/* An inheriting peer goes back to inheriting; on 6.1 a populated one gets
 * its parent's CPUs written out, and the hook says why. */
START_TEST(test_inheriting_peer)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e, FAKECG_6_1);
	e.ctx.verbose = true; /* how the kernel refused it is a --verbose note */
	snprintf(e.where, sizeof(e.where), "kernel 6.1");
	mk_pod(&e, "max 100000");
	mk(&e, POD "/idle", false);
	mk(&e, POD "/a", true);
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	ck_assert_str_eq(fakecg_get(e.f, POD "/idle", "cpuset.cpus"), "0-1,4-15");
	OK(release(&e, "a", POD "/a", &err));
	ck_assert_str_eq(fakecg_get(e.f, POD "/idle", "cpuset.cpus"), "");
	ck_assert_str_eq(fakecg_get(e.f, SIDECAR, "cpuset.cpus"), "0-15");
	ck_assert_msg(strstr(env_log(&e), SIDECAR "/cpuset.cpus: the kernel refuses the empty (inheriting) set"), "%s",
		      env_log(&e));
	check_restored(&e, "max 100000");
	env_fini(&e);
}
END_TEST

static char *carve_cpus(struct env *e, const char *id);

/* Whether cgroup `cg`'s effective CPUs meet the list `cpus`. */
static bool runs_on(struct env *e, const char *cg, const char *cpus)
{
	_cleanup_bitmap_ hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();

	set_of(fakecg_get(e->f, cg, "cpuset.cpus.effective"), a);
	set_of(cpus, b);
	return hwloc_bitmap_intersects(a, b);
}

/* The CPUs and parked siblings of carve `id`. */
static char *carve_both(struct env *e, const char *id)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger(e);
	struct cc_carve *c = cc_ledger_find(l, id);
	_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();

	ck_assert_ptr_nonnull(c);
	hwloc_bitmap_or(both, c->cpus, c->parked);
	return cc_cpulist_format(both);
}

/* Linux 6.1, cpuset-only: nothing but cpusets keeps other tasks off a
 * carve, so its CPUs leave every cgroup beside it and beside each of its
 * ancestors (the pod's sidecar, another pod and its containers, a slice
 * at the root with tasks, as the kubelet's systemd driver leaves them),
 * never one that holds a carve; each comes back with the last carve it
 * gave CPUs up for, in either release order. */
START_TEST(test_ancestor_peers)
{
	for (int order = 0; order < 2; order++) {
		struct env e;
		struct cc_err err = CC_ERR_INIT;
		_cleanup_free_ char *a = NULL, *b = NULL, *ac = NULL, *bc = NULL;

		env_init(&e, FAKECG_6_1);
		snprintf(e.where, sizeof(e.where), "kernel 6.1, release order %d", order);
		mk_pod(&e, "max 100000");
		mk(&e, POD "/a", true);
		mk(&e, "/system.slice", true);
		mk(&e, "/kubepods/pod2", false);
		mk(&e, "/kubepods/pod2/b", true);
		mk(&e, "/kubepods/pod2/y", true);
		OK(carve(&e, "a", POD "/a", "latency", 1, &err));
		a = carve_both(&e, "a");
		ck_assert_msg(!runs_on(&e, SIDECAR, a) && !runs_on(&e, "/kubepods/pod2/b", a) &&
				      !runs_on(&e, "/kubepods/pod2/y", a) && !runs_on(&e, "/system.slice", a),
			      "%s: a carve's CPUs %s left somewhere: %s", e.where, a, fakecg_dump(e.f));
		/* A carve inside a pod that gave up the first carve's CPUs:
		 * that pod keeps its CPUs, the first pod gives them up. */
		OK(carve(&e, "b", "/kubepods/pod2/b", "latency", 1, &err));
		b = carve_both(&e, "b");
		ac = carve_cpus(&e, "a");
		bc = carve_cpus(&e, "b");
		ck_assert_msg(same_set(fakecg_get(e.f, "/kubepods/pod2/b", "cpuset.cpus.effective"), bc) &&
				      same_set(fakecg_get(e.f, POD "/a", "cpuset.cpus.effective"), ac),
			      "%s: a carve lost CPUs: %s", e.where, fakecg_dump(e.f));
		ck_assert_msg(!runs_on(&e, SIDECAR, b) && !runs_on(&e, "/kubepods/pod2/y", b) &&
				      !runs_on(&e, "/system.slice", b) && !runs_on(&e, "/kubepods/pod2/y", a),
			      "%s: b's CPUs %s left somewhere: %s", e.where, b, fakecg_dump(e.f));
		OK(release(&e, order ? "b" : "a", order ? "/kubepods/pod2/b" : POD "/a", &err));
		ck_assert_msg(!runs_on(&e, "/system.slice", order ? a : b) && runs_on(&e, "/system.slice", order ? b : a),
			      "%s: after the first release: %s", e.where, fakecg_dump(e.f));
		OK(release(&e, order ? "a" : "b", order ? POD "/a" : "/kubepods/pod2/b", &err));
		/* Back as they were: inheriting where the kernel takes the empty
		 * set back (no tasks), the parent's CPUs where it does not. */
		ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod2", "cpuset.cpus"), "");
		ck_assert_str_eq(fakecg_get(e.f, POD, "cpuset.cpus"), "");
		ck_assert_str_eq(fakecg_get(e.f, "/system.slice", "cpuset.cpus"), "0-15");
		ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod2/y", "cpuset.cpus"), "0-15");
		check_restored(&e, "max 100000");
		env_fini(&e);
	}
}
END_TEST

/* 10-hook's node on 6.1: a carve's release reads its peers' ancestors'
 * records from the ledger one at a time (a lazy set), which moves the
 * record being undone in memory (it crashed the poststop once); a pod
 * made after both carves takes no part until a carve meets it. */
START_TEST(test_release_reads_ancestors)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *c2 = NULL;

	env_init(&e, FAKECG_6_1);
	snprintf(e.where, sizeof(e.where), "kernel 6.1");
	mk(&e, "/kubepods", false);
	mk(&e, POD, false);
	mk(&e, SIDECAR, true);
	mk(&e, POD "/c1", true);
	OK(carve(&e, "c1", POD "/c1", "latency", 2, &err));
	mk(&e, "/kubepods/pod2", false);
	mk(&e, "/kubepods/pod2/c2", true);
	OK(carve(&e, "c2", "/kubepods/pod2/c2", "latency", 2, &err));
	c2 = carve_both(&e, "c2");
	mk(&e, "/kubepods/pod4", false);
	mk(&e, "/kubepods/pod4/plain", true);
	OK(release(&e, "c1", POD "/c1", &err));
	ck_assert_msg(!runs_on(&e, SIDECAR, c2), "%s: the sidecar runs on c2's %s: %s", e.where, c2, fakecg_dump(e.f));
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod4/plain", "cpuset.cpus.effective"), "0-15");
	OK(release(&e, "c2", "/kubepods/pod2/c2", &err));
	ck_assert_str_eq(fakecg_get(e.f, SIDECAR, "cpuset.cpus.effective"), "0-15");
	check_restored(&e, NULL);
	env_fini(&e);
}
END_TEST

/* Local partitions (carves right below the root) share one parked
 * partition; it goes with the last of them. */
START_TEST(test_local_partitions)
{
	int rel[3] = { 0, 1, 2 };

	do {
		struct env e;
		struct cc_err err = CC_ERR_INIT;
		char id[8], cg[16];

		env_init(&e, kernels[_i]);
		mk(&e, "/other", true);
		for (int i = 0; i < 3; i++) {
			snprintf(id, sizeof(id), "l%d", i);
			snprintf(cg, sizeof(cg), "/l%d", i);
			snprintf(e.where, sizeof(e.where), "kernel %s, local create %s", kernel_names[_i], id);
			mk(&e, cg, true);
			ck_assert_msg(carve(&e, id, cg, "latency", 1, &err) == 0, "%s: %s", e.where, err.msg);
			ck_assert_str_eq(fakecg_get(e.f, cg, "cpuset.cpus.partition"), "root");
			check_invariant(&e, NULL, NULL);
		}
		ck_assert_str_eq(fakecg_get(e.f, "/" CC_PARKED_NAME, "cpuset.cpus.partition"), "isolated");
		ck_assert_str_eq(fakecg_get(e.f, "/" CC_PARKED_NAME, "cpuset.cpus.effective"), "3,5,7");
		for (int s = 0; s < 3; s++) {
			snprintf(id, sizeof(id), "l%d", rel[s]);
			snprintf(cg, sizeof(cg), "/l%d", rel[s]);
			snprintf(e.where, sizeof(e.where), "kernel %s, local release %s", kernel_names[_i], id);
			ck_assert_msg(release(&e, id, cg, &err) == 0, "%s: %s", e.where, err.msg);
			check_invariant(&e, NULL, NULL);
			ck_assert(!same_set(fakecg_get(e.f, "/other", "cpuset.cpus.effective"), "0-15") || s == 2);
		}
		check_restored(&e, NULL);
		ck_assert_str_eq(fakecg_get(e.f, "/other", "cpuset.cpus.effective"), "0-15");
		env_fini(&e);
	} while (next_perm(rel, 3));
}
END_TEST

/* CPUs a partition elsewhere holds are not chosen: seen on 6.1 when
 * init-parent's /corecarve.slice held them and the hook gave the container
 * the reserved CPUs instead; on 6.12 the attempt invalidated that other
 * partition, on 7.x the carve got less than it was given. */
START_TEST(test_foreign_partition_avoided)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	const char *where[] = { POD "/a", "/k1" };

	for (int w = 0; w < 2; w++) {
		env_init(&e, kernels[_i]);
		snprintf(e.where, sizeof(e.where), "kernel %s, carve at %s", kernel_names[_i], where[w]);
		mk_pod(&e, "50000 100000");
		mk(&e, "/foreign", false);
		ck_assert_int_eq(fakecg_write(e.f, "/foreign", "cpuset.cpus", "2-3"), 0);
		ck_assert_int_eq(fakecg_write(e.f, "/foreign", "cpuset.cpus.partition", "root"), 0);
		mk(&e, where[w], true);
		OK(carve(&e, "a", where[w], "latency", 1, &err));
		l = ledger(&e);
		ck_assert_msg(!hwloc_bitmap_isset(cc_ledger_carve_at(l, 0)->cpus, 2) &&
				      !hwloc_bitmap_isset(cc_ledger_carve_at(l, 0)->parked, 3),
			      "%s: carved 2-3", e.where);
		cc_ledger_close(l);
		l = NULL;
		check_invariant(&e, NULL, NULL);
		ck_assert_str_eq(fakecg_get(e.f, "/foreign", "cpuset.cpus.partition"), "root");
		OK(release(&e, "a", where[w], &err));
		ck_assert_str_eq(fakecg_get(e.f, "/foreign", "cpuset.cpus.partition"), "root");
		env_fini(&e);
	}
}
END_TEST

/* A carve that does not run on exactly its CPUs is refused and leaves
 * nothing: the kernel granted less than it was given (on 7.x a write that
 * conflicts is stripped, not refused); the same for the parked siblings. */
/* An id shared by carves of two kinds (issue #26: a container's poststop
 * under the id "exec:<pid>" gave a running exec's carve away): release
 * and settle act only on a carve of their own kind. */
START_TEST(test_kind_guarded)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	char want[64];

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod(&e, "max 100000");
	mk(&e, POD "/e", true);
	OK(carve_kind(&e, "exec", "exec:77", POD "/e", "latency", 1, &err));
	snprintf(want, sizeof(want), "%s", fakecg_get(e.f, POD "/e", "cpuset.cpus.effective"));
	/* A container's poststop under the exec's id: nothing released. */
	OK(cc_container_release(&e.ctx, "exec:77", "container", &err));
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 1);
	ck_assert_str_eq(cc_ledger_carve_at(l, 0)->kind, "exec");
	cc_ledger_close(l);
	l = NULL;
	ck_assert_str_eq(fakecg_get(e.f, POD "/e", "cpuset.cpus.effective"), want);
	/* A container created under that id: refused, the exec's carve kept. */
	mk(&e, POD "/a", true);
	ck_assert_int_eq(carve(&e, "exec:77", POD "/a", "latency", 1, &err), -1);
	ck_assert_msg(strstr(err.msg, "held by a carve of kind exec"), "%s: %s", e.where, err.msg);
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 1);
	ck_assert_str_eq(cc_ledger_carve_at(l, 0)->cgroup, POD "/e");
	ck_assert(!cc_ledger_carve_at(l, 0)->releasing);
	cc_ledger_close(l);
	l = NULL;
	ck_assert_str_eq(fakecg_get(e.f, POD "/e", "cpuset.cpus.effective"), want);
	/* The exec's own release gives it back. */
	fakecg_exit(e.f, POD "/e");
	ck_assert_int_eq(fakecg_rmdir(e.f, POD "/e"), 0);
	OK(cc_container_release(&e.ctx, "exec:77", "exec", &err));
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 0);
	env_fini(&e);
}
END_TEST

START_TEST(test_readback_refused)
{
	static const char *const held[] = { POD "/a", "/" CC_PARKED_NAME };
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = NULL;

	for (int h = 0; h < 2; h++) {
		if (h == 1 && kernels[_i] == FAKECG_6_1)
			continue; /* cpuset-only: no parked partition */
		env_init(&e, kernels[_i]);
		snprintf(e.where, sizeof(e.where), "kernel %s, %s short", kernel_names[_i], held[h]);
		mk_pod(&e, "50000 100000");
		mk(&e, POD "/a", true);
		if (h == 1)
			mk(&e, "/" CC_PARKED_NAME, false);
		ck_assert_int_eq(fakecg_withhold(e.f, held[h], h ? "3" : "2"), 0);
		ck_assert_int_eq(carve(&e, "a", POD "/a", "latency", 1, &err), -1);
		ck_assert_msg(strstr(err.msg, "cpuset.cpus.effective reads") && strstr(err.msg, "refused"), "%s: %s",
			      e.where, err.msg);
		l = ledger(&e);
		ck_assert_int_eq(cc_ledger_ncarves(l), 0);
		ck_assert_ptr_null(cc_ledger_section(l, "cgroup", false));
		cc_ledger_close(l);
		l = NULL;
		ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "50000 100000");
		/* 6.1 refuses the sidecar's empty set back (it has tasks): the
		 * pod's CPUs are written out. */
		ck_assert_msg(!strcmp(fakecg_get(e.f, SIDECAR, "cpuset.cpus"), "") ||
				      (e.k == FAKECG_6_1 && same_set(fakecg_get(e.f, SIDECAR, "cpuset.cpus"),
								     fakecg_get(e.f, POD, "cpuset.cpus.effective"))),
			      "%s: sidecar %s", e.where, fakecg_get(e.f, SIDECAR, "cpuset.cpus"));
		ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpuset.cpus.partition"), "member");
		ck_assert(!fakecg_exists(e.f, "/" CC_PARKED_NAME) || h == 1);
		env_fini(&e);
	}
}
END_TEST

/* ---- failures of the node around the hook ----------------------------------- */

/* cpuset-only (6.1): a peer container that exits while a carve narrows it
 * (ENOENT, or ENODEV while the kernel removes it) is gone, not a refusal:
 * the carve goes on without it and keeps no record of it; the same at the
 * release's write. */
START_TEST(test_peer_vanishes)
{
	static const int codes[] = { ENOENT, ENODEV };
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	for (int i = 0; i < 2; i++) {
		_cleanup_ledger_ struct cc_ledger *l = NULL;
		json_t *v = NULL;

		env_init(&e, FAKECG_6_1);
		snprintf(e.where, sizeof(e.where), "6.1, the peer goes with %s", strerror(codes[i]));
		mk_pod_ab(&e, "max 100000");
		mk(&e, POD "/y", true);
		fakecg_vanish(e.f, POD "/y", codes[i]);
		OK(carve(&e, "a", POD "/a", "latency", 1, &err));
		ck_assert(!fakecg_exists(e.f, POD "/y"));
		check_invariant(&e, NULL, NULL);
		l = cc_ledger_open(e.state, &err);
		ck_assert_msg(l != NULL, "%s", err.msg);
		ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", POD "/y/cpuset.cpus", &v, &err), 0);
		ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", SIDECAR "/cpuset.cpus", &v, &err), 1);
		cc_ledger_close(l);
		l = NULL;
		/* At the release: the sidecar goes between its read and its
		 * write. */
		fakecg_vanish(e.f, SIDECAR, codes[i]);
		OK(release(&e, "a", POD "/a", &err));
		ck_assert(!fakecg_exists(e.f, SIDECAR));
		check_restored(&e, "max 100000");
		env_fini(&e);
	}
}
END_TEST

/* A carved cgroup that outlives its poststop (crun runs poststop even when
 * it could not remove the cgroup) goes back to inheriting: a member, its
 * cpuset.cpus empty (its parent's CPUs, without the live partitions', on
 * 6.1 where the empty set is refused with tasks), so that the next carve
 * of the same CPUs is not refused.  Local partitions under the root on
 * every kernel, remote ones in a pod where the kernel has them. */
START_TEST(test_survivor_inherits)
{
	static const char *const where[][2] = { { "/s0", "/s1" }, { POD "/a", POD "/b" } };
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	for (int w = 0; w < 2; w++) {
		_cleanup_ledger_ struct cc_ledger *l = NULL;
		_cleanup_free_ char *first = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t eff = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
		const char *a = where[w][0], *b = where[w][1];

		if (w == 1 && kernels[_i] == FAKECG_6_1)
			continue; /* cpuset-only in a pod: its survivor is a peer */
		env_init(&e, kernels[_i]);
		snprintf(e.where, sizeof(e.where), "kernel %s, %s survives", kernel_names[_i], a);
		mk_pod(&e, "max 100000");
		mk(&e, a, true);
		mk(&e, b, true);
		OK(carve(&e, "a", a, "latency", 1, &err));
		first = strdup(fakecg_get(e.f, a, "cpuset.cpus"));
		OK(release(&e, "a", NULL, &err));
		ck_assert_str_eq(fakecg_get(e.f, a, "cpuset.cpus.partition"), "member");
		set_of(fakecg_get(e.f, a, "cpuset.cpus"), eff);
		set_of(first, mine);
		ck_assert_msg(!strcmp(fakecg_get(e.f, a, "cpuset.cpus"), "") ||
				      (e.k == FAKECG_6_1 && !hwloc_bitmap_iszero(eff) && !hwloc_bitmap_intersects(mine, eff)),
			      "%s: cpuset.cpus \"%s\"", e.where, fakecg_get(e.f, a, "cpuset.cpus"));
		ck_assert_str_eq(fakecg_get(e.f, a, "cpuset.cpus.exclusive"), "");
		/* The same CPUs again, beside the survivor. */
		OK(carve(&e, "b", b, "latency", 1, &err));
		ck_assert_str_eq(fakecg_get(e.f, b, "cpuset.cpus"), first);
		check_invariant(&e, NULL, NULL);
		/* The survivor's tasks run off the live carve. */
		set_of(fakecg_get(e.f, a, "cpuset.cpus.effective"), eff);
		ck_assert_msg(!hwloc_bitmap_intersects(eff, mine), "%s: the survivor runs on %s", e.where,
			      fakecg_get(e.f, a, "cpuset.cpus.effective"));
		l = ledger(&e);
		ck_assert_int_eq(cc_ledger_ncarves(l), 1);
		cc_ledger_close(l);
		l = NULL;
		OK(release(&e, "b", b, &err));
		check_restored(&e, "max 100000");
		env_fini(&e);
	}
}
END_TEST

/* `memory: local` on a pod whose cpuset.mems leaves the carve's node out:
 * the kernel would place the memory on the pod's node instead.  The carve
 * is refused and nothing is left of it; allowed again, it is made. */
START_TEST(test_mems_read_back)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = NULL;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s, pod on node 1", kernel_names[_i]);
	mk_pod_ab(&e, "50000 100000");
	ck_assert_int_eq(fakecg_write(e.f, POD, "cpuset.mems", "1"), 0);
	ck_assert_int_eq(carve(&e, "a", POD "/a", "latency", 1, &err), -1);
	ck_assert_msg(strstr(err.msg, "cpuset.mems.effective reads \"1\", not the carve's memory nodes \"0\"") &&
			      strstr(err.msg, "refused"),
		      "%s: %s", e.where, err.msg);
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 0);
	ck_assert_ptr_null(cc_ledger_section(l, "cgroup", false));
	cc_ledger_close(l);
	l = NULL;
	/* 6.1 refuses the empty set back with tasks there: the pod's. */
	ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpuset.mems"), e.k == FAKECG_6_1 ? "1" : "");
	ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpuset.cpus.partition"), "member");
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "50000 100000");
	ck_assert(!fakecg_exists(e.f, "/" CC_PARKED_NAME));
	ck_assert_int_eq(fakecg_write(e.f, POD, "cpuset.mems", ""), 0);
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpuset.mems.effective"), "0");
	OK(release(&e, "a", POD "/a", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* The hook's whole carve and release in a thread with a 256 KiB stack:
 * no 128 KiB or 400 KiB array on it (the cgroup plan's ancestors, the
 * records a release loads), whatever the thread the library runs in. */
struct small_stack {
	struct env *e;
	int rc;
	char msg[CC_ERR_MSG_MAX];
};

static void *small_stack_run(void *arg)
{
	struct small_stack *s = arg;
	struct cc_err err = CC_ERR_INIT;

	s->rc = carve(s->e, "a", POD "/a", "latency", 1, &err);
	if (s->rc == 0)
		s->rc = release(s->e, "a", POD "/a", &err);
	snprintf(s->msg, sizeof(s->msg), "%s", err.msg);
	return NULL;
}

START_TEST(test_small_stack)
{
	struct env e;
	struct small_stack s = { .e = &e, .rc = -1 };
	pthread_attr_t attr;
	pthread_t t;

	env_init(&e, kernels[_i]);
	mk_pod_ab(&e, "50000 100000");
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
	ck_assert_int_eq(pthread_create(&t, &attr, small_stack_run, &s), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	pthread_attr_destroy(&attr);
	ck_assert_msg(s.rc == 0, "kernel %s: %s", kernel_names[_i], s.msg);
	snprintf(e.where, sizeof(e.where), "kernel %s, small stack", kernel_names[_i]);
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* The ledger's commit failing as a full or read-only disk fails it
 * (fault.h's injected errors), at each of its steps and at each commit a
 * carve or a release makes: the hook fails with the disk's reason, the
 * ledger on disk stays readable and consistent with the kernel (nothing
 * half-applied: a refused carve left nothing, or its journal, which the
 * next hook's gc undoes once the runtime removed the refused container's
 * cgroup; a release undone in the kernel and still in the ledger, which
 * the next poststop or gc undoes again), and the retry succeeds.  `fired` counts the runs where the
 * failure was reached. */
static bool commit_fails_once(enum fakecg_kernel k, const char *point, const char *code, int nth, bool at_release)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char armed[64], before[64];
	bool fired = false;
	int rc;

	snprintf(armed, sizeof(armed), "%s:%s@%d", point, code, nth);
	env_init(&e, k);
	snprintf(e.where, sizeof(e.where), "kernel %s, %s at the %s", kernel_names[k], armed,
		 at_release ? "release" : "carve");
	mk_pod_ab(&e, "50000 100000");
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	if (!at_release)
		e.ctx.fault = armed;
	snprintf(before, sizeof(before), "%s", fakecg_get(e.f, POD "/a", "cpuset.cpus"));
	rc = carve(&e, "a", POD "/a", "latency", 1, &err);
	e.ctx.fault = NULL;
	if (rc < 0) {
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);

		fired = true;
		ck_assert_msg(strstr(err.msg, "ledger.json") && (strstr(err.msg, strerror(ENOSPC)) ||
								 strstr(err.msg, strerror(EROFS)) ||
								 strstr(err.msg, strerror(EIO))),
			      "%s: %s", e.where, err.msg);
		/* The journal on disk (its rename made, the directory's fsync
		 * failed), nothing of it written; otherwise nothing at all. */
		if (cc_ledger_find(l, "a"))
			ck_assert_str_eq(fakecg_get(e.f, POD "/a", "cpuset.cpus"), before);
		else
			check_invariant(&e, NULL, NULL);
		/* The refused start: the runtime removes its cgroup; the
		 * kubelet starts it again. */
		fakecg_exit(e.f, POD "/a");
		ck_assert_int_eq(fakecg_rmdir(e.f, POD "/a"), 0);
		mk(&e, POD "/a", true);
		OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	}
	check_invariant(&e, NULL, NULL);
	if (at_release)
		e.ctx.fault = armed;
	rc = release(&e, "a", POD "/a", &err);
	e.ctx.fault = NULL;
	if (rc < 0) {
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);

		fired = true;
		ck_assert_msg(strstr(err.msg, "ledger.json"), "%s: %s", e.where, err.msg);
		/* Undone in the kernel and still in the ledger (its CPUs taken,
		 * as after a kill before the release's commit): the next
		 * poststop or the next hook's gc undoes it again, from the
		 * records.  Or out of it: the rename made, the directory's
		 * fsync failed. */
		if (cc_ledger_find(l, "a"))
			OK(release(&e, "a", NULL, &err));
	}
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
	return fired;
}

START_TEST(test_commit_fails)
{
	static const char *const points[] = { "ledger-write", "ledger-rename", "ledger-dirsync" };
	static const char *const codes[] = { "ENOSPC", "EROFS", "EIO" };

	for (int p = 0; p < 3; p++)
		for (int r = 0; r < 2; r++) {
			int nth;

			/* Every commit, until the n-th is past the last one. */
			for (nth = 1; commit_fails_once(kernels[_i], points[p], codes[(p + nth) % 3], nth, r); nth++)
				ck_assert_int_lt(nth, 10);
			/* A carve commits its journal, then the carve. */
			ck_assert_msg(nth > (r ? 1 : 2), "%s: %d commits failed at the %s", points[p], nth - 1,
				      r ? "release" : "carve");
		}
}
END_TEST

/* ---- an effect failing after the cgroup effect applied ------------------ */

/* The policy with latency steering IRQs away (wide leaves them). */
static void steer_policy(struct env *e)
{
	const char *from = "    irq: leave\n";
	const char *at = strstr(policy_yaml, from);
	char text[sizeof(policy_yaml) + 16];

	ck_assert_ptr_nonnull(at);
	snprintf(text, sizeof(text), "%.*s    irq: steer-away\n%s", (int)(at - policy_yaml), policy_yaml, at + strlen(from));
	cc_test_write_file(e->dir, "policy.yaml", text);
}

/* A /proc/irq under the root, as test_irq's: the default affinity and two
 * movable IRQs on every CPU. */
static void mk_irqs(struct env *e)
{
	ck_assert_int_eq(cc_test_sh(NULL, "cd '%s' && mkdir -p sys/devices/system/cpu proc/irq/24/virtio0-input.0 "
					  "proc/irq/25/virtio1-req.0 && echo 0-15 >sys/devices/system/cpu/online && "
					  "echo ffff >proc/irq/default_smp_affinity && for i in 24 25; do echo 0-15 "
					  ">proc/irq/$i/smp_affinity_list; echo 0 >proc/irq/$i/node; done",
				    e->dir),
			 0);
}

/* "IRQ: its smp_affinity_list, ...; default: its mask as a list". */
static void irqs_now(struct env *e, char *out, size_t len)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *d = NULL;
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/proc/irq/24/smp_affinity_list", e->dir);
	a = cc_test_slurp(p);
	snprintf(p, sizeof(p), "%s/proc/irq/25/smp_affinity_list", e->dir);
	b = cc_test_slurp(p);
	snprintf(p, sizeof(p), "%s/proc/irq/default_smp_affinity", e->dir);
	d = cc_test_slurp(p);
	/* The mask as a set: the kernel (and a rollback) may write it padded. */
	if (d) {
		_cleanup_bitmap_ hwloc_bitmap_t m = hwloc_bitmap_alloc();
		struct cc_err err = CC_ERR_INIT;

		d[strcspn(d, "\n")] = '\0';
		ck_assert_msg(m && cc_cpumask_parse(d, m, "default_smp_affinity", &err) == 0, "%s", err.msg);
		free(d);
		d = cc_cpulist_format(m);
	}
	if (a)
		a[strcspn(a, "\n")] = '\0';
	if (b)
		b[strcspn(b, "\n")] = '\0';
	snprintf(out, len, "24:%s 25:%s default:%s", a ? a : "?", b ? b : "?", d ? d : "?");
}

/* The carve's n-th /proc/irq write fails (CORECARVE_FAULT=irq-write:
 * ENOSPC@n, after the cgroup effect applied), for every n its apply
 * reaches: the IRQs it wrote are put back, its cgroups undone, the carve
 * and its records gone from the ledger; the runtime's next try carves,
 * and the releases give everything back. */
START_TEST(test_irq_write_fails)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char armed[64], before[256], now[256];
	int nth;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "%s irq-write", kernel_names[_i]);
	steer_policy(&e);
	mk_irqs(&e);
	mk_pod_ab(&e, "50000 100000");
	OK(carve(&e, "b", POD "/b", "wide", 2, &err));
	irqs_now(&e, before, sizeof(before));
	for (nth = 1;; nth++) {
		int rc;

		snprintf(armed, sizeof(armed), "irq-write:ENOSPC@%d", nth);
		e.ctx.fault = armed;
		rc = carve(&e, "a", POD "/a", "latency", 1, &err);
		e.ctx.fault = NULL;
		if (rc == 0)
			break;
		ck_assert_msg(strstr(err.msg, "injected failure"), "%s: write %d: %s", e.where, nth, err.msg);
		{
			_cleanup_ledger_ struct cc_ledger *l = ledger(&e);

			ck_assert_msg(!cc_ledger_find(l, "a"), "%s: write %d: carve a left in the ledger", e.where, nth);
		}
		irqs_now(&e, now, sizeof(now));
		ck_assert_msg(!strcmp(now, before), "%s: write %d: IRQs %s, before %s", e.where, nth, now, before);
		check_invariant(&e, NULL, NULL);
		/* The refused start: the runtime removes its cgroup; the
		 * kubelet starts it again. */
		fakecg_exit(e.f, POD "/a");
		ck_assert_int_eq(fakecg_rmdir(e.f, POD "/a"), 0);
		mk(&e, POD "/a", true);
		ck_assert_int_lt(nth, 8);
	}
	/* The default affinity and both IRQs were written: each failed once. */
	ck_assert_msg(nth > 3, "%s: only %d IRQ writes failed", e.where, nth - 1);
	irqs_now(&e, now, sizeof(now));
	ck_assert_msg(strcmp(now, before), "%s: the carve steered no IRQ (%s)", e.where, now);
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "a", POD "/a", &err));
	irqs_now(&e, now, sizeof(now));
	ck_assert_msg(!strcmp(now, before), "%s: after the release IRQs %s, before %s", e.where, now, before);
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* ---- one loop, two commits (effect.h) ---------------------------------- */

/* The policy with latency steering IRQs away and keeping its CPUs out of
 * deep C-states (power: every state slower than 10 us disabled). */
static void steer_power_policy(struct env *e)
{
	const char *from = "    irq: leave\n";
	const char *to = "    irq: steer-away\n    power:\n      cstates: shallow\n      cstateMaxLatencyUs: 10\n";
	const char *at = strstr(policy_yaml, from);
	char text[sizeof(policy_yaml) + 128];

	ck_assert_ptr_nonnull(at);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - policy_yaml), policy_yaml, to, at + strlen(from));
	cc_test_write_file(e->dir, "policy.yaml", text);
}

/* Two idle states per CPU under the root: state1 (100 us) enabled. */
static void mk_cstates(struct env *e)
{
	ck_assert_int_eq(cc_test_sh(NULL, "cd '%s/sys/devices/system/cpu' && for c in $(seq 0 15); do for s in 0 1; do "
					  "mkdir -p cpu$c/cpuidle/state$s && echo $((s * 100)) >cpu$c/cpuidle/state$s/latency && "
					  "echo 0 >cpu$c/cpuidle/state$s/disable; done; done",
				    e->dir),
			 0);
}

/* How many CPUs have state1 disabled. */
static int cstates_off(struct env *e)
{
	_cleanup_free_ char *out = NULL;

	cc_test_sh(&out, "cat '%s'/sys/devices/system/cpu/cpu*/cpuidle/state1/disable | grep -c 1", e->dir);
	return atoi(out ? out : "0");
}

/* Whether the ledger's `section` holds a record with a pending value. */
static bool section_pending(struct cc_ledger *l, const char *section)
{
	_cleanup_free_ char *text = NULL;
	json_t *j = cc_ledger_section(l, section, false);

	if (!j)
		return false;
	text = json_dumps(j, JSON_COMPACT);
	return text && strstr(text, "\"pending\"");
}

/* A carve whose class moves IRQs and sets power settings commits twice:
 * its journal (every effect's records with their pending values) and its
 * result.  The n-th commit fails for n = 1, 2; the third is never reached. */
START_TEST(test_two_commits)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char before[256], now[256];

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s, two commits", kernel_names[_i]);
	steer_power_policy(&e);
	mk_irqs(&e);
	mk_cstates(&e);
	mk_pod_ab(&e, "50000 100000");
	irqs_now(&e, before, sizeof(before));
	for (int nth = 1; nth <= 2; nth++) {
		char armed[64];

		snprintf(armed, sizeof(armed), "ledger-write:ENOSPC@%d", nth);
		e.ctx.fault = armed;
		ck_assert_msg(carve(&e, "a", POD "/a", "latency", 1, &err) < 0, "%s: commit %d did not fail", e.where, nth);
		e.ctx.fault = NULL;
		ck_assert_msg(strstr(err.msg, strerror(ENOSPC)), "%s: commit %d: %s", e.where, nth, err.msg);
		irqs_now(&e, now, sizeof(now));
		ck_assert_msg(!strcmp(now, before), "%s: commit %d failed: IRQs %s, before %s", e.where, nth, now, before);
		ck_assert_int_eq(cstates_off(&e), 0);
		check_invariant(&e, NULL, NULL);
		fakecg_exit(e.f, POD "/a");
		ck_assert_int_eq(fakecg_rmdir(e.f, POD "/a"), 0);
		mk(&e, POD "/a", true);
	}
	e.ctx.fault = "ledger-write:ENOSPC@3";
	ck_assert_msg(carve(&e, "a", POD "/a", "latency", 1, &err) == 0, "%s: a third commit: %s", e.where, err.msg);
	e.ctx.fault = NULL;
	irqs_now(&e, now, sizeof(now));
	ck_assert_msg(strcmp(now, before), "%s: the carve steered no IRQ (%s)", e.where, now);
	/* The carve's CPU (its parked sibling runs nothing). */
	ck_assert_int_eq(cstates_off(&e), 1);
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "a", POD "/a", &err));
	irqs_now(&e, now, sizeof(now));
	ck_assert_str_eq(now, before);
	ck_assert_int_eq(cstates_off(&e), 0);
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* Killed right after the journal: the cgroup, IRQ and power records are
 * all on disk with their pending values, nothing of them written; the
 * runtime removes the refused container's cgroup and the next hook's gc
 * gives back all three. */
START_TEST(test_kill_after_journal)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char before[256], now[256];
	int status;
	pid_t pid;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s, killed after the journal", kernel_names[_i]);
	steer_power_policy(&e);
	mk_irqs(&e);
	mk_cstates(&e);
	mk_pod_ab(&e, "50000 100000");
	irqs_now(&e, before, sizeof(before));
	pid = cc_test_fork();
	if (pid == 0) {
		e.ctx.fault = "after-journal";
		carve(&e, "a", POD "/a", "latency", 1, &err);
		_exit(3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "%s: status %d", e.where, status);
	{
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);

		ck_assert_ptr_nonnull(cc_ledger_find(l, "a"));
		ck_assert_msg(section_pending(l, "irq"), "%s: no IRQ journal", e.where);
		ck_assert_msg(section_pending(l, "power"), "%s: no power journal", e.where);
	}
	irqs_now(&e, now, sizeof(now));
	ck_assert_str_eq(now, before);
	ck_assert_int_eq(cstates_off(&e), 0);
	/* The refused start: the runtime removes its cgroup; the next hook
	 * (b's start) collects a. */
	fakecg_exit(e.f, POD "/a");
	ck_assert_int_eq(fakecg_rmdir(e.f, POD "/a"), 0);
	OK(carve(&e, "b", POD "/b", "wide", 2, &err));
	{
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);

		ck_assert_ptr_null(cc_ledger_find(l, "a"));
		ck_assert_msg(!section_pending(l, "irq") && !cc_ledger_section(l, "power", false),
			      "%s: records left after gc", e.where);
	}
	irqs_now(&e, now, sizeof(now));
	ck_assert_str_eq(now, before);
	ck_assert_int_eq(cstates_off(&e), 0);
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* ---- the audit ------------------------------------------------------------ */

static void audit(struct env *e, bool fix, struct cc_audit_report *found)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *policy = cc_policy_load(e->policy, &err);
	_cleanup_topo_ struct cc_topo *topo = cc_topo_load(&e->src, &err);
	_cleanup_ledger_ struct cc_ledger *l = fix ? cc_ledger_open(e->state, &err) : cc_ledger_read(e->state, &err);
	struct cc_audit_read_opts o = { .skip_irqs = true };
	struct cc_audit_snap snap;
	struct cc_audit_in in;

	ck_assert_msg(policy && topo && l, "%s", err.msg);
	ck_assert_msg(cc_audit_snap_read(e->root, l, &o, &snap, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_audit_snap_index(&snap, l, &err) == 0, "%s", err.msg);
	in = (struct cc_audit_in){ l, topo, policy, &snap };
	memset(found, 0, sizeof(*found));
	ck_assert_msg(cc_audit_run(&in, found, &err) == 0, "%s", err.msg);
	if (fix) {
		struct cc_audit_fix_ctx fx = { .root = e->root, .ledger = l, .topo = topo, .policy = policy,
					       .out = e->ctx.log, .cg_ops = &fakecg_ops, .cg_ops_arg = e->f };
		struct cc_audit_fix_result res;

		ck_assert_msg(cc_audit_fix(&fx, found, &res, &err) == 0, "%s\n%s", err.msg, env_log(e));
		ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
		ck_assert_int_gt(res.repaired, 0);
	}
	cc_audit_snap_fini(&snap);
}

/* A peer container that exits while the carve lives (a refused one whose
 * cgroup the runtime removes, a pod's container that ends) keeps its
 * record until the carve goes: nothing is left to give back, and the
 * audit finds nothing (it used to report RECORD_DRIFT "(gone)"). */
START_TEST(test_peer_gone_clean)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_report r;

	env_init(&e, FAKECG_6_1);
	snprintf(e.where, sizeof(e.where), "kernel 6.1");
	mk_pod(&e, "max 100000");
	mk(&e, POD "/a", true);
	mk(&e, POD "/gone", true);
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	fakecg_exit(e.f, POD "/gone");
	ck_assert_int_eq(fakecg_rmdir(e.f, POD "/gone"), 0);
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%d findings, the first %s %s", r.n, r.n ? cc_audit_code_name(r.f[0].code) : "",
		      r.n ? r.f[0].object : "");
	cc_audit_report_fini(&r);
	OK(release(&e, "a", POD "/a", &err));
	check_restored(&e, "max 100000");
	env_fini(&e);
}
END_TEST

/* A resize down while carved brings the double constraint back: the audit
 * finds it and the drift, --fix lifts the quota again with their value as
 * the one to restore; a carve kept as releasing is found and finished. */
START_TEST(test_audit_finds_and_fixes)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_report r;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod_ab(&e, "100000 100000");
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	audit(&e, false, &r);
	ck_assert_int_eq(r.n, 0);
	cc_audit_report_fini(&r);
	ck_assert_int_eq(fakecg_write(e.f, POD, "cpu.max", "50000 100000"), 0);
	audit(&e, true, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_QUOTA_ON_CARVE), 2);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_RECORD_DRIFT), 1);
	cc_audit_report_fini(&r);
	ck_assert_str_eq(fakecg_get(e.f, POD, "cpu.max"), "max 100000");
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%d findings left, the first %s", r.n, r.n ? cc_audit_code_name(r.f[0].code) : "");
	cc_audit_report_fini(&r);
	/* a's release fails half-way: kept as releasing, found, finished. */
	fakecg_fail_write(e.f, 1, EIO);
	ck_assert_int_eq(release(&e, "a", POD "/a", &err), -1);
	audit(&e, true, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_RELEASE_PENDING), 1);
	cc_audit_report_fini(&r);
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* The held CPUs of a record (noderec.h), edited as only a hand or a bug
 * would: `add` and `drop` CPU lists. */
static void edit_held(struct env *e, const char *key, const char *add, const char *drop)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(e->state, &err);
	_cleanup_bitmap_ hwloc_bitmap_t held = hwloc_bitmap_alloc(), x = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;
	json_t *v = NULL, *copy;

	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", key, &v, &err), 1);
	set_of(json_string_value(json_object_get(v, "held")), held);
	set_of(add, x);
	hwloc_bitmap_or(held, held, x);
	set_of(drop, x);
	hwloc_bitmap_andnot(held, held, x);
	s = cc_cpulist_format(held);
	copy = json_deep_copy(v);
	json_object_set_new(copy, "held", json_string(s));
	ck_assert_msg(cc_ledger_rec_put(l, "cgroup", key, copy, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
}

static char *carve_cpus(struct env *e, const char *id)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger(e);
	struct cc_carve *c = cc_ledger_find(l, id);

	ck_assert_ptr_nonnull(c);
	return cc_cpulist_format(c->cpus);
}

/* The records that keep their owners as held CPUs (an ancestor's exclusive
 * set: every remote carve below it) are checked against the carves: CPUs
 * held for no carve are found and taken out again, a live carve's missing
 * share found and recorded again, and the node comes back as it was. */
START_TEST(test_held_audited)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_report r;
	_cleanup_free_ char *a = NULL;

	env_init(&e, kernels[1 + _i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[1 + _i]);
	mk_pod_ab(&e, "200000 100000");
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%d findings, the first %s", r.n, r.n ? cc_audit_code_name(r.f[0].code) : "");
	cc_audit_report_fini(&r);
	/* CPUs no carve has. */
	edit_held(&e, "/kubepods/cpuset.cpus.exclusive", "15", "");
	audit(&e, true, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_RECORD_ORPHAN), 1);
	cc_audit_report_fini(&r);
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%d findings left, the first %s", r.n, r.n ? cc_audit_code_name(r.f[0].code) : "");
	cc_audit_report_fini(&r);
	/* A live carve's share gone from it. */
	a = carve_cpus(&e, "a");
	edit_held(&e, "/kubepods/cpuset.cpus.exclusive", "", a);
	audit(&e, true, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_RECORD_DRIFT), 1);
	cc_audit_report_fini(&r);
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%d findings left, the first %s", r.n, r.n ? cc_audit_code_name(r.f[0].code) : "");
	cc_audit_report_fini(&r);
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "a", POD "/a", &err));
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "200000 100000");
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods", "cpuset.cpus.exclusive"), "");
	env_fini(&e);
}
END_TEST

/* ---- shared-pool containers ---------------------------------------------- */

/* The policy with a shared class on the same cores as the carves. */
static void shared_policy(struct env *e)
{
	char text[sizeof(policy_yaml) + 256];

	snprintf(text, sizeof(text), "%s  background:\n    coreType: performance\n    exclusive: false\n"
		 "    smt: full\n    memory: any\n    irq: leave\n    quota: keep\n", policy_yaml);
	cc_test_write_file(e->dir, "policy.yaml", text);
}

/* What a shared container at `cgroup` must read: the pool (every
 * unreserved CPU) without the live carves' CPUs and parked siblings. */
static void check_shared(struct env *e, const char *cgroup)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger(e);
	_cleanup_bitmap_ hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
	_cleanup_free_ char *w = NULL;

	set_of("2-7,10-15", want);
	for (int i = 0; i < cc_ledger_ncarves(l); i++) {
		hwloc_bitmap_andnot(want, want, cc_ledger_carve_at(l, i)->cpus);
		hwloc_bitmap_andnot(want, want, cc_ledger_carve_at(l, i)->parked);
	}
	w = cc_cpulist_format(want);
	set_of(fakecg_get(e->f, cgroup, "cpuset.cpus"), got);
	ck_assert_msg(hwloc_bitmap_isequal(got, want), "%s: shared %s reads \"%s\", not \"%s\"\n%s", e->where, cgroup,
		      fakecg_get(e->f, cgroup, "cpuset.cpus"), w, env_log(e));
}

/* Take the owners out of a shared container's record, as a hand editing
 * the ledger would: its file, still as corecarve wrote it, is narrower
 * than the record's value now. */
static void drop_owners(struct env *e, const char *key)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(e->state, &err);
	json_t *v = NULL, *copy;

	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", key, &v, &err), 1);
	copy = json_deep_copy(v);
	json_object_set_new(copy, "owners", json_object());
	ck_assert_msg(cc_ledger_rec_put(l, "cgroup", key, copy, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
}

/* Issue #31: a shared-pool container runs on its class's pool without the
 * live carves, whenever they come and go — one in another pod, one beside
 * the carves (on 6.12 its explicit list must not invalidate the next
 * carve's partition).  CPUs a released carve gives back reach both; an
 * owner lost from the record is found (SHARED_NARROW) and --fix widens
 * the container again; its record goes with its cgroup. */
START_TEST(test_shared_regains)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_report r;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	json_t *v = NULL;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	shared_policy(&e);
	mk_pod_ab(&e, "max 100000");
	mk(&e, "/kubepods/pod2", false);
	mk(&e, "/kubepods/pod2/s", true);
	mk(&e, POD "/s2", true);
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	OK(carve(&e, "s", "/kubepods/pod2/s", "background", 0, &err));
	check_shared(&e, "/kubepods/pod2/s");
	OK(carve(&e, "s2", POD "/s2", "background", 0, &err));
	check_shared(&e, POD "/s2");
	/* A carve beside s2 after it: s2 gives up b's CPUs first. */
	snprintf(e.where, sizeof(e.where), "kernel %s, b beside s2", kernel_names[_i]);
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	check_invariant(&e, NULL, NULL);
	check_shared(&e, "/kubepods/pod2/s");
	check_shared(&e, POD "/s2");
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%s: %d findings, the first %s: %s %s\n%s", e.where, r.n,
		      r.n ? cc_audit_code_name(r.f[0].code) : "", r.n ? r.f[0].object : "", r.n ? r.f[0].actual : "",
		      fakecg_dump(e.f));
	cc_audit_report_fini(&r);
	/* a goes: both regain its CPUs. */
	snprintf(e.where, sizeof(e.where), "kernel %s, a released", kernel_names[_i]);
	OK(release(&e, "a", POD "/a", &err));
	check_shared(&e, "/kubepods/pod2/s");
	check_shared(&e, POD "/s2");
	/* s's record loses its owner b by hand: found, and once b is gone
	 * without giving s its CPUs back, s is found narrower than its pool
	 * and widened. */
	snprintf(e.where, sizeof(e.where), "kernel %s, owner dropped", kernel_names[_i]);
	drop_owners(&e, "/kubepods/pod2/s/cpuset.cpus");
	audit(&e, false, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_RECORD_DRIFT), 1);
	ck_assert_int_eq(r.n, 1);
	cc_audit_report_fini(&r);
	snprintf(e.where, sizeof(e.where), "kernel %s, b released", kernel_names[_i]);
	OK(release(&e, "b", POD "/b", &err));
	check_shared(&e, POD "/s2");
	ck_assert_str_ne(fakecg_get(e.f, "/kubepods/pod2/s", "cpuset.cpus"), "2-7,10-15");
	audit(&e, true, &r);
	ck_assert_int_eq(cc_audit_count(&r, CC_AUDIT_SHARED_NARROW), 1);
	cc_audit_report_fini(&r);
	check_shared(&e, "/kubepods/pod2/s");
	audit(&e, false, &r);
	ck_assert_msg(r.n == 0, "%s: %d findings left, the first %s", e.where, r.n,
		      r.n ? cc_audit_code_name(r.f[0].code) : "");
	cc_audit_report_fini(&r);
	/* Both records stay the containers'. */
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", POD "/s2/cpuset.cpus", &v, &err), 1);
	ck_assert_str_eq(json_string_value(json_object_get(v, "kind")), "shared");
	cc_ledger_close(l);
	l = NULL;
	/* The shared containers go; the next carve drops their records. */
	fakecg_exit(e.f, POD "/s2");
	ck_assert_int_eq(fakecg_rmdir(e.f, POD "/s2"), 0);
	fakecg_exit(e.f, "/kubepods/pod2/s");
	ck_assert_int_eq(fakecg_rmdir(e.f, "/kubepods/pod2/s"), 0);
	mk(&e, POD "/a", true);
	OK(carve(&e, "c", POD "/a", "latency", 1, &err));
	OK(release(&e, "c", POD "/a", &err));
	check_restored(&e, "max 100000");
	env_fini(&e);
}
END_TEST

/* ---- injected write failures --------------------------------------------- */

/* The standard sequence (3 carves in one pod, released FIFO) with the
 * `nth` write failing.  A refused create leaves nothing of its own (or a
 * carve kept as releasing); a failed release keeps the carve as
 * releasing; retries finish the job; the end state is the original.
 * Returns false once `nth` is past the last write. */
static bool run_with_failure(enum fakecg_kernel k, int nth, int code)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	bool failed = false;
	char id[8], cg[64];

	env_init(&e, k);
	mk_pod(&e, "50000 100000");
	for (int i = 0; i < 3; i++) {
		snprintf(cg, sizeof(cg), POD "/c%d", i);
		mk(&e, cg, true);
	}
	fakecg_fail_write(e.f, nth, code);
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		snprintf(cg, sizeof(cg), POD "/c%d", i);
		snprintf(e.where, sizeof(e.where), "kernel %s, write %d fails, create %s", kernel_names[k], nth, id);
		cc_err_clear(&err);
		if (carve(&e, id, cg, "latency", 1, &err) < 0) {
			failed = true;
			ck_assert_msg(strstr(err.msg, "(injected)"), "%s: %s", e.where, err.msg);
		}
		check_invariant(&e, NULL, NULL);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		snprintf(cg, sizeof(cg), POD "/c%d", i);
		snprintf(e.where, sizeof(e.where), "kernel %s, write %d fails, release %s", kernel_names[k], nth, id);
		cc_err_clear(&err);
		if (release(&e, id, cg, &err) < 0) {
			failed = true;
			ck_assert_msg(strstr(err.msg, "kept as releasing"), "%s: %s", e.where, err.msg);
		}
		check_invariant(&e, NULL, NULL);
	}
	/* A second poststop (or the next hook's gc) finishes what failed. */
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		snprintf(e.where, sizeof(e.where), "kernel %s, write %d failed, retry %s", kernel_names[k], nth, id);
		ck_assert_msg(release(&e, id, NULL, &err) == 0, "%s: %s", e.where, err.msg);
	}
	snprintf(e.where, sizeof(e.where), "kernel %s, write %d failed, end", kernel_names[k], nth);
	check_restored(&e, "50000 100000");
	env_fini(&e);
	return failed;
}

START_TEST(test_every_write_fails)
{
	int nth;

	/* Until a run where the failure point is past every write. */
	for (nth = 1; run_with_failure(kernels[_i], nth, EIO); nth++)
		ck_assert_int_lt(nth, 200);
	ck_assert_int_gt(nth, 5);
	/* ENOSPC and EINVAL are the kernel's own refusals: the same holds. */
	for (int k = 1; k < nth; k += 3) {
		run_with_failure(kernels[_i], k, ENOSPC);
		run_with_failure(kernels[_i], k, EINVAL);
	}
}
END_TEST

/* A carve kept as releasing keeps its CPUs taken until a retry succeeds;
 * the next hook's gc retries it. */
START_TEST(test_releasing_retried_by_gc)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = NULL;

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s", kernel_names[_i]);
	mk_pod_ab(&e, "50000 100000");
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	fakecg_fail_write(e.f, 1, EIO);
	ck_assert_int_eq(release(&e, "a", POD "/a", &err), -1);
	ck_assert_msg(strstr(err.msg, "kept as releasing"), "%s", err.msg);
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 1);
	ck_assert(cc_ledger_carve_at(l, 0)->releasing);
	cc_ledger_close(l);
	l = NULL;
	/* The next carve's gc undoes it, then takes its CPUs. */
	OK(carve(&e, "b", POD "/b", "latency", 1, &err));
	l = ledger(&e);
	ck_assert_int_eq(cc_ledger_ncarves(l), 1);
	ck_assert_str_eq(cc_ledger_carve_at(l, 0)->id, "b");
	ck_assert(!cc_ledger_carve_at(l, 0)->releasing);
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "b", POD "/b", &err));
	check_restored(&e, "50000 100000");
	env_fini(&e);
}
END_TEST

/* ---- random sequences ------------------------------------------------------ */

/* With CC_RESTORE_LEDGERS=DIR, each step's ledger.json as one line
 * "run step fnv1a64" in DIR/seedN.txt: a change that must not alter what
 * is recorded (the typed records of issue #41) compares these files, run
 * before and after it, byte for byte.  What differs from run to run is
 * left out of the digest: a carve's "created" time and the index digest
 * that covers it. */
static uint64_t ledger_digest(const char *txt, size_t len)
{
	static const char *const skip[] = { "\"created\": ", "\"digest\": \"fnv1a64:" };
	uint64_t h = CC_FNV1A_INIT;
	size_t i = 0;

	while (i < len) {
		size_t k, n = 0;

		for (k = 0; k < 2 && strncmp(txt + i, skip[k], strlen(skip[k])); k++)
			;
		if (k == 2) {
			h = cc_fnv1a(h, txt + i++, 1);
			continue;
		}
		h = cc_fnv1a(h, skip[k], strlen(skip[k]));
		i += strlen(skip[k]);
		while (i + n < len && strchr("0123456789abcdef", txt[i + n]) && txt[i + n])
			n++;
		i += n;
	}
	return h;
}

static void trace_ledger(const struct env *e, int seed, int run, int step)
{
	const char *dir = getenv("CC_RESTORE_LEDGERS");
	char lp[PATH_MAX + 32], out[PATH_MAX];
	_cleanup_free_ char *txt = NULL;
	size_t len = 0;
	FILE *f;

	if (!dir)
		return;
	snprintf(lp, sizeof(lp), "%s/ledger.json", e->state);
	txt = cc_test_slurp_len(lp, &len);
	snprintf(out, sizeof(out), "%s/seed%d.txt", dir, seed);
	f = fopen(out, run || step ? "a" : "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d %d %016llx\n", run, step, (unsigned long long)(txt ? ledger_digest(txt, len) : 0));
	fclose(f);
}

/* Seeded random operations on one pod — carve (of either class, 1 or 2
 * CPUs), release in any order, a cgroup made or removed, an outside write
 * of the pod's quota, a write failure armed — with the invariant after
 * every step and, once everything is released and retried, the original
 * state (or the last outside write). */
START_TEST(test_random_sequences)
{
	enum { POOL = 6 };
	unsigned seed = 0x5eed0000u + (unsigned)_i;

	for (int run = 0; run < 40; run++) {
		struct env e;
		struct cc_err err = CC_ERR_INIT;
		char quota[64] = "50000 100000";
		bool live[POOL] = { false }, outside = false;
		char id[8], cg[64];
		int below, releasing;

		env_init(&e, kernels[_i % 3]);
		mk_pod(&e, quota);
		for (int step = 0; step < 60; step++) {
			int op = rand_r(&seed) % 10, i = rand_r(&seed) % POOL;

			snprintf(id, sizeof(id), "r%d", i);
			snprintf(cg, sizeof(cg), POD "/r%d", i);
			snprintf(e.where, sizeof(e.where), "kernel %s, seed %d run %d step %d op %d on %s", kernel_names[_i % 3], _i,
				 run, step, op, id);
			cc_err_clear(&err);
			if (op < 4 && !live[i]) {
				if (!fakecg_exists(e.f, cg))
					mk(&e, cg, true);
				if (carve(&e, id, cg, rand_r(&seed) % 2 ? "latency" : "wide", 1 + (rand_r(&seed) % 2) * (op % 2),
					  &err) == 0)
					live[i] = true;
				else
					ck_assert_msg(strstr(err.msg, "requested") || strstr(err.msg, "free") ||
							      strstr(err.msg, "minShared") || strstr(err.msg, "(injected)") ||
							      strstr(err.msg, "multiple"),
						      "%s: %s\nparked exclusive %s, kubepods %s, pod %s\n%s\n%s", e.where, err.msg,
						      fakecg_get(e.f, "/" CC_PARKED_NAME, "cpuset.cpus.exclusive"),
						      fakecg_get(e.f, "/kubepods", "cpuset.cpus.exclusive"),
						      fakecg_get(e.f, POD, "cpuset.cpus.exclusive"), fakecg_get(e.f, POD, "../../../../../state/ledger.json"), env_log(&e));
			} else if (op < 7 && live[i]) {
				if (release(&e, id, cg, &err) < 0)
					ck_assert_msg(strstr(err.msg, "kept as releasing"), "%s: %s", e.where, err.msg);
				live[i] = false;
			} else if (op == 7) {
				snprintf(quota, sizeof(quota), "%d 100000", 50000 * (1 + rand_r(&seed) % 8));
				ck_assert_int_eq(fakecg_write(e.f, POD, "cpu.max", quota), 0);
				outside = true;
			} else if (op == 8) {
				fakecg_fail_write(e.f, 1 + rand_r(&seed) % 6, EIO);
			} else if (!live[i]) {
				/* A container made and gone with no carve: a peer that comes
				 * and goes. */
				if (fakecg_exists(e.f, cg)) {
					fakecg_exit(e.f, cg);
					ck_assert_int_eq(fakecg_rmdir(e.f, cg), 0);
				}
				else
					mk(&e, cg, rand_r(&seed) % 2);
			}
			if (getenv("CC_RESTORE_DEBUG") && run == atoi(getenv("CC_RESTORE_DEBUG"))) {
				char lp[PATH_MAX + 32], *txt;

				snprintf(lp, sizeof(lp), "%s/ledger.json", e.state);
				txt = cc_test_slurp_len(lp, &(size_t){ 0 });
				printf("== %s: err=%s kubepods=%s parked=%s\n%s\n", e.where, err.msg,
				       fakecg_get(e.f, "/kubepods", "cpuset.cpus.exclusive"),
				       fakecg_get(e.f, "/" CC_PARKED_NAME, "cpuset.cpus.exclusive"), txt ? txt : "");
				free(txt);
			}
			trace_ledger(&e, _i, run, step);
			check_invariant(&e, &below, &releasing);
			/* A carve kept as releasing may still hold the lift. */
			if (!outside && !releasing)
				check_quota(&e, quota, below);
		}
		fakecg_fail_write(e.f, 0, 0);
		for (int i = 0; i < POOL; i++) {
			snprintf(id, sizeof(id), "r%d", i);
			snprintf(cg, sizeof(cg), POD "/r%d", i);
			snprintf(e.where, sizeof(e.where), "kernel %s, seed run %d, end, release %s", kernel_names[_i % 3], run,
				 id);
			ck_assert_msg(release(&e, id, live[i] ? cg : NULL, &err) == 0, "%s: %s", e.where, err.msg);
			live[i] = false;
		}
		check_restored(&e, quota);
		env_fini(&e);
	}
}
END_TEST

/* A shared-pool container starts through the carves' loop (effect.h): two
 * commits, the first or the second failing refuses it and a third is never
 * reached; a write that fails refuses it with its file and its record as
 * they were (a peer's on 6.1); beside a live carve it holds its pool
 * without it. */
START_TEST(test_shared_two_commits)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char before[64];

	env_init(&e, kernels[_i]);
	snprintf(e.where, sizeof(e.where), "kernel %s, shared start", kernel_names[_i]);
	shared_policy(&e);
	mk_pod_ab(&e, "max 100000");
	mk(&e, POD "/s", true);
	OK(carve(&e, "a", POD "/a", "latency", 1, &err));
	snprintf(before, sizeof(before), "%s", fakecg_get(e.f, POD "/s", "cpuset.cpus"));
	/* Its one write fails: refused, the file as it was, and its record
	 * as it was: none, or on 6.1 the peer record a's carve made (s ran
	 * beside it and was narrowed), which the plan had replaced. */
	fakecg_fail_write(e.f, 1, EIO);
	ck_assert_int_lt(carve(&e, "s", POD "/s", "background", 0, &err), 0);
	fakecg_fail_write(e.f, 0, 0);
	ck_assert_msg(!strcmp(fakecg_get(e.f, POD "/s", "cpuset.cpus"), before), "%s: s reads %s, was %s", e.where,
		      fakecg_get(e.f, POD "/s", "cpuset.cpus"), before);
	{
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);
		json_t *v = NULL;
		int got = cc_ledger_rec_get(l, "cgroup", POD "/s/cpuset.cpus", &v, &err);

		ck_assert_int_eq(got, kernels[_i] == FAKECG_6_1);
		if (got) {
			ck_assert_str_eq(json_string_value(json_object_get(v, "kind")), "peer");
			ck_assert_ptr_nonnull(json_object_get(json_object_get(v, "owners"), "a"));
		}
	}
	for (int nth = 1; nth <= 2; nth++) {
		char armed[64];

		snprintf(armed, sizeof(armed), "ledger-write:ENOSPC@%d", nth);
		e.ctx.fault = armed;
		ck_assert_msg(carve(&e, "s", POD "/s", "background", 0, &err) < 0, "%s: commit %d did not fail", e.where,
			      nth);
		e.ctx.fault = NULL;
		ck_assert_msg(strstr(err.msg, strerror(ENOSPC)), "%s: commit %d: %s", e.where, nth, err.msg);
		if (nth == 1)
			ck_assert_str_eq(fakecg_get(e.f, POD "/s", "cpuset.cpus"), before);
		/* The refused start: the runtime removes its cgroup; its record,
		 * journaled or not, goes with it at the next start. */
		fakecg_exit(e.f, POD "/s");
		ck_assert_int_eq(fakecg_rmdir(e.f, POD "/s"), 0);
		mk(&e, POD "/s", true);
	}
	e.ctx.fault = "ledger-write:ENOSPC@3";
	OK(carve(&e, "s", POD "/s", "background", 0, &err));
	e.ctx.fault = NULL;
	check_shared(&e, POD "/s");
	check_invariant(&e, NULL, NULL);
	OK(release(&e, "a", POD "/a", &err));
	check_shared(&e, POD "/s");
	env_fini(&e);
}
END_TEST

/* Every repair is made by exactly one effect of the table, and one that
 * none makes is refused before anything is read or written. */
START_TEST(test_repair_table)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	for (int what = 0; what < CC_EFFECT_NREPAIRS; what++) {
		int makers = 0;

		for (int i = 0; i < CC_NEFFECTS; i++)
			makers += (cc_effects[i]->repairs >> what) & 1u && cc_effects[i]->repair;
		ck_assert_msg(makers == 1, "repair %d: made by %d effects", what, makers);
	}
	env_init(&e, FAKECG_6_1);
	{
		_cleanup_ledger_ struct cc_ledger *l = ledger(&e);
		struct cc_effect_run run = { .ctx = &e.ctx, .ledger = l }; /* refused before any cgroup */

		ck_assert_int_lt(cc_effects_repair(&run, CC_EFFECT_NREPAIRS, POD "/a", &err), 0);
		ck_assert_int_eq(err.code, EINVAL);
	}
	env_fini(&e);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("restore");
	TCase *t = tcase_create("orders");

	tcase_set_timeout(t, 600);
	tcase_add_loop_test(t, test_every_order_3, 0, 3);
	tcase_add_loop_test(t, test_every_release_order_4, 0, 3);
	tcase_add_loop_test(t, test_pod_quota_none_while_carved, 0, 3);
	tcase_add_loop_test(t, test_outside_write_wins, 0, 3);
	tcase_add_loop_test(t, test_outside_write_before_arrival, 0, 3);
	tcase_add_loop_test(t, test_quota_record_seeded, 0, 3);
	tcase_add_loop_test(t, test_carve_was_a_peer, 0, 3);
	tcase_add_test(t, test_inheriting_peer);
	tcase_add_test(t, test_ancestor_peers);
	tcase_add_test(t, test_release_reads_ancestors);
	tcase_add_test(t, test_peer_gone_clean);
	tcase_add_loop_test(t, test_local_partitions, 0, 3);
	tcase_add_loop_test(t, test_readback_refused, 0, 3);
	tcase_add_loop_test(t, test_kind_guarded, 0, 3);
	tcase_add_loop_test(t, test_foreign_partition_avoided, 0, 3);
	tcase_add_loop_test(t, test_every_write_fails, 0, 3);
	tcase_add_loop_test(t, test_releasing_retried_by_gc, 0, 3);
	tcase_add_loop_test(t, test_random_sequences, 0, 6);
	tcase_add_loop_test(t, test_audit_finds_and_fixes, 0, 3);
	tcase_add_loop_test(t, test_held_audited, 0, 2);
	tcase_add_test(t, test_peer_vanishes);
	tcase_add_loop_test(t, test_survivor_inherits, 0, 3);
	tcase_add_loop_test(t, test_mems_read_back, 0, 3);
	tcase_add_loop_test(t, test_small_stack, 0, 3);
	tcase_add_loop_test(t, test_commit_fails, 0, 3);
	tcase_add_loop_test(t, test_irq_write_fails, 0, 3);
	tcase_add_loop_test(t, test_two_commits, 0, 3);
	tcase_add_loop_test(t, test_kill_after_journal, 0, 3);
	tcase_add_loop_test(t, test_shared_regains, 0, 3);
	tcase_add_loop_test(t, test_shared_two_commits, 0, 3);
	tcase_add_test(t, test_repair_table);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(suite)
