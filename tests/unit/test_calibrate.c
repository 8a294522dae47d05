/* corecarve calibrate: the pairs chosen on every real-machine fixture and
 * on synthetic shapes (plugin/report/calibrate_plan.c), the baseline file's round
 * trip and its bad inputs (baseline.c), the comparison and doctor's
 * verdicts (doctor_baseline.c), plan --explain's lines
 * (calibrate_explain.c), and the CLI, one short real measurement on this
 * host included. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibrate.h"
#include "cleanup.h"
#include "cpulist.h"
#include "doctor_baseline.h"
#include "testlib.h"

#define F03 "F03-intel-alderlake-p-4P8E"
#define F05 "F05-amd-zen5-strixpoint-ryzen-ai9-hx370"
#define F06 "F06-amd-epyc-7451-2s"
#define F10 "F10-intel-xeon-silver-4108-2s"
#define F11 "F11-arm-X3-A715-A710-A510"

/* ---- topologies ----------------------------------------------------------- */

static struct cc_topo *load(enum cc_topo_kind kind, const char *arg)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(kind == CC_TOPO_HOST ? arg : "/", &err);
	struct cc_topo_source src = { .kind = kind, .root = root, .arg = kind == CC_TOPO_HOST ? NULL : arg };
	struct cc_topo *t;

	ck_assert_msg(root != NULL, "%s: %s", arg, err.msg);
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "%s: %s", arg, err.msg);
	return t;
}

/* A fixture's sysfs tree (the tarball's one top directory), or NULL
 * (skipped loudly by testlib). */
static struct cc_topo *fixture(const char *dir, const char *tarball, const char *top)
{
	const char *tree = cc_test_fixture_tree(dir, tarball);
	char path[PATH_MAX];

	if (!tree)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", tree, top);
	return load(CC_TOPO_HOST, path);
}

/* The pairs as one line: "smt=0,1 l2=- ..." ("-" for an absent relation),
 * every present pair checked to stand at its relation. */
static void pairs_line(const struct cc_topo *t, char *buf, size_t n)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_calib_plan p;
	size_t off = 0;

	ck_assert_msg(cc_calib_plan(t, NULL, &p, &err) == 0, "%s", err.msg);
	buf[0] = '\0';
	for (int r = 0; r < CC_REL_N; r++) {
		const struct cc_calib_pair *pr = &p.pairs[r];

		ck_assert_int_eq(pr->rel, r);
		ck_assert_msg(pr->what[0], "%s: no text", cc_rel_name(pr->rel));
		if (pr->present) {
			off += (size_t)snprintf(buf + off, n - off, "%s%s=%d,%d", r ? " " : "", cc_rel_name(pr->rel), pr->a,
						pr->b);
			if (r != CC_REL_CLASS)
				ck_assert_int_eq(cc_calib_relation(t, pr->a, pr->b), r);
			else
				ck_assert_int_ne(t->pus[cc_topo_pu_index(t, pr->a)].cls, t->pus[cc_topo_pu_index(t, pr->b)].cls);
		} else {
			off += (size_t)snprintf(buf + off, n - off, "%s%s=-", r ? " " : "", cc_rel_name(pr->rel));
		}
	}
	ck_assert_uint_ge(p.mem_bytes, 8ull << 20);
}

static void expect_pairs(struct cc_topo *t, const char *want)
{
	char got[512];

	pairs_line(t, got, sizeof(got));
	ck_assert_str_eq(got, want);
	cc_topo_free(t);
}

static const char *absent_reason(struct cc_topo *t, enum cc_rel r)
{
	struct cc_err err = CC_ERR_INIT;
	static struct cc_calib_plan p;

	ck_assert_int_eq(cc_calib_plan(t, NULL, &p, &err), 0);
	ck_assert(!p.pairs[r].present);
	return p.pairs[r].what;
}

/* ---- pairs on the fixtures ---------------------------------------------- */

START_TEST(test_pairs_f03_hybrid)
{
	struct cc_topo *t = fixture(F03, "test-data-sample1.tar.xz", "sample1");

	if (!t)
		return;
	/* P-cores have private L2s, so the L2 pair is two E-cores of one
	 * cluster; P vs E is the first of each. */
	ck_assert_str_eq(absent_reason(t, CC_REL_NUMA), "one NUMA node");
	expect_pairs(t, "smt=0,1 l2=8,9 l3=0,2 l3x=- numa=- package=- class=0,8");
}
END_TEST

