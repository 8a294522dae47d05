/* Topology discovery on the shared real-machine fixtures, the live host,
 * synthetic shapes and broken inputs (plugin/topo/topo.c and the files of
 * topo_int.h, topo_json.c, topo_map.c, cli/cmd_topology.c).  Expected
 * values are the fixtures README's truth. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "policy.h"
#include "root.h"
#include "testlib.h"
#include "topo.h"

#define F03 "F03-intel-alderlake-p-4P8E"
#define F05 "F05-amd-zen5-strixpoint-ryzen-ai9-hx370"
#define F06 "F06-amd-epyc-7451-2s"
#define F10 "F10-intel-xeon-silver-4108-2s"
#define F11 "F11-arm-X3-A715-A710-A510"

/* ---- helpers ---------------------------------------------------------- */

/* The sysfs root inside an extracted fixture (the tarballs hold one
 * top-level directory) in `buf`, or NULL (skipped loudly). */
static const char *fixture_root(char *buf, const char *dir, const char *tarball, const char *top)
{
	const char *tree = cc_test_fixture_tree(dir, tarball);

	if (!tree)
		return NULL;
	snprintf(buf, PATH_MAX, "%s/%s", tree, top);
	return buf;
}

static const char *f03(void)
{
	static char buf[PATH_MAX];

	return fixture_root(buf, F03, "test-data-sample1.tar.xz", "sample1");
}

static const char *f06(void)
{
	static char buf[PATH_MAX];

	return fixture_root(buf, F06, "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451");
}

static const char *f10(void)
{
	static char buf[PATH_MAX];

	return fixture_root(buf, F10, "32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve");
}

static const char *f11(void)
{
	static char buf[PATH_MAX];

	return fixture_root(buf, F11, "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3");
}

static const char *f05(void)
{
	return cc_test_fixture_file(F05, "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml");
}

static struct cc_topo *load_src(enum cc_topo_kind kind, const char *arg, const struct cc_class_override *ov,
				int nov, struct cc_err *err)
{
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_topo_source src = { .kind = kind, .overrides = ov, .noverrides = nov, .caller_view = true };

	if (kind == CC_TOPO_HOST) {
		root = cc_root_open(arg, err);
		if (!root)
			return NULL;
		src.root = root;
	} else {
		src.arg = arg;
	}
	return cc_topo_load(&src, err);
}

static struct cc_topo *load_ok(enum cc_topo_kind kind, const char *arg)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t = load_src(kind, arg, NULL, 0, &err);

	ck_assert_msg(t != NULL, "%s: %s", arg, err.msg);
	return t;
}

static void assert_set(hwloc_const_bitmap_t set, const char *want)
{
	_cleanup_free_ char *got = cc_cpulist_format(set);

	ck_assert_str_eq(got, want);
}

static void assert_counts(const struct cc_topo *t, int packages, int numa, int llcs, int l2s, int cores, int pus)
{
	ck_assert_int_eq(t->npackages, packages);
	ck_assert_int_eq(t->nnuma, numa);
	ck_assert_int_eq(t->nllcs, llcs);
	ck_assert_int_eq(t->nl2s, l2s);
	ck_assert_int_eq(t->ncores, cores);
	ck_assert_int_eq(cc_topo_online_pus(t), pus);
}

static void assert_class(const struct cc_topo *t, int k, const char *name, int ncores, const char *cpus)
{
	ck_assert_int_lt(k, t->nclasses);
	ck_assert_str_eq(t->classes[k].name, name);
	ck_assert_int_eq(t->classes[k].rank, k);
	ck_assert_int_eq(t->classes[k].ncores, ncores);
	assert_set(t->classes[k].cpus, cpus);
}

/* The L2s shared by more than one core, as "cpus/class;...". */
static void assert_clusters(const struct cc_topo *t, const char *want)
{
	char buf[512] = "";
	size_t n = 0;

	for (int l = 0; l < t->nl2s; l++) {
		_cleanup_free_ char *s = NULL;
		int id = hwloc_bitmap_first(t->l2s[l].cores);

		if (t->l2s[l].ncores < 2)
			continue;
		s = cc_cpulist_format(t->l2s[l].cpus);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s/%s", n ? ";" : "", s,
				      t->classes[t->cores[id].cls].name);
	}
	ck_assert_str_eq(buf, want);
}

/* Every online PU: siblings are the PUs of its core, `k` apart ("sib
 * N/N+k"); k = 0: no SMT. */
static void assert_siblings(const struct cc_topo *t, int k)
{
	for (int i = 0; i < t->npus; i++) {
		const struct cc_pu *p = &t->pus[i];
		const struct cc_core *c;

		if (!p->online)
			continue;
		ck_assert_int_ge(p->core, 0);
		c = &t->cores[p->core];
		ck_assert(hwloc_bitmap_isset(c->pus, (unsigned)p->os));
		ck_assert_int_eq(c->npus, k ? 2 : 1);
		ck_assert_int_eq(c->npus, hwloc_bitmap_weight(c->pus));
		if (k)
			ck_assert_int_eq(hwloc_bitmap_last(c->pus) - hwloc_bitmap_first(c->pus), k);
		ck_assert_int_eq(p->package, c->package);
		ck_assert_int_eq(p->numa, c->numa);
		ck_assert_int_eq(p->l2, c->l2);
		ck_assert_int_eq(p->llc, c->llc);
		ck_assert_int_eq(p->cls, c->cls);
	}
}

