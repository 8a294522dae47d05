#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "policy.h"
#include "root.h"
#include "testlib.h"

static char *read_whole(const char *path, size_t *len)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	buf = malloc(1 << 20);
	ck_assert_ptr_nonnull(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	return buf;
}

static char *list_of(hwloc_const_bitmap_t b)
{
	char *s = cc_cpulist_format(b);

	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(test_default_matches_example)
{
	size_t len;
	_cleanup_free_ char *text = read_whole(CC_SOURCE_DIR "/examples/policy-default.yaml", &len);

	ck_assert_uint_eq(len, strlen(cc_policy_default_yaml));
	ck_assert_msg(memcmp(text, cc_policy_default_yaml, len) == 0,
		      "examples/policy-default.yaml and plugin/config/policy_default.c differ");
}
END_TEST

static void assert_class(const struct cc_policy *p, const char *name, const char *core_type,
			 const char *fallback, enum cc_smt smt, bool exclusive, enum cc_memory memory,
			 enum cc_irq irq, enum cc_partition partition, enum cc_quota quota,
			 enum cc_align align, bool strict)
{
	const struct cc_pclass *c = cc_policy_class(p, name);

	ck_assert_msg(c != NULL, "class %s missing", name);
	ck_assert_str_eq(c->name, name);
	ck_assert_str_eq(c->core_type, core_type);
	ck_assert_str_eq(c->fallback, fallback);
	ck_assert_int_eq(c->smt, smt);
	ck_assert_int_eq(c->exclusive, exclusive);
	ck_assert_int_eq(c->memory, memory);
	ck_assert_int_eq(c->irq, irq);
	ck_assert_int_eq(c->partition, partition);
	ck_assert_int_eq(c->quota, quota);
	ck_assert_int_eq(c->align, align);
	ck_assert_int_eq(c->strict_clusters, strict);
}

START_TEST(test_default_policy)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_default(&err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(p->source, "embedded default");
	ck_assert(!p->has_reserved);
	ck_assert_ptr_null(p->reserved);
	ck_assert_int_eq(p->min_shared, 1);
	ck_assert_int_eq(p->noverrides, 0);
	ck_assert_int_eq(p->nclasses, 4);
	assert_class(p, "latency", "performance", "", CC_SMT_ISOLATE, true, CC_MEM_LOCAL,
		     CC_IRQ_STEER_AWAY, CC_PART_ROOT, CC_QUOTA_DROP, CC_ALIGN_NONE, false);
	assert_class(p, "throughput", "efficient", "performance", CC_SMT_FULL, true, CC_MEM_LOCAL,
		     CC_IRQ_LEAVE, CC_PART_ROOT, CC_QUOTA_DROP, CC_ALIGN_L2, false);
	assert_class(p, "background", "efficient", "performance", CC_SMT_FULL, false, CC_MEM_ANY,
		     CC_IRQ_LEAVE, CC_PART_ROOT, CC_QUOTA_KEEP, CC_ALIGN_NONE, false);
	assert_class(p, "isolated", "performance", "", CC_SMT_ISOLATE, true, CC_MEM_LOCAL,
		     CC_IRQ_STEER_AWAY, CC_PART_ISOLATED, CC_QUOTA_DROP, CC_ALIGN_NONE, false);
	ck_assert_ptr_null(cc_policy_class(p, "nope"));
	ck_assert_ptr_null(cc_policy_class(p, NULL));
	ck_assert_str_eq(p->classes[0].name, "latency"); /* document order */
	/* No class lets a pod move the node's IRQs or change SMT. */
	for (int i = 0; i < p->nclasses; i++)
		ck_assert_msg(p->classes[i].annotation_may_set == (CC_REQ_CPUS | CC_REQ_MEMORY), "%s: %#x",
			      p->classes[i].name, p->classes[i].annotation_may_set);
}
END_TEST

START_TEST(test_defaults_of_keys)
{
	static const char text[] = "classes:\n  plain:\n    coreType: any\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(text, strlen(text), "p.yaml", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(p->source, "p.yaml");
	ck_assert_int_eq(p->min_shared, 1);
	assert_class(p, "plain", "any", "", CC_SMT_ISOLATE, true, CC_MEM_LOCAL, CC_IRQ_LEAVE,
		     CC_PART_ROOT, CC_QUOTA_DROP, CC_ALIGN_NONE, false);
	/* Without annotationMaySet: what stays inside the container. */
	ck_assert_uint_eq(cc_policy_class(p, "plain")->annotation_may_set, CC_REQ_CPUS | CC_REQ_MEMORY);
	ck_assert_uint_eq(CC_REQ_DEFAULT, CC_REQ_CPUS | CC_REQ_MEMORY);
}
END_TEST

/* annotationMaySet as written, flow and block, in any order. */
static const struct {
	const char *list; /* the value, after "annotationMaySet:" */
	unsigned bits;
	const char *formatted; /* cc_req_keys_format */
} may_set_cases[] = {
	{ " [cpus, memory]", CC_REQ_CPUS | CC_REQ_MEMORY, "cpus, memory" },
	{ " []", 0, "" },
	{ " [cpus]", CC_REQ_CPUS, "cpus" },
	{ " [smt, irq, memory, cpus]", CC_REQ_CPUS | CC_REQ_MEMORY | CC_REQ_IRQ | CC_REQ_SMT, "cpus, memory, irq, smt" },
	{ " [cpus, irq]", CC_REQ_CPUS | CC_REQ_IRQ, "cpus, irq" },
	{ "\n      - cpus\n      - smt\n", CC_REQ_CPUS | CC_REQ_SMT, "cpus, smt" },
	{ " [\"cpus\", 'memory']", CC_REQ_CPUS | CC_REQ_MEMORY, "cpus, memory" },
	{ " [memory, irq]", CC_REQ_MEMORY | CC_REQ_IRQ, "memory, irq" }, /* no annotation can ask for it */
};

START_TEST(test_may_set)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL;
	_cleanup_policy_ struct cc_policy *p = NULL;
	char buf[64];

	ck_assert_int_ge(asprintf(&text, "classes:\n  a:\n    coreType: any\n    annotationMaySet:%s\n  b: {coreType: any}\n",
				  may_set_cases[_i].list),
			 0);
	p = cc_policy_parse(text, strlen(text), "p.yaml", &err);
	ck_assert_msg(p != NULL, "%s: %s", text, err.msg);
	ck_assert_uint_eq(cc_policy_class(p, "a")->annotation_may_set, may_set_cases[_i].bits);
	/* Another class keeps the default. */
	ck_assert_uint_eq(cc_policy_class(p, "b")->annotation_may_set, CC_REQ_DEFAULT);
	cc_req_keys_format(may_set_cases[_i].bits, buf, sizeof(buf));
	ck_assert_str_eq(buf, may_set_cases[_i].formatted);
}
END_TEST

