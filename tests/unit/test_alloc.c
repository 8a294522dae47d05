/* The allocator: exact decisions on small shapes and real fixtures,
 * refusal messages, overrides, determinism.  Policies are built as structs
 * so the tests pin the allocator, not the policy file syntax. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"
#include "testlib.h"

/* ---- helpers ---------------------------------------------------------- */

#define MAX_PCLASSES 16

static struct cc_policy *pol_new(const char *reserved, int min_shared)
{
	struct cc_policy *p = calloc(1, sizeof(*p));
	struct cc_err err = CC_ERR_INIT;

	ck_assert_ptr_nonnull(p);
	snprintf(p->source, sizeof(p->source), "test");
	p->classes = calloc(MAX_PCLASSES, sizeof(*p->classes));
	ck_assert_ptr_nonnull(p->classes);
	p->min_shared = min_shared;
	if (reserved) {
		p->has_reserved = true;
		p->reserved = hwloc_bitmap_alloc();
		ck_assert_int_eq(cc_cpulist_parse(reserved, p->reserved, "reserved", &err), 0);
	}
	return p;
}

static void pol_free(struct cc_policy *p)
{
	if (!p)
		return;
	hwloc_bitmap_free(p->reserved);
	free(p->classes);
	free(p);
}

static struct cc_pclass *pol_add(struct cc_policy *p, const char *name, const char *core_type, enum cc_smt smt)
{
	struct cc_pclass *c;

	ck_assert_int_lt(p->nclasses, MAX_PCLASSES);
	c = &p->classes[p->nclasses++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->core_type, sizeof(c->core_type), "%s", core_type);
	c->smt = smt;
	c->exclusive = true;
	c->memory = CC_MEM_LOCAL;
	c->irq = CC_IRQ_STEER_AWAY;
	c->partition = CC_PART_ISOLATED;
	c->quota = CC_QUOTA_DROP;
	c->align = CC_ALIGN_NONE;
	c->annotation_may_set = CC_REQ_DEFAULT; /* as the parser leaves it */
	return c;
}

/* The classes most tests use. */
static struct cc_policy *std_policy(const char *reserved)
{
	struct cc_policy *p = pol_new(reserved, 1);
	struct cc_pclass *c;

	pol_add(p, "latency", "performance", CC_SMT_ISOLATE);
	pol_add(p, "full", "performance", CC_SMT_FULL);
	c = pol_add(p, "throughput", "efficient", CC_SMT_FULL);
	snprintf(c->fallback, sizeof(c->fallback), "performance");
	c->align = CC_ALIGN_L2;
	c = pol_add(p, "strict", "efficient", CC_SMT_FULL);
	c->align = CC_ALIGN_L2;
	c->strict_clusters = true;
	c = pol_add(p, "shared", "any", CC_SMT_FULL);
	c->exclusive = false;
	c->partition = CC_PART_ROOT;
	c->quota = CC_QUOTA_KEEP;
	c->irq = CC_IRQ_LEAVE;
	pol_add(p, "anycore", "any", CC_SMT_ISOLATE);
	c = pol_add(p, "nofb", "efficient", CC_SMT_FULL);
	c = pol_add(p, "spread", "performance", CC_SMT_ISOLATE);
	c->memory = CC_MEM_SPREAD;
	c = pol_add(p, "anymem", "performance", CC_SMT_ISOLATE);
	c->memory = CC_MEM_ANY;
	return p;
}

static struct cc_topo *load(enum cc_topo_kind kind, const char *root_path, const char *arg,
			    const struct cc_class_override *ov, int nov)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(root_path ? root_path : "/", &err);
	struct cc_topo_source src = { .kind = kind, .arg = arg, .overrides = ov, .noverrides = nov };
	struct cc_topo *t;

	ck_assert_msg(root != NULL, "%s", err.msg);
	src.root = root;
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "loading %s: %s", arg ? arg : root_path, err.msg);
	return t;
}

static struct cc_topo *synth(const char *desc)
{
	return load(CC_TOPO_SYNTHETIC, NULL, desc, NULL, 0);
}

/* A sysfs fixture: the archive's single top directory is the root. */
static struct cc_topo *fixture(const char *dir, const char *file, const char *top)
{
	char path[4096];
	const char *tree = cc_test_fixture_tree(dir, file);

	if (!tree)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", tree, top);
	return load(CC_TOPO_HOST, path, NULL, NULL, 0);
}

#define F03() fixture("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1")
#define F06() fixture("F06-amd-epyc-7451-2s", "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451")
#define F10() fixture("F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve")
#define F11() fixture("F11-arm-X3-A715-A710-A510", "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3")

static struct cc_topo *f05(void)
{
	const char *xml = cc_test_fixture_file("F05-amd-zen5-strixpoint-ryzen-ai9-hx370",
					       "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml");

	return xml ? load(CC_TOPO_XML, NULL, xml, NULL, 0) : NULL;
}

static struct cc_request rq(const char *cls, int cpus)
{
	struct cc_request r;

	memset(&r, 0, sizeof(r));
	snprintf(r.class_name, sizeof(r.class_name), "%s", cls);
	r.cpus = cpus;
	return r;
}

static hwloc_bitmap_t set_of(const char *list)
{
	struct cc_err err = CC_ERR_INIT;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	ck_assert_int_eq(cc_cpulist_parse(list ? list : "", b, "set", &err), 0);
	return b;
}

static void assert_list(hwloc_const_bitmap_t b, const char *want, const char *what, const struct cc_request *r)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	ck_assert_msg(strcmp(s, want) == 0, "%s %d: %s is \"%s\", want \"%s\"", r->class_name, r->cpus, what, s, want);
}

/* Allocate and compare; want_cpus NULL means "must be refused with
 * `code` and a message containing `want_parked`". */