/* Model invariants that hold on any topology. */
static void assert_consistent(const struct cc_topo *t)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	int prev = -1;

	for (int i = 0; i < t->npus; i++) {
		ck_assert_int_gt(t->pus[i].os, prev);
		prev = t->pus[i].os;
		ck_assert_int_eq(cc_topo_pu_index(t, t->pus[i].os), i);
		ck_assert_int_eq(t->pus[i].online, hwloc_bitmap_isset(t->online, (unsigned)t->pus[i].os));
		if (t->pus[i].allowed)
			ck_assert(t->pus[i].online);
	}
	for (int id = 0; id < t->ncores; id++) {
		const struct cc_core *c = &t->cores[id];

		ck_assert_int_eq(c->id, id);
		ck_assert(!hwloc_bitmap_intersects(all, c->pus));
		hwloc_bitmap_or(all, all, c->pus);
		ck_assert_int_ge(c->cls, 0);
		ck_assert(hwloc_bitmap_isset(t->classes[c->cls].cores, (unsigned)id));
		ck_assert(hwloc_bitmap_isincluded(c->pus, t->packages[c->package].cpus));
		if (c->l2 >= 0)
			ck_assert(hwloc_bitmap_isincluded(c->pus, t->l2s[c->l2].cpus));
		if (c->llc >= 0)
			ck_assert(hwloc_bitmap_isincluded(c->pus, t->llcs[c->llc].cpus));
	}
	ck_assert(hwloc_bitmap_isequal(all, t->online));
	hwloc_bitmap_zero(all);
	for (int k = 0; k < t->nclasses; k++) {
		ck_assert(!hwloc_bitmap_intersects(all, t->classes[k].cpus));
		hwloc_bitmap_or(all, all, t->classes[k].cpus);
	}
	ck_assert(hwloc_bitmap_isequal(all, t->online));
	ck_assert(hwloc_bitmap_isincluded(t->allowed, t->online));
	ck_assert(!hwloc_bitmap_intersects(t->offline, t->online));
}

/* ---- the fixtures ----------------------------------------------------- */

START_TEST(test_f03_alderlake)
{
	const char *root = f03();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	assert_consistent(t);
	assert_counts(t, 1, 1, 1, 6, 12, 16);
	ck_assert_str_eq(t->class_source, "hybrid-pmu");
	ck_assert_int_eq(t->nclasses, 2);
	assert_class(t, 0, "performance", 4, "0-7");
	assert_class(t, 1, "efficient", 8, "8-15");
	ck_assert_int_eq(t->classes[0].threads_per_core, 2);
	ck_assert_int_eq(t->classes[1].threads_per_core, 1);
	assert_clusters(t, "8-11/efficient;12-15/efficient");
	/* P-cores: adjacent SMT; E-cores: none */
	for (int cpu = 0; cpu < 16; cpu++) {
		const struct cc_pu *p = &t->pus[cc_topo_pu_index(t, cpu)];
		const struct cc_core *c = &t->cores[p->core];

		ck_assert_int_eq(c->npus, cpu < 8 ? 2 : 1);
		if (cpu < 8)
			ck_assert(hwloc_bitmap_isset(c->pus, (unsigned)(cpu ^ 1)));
		ck_assert(p->allowed);
	}
	assert_set(t->offline, "");
	assert_set(t->possible, "0-15");
	ck_assert_ptr_nonnull(t->distance);
	ck_assert_int_eq(t->distance[0], 10);
	ck_assert_int_eq(t->llcs[0].level, 3);
}
END_TEST

START_TEST(test_f05_zen5_xml)
{
	const char *xml = f05();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!xml)
		return;
	t = load_ok(CC_TOPO_XML, xml);
	assert_consistent(t);
	assert_counts(t, 1, 1, 2, 12, 12, 24);
	assert_siblings(t, 12);
	ck_assert_str_eq(t->class_source, "hwloc-cpukinds");
	ck_assert_int_eq(t->nclasses, 2);
	assert_class(t, 0, "performance", 4, "0-3,12-15");
	assert_class(t, 1, "efficient", 8, "4-11,16-23");
	ck_assert_str_eq(t->classes[0].kind, "AMDPerformance");
	ck_assert_str_eq(t->classes[1].kind, "AMDEfficieny");
	assert_clusters(t, ""); /* L2 private */
	assert_set(t->llcs[0].cpus, "0-3,12-15");
	assert_set(t->llcs[1].cpus, "4-11,16-23");
	ck_assert_ptr_null(t->distance); /* no NUMA information in this export */
}
END_TEST