START_TEST(test_pairs_f05_zen5_xml)
{
	const char *xml = cc_test_fixture_file(F05, "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml");

	if (!xml)
		return;
	/* Two L3s, one per class: the l3x pair crosses classes. */
	expect_pairs(load(CC_TOPO_XML, xml), "smt=0,12 l2=- l3=0,1 l3x=0,4 numa=- package=- class=0,4");
}
END_TEST

START_TEST(test_pairs_f06_epyc)
{
	struct cc_topo *t = fixture(F06, "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451");

	if (!t)
		return;
	/* 3 cores per CCX, 2 CCXs per NUMA node, 4 NUMA nodes per package. */
	ck_assert_str_eq(absent_reason(t, CC_REL_CLASS), "one core class");
	expect_pairs(t, "smt=0,48 l2=- l3=0,1 l3x=0,3 numa=0,6 package=0,24 class=-");
}
END_TEST

START_TEST(test_pairs_f10_xeon)
{
	struct cc_topo *t = fixture(F10, "32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve");

	if (!t)
		return;
	/* One NUMA node per package: the cross-node pair is the package pair. */
	ck_assert_str_eq(absent_reason(t, CC_REL_NUMA), "no package holds two NUMA nodes with usable cores");
	ck_assert_str_eq(absent_reason(t, CC_REL_L2), "no L2 is shared by two usable cores");
	expect_pairs(t, "smt=0,16 l2=- l3=0,1 l3x=- numa=- package=0,8 class=-");
}
END_TEST

START_TEST(test_pairs_f11_arm)
{
	struct cc_topo *t = fixture(F11, "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3");

	if (!t)
		return;
	/* The X3 is alone in its class; the L3 pair is two middle cores; class
	 * pairs the X3 with the first A510. */
	ck_assert_str_eq(absent_reason(t, CC_REL_SMT), "no core has two usable CPUs (no SMT, or SMT is off)");
	expect_pairs(t, "smt=- l2=1,2 l3=3,4 l3x=- numa=- package=- class=7,0");
}
END_TEST

START_TEST(test_pairs_synthetic)
{
	expect_pairs(load(CC_TOPO_SYNTHETIC, "pack:2 numa:2 l3:2 l2:2 core:2 pu:2"),
		     "smt=0,1 l2=0,2 l3=0,4 l3x=0,8 numa=0,16 package=0,32 class=-");
	expect_pairs(load(CC_TOPO_SYNTHETIC, "pack:1 core:2 pu:1"), "smt=- l2=- l3=- l3x=- numa=- package=- class=-");
}
END_TEST

/* Only the usable CPUs count; fewer than two is an error naming the count. */
START_TEST(test_pairs_usable)
{
	struct cc_topo *t = load(CC_TOPO_SYNTHETIC, "pack:2 l3:1 l2:2 core:1 pu:2");
	_cleanup_bitmap_ hwloc_bitmap_t use = hwloc_bitmap_alloc();
	struct cc_err err = CC_ERR_INIT;
	struct cc_calib_plan p;

	/* CPUs 0 and 2: the two cores of package 0, no SMT pair among them. */
	hwloc_bitmap_set(use, 0);
	hwloc_bitmap_set(use, 2);
	ck_assert_int_eq(cc_calib_plan(t, use, &p, &err), 0);
	ck_assert(!p.pairs[CC_REL_SMT].present);
	ck_assert(!p.pairs[CC_REL_PACKAGE].present);
	ck_assert(p.pairs[CC_REL_L3].present && p.pairs[CC_REL_L3].a == 0 && p.pairs[CC_REL_L3].b == 2);
	hwloc_bitmap_only(use, 5);
	ck_assert_int_eq(cc_calib_plan(t, use, &p, &err), -1);
	ck_assert_msg(strstr(err.msg, "calibrate: 1 usable CPU(s): a pair needs two"), "%s", err.msg);
	cc_topo_free(t);
}
END_TEST