START_TEST(test_full_policy)
{
	static const char text[] = "reserved: 0,8\n"
				   "minShared: 0\n"
				   "coreClasses:\n"
				   "  big: \"0-7\"\n"
				   "  little: 8-15\n"
				   "classes:\n"
				   "  fast-1:\n"
				   "    coreType: big\n"
				   "    fallback: \"\"\n"
				   "    smt: full\n"
				   "    exclusive: true\n"
				   "    memory: spread\n"
				   "    irq: steer-away\n"
				   "    partition: isolated\n"
				   "    quota: keep\n"
				   "    align: l2\n"
				   "    strictClusters: true\n"
				   "  slow: {coreType: little, fallback: big, exclusive: false, memory: any}\n"
				   "  whatever: {coreType: any, fallback: any}\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(text, strlen(text), "p.yaml", &err);
	_cleanup_free_ char *r = NULL, *o0 = NULL, *o1 = NULL;

	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert(p->has_reserved);
	r = list_of(p->reserved);
	ck_assert_str_eq(r, "0,8");
	ck_assert_int_eq(p->min_shared, 0);
	ck_assert_int_eq(p->noverrides, 2);
	ck_assert_str_eq(p->overrides[0].name, "big");
	ck_assert_str_eq(p->overrides[1].name, "little");
	o0 = list_of(p->overrides[0].cpus);
	o1 = list_of(p->overrides[1].cpus);
	ck_assert_str_eq(o0, "0-7");
	ck_assert_str_eq(o1, "8-15");
	ck_assert_int_eq(p->nclasses, 3);
	assert_class(p, "fast-1", "big", "", CC_SMT_FULL, true, CC_MEM_SPREAD, CC_IRQ_STEER_AWAY,
		     CC_PART_ISOLATED, CC_QUOTA_KEEP, CC_ALIGN_L2, true);
	assert_class(p, "slow", "little", "big", CC_SMT_ISOLATE, false, CC_MEM_ANY, CC_IRQ_LEAVE,
		     CC_PART_ROOT, CC_QUOTA_DROP, CC_ALIGN_NONE, false);
	assert_class(p, "whatever", "any", "any", CC_SMT_ISOLATE, true, CC_MEM_LOCAL, CC_IRQ_LEAVE,
		     CC_PART_ROOT, CC_QUOTA_DROP, CC_ALIGN_NONE, false);
}
END_TEST

