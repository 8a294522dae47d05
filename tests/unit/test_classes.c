/* Core-class rules on made-up per-core facts (plugin/topo/classes.c). */
#include <errno.h>
#include <string.h>

#include "classes.h"
#include "cleanup.h"
#include "cpulist.h"
#include "testlib.h"

#define MAXC 32

/* Classify and render "name:core,core;name:core..." with the source. */
static void classify(const struct cc_core_facts *f, int n, struct cc_classing *cl, int *cls)
{
	struct cc_err err = CC_ERR_INIT;

	ck_assert_msg(cc_classify(f, n, cls, cl, &err) == 0, "%s", err.msg);
	for (int i = 0; i < n; i++)
		ck_assert_msg(cls[i] >= 0 && cls[i] < cl->nclasses, "core %d has class %d", i, cls[i]);
}

/* Cores of class k as a list "0-3,8". */
static char *cores_of(const int *cls, int n, int k)
{
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();

	for (int i = 0; i < n; i++)
		if (cls[i] == k)
			hwloc_bitmap_set(b, (unsigned)i);
	return cc_cpulist_format(b);
}

static void assert_class(const struct cc_classing *cl, const int *cls, int n, int k, const char *name,
			 const char *cores, const char *kind)
{
	_cleanup_free_ char *got = cores_of(cls, n, k);

	ck_assert_int_lt(k, cl->nclasses);
	ck_assert_str_eq(cl->classes[k].name, name);
	ck_assert_str_eq(got, cores);
	if (kind)
		ck_assert_str_eq(cl->classes[k].kind, kind);
}

static void facts_init(struct cc_core_facts *f, int n)
{
	memset(f, 0, (size_t)n * sizeof(*f));
	for (int i = 0; i < n; i++)
		f[i].efficiency = -1;
}

/* ---- tiers ---- */

START_TEST(test_tiers_threshold)
{
	/* 10% below the neighbour is still the same tier; more is not. */
	static const struct {
		unsigned long v[4];
		int n, ntiers;
		int tier[4];
	} cases[] = {
		{ { 1000, 900 }, 2, 1, { 0, 0 } },
		{ { 1000, 899 }, 2, 2, { 0, 1 } },
		{ { 899, 1000 }, 2, 2, { 1, 0 } },
		{ { 5000, 4900, 4900, 3800 }, 4, 2, { 0, 0, 0, 1 } },
		/* gaps between neighbours decide: a ladder of small steps is one tier */
		{ { 1000, 950, 905, 861 }, 4, 1, { 0, 0, 0, 0 } },
		{ { 1024, 855, 280, 855 }, 4, 3, { 0, 1, 2, 1 } },
		{ { 7, 7, 7 }, 3, 1, { 0, 0, 0 } },
		{ { 1024, 0 }, 2, 0, { 0 } }, /* unknown value: no tiers */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int tier[4] = { -1, -1, -1, -1 };
		int nt = cc_class_tiers(cases[c].v, cases[c].n, tier);

		ck_assert_msg(nt == cases[c].ntiers, "case %zu: %d tiers", c, nt);
		for (int i = 0; nt && i < cases[c].n; i++)
			ck_assert_msg(tier[i] == cases[c].tier[i], "case %zu value %d: tier %d", c, i, tier[i]);
	}
}
END_TEST