START_TEST(test_relation)
{
	struct cc_topo *t = load(CC_TOPO_SYNTHETIC, "pack:2 numa:2 l3:2 l2:2 core:2 pu:2");

	ck_assert_int_eq(cc_calib_relation(t, 0, 1), CC_REL_SMT);
	ck_assert_int_eq(cc_calib_relation(t, 1, 3), CC_REL_L2);
	ck_assert_int_eq(cc_calib_relation(t, 3, 7), CC_REL_L3);
	ck_assert_int_eq(cc_calib_relation(t, 7, 15), CC_REL_L3X);
	ck_assert_int_eq(cc_calib_relation(t, 0, 31), CC_REL_NUMA);
	ck_assert_int_eq(cc_calib_relation(t, 31, 32), CC_REL_PACKAGE);
	ck_assert_int_eq(cc_calib_relation(t, 3, 3), -1);
	ck_assert_int_eq(cc_calib_relation(t, 3, 999), -1);
	for (int r = 0; r < CC_REL_N; r++)
		ck_assert_int_eq(cc_rel_parse(cc_rel_name((enum cc_rel)r)), r);
	ck_assert_int_eq(cc_rel_parse("L3"), -1);
	cc_topo_free(t);
}
END_TEST

/* ---- the file ------------------------------------------------------------- */

static void sample(struct cc_baseline *b)
{
	memset(b, 0, sizeof(*b));
	b->schema_version = CC_BASELINE_SCHEMA;
	snprintf(b->taken, sizeof(b->taken), "2026-12-01T12:00:00Z");
	snprintf(b->facts.kernel, sizeof(b->facts.kernel), "6.12.9 #1 SMP");
	snprintf(b->facts.microcode, sizeof(b->facts.microcode), "0x2007006");
	snprintf(b->facts.model, sizeof(b->facts.model), "Intel(R) Xeon(R) Silver 4108");
	snprintf(b->facts.governor, sizeof(b->facts.governor), "performance");
	snprintf(b->facts.max_khz, sizeof(b->facts.max_khz), "3000000");
	snprintf(b->facts.smt, sizeof(b->facts.smt), "0");
	snprintf(b->facts.online, sizeof(b->facts.online), "0-31");
	snprintf(b->facts.hwloc, sizeof(b->facts.hwloc), "2.9.0");
	b->rounds = 5;
	b->ms = 200;
	b->mem_bytes = 44ull << 20;
	b->n = 2;
	b->entries[0] = (struct cc_calib_entry){
		.pair = { .rel = CC_REL_SMT, .present = true, .a = 0, .b = 16, .what = "SMT siblings of core 0" },
		.res = { { 1000, 990, 0.91, 0.91, 0.91 }, { 9000, 8900, 0.48, 0.48, 0.48 } },
	};
	b->entries[1] = (struct cc_calib_entry){
		.pair = { .rel = CC_REL_PACKAGE, .present = true, .a = 0, .b = 8, .what = "packages 0 and 1" },
		.res = { { 1000, 1001, 1.0, 1.0, 1.0 }, { 9000, 9100, 0.99, 0.99, 0.99 } },
	};
	b->nskipped = 1;
	b->skipped[0] = (struct cc_calib_pair){ .rel = CC_REL_L2, .what = "no L2 is shared by two usable cores" };
}