static void expect_req(const struct cc_topo *t, const struct cc_policy *p, const char *taken,
		       const struct cc_request *r, const char *want_cpus, const char *want_parked,
		       const char *want_mems)
{
	_cleanup_bitmap_ hwloc_bitmap_t tk = set_of(taken);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;
	int rc = cc_allocate(t, p, tk, r, &d, &err);

	ck_assert_msg(rc == 0, "%s %d refused: %s", r->class_name, r->cpus, err.msg);
	assert_list(d.cpus, want_cpus, "cpus", r);
	assert_list(d.parked, want_parked, "parked", r);
	if (want_mems)
		assert_list(d.mems, want_mems, "mems", r);
	cc_decision_fini(&d);
}

static void expect(const struct cc_topo *t, const struct cc_policy *p, const char *taken, const char *cls,
		   int cpus, const char *want_cpus, const char *want_parked, const char *want_mems)
{
	struct cc_request r = rq(cls, cpus);

	expect_req(t, p, taken, &r, want_cpus, want_parked, want_mems);
}

static void refuse(const struct cc_topo *t, const struct cc_policy *p, const char *taken, const char *cls,
		   int cpus, int code, const char *fragment)
{
	_cleanup_bitmap_ hwloc_bitmap_t tk = set_of(taken);
	struct cc_request r = rq(cls, cpus);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;
	int rc = cc_allocate(t, p, tk, &r, &d, &err);

	if (rc == 0) {
		_cleanup_free_ char *s = cc_cpulist_format(d.cpus);

		cc_decision_fini(&d);
		ck_abort_msg("%s %d: expected a refusal, got cpus %s", cls, cpus, s);
	}
	ck_assert_int_eq(rc, -1);
	ck_assert_msg(err.code == code, "%s %d: code %d, want %d (%s)", cls, cpus, err.code, code, err.msg);
	ck_assert_msg(strstr(err.msg, fragment) != NULL, "%s %d: \"%s\" lacks \"%s\"", cls, cpus, err.msg, fragment);
	/* The decision is left empty: nothing to free, safe to fini. */
	ck_assert_ptr_null(d.cpus);
	cc_decision_fini(&d);
}

static bool has_warning(const struct cc_decision *d, const char *fragment)
{
	for (int i = 0; i < d->nwarnings; i++)
		if (strstr(d->warnings[i], fragment))
			return true;
	return false;
}

/* ---- small synthetic shapes ------------------------------------------ */

/* 1 package, 4 cores, siblings adjacent (0-1, 2-3, ...); core 0 reserved. */
START_TEST(test_smt_isolate_parks_siblings)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");

	expect(t, p, NULL, "latency", 1, "2", "3", "0");
	expect(t, p, NULL, "latency", 2, "2,4", "3,5", "0");
	expect(t, p, "2-3", "latency", 1, "4", "5", "0");
	refuse(t, p, "2-3", "latency", 2, ENOSPC, "the shared performance pool (4 CPUs) must keep 1 (minShared, for shared): at most 1 core can");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_smt_full_whole_cores)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");

	expect(t, p, NULL, "full", 2, "2-3", "", "0");
	expect(t, p, NULL, "full", 4, "2-5", "", "0");
	refuse(t, p, NULL, "full", 3, EINVAL, "class full: cpus 3 is not a multiple of 2 threads per core; use 2 or 4");
	refuse(t, p, NULL, "full", 1, EINVAL, "cpus 1 is not a multiple of 2 threads per core; use 2");
	refuse(t, p, NULL, "full", 0, EINVAL, "cpus must be at least 1");
	refuse(t, p, NULL, "latency", -3, EINVAL, "cpus must be at least 1");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* Pool 2-7 (6 CPUs) keeps minShared 1: at most 5 CPUs go, so 2 cores
 * under isolate (4 CPUs with the parked siblings). */
START_TEST(test_min_shared)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");

	refuse(t, p, NULL, "latency", 3, ENOSPC,
	       "class latency: 3 whole performance cores requested, 3 free in total (3 at most on one NUMA node), "
	       "but the shared performance pool (6 CPUs) must keep 1 (minShared, for shared): at most 2 cores can be carved; "
	       "refused: ask for at most 2 CPUs, or lower minShared in the policy");
	refuse(t, p, NULL, "full", 6, ENOSPC, "at most 2 cores can be carved");
	p->min_shared = 0;
	expect(t, p, NULL, "latency", 3, "2,4,6", "3,5,7", "0");
	p->min_shared = 3;
	expect(t, p, NULL, "latency", 1, "2", "3", "0");
	refuse(t, p, NULL, "latency", 2, ENOSPC, "must keep 3 (minShared, for shared): at most 1 core can");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_capacity_refusal_names_numbers)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");

	refuse(t, p, "2-3,6", "latency", 2, ENOSPC,
	       "class latency: 2 whole performance cores requested, 1 free in total (1 at most on one NUMA node); "
	       "performance has 4 cores: 1 with reserved CPUs, 2 taken; refused: not enough free whole cores");
	refuse(t, p, "2-7", "latency", 1, ENOSPC, "class latency: 1 whole performance core requested, 0 free in total");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* A core whose sibling is reserved is never carved (no split cores), but
 * its free thread still counts for the shared pool. */
START_TEST(test_partial_reserved_core)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0");

	expect(t, p, NULL, "latency", 3, "2,4,6", "3,5,7", "0");
	refuse(t, p, NULL, "full", 8, ENOSPC, "1 with reserved CPUs");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

static const char *const classes_known = "known: latency, full, throughput, strict, shared, anycore, nofb, spread, anymem";