START_TEST(test_tier_names)
{
	static const struct {
		int t, n;
		const char *name;
	} cases[] = {
		{ 0, 1, "performance" }, { 0, 2, "performance" }, { 1, 2, "efficient" }, { 1, 3, "mid" },
		{ 2, 3, "efficient" },   { 1, 4, "mid-1" },       { 2, 4, "mid-2" },     { 3, 4, "efficient" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char name[CC_NAME_MAX];

		cc_class_tier_name(cases[c].t, cases[c].n, name);
		ck_assert_str_eq(name, cases[c].name);
	}
}
END_TEST

START_TEST(test_core_type_names)
{
	ck_assert_str_eq(cc_class_for_core_type("IntelCore"), "performance");
	ck_assert_str_eq(cc_class_for_core_type("IntelAtom"), "efficient");
	ck_assert_str_eq(cc_class_for_core_type("IntelLowPower"), "low-power");
	ck_assert_str_eq(cc_class_for_core_type("AMDPerformance"), "performance");
	ck_assert_str_eq(cc_class_for_core_type("AMDEfficiency"), "efficient");
	ck_assert_str_eq(cc_class_for_core_type("AMDEfficieny"), "efficient");
	ck_assert_ptr_null(cc_class_for_core_type("CortexA510"));
	ck_assert_ptr_null(cc_class_for_core_type(""));
}
END_TEST

/* ---- frequency rules ---- */

/* Turbo Boost Max 3.0: two favoured P-cores have a higher max frequency.
 * The base frequency decides, so they stay with the other P-cores. */
START_TEST(test_turbo_boost_max_base)
{
	struct cc_core_facts f[12];
	struct cc_classing cl;
	int cls[12];

	facts_init(f, 12);
	for (int i = 0; i < 12; i++) {
		f[i].base_mhz = i < 4 ? 1600 : 1200;
		f[i].max_mhz = i < 4 ? 4700 : 3500;
	}
	f[1].max_mhz = f[2].max_mhz = 4900; /* favoured cores */
	classify(f, 12, &cl, cls);
	ck_assert_str_eq(cl.source, "frequency");
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 12, 0, "performance", "0-3", "base 1600 MHz");
	assert_class(&cl, cls, 12, 1, "efficient", "4-11", "base 1200 MHz");
}
END_TEST

/* The same host without base_frequency: the favoured cores are 4% above
 * the others, within one tier. */
START_TEST(test_turbo_boost_max_only_max)
{
	struct cc_core_facts f[12];
	struct cc_classing cl;
	int cls[12];

	facts_init(f, 12);
	for (int i = 0; i < 12; i++)
		f[i].max_mhz = i < 4 ? 4700 : 3500;
	f[1].max_mhz = f[2].max_mhz = 4900;
	classify(f, 12, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 12, 0, "performance", "0-3", "max 4700-4900 MHz");
	assert_class(&cl, cls, 12, 1, "efficient", "4-11", "max 3500 MHz");
}
END_TEST

/* A non-hybrid desktop whose cores differ in max frequency (best cores
 * boost higher): one class. */
START_TEST(test_desktop_max_spread)
{
	static const unsigned long max[8] = { 5300, 5200, 5100, 5100, 5000, 5000, 4900, 4900 };
	struct cc_core_facts f[8];
	struct cc_classing cl;
	int cls[8];

	facts_init(f, 8);
	for (int i = 0; i < 8; i++)
		f[i].max_mhz = max[i];
	classify(f, 8, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 1);
	assert_class(&cl, cls, 8, 0, "performance", "0-7", "max 4900-5300 MHz");
	ck_assert_str_eq(cl.source, "frequency");
	/* and with a uniform base frequency, the base decides */
	for (int i = 0; i < 8; i++)
		f[i].base_mhz = 3600;
	classify(f, 8, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 1);
	ck_assert_str_eq(cl.classes[0].kind, "base 3600 MHz");
}
END_TEST

/* ---- capacity rules ---- */

/* ARM: capacities take several nearly equal values within one core type. */
START_TEST(test_arm_near_equal_capacities)
{
	static const unsigned long cap[8] = { 436, 440, 440, 858, 866, 870, 1007, 1024 };
	struct cc_core_facts f[8];
	struct cc_classing cl;
	int cls[8];

	facts_init(f, 8);
	for (int i = 0; i < 8; i++) {
		f[i].capacity = cap[i];
		f[i].max_mhz = 1800 + 100 * (unsigned long)i; /* ignored: capacity is stronger */
	}
	classify(f, 8, &cl, cls);
	ck_assert_str_eq(cl.source, "capacity");
	ck_assert_int_eq(cl.nclasses, 3);
	assert_class(&cl, cls, 8, 0, "performance", "6-7", "cpu_capacity 1007-1024");
	assert_class(&cl, cls, 8, 1, "mid", "3-5", "cpu_capacity 858-870");
	assert_class(&cl, cls, 8, 2, "efficient", "0-2", "cpu_capacity 436-440");
}
END_TEST

START_TEST(test_four_tiers)
{
	static const unsigned long cap[5] = { 1024, 800, 600, 600, 300 };
	struct cc_core_facts f[5];
	struct cc_classing cl;
	int cls[5];

	facts_init(f, 5);
	for (int i = 0; i < 5; i++)
		f[i].capacity = cap[i];
	classify(f, 5, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 4);
	assert_class(&cl, cls, 5, 0, "performance", "0", NULL);
	assert_class(&cl, cls, 5, 1, "mid-1", "1", NULL);
	assert_class(&cl, cls, 5, 2, "mid-2", "2-3", NULL);
	assert_class(&cl, cls, 5, 3, "efficient", "4", NULL);
}
END_TEST