START_TEST(test_f06_epyc)
{
	static const char *const nodes[8] = {
		"0-5,48-53",   "6-11,54-59",  "12-17,60-65", "18-23,66-71",
		"24-29,72-77", "30-35,78-83", "36-41,84-89", "42-47,90-95",
	};
	const char *root = f06();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	assert_consistent(t);
	assert_counts(t, 2, 8, 16, 48, 48, 96);
	assert_siblings(t, 48);
	for (int n = 0; n < 8; n++) {
		assert_set(t->numa[n].cpus, nodes[n]);
		ck_assert_int_eq(t->numa[n].package, n / 4);
	}
	for (int l = 0; l < 16; l++) {
		ck_assert_int_eq(t->llcs[l].ncores, 3);
		ck_assert_int_eq(hwloc_bitmap_weight(t->llcs[l].cpus), 6);
		ck_assert_int_eq(t->llcs[l].numa, l / 2);
	}
	ck_assert_int_eq(t->nclasses, 1);
	assert_class(t, 0, "performance", 48, "0-95");
	assert_clusters(t, "");
}
END_TEST

START_TEST(test_f10_xeon)
{
	const char *root = f10();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	assert_consistent(t);
	assert_counts(t, 2, 2, 2, 16, 16, 32);
	assert_siblings(t, 16);
	assert_set(t->numa[0].cpus, "0-7,16-23");
	assert_set(t->numa[1].cpus, "8-15,24-31");
	/* possible 0-111, only 0-31 present: nothing offline */
	assert_set(t->possible, "0-111");
	assert_set(t->present, "0-31");
	assert_set(t->offline, "");
	ck_assert_int_eq(t->npus, 32);
	ck_assert_int_eq(cc_topo_pu_index(t, 40), -1);
	ck_assert_int_eq(t->nclasses, 1);
	assert_class(t, 0, "performance", 16, "0-31");
	ck_assert_str_eq(t->class_source, "uniform");
	ck_assert_ptr_nonnull(t->distance);
	ck_assert_int_eq(t->distance[0], 10);
	ck_assert_int_eq(t->distance[1], 21);
	ck_assert_int_eq(t->distance[2], 21);
	ck_assert_int_eq(t->distance[3], 10);
}
END_TEST

START_TEST(test_f11_arm)
{
	const char *root = f11();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	assert_consistent(t);
	/* sysfs gives each cluster its own package id under one L3: one
	 * package (docs/topology.md) */
	assert_counts(t, 1, 1, 1, 7, 8, 8);
	assert_siblings(t, 0);
	ck_assert_int_eq(t->packages[0].os, 0);
	ck_assert_str_eq(t->class_source, "capacity");
	ck_assert_int_eq(t->nclasses, 3);
	assert_class(t, 0, "performance", 1, "7");
	assert_class(t, 1, "mid", 4, "3-6");
	assert_class(t, 2, "efficient", 3, "0-2");
	assert_clusters(t, "1-2/efficient");
	/* core ids are unique machine-wide although core_id restarts */
	for (int cpu = 0; cpu < 8; cpu++)
		ck_assert_int_eq(t->pus[cc_topo_pu_index(t, cpu)].core, cpu);
}
END_TEST

/* ---- the live host ---------------------------------------------------- */

static int count_nodes(void)
{
	_cleanup_closedir_ DIR *d = opendir("/sys/devices/system/node");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 1;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			n++;
	return n ? n : 1;
}

/* Expected values read straight from the kernel (on this machine: 2 PUs,
 * 1 NUMA node, no SMT), not through corecarve. */
START_TEST(test_live_host)
{
	_cleanup_topo_ struct cc_topo *t = load_ok(CC_TOPO_HOST, "/");
	cpu_set_t aff;

	assert_consistent(t);
	ck_assert_str_eq(t->source, "host");
	ck_assert_int_eq(cc_topo_online_pus(t), (int)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_int_eq(t->nnuma, count_nodes());
	for (int id = 0; id < t->ncores; id++) {
		struct cc_err err = CC_ERR_INIT;
		char path[128];
		_cleanup_free_ char *s = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t sib = hwloc_bitmap_alloc();
		int cpu = hwloc_bitmap_first(t->cores[id].pus);
		FILE *f;
		char buf[256] = "";

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		fclose(f);
		buf[strcspn(buf, "\n")] = '\0';
		ck_assert_int_eq(cc_cpulist_parse(buf, sib, path, &err), 0);
		ck_assert(hwloc_bitmap_isequal(sib, t->cores[id].pus));
	}
	/* the allowed set is the process affinity */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(aff), &aff), 0);
	for (int i = 0; i < t->npus; i++)
		ck_assert_int_eq(t->pus[i].allowed, t->pus[i].online && CPU_ISSET(t->pus[i].os, &aff));
}
END_TEST

/* Pinning the process shrinks the allowed set, nothing else. */
START_TEST(test_live_host_affinity)
{
	_cleanup_topo_ struct cc_topo *t = NULL;
	cpu_set_t one;
	int first = -1;

	t = load_ok(CC_TOPO_HOST, "/");
	first = hwloc_bitmap_first(t->allowed);
	cc_topo_free(t);
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0); /* fork mode: this test's process only */
	t = load_ok(CC_TOPO_HOST, "/");
	ck_assert_int_eq(hwloc_bitmap_weight(t->allowed), 1);
	ck_assert(hwloc_bitmap_isset(t->allowed, (unsigned)first));
	ck_assert_int_eq(cc_topo_online_pus(t), (int)sysconf(_SC_NPROCESSORS_ONLN));
	cc_topo_free(t);
	t = NULL;
	{
		/* The node's view, used for placement, ignores the pinning. */
		struct cc_err err = CC_ERR_INIT;
		_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);
		struct cc_topo_source src = { .kind = CC_TOPO_HOST, .root = root };

		t = cc_topo_load(&src, &err);
		ck_assert_msg(t != NULL, "%s", err.msg);
		ck_assert(hwloc_bitmap_isequal(t->allowed, t->online));
	}
}
END_TEST

