#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "testlib.h"
#include "yaml_tree.h"

/* Build a string of `n` copies of `unit` between `head` and `tail`. */
static char *repeat(const char *head, const char *unit, int n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * (size_t)n + tl + 1), *p;

	ck_assert_ptr_nonnull(s);
	memcpy(s, head, hl);
	p = s + hl;
	for (int i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

START_TEST(test_tree_shape)
{
	static const char text[] = "top:\n"
				   "  name: web\n"
				   "  list:\n"
				   "    - a\n"
				   "    - x: 1\n"
				   "      y: [1, {z: q}]\n"
				   "flow: {k: 'v', e: \"\"}\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, strlen(text), "t.yaml", &err);
	const struct cc_ynode *top, *list, *item, *y, *z, *flow;
	char where[256];

	ck_assert_msg(doc != NULL, "%s", err.msg);
	ck_assert_int_eq(doc->root->type, CC_YMAPPING);
	ck_assert_int_eq(doc->root->n, 2);
	top = cc_ynode_get(doc->root, "top");
	ck_assert_ptr_nonnull(top);
	ck_assert_int_eq(top->key_line, 1);
	ck_assert_int_eq(top->key_col, 1);
	ck_assert_str_eq(cc_ynode_get(top, "name")->text, "web");
	ck_assert_int_eq(cc_ynode_get(top, "name")->line, 2);
	ck_assert_int_eq(cc_ynode_get(top, "name")->col, 9);
	list = cc_ynode_get(top, "list");
	ck_assert_int_eq(list->type, CC_YSEQUENCE);
	ck_assert_int_eq(list->n, 2);
	ck_assert_str_eq(list->first->text, "a");
	ck_assert_int_eq(list->first->index, 0);
	item = list->first->next;
	ck_assert_int_eq(item->index, 1);
	y = cc_ynode_get(item, "y");
	ck_assert_int_eq(y->n, 2);
	z = cc_ynode_get(y->last, "z");
	ck_assert_str_eq(z->text, "q");
	ck_assert(z->plain);
	cc_ynode_where(z, where, sizeof(where));
	ck_assert_str_eq(where, "t.yaml:6:15: top.list[1].y[1].z");
	cc_ynode_where(list->first, where, sizeof(where));
	ck_assert_str_eq(where, "t.yaml:4:7: top.list[0]");
	cc_ynode_where(doc->root, where, sizeof(where));
	ck_assert_str_eq(where, "t.yaml:1:1");
	flow = cc_ynode_get(doc->root, "flow");
	ck_assert(!cc_ynode_get(flow, "k")->plain);
	ck_assert_str_eq(cc_ynode_get(flow, "e")->text, "");
	ck_assert_ptr_null(cc_ynode_get(flow, "missing"));
	ck_assert_int_eq(doc->nnodes, 23); /* keys count too */
}
END_TEST

START_TEST(test_empty_stream)
{
	static const char *const empties[] = { "", "# only a comment\n", "\n\n" };

	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(empties[i], strlen(empties[i]), "t", &err);

		ck_assert_msg(doc != NULL, "%s", err.msg);
		ck_assert_ptr_null(doc->root);
	}
}
END_TEST

/* Inputs the loader refuses, with the whole expected message or, where
 * libyaml words it, a fragment of it. */
