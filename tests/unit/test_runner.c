/* tests/unit/run.sh's counts: a test case that skips (cc_test_skip) counts
 * once, as skipped, never as passed, whatever it printed; CI=true fails on
 * a skip.  The subject is this binary itself: with CC_RUNNER_SUBJECT set,
 * main runs the subject suite below instead, and run.sh is run on it. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "testlib.h"

/* ---- the subject: what run.sh is run on ----------------------------------- */

START_TEST(subject_pass)
{
	ck_assert_int_eq(strlen("four"), 4);
}
END_TEST

/* Two skips, one of them over two lines: one skipped test case. */
START_TEST(subject_skip_twice)
{
	cc_test_skip("first reason");
	cc_test_skip("second reason\nwith a second line");
}
END_TEST

/* A loop test: iterations 0 and 2 skip, 1 passes. */
START_TEST(subject_skip_some)
{
	if (_i != 1)
		cc_test_skip("iteration %d has nothing to check", _i);
}
END_TEST

/* Skipped part of it, then failed: a failure. */
START_TEST(subject_skip_then_fail)
{
	cc_test_skip("part of it");
	ck_abort_msg("then a failure");
}
END_TEST

/* A skip by hand, which run.sh cannot count. */
START_TEST(subject_raw_skip)
{
	printf("SKIPPED: no test named\n");
}
END_TEST

static Suite *subject(const char *mode)
{
	Suite *s = suite_create("subject");
	TCase *tc = tcase_create("subject");

	tcase_add_test(tc, subject_pass);
	tcase_add_test(tc, subject_skip_twice);
	tcase_add_loop_test(tc, subject_skip_some, 0, 3);
	if (!strcmp(mode, "fail"))
		tcase_add_test(tc, subject_skip_then_fail);
	if (!strcmp(mode, "raw"))
		tcase_add_test(tc, subject_raw_skip);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- the tests: run.sh on the subject ------------------------------------- */

/* This binary. */
static const char *self(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	return path;
}

/* run.sh on this binary as subject MODE, CI=`ci` (NULL: unset); its output
 * in *out, its exit status returned. */
static int run_subject(const char *mode, const char *ci, char **out)
{
	return cc_test_sh(out, "unset CI; %s%s CC_RUNNER_SUBJECT=%s sh '%s/tests/unit/run.sh' '%s'", ci ? "CI=" : "",
			  ci ? ci : "", mode, CC_SOURCE_DIR, self());
}

/* The last line of `out`. */
static const char *last_line(const char *out)
{
	size_t len = strlen(out);
	const char *p;

	ck_assert_msg(len > 1 && out[len - 1] == '\n', "%s", out);
	for (p = out + len - 1; p > out && p[-1] != '\n'; p--)
		;
	return p;
}

static int count(const char *out, const char *needle)
{
	int n = 0;

	for (const char *p = out; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

START_TEST(test_skips_counted_once)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_msg(run_subject("skips", NULL, &out) == 0, "%s", out);
	ck_assert_str_eq(last_line(out), "unit: 2 passed, 0 failed, 3 skipped\n");
	/* One line shown per skipped test case, its first reason. */
	ck_assert_int_eq(count(out, "SKIPPED: "), 3);
	ck_assert_msg(strstr(out, "SKIPPED: test_runner:subject_skip_twice:0: first reason\n"), "%s", out);
	ck_assert_msg(strstr(out, "SKIPPED: test_runner:subject_skip_some:0: iteration 0 has nothing to check\n"), "%s", out);
	ck_assert_msg(strstr(out, "SKIPPED: test_runner:subject_skip_some:2: iteration 2 has nothing to check\n"), "%s", out);
	ck_assert_msg(strstr(out, "Checks: 5, Failures: 0, Errors: 0, Skipped: 3\n"), "%s", out);
}
END_TEST

/* What the subject itself prints: every skip, each on one line. */
START_TEST(test_skip_lines)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(cc_test_sh(&out, "CC_RUNNER_SUBJECT=skips '%s'", self()), 0);
	ck_assert_msg(strstr(out, "\nSKIPPED: test_runner:subject_skip_twice:0: first reason\n"
				  "SKIPPED: test_runner:subject_skip_twice:0: second reason with a second line\n"),
		      "%s", out);
	ck_assert_int_eq(count(out, "SKIPPED: "), 4);
}
END_TEST

/* CI=false is no CI; CI=true (or 1) fails on a skip, saying why. */
START_TEST(test_ci_fails_on_skip)
{
	_cleanup_free_ char *out = NULL, *out2 = NULL, *out3 = NULL;

	ck_assert_msg(run_subject("skips", "false", &out) == 0, "%s", out);
	ck_assert_str_eq(last_line(out), "unit: 2 passed, 0 failed, 3 skipped\n");
	ck_assert_int_eq(run_subject("skips", "true", &out2), 1);
	ck_assert_str_eq(last_line(out2), "unit: 2 passed, 0 failed, 3 skipped\n");
	ck_assert_msg(strstr(out2, "\nunit: CI=true and 3 test case(s) skipped (SKIPPED lines above): in CI every test "
				   "must run (make deps; fixtures in ../shared/fixtures or $CC_SHARED_DIR/fixtures)\n"),
		      "%s", out2);
	ck_assert_int_eq(run_subject("skips", "1", &out3), 1);
}
END_TEST

START_TEST(test_skip_then_fail_is_a_failure)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(run_subject("fail", NULL, &out), 1);
	ck_assert_str_eq(last_line(out), "unit: 2 passed, 1 failed, 3 skipped\n");
	ck_assert_msg(strstr(out, ":F:subject:subject_skip_then_fail:0: then a failure\n"), "%s", out);
	ck_assert_ptr_null(strstr(out, "SKIPPED: test_runner:subject_skip_then_fail"));
}
END_TEST

/* A "SKIPPED" line that names no test cannot be counted: the suite fails. */
START_TEST(test_raw_skip_breaks_the_suite)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(run_subject("raw", NULL, &out), 1);
	ck_assert_str_eq(last_line(out), "unit: 3 passed, 1 failed, 3 skipped\n");
	ck_assert_msg(strstr(out, "unit: test_runner: a skip not from cc_test_skip, so not countable: SKIPPED: no test "
				  "named\n"),
		      "%s", out);
}
END_TEST

/* Outside a test there is no test to count: cc_test_skip aborts. */
START_TEST(test_skip_outside_a_test)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(run_subject("outside", NULL, &out), 1);
	ck_assert_str_eq(last_line(out), "unit: 0 passed, 1 failed, 0 skipped\n");
	ck_assert_msg(strstr(out, "testlib: cc_test_skip outside a test (\"in main\"): skip inside START_TEST\n"), "%s",
		      out);
	ck_assert_msg(strstr(out, "\nunit: test_runner did not finish (exit 134)\n"), "%s", out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("runner");
	TCase *tc = tcase_create("counts");

	tcase_add_test(tc, test_skips_counted_once);
	tcase_add_test(tc, test_skip_lines);
	tcase_add_test(tc, test_ci_fails_on_skip);
	tcase_add_test(tc, test_skip_then_fail_is_a_failure);
	tcase_add_test(tc, test_raw_skip_breaks_the_suite);
	tcase_add_test(tc, test_skip_outside_a_test);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *mode = getenv("CC_RUNNER_SUBJECT");
	SRunner *sr;
	int nf;

	if (mode && !strcmp(mode, "outside"))
		cc_test_skip("in main");
	sr = srunner_create(mode ? subject(mode) : suite());
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
