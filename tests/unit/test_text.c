/* Text that quotes hostile input (plugin/core/text.h) and the errors made
 * of it (error.h): valid UTF-8 on one line, cut between characters. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "error.h"
#include "testlib.h"
#include "text.h"

static const struct {
	const char *in, *out;
} escapes[] = {
	{ "plain ascii", "plain ascii" },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	{ "a\nb\tc\rd", "a\\nb\\tc\\rd" },
	{ "\x1b[31mred", "\\x1b[31mred" },
	{ "del\x7f", "del\\x7f" },
	/* Bytes that are no UTF-8: a stray continuation, a lone lead, an
	 * overlong "/", a surrogate, past U+10FFFF. */
	{ "\x80", "\\x80" },
	{ "\xc3(", "\\xc3(" },
	{ "\xc0\xaf", "\\xc0\\xaf" },
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },
	/* A C1 control, the bidi overrides and isolates, a zero-width space. */
	{ "\xc2\x9b", "\\u009b" },
	{ "ab\xe2\x80\xae" "dc", "ab\\u202edc" },
	{ "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069" },
	{ "a\xe2\x80\x8b" "b", "a\\u200bb" },
};

START_TEST(test_escape)
{
	char out[128], again[128];

	cc_text_escape(out, sizeof(out), escapes[_i].in);
	ck_assert_str_eq(out, escapes[_i].out);
	cc_text_escape(again, sizeof(again), out);
	ck_assert_str_eq(again, out); /* idempotent */
}
END_TEST

/* Too small a buffer: cut before the first character or escape that does
 * not fit whole. */
START_TEST(test_escape_cut)
{
	char out[6];

	ck_assert_int_eq(cc_text_escape(out, sizeof(out), "ab\xe2\x82\xac\xe2\x82\xac"), 5);
	ck_assert_str_eq(out, "ab\xe2\x82\xac");
	ck_assert_int_eq(cc_text_escape(out, sizeof(out), "abcd\n"), 4);
	ck_assert_str_eq(out, "abcd");
	ck_assert_int_eq(cc_text_escape(out, 1, "abc"), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

/* Whether `s` is valid UTF-8 with no control character. */
static bool clean_utf8(const char *s)
{
	char copy[2 * CC_ERR_MSG_MAX];

	cc_text_escape(copy, sizeof(copy), s);
	return !strcmp(copy, s);
}

/* A refusal that quotes a long annotation of multi-byte characters is
 * cut between two of them (before: inside one, and journald stored the
 * line as a blob); one that quotes a newline stays one line. */
START_TEST(test_err_cut)
{
	char val[3 * CC_ERR_MSG_MAX];
	struct cc_err err = CC_ERR_INIT;

	for (size_t i = 0; i + 2 < sizeof(val); i += 2)
		memcpy(val + i, "\xc3\xa9", 2);
	val[sizeof(val) - 2] = '\0';
	for (int shift = 0; shift < 4; shift++) {
		cc_err_clear(&err);
		cc_err_set(&err, EINVAL, "%.*sannotation: \"%s\"", shift, "xxx", val);
		ck_assert_msg(clean_utf8(err.msg), "shift %d: cut inside a character", shift);
		ck_assert_uint_ge(strlen(err.msg), CC_ERR_MSG_MAX - 2);
	}
	cc_err_clear(&err);
	cc_err_set(&err, EINVAL, "class: \"%s\"", "a\nfake line\xe2\x80\xae");
	ck_assert_str_eq(err.msg, "class: \"a\\nfake line\\u202e\"");
	/* A prefix that pushes it over the limit cuts between characters too. */
	for (int shift = 0; shift < 4; shift++) {
		cc_err_clear(&err);
		cc_err_set(&err, EINVAL, "%s", val);
		cc_err_prefix(&err, "%.*sctx", shift, "yyy");
		ck_assert_msg(clean_utf8(err.msg), "prefix shift %d: cut inside a character", shift);
		ck_assert_int_eq(strncmp(err.msg, "yyy", (size_t)shift), 0);
	}
	cc_err_clear(&err);
	cc_err_sys(&err, EACCES, "id \"%s\"", "x\x1b");
	ck_assert_str_eq(err.msg, "id \"x\\x1b\": Permission denied");
}
END_TEST

static Suite *text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("text");

	tcase_add_loop_test(tc, test_escape, 0, sizeof(escapes) / sizeof(escapes[0]));
	tcase_add_test(tc, test_escape_cut);
	tcase_add_test(tc, test_err_cut);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(text_suite)