/* ---- synthetic shapes ------------------------------------------------- */

START_TEST(test_synthetic_shapes)
{
	_cleanup_topo_ struct cc_topo *t = load_ok(CC_TOPO_SYNTHETIC, "pack:2 numa:2 core:6 pu:2");
	_cleanup_topo_ struct cc_topo *big = NULL;

	assert_consistent(t);
	assert_counts(t, 2, 4, 0, 0, 24, 48);
	ck_assert_str_eq(t->source, "synthetic:pack:2 numa:2 core:6 pu:2");
	ck_assert_str_eq(t->class_source, "uniform");
	assert_class(t, 0, "performance", 24, "0-47");
	assert_set(t->numa[1].cpus, "12-23");
	ck_assert_int_eq(t->numa[2].package, 1);
	assert_set(t->cores[1].pus, "2-3");
	ck_assert_int_eq(t->pus[5].l2, -1);
	ck_assert_int_eq(t->pus[5].llc, -1);
	assert_set(t->allowed, "0-47");

	big = load_ok(CC_TOPO_SYNTHETIC, "pack:8 numa:1 l3:4 core:16 pu:2");
	assert_consistent(big);
	assert_counts(big, 8, 8, 32, 0, 512, 1024);
	ck_assert_int_eq(big->llcs[31].ncores, 16);
	ck_assert_int_eq(big->llcs[5].package, 1);
	ck_assert_int_eq(big->cores[511].package, 7);
}
END_TEST

/* Hybrid synthetic hosts for the allocator tests: classes after '|'. */
START_TEST(test_synthetic_classes)
{
	_cleanup_topo_ struct cc_topo *t =
		load_ok(CC_TOPO_SYNTHETIC, "pack:1 l3:1 l2:3 core:4 pu:1 | efficient=4-11 performance=0-3");

	assert_consistent(t);
	ck_assert_str_eq(t->source, "synthetic:pack:1 l3:1 l2:3 core:4 pu:1");
	ck_assert_str_eq(t->class_source, "synthetic");
	assert_class(t, 0, "performance", 4, "0-3");
	assert_class(t, 1, "efficient", 8, "4-11");
	assert_clusters(t, "0-3/performance;4-7/efficient;8-11/efficient");
}
END_TEST

/* Overrides passed in the source (the policy's coreClasses) win. */
START_TEST(test_synthetic_overrides)
{
	struct cc_class_override ov[2] = { { "performance", NULL }, { "efficient", NULL } };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_topo_ struct cc_topo *t = NULL;

	ov[0].cpus = hwloc_bitmap_alloc();
	ov[1].cpus = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(ov[0].cpus, 0, 15);
	hwloc_bitmap_set_range(ov[1].cpus, 16, 47);
	t = load_src(CC_TOPO_SYNTHETIC, "pack:2 numa:2 core:6 pu:2 | performance=0-47", ov, 2, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(t->class_source, "override");
	assert_class(t, 0, "performance", 8, "0-15");
	assert_class(t, 1, "efficient", 16, "16-47");
	ck_assert_int_eq(t->classes[1].threads_per_core, 2);
	ck_assert_int_eq(cc_topo_class_index(t, "efficient"), 1);
	ck_assert_int_eq(cc_topo_class_index(t, "mid"), -1);
	hwloc_bitmap_free(ov[0].cpus);
	hwloc_bitmap_free(ov[1].cpus);
}
END_TEST

/* An override on a real fixture: the F03 E-cores as one custom class. */
START_TEST(test_fixture_override)
{
	const char *root = f03();
	struct cc_class_override ov[2] = { { "big", NULL }, { "little", NULL } };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	ov[0].cpus = hwloc_bitmap_alloc();
	ov[1].cpus = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(ov[0].cpus, 0, 7);
	hwloc_bitmap_set_range(ov[1].cpus, 8, 15);
	t = load_src(CC_TOPO_HOST, root, ov, 2, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	assert_class(t, 0, "big", 4, "0-7");
	assert_class(t, 1, "little", 8, "8-15");
	assert_clusters(t, "8-11/little;12-15/little");
	cc_topo_free(cc_steal_ptr(t));

	hwloc_bitmap_set(ov[0].cpus, 8); /* now overlapping */
	t = load_src(CC_TOPO_HOST, root, ov, 2, &err);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err.msg, "coreClasses.little: CPUs 8 are also in coreClasses.big");
	cc_err_clear(&err);
	hwloc_bitmap_zero(ov[0].cpus);
	hwloc_bitmap_set_range(ov[0].cpus, 0, 6); /* splits P-core 3 */
	hwloc_bitmap_clr(ov[1].cpus, 15);
	hwloc_bitmap_set(ov[1].cpus, 7);
	t = load_src(CC_TOPO_HOST, root, ov, 2, &err);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err.msg, "coreClasses.big: splits core 3 (CPUs 6-7): it has 6 but not 7; list whole cores");
	hwloc_bitmap_free(ov[0].cpus);
	hwloc_bitmap_free(ov[1].cpus);
}
END_TEST