/* A capacity that only some cores report does not count. */
START_TEST(test_partial_metric_falls_through)
{
	struct cc_core_facts f[4];
	struct cc_classing cl;
	int cls[4];

	facts_init(f, 4);
	for (int i = 0; i < 4; i++)
		f[i].max_mhz = i < 2 ? 3000 : 2000;
	f[0].capacity = 1024;
	classify(f, 4, &cl, cls);
	ck_assert_str_eq(cl.source, "frequency");
	assert_class(&cl, cls, 4, 0, "performance", "0-1", "max 3000 MHz");
	assert_class(&cl, cls, 4, 1, "efficient", "2-3", "max 2000 MHz");
}
END_TEST

/* ---- hardware-named kinds ---- */

START_TEST(test_hybrid_pmu)
{
	struct cc_core_facts f[12];
	struct cc_classing cl;
	int cls[12];

	facts_init(f, 12);
	for (int i = 0; i < 12; i++) {
		f[i].pmu = i < 4 ? CC_PMU_CORE : CC_PMU_ATOM;
		f[i].llc_level = 3;
		/* the PMU lists win over anything else */
		f[i].capacity = 1024;
		snprintf(f[i].core_type, sizeof(f[i].core_type), "IntelCore");
	}
	classify(f, 12, &cl, cls);
	ck_assert_str_eq(cl.source, "hybrid-pmu");
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 12, 0, "performance", "0-3", "cpu_core");
	assert_class(&cl, cls, 12, 1, "efficient", "4-11", "cpu_atom");
}
END_TEST

/* Meteor Lake: low-power E-cores (SoC tile) are atoms without the L3. */
START_TEST(test_hybrid_pmu_low_power)
{
	struct cc_core_facts f[16];
	struct cc_classing cl;
	int cls[16];

	facts_init(f, 16);
	for (int i = 0; i < 16; i++) {
		f[i].pmu = i < 6 ? CC_PMU_CORE : CC_PMU_ATOM;
		f[i].llc_level = i < 14 ? 3 : 2;
	}
	classify(f, 16, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 3);
	assert_class(&cl, cls, 16, 0, "performance", "0-5", "cpu_core");
	assert_class(&cl, cls, 16, 1, "efficient", "6-13", "cpu_atom");
	assert_class(&cl, cls, 16, 2, "low-power", "14-15", "cpu_atom without L3");
	/* when no atom has an L3, none is "low-power" */
	for (int i = 6; i < 16; i++)
		f[i].llc_level = 2;
	classify(f, 16, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 16, 1, "efficient", "6-15", "cpu_atom");
}
END_TEST

/* A PMU list that leaves a core out is not trusted. */
START_TEST(test_hybrid_pmu_incomplete)
{
	struct cc_core_facts f[4];
	struct cc_classing cl;
	int cls[4];

	facts_init(f, 4);
	for (int i = 0; i < 4; i++) {
		f[i].pmu = i < 2 ? CC_PMU_CORE : CC_PMU_ATOM;
		f[i].base_mhz = i < 2 ? 2000 : 1000;
	}
	f[3].pmu = CC_PMU_NONE;
	classify(f, 4, &cl, cls);
	ck_assert_str_eq(cl.source, "frequency");
	assert_class(&cl, cls, 4, 1, "efficient", "2-3", NULL);
}
END_TEST