START_TEST(test_builtin_core_types)
{
	static const char text[] = "reserved: \"\"\n"
				   "classes:\n"
				   "  a: {coreType: performance}\n"
				   "  b: {coreType: efficient, fallback: mid}\n"
				   "  c: {coreType: mid-1, fallback: low-power}\n"
				   "  d: {coreType: low-power}\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(text, strlen(text), "p.yaml", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	/* An explicit empty list reserves nothing. */
	ck_assert(p->has_reserved);
	ck_assert(hwloc_bitmap_iszero(p->reserved));
	ck_assert_str_eq(cc_policy_class(p, "c")->core_type, "mid-1");
}
END_TEST

#define CLS "classes:\n  latency:\n    coreType: performance\n"

/* Policies refused, with the whole message. */
static const struct {
	const char *text;
	const char *msg;
} bad_cases[] = {
	/* unknown keys, at every level */
	{ CLS "reservd: \"0\"\n",
	  "p.yaml:4:1: reservd: unknown key (expected one of reserved, minShared, withoutCpuLimit, coreClasses, classes, vms)" },
	{ CLS "    smtt: full\n",
	  "p.yaml:4:5: classes.latency.smtt: unknown key (expected one of coreType, fallback, smt, exclusive, memory, irq, partition, quota, align, strictClusters, power, annotationMaySet, namespaces, maxCpusPerPod, maxCpus)" },
	{ CLS "    annotationMayOverride: [cpus]\n",
	  "p.yaml:4:5: classes.latency.annotationMayOverride: unknown key (expected one of coreType, fallback, smt, exclusive, memory, irq, partition, quota, align, strictClusters, power, annotationMaySet, namespaces, maxCpusPerPod, maxCpus)" },
	/* annotationMaySet: a list of annotation keys, each once, not class */
	{ CLS "    annotationMaySet: irq\n",
	  "p.yaml:4:5: classes.latency.annotationMaySet: expected a list of cpus, memory, irq and smt such as [cpus, memory], got \"irq\"" },
	{ CLS "    annotationMaySet: {irq: true}\n",
	  "p.yaml:4:5: classes.latency.annotationMaySet: expected a list of cpus, memory, irq and smt such as [cpus, memory], got a mapping" },
	{ CLS "    annotationMaySet:\n",
	  "p.yaml:4:5: classes.latency.annotationMaySet: expected a list of cpus, memory, irq and smt such as [cpus, memory], got an empty value" },
	{ CLS "    annotationMaySet: [cpus, color]\n",
	  "p.yaml:4:30: classes.latency.annotationMaySet[1]: expected cpus, memory, irq or smt, got \"color\"" },
	{ CLS "    annotationMaySet: [cpus, IRQ]\n",
	  "p.yaml:4:30: classes.latency.annotationMaySet[1]: expected cpus, memory, irq or smt, got \"IRQ\"" },
	{ CLS "    annotationMaySet: [cpus, [irq]]\n",
	  "p.yaml:4:30: classes.latency.annotationMaySet[1]: expected cpus, memory, irq or smt, got a sequence" },
	{ CLS "    annotationMaySet: [cpus, irq, memory, irq]\n",
	  "p.yaml:4:43: classes.latency.annotationMaySet[3]: irq is listed twice" },
	{ CLS "    annotationMaySet:\n      - cpus\n      - cpus\n",
	  "p.yaml:6:9: classes.latency.annotationMaySet[1]: cpus is listed twice" },
	{ CLS "    annotationMaySet: [class, cpus]\n",
	  "p.yaml:4:24: classes.latency.annotationMaySet[0]: class is always allowed (an annotation must name its class): list only cpus, memory, irq or smt" },
	{ CLS "    annotationMaySet: [cpus, !!binary aXJx]\n",
	  "p.yaml:4:30: classes.latency.annotationMaySet[1]: tag !!binary is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)" },
	/* enums, booleans, integers */
	{ CLS "    smt: half\n", "p.yaml:4:5: classes.latency.smt: expected isolate or full, got \"half\"" },
	{ CLS "    memory: nearby\n", "p.yaml:4:5: classes.latency.memory: expected local, spread or any, got \"nearby\"" },
	{ CLS "    irq: steer\n", "p.yaml:4:5: classes.latency.irq: expected steer-away or leave, got \"steer\"" },
	{ CLS "    partition: exclusive\n", "p.yaml:4:5: classes.latency.partition: expected root or isolated, got \"exclusive\"" },
	{ CLS "    quota: 50%\n", "p.yaml:4:5: classes.latency.quota: expected drop or keep, got \"50%\"" },
	{ CLS "    align: l3\n", "p.yaml:4:5: classes.latency.align: expected none or l2, got \"l3\"" },
	{ CLS "    exclusive: yes\n", "p.yaml:4:5: classes.latency.exclusive: expected true or false, got \"yes\"" },
	{ CLS "    strictClusters: \"false\"\n", "p.yaml:4:5: classes.latency.strictClusters: expected true or false, got the string \"false\"" },
	{ CLS "    smt: [full]\n", "p.yaml:4:5: classes.latency.smt: expected isolate or full, got a sequence" },
	{ "minShared: -1\n" CLS, "p.yaml:1:1: minShared: expected an integer >= 0, got \"-1\"" },
	{ "minShared: 4.5\n" CLS, "p.yaml:1:1: minShared: expected an integer, got \"4.5\"" },
	{ "minShared: 99999999999999999999\n" CLS, "p.yaml:1:1: minShared: expected an integer <= 8192, got \"99999999999999999999\"" },
	/* core types */
	{ "classes:\n  latency:\n    smt: full\n", "p.yaml:2:3: classes.latency.coreType: required key is missing" },
	{ "classes:\n  latency:\n    coreType: fast\n",
	  "p.yaml:3:5: classes.latency.coreType: expected performance, efficient, mid, mid-N, low-power or any, got \"fast\"" },
	{ "classes:\n  latency:\n    coreType: \"\"\n",
	  "p.yaml:3:5: classes.latency.coreType: expected performance, efficient, mid, mid-N, low-power or any, got \"\"" },
	{ "classes:\n  latency:\n    coreType: ~\n", "p.yaml:3:5: classes.latency.coreType: expected a string, got null" },
	{ CLS "    fallback: mid-\n",
	  "p.yaml:4:5: classes.latency.fallback: expected performance, efficient, mid, mid-N, low-power or any (or \"\" for none), got \"mid-\"" },
	{ CLS "    fallback: mid-0\n",
	  "p.yaml:4:5: classes.latency.fallback: expected performance, efficient, mid, mid-N, low-power or any (or \"\" for none), got \"mid-0\"" },
	{ "coreClasses: {big: 0-3, little: 4-7}\n" CLS,
	  "p.yaml:4:5: classes.latency.coreType: expected any or a class of coreClasses (big, little), got \"performance\"" },
	{ "classes:\n  latency:\n    coreType: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	  "p.yaml:3:5: classes.latency.coreType: longer than 31 characters" },
	/* classes */
	{ "minShared: 1\n", "p.yaml:1:1: classes: required key is missing" },
	{ "classes: {}\n", "p.yaml:1:1: classes: at least one class is required" },
	{ "classes: [latency]\n", "p.yaml:1:1: classes: expected a mapping, got a sequence" },
	{ "classes:\n  latency: fast\n", "p.yaml:2:3: classes.latency: expected a mapping, got \"fast\"" },
	{ "classes:\n  Latency:\n    coreType: any\n",
	  "p.yaml:2:3: classes.Latency: class names are 1 to 63 characters of a-z, 0-9 and '-'" },
	{ "classes:\n  \"lat ency\": {coreType: any}\n",
	  "p.yaml:2:3: classes.lat ency: class names are 1 to 63 characters of a-z, 0-9 and '-'" },
	{ CLS "  latency:\n    coreType: efficient\n", "p.yaml:4:3: classes.latency: duplicate key (first at line 2)" },
	{ CLS "    partition: isolated\n    exclusive: false\n",
	  "p.yaml:4:5: classes.latency.partition: isolated requires exclusive: true" },
	{ CLS "    strictClusters: true\n", "p.yaml:4:5: classes.latency.strictClusters: true requires align: l2" },
	/* reserved and coreClasses */
	{ "reserved: \"0-\"\n" CLS, "p.yaml:1:1: reserved: invalid cpu list \"0-\": range without an end" },
	{ "reserved: 0-9999\n" CLS, "p.yaml:1:1: reserved: invalid cpu list \"0-9999\": 9999 is out of range (limit 8191)" },
	{ "reserved: [0, 1]\n" CLS, "p.yaml:1:1: reserved: expected a string, got a sequence" },
	{ "coreClasses:\n  big: \"0-3\"\n  little: \"3-7\"\n" CLS,
	  "p.yaml:3:3: coreClasses.little: CPUs 3 are also in coreClasses.big" },
	{ "coreClasses:\n  big: \"0-3,x\"\n" CLS,
	  "p.yaml:2:3: coreClasses.big: invalid cpu list \"0-3,x\": expected a number at \"x\"" },
	{ "coreClasses:\n  big: \"\"\n" CLS,
	  "p.yaml:2:3: coreClasses.big: empty cpu list: a core class needs at least one CPU" },
	{ "coreClasses:\n  any: \"0\"\n" CLS,
	  "p.yaml:2:3: coreClasses.any: \"any\" is reserved for coreType and cannot name a core class" },
	{ "coreClasses:\n  Big_Cores: \"0\"\n" CLS,
	  "p.yaml:2:3: coreClasses.Big_Cores: core class names are 1 to 31 characters of a-z, 0-9 and '-'" },
	{ "coreClasses: [0-3]\n" CLS, "p.yaml:1:1: coreClasses: expected a mapping, got a sequence" },
	/* document shape */
	{ "", "p.yaml: empty document: a policy needs at least `classes`" },
	{ "# nothing\n", "p.yaml: empty document: a policy needs at least `classes`" },
	{ "---\n", "p.yaml:2:1: expected a mapping, got an empty value" },
	{ "- latency\n", "p.yaml:1:1: expected a mapping, got a sequence" },
	{ CLS "---\n" CLS, "p.yaml:4:1: multiple documents are not allowed" },
	{ "classes:\n  latency: &l {coreType: any}\n  again: *l\n",
	  "p.yaml:2:12: classes.latency: anchors and aliases are not allowed (anchor &l)" },
	{ "classes:\n  latency:\n    coreType: perf\xc3\xa9\xff\n",
	  "p.yaml:3:20: invalid leading UTF-8 octet (byte 0xFF): the input must be UTF-8" },
	{ CLS "    memory: !!python/object:os.system local\n",
	  "p.yaml:4:13: classes.latency.memory: tag !!python/object:os.system is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)" },
	{ "classes:\n  latency:\n    coreType: performance\n   smt: full\n",
	  "p.yaml:4:4: did not find expected key (while parsing a block mapping at line 2 column 3)" },
};

START_TEST(test_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	const char *text = bad_cases[_i].text;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(text, strlen(text), "p.yaml", &err);

	ck_assert_msg(p == NULL, "accepted: %s", text);
	ck_assert_int_ne(err.code, 0);
	ck_assert_str_eq(err.msg, bad_cases[_i].msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

START_TEST(test_deep_and_large)
{
	struct cc_err err = CC_ERR_INIT;
	char deep[256];
	_cleanup_free_ char *big = malloc(CC_POLICY_MAX + 2);
	int n = 0;

	n += sprintf(deep + n, "classes: {a: {coreType: ");
	for (int i = 0; i < 20; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	ck_assert_ptr_null(cc_policy_parse(deep, strlen(deep), "p.yaml", &err));
	ck_assert_str_eq(err.msg, "p.yaml:1:38: classes.a.coreType[0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper than 16 levels");

	ck_assert_ptr_nonnull(big);
	memset(big, '#', CC_POLICY_MAX + 1);
	big[CC_POLICY_MAX + 1] = '\0';
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_parse(big, CC_POLICY_MAX + 1, "p.yaml", &err));
	ck_assert_str_eq(err.msg, "p.yaml: 1048577 bytes, more than the 1048576 a policy may have");
	ck_assert_int_eq(err.code, EFBIG);
}
END_TEST

START_TEST(test_load_files)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = NULL;
	_cleanup_free_ char *good = cc_test_write_tmp("classes:\n  x: {coreType: any}\n");
	_cleanup_free_ char *bad = cc_test_write_tmp("classes:\n  latency:\n    coreType: performance\n    smt: half\n");
	_cleanup_free_ char *huge = NULL, *msg = NULL, *bigtext = NULL;

	ck_assert_ptr_nonnull(good);
	ck_assert_ptr_nonnull(bad);
	p = cc_policy_load(good, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(p->source, good);
	ck_assert_int_eq(p->nclasses, 1);
	cc_policy_free(p);
	p = NULL;

	p = cc_policy_load(bad, &err);
	ck_assert_ptr_null(p);
	ck_assert_int_ge(asprintf(&msg, "%s:4:5: classes.latency.smt: expected isolate or full, got \"half\"", bad), 0);
	ck_assert_str_eq(err.msg, msg);

	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_load("/nonexistent/corecarve/policy.yaml", &err));
	ck_assert_str_eq(err.msg, "policy /nonexistent/corecarve/policy.yaml: No such file or directory");
	ck_assert_int_eq(err.code, ENOENT);

	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_load("/tmp", &err));
	ck_assert_str_eq(err.msg, "policy /tmp: not a regular file");

	bigtext = malloc(CC_POLICY_MAX + 16);
	ck_assert_ptr_nonnull(bigtext);
	memset(bigtext, '#', CC_POLICY_MAX + 15);
	bigtext[CC_POLICY_MAX + 15] = '\0';
	huge = cc_test_write_tmp(bigtext);
	ck_assert_ptr_nonnull(huge);
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_load(huge, &err));
	free(msg);
	ck_assert_int_ge(asprintf(&msg, "policy %s: 1048591 bytes, larger than the 1048576-byte limit", huge), 0);
	ck_assert_str_eq(err.msg, msg);

	/* The example is the default, loadable as a file. */
	cc_err_clear(&err);
	p = cc_policy_load(CC_SOURCE_DIR "/examples/policy-default.yaml", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(p->nclasses, 4);

	unlink(good);
	unlink(bad);
	unlink(huge);
}
END_TEST

/* A captured tree's policy is read beneath the tree: its link to
 * /etc/passwd is refused, naming the file, without reading or quoting
 * the host's; a link to another file of the tree is followed there.
 * Through the library and through the command line (topology --root). */
START_TEST(test_load_tree_policy_link)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *p = NULL;
	_cleanup_free_ char *tree = strdup("/tmp/cc-policy-tree-XXXXXX"), *want = NULL, *out = NULL;
	const char *bin = cc_test_bin("topology --root");

	ck_assert_ptr_nonnull(mkdtemp(tree));
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/etc/corecarve' && ln -s /etc/passwd '%s/etc/corecarve/policy.yaml'",
				    tree, tree),
			 0);
	ck_assert_ptr_nonnull(root = cc_root_open(tree, &err));
	ck_assert_ptr_null(cc_policy_load_in(root, NULL, &err));
	ck_assert_int_ge(asprintf(&want,
				  "policy %s/etc/corecarve/policy.yaml: a link to a file that is not in the tree (links "
				  "resolve inside the --root tree; name the policy with --policy FILE)",
				  root->path),
			 0);
	ck_assert_str_eq(err.msg, want);
	if (bin) {
		ck_assert_int_eq(cc_test_sh(&out, "CORECARVE_POLICY= '%s' topology --root '%s'", bin, tree), 2);
		ck_assert_msg(strstr(out, "a link to a file that is not in the tree") && !strstr(out, "root:x:0:0") &&
				      !strstr(out, "/bin/"),
			      "%s", out);
	}
	/* The tree's own file, through an absolute link inside it. */
	cc_test_write_file(tree, "etc/passwd", "classes:\n  tree: {coreType: any}\n");
	cc_err_clear(&err);
	p = cc_policy_load_in(root, NULL, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(p->nclasses, 1);
	ck_assert_str_eq(p->classes[0].name, "tree");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

START_TEST(test_load_default_path)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = NULL;

	if (access(CC_POLICY_PATH, F_OK) == 0) {
		cc_test_skip("%s exists on this machine; the fallback to the embedded default is not tested",
			     CC_POLICY_PATH);
		return;
	}
	p = cc_policy_load(NULL, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(p->source, "embedded default");
	ck_assert_int_eq(p->nclasses, 4);
}
END_TEST

/* A hand-made topology: only what cc_policy_reserved reads.  Package 0
 * holds cores 0-1 (class 1) then 2-3 (class 0, two PUs each); package 1
 * holds only class-1 cores 4-5. */
struct fake_topo {
	struct cc_topo t;
	struct cc_core cores[6];
	struct cc_domain packages[2];
	struct cc_class classes[2];
};

static void fake_topo_init(struct fake_topo *f)
{
	static const char *const pus[6] = { "0", "1", "2-3", "4-5", "6", "7" };
	static const int cls[6] = { 1, 1, 0, 0, 1, 1 };
	static const int pkg[6] = { 0, 0, 0, 0, 1, 1 };

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 6; i++) {
		struct cc_err err = CC_ERR_INIT;

		f->cores[i].id = i;
		f->cores[i].package = pkg[i];
		f->cores[i].cls = cls[i];
		f->cores[i].pus = hwloc_bitmap_alloc();
		ck_assert_int_eq(cc_cpulist_parse(pus[i], f->cores[i].pus, "pus", &err), 0);
		f->cores[i].npus = hwloc_bitmap_weight(f->cores[i].pus);
	}
	snprintf(f->classes[0].name, sizeof(f->classes[0].name), "performance");
	snprintf(f->classes[1].name, sizeof(f->classes[1].name), "efficient");
	f->t.ncores = 6;
	f->t.cores = f->cores;
	f->t.npackages = 2;
	f->t.packages = f->packages;
	f->t.nclasses = 2;
	f->t.classes = f->classes;
}