START_TEST(test_unknown_class_lists_known)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");

	refuse(t, p, NULL, "nope", 1, EINVAL, "unknown placement class \"nope\"");
	refuse(t, p, NULL, "nope", 1, EINVAL, classes_known);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_fallback_warns)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = std_policy("0-1");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("throughput", 2);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	ck_assert_msg(cc_topo_class_index(t, "efficient") < 0, "uniform host must have no efficient class");
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	ck_assert(d.fell_back);
	ck_assert_str_eq(d.core_class, "performance");
	ck_assert_msg(has_warning(&d, "throughput: host has no efficient cores; using performance"), "%s",
		      d.nwarnings ? d.warnings[0] : "no warning");
	assert_list(d.cpus, "2-3", "cpus", &r);
	cc_decision_fini(&d);
	refuse(t, p, NULL, "nofb", 2, EINVAL, "class nofb: host has no efficient cores (host classes: performance) and the class has no fallback");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* Two packages, one NUMA node each, siblings n and n+12; core 0 reserved. */
START_TEST(test_numa_best_fit_and_spill)
{
	struct cc_topo *t = synth("pack:2 numa:1 core:6 pu:2(indexes=2*12:1*2)");
	struct cc_policy *p = std_policy("0,12");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("latency", 8);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	/* Node 0 has 5 free cores, node 1 has 6: the fullest that fits wins. */
	expect(t, p, NULL, "latency", 5, "1-5", "13-17", "0");
	expect(t, p, NULL, "latency", 6, "6-11", "18-23", "1");
	expect(t, p, NULL, "latency", 2, "1-2", "13-14", "0");
	expect(t, p, "1-3,13-15", "latency", 2, "4-5", "16-17", "0");
	expect(t, p, "1-3,13-15", "latency", 3, "6-8", "18-20", "1");
	expect(t, p, NULL, "full", 4, "1-2,13-14", "", "0");
	/* 8 fits on no node: the fuller node is filled, the rest comes from
	 * the other, and the carve says so. */
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	assert_list(d.cpus, "1-8", "cpus", &r);
	assert_list(d.parked, "13-20", "parked", &r);
	assert_list(d.mems, "0-1", "mems", &r);
	ck_assert_int_eq(d.numa_nodes, 2);
	ck_assert_msg(has_warning(&d, "no single NUMA node has 8 free whole performance cores (at most 6); the carve spans nodes 0-1"),
		      "%s", d.nwarnings ? d.warnings[0] : "no warning");
	cc_decision_fini(&d);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* 8 NUMA nodes, 4 per package, 6 cores each, no distance matrix: the
 * second node must come from the same package. */
START_TEST(test_closest_nodes)
{
	struct cc_topo *t = synth("pack:2 numa:4 core:6 pu:2");
	struct cc_policy *p = std_policy("0-1");

	ck_assert_int_eq(t->nnuma, 8);
	expect(t, p, NULL, "latency", 10, "2,4,6,8,10,12,14,16,18,20", "3,5,7,9,11,13,15,17,19,21", "0-1");
	/* Node 1 mostly taken, node 0 has 5: 0 and 2 are the closest pair that
	 * holds 9 with the fewest free cores. */
	expect(t, p, "12-21", "latency", 9, "2,4,6,8,10,24,26,28,30", "3,5,7,9,11,25,27,29,31", "0,2");
	/* Nodes 0 and 4 both have 5 free: together the tightest fit for 10,
	 * but in two packages; distance wins over fit. */
	expect(t, p, "48-49", "latency", 10, "2,4,6,8,10,12,14,16,18,20", "3,5,7,9,11,13,15,17,19,21", "0-1");
	/* Package 0 exhausted: both nodes from package 1. */
	expect(t, p, "2-47", "latency", 7, "48,50,52,54,56,58,60", "49,51,53,55,57,59,61", "4-5");
	expect(t, p, NULL, "spread", 1, "2", "3", "0-7");
	expect(t, p, NULL, "anymem", 1, "2", "3", "0-7");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* 4-way SMT. */
START_TEST(test_smt4)
{
	struct cc_topo *t = synth("pack:2 core:8 pu:4");
	struct cc_policy *p = std_policy("0-3");

	expect(t, p, NULL, "latency", 2, "4,8", "5-7,9-11", "0");
	expect(t, p, NULL, "full", 8, "4-11", "", "0");
	refuse(t, p, NULL, "full", 6, EINVAL, "cpus 6 is not a multiple of 4 threads per core; use 4 or 8");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* A hybrid host made with class overrides: 4 P-cores in one L2, 12 E-cores
 * in three L2 clusters of 4. */
static struct cc_topo *hybrid(void)
{
	struct cc_class_override ov[2];
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t;

	memset(ov, 0, sizeof(ov));
	snprintf(ov[0].name, sizeof(ov[0].name), "performance");
	snprintf(ov[1].name, sizeof(ov[1].name), "efficient");
	ov[0].cpus = hwloc_bitmap_alloc();
	ov[1].cpus = hwloc_bitmap_alloc();
	ck_assert_int_eq(cc_cpulist_parse("0-3", ov[0].cpus, "ov", &err), 0);
	ck_assert_int_eq(cc_cpulist_parse("4-15", ov[1].cpus, "ov", &err), 0);
	t = load(CC_TOPO_SYNTHETIC, NULL, "pack:1 l3:1 l2:4 core:4 pu:1", ov, 2);
	hwloc_bitmap_free(ov[0].cpus);
	hwloc_bitmap_free(ov[1].cpus);
	return t;
}

START_TEST(test_align_l2_clusters)
{
	struct cc_topo *t = hybrid();
	struct cc_policy *p = std_policy("0");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("throughput", 6);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	ck_assert_int_ge(cc_topo_class_index(t, "efficient"), 0);
	expect(t, p, NULL, "throughput", 4, "4-7", "", "0");
	expect(t, p, NULL, "throughput", 8, "4-11", "", "0");
	/* Whole clusters first, even when a partly used one has room. */
	expect(t, p, "4", "throughput", 4, "8-11", "", "0");
	expect(t, p, "4", "strict", 4, "8-11", "", "0");
	/* A remainder goes where it fits tightest. */
	expect(t, p, "4-5", "throughput", 2, "6-7", "", "0");
	/* Not a multiple: fewest clusters, with a warning. */
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	assert_list(d.cpus, "4-9", "cpus", &r);
	ck_assert_int_eq(d.l2s, 2);
	ck_assert_msg(has_warning(&d, "class throughput: 6 cores do not fill whole efficient L2 clusters of 4; using 2 clusters, sharing 1 with others"),
		      "%s", d.nwarnings ? d.warnings[0] : "no warning");
	cc_decision_fini(&d);
	refuse(t, p, NULL, "strict", 6, EINVAL,
	       "class strict: cpus 6 is not a whole number of efficient L2 clusters of 4 cores (strictClusters); use 4 or 8");
	refuse(t, p, NULL, "strict", 3, EINVAL, "use 4");
	refuse(t, p, "4,8,12", "strict", 4, ENOSPC, "0 whole clusters (0 cores) free");
	/* 12 E-cores, minShared 1: never all three clusters. */
	refuse(t, p, NULL, "strict", 12, ENOSPC, "must keep 1 (minShared, for shared)");
	/* Without whole clusters a non-strict class still gets cores. */
	ck_assert_int_eq(hwloc_bitmap_list_sscanf(tk, "4,8,12"), 0);
	r = rq("throughput", 4);
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	assert_list(d.cpus, "5-7,9", "cpus", &r);
	ck_assert_msg(has_warning(&d, "not enough free whole efficient L2 clusters"), "%s",
		      d.nwarnings ? d.warnings[0] : "no warning");
	cc_decision_fini(&d);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_any_class)
{
	struct cc_topo *t = hybrid();
	struct cc_policy *p = std_policy("0");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("anycore", 14);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	/* Each class keeps its highest free core for its shared pool: 2 + 11. */
	expect(t, p, NULL, "anycore", 13, "1-2,4-14", "", "0");
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), -1);
	ck_assert_int_eq(err.code, ENOSPC);
	ck_assert_msg(strstr(err.msg, "2 kept for the shared pools") != NULL, "%s", err.msg);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_shared_class)
{
	struct cc_topo *t = hybrid();
	struct cc_policy *p = std_policy("0");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("shared", 20);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	expect(t, p, "4-7", "shared", 2, "1-3,8-15", "", "0");
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	ck_assert(!d.exclusive);
	ck_assert_int_eq(d.partition, CC_PART_ROOT);
	assert_list(d.cpus, "1-15", "cpus", &r);
	ck_assert_msg(has_warning(&d, "the shared any pool has 15 CPUs, fewer than the 20 requested"), "%s",
		      d.nwarnings ? d.warnings[0] : "no warning");
	cc_decision_fini(&d);
	refuse(t, p, "1-15", "shared", 1, ENOSPC, "class shared: the shared any pool is empty (16 usable any CPUs: 1 reserved, 15 taken by carves)");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_request_overrides)
{
	struct cc_topo *t = synth("pack:2 numa:1 core:6 pu:2(indexes=2*12:1*2)");
	struct cc_policy *p = std_policy("0,12");
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r = rq("latency", 2);
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	r.has_smt = true;
	r.smt = CC_SMT_FULL;
	r.has_memory = true;
	r.memory = CC_MEM_SPREAD;
	r.has_irq = true;
	r.irq = CC_IRQ_LEAVE;
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	ck_assert_int_eq(d.smt, CC_SMT_FULL);
	ck_assert_int_eq(d.memory, CC_MEM_SPREAD);
	ck_assert_int_eq(d.irq, CC_IRQ_LEAVE);
	ck_assert_int_eq(d.partition, CC_PART_ISOLATED);
	ck_assert_str_eq(d.class_name, "latency");
	ck_assert_str_eq(d.core_class, "performance");
	assert_list(d.cpus, "1,13", "cpus", &r);
	assert_list(d.parked, "", "parked", &r);
	assert_list(d.mems, "0-1", "mems", &r);
	cc_decision_fini(&d);
	r.has_smt = false;
	r.has_memory = false;
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), 0);
	ck_assert_int_eq(d.smt, CC_SMT_ISOLATE);
	assert_list(d.mems, "0", "mems", &r);
	cc_decision_fini(&d);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* A request read from an annotation gets only the overrides its class
 * grants (annotationMaySet); the refusal comes before any decision.  The
 * same request written by an operator (corecarve exec, vms) is not held
 * to it. */
