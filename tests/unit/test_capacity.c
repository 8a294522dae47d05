/* Capacity per placement class (plugin/alloc/capacity.h): the CPUs of each
 * class's core class by state, and the largest requests the allocator
 * accepts, on the shared fixtures and synthetic shapes, with and without
 * carves; the reasons a class can never carve; the JSON and the
 * Prometheus series. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "audit.h"
#include "capacity.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"
#include "testlib.h"

static struct cc_topo *load(enum cc_topo_kind kind, const char *root_path, const char *arg)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(root_path ? root_path : "/", &err);
	struct cc_topo_source src = { .kind = kind, .arg = arg, .root = root };
	struct cc_topo *t;

	ck_assert_msg(root != NULL, "%s", err.msg);
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "%s: %s", arg ? arg : root_path, err.msg);
	return t;
}

static struct cc_topo *f03(void)
{
	const char *tree = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	char path[4096];

	if (!tree)
		return NULL;
	snprintf(path, sizeof(path), "%s/sample1", tree);
	return load(CC_TOPO_HOST, path, NULL);
}

static struct cc_policy *policy(const char *text)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = text ? cc_policy_parse(text, strlen(text), "p.yaml", &err) : cc_policy_default(&err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	return p;
}

static const struct cc_capacity *find(const struct cc_capacity *c, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return &c[i];
	ck_abort_msg("no class %s", name);
	return NULL;
}

/* total, reserved, carved, parked, free, largest, largest_empty, smallest */
static void expect(const struct cc_capacity *c, int total, int reserved, int carved, int parked, int free_,
		   int largest, int largest_empty, int smallest)
{
	ck_assert_msg(c->total == total && c->reserved == reserved && c->carved == carved && c->parked == parked &&
			      c->free == free_,
		      "%s: %d = %d + %d + %d + %d, want %d = %d + %d + %d + %d", c->name, c->total, c->reserved, c->carved,
		      c->parked, c->free, total, reserved, carved, parked, free_);
	ck_assert_msg(c->largest == largest && c->largest_empty == largest_empty && c->smallest == smallest,
		      "%s: largest %d (empty %d), smallest %d; want %d (%d), %d", c->name, c->largest, c->largest_empty,
		      c->smallest, largest, largest_empty, smallest);
	ck_assert_int_eq(c->total, c->reserved + c->carved + c->parked + c->free);
}

/* An empty ledger in a fresh directory, and one carve added to it. */
static struct cc_ledger *ledger_with(const char *dir, const char *id, const char *cls, const char *cpus,
				     const char *parked)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open(dir, &err);
	struct cc_carve c;

	ck_assert_msg(l != NULL, "%s", err.msg);
	if (!id)
		return l;
	cc_test_carve(&c, id, cpus, parked, false);
	snprintf(c.class_name, sizeof(c.class_name), "%s", cls);
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	return l;
}

/* The README's example on F03 under the embedded default: the four
 * P-cores are free (E-core 8 is reserved), latency fits 4; throughput 6
 * of its 7 (background keeps one); background runs on 7. */
START_TEST(test_f03_default)
{
	struct cc_topo *t = f03();
	_cleanup_policy_ struct cc_policy *p = policy(NULL);
	_cleanup_free_ struct cc_capacity *c = NULL;
	char dir[] = "/tmp/cc-cap-XXXXXX";
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	int n;

	if (!t)
		return;
	ck_assert_int_eq(cc_capacity_compute(t, p, NULL, &c, &n, &err), 0);
	ck_assert_int_eq(n, 4);
	expect(find(c, n, "latency"), 8, 0, 0, 0, 8, 4, 4, 1);
	expect(find(c, n, "throughput"), 8, 1, 0, 0, 7, 6, 6, 1);
	expect(find(c, n, "background"), 8, 1, 0, 0, 7, 7, 7, 1);
	expect(find(c, n, "isolated"), 8, 0, 0, 0, 8, 4, 4, 1);
	ck_assert_str_eq(find(c, n, "latency")->core_class, "performance");
	ck_assert(!find(c, n, "background")->exclusive);
	ck_assert_str_eq(find(c, n, "latency")->never, "");
	free(c);
	c = NULL;

	/* One latency carve on P-cores 0 and 1: what it runs on is carved,
	 * the siblings parked, and latency and isolated share what is left. */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	l = ledger_with(dir, "c1", "latency", "0,2", "1,3");
	ck_assert_int_eq(cc_capacity_compute(t, p, l, &c, &n, &err), 0);
	expect(find(c, n, "latency"), 8, 0, 2, 2, 4, 2, 4, 1);
	expect(find(c, n, "isolated"), 8, 0, 2, 2, 4, 2, 4, 1);
	ck_assert_int_eq(find(c, n, "latency")->carves, 1);
	ck_assert_int_eq(find(c, n, "isolated")->carves, 0);
	expect(find(c, n, "throughput"), 8, 1, 0, 0, 7, 6, 6, 1);
	cc_ledger_close(l);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
	cc_topo_free(t);
}
END_TEST