static void assert_same(const struct cc_baseline *a, const struct cc_baseline *b)
{
	ck_assert_int_eq(b->schema_version, a->schema_version);
	ck_assert_str_eq(b->taken, a->taken);
	ck_assert_str_eq(b->facts.kernel, a->facts.kernel);
	ck_assert_str_eq(b->facts.microcode, a->facts.microcode);
	ck_assert_str_eq(b->facts.governor, a->facts.governor);
	ck_assert_str_eq(b->facts.smt, a->facts.smt);
	ck_assert_str_eq(b->facts.hwloc, a->facts.hwloc);
	ck_assert_int_eq(b->rounds, a->rounds);
	ck_assert_int_eq(b->ms, a->ms);
	ck_assert_uint_eq(b->mem_bytes, a->mem_bytes);
	ck_assert_int_eq(b->n, a->n);
	for (int i = 0; i < a->n; i++) {
		ck_assert_int_eq(b->entries[i].pair.rel, a->entries[i].pair.rel);
		ck_assert_int_eq(b->entries[i].pair.a, a->entries[i].pair.a);
		ck_assert_int_eq(b->entries[i].pair.b, a->entries[i].pair.b);
		ck_assert_str_eq(b->entries[i].pair.what, a->entries[i].pair.what);
		for (int w = 0; w < CC_WORK_N; w++) {
			ck_assert_double_eq_tol(b->entries[i].res[w].ratio, a->entries[i].res[w].ratio, 1e-6);
			ck_assert_double_eq_tol(b->entries[i].res[w].ratio_b, a->entries[i].res[w].ratio_b, 1e-6);
			ck_assert_double_eq_tol(b->entries[i].res[w].solo_a, a->entries[i].res[w].solo_a, 1e-3);
		}
	}
	ck_assert_int_eq(b->nskipped, a->nskipped);
	ck_assert_int_eq(b->skipped[0].rel, a->skipped[0].rel);
	ck_assert_str_eq(b->skipped[0].what, a->skipped[0].what);
}

