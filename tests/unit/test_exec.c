/* corecarve exec: the placement of an uncarved command (pure, on the
 * e2e guest's shape and a hybrid one), the --lock-affinity filter on this
 * kernel, and the command's exit statuses. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "exec.h"
#include "testlib.h"

/* The policy of the e2e hook scenarios (tests/e2e/hooklib.sh). */
static const char policy_text[] = "reserved: \"0-1,8-9\"\n"
				   "minShared: 1\n"
				   "classes:\n"
				   "  latency: {coreType: performance, smt: isolate, memory: local}\n"
				   "  throughput: {coreType: efficient, fallback: performance, smt: full, align: l2}\n"
				   "  spread: {coreType: performance, smt: full, memory: spread}\n"
				   "  background: {coreType: efficient, fallback: performance, exclusive: false, smt: full, memory: any}\n";

/* 2 packages x 4 cores x 2 threads, siblings adjacent, node 0 = 0-7. */
#define GUEST "pack:2 numa:1 l3:1 l2:4 core:1 pu:2"
/* 4 SMT P-cores (0-7) and 8 E-cores in two L2 clusters (8-15). */
#define HYBRID "pack:1 l3:1 l2:8 core:1 pu:2 | performance=0-7 efficient=8-15"

static const struct {
	const char *topo, *class_name;
	int cpus;
	const char *taken;
	const char *want_cpus, *want_mems, *want_core_class; /* want_cpus NULL: refused */
	int want_code;
	const char *why;
} cases[] = {
	/* No --cpus: every free core of the class, one thread each (isolate). */
	{ GUEST, "latency", 0, "", "2,4,6,10,12,14", "0-1", "performance", 0, NULL },
	/* Carved CPUs are avoided; local memory follows the CPUs left. */
	{ GUEST, "latency", 0, "2-7", "10,12,14", "1", "performance", 0, NULL },
	/* smt full: whole cores, every thread; a core with a carved thread is out. */
	{ GUEST, "throughput", 0, "3", "4-7,10-15", "0-1", "performance", 0, NULL },
	/* --cpus N: packed as a carve would be (one node, best fit)... */
	{ GUEST, "latency", 2, "", "2,4", "0", "performance", 0, NULL },
	/* Best fit over nodes: node 0 has two free cores left, node 1 three. */
	{ GUEST, "latency", 3, "2-3", "10,12,14", "1", "performance", 0, NULL },
	/* ... and minShared does not apply: nothing leaves the shared pool. */
	{ GUEST, "latency", 6, "", "2,4,6,10,12,14", "0-1", "performance", 0, NULL },
	/* A shared class gets its pool; memory any leaves the nodes of the class. */
	{ GUEST, "background", 0, "10-11", "2-7,12-15", "0-1", "performance", 0, NULL },
	/* smt full counts threads: 2 CPUs are one core; spread = every node of the class. */
	{ GUEST, "spread", 2, "", "2-3", "0-1", "performance", 0, NULL },
	{ HYBRID, "throughput", 0, "8", "10-15", "0", "efficient", 0, NULL },
	{ HYBRID, "latency", 0, "", "2,4,6", "0", "performance", 0, NULL },
	/* Refusals name the reason. */
	{ GUEST, "latency", 7, "", NULL, NULL, NULL, ENOSPC, "class latency: 7 whole performance cores requested" },
	{ GUEST, "latency", 0, "2-7,10-15", NULL, NULL, NULL, ENOSPC, "pool is empty" },
	{ GUEST, "latency", 0, "3,5,7,11,13,15", NULL, NULL, NULL, ENOSPC,
	  "class latency: no whole performance core is free" },
	{ GUEST, "warp", 0, "", NULL, NULL, NULL, EINVAL,
	  "unknown placement class \"warp\" (known: latency, throughput, spread, background)" },
};