static const struct {
	const char *text;
	const char *msg;  /* exact message, or NULL */
	const char *frag; /* fragment, when msg is NULL */
} bad_cases[] = {
	{ "a: &x 1\n", "t.yaml:1:4: a: anchors and aliases are not allowed (anchor &x)", NULL },
	{ "a: 1\nb: *x\n", "t.yaml:2:4: b: anchors and aliases are not allowed (alias *x)", NULL },
	{ "a: [1, *x]\n", "t.yaml:1:8: a[1]: anchors and aliases are not allowed (alias *x)", NULL },
	{ "&k a: 1\n", "t.yaml:1:1: anchors and aliases are not allowed (anchor &k)", NULL },
	{ "- &r {a: 1}\n", "t.yaml:1:3: [0]: anchors and aliases are not allowed (anchor &r)", NULL },
	{ "a: 1\na: 2\n", "t.yaml:2:1: a: duplicate key (first at line 1)", NULL },
	{ "x:\n  b: 1\n  c: 2\n  b: 3\n", "t.yaml:4:3: x.b: duplicate key (first at line 2)", NULL },
	{ "{a: 1, a: 1}", "t.yaml:1:8: a: duplicate key (first at line 1)", NULL },
	{ "? [a]\n: 1\n", "t.yaml:1:3: mapping keys must be scalars, got a sequence", NULL },
	{ "{? {a: 1}: 2}", "t.yaml:1:4: mapping keys must be scalars, got a mapping", NULL },
	{ "a: 1\n---\nb: 2\n", "t.yaml:2:1: multiple documents are not allowed", NULL },
	{ "--- 1\n--- 2\n", "t.yaml:2:1: multiple documents are not allowed", NULL },
	{ "a: !foo 1\n", "t.yaml:1:4: a: tag !foo is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)", NULL },
	{ "a: !!binary aGk=\n", NULL, "a: tag !!binary is not allowed" },
	{ "a: !!map x\n", "t.yaml:1:4: a: tag !!map does not fit the node it is on", NULL },
	{ "a: !!str {b: 1}\n", "t.yaml:1:4: a: tag !!str does not fit the node it is on", NULL },
	{ "a: \xff\n", "t.yaml:1:4: invalid leading UTF-8 octet (byte 0xFF): the input must be UTF-8", NULL },
	{ "a: b\xc3\n", "t.yaml:1:6: invalid trailing UTF-8 octet (byte 0x0A): the input must be UTF-8", NULL },
	{ "a: b\xc3", NULL, "t.yaml:1:5: incomplete UTF-8 octet sequence" },
	{ "\xff\xfe" "a\0:\0 \0" "1\0", NULL, "t.yaml:1:1: invalid leading UTF-8 octet" },
	{ "a: \"x\\0y\"\n", "t.yaml:1:1: a: a value holds a NUL character", NULL },
	{ "\"k\\0\": 1\n", "t.yaml:1:1: a key holds a NUL character", NULL },
	{ "a: [1, 2\n", NULL, "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at line 1 column 4)" },
	{ "a: b: c\n", NULL, "t.yaml:1:5: mapping values are not allowed in this context" },
	{ "a:\n\tb: 1\n", NULL, "t.yaml:2:1: found character that cannot start any token" },
};

START_TEST(test_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	const char *text = bad_cases[_i].text;
	/* The UTF-16 case holds NUL bytes: its length is fixed. */
	size_t len = text[0] == '\xff' && text[1] == '\xfe' ? 10 : strlen(text);
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, len, "t.yaml", &err);

	ck_assert_msg(doc == NULL, "accepted: %s", text);
	ck_assert_int_ne(err.code, 0);
	if (bad_cases[_i].msg)
		ck_assert_str_eq(err.msg, bad_cases[_i].msg);
	else
		ck_assert_msg(strstr(err.msg, bad_cases[_i].frag) != NULL, "%s: got \"%s\"", text, err.msg);
}
END_TEST

START_TEST(test_billion_laughs)
{
	static const char text[] = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
				   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
				   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
				   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
				   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
				   "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
				   "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
				   "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
				   "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, strlen(text), "t.yaml", &err);

	ck_assert_ptr_null(doc);
	ck_assert_str_eq(err.msg, "t.yaml:1:4: a: anchors and aliases are not allowed (anchor &a)");
}
END_TEST