/* The hwloc quirk's environment is put back after a --root load. */
START_TEST(test_env_restored)
{
	const char *root = f10();
	_cleanup_topo_ struct cc_topo *t = NULL;

	if (!root)
		return;
	unsetenv("HWLOC_FSROOT");
	setenv("HWLOC_COMPONENTS", "foo", 1);
	t = load_ok(CC_TOPO_HOST, root);
	ck_assert_ptr_null(getenv("HWLOC_FSROOT"));
	ck_assert_str_eq(getenv("HWLOC_COMPONENTS"), "foo");
	ck_assert_ptr_null(getenv("HWLOC_HIDE_ERRORS"));
}
END_TEST

/* ---- bad input -------------------------------------------------------- */

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/cc-topo-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	return strdup(tmpl);
}

/* A copy of F03 with `damage` (a shell command run inside it) applied.
 * The copy is hard links (a full copy is slow on some filesystems): damage
 * must replace files (rm, then write), never write into them. */
static char *damaged_f03(const char *damage)
{
	const char *root = f03();
	char *dir, cmd[2 * PATH_MAX + 256];

	if (!root)
		return NULL;
	dir = tmpdir();
	snprintf(cmd, sizeof(cmd), "cp -al '%s/.' '%s' && cd '%s' && %s", root, dir, dir, damage);
	ck_assert_int_eq(system(cmd), 0);
	return dir;
}

static void assert_load_fails(enum cc_topo_kind kind, const char *arg, const char *want)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t = load_src(kind, arg, NULL, 0, &err);

	ck_assert_msg(t == NULL, "%s: loaded", arg);
	ck_assert_str_eq(err.msg, want);
}

/* F03 with CPU 7 (a P-core's second thread) and 14-15 (two E-cores)
 * offline: reported, in no core or class, and the E-cluster shrinks. */
START_TEST(test_offline_cpus)
{
	_cleanup_free_ char *dir = damaged_f03("f=sys/devices/system/cpu/online && rm $f && echo 0-6,8-13 > $f");
	_cleanup_topo_ struct cc_topo *t = NULL;
	char cmd[PATH_MAX + 16];

	if (!dir)
		return;
	t = load_ok(CC_TOPO_HOST, dir);
	assert_consistent(t);
	assert_counts(t, 1, 1, 1, 6, 10, 13);
	assert_set(t->offline, "7,14-15");
	assert_set(t->present, "0-15");
	ck_assert_int_eq(t->npus, 16);
	for (int cpu = 0; cpu < 16; cpu++) {
		const struct cc_pu *p = &t->pus[cc_topo_pu_index(t, cpu)];
		bool off = cpu == 7 || cpu >= 14;

		ck_assert_int_eq(p->online, !off);
		ck_assert_int_eq(p->allowed, !off);
		if (off) {
			ck_assert_int_eq(p->core, -1);
			ck_assert_int_eq(p->cls, -1);
			ck_assert_int_eq(p->package, -1);
		}
	}
	assert_set(t->cores[3].pus, "6");
	assert_class(t, 0, "performance", 4, "0-6");
	assert_class(t, 1, "efficient", 6, "8-13");
	ck_assert_int_eq(t->classes[0].threads_per_core, 2);
	assert_clusters(t, "8-11/efficient;12-13/efficient");
	cc_topo_free(cc_steal_ptr(t));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_bad_roots)
{
	_cleanup_free_ char *empty = tmpdir();
	char want[PATH_MAX + 128];

	assert_load_fails(CC_TOPO_HOST, "/nonexistent-corecarve", "root /nonexistent-corecarve: No such file or directory");
	snprintf(want, sizeof(want), "%s is not a sysfs tree: /sys/devices/system/cpu is missing", empty);
	assert_load_fails(CC_TOPO_HOST, empty, want);
	rmdir(empty);
}
END_TEST

