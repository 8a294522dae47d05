#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "policy.h"
#include "testlib.h"

#define PFX "annotation corecarve.io/placement: "

static const struct {
	const char *in;
	struct cc_request out;
} good_cases[] = {
	{ "{class: latency, cpus: 4}", { "latency", 4, false, false, false, 0, 0, 0 } },
	{ "class: throughput\ncpus: 8\nmemory: spread\nirq: leave\nsmt: full\n",
	  { "throughput", 8, true, true, true, CC_MEM_SPREAD, CC_IRQ_LEAVE, CC_SMT_FULL } },
	{ "{class: 'bg-2', cpus: 8192, smt: isolate}", { "bg-2", 8192, false, false, true, 0, 0, CC_SMT_ISOLATE } },
	{ "# placement\n{class: \"isolated\", cpus: 1, irq: steer-away, memory: any}\n",
	  { "isolated", 1, true, true, false, CC_MEM_ANY, CC_IRQ_STEER_AWAY, 0 } },
	{ "---\n{cpus: 2, class: latency}\n...\n", { "latency", 2, false, false, false, 0, 0, 0 } },
};

START_TEST(test_good_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;
	const char *in = good_cases[_i].in;

	memset(&r, 0x5a, sizeof(r));
	ck_assert_msg(cc_request_parse(in, strlen(in), &r, &err) == 0, "%s: %s", in, err.msg);
	ck_assert_str_eq(r.class_name, good_cases[_i].out.class_name);
	ck_assert_int_eq(r.cpus, good_cases[_i].out.cpus);
	ck_assert_int_eq(r.has_memory, good_cases[_i].out.has_memory);
	ck_assert_int_eq(r.has_irq, good_cases[_i].out.has_irq);
	ck_assert_int_eq(r.has_smt, good_cases[_i].out.has_smt);
	if (r.has_memory)
		ck_assert_int_eq(r.memory, good_cases[_i].out.memory);
	if (r.has_irq)
		ck_assert_int_eq(r.irq, good_cases[_i].out.irq);
	if (r.has_smt)
		ck_assert_int_eq(r.smt, good_cases[_i].out.smt);
}
END_TEST