START_TEST(test_annotation_overrides)
{
	static const char ann[] = "{class: latency, cpus: 2, smt: full, memory: spread, irq: leave}";
	struct cc_topo *t = synth("pack:2 numa:1 core:6 pu:2(indexes=2*12:1*2)");
	struct cc_policy *p = std_policy("0,12");
	struct cc_pclass *lat = &p->classes[0];
	_cleanup_bitmap_ hwloc_bitmap_t tk = hwloc_bitmap_alloc();
	struct cc_request r;
	struct cc_decision d;
	struct cc_err err = CC_ERR_INIT;

	ck_assert_str_eq(lat->name, "latency");
	ck_assert_int_eq(cc_request_parse_key("corecarve.io/placement.web", ann, strlen(ann), &r, &err), 0);
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), -1);
	ck_assert_int_eq(err.code, EPERM);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement.web: irq, smt: class \"latency\" does not let an "
				  "annotation set irq or smt (policy classes.latency.annotationMaySet); remove them from the "
				  "annotation or add them there");
	ck_assert_ptr_null(d.cpus);
	cc_err_clear(&err);

	/* Granted: the overrides take effect. */
	lat->annotation_may_set = CC_REQ_CPUS | CC_REQ_MEMORY | CC_REQ_IRQ | CC_REQ_SMT;
	ck_assert_msg(cc_allocate(t, p, tk, &r, &d, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(d.smt, CC_SMT_FULL);
	ck_assert_int_eq(d.memory, CC_MEM_SPREAD);
	ck_assert_int_eq(d.irq, CC_IRQ_LEAVE);
	assert_list(d.cpus, "1,13", "cpus", &r);
	assert_list(d.parked, "", "parked", &r);
	assert_list(d.mems, "0-1", "mems", &r);
	cc_decision_fini(&d);

	/* The default grants memory alone: it takes effect, and smt alone is
	 * refused with its own line. */
	lat->annotation_may_set = CC_REQ_DEFAULT;
	r.has_smt = r.has_irq = false;
	ck_assert_msg(cc_allocate(t, p, tk, &r, &d, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(d.smt, CC_SMT_ISOLATE);
	ck_assert_int_eq(d.irq, CC_IRQ_STEER_AWAY);
	assert_list(d.mems, "0-1", "mems", &r);
	cc_decision_fini(&d);
	r.has_smt = true;
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement.web: smt: class \"latency\" does not let an "
				  "annotation set smt (policy classes.latency.annotationMaySet); remove smt from the "
				  "annotation or add it there");
	cc_err_clear(&err);

	/* Not from an annotation: not held to it. */
	r.annotation[0] = '\0';
	r.has_irq = true;
	ck_assert_msg(cc_allocate(t, p, tk, &r, &d, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(d.smt, CC_SMT_FULL);
	ck_assert_int_eq(d.irq, CC_IRQ_LEAVE);
	cc_decision_fini(&d);

	/* An unknown class is still named as such, not as a permission. */
	ck_assert_int_eq(cc_request_parse("{class: nope, cpus: 1, irq: leave}", 34, &r, &err), 0);
	ck_assert_int_eq(cc_allocate(t, p, tk, &r, &d, &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown placement class \"nope\""));
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_deterministic)
{
	struct cc_topo *t = synth("pack:2 numa:4 core:6 pu:2");
	struct cc_policy *p = std_policy("0-1");
	_cleanup_bitmap_ hwloc_bitmap_t tk = set_of("14-15,30-33,62");

	for (int n = 1; n <= 20; n++) {
		struct cc_request r = rq(n % 2 ? "latency" : "full", n % 2 ? n : 2 * n);
		struct cc_decision a, b;
		struct cc_err ea = CC_ERR_INIT, eb = CC_ERR_INIT;
		int ra = cc_allocate(t, p, tk, &r, &a, &ea), rb = cc_allocate(t, p, tk, &r, &b, &eb);

		ck_assert_int_eq(ra, rb);
		if (ra == 0) {
			ck_assert(hwloc_bitmap_isequal(a.cpus, b.cpus));
			ck_assert(hwloc_bitmap_isequal(a.parked, b.parked));
			ck_assert(hwloc_bitmap_isequal(a.mems, b.mems));
			cc_decision_fini(&a);
			cc_decision_fini(&b);
		} else {
			ck_assert_str_eq(ea.msg, eb.msg);
		}
	}
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* ---- real fixtures (default reserved rule) ---------------------------- */

START_TEST(test_f03_hybrid)
{
	struct cc_topo *t = F03();
	struct cc_policy *p;

	if (!t)
		return;
	p = std_policy(NULL);
	/* E-core 8, the first of the most plentiful class, is reserved by the
	 * default rule; "shared" (any) keeps 1 CPU in every class's pool. */
	expect(t, p, NULL, "latency", 1, "0", "1", "0");
	expect(t, p, NULL, "latency", 2, "0,2", "1,3", "0");
	expect(t, p, NULL, "latency", 3, "0,2,4", "1,3,5", "0");
	refuse(t, p, NULL, "latency", 4, ENOSPC, "at most 3 cores can be carved");
	expect(t, p, NULL, "full", 4, "0-3", "", "0");
	/* E-cores: no SMT, two L2 clusters of 4; 8-11 holds the reserved 8. */
	expect(t, p, NULL, "throughput", 4, "12-15", "", "0");
	/* With 12-15 carved, the first cluster's 3 would empty the shared pool. */
	refuse(t, p, "12-15", "throughput", 3, ENOSPC, "must keep 1 (minShared, for shared): at most 2 cores can be carved");
	expect(t, p, "12", "throughput", 2, "9-10", "", "0");
	expect(t, p, "9-10", "throughput", 1, "11", "", "0");
	expect(t, p, NULL, "throughput", 3, "9-11", "", "0");
	expect(t, p, NULL, "throughput", 6, "9-14", "", "0");
	refuse(t, p, NULL, "throughput", 7, ENOSPC, "the shared efficient pool (7 CPUs) must keep 1 (minShared, for shared)");
	refuse(t, p, NULL, "strict", 6, EINVAL, "efficient L2 clusters of 4 cores (strictClusters); use 4 or 8");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_f05_xml)
{
	struct cc_topo *t = f05();
	struct cc_policy *p;

	if (!t)
		return;
	p = std_policy(NULL);
	/* P-cores 0-3 (siblings 12-15); E-cores 4-11 (16-23), E-core 4 (4,16)
	 * reserved: the most plentiful class. */
	expect(t, p, NULL, "latency", 2, "0-1", "12-13", NULL);
	expect(t, p, NULL, "full", 2, "0,12", "", NULL);
	expect(t, p, NULL, "throughput", 4, "5-6,17-18", "", NULL);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_f06_epyc)
{
	struct cc_topo *t = F06();
	struct cc_policy *p;

	if (!t)
		return;
	p = std_policy(NULL);
	/* Node 0 = 0-5,48-53, two CCXs of 3 cores; core 0 reserved.  Best fit:
	 * the CCX with 2 free for 2, the untouched CCX for 3. */
	expect(t, p, NULL, "latency", 2, "1-2", "49-50", "0");
	expect(t, p, NULL, "latency", 3, "3-5", "51-53", "0");
	expect(t, p, NULL, "latency", 5, "1-5", "49-53", "0");
	expect(t, p, NULL, "latency", 6, "6-11", "54-59", "1");
	/* Node 0 full: node 4 (5 free, its first core reserved) is the
	 * tightest fit, across its two CCXs (2 + 2). */
	expect(t, p, "1-5,49-53", "latency", 4, "25-28", "73-76", "4");
	expect(t, p, NULL, "full", 6, "3-5,51-53", "", "0");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_f10_xeon)
{
	struct cc_topo *t = F10();
	struct cc_policy *p;

	if (!t)
		return;
	p = std_policy(NULL);
	/* Nodes 0-7,16-23 and 8-15,24-31; the first core of each package is
	 * reserved (0,16 and 8,24). */
	expect(t, p, NULL, "latency", 7, "1-7", "17-23", "0");
	expect(t, p, NULL, "latency", 8, "1-7,9", "17-23,25", "0-1");
	expect(t, p, "1-3,17-19", "latency", 4, "4-7", "20-23", "0");
	expect(t, p, "1-3,17-19", "latency", 5, "9-13", "25-29", "1");
	expect(t, p, NULL, "full", 4, "1-2,17-18", "", "0");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_f11_three_tiers)
{
	struct cc_topo *t = F11();
	struct cc_policy *p;
	struct cc_pclass *c;

	if (!t)
		return;
	p = std_policy(NULL);
	c = pol_add(p, "mid", "mid", CC_SMT_ISOLATE);
	(void)c;
	/* PU 7 (X3) is the only performance core; the default rule reserves
	 * PU 3, the first of the four mid cores, instead.  "shared" (any)
	 * keeps 1 CPU in every class's pool, so the X3 is carvable only
	 * with minShared 0: see test_f11_default_policy for the embedded
	 * default, whose shared class runs on the efficient cores. */
	refuse(t, p, NULL, "latency", 1, ENOSPC, "must keep 1 (minShared, for shared)");
	expect(t, p, NULL, "mid", 2, "4-5", "", NULL);
	refuse(t, p, NULL, "mid", 3, ENOSPC, "must keep 1 (minShared, for shared)");
	expect(t, p, NULL, "throughput", 2, "1-2", "", NULL);
	p->min_shared = 0;
	expect(t, p, NULL, "latency", 1, "7", "", NULL);
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* The README's example, {class: latency, cpus: 4}, under the embedded
 * default policy on the common hybrid shapes: the default rule reserves
 * an E-core and no shared class runs on the P-cores, so all four P-cores
 * (with their siblings parked) can be carved. */
START_TEST(test_readme_example_hybrid)
{
	static const char *const shapes[] = {
		"pack:1 core:14 pu:2 | performance=0-11 efficient=12-27", /* 6P+8E */
		"pack:1 core:24 pu:2 | performance=0-15 efficient=16-47", /* 8P+16E */
	};
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *def = cc_policy_default(&err);
	struct cc_topo *t;

	ck_assert_msg(def != NULL, "%s", err.msg);
	if ((t = F03())) {
		expect(t, def, NULL, "latency", 4, "0,2,4,6", "1,3,5,7", "0");
		/* The E pool keeps 1 CPU for background: 8 E-cores, 1 reserved. */
		expect(t, def, NULL, "throughput", 6, "9-14", "", "0");
		refuse(t, def, NULL, "throughput", 7, ENOSPC, "(minShared, for background)");
		cc_topo_free(t);
	}
	if ((t = f05())) {
		expect(t, def, NULL, "latency", 4, "0-3", "12-15", NULL);
		cc_topo_free(t);
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		t = synth(shapes[i]);
		expect(t, def, NULL, "latency", 4, "0,2,4,6", "1,3,5,7", "0");
		cc_topo_free(t);
	}
	/* 2P+8E (a U-series laptop) has two P-cores: the refusal says how many fit. */
	t = synth("pack:1 core:10 pu:1 | performance=0-1 efficient=2-9");
	refuse(t, def, NULL, "latency", 4, ENOSPC, "4 whole performance cores requested, 2 free in total");
	expect(t, def, NULL, "latency", 2, "0-1", "", "0");
	cc_topo_free(t);
	cc_policy_free(def);
}
END_TEST

/* F11 under the embedded default: the one X3 core is carvable now (the
 * reserved core is a mid one, and background shares the A510s). */
START_TEST(test_f11_default_policy)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *def = cc_policy_default(&err);
	struct cc_topo *t = F11();

	ck_assert_msg(def != NULL, "%s", err.msg);
	if (t) {
		expect(t, def, NULL, "latency", 1, "7", "", NULL);
		refuse(t, def, NULL, "latency", 2, ENOSPC, "2 whole performance cores requested, 1 free in total");
		cc_topo_free(t);
	}
	cc_policy_free(def);
}
END_TEST

/* Without a shared class minShared still keeps the node's unreserved CPUs:
 * reserved "" on 1x4x2, minShared 2, so three of the four cores at most. */
START_TEST(test_min_shared_node)
{
	struct cc_topo *t = synth("pack:1 core:4 pu:2");
	struct cc_policy *p = pol_new("", 2);

	pol_add(p, "latency", "performance", CC_SMT_ISOLATE);
	expect(t, p, NULL, "latency", 3, "0,2,4", "1,3,5", "0");
	refuse(t, p, NULL, "latency", 4, ENOSPC,
	       "but the node's unreserved shared CPUs (8) must keep 2 (minShared): at most 3 cores can be carved; "
	       "refused: ask for at most 3 CPUs, or lower minShared in the policy");
	refuse(t, p, "0-5", "latency", 1, ENOSPC, "at most 0 cores can be carved; refused: wait for a carve to go, or lower minShared in the policy");
	p->min_shared = 0;
	expect(t, p, NULL, "latency", 4, "0,2,4,6", "1,3,5,7", "0");
	pol_free(p);
	cc_topo_free(t);
}
END_TEST

/* ---- corecarve plan --------------------------------------------------- */

/* Run `corecarve plan ARGS` with the embedded default policy and no state
 * directory from the environment; stdout and stderr apart.  -1: skipped. */
static int run_plan(const char *args, char **out, char **errout)
{
	const char *bin = cc_test_bin("plan CLI tests");
	char dir[] = "/tmp/cc-plan-XXXXXX", o[64], e[64];
	_cleanup_free_ char *cmd = NULL;
	int st;

	if (!bin)
		return -1;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	ck_assert_int_ge(asprintf(&cmd, "CORECARVE_POLICY= CORECARVE_STATE_DIR= '%s' plan %s >'%s' 2>'%s'", bin, args, o, e), 0);
	st = system(cmd);
	*out = cc_test_slurp(o);
	*errout = cc_test_slurp(e);
	unlink(o);
	unlink(e);
	rmdir(dir);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *json_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	ck_assert_msg(v != NULL, "no string \"%s\"", key);
	return v;
}

START_TEST(test_plan_json)
{
	_cleanup_free_ char *out = NULL, *errout = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t je;
	int rc = run_plan("--class latency --cpus 5 --synthetic 'pack:2 numa:1 core:6 pu:2(indexes=2*12:1*2)' --json", &out, &errout);

	if (rc < 0)
		return;
	ck_assert_msg(rc == 0, "exit %d: %s", rc, errout);
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "%s: %s", je.text, out);
	ck_assert_str_eq(json_str(j, "class"), "latency");
	ck_assert_str_eq(json_str(j, "core_class"), "performance");
	ck_assert_str_eq(json_str(j, "cpus"), "1-5");
	ck_assert_str_eq(json_str(j, "parked"), "13-17");
	ck_assert_str_eq(json_str(j, "mems"), "0");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "numa_nodes")), 1);
	ck_assert(json_is_integer(json_object_get(j, "llcs")));
	ck_assert(json_is_integer(json_object_get(j, "l2s")));
	ck_assert(json_is_array(json_object_get(j, "warnings")));
	ck_assert_str_eq(json_str(j, "reserved"), "0,6,12,18");
}
END_TEST

START_TEST(test_plan_text_and_fallback)
{
	_cleanup_free_ char *out = NULL, *errout = NULL;
	int rc = run_plan("--class throughput --cpus 2 --synthetic 'pack:1 core:4 pu:2'", &out, &errout);

	if (rc < 0)
		return;
	ck_assert_msg(rc == 0, "exit %d: %s", rc, errout);
	ck_assert_msg(strstr(out, "\ncpus      2-3\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\nwarning   throughput: host has no efficient cores; using performance") != NULL, "%s", out);
	/* Where the reserved set comes from, and what minShared keeps. */
	ck_assert_msg(strstr(out, "\nreserved  0-1 (the default rule: the first core of performance, the most plentiful core "
				  "class, in each package") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\nminShared 1 kept in the performance pool for background\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "nothing was changed") != NULL, "%s", out);
}
END_TEST