START_TEST(test_place)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(policy_text, strlen(policy_text), "test", &err);
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = cases[_i].topo };
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	struct cc_decision d;
	int r;

	ck_assert_msg(p != NULL, "%s", err.msg);
	src.overrides = p->overrides;
	src.noverrides = p->noverrides;
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_cpulist_parse(cases[_i].taken, taken, "taken", &err), 0);
	r = cc_exec_place(t, p, taken, cases[_i].class_name, cases[_i].cpus, &d, &err);
	if (!cases[_i].want_cpus) {
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(err.code, cases[_i].want_code);
		ck_assert_msg(strstr(err.msg, cases[_i].why) != NULL, "got \"%s\"", err.msg);
		return;
	}
	ck_assert_msg(r == 0, "%s", err.msg);
	{
		_cleanup_free_ char *c = cc_cpulist_format(d.cpus);
		_cleanup_free_ char *m = cc_cpulist_format(d.mems);

		ck_assert_str_eq(c, cases[_i].want_cpus);
		ck_assert_str_eq(m, cases[_i].want_mems);
		ck_assert_str_eq(d.core_class, cases[_i].want_core_class);
		ck_assert(!d.exclusive);
		ck_assert(hwloc_bitmap_iszero(d.parked) || !hwloc_bitmap_intersects(d.parked, d.cpus));
		ck_assert(!hwloc_bitmap_intersects(d.cpus, taken));
	}
	cc_decision_fini(&d);
}
END_TEST

/* The filter on this kernel: the process can no longer set any affinity,
 * not even one it already has; reading it still works. */
START_TEST(test_lock_affinity)
{
	struct cc_err err = CC_ERR_INIT;
	cpu_set_t set;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	ck_assert_msg(cc_exec_lock_affinity(&err) == 0, "%s", err.msg);
	errno = 0;
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
}
END_TEST

/* ---- the command's exit statuses ----------------------------------------------- */

static const struct {
	const char *args;
	int status;
	const char *stderr_start; /* "" : nothing on stderr */
} cli[] = {
	{ "--class latency -- sh -c 'exit 7'", 7, "" },
	{ "--class=latency --lock-affinity sh -c 'taskset -p 1 $$ >/dev/null 2>&1 && exit 1; exit 0'", 0, "" },
	{ "--class latency -- /nonexistent/cmd", 127, "corecarve: exec: /nonexistent/cmd: No such file or directory" },
	{ "--class latency -- /", 126, "corecarve: exec: /: Permission denied" },
	{ "--class warp -- true", 125, "corecarve: exec: unknown placement class \"warp\"" },
	{ "-- true", 125, "corecarve: --class: missing" },
	{ "--class latency", 125, "corecarve: exec: no command given" },
	{ "--class latency --cpus 0 true", 125, "corecarve: --cpus: expected an integer from 1 to 8192, got \"0\"" },
	{ "--class latency --cpus two true", 125, "corecarve: --cpus: expected an integer" },
	{ "--class latency --cgroup-parent /x true", 125, "corecarve: exec: --cgroup-parent only means something with --carve" },
	{ "--class latency --frobnicate true", 125, "corecarve: exec: unknown option \"--frobnicate\"" },
	{ "--class latency --carve --cpus 1 --cgroup-parent x true", 125,
	  "corecarve: exec: --cgroup-parent: \"x\" is not an absolute cgroup path" },
	{ "--class latency --carve true", 125, "corecarve: exec: --cpus: a carve needs a size" },
	{ "--class latency --policy /nonexistent.yaml true", 125, "corecarve: " },
};

START_TEST(test_cli)
{
	_cleanup_free_ char *cmd = NULL;
	char errout[2048];
	size_t n;
	FILE *p;
	int st;

	const char *bin = cc_test_bin("exec CLI tests");

	if (!bin)
		return;
	/* An empty state directory: no carves on this machine. */
	ck_assert_int_ge(asprintf(&cmd, "cd /tmp && d=$(mktemp -d) && CORECARVE_POLICY= CORECARVE_STATE_DIR=$d '%s' exec %s "
				  "2>&1 >/dev/null; r=$?; rm -rf $d; exit $r",
				  bin, cli[_i].args), 0);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(errout, 1, sizeof(errout) - 1, p);
	errout[n] = '\0';
	st = pclose(p);
	ck_assert_msg(WIFEXITED(st), "%s: did not exit", cli[_i].args);
	ck_assert_msg(WEXITSTATUS(st) == cli[_i].status, "%s: exit %d, want %d (%s)", cli[_i].args, WEXITSTATUS(st),
		      cli[_i].status, errout);
	if (!*cli[_i].stderr_start)
		ck_assert_str_eq(errout, "");
	else
		ck_assert_msg(!strncmp(errout, cli[_i].stderr_start, strlen(cli[_i].stderr_start)) &&
				      strchr(errout, '\n') == errout + n - 1,
			      "%s: stderr \"%s\"", cli[_i].args, errout);
}
END_TEST

static Suite *exec_suite(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("place");

	tcase_add_loop_test(tc, test_place, 0, sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("self");
	tcase_add_test(tc, test_lock_affinity);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_add_loop_test(tc, test_cli, 0, sizeof(cli) / sizeof(cli[0]));
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(exec_suite)