/* Annotation values refused, with the whole message. */
static const struct {
	const char *in;
	const char *msg;
} bad_cases[] = {
	{ "", PFX "empty value: expected a mapping such as {class: latency, cpus: 4}" },
	{ "# nothing\n", PFX "empty value: expected a mapping such as {class: latency, cpus: 4}" },
	{ "{class: latency, cpus: 4, color: red}", PFX "color: unknown key (expected one of class, cpus, memory, irq, smt)" },
	{ "{class: latency, cpus: 4, Cpus: 2}", PFX "Cpus: unknown key (expected one of class, cpus, memory, irq, smt)" },
	{ "{class: latency}", PFX "cpus: required key is missing" },
	{ "{cpus: 4}", PFX "class: required key is missing" },
	{ "{class: latency, cpus: 0}", PFX "cpus: expected an integer >= 1, got \"0\"" },
	{ "{class: latency, cpus: -1}", PFX "cpus: expected an integer >= 1, got \"-1\"" },
	{ "{class: latency, cpus: 4.5}", PFX "cpus: expected an integer, got \"4.5\"" },
	{ "{class: latency, cpus: four}", PFX "cpus: expected an integer, got \"four\"" },
	{ "{class: latency, cpus: \"four\"}", PFX "cpus: expected an integer, got the string \"four\"" },
	{ "{class: latency, cpus: \"4\"}", PFX "cpus: expected an integer, got the string \"4\"" },
	{ "{class: latency, cpus: 99999999999999999999}", PFX "cpus: expected an integer <= 8192, got \"99999999999999999999\"" },
	{ "{class: latency, cpus: 8193}", PFX "cpus: expected an integer <= 8192, got \"8193\"" },
	{ "{class: latency, cpus: 0x4}", PFX "cpus: expected an integer, got \"0x4\"" },
	{ "{class: latency, cpus: }", PFX "cpus: expected an integer, got an empty value" },
	{ "{class: latency, cpus: [4]}", PFX "cpus: expected an integer, got a sequence" },
	{ "{class: latency, cpus: 4, cpus: 5}", PFX "cpus: duplicate key (first at line 1)" },
	{ "class: latency\ncpus: 4\nclass: batch\n", PFX "class: duplicate key (first at line 1)" },
	{ "{class: &c latency, cpus: 4}", PFX "class: anchors and aliases are not allowed (anchor &c)" },
	{ "{class: *c, cpus: 4}", PFX "class: anchors and aliases are not allowed (alias *c)" },
	{ "{class: latency, cpus: 4, memory: nearby}", PFX "memory: expected local, spread or any, got \"nearby\"" },
	{ "{class: latency, cpus: 4, smt: half}", PFX "smt: expected isolate or full, got \"half\"" },
	{ "{class: latency, cpus: 4, irq: yes}", PFX "irq: expected steer-away or leave, got \"yes\"" },
	{ "{class: latency, cpus: 4, irq: {steer: away}}", PFX "irq: expected steer-away or leave, got a mapping" },
	{ "{class: Latency, cpus: 4}", PFX "class: expected a class name (a-z, 0-9 and '-'), got \"Latency\"" },
	{ "{class: \"lat ency\", cpus: 4}", PFX "class: expected a class name (a-z, 0-9 and '-'), got \"lat ency\"" },
	{ "{class: ~, cpus: 4}", PFX "class: expected a string, got null" },
	{ "{class: [latency], cpus: 4}", PFX "class: expected a string, got a sequence" },
	{ "{class: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, cpus: 4}",
	  PFX "class: longer than 63 characters" },
	{ "[latency, 4]", PFX "expected a mapping, got a sequence" },
	{ "latency", PFX "expected a mapping, got \"latency\"" },
	{ "class: latency\ncpus: 4\n---\nclass: batch\ncpus: 1\n", PFX "multiple documents are not allowed" },
	{ "{class: latency, cpus: 4", PFX "line 2 column 1: did not find expected ',' or '}' (while parsing a flow mapping at line 1 column 1)" },
	{ "{class: latency, cpus: 4, memory: !!binary bG9jYWw=}",
	  PFX "memory: tag !!binary is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)" },
	{ "{class: lat\xe9ncy, cpus: 4}", PFX "line 1 column 13: invalid trailing UTF-8 octet (byte 0x6E): the input must be UTF-8" },
	{ "{class: latency, cpus: 4, \"memory\\0\": any}", PFX "a key holds a NUL character" },
	{ "{? [class]: latency, cpus: 4}", PFX "mapping keys must be scalars, got a sequence" },
};

START_TEST(test_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r = { "untouched", 77 };
	const char *in = bad_cases[_i].in;

	ck_assert_int_eq(cc_request_parse(in, strlen(in), &r, &err), -1);
	ck_assert_int_ne(err.code, 0);
	ck_assert_str_eq(err.msg, bad_cases[_i].msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	/* *out is written only on success. */
	ck_assert_str_eq(r.class_name, "untouched");
	ck_assert_int_eq(r.cpus, 77);
}
END_TEST

START_TEST(test_bombs_and_limits)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;
	char buf[CC_ANNOTATION_MAX + 64];
	int n;

	/* Billion laughs, flow style as an annotation would carry it. */
	n = snprintf(buf, sizeof(buf), "{class: latency, cpus: 4, x: &a [lol, lol, lol], y: &b [*a, *a, *a], z: [*b, *b, *b]}");
	ck_assert_int_eq(cc_request_parse(buf, (size_t)n, &r, &err), -1);
	ck_assert_str_eq(err.msg, PFX "x: anchors and aliases are not allowed (anchor &a)");

	/* Deep nesting. */
	n = snprintf(buf, sizeof(buf), "{class: ");
	for (int i = 0; i < 40; i++)
		buf[n++] = '[';
	buf[n] = '\0';
	cc_err_clear(&err);
	ck_assert_int_eq(cc_request_parse(buf, (size_t)n, &r, &err), -1);
	ck_assert_str_eq(err.msg, PFX "class[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper than 16 levels");

	/* Exactly the limit passes (padded with a comment), one byte more does not. */
	n = snprintf(buf, sizeof(buf), "{class: latency, cpus: 4} #");
	memset(buf + n, 'x', CC_ANNOTATION_MAX - (size_t)n);
	buf[CC_ANNOTATION_MAX] = '\0';
	cc_err_clear(&err);
	ck_assert_msg(cc_request_parse(buf, CC_ANNOTATION_MAX, &r, &err) == 0, "%s", err.msg);
	buf[CC_ANNOTATION_MAX] = 'x';
	buf[CC_ANNOTATION_MAX + 1] = '\0';
	ck_assert_int_eq(cc_request_parse(buf, CC_ANNOTATION_MAX + 1, &r, &err), -1);
	ck_assert_str_eq(err.msg, PFX "value is 4097 bytes, more than the 4096 allowed");
	ck_assert_int_eq(err.code, EFBIG);

	/* A NUL byte inside the value (JSON allows \u0000). */
	cc_err_clear(&err);
	ck_assert_int_eq(cc_request_parse("{class: a\0b, cpus: 4}", 21, &r, &err), -1);
	ck_assert_str_eq(err.msg, PFX "line 1 column 10: control characters are not allowed (byte 0x00)");

	cc_err_clear(&err);
	ck_assert_int_eq(cc_request_parse(NULL, 0, &r, &err), -1);
	ck_assert_str_eq(err.msg, PFX "no value");
}
END_TEST

