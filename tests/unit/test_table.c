/* The CLI's tables (cli/table.h): libsmartcols is loaded only by commands
 * that print a table, never by the hook (its start-up cost,
 * docs/performance.md), and not linked at all; the table options work the
 * same on every command. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "testlib.h"

/* The binary names libsmartcols in no DT_NEEDED entry: it is dlopen()ed. */
START_TEST(test_not_linked)
{
	const char *bin = cc_test_bin("table linking");
	_cleanup_free_ char *out = NULL;

	if (!bin)
		return;
	if (cc_test_sh(NULL, "command -v readelf >/dev/null") != 0) {
		cc_test_skip("readelf not installed (binutils)");
		return;
	}
	ck_assert_int_eq(cc_test_sh(&out, "readelf -d '%s' | grep NEEDED", bin), 0);
	ck_assert_msg(strstr(out, "libc.so") && !strstr(out, "smartcols"), "%s", out);
}
END_TEST

/* What the dynamic loader loads: LD_DEBUG=libs names every object. */
START_TEST(test_loaded_only_for_tables)
{
	const char *bin = cc_test_bin("table loading");
	char dir[] = "/tmp/cc-table-XXXXXX";
	_cleanup_free_ char *out = NULL;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* The hook's poststop of a container it never carved: a whole hook run. */
	ck_assert_int_eq(cc_test_sh(&out,
				    "echo '{\"ociVersion\":\"1.0.2\",\"id\":\"c-none\",\"status\":\"stopped\",\"pid\":0,"
				    "\"bundle\":\"/nonexistent\"}' | " CC_TEST_HOOK_ENV "LD_DEBUG=libs '%s' hook poststop "
				    "--state '%s' 2>&1",
				    bin, dir),
			 0);
	ck_assert_msg(strstr(out, "calling init: ") && !strstr(out, "smartcols"), "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "LD_DEBUG=libs '%s' status --state '%s' --synthetic 'pack:1 core:2 pu:2' 2>&1",
				    bin, dir),
			 0);
	ck_assert_msg(strstr(out, "libsmartcols.so.1"), "%s", out);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* --width lays the table out for that many columns, wrapping at spaces;
 * without it (a pipe) nothing is cut or wrapped; --raw and --no-headers. */
START_TEST(test_width_raw_headers)
{
	const char *bin = cc_test_bin("table options");
	char dir[] = "/tmp/cc-table-XXXXXX";
	_cleanup_free_ char *out = NULL;
	char *line, *save = NULL;
	int wrapped = 0;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --state '%s' --synthetic 'pack:1 core:2 pu:1' --table capacity "
					  "-o CLASS,NOTE --width 40",
				    bin, dir),
			 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(strlen(line) <= 40, "%zu columns: \"%s\"", strlen(line), line);
		wrapped += !strncmp(line, "           ", 11);
	}
	ck_assert_int_gt(wrapped, 0);
	free(out);
	out = NULL;
	/* In a pipe, one line per row whatever its length. */
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --state '%s' --synthetic 'pack:1 core:2 pu:1' --table capacity "
					  "-o CLASS,NOTE -n | wc -l",
				    bin, dir),
			 0);
	ck_assert_str_eq(out, "4\n");
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --state '%s' --synthetic 'pack:1 core:4 pu:2' --table capacity "
					  "-o +SMALLEST --raw",
				    bin, dir),
			 0);
	ck_assert_msg(strstr(out, "CLASS CORE-CLASS TOTAL RESERVED CARVED PARKED FREE LARGEST SMALLEST\n"
				  "latency performance 8 2 0 0 6 2 1\n") == out,
		      "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --table capacity --width 5 --synthetic 'pack:1 pu:1'", bin), 2);
	ck_assert_str_eq(out, "corecarve: --width: expected a number of columns from 20 to 10000, got \"5\"\n");
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --table capacity -o '' --synthetic 'pack:1 pu:1'", bin), 2);
	ck_assert_str_eq(out, "corecarve: --output: no column named\n");
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

static Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_not_linked);
	tcase_add_test(tc, test_loaded_only_for_tables);
	tcase_add_test(tc, test_width_raw_headers);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(table_suite)