START_TEST(test_core_types)
{
	struct cc_core_facts f[12];
	struct cc_classing cl;
	int cls[12];

	facts_init(f, 12);
	for (int i = 0; i < 12; i++) {
		/* hwloc lists the AMD kinds with its own spelling; the
		 * efficient cores come first in cpu order here on purpose */
		snprintf(f[i].core_type, sizeof(f[i].core_type), "%s", i < 8 ? "AMDEfficieny" : "AMDPerformance");
		f[i].efficiency = i < 8 ? 0 : 1;
		f[i].max_mhz = 5100; /* ignored */
	}
	classify(f, 12, &cl, cls);
	ck_assert_str_eq(cl.source, "hwloc-cpukinds");
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 12, 0, "performance", "8-11", "AMDPerformance");
	assert_class(&cl, cls, 12, 1, "efficient", "0-7", "AMDEfficieny");

	for (int i = 0; i < 12; i++)
		snprintf(f[i].core_type, sizeof(f[i].core_type), "%s",
			 i < 2 ? "IntelLowPower" : i < 6 ? "IntelAtom" : "IntelCore");
	classify(f, 12, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 3);
	assert_class(&cl, cls, 12, 0, "performance", "6-11", "IntelCore");
	assert_class(&cl, cls, 12, 1, "efficient", "2-5", "IntelAtom");
	assert_class(&cl, cls, 12, 2, "low-power", "0-1", "IntelLowPower");
}
END_TEST

/* An unknown core type makes the kinds unnamed: ranked on the metrics. */
START_TEST(test_unknown_core_type)
{
	struct cc_core_facts f[4];
	struct cc_classing cl;
	int cls[4];

	facts_init(f, 4);
	for (int i = 0; i < 4; i++) {
		snprintf(f[i].core_type, sizeof(f[i].core_type), "%s", i ? "IntelCore" : "Mystery");
		f[i].capacity = i < 2 ? 1024 : 512;
	}
	classify(f, 4, &cl, cls);
	ck_assert_str_eq(cl.source, "capacity");
	assert_class(&cl, cls, 4, 0, "performance", "0-1", "cpu_capacity 1024");
}
END_TEST

/* hwloc kinds with an efficiency rank and no infos: each rank a class. */
START_TEST(test_efficiency_only)
{
	struct cc_core_facts f[6];
	struct cc_classing cl;
	int cls[6];

	facts_init(f, 6);
	for (int i = 0; i < 6; i++)
		f[i].efficiency = i < 2 ? 1 : 0;
	classify(f, 6, &cl, cls);
	ck_assert_str_eq(cl.source, "hwloc-cpukinds");
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 6, 0, "performance", "0-1", "hwloc efficiency 1");
	assert_class(&cl, cls, 6, 1, "efficient", "2-5", "hwloc efficiency 0");
}
END_TEST

/* A VM that hides the host's kinds: nothing to tell cores apart. */
START_TEST(test_uniform)
{
	struct cc_core_facts f[4];
	struct cc_classing cl;
	int cls[4];

	facts_init(f, 4);
	classify(f, 4, &cl, cls);
	ck_assert_str_eq(cl.source, "uniform");
	ck_assert_int_eq(cl.nclasses, 1);
	assert_class(&cl, cls, 4, 0, "performance", "0-3", "uniform");
	/* one hwloc kind (efficiency 0 everywhere) is the same */
	for (int i = 0; i < 4; i++)
		f[i].efficiency = 0;
	classify(f, 4, &cl, cls);
	ck_assert_int_eq(cl.nclasses, 1);
	ck_assert_str_eq(cl.classes[0].name, "performance");
}
END_TEST

START_TEST(test_no_cores)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_classing cl;
	int cls[1];

	ck_assert_int_eq(cc_classify(NULL, 0, cls, &cl, &err), -1);
	ck_assert_str_eq(err.msg, "core classes: no cores");
}
END_TEST

/* ---- overrides ---- */

/* 6 cores: 0-3 with SMT (PUs 2i, 2i+1), 4-5 single (PUs 8, 9); PU 10
 * present but offline. */
struct ovhost {
	hwloc_bitmap_t pus[6];
	hwloc_bitmap_t online, known;
};

static void ovhost_init(struct ovhost *h)
{
	for (int c = 0; c < 6; c++) {
		h->pus[c] = hwloc_bitmap_alloc();
		if (c < 4)
			hwloc_bitmap_set_range(h->pus[c], 2 * c, 2 * c + 1);
		else
			hwloc_bitmap_set(h->pus[c], (unsigned)(4 + c));
	}
	h->online = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(h->online, 0, 9);
	h->known = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(h->known, 0, 10);
}

static void ovhost_free(struct ovhost *h)
{
	for (int c = 0; c < 6; c++)
		hwloc_bitmap_free(h->pus[c]);
	hwloc_bitmap_free(h->online);
	hwloc_bitmap_free(h->known);
}