START_TEST(test_parse_key)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;

	ck_assert_int_eq(cc_request_parse_key("corecarve.io/placement.web", "{class: x, cpus: 0}", 19, &r, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement.web: cpus: expected an integer >= 1, got \"0\"");
}
END_TEST

/* The key a request came from is kept: cc_allocate holds such a request
 * to its class's annotationMaySet and names the key in the refusal. */
START_TEST(test_parse_keeps_key)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;

	ck_assert_int_eq(cc_request_parse("{class: x, cpus: 1}", 19, &r, &err), 0);
	ck_assert_str_eq(r.annotation, CC_ANNOTATION_KEY);
	ck_assert_int_eq(cc_request_parse_key("corecarve.io/placement.web", "{class: x, cpus: 1}", 19, &r, &err), 0);
	ck_assert_str_eq(r.annotation, "corecarve.io/placement.web");
	ck_assert_int_eq(cc_request_parse_key(NULL, "{class: x, cpus: 1}", 19, &r, &err), 0);
	ck_assert_str_eq(r.annotation, CC_ANNOTATION_KEY);
}
END_TEST

/* ---- who may ask for what: annotationMaySet ---------------------------- */

static const char perm_policy[] =
	"classes:\n"
	"  latency: {coreType: performance, irq: steer-away}\n" /* the default: cpus, memory */
	"  open: {coreType: performance, annotationMaySet: [cpus, memory, irq, smt]}\n"
	"  irqonly: {coreType: performance, annotationMaySet: [cpus, irq]}\n"
	"  vm: {coreType: performance, annotationMaySet: [memory, irq]}\n"
	"  bare: {coreType: any, annotationMaySet: []}\n";