static void fake_topo_fini(struct fake_topo *f)
{
	for (int i = 0; i < 6; i++)
		hwloc_bitmap_free(f->cores[i].pus);
}

START_TEST(test_reserved_rule)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *def = cc_policy_default(&err);
	_cleanup_policy_ struct cc_policy *own = NULL;
	static const char text[] = "reserved: 0-1\nclasses: {a: {coreType: any}}\n";
	struct fake_topo f;
	_cleanup_bitmap_ hwloc_bitmap_t r = NULL;
	_cleanup_free_ char *s = NULL;

	ck_assert_ptr_nonnull(def);
	fake_topo_init(&f);

	/* Package 0 has two cores of each class: of equal counts the less
	 * performant (efficient core 0); package 1 has only efficient cores. */
	r = cc_policy_reserved(def, &f.t);
	s = list_of(r);
	ck_assert_str_eq(s, "0,6");
	hwloc_bitmap_free(r);
	free(s);

	/* A core without online PUs is passed over and not counted: package
	 * 0 then has more performance cores (2, with sibling 3). */
	hwloc_bitmap_zero(f.cores[0].pus);
	f.cores[0].npus = 0;
	r = cc_policy_reserved(def, &f.t);
	s = list_of(r);
	ck_assert_str_eq(s, "2-3,6");
	hwloc_bitmap_free(r);
	free(s);

	/* An explicit list wins, as written. */
	own = cc_policy_parse(text, strlen(text), "p.yaml", &err);
	ck_assert_msg(own != NULL, "%s", err.msg);
	r = cc_policy_reserved(own, &f.t);
	s = list_of(r);
	ck_assert_str_eq(s, "0-1");
	fake_topo_fini(&f);
}
END_TEST