START_TEST(test_truncated_dumps)
{
	static const struct {
		const char *damage, *msg;
	} cases[] = {
		{ "rm -rf sys/devices/system/cpu/cpu12",
		  "truncated sysfs tree (CPU 12 is online): /sys/devices/system/cpu/cpu12/topology/thread_siblings_list: No such file or directory" },
		{ "rm sys/devices/system/cpu/online",
		  "truncated sysfs tree: /sys/devices/system/cpu/online: No such file or directory" },
		{ "rm -rf sys/devices/system/cpu/cpu5/cache",
		  "truncated sysfs tree: /sys/devices/system/cpu/cpu5/cache is missing (CPU 0 has one)" },
		{ "rm sys/devices/system/cpu/cpu3/topology/core_id && : > sys/devices/system/cpu/cpu3/topology/core_id",
		  "truncated sysfs tree (CPU 3 is online): /sys/devices/system/cpu/cpu3/topology/core_id: expected an integer, got \"\"" },
		{ "f=sys/devices/system/cpu/cpu9/topology/thread_siblings_list && rm $f && printf '0-1' > $f",
		  "/sys/devices/system/cpu/cpu9/topology/thread_siblings_list does not list CPU 9 itself" },
		{ "rm sys/devices/cpu_core/cpus && printf '0-7,' > sys/devices/cpu_core/cpus",
		  "/sys/devices/cpu_core/cpus: invalid cpu list \"0-7,\": trailing comma" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		_cleanup_free_ char *dir = damaged_f03(cases[c].damage);
		char want[PATH_MAX + 512], cmd[PATH_MAX + 16];

		if (!dir)
			return;
		snprintf(want, sizeof(want), "%s: %s", dir, cases[c].msg);
		assert_load_fails(CC_TOPO_HOST, dir, want);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
}
END_TEST

START_TEST(test_bad_xml_and_synthetic)
{
	_cleanup_free_ char *junk = cc_test_write_tmp("<topology version=\"2.0\"><object type=\"Machine\"");

	assert_load_fails(CC_TOPO_XML, "/nonexistent.xml", "hwloc XML /nonexistent.xml: No such file or directory");
	{
		char want[PATH_MAX + 64];

		snprintf(want, sizeof(want), "hwloc XML %s: not a valid hwloc XML v2 topology", junk);
		assert_load_fails(CC_TOPO_XML, junk, want);
	}
	unlink(junk);
	assert_load_fails(CC_TOPO_SYNTHETIC, "pack:2 bogus:3",
			  "synthetic topology \"pack:2 bogus:3\": not a valid hwloc synthetic description");
	assert_load_fails(CC_TOPO_SYNTHETIC, "core:4 pu:1 | fast",
			  "synthetic classes: expected name=cpulist, got \"fast\"");
	assert_load_fails(CC_TOPO_SYNTHETIC, "core:4 pu:1 | fast=0-1,",
			  "synthetic classes: fast: invalid cpu list \"0-1,\": trailing comma");
	assert_load_fails(CC_TOPO_SYNTHETIC, "core:4 pu:2 | fast=0-2 slow=3-7",
			  "synthetic classes.fast: splits core 1 (CPUs 2-3): it has 2 but not 3; list whole cores");
	assert_load_fails(CC_TOPO_SYNTHETIC, "core:4 pu:1 | fast=0-1",
			  "synthetic classes: online CPUs 2-3 are in no class");
}
END_TEST

/* ---- output ----------------------------------------------------------- */

static char *render_map(const struct cc_topo *t, const struct cc_topo_view *view)
{
	struct cc_err err = CC_ERR_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(cc_topo_map(f, t, view, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static void assert_width(const char *map)
{
	for (const char *p = map; *p;) {
		size_t n = strcspn(p, "\n");

		ck_assert_msg(n <= 80, "line longer than 80 columns: %.*s", (int)n, p);
		ck_assert_msg(n == 0 || p[n - 1] != ' ', "trailing space: %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

START_TEST(test_map_f03)
{
	const char *root = f03();
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_free_ char *map = NULL;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	map = render_map(t, NULL);
	assert_width(map);
	ck_assert_ptr_nonnull(strstr(map, "1 package, 1 NUMA node, 1 LLC, 6 L2, 12 cores, 16 CPUs online (0-15)\n"));
	ck_assert_ptr_nonnull(strstr(map, "  P  performance     4 cores    8 CPUs  0-7   cpu_core, SMT2\n"));
	ck_assert_ptr_nonnull(strstr(map, "  E  efficient       8 cores    8 CPUs  8-15  cpu_atom, 2 L2 clusters of 4\n"));
	ck_assert_ptr_nonnull(strstr(map, "    P  c0 [0,1]  c1 [2,3]  c2 [4,5]  c3 [6,7]\n"));
	ck_assert_ptr_nonnull(strstr(map, "    E  c4 [8]    c5 [9]    c6 [10]   c7 [11]   = L2 #4 cluster of 4 (2 MiB)\n"));
	ck_assert_ptr_nonnull(strstr(map, "    E  c8 [12]   c9 [13]   c10 [14]  c11 [15]  = L2 #5 cluster of 4 (2 MiB)\n"));
}
END_TEST

START_TEST(test_map_all_fixtures_fit)
{
	const char *roots[4] = { f06(), f10(), f11(), "/" };

	for (int i = 0; i < 4; i++) {
		_cleanup_topo_ struct cc_topo *t = NULL;
		_cleanup_free_ char *map = NULL;

		if (!roots[i])
			continue;
		t = load_ok(CC_TOPO_HOST, roots[i]);
		map = render_map(t, NULL);
		assert_width(map);
		if (i == 1)
			ck_assert_ptr_nonnull(strstr(map, "\nNUMA distances:\n  node    0    1\n     0   10   21\n     1   21   10\n"));
	}
	{
		_cleanup_topo_ struct cc_topo *t = load_ok(CC_TOPO_SYNTHETIC, "pack:2 numa:4 l3:2 l2:2 core:2 pu:4");
		_cleanup_free_ char *map = render_map(t, NULL);

		assert_width(map);
	}
}
END_TEST

/* The hook for `corecarve status`: per-CPU labels. */
START_TEST(test_map_labels)
{
	static const char long_id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	_cleanup_topo_ struct cc_topo *t = load_ok(CC_TOPO_SYNTHETIC, "pack:1 l2:2 core:2 pu:2");
	const char *labels[8] = { "ctr-a", "ctr-a", NULL, NULL, "ctr-b", NULL, long_id, long_id };
	struct cc_topo_view view = { .pu_labels = labels, .title = "Carves on test" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *map = render_map(t, &view);
	_cleanup_json_ json_t *j = NULL;

	assert_width(map);
	ck_assert_ptr_eq(strstr(map, "Carves on test\n"), map);
	ck_assert_ptr_nonnull(strstr(map, "    P  c0 [0,1]  ctr-a\n"));
	ck_assert_ptr_nonnull(strstr(map, "    P  c1 [2,3]\n"));
	ck_assert_ptr_nonnull(strstr(map, "    P  c2 [4,5]  4=ctr-b 5=-\n"));
	/* long labels are cut to 80 columns */
	ck_assert_ptr_nonnull(strstr(map, "    P  c3 [6,7]  0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab...\n"));
	j = cc_topo_json(t, &view, &err);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "cpus"), 4), "label")),
			 "ctr-b");
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(j, "cpus"), 2), "label"));
}
END_TEST

START_TEST(test_json_f11)
{
	const char *root = f11();
	struct cc_err err = CC_ERR_INIT;
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_t *cls, *cl, *cpu;

	if (!root)
		return;
	t = load_ok(CC_TOPO_HOST, root);
	j = cc_topo_json(t, NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "schema_version")), 2);
	/* Arrays are plural, as their counts are. */
	ck_assert_int_eq((int)json_array_size(json_object_get(j, "packages")), 1);
	ck_assert_int_eq((int)json_array_size(json_object_get(j, "l2s")), 7);
	ck_assert_ptr_null(json_object_get(j, "package"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "packages")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "numa_nodes")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "llcs")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "l2s")), 7);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "cores")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "pus")), 8);
	cls = json_object_get(j, "classes");
	ck_assert_int_eq(json_array_size(cls), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cls, 1), "name")), "mid");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(cls, 1), "cores")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(cls, 1), "pus")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cls, 1), "cpus")), "3-6");
	cl = json_object_get(j, "clusters");
	ck_assert_int_eq(json_array_size(cl), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(cl, 0), "cores")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cl, 0), "cpus")), "1-2");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cl, 0), "class")), "efficient");
	cpu = json_array_get(json_object_get(j, "cpus"), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "cpu")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "core")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "package")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(cpu, "class")), "efficient");
	ck_assert_str_eq(json_string_value(json_object_get(cpu, "siblings")), "2");
	ck_assert(json_is_true(json_object_get(cpu, "online")));
}
END_TEST