START_TEST(test_format_round_trip)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_baseline a, b, c;
	_cleanup_json_ json_t *doc = NULL;
	char dir[] = "/tmp/cc-calib-XXXXXX", path[PATH_MAX], rootpath[PATH_MAX];
	_cleanup_root_ struct cc_root *root = NULL;
	struct stat st;

	sample(&a);
	doc = cc_baseline_json(&a);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "schema_version")), 1);
	ck_assert_int_eq(cc_baseline_parse(doc, "mem", &b, &err), 0);
	assert_same(&a, &b);
	ck_assert_ptr_eq(cc_baseline_entry(&b, CC_REL_PACKAGE), &b.entries[1]);
	ck_assert_ptr_null(cc_baseline_entry(&b, CC_REL_L3));

	/* Written under a root at the default path, creating the parents;
	 * read back from the file and through the root. */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s%s", dir, CC_BASELINE_PATH);
	ck_assert_msg(cc_baseline_write(path, &a, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	ck_assert_msg(cc_baseline_load_file(path, &c, &err) == 0, "%s", err.msg);
	assert_same(&a, &c);
	snprintf(rootpath, sizeof(rootpath), "%s", dir);
	root = cc_root_open(rootpath, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_baseline_load_root(root, CC_BASELINE_PATH, &c, &err) == 0, "%s", err.msg);
	assert_same(&a, &c);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* Each bad document: the field and the reason in one line. */
START_TEST(test_format_bad)
{
	static const struct {
		const char *edit; /* a jq-free edit: text replaced in the sample's JSON */
		const char *with;
		const char *want;
	} cases[] = {
		{ "\"schema_version\": 1", "\"schema_version\": 2", "f: schema_version: expected 1, got 2" },
		{ "\"schema_version\": 1", "\"schema\": 1", "f: schema_version: missing (not a corecarve baseline?)" },
		{ "\"ratio\": 0.91", "\"ratio\": \"fast\"", "f: pairs[0].cpu.ratio: expected a number from 0 to 4" },
		{ "\"ratio\": 0.91", "\"ratio\": -1", "f: pairs[0].cpu.ratio: expected a number from 0 to 4" },
		{ "\"relation\": \"smt\"", "\"relation\": \"core\"", "f: pairs[0].relation: expected smt, l2, l3, l3x, numa, package or class, got core" },
		{ "\"relation\": \"package\"", "\"relation\": \"smt\"", "f: pairs[1].relation: smt appears twice" },
		{ "\"relation\": \"l2\"", "\"relation\": \"smt\"", "f: skipped[0].relation: smt appears twice" },
		{ "\"governor\": \"performance\"", "\"governor\": 7", "f: facts.governor: expected a string" },
		{ "\"rounds\": 5", "\"rounds\": 0", "f: method.rounds: expected a number from 1 to 101" },
		{ "\"taken\"", "\"took\"", "f: taken: expected a string" },
	};
	struct cc_baseline a, b;
	_cleanup_json_ json_t *doc = NULL;
	_cleanup_free_ char *text = NULL;

	sample(&a);
	doc = cc_baseline_json(&a);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		const char *at = strstr(text, cases[i].edit);
		_cleanup_free_ char *bad = NULL;
		_cleanup_json_ json_t *j = NULL;

		ck_assert_msg(at, "case %zu: \"%s\" not in the sample", i, cases[i].edit);
		ck_assert_int_ge(asprintf(&bad, "%.*s%s%s", (int)(at - text), text, cases[i].with, at + strlen(cases[i].edit)), 0);
		j = json_loads(bad, 0, NULL);
		ck_assert_ptr_nonnull(j);
		ck_assert_int_eq(cc_baseline_parse(j, "f", &b, &err), -1);
		ck_assert_msg(strstr(err.msg, cases[i].want), "case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
	/* Not JSON at all: the position. */
	{
		struct cc_err err = CC_ERR_INIT;
		char *p = cc_test_write_tmp("{\"schema_version\": 1,");

		ck_assert_int_eq(cc_baseline_load_file(p, &b, &err), -1);
		ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, ":1:") && strstr(err.msg, "rerun corecarve calibrate"),
			      "%s", err.msg);
		unlink(p);
		free(p);
	}
}
END_TEST

/* ---- the comparison ------------------------------------------------------- */

START_TEST(test_compare_verdicts)
{
	struct cc_calib_tolerance tol = CC_CALIB_TOLERANCE_DEFAULT;
	struct cc_calib_compare c;
	struct cc_baseline old, now;

	sample(&old);
	/* Facts only, as on a captured tree. */
	now = old;
	now.n = 0;
	ck_assert_int_eq(cc_baseline_compare(&old, &now, &tol, &c), 0);
	/* The same numbers within tolerance. */
	now = old;
	now.entries[0].res[CC_WORK_MEM].ratio += 0.09;
	now.entries[0].res[CC_WORK_CPU].solo_a *= 0.9;
	ck_assert_int_eq(cc_baseline_compare(&old, &now, &tol, &c), 0);
	/* SMT back on, another governor, and a lower frequency. */
	now = old;
	now.n = 0;
	snprintf(now.facts.smt, sizeof(now.facts.smt), "1");
	snprintf(now.facts.governor, sizeof(now.facts.governor), "powersave");
	snprintf(now.facts.max_khz, sizeof(now.facts.max_khz), "1800000");
	ck_assert_int_eq(cc_baseline_compare(&old, &now, &tol, &c), 3);
	ck_assert_int_eq(c.changed_facts, 3);
	ck_assert_str_eq(c.findings[0], "SMT was off at calibration and is on now (a BIOS or kernel setting turned it back on)");
	ck_assert_str_eq(c.findings[1], "governor changed: \"performance\" at calibration, \"powersave\" now");
	ck_assert_str_eq(c.findings[2], "max_khz changed: \"3000000\" at calibration, \"1800000\" now");
	/* A ratio that moved, and a slower core alone. */
	now = old;
	now.entries[0].res[CC_WORK_MEM].ratio = 0.70;
	now.entries[1].res[CC_WORK_CPU].solo_a = 700;
	ck_assert_int_eq(cc_baseline_compare(&old, &now, &tol, &c), 2);
	ck_assert_int_eq(c.ratio_moves, 1);
	ck_assert_int_eq(c.slower, 1);
	ck_assert_str_eq(c.findings[0], "smt mem: 0.48x at calibration, 0.70x now (tolerance 0.10)");
	ck_assert_str_eq(c.findings[1],
			 "cpu alone on CPU 0 (package pair): 1000 Mops/s at calibration, 700 now (-30%): a lower core frequency?");
	/* A relation gone (SMT off, the sibling offline) and one new. */
	now = old;
	now.entries[0].pair.rel = CC_REL_L3;
	ck_assert_int_eq(cc_baseline_compare(&old, &now, &tol, &c), 2);
	ck_assert_msg(strstr(c.findings[0], "l3: measurable now") && strstr(c.findings[1], "smt: in the baseline"), "%s | %s",
		      c.findings[0], c.findings[1]);
}
END_TEST

START_TEST(test_doctor_item)
{
	struct cc_baseline old, now;
	struct cc_doctor_item it;

	sample(&old);
	now = old;
	cc_doctor_baseline_item(&old, "/b.json", &now, &it);
	ck_assert_str_eq(it.id, "baseline");
	ck_assert_int_eq(it.status, CC_DOCTOR_OK);
	ck_assert_str_eq(it.found, "/b.json (2026-12-01T12:00:00Z): as calibrated: 2 pairs re-measured within 0.10, facts unchanged");
	now.n = 0;
	cc_doctor_baseline_item(&old, "/b.json", &now, &it);
	ck_assert_int_eq(it.status, CC_DOCTOR_OK);
	ck_assert_msg(strstr(it.found, "facts unchanged (ratios not re-measured: not the host)"), "%s", it.found);
	snprintf(now.facts.smt, sizeof(now.facts.smt), "1");
	cc_doctor_baseline_item(&old, "/b.json", &now, &it);
	ck_assert_int_eq(it.status, CC_DOCTOR_WARN);
	ck_assert_str_eq(it.found, "1 difference from /b.json (2026-12-01T12:00:00Z): SMT was off at calibration and is on "
				   "now (a BIOS or kernel setting turned it back on)");
	ck_assert_msg(strstr(it.fix, "rerun corecarve calibrate") && it.why[0], "%s", it.fix);
}
END_TEST

/* doctor on a captured tree: no line without a baseline, a facts-only line
 * with one, a warning for a broken one. */
START_TEST(test_doctor_root)
{
	struct cc_err err = CC_ERR_INIT;
	char dir[] = "/tmp/cc-calib-XXXXXX", path[PATH_MAX];
	struct cc_baseline b;
	struct cc_doctor_report r = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_doctor_ctx ctx = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	ctx.root = root;
	cc_doctor_baseline(&ctx, &r);
	ck_assert_int_eq(r.n, 0);

	sample(&b);
	/* The tree says nothing of kernel, microcode, ...: every fact changed. */
	snprintf(path, sizeof(path), "%s%s", dir, CC_BASELINE_PATH);
	ck_assert_int_eq(cc_baseline_write(path, &b, &err), 0);
	cc_doctor_baseline(&ctx, &r);
	ck_assert_int_eq(r.n, 1);
	ck_assert_str_eq(r.items[0].id, "baseline");
	ck_assert_int_eq(r.items[0].status, CC_DOCTOR_WARN);
	ck_assert_msg(strstr(r.items[0].found, "governor changed: \"performance\" at calibration, \"(none)\" now"), "%s",
		      r.items[0].found);

	ck_assert_int_eq(cc_test_sh(NULL, "echo '{}' > '%s'", path), 0);
	r.n = 0;
	cc_doctor_baseline(&ctx, &r);
	ck_assert_int_eq(r.n, 1);
	ck_assert_int_eq(r.items[0].status, CC_DOCTOR_WARN);
	ck_assert_str_eq(r.items[0].found, CC_BASELINE_PATH ": schema_version: missing (not a corecarve baseline?)");
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* ---- plan --explain ----------------------------------------------------- */

static char *explain(const struct cc_topo *t, const char *cpus, const char *owned, const struct cc_baseline *b, int *n)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t c = hwloc_bitmap_alloc(), o = hwloc_bitmap_alloc();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(cc_cpulist_parse(cpus, c, "cpus", &err), 0);
	ck_assert_int_eq(cc_cpulist_parse(owned, o, "owned", &err), 0);
	*n = cc_calib_explain(f, t, c, o, b);
	fclose(f);
	return text;
}

START_TEST(test_explain)
{
	struct cc_topo *t = load(CC_TOPO_SYNTHETIC, "pack:2 l3:1 l2:8 core:1 pu:2");
	struct cc_baseline b;
	_cleanup_free_ char *bare = NULL, *measured = NULL, *full = NULL;
	int n;

	/* F10's shape: sibling parked, private L2s, one L3 a package. */
	sample(&b);
	bare = explain(t, "2", "2-3", NULL, &n);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(bare, "  avoided   smt     0 CPUs outside the carve are SMT siblings of its CPUs (1 held by it)\n"
			       "  shared    l3      14 CPUs outside the carve share its L3 (with separate L2s)\n"
			       "  shared    package 16 CPUs outside the carve sit in another package\n");
	measured = explain(t, "2", "2-3", &b, &n);
	ck_assert_int_eq(n, 3);
	ck_assert_msg(strstr(measured, "(1 held by it); measured here: cpu 0.91x, mem 0.48x\n") &&
			      strstr(measured, "its L3 (with separate L2s); not in the baseline\n") &&
			      strstr(measured, "another package; measured here: cpu 1.00x, mem 0.99x\n"),
		      "%s", measured);
	/* smt full: both threads in the carve, nothing foreign on its core. */
	full = explain(t, "0,2", "0-3", &b, &n);
	ck_assert_msg(strstr(full, "avoided   smt     0 CPUs outside the carve are SMT siblings of its CPUs (2 held by it)") &&
			      strstr(full, "shared    l3      12 CPUs"),
		      "%s", full);
	cc_topo_free(t);
}
END_TEST

/* ---- the CLI ---------------------------------------------------------------- */

START_TEST(test_cli_dry_run_json)
{
	const char *bin = cc_test_bin("calibrate CLI tests");
	const char *tree = cc_test_fixture_tree(F10, "32intel64-2p8co2t+8ve.tar.bz2");
	_cleanup_free_ char *out = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_t *pairs;

	if (!bin || !tree)
		return;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' calibrate --dry-run --json --root '%s/32intel64-2p8co2t+8ve' 2>&1", bin, tree), 0);
	j = json_loads(out, 0, NULL);
	ck_assert_msg(j != NULL, "%s", out);
	pairs = json_object_get(j, "pairs");
	ck_assert_int_eq(json_array_size(pairs), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pairs, 0), "relation")), "smt");
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(json_array_get(pairs, 0), "cpus"), 1)), 16);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pairs, 2), "relation")), "package");
	ck_assert_int_eq(json_array_size(json_object_get(j, "skipped")), 4);
}
END_TEST