/* The same rule on models built by the topology loader (hwloc synthetic
 * hosts), with classes from the description and from coreClasses. */
START_TEST(test_reserved_synthetic)
{
	static const struct {
		const char *desc;
		const char *policy;
		const char *reserved;
	} cases[] = {
		/* uniform: core 0 of each package, with its sibling */
		{ "pack:2 core:4 pu:2", "classes: {a: {coreType: any}}\n", "0-1,8-9" },
		/* as many performance as efficient cores in each package: the
		 * less performant */
		{ "pack:2 core:4 pu:2 | performance=4-7,12-15 efficient=0-3,8-11",
		  "classes: {a: {coreType: any}}\n", "0-1,8-9" },
		/* a 4P+8E laptop: the first E-core, not P-core 0 */
		{ "pack:1 core:12 pu:1 | performance=0-3 efficient=4-11", "classes: {a: {coreType: any}}\n", "4" },
		/* one big core among four middle and three little ones (F11's
		 * shape): a middle core */
		{ "pack:1 core:8 pu:1 | performance=7 mid=3-6 efficient=0-2", "classes: {a: {coreType: any}}\n", "3" },
		/* coreClasses, most performant first: package 0 has no "big" core */
		{ "pack:2 core:4 pu:2", "coreClasses: {big: 8-15, little: 0-7}\nclasses: {a: {coreType: big}}\n",
		  "0-1,8-9" },
		{ "pack:1 core:12 pu:1 | performance=0-3 efficient=4-11",
		  "reserved: 11\nclasses: {a: {coreType: any}}\n", "11" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		_cleanup_policy_ struct cc_policy *p =
			cc_policy_parse(cases[i].policy, strlen(cases[i].policy), "p.yaml", &err);
		struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = cases[i].desc };
		_cleanup_topo_ struct cc_topo *t = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t r = NULL;
		_cleanup_free_ char *s = NULL;

		ck_assert_msg(p != NULL, "%s", err.msg);
		src.overrides = p->overrides;
		src.noverrides = p->noverrides;
		t = cc_topo_load(&src, &err);
		ck_assert_msg(t != NULL, "%s: %s", cases[i].desc, err.msg);
		r = cc_policy_reserved(p, t);
		s = list_of(r);
		ck_assert_msg(!strcmp(s, cases[i].reserved), "%s: reserved %s, expected %s", cases[i].desc, s,
			      cases[i].reserved);
	}
}
END_TEST