/* smt: full asks for whole cores: the smallest request is the threads per
 * core, the largest a multiple of it. */
START_TEST(test_smt_full_units)
{
	struct cc_topo *t = load(CC_TOPO_SYNTHETIC, NULL, "pack:1 core:4 pu:2");
	_cleanup_policy_ struct cc_policy *p =
		policy("reserved: \"0-1\"\nminShared: 0\nclasses: {full: {coreType: performance, smt: full}}\n");
	_cleanup_free_ struct cc_capacity *c = NULL;
	struct cc_err err = CC_ERR_INIT;
	int n;

	ck_assert_int_eq(cc_capacity_compute(t, p, NULL, &c, &n, &err), 0);
	expect(&c[0], 8, 2, 0, 0, 6, 6, 6, 2);
	cc_topo_free(t);
}
END_TEST

/* Classes that can never carve, each with its reason and its fix. */
START_TEST(test_never)
{
	static const struct {
		const char *desc, *policy, *cls, *never, *fix;
	} cases[] = {
		{ "pack:1 core:2 pu:1", "reserved: \"0-200\"\nclasses: {latency: {coreType: performance}}\n", "latency",
		  "every one of its 2 performance CPUs is reserved", "take some performance CPUs out of the policy's reserved" },
		{ "pack:1 core:2 pu:1", "classes: {latency: {coreType: performance}, bg: {coreType: any, exclusive: false}}\n",
		  "latency", "its 1 unreserved performance CPU must keep 1 for bg (minShared)",
		  "lower minShared, or reserve fewer performance CPUs, in the policy" },
		{ "pack:1 core:2 pu:1", "reserved: \"\"\nminShared: 2\nclasses: {latency: {coreType: performance}}\n",
		  "latency", "the node's 2 unreserved CPUs must keep 2 (minShared)",
		  "lower minShared, or reserve fewer performance CPUs, in the policy" },
		{ "pack:1 core:2 pu:1", "classes: {e: {coreType: efficient}}\n", "e",
		  "host has no efficient cores (host classes: performance) and the class has no fallback",
		  "give class e a fallback, or a coreType this node has" },
		{ "pack:1 core:2 pu:1", "reserved: \"0-1\"\nclasses: {bg: {coreType: any, exclusive: false}}\n", "bg",
		  "every one of its 2 any CPUs is reserved", "take some any CPUs out of the policy's reserved" },
	};
	struct cc_err err = CC_ERR_INIT;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_topo *t = load(CC_TOPO_SYNTHETIC, NULL, cases[i].desc);
		_cleanup_policy_ struct cc_policy *p = policy(cases[i].policy);
		_cleanup_free_ struct cc_capacity *c = NULL;
		const struct cc_capacity *k;
		int n;

		ck_assert_int_eq(cc_capacity_compute(t, p, NULL, &c, &n, &err), 0);
		k = find(c, n, cases[i].cls);
		ck_assert_msg(!strcmp(k->never, cases[i].never), "case %zu: \"%s\"", i, k->never);
		ck_assert_msg(!strcmp(k->fix, cases[i].fix), "case %zu: \"%s\"", i, k->fix);
		ck_assert_int_eq(k->largest_empty, 0);
		cc_topo_free(t);
	}
}
END_TEST