/* ---- the command ------------------------------------------------------ */

/* Run `corecarve topology ARGS`; stdout and stderr apart. */
static int run_topology(const char *args, char **out, char **errout)
{
	const char *bin = cc_test_bin("topology CLI tests");
	_cleanup_free_ char *dir = NULL, *cmd = NULL;
	char o[PATH_MAX], e[PATH_MAX];
	int st;

	if (!bin)
		return -1;
	dir = tmpdir();
	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	ck_assert_int_ge(asprintf(&cmd, "CORECARVE_POLICY= '%s' topology %s >'%s' 2>'%s'", bin, args, o, e), 0);
	st = system(cmd);
	*out = cc_test_slurp(o);
	*errout = cc_test_slurp(e);
	unlink(o);
	unlink(e);
	rmdir(dir);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli_json)
{
	const char *root = f03();
	_cleanup_free_ char *args = NULL, *out = NULL, *errout = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t je;
	json_t *cpu;

	if (!root)
		return;
	ck_assert_int_ge(asprintf(&args, "--root '%s' --json", root), 0);
	if (run_topology(args, &out, &errout) < 0)
		return;
	ck_assert_str_eq(errout, "");
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "cores")), 12);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "pus")), 16);
	ck_assert_int_eq(json_array_size(json_object_get(j, "clusters")), 2);
	cpu = json_array_get(json_object_get(j, "cpus"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(cpu, "siblings")), "0-1");
	ck_assert_str_eq(json_string_value(json_object_get(cpu, "class")), "performance");
	ck_assert_int_eq(json_array_size(json_object_get(json_array_get(json_object_get(j, "numa_nodes"), 0), "distances")), 1);
}
END_TEST