START_TEST(test_enum_names)
{
	ck_assert_str_eq(cc_smt_name(CC_SMT_ISOLATE), "isolate");
	ck_assert_str_eq(cc_smt_name(CC_SMT_FULL), "full");
	ck_assert_str_eq(cc_memory_name(CC_MEM_LOCAL), "local");
	ck_assert_str_eq(cc_memory_name(CC_MEM_SPREAD), "spread");
	ck_assert_str_eq(cc_memory_name(CC_MEM_ANY), "any");
	ck_assert_str_eq(cc_irq_name(CC_IRQ_STEER_AWAY), "steer-away");
	ck_assert_str_eq(cc_irq_name(CC_IRQ_LEAVE), "leave");
	ck_assert_str_eq(cc_partition_name(CC_PART_ROOT), "root");
	ck_assert_str_eq(cc_partition_name(CC_PART_ISOLATED), "isolated");
	ck_assert_str_eq(cc_quota_name(CC_QUOTA_DROP), "drop");
	ck_assert_str_eq(cc_quota_name(CC_QUOTA_KEEP), "keep");
	ck_assert_str_eq(cc_align_name(CC_ALIGN_NONE), "none");
	ck_assert_str_eq(cc_align_name(CC_ALIGN_L2), "l2");
	ck_assert_str_eq(cc_smt_name((enum cc_smt)42), "?");
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_default_matches_example);
	tcase_add_test(tc, test_default_policy);
	tcase_add_test(tc, test_defaults_of_keys);
	tcase_add_test(tc, test_full_policy);
	tcase_add_test(tc, test_builtin_core_types);
	tcase_add_loop_test(tc, test_may_set, 0, sizeof(may_set_cases) / sizeof(may_set_cases[0]));
	tcase_add_loop_test(tc, test_bad_table, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_deep_and_large);
	tcase_add_test(tc, test_load_files);
	tcase_add_test(tc, test_load_default_path);
	tcase_add_test(tc, test_load_tree_policy_link);
	tcase_add_test(tc, test_reserved_rule);
	tcase_add_test(tc, test_reserved_synthetic);
	tcase_add_test(tc, test_enum_names);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(policy_suite)