START_TEST(test_cli_bad_input)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "--rounds 0", "corecarve: --rounds: expected an integer from 1 to 101, got \"0\"\n" },
		{ "--ms 5x", "corecarve: --ms: expected an integer from 1 to 10000, got \"5x\"\n" },
		{ "--rounds", "corecarve: --rounds: missing argument\n" },
		{ "--output ''", "corecarve: --output: empty file name (\"-\" writes nothing)\n" },
		{ "--bogus", "corecarve: calibrate: unexpected argument \"--bogus\" (see corecarve calibrate --help)\n" },
		{ "--synthetic 'pack:1 core:2 pu:1'",
		  "corecarve: calibrate: --hwloc-xml and --synthetic describe no CPUs to measure on; add --dry-run\n" },
		{ "--synthetic 'pack:1 core:1 pu:1' --dry-run",
		  "corecarve: calibrate: 1 usable CPU(s): a pair needs two (run it where the process may use more CPUs, e.g. "
		  "outside a cpuset that holds one)\n" },
	};
	const char *bin = cc_test_bin("calibrate CLI tests");

	if (!bin)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL;

		ck_assert_int_eq(cc_test_sh(&out, "'%s' calibrate %s 2>&1 >/dev/null", bin, cases[i].args), 2);
		ck_assert_str_eq(out, cases[i].want);
	}
}
END_TEST