START_TEST(test_depth_limit)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *ok = repeat("", "[", CC_YAML_MAX_DEPTH, "");
	_cleanup_free_ char *ok2 = NULL, *deep = NULL, *deep_block = NULL;
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	char *p;

	/* 16 levels of flow sequences: accepted. */
	ok2 = repeat(ok, "]", CC_YAML_MAX_DEPTH, "");
	doc = cc_yaml_parse(ok2, strlen(ok2), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	cc_ydoc_free(doc);
	doc = NULL;

	/* 17: refused, and 10000 deep as well (no recursion in the way). */
	deep = repeat("", "[", CC_YAML_MAX_DEPTH + 1, "");
	doc = cc_yaml_parse(deep, strlen(deep), "t.yaml", &err);
	ck_assert_ptr_null(doc);
	ck_assert_str_eq(err.msg, "t.yaml:1:17: [0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper than 16 levels");
	free(deep);
	deep = repeat("", "[", 10000, "");
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_yaml_parse(deep, strlen(deep), "t.yaml", &err));
	ck_assert_msg(strstr(err.msg, "nesting deeper than 16 levels") != NULL, "%s", err.msg);

	/* Block mappings: "k0:\n k1:\n  k2: ..." */
	deep_block = malloc(64 * 64);
	ck_assert_ptr_nonnull(deep_block);
	p = deep_block;
	for (int i = 0; i <= CC_YAML_MAX_DEPTH; i++)
		p += sprintf(p, "%*sk%d:\n", i, "", i);
	sprintf(p, "%*sv\n", CC_YAML_MAX_DEPTH + 1, "");
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_yaml_parse(deep_block, strlen(deep_block), "t.yaml", &err));
	ck_assert_str_eq(err.msg, "t.yaml:16:16: k0.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12.k13.k14.k15: nesting deeper than 16 levels");
}
END_TEST

START_TEST(test_node_limit)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *ok = repeat("[", "0,", CC_YAML_MAX_NODES - 2, "0]");
	_cleanup_free_ char *big = repeat("[", "0,", CC_YAML_MAX_NODES - 1, "0]");
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(ok, strlen(ok), "t.yaml", &err);

	ck_assert_msg(doc != NULL, "%s", err.msg);
	ck_assert_int_eq(doc->nnodes, CC_YAML_MAX_NODES);
	ck_assert_ptr_null(cc_yaml_parse(big, strlen(big), "t.yaml", &err));
	ck_assert_str_eq(err.msg, "t.yaml:1:20000: [9999]: more than 10000 nodes");
}
END_TEST

START_TEST(test_no_source)
{
	static const char text[] = "{a: {b: half}}";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, strlen(text), NULL, &err);
	static const struct cc_yenum tab[] = { { "isolate", 0 }, { "full", 1 }, { NULL, 0 } };
	int v;

	ck_assert_msg(doc != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ynode_enum(cc_ynode_get(cc_ynode_get(doc->root, "a"), "b"), tab, &v, &err), -1);
	ck_assert_str_eq(err.msg, "a.b: expected isolate or full, got \"half\"");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_ynode_mapping(cc_ynode_get(cc_ynode_get(doc->root, "a"), "b"), &err), -1);
	ck_assert_str_eq(err.msg, "a.b: expected a mapping, got \"half\"");
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_yaml_parse("{a: 1", 5, NULL, &err));
	ck_assert_str_eq(err.msg, "line 2 column 1: did not find expected ',' or '}' (while parsing a flow mapping at line 1 column 1)");
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_yaml_parse("a: &x 1", 7, "", &err));
	ck_assert_str_eq(err.msg, "a: anchors and aliases are not allowed (anchor &x)");
}
END_TEST