START_TEST(test_plan_refusals)
{
	static const struct {
		const char *args;
		int rc;
		const char *msg; /* start of the error */
	} cases[] = {
		{ "--class latency --cpus 4 --synthetic 'pack:1 core:4 pu:2' --json", 1, "class latency: 4 whole performance cores requested, 3 free" },
		{ "--class throughput --cpus 3 --synthetic 'pack:1 core:4 pu:2' --json", 2, "class throughput: cpus 3 is not a multiple of 2 threads per core; use 2 or 4" },
		{ "--class nope --cpus 1 --synthetic 'pack:1 core:4 pu:2' --json", 2, "unknown placement class \"nope\" (known: latency, throughput" },
		/* The overrides are the annotation's keys: the hook's refusal, word for word. */
		{ "--class latency --cpus 1 --irq leave --synthetic 'pack:1 core:4 pu:2' --json", 2,
		  "annotation corecarve.io/placement: irq: class \"latency\" does not let an annotation set irq (policy "
		  "classes.latency.annotationMaySet); remove irq from the annotation or add it there" },
		{ "--class throughput --cpus 2 --smt=isolate --irq steer-away --synthetic 'pack:1 core:4 pu:2' --json", 2,
		  "annotation corecarve.io/placement: irq, smt: class \"throughput\" does not let an annotation set irq or smt "
		  "(policy classes.throughput.annotationMaySet); remove them from the annotation or add them there" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL, *errout = NULL, *line = NULL;
		_cleanup_json_ json_t *j = NULL;
		json_error_t je;
		int rc = run_plan(cases[i].args, &out, &errout);

		if (rc < 0)
			return;
		ck_assert_msg(rc == cases[i].rc, "%s: exit %d, want %d", cases[i].args, rc, cases[i].rc);
		j = json_loads(out, 0, &je);
		ck_assert_msg(j != NULL, "%s: stdout is not JSON: %s", cases[i].args, out);
		ck_assert_msg(strncmp(json_str(j, "error"), cases[i].msg, strlen(cases[i].msg)) == 0, "%s", json_str(j, "error"));
		ck_assert_int_ge(asprintf(&line, "corecarve: %s\n", json_str(j, "error")), 0);
		ck_assert_str_eq(errout, line);
	}
}
END_TEST

/* A class that grants irq and smt takes them from plan as from the hook. */
START_TEST(test_plan_granted_override)
{
	_cleanup_free_ char *pol = cc_test_write_tmp("classes:\n  latency:\n    coreType: performance\n"
						     "    irq: steer-away\n    annotationMaySet: [cpus, irq, smt]\n");
	_cleanup_free_ char *out = NULL, *errout = NULL, *args = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t je;
	int rc;

	ck_assert_ptr_nonnull(pol);
	ck_assert_int_ge(asprintf(&args, "--class latency --cpus 2 --irq leave --smt full --policy '%s' "
					 "--synthetic 'pack:1 core:4 pu:2' --json", pol), 0);
	rc = run_plan(args, &out, &errout);
	if (rc < 0) {
		unlink(pol);
		return;
	}
	ck_assert_msg(rc == 0, "exit %d: %s", rc, errout);
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "stdout is not JSON: %s", out);
	ck_assert_str_eq(json_str(j, "irq"), "leave");
	ck_assert_str_eq(json_str(j, "smt"), "full");
	/* memory is not granted here. */
	free(out);
	free(errout);
	free(args);
	ck_assert_int_ge(asprintf(&args, "--class latency --cpus 2 --memory any --policy '%s' "
					 "--synthetic 'pack:1 core:4 pu:2'", pol), 0);
	rc = run_plan(args, &out, &errout);
	unlink(pol);
	ck_assert_int_eq(rc, 2);
	ck_assert_str_eq(out, "");
	ck_assert_str_eq(errout, "corecarve: annotation corecarve.io/placement: memory: class \"latency\" does not let an "
				 "annotation set memory (policy classes.latency.annotationMaySet); remove memory from the "
				 "annotation or add it there\n");
}
END_TEST