static const struct {
	const char *in;
	const char *msg; /* NULL: permitted */
} perm_cases[] = {
	{ "{class: latency, cpus: 2}", NULL },
	{ "{class: latency, cpus: 2, memory: spread}", NULL },
	{ "{class: latency, cpus: 2, irq: leave}",
	  "irq: class \"latency\" does not let an annotation set irq (policy classes.latency.annotationMaySet); "
	  "remove irq from the annotation or add it there" },
	{ "{class: latency, cpus: 2, irq: steer-away}", /* even the class's own value: the key is what is granted */
	  "irq: class \"latency\" does not let an annotation set irq (policy classes.latency.annotationMaySet); "
	  "remove irq from the annotation or add it there" },
	{ "{class: latency, cpus: 2, smt: full}",
	  "smt: class \"latency\" does not let an annotation set smt (policy classes.latency.annotationMaySet); "
	  "remove smt from the annotation or add it there" },
	{ "{class: latency, cpus: 2, smt: full, memory: any, irq: leave}",
	  "irq, smt: class \"latency\" does not let an annotation set irq or smt (policy classes.latency.annotationMaySet); "
	  "remove them from the annotation or add them there" },
	{ "{class: open, cpus: 2, smt: full, memory: any, irq: leave}", NULL },
	{ "{class: irqonly, cpus: 2, irq: leave}", NULL },
	{ "{class: irqonly, cpus: 2, irq: leave, memory: local}",
	  "memory: class \"irqonly\" does not let an annotation set memory (policy classes.irqonly.annotationMaySet); "
	  "remove memory from the annotation or add it there" },
	{ "{class: irqonly, cpus: 2, irq: leave, memory: local, smt: isolate}",
	  "memory, smt: class \"irqonly\" does not let an annotation set memory or smt (policy classes.irqonly.annotationMaySet); "
	  "remove them from the annotation or add them there" },
	{ "{class: bare, cpus: 1, memory: local, irq: leave, smt: full}",
	  "cpus: class \"bare\" does not let an annotation set cpus, so no annotation may ask for it "
	  "(policy classes.bare.annotationMaySet); ask for another class or add cpus there" },
	{ "{class: vm, cpus: 1, irq: leave}",
	  "cpus: class \"vm\" does not let an annotation set cpus, so no annotation may ask for it "
	  "(policy classes.vm.annotationMaySet); ask for another class or add cpus there" },
};