/* One scalar document "v: <value>" read with each typed reader. */
static const struct cc_ynode *value_of(struct cc_ydoc **doc, const char *value)
{
	struct cc_err err = CC_ERR_INIT;
	char text[256];

	snprintf(text, sizeof(text), "v: %s\n", value);
	*doc = cc_yaml_parse(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(*doc != NULL, "%s: %s", value, err.msg);
	return cc_ynode_get((*doc)->root, "v");
}

static const struct {
	const char *in;
	long long out; /* -1: refused */
	const char *msg;
} uint_cases[] = {
	{ "4", 4, NULL },
	{ "1", 1, NULL },
	{ "8192", 8192, NULL },
	{ "!!int 12", 12, NULL },
	{ "0", -1, "t.yaml:1:1: v: expected an integer >= 1, got \"0\"" },
	{ "-1", -1, "t.yaml:1:1: v: expected an integer >= 1, got \"-1\"" },
	{ "8193", -1, "t.yaml:1:1: v: expected an integer <= 8192, got \"8193\"" },
	{ "99999999999999999999", -1, "t.yaml:1:1: v: expected an integer <= 8192, got \"99999999999999999999\"" },
	{ "184467440737095516160", -1, "t.yaml:1:1: v: expected an integer <= 8192, got \"184467440737095516160\"" },
	{ "4.5", -1, "t.yaml:1:1: v: expected an integer, got \"4.5\"" },
	{ "four", -1, "t.yaml:1:1: v: expected an integer, got \"four\"" },
	{ "\"4\"", -1, "t.yaml:1:1: v: expected an integer, got the string \"4\"" },
	{ "!!str 4", -1, "t.yaml:1:1: v: expected an integer, got the string \"4\"" },
	{ "+4", -1, "t.yaml:1:1: v: expected an integer, got \"+4\"" },
	{ "0x10", -1, "t.yaml:1:1: v: expected an integer, got \"0x10\"" },
	{ "1e3", -1, "t.yaml:1:1: v: expected an integer, got \"1e3\"" },
	{ "010", -1, "t.yaml:1:1: v: expected an integer without leading zeros, got \"010\"" },
	{ "--", -1, "t.yaml:1:1: v: expected an integer, got \"--\"" },
	{ "", -1, "t.yaml:1:1: v: expected an integer, got an empty value" },
	{ "~", -1, "t.yaml:1:1: v: expected an integer, got null" },
	{ "[4]", -1, "t.yaml:1:1: v: expected an integer, got a sequence" },
	{ "{a: 4}", -1, "t.yaml:1:1: v: expected an integer, got a mapping" },
};

START_TEST(test_uint_table)
{
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	const struct cc_ynode *n = value_of(&doc, uint_cases[_i].in);
	struct cc_err err = CC_ERR_INIT;
	long long v = -42;
	int r = cc_ynode_uint(n, 1, 8192, &v, &err);

	if (uint_cases[_i].out >= 0) {
		ck_assert_msg(r == 0, "%s: %s", uint_cases[_i].in, err.msg);
		ck_assert_int_eq(v, uint_cases[_i].out);
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(v, -42);
		ck_assert_str_eq(err.msg, uint_cases[_i].msg);
	}
}
END_TEST

START_TEST(test_bool_string_enum)
{
	static const struct cc_yenum tab[] = { { "local", 0 }, { "spread", 1 }, { "any", 2 }, { NULL, 0 } };
	static const struct {
		const char *in;
		int out; /* -1: refused */
		const char *msg;
	} bools[] = {
		{ "true", 1, NULL },
		{ "false", 0, NULL },
		{ "yes", -1, "t.yaml:1:1: v: expected true or false, got \"yes\"" },
		{ "True", -1, "t.yaml:1:1: v: expected true or false, got \"True\"" },
		{ "1", -1, "t.yaml:1:1: v: expected true or false, got \"1\"" },
		{ "\"true\"", -1, "t.yaml:1:1: v: expected true or false, got the string \"true\"" },
		{ "", -1, "t.yaml:1:1: v: expected true or false, got an empty value" },
	};
	static const struct {
		const char *in;
		const char *out; /* NULL: refused */
		const char *msg;
	} strings[] = {
		{ "web", "web", NULL },
		{ "\"\"", "", NULL },
		{ "'~'", "~", NULL },
		{ "0-3", "0-3", NULL },
		{ "|\n  two\n  lines", "two\nlines\n", NULL },
		{ "~", NULL, "t.yaml:1:1: v: expected a string, got null" },
		{ "", NULL, "t.yaml:1:1: v: expected a string, got an empty value" },
		{ "[a]", NULL, "t.yaml:1:1: v: expected a string, got a sequence" },
	};

	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, bools[i].in);
		struct cc_err err = CC_ERR_INIT;
		bool b = false;

		if (bools[i].out >= 0) {
			ck_assert_msg(cc_ynode_bool(n, &b, &err) == 0, "%s", err.msg);
			ck_assert_int_eq(b, bools[i].out);
		} else {
			ck_assert_int_eq(cc_ynode_bool(n, &b, &err), -1);
			ck_assert_str_eq(err.msg, bools[i].msg);
		}
	}
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, strings[i].in);
		struct cc_err err = CC_ERR_INIT;
		const char *s = NULL;

		if (strings[i].out) {
			ck_assert_msg(cc_ynode_string(n, &s, &err) == 0, "%s", err.msg);
			ck_assert_str_eq(s, strings[i].out);
		} else {
			ck_assert_int_eq(cc_ynode_string(n, &s, &err), -1);
			ck_assert_str_eq(err.msg, strings[i].msg);
		}
	}
	{
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, "nearby");
		struct cc_err err = CC_ERR_INIT;
		int v = -1;

		ck_assert_int_eq(cc_ynode_enum(n, tab, &v, &err), -1);
		ck_assert_str_eq(err.msg, "t.yaml:1:1: v: expected local, spread or any, got \"nearby\"");
		ck_assert_int_eq(v, -1);
	}
	{
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, "'spread'");
		struct cc_err err = CC_ERR_INIT;
		int v = -1;

		ck_assert_int_eq(cc_ynode_enum(n, tab, &v, &err), 0);
		ck_assert_int_eq(v, 1);
		ck_assert_str_eq(cc_yenum_name(tab, 2), "any");
		ck_assert_str_eq(cc_yenum_name(tab, 7), "?");
	}
	{
		/* Messages quote input safely: control bytes escaped, long
		 * values cut. */
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, "\"a\\tb\\\"c\\x01\"");
		struct cc_err err = CC_ERR_INIT;
		int v;

		ck_assert_int_eq(cc_ynode_enum(n, tab, &v, &err), -1);
		ck_assert_str_eq(err.msg, "t.yaml:1:1: v: expected local, spread or any, got \"a\\x09b\\\"c\\x01\"");
	}
	{
		_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
		const struct cc_ynode *n = value_of(&doc, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		struct cc_err err = CC_ERR_INIT;
		char buf[8];

		ck_assert_int_eq(cc_ynode_strcpy(n, buf, sizeof(buf), &err), -1);
		ck_assert_str_eq(err.msg, "t.yaml:1:1: v: longer than 7 characters");
		cc_err_clear(&err);
		ck_assert_int_eq(cc_ynode_enum(n, tab, (int *)buf, &err), -1);
		ck_assert_str_eq(err.msg, "t.yaml:1:1: v: expected local, spread or any, got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
	}
}
END_TEST

START_TEST(test_keys)
{
	static const char text[] = "outer:\n  good: 1\n  typo: 2\n";
	static const char *const allowed[] = { "good", "other", NULL };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, strlen(text), "t.yaml", &err);
	const struct cc_ynode *outer;

	ck_assert_msg(doc != NULL, "%s", err.msg);
	outer = cc_ynode_get(doc->root, "outer");
	ck_assert_int_eq(cc_ynode_mapping(outer, &err), 0);
	ck_assert_int_eq(cc_ynode_check_keys(outer, allowed, &err), -1);
	ck_assert_str_eq(err.msg, "t.yaml:3:3: outer.typo: unknown key (expected one of good, other)");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_ynode_missing(outer, "other", &err), -1);
	ck_assert_str_eq(err.msg, "t.yaml:1:1: outer.other: required key is missing");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_ynode_missing(doc->root, "top", &err), -1);
	ck_assert_str_eq(err.msg, "t.yaml:1:1: top: required key is missing");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_ynode_mapping(cc_ynode_get(outer, "good"), &err), -1);
	ck_assert_str_eq(err.msg, "t.yaml:2:3: outer.good: expected a mapping, got \"1\"");
}
END_TEST

static Suite *yaml_tree_suite(void)
{
	Suite *s = suite_create("yaml_tree");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tree_shape);
	tcase_add_test(tc, test_empty_stream);
	tcase_add_loop_test(tc, test_bad_table, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_billion_laughs);
	tcase_add_test(tc, test_depth_limit);
	tcase_add_test(tc, test_node_limit);
	tcase_add_test(tc, test_no_source);
	tcase_add_loop_test(tc, test_uint_table, 0, sizeof(uint_cases) / sizeof(uint_cases[0]));
	tcase_add_test(tc, test_bool_string_enum);
	tcase_add_test(tc, test_keys);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(yaml_tree_suite)