START_TEST(test_plan_bad_input)
{
	static const struct {
		const char *args;
		const char *err;
	} cases[] = {
		{ "--class latency", "corecarve: plan: --class and --cpus are required" },
		{ "--class latency --cpus two --synthetic 'pack:1 core:4 pu:2'", "corecarve: --cpus: expected a non-negative integer, got \"two\"" },
		{ "--class latency --cpus 1 --smt half --synthetic 'pack:1 core:4 pu:2'", "corecarve: --smt: expected one of isolate, full, got \"half\"" },
		{ "--class latency --cpus 1 --bogus", "corecarve: plan: unexpected argument \"--bogus\"" },
		{ "--class latency --cpus 1 --synthetic 'pack:1 core:4 pu:2' --root /", "corecarve: --root, --hwloc-xml and --synthetic exclude each other" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL, *errout = NULL;
		int rc = run_plan(cases[i].args, &out, &errout);

		if (rc < 0)
			return;
		ck_assert_msg(rc == 2, "%s: exit %d", cases[i].args, rc);
		ck_assert_str_eq(out, "");
		ck_assert_msg(strncmp(errout, cases[i].err, strlen(cases[i].err)) == 0, "%s: %s", cases[i].args, errout);
	}
}
END_TEST

/* CPUs recorded in the ledger at --state are taken. */
START_TEST(test_plan_reads_ledger)
{
	char dir[] = "/tmp/cc-plan-state-XXXXXX";
	_cleanup_free_ char *out = NULL, *errout = NULL, *args = NULL, *cmd = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve c;
	json_error_t je;
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0700), 0);
	l = cc_ledger_open(dir, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "ctr1");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.class_name, sizeof(c.class_name), "latency");
	snprintf(c.core_class, sizeof(c.core_class), "performance");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set(c.cpus, 2);
	hwloc_bitmap_set(c.parked, 3);
	hwloc_bitmap_set(c.mems, 0);
	c.exclusive = true;
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0 && cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	cc_ledger_close(l);

	ck_assert_int_ge(asprintf(&args, "--class latency --cpus 1 --synthetic 'pack:1 core:4 pu:2' --state '%s' --json", dir), 0);
	rc = run_plan(args, &out, &errout);
	ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
	ck_assert_int_eq(system(cmd), 0);
	if (rc < 0)
		return;
	ck_assert_msg(rc == 0, "exit %d: %s", rc, errout);
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "%s", out);
	ck_assert_str_eq(json_str(j, "taken"), "2-3");
	ck_assert_str_eq(json_str(j, "cpus"), "4");
	ck_assert_str_eq(json_str(j, "parked"), "5");
}
END_TEST