/* The largest request is the allocator's own answer: one more is refused. */
START_TEST(test_largest_is_the_allocators)
{
	static const char *const shapes[] = { "pack:2 numa:2 core:4 pu:2", "pack:1 core:12 pu:1 | performance=0-3 efficient=4-11",
					      "pack:1 l3:1 l2:3 core:4 pu:1" };
	struct cc_err err = CC_ERR_INIT;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct cc_topo *t = load(CC_TOPO_SYNTHETIC, NULL, shapes[i]);
		_cleanup_policy_ struct cc_policy *p = policy(NULL);
		_cleanup_free_ struct cc_capacity *c = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t none = hwloc_bitmap_alloc();
		int n;

		ck_assert_int_eq(cc_capacity_compute(t, p, NULL, &c, &n, &err), 0);
		for (int k = 0; k < n; k++) {
			struct cc_request r = { .cpus = c[k].largest_empty };
			struct cc_decision d;

			if (!c[k].exclusive || !c[k].largest_empty)
				continue;
			snprintf(r.class_name, sizeof(r.class_name), "%s", c[k].name);
			ck_assert_msg(cc_allocate(t, p, none, &r, &d, &err) == 0, "%s %s %d: %s", shapes[i], c[k].name, r.cpus,
				      err.msg);
			cc_decision_fini(&d);
			r.cpus += c[k].smallest;
			ck_assert_msg(cc_allocate(t, p, none, &r, &d, &err) < 0, "%s %s %d accepted", shapes[i], c[k].name,
				      r.cpus);
			ck_assert_int_eq(err.code, ENOSPC);
			cc_err_clear(&err);
		}
		cc_topo_free(t);
	}
}
END_TEST

START_TEST(test_json_and_metrics)
{
	struct cc_topo *t = load(CC_TOPO_SYNTHETIC, NULL, "pack:1 core:4 pu:2");
	_cleanup_policy_ struct cc_policy *p = policy(NULL);
	_cleanup_free_ struct cc_capacity *c = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *text = NULL;
	struct cc_audit_report none = { 0 };
	struct cc_audit_stats st = { .finished = 1 };
	struct cc_err err = CC_ERR_INIT;
	json_t *o;
	int n, series = 0;

	ck_assert_int_eq(cc_capacity_compute(t, p, NULL, &c, &n, &err), 0);
	ck_assert_ptr_nonnull(j = cc_capacity_json(c, n));
	ck_assert_int_eq((int)json_array_size(j), 4);
	o = json_array_get(j, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "class")), "latency");
	ck_assert_str_eq(json_string_value(json_object_get(o, "core_class")), "performance");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "total")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "reserved")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "free")), 6);
	ck_assert(json_is_integer(json_object_get(o, "largest")));
	ck_assert(json_is_null(json_object_get(o, "never")));

	st.capacity = c;
	st.ncapacity = n;
	ck_assert_ptr_nonnull(text = cc_prom_render(&none, &st, true));
	ck_assert_msg(strstr(text, "\ncorecarve_class_cpus{class=\"latency\",core_class=\"performance\",state=\"total\"} 8\n") &&
			      strstr(text, "\ncorecarve_class_cpus{class=\"latency\",core_class=\"performance\",state=\"free\"} 6\n") &&
			      strstr(text, "\n# TYPE corecarve_class_cpus gauge\n") &&
			      strstr(text, "\ncorecarve_class_largest_request_cpus{class=\"background\"} "),
		      "%s", text);
	for (const char *q = text; (q = strstr(q, "\ncorecarve_class_cpus{")); q++)
		series++;
	ck_assert_int_eq(series, n * CC_CAPACITY_NSTATES);
	cc_topo_free(t);
}
END_TEST

static Suite *capacity_suite(void)
{
	Suite *s = suite_create("capacity");
	TCase *tc = tcase_create("capacity");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_f03_default);
	tcase_add_test(tc, test_smt_full_units);
	tcase_add_test(tc, test_never);
	tcase_add_test(tc, test_largest_is_the_allocators);
	tcase_add_test(tc, test_json_and_metrics);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(capacity_suite)