/* A real, short measurement on this host (any host with two usable CPUs):
 * the file is written, reads back, and holds positive throughputs.  The
 * ratios themselves are this machine's, not asserted. */
START_TEST(test_cli_measure_host)
{
	const char *bin = cc_test_bin("calibrate CLI tests");
	char dir[] = "/tmp/cc-calib-XXXXXX", path[PATH_MAX];
	_cleanup_free_ char *out = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_baseline b;

	if (!bin)
		return;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		cc_test_skip("one CPU online: no pair to measure");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/b.json", dir);
	ck_assert_msg(cc_test_sh(&out, "'%s' calibrate --rounds 1 --ms 10 --output '%s' 2>&1", bin, path) == 0, "%s", out);
	ck_assert_msg(strstr(out, "baseline written to ") && strstr(out, "relation cpus"), "%s", out);
	ck_assert_msg(cc_baseline_load_file(path, &b, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(b.rounds, 1);
	ck_assert_int_eq(b.ms, 10);
	ck_assert_int_ge(b.n, 1);
	ck_assert_int_eq(b.n + b.nskipped, CC_REL_N);
	for (int i = 0; i < b.n; i++)
		for (int w = 0; w < CC_WORK_N; w++) {
			ck_assert(b.entries[i].res[w].solo_a > 0 && b.entries[i].res[w].solo_b > 0);
			ck_assert(b.entries[i].res[w].ratio > 0 && isfinite(b.entries[i].res[w].ratio));
		}
	ck_assert_msg(b.facts.hwloc[0] && b.facts.kernel[0] && b.facts.online[0], "facts: %s / %s", b.facts.hwloc,
		      b.facts.kernel);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* plan --explain: the baseline named by $CORECARVE_BASELINE, the lines
 * after the plan; without one, the counts and where a baseline would be. */
START_TEST(test_cli_plan_explain)
{
	const char *bin = cc_test_bin("calibrate CLI tests");
	char dir[] = "/tmp/cc-calib-XXXXXX", path[PATH_MAX];
	_cleanup_free_ char *out = NULL, *none = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_baseline b;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/b.json", dir);
	sample(&b);
	ck_assert_int_eq(cc_baseline_write(path, &b, &err), 0);
	ck_assert_int_eq(cc_test_sh(&out,
				    "CORECARVE_BASELINE='%s' '%s' plan --class latency --cpus 1 --explain "
				    "--synthetic 'pack:2 l3:1 l2:8 core:1 pu:2' 2>&1",
				    path, bin),
			 0);
	ck_assert_msg(strstr(out, "\ncpus      2\n") && strstr(out, "\nparked    3") &&
			      strstr(out, "(2026-12-01T12:00:00Z, 5 rounds x 200 ms)\n") &&
			      strstr(out, "  avoided   smt     0 CPUs outside the carve are SMT siblings of its CPUs (1 held by it); "
					  "measured here: cpu 0.91x, mem 0.48x\n") &&
			      strstr(out, "  shared    package 16 CPUs outside the carve sit in another package; measured here"),
		      "%s", out);
	ck_assert_int_eq(cc_test_sh(&none, "CORECARVE_BASELINE= '%s' plan --class latency --cpus 1 --explain "
					   "--synthetic 'pack:2 l3:1 l2:8 core:1 pu:2' 2>&1", bin),
			 0);
	ck_assert_msg(strstr(none, "  baseline  none: no baseline for a --hwloc-xml or --synthetic topology") &&
			      strstr(none, "  shared    l3      14 CPUs outside the carve share its L3 (with separate L2s)\n"),
		      "%s", none);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calibrate");
	TCase *pairs = tcase_create("pairs"), *file = tcase_create("file"), *cmp = tcase_create("compare");
	TCase *cli = tcase_create("cli");

	tcase_add_test(pairs, test_pairs_f03_hybrid);
	tcase_add_test(pairs, test_pairs_f05_zen5_xml);
	tcase_add_test(pairs, test_pairs_f06_epyc);
	tcase_add_test(pairs, test_pairs_f10_xeon);
	tcase_add_test(pairs, test_pairs_f11_arm);
	tcase_add_test(pairs, test_pairs_synthetic);
	tcase_add_test(pairs, test_pairs_usable);
	tcase_add_test(pairs, test_relation);
	tcase_add_test(file, test_format_round_trip);
	tcase_add_test(file, test_format_bad);
	tcase_add_test(cmp, test_compare_verdicts);
	tcase_add_test(cmp, test_doctor_item);
	tcase_add_test(cmp, test_doctor_root);
	tcase_add_test(cmp, test_explain);
	tcase_add_test(cli, test_cli_dry_run_json);
	tcase_add_test(cli, test_cli_bad_input);
	tcase_add_test(cli, test_cli_measure_host);
	tcase_add_test(cli, test_cli_plan_explain);
	tcase_set_timeout(cli, 60);
	suite_add_tcase(s, pairs);
	suite_add_tcase(s, file);
	suite_add_tcase(s, cmp);
	suite_add_tcase(s, cli);
	return s;
}

CC_TEST_MAIN(suite)