static int override(struct ovhost *h, const char *spec, int *cls, struct cc_classing *cl, struct cc_err *err)
{
	struct cc_class_override ov[8];
	char buf[256], *save = NULL;
	int n = 0, r;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		struct cc_err perr = CC_ERR_INIT;

		*eq = '\0';
		memset(&ov[n], 0, sizeof(ov[n]));
		snprintf(ov[n].name, sizeof(ov[n].name), "%s", tok);
		ov[n].cpus = hwloc_bitmap_alloc();
		ck_assert_int_eq(cc_cpulist_parse(eq + 1, ov[n].cpus, "test", &perr), 0);
		n++;
	}
	r = cc_classify_override(ov, n, (const hwloc_const_bitmap_t *)h->pus, 6, h->online, h->known, "coreClasses",
				 cls, cl, err);
	for (int i = 0; i < n; i++)
		hwloc_bitmap_free(ov[i].cpus);
	return r;
}

START_TEST(test_override_ok)
{
	struct cc_err err = CC_ERR_INIT;
	struct ovhost h;
	struct cc_classing cl;
	int cls[6];

	ovhost_init(&h);
	/* standard names are put in rank order, whatever the file's order;
	 * the offline CPU 10 may be listed */
	ck_assert_msg(override(&h, "efficient=8-10 performance=0-7", cls, &cl, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(cl.source, "override");
	ck_assert_int_eq(cl.nclasses, 2);
	assert_class(&cl, cls, 6, 0, "performance", "0-3", "coreClasses");
	assert_class(&cl, cls, 6, 1, "efficient", "4-5", "coreClasses");
	/* other names keep the operator's order (most performant first) */
	ck_assert_msg(override(&h, "fast=8-9 slow=0-7", cls, &cl, &err) == 0, "%s", err.msg);
	assert_class(&cl, cls, 6, 0, "fast", "4-5", NULL);
	assert_class(&cl, cls, 6, 1, "slow", "0-3", NULL);
	ovhost_free(&h);
}
END_TEST

START_TEST(test_override_bad)
{
	static const struct {
		const char *spec, *msg;
	} cases[] = {
		{ "performance=0-6 efficient=7-9",
		  "coreClasses.performance: splits core 3 (CPUs 6-7): it has 6 but not 7; list whole cores" },
		{ "performance=0-5 efficient=8-9",
		  "coreClasses: online CPUs 6-7 are in no class" },
		{ "performance=0-7 efficient=7-9",
		  "coreClasses.efficient: CPUs 7 are also in coreClasses.performance" },
		{ "performance=0-9 efficient=16-17",
		  "coreClasses.efficient: CPUs 16-17 do not exist on this host" },
		{ "performance=0-9 efficient=10",
		  "coreClasses.efficient: none of its CPUs is online" },
		{ "performance=0-7 performance=8-9",
		  "coreClasses: class performance is listed twice" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct cc_err err = CC_ERR_INIT;
		struct ovhost h;
		struct cc_classing cl;
		int cls[6];

		ovhost_init(&h);
		ck_assert_int_eq(override(&h, cases[c].spec, cls, &cl, &err), -1);
		ck_assert_str_eq(err.msg, cases[c].msg);
		ck_assert_int_eq(err.code, EINVAL);
		ovhost_free(&h);
	}
}
END_TEST

static Suite *classes_suite(void)
{
	Suite *s = suite_create("classes");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_tiers_threshold);
	tcase_add_test(tc, test_tier_names);
	tcase_add_test(tc, test_core_type_names);
	tcase_add_test(tc, test_turbo_boost_max_base);
	tcase_add_test(tc, test_turbo_boost_max_only_max);
	tcase_add_test(tc, test_desktop_max_spread);
	tcase_add_test(tc, test_arm_near_equal_capacities);
	tcase_add_test(tc, test_four_tiers);
	tcase_add_test(tc, test_partial_metric_falls_through);
	tcase_add_test(tc, test_hybrid_pmu);
	tcase_add_test(tc, test_hybrid_pmu_low_power);
	tcase_add_test(tc, test_hybrid_pmu_incomplete);
	tcase_add_test(tc, test_core_types);
	tcase_add_test(tc, test_unknown_core_type);
	tcase_add_test(tc, test_efficiency_only);
	tcase_add_test(tc, test_uniform);
	tcase_add_test(tc, test_no_cores);
	tcase_add_test(tc, test_override_ok);
	tcase_add_test(tc, test_override_bad);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(classes_suite)