START_TEST(test_permitted_table)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_parse(perm_policy, strlen(perm_policy), "p.yaml", &err);
	const char *in = perm_cases[_i].in;
	const struct cc_pclass *pc;
	struct cc_request r;

	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_msg(cc_request_parse(in, strlen(in), &r, &err) == 0, "%s", err.msg);
	pc = cc_policy_class(p, r.class_name);
	ck_assert_ptr_nonnull(pc);
	if (!perm_cases[_i].msg) {
		ck_assert_msg(cc_request_permitted(&r, pc, &err) == 0, "%s: %s", in, err.msg);
		ck_assert(!cc_err_isset(&err));
		return;
	}
	ck_assert_int_eq(cc_request_permitted(&r, pc, &err), -1);
	ck_assert_int_eq(err.code, EPERM);
	ck_assert_str_eq(err.msg, perm_cases[_i].msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* The embedded default: every class takes cpus and memory from a pod and
 * refuses irq and smt. */
START_TEST(test_permitted_default_policy)
{
	static const char *const classes[] = { "latency", "throughput", "background", "isolated" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_default(&err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		const struct cc_pclass *pc = cc_policy_class(p, classes[i]);
		struct cc_request r = { .cpus = 2, .has_memory = true, .memory = CC_MEM_SPREAD };
		char want[512];

		ck_assert_ptr_nonnull(pc);
		ck_assert_int_eq(cc_request_permitted(&r, pc, &err), 0);
		r.has_irq = true;
		ck_assert_int_eq(cc_request_permitted(&r, pc, &err), -1);
		snprintf(want, sizeof(want),
			 "irq: class \"%s\" does not let an annotation set irq (policy classes.%s.annotationMaySet); "
			 "remove irq from the annotation or add it there",
			 classes[i], classes[i]);
		ck_assert_str_eq(err.msg, want);
		cc_err_clear(&err);
		r.has_irq = false;
		r.has_smt = true;
		ck_assert_int_eq(cc_request_permitted(&r, pc, &err), -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "smt: class"));
		cc_err_clear(&err);
	}
}
END_TEST

static json_t *ann(const char *json)
{
	json_error_t jerr;
	json_t *j = json_loads(json, JSON_ALLOW_NUL, &jerr);

	ck_assert_msg(j != NULL, "%s", jerr.text);
	return j;
}

START_TEST(test_select)
{
	_cleanup_json_ json_t *both = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\","
					  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 4}\","
					  " \"other\": \"x\"}");
	_cleanup_json_ json_t *pod = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\"}");
	_cleanup_json_ json_t *none = ann("{\"other\": \"x\", \"corecarve.io/placementx\": \"y\"}");
	_cleanup_json_ json_t *nonstr = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\","
					    " \"corecarve.io/placement.web\": 4}");
	_cleanup_json_ json_t *arr = ann("[1]");
	const char *value = NULL, *key = NULL;

	ck_assert_int_eq(cc_request_select(both, "web", &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement.web");
	ck_assert_str_eq(value, "{class: latency, cpus: 4}");
	ck_assert_int_eq(cc_request_select(both, "db", &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement");
	ck_assert_str_eq(value, "{class: batch, cpus: 2}");
	ck_assert_int_eq(cc_request_select(both, NULL, &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement");
	ck_assert_int_eq(cc_request_select(both, "", &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement");
	ck_assert_int_eq(cc_request_select(pod, "web", &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement");
	ck_assert_int_eq(cc_request_select(pod, "web", &value, NULL), 1);
	ck_assert_int_eq(cc_request_select(none, "web", &value, &key), 0);
	ck_assert_int_eq(cc_request_select(NULL, "web", &value, &key), 0);
	ck_assert_int_eq(cc_request_select(arr, "web", &value, &key), 0);
	/* A non-string value counts as absent for select... */
	ck_assert_int_eq(cc_request_select(nonstr, "web", &value, &key), 1);
	ck_assert_str_eq(key, "corecarve.io/placement");
}
END_TEST

START_TEST(test_lookup)
{
	_cleanup_json_ json_t *both = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\","
					  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 4, smt: full}\"}");
	_cleanup_json_ json_t *badweb = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\","
					    " \"corecarve.io/placement.web\": \"{class: latency, cpus: 0}\"}");
	_cleanup_json_ json_t *nonstr = ann("{\"corecarve.io/placement\": \"{class: batch, cpus: 2}\","
					    " \"corecarve.io/placement.web\": 4}");
	_cleanup_json_ json_t *none = ann("{\"other\": \"x\"}");
	_cleanup_json_ json_t *arr = ann("[\"corecarve.io/placement\"]");
	_cleanup_json_ json_t *nul = ann("{\"corecarve.io/placement\": \"{class: a\\u0000, cpus: 1}\"}");
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;
	const char *key = NULL;

	ck_assert_int_eq(cc_request_lookup(both, "web", &r, &key, &err), 1);
	ck_assert_str_eq(key, "corecarve.io/placement.web");
	ck_assert_str_eq(r.annotation, "corecarve.io/placement.web");
	ck_assert_str_eq(r.class_name, "latency");
	ck_assert_int_eq(r.cpus, 4);
	ck_assert(r.has_smt && r.smt == CC_SMT_FULL);
	ck_assert_int_eq(cc_request_lookup(both, "db", &r, NULL, &err), 1);
	ck_assert_str_eq(r.class_name, "batch");
	ck_assert_int_eq(cc_request_lookup(none, "web", &r, &key, &err), 0);
	ck_assert_int_eq(cc_request_lookup(NULL, "web", &r, &key, &err), 0);
	ck_assert(!cc_err_isset(&err));

	ck_assert_int_eq(cc_request_lookup(badweb, "web", &r, &key, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement.web: cpus: expected an integer >= 1, got \"0\"");
	cc_err_clear(&err);
	/* ...but an error for lookup, which does not fall back. */
	ck_assert_int_eq(cc_request_lookup(nonstr, "web", &r, &key, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement.web: expected a string value, got a number");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_request_lookup(arr, "web", &r, &key, &err), -1);
	ck_assert_str_eq(err.msg, "annotations: expected a JSON object, got an array");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_request_lookup(nul, NULL, &r, &key, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: line 1 column 10: control characters are not allowed (byte 0x00)");
}
END_TEST

/* What each runtime writes into an OCI spec for a pod with a pod-wide and a
 * per-container ("web") annotation (docs/hook.md has the table and where
 * in each runtime's source it comes from): the container takes its own,
 * another container the pod's, a sandbox none. */
static const struct {
	const char *name, *json, *want; /* want: the class chosen, "" for none */
} oci_cases[] = {
	{ "containerd-container",
	  "{\"io.kubernetes.cri.container-type\": \"container\", \"io.kubernetes.cri.container-name\": \"web\","
	  " \"io.kubernetes.cri.sandbox-name\": \"p\", \"corecarve.io/placement\": \"{class: batch, cpus: 1}\","
	  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "latency" },
	{ "containerd-other-container",
	  "{\"io.kubernetes.cri.container-type\": \"container\", \"io.kubernetes.cri.container-name\": \"logs\","
	  " \"corecarve.io/placement\": \"{class: batch, cpus: 1}\", \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "batch" },
	{ "containerd-sandbox",
	  "{\"io.kubernetes.cri.container-type\": \"sandbox\", \"io.kubernetes.cri.sandbox-id\": \"abc\","
	  " \"corecarve.io/placement\": \"{class: batch, cpus: 1}\", \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "" },
	{ "crio-container",
	  "{\"io.kubernetes.cri-o.ContainerType\": \"container\", \"io.kubernetes.container.name\": \"web\","
	  " \"io.kubernetes.pod.name\": \"p\", \"corecarve.io/placement\": \"{class: batch, cpus: 1}\","
	  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "latency" },
	{ "crio-sandbox",
	  "{\"io.kubernetes.cri-o.ContainerType\": \"sandbox\", \"corecarve.io/placement\": \"{class: batch, cpus: 1}\"}", "" },
	/* podman kube play / run --pod: no container name at all, so only the
	 * pod-wide key applies. */
	{ "podman-pod-container",
	  "{\"io.kubernetes.cri-o.SandboxID\": \"abc\", \"corecarve.io/placement\": \"{class: batch, cpus: 1}\","
	  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "batch" },
	{ "podman-4-infra", "{\"io.kubernetes.cri-o.ContainerType\": \"sandbox\", \"corecarve.io/placement\": \"{class: batch, cpus: 1}\"}",
	  "" },
	/* containerd's key wins where both are present; an empty name is none. */
	{ "both-keys",
	  "{\"io.kubernetes.cri.container-name\": \"web\", \"io.kubernetes.container.name\": \"db\","
	  " \"corecarve.io/placement.db\": \"{class: batch, cpus: 1}\", \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "latency" },
	{ "empty-name",
	  "{\"io.kubernetes.cri.container-name\": \"\", \"io.kubernetes.container.name\": \"web\","
	  " \"corecarve.io/placement.web\": \"{class: latency, cpus: 2}\"}",
	  "latency" },
	{ "plain", "{\"corecarve.io/placement\": \"{class: batch, cpus: 1}\"}", "batch" },
};

START_TEST(test_lookup_oci)
{
	_cleanup_json_ json_t *a = ann(oci_cases[_i].json);
	struct cc_err err = CC_ERR_INIT;
	struct cc_request r;
	const char *key = NULL;
	int got = cc_request_lookup_oci(a, &r, &key, &err);

	ck_assert_msg(got >= 0, "%s: %s", oci_cases[_i].name, err.msg);
	ck_assert_msg(got == (*oci_cases[_i].want != 0), "%s: lookup returned %d", oci_cases[_i].name, got);
	if (got)
		ck_assert_str_eq(r.class_name, oci_cases[_i].want);
	ck_assert(cc_oci_is_sandbox(a) == (strstr(oci_cases[_i].json, "\"sandbox\"") != NULL));
	ck_assert(!cc_oci_is_sandbox(NULL));
}
END_TEST

static Suite *annotation_suite(void)
{
	Suite *s = suite_create("annotation");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_good_table, 0, sizeof(good_cases) / sizeof(good_cases[0]));
	tcase_add_loop_test(tc, test_bad_table, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_bombs_and_limits);
	tcase_add_test(tc, test_parse_key);
	tcase_add_test(tc, test_parse_keeps_key);
	tcase_add_loop_test(tc, test_permitted_table, 0, sizeof(perm_cases) / sizeof(perm_cases[0]));
	tcase_add_test(tc, test_permitted_default_policy);
	tcase_add_test(tc, test_select);
	tcase_add_test(tc, test_lookup);
	tcase_add_loop_test(tc, test_lookup_oci, 0, sizeof(oci_cases) / sizeof(oci_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(annotation_suite)