static Suite *alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *shapes = tcase_create("shapes"), *fixtures = tcase_create("fixtures"), *cli = tcase_create("cli");

	tcase_add_test(shapes, test_smt_isolate_parks_siblings);
	tcase_add_test(shapes, test_smt_full_whole_cores);
	tcase_add_test(shapes, test_min_shared);
	tcase_add_test(shapes, test_min_shared_node);
	tcase_add_test(shapes, test_capacity_refusal_names_numbers);
	tcase_add_test(shapes, test_partial_reserved_core);
	tcase_add_test(shapes, test_unknown_class_lists_known);
	tcase_add_test(shapes, test_fallback_warns);
	tcase_add_test(shapes, test_numa_best_fit_and_spill);
	tcase_add_test(shapes, test_closest_nodes);
	tcase_add_test(shapes, test_smt4);
	tcase_add_test(shapes, test_align_l2_clusters);
	tcase_add_test(shapes, test_any_class);
	tcase_add_test(shapes, test_shared_class);
	tcase_add_test(shapes, test_request_overrides);
	tcase_add_test(shapes, test_annotation_overrides);
	tcase_add_test(shapes, test_deterministic);
	suite_add_tcase(s, shapes);
	tcase_add_test(fixtures, test_f03_hybrid);
	tcase_add_test(fixtures, test_f05_xml);
	tcase_add_test(fixtures, test_f06_epyc);
	tcase_add_test(fixtures, test_f10_xeon);
	tcase_add_test(fixtures, test_f11_three_tiers);
	tcase_add_test(fixtures, test_f11_default_policy);
	tcase_add_test(fixtures, test_readme_example_hybrid);
	tcase_set_timeout(fixtures, 30);
	suite_add_tcase(s, fixtures);
	tcase_add_test(cli, test_plan_json);
	tcase_add_test(cli, test_plan_text_and_fallback);
	tcase_add_test(cli, test_plan_refusals);
	tcase_add_test(cli, test_plan_bad_input);
	tcase_add_test(cli, test_plan_granted_override);
	tcase_add_test(cli, test_plan_reads_ledger);
	tcase_set_timeout(cli, 30);
	suite_add_tcase(s, cli);
	return s;
}

CC_TEST_MAIN(alloc_suite)