START_TEST(test_cli_bad_input)
{
	_cleanup_free_ char *empty = tmpdir();
	_cleanup_free_ char *split = NULL, *trunc = damaged_f03("rm -rf sys/devices/system/cpu/cpu7");
	const char *root = f03();
	struct {
		char *args;
		const char *err_start; /* the one line starts so */
	} cases[] = {
		{ strdup("--root /nonexistent-corecarve"), "corecarve: --root: root /nonexistent-corecarve: No such file" },
		{ NULL, "corecarve: " },
		{ NULL, "corecarve: " },
		{ strdup("--synthetic 'core:4 pu:2 | a=0-2 b=3-7'"), "corecarve: synthetic classes.a: splits core 1" },
		{ strdup("--hwloc-xml /nonexistent.xml"), "corecarve: hwloc XML /nonexistent.xml: No such file" },
		{ strdup("--bogus"), "corecarve: topology: unknown option \"--bogus\"" },
		{ strdup("--root / --synthetic core:2"), "corecarve: --root, --hwloc-xml and --synthetic exclude each other" },
		{ NULL, "corecarve: coreClasses.performance: splits core 3 (CPUs 6-7)" },
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);

	ck_assert_int_ge(asprintf(&cases[1].args, "--root '%s'", empty), 0);
	if (trunc)
		ck_assert_int_ge(asprintf(&cases[2].args, "--root '%s' --json", trunc), 0);
	if (root) {
		_cleanup_free_ char *text = NULL;

		ck_assert_int_ge(asprintf(&text, "%s\ncoreClasses:\n  performance: \"0-6\"\n  efficient: \"7-15\"\n",
					  cc_policy_default_yaml), 0);
		split = cc_test_write_tmp(text);
		ck_assert_int_ge(asprintf(&cases[7].args, "--root '%s' --policy '%s'", root, split), 0);
	}
	for (size_t c = 0; c < n; c++) {
		_cleanup_free_ char *out = NULL, *errout = NULL;
		int rc;

		if (!cases[c].args)
			continue;
		rc = run_topology(cases[c].args, &out, &errout);
		if (rc < 0)
			break;
		ck_assert_msg(rc == 2, "%s: exit %d", cases[c].args, rc);
		ck_assert_msg(out[0] == '\0', "%s: stdout not empty: %s", cases[c].args, out);
		ck_assert_msg(strncmp(errout, cases[c].err_start, strlen(cases[c].err_start)) == 0, "%s: stderr %s",
			      cases[c].args, errout);
		ck_assert_msg(strchr(errout, '\n') == errout + strlen(errout) - 1, "%s: not one line: %s",
			      cases[c].args, errout);
	}
	for (size_t c = 0; c < n; c++)
		free(cases[c].args);
	if (split)
		unlink(split);
	if (trunc) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", trunc);
		ck_assert_int_eq(system(cmd), 0);
	}
	rmdir(empty);
}
END_TEST

START_TEST(test_cli_help_and_map)
{
	_cleanup_free_ char *out = NULL, *errout = NULL, *out2 = NULL, *err2 = NULL;

	if (run_topology("--help", &out, &errout) < 0)
		return;
	ck_assert_ptr_nonnull(strstr(out, "usage: corecarve topology"));
	ck_assert_int_eq(run_topology("--synthetic 'pack:1 core:2 pu:1'", &out2, &err2), 0);
	ck_assert_str_eq(err2, "");
	ck_assert_ptr_nonnull(strstr(out2, "    P  c0 [0]  c1 [1]\n"));
}
END_TEST

static Suite *topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *fx = tcase_create("fixtures");
	TCase *host = tcase_create("host");
	TCase *syn = tcase_create("synthetic");
	TCase *bad = tcase_create("bad input");
	TCase *out = tcase_create("output");
	TCase *cli = tcase_create("cli");

	tcase_set_timeout(fx, 60);
	tcase_add_test(fx, test_f03_alderlake);
	tcase_add_test(fx, test_f05_zen5_xml);
	tcase_add_test(fx, test_f06_epyc);
	tcase_add_test(fx, test_f10_xeon);
	tcase_add_test(fx, test_f11_arm);
	tcase_add_test(fx, test_fixture_override);
	tcase_add_test(fx, test_env_restored);
	tcase_add_test(fx, test_offline_cpus);
	suite_add_tcase(s, fx);
	tcase_add_test(host, test_live_host);
	tcase_add_test(host, test_live_host_affinity);
	suite_add_tcase(s, host);
	tcase_add_test(syn, test_synthetic_shapes);
	tcase_add_test(syn, test_synthetic_classes);
	tcase_add_test(syn, test_synthetic_overrides);
	suite_add_tcase(s, syn);
	tcase_set_timeout(bad, 60);
	tcase_add_test(bad, test_bad_roots);
	tcase_add_test(bad, test_truncated_dumps);
	tcase_add_test(bad, test_bad_xml_and_synthetic);
	suite_add_tcase(s, bad);
	tcase_set_timeout(out, 60);
	tcase_add_test(out, test_map_f03);
	tcase_add_test(out, test_map_all_fixtures_fit);
	tcase_add_test(out, test_map_labels);
	tcase_add_test(out, test_json_f11);
	suite_add_tcase(s, out);
	tcase_set_timeout(cli, 60);
	tcase_add_test(cli, test_cli_json);
	tcase_add_test(cli, test_cli_bad_input);
	tcase_add_test(cli, test_cli_help_and_map);
	suite_add_tcase(s, cli);
	return s;
}

CC_TEST_MAIN(topo_suite)
