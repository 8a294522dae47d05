/* systemd through systemctl (plugin/core/systemctl.h): which cgroup paths name
 * a slice unit, when the host counts as systemd-booted, and what a failed
 * systemctl leaves in the error (the real binary, its real message). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "root.h"
#include "systemctl.h"
#include "testlib.h"

static const struct {
	const char *cgroup;
	const char *unit; /* NULL: no slice */
} slices[] = {
	{ "/corecarve.slice", "corecarve.slice" },
	{ "/a.slice/a-b.slice", "a-b.slice" },
	{ "/machine.slice/libpod-1.scope", NULL },
	{ "/corecarve", NULL },
	{ "/.slice", NULL },
	{ "/x.slice/", NULL },
	{ "x.slice", NULL },
	{ "/", NULL },
	{ "", NULL },
};

START_TEST(test_slice_unit)
{
	const char *got = cc_slice_unit(slices[_i].cgroup);

	if (!slices[_i].unit)
		ck_assert_msg(!got, "%s: got %s", slices[_i].cgroup, got);
	else
		ck_assert_str_eq(got ? got : "(null)", slices[_i].unit);
}
END_TEST

/* A captured tree is never the systemd systemctl would reach, even with
 * /run/systemd/system in it. */
START_TEST(test_booted_not_on_a_tree)
{
	char dir[] = "/tmp/cc-sysctl-XXXXXX", path[128];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run/systemd/system", dir);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s'", path), 0);
	root = cc_root_open(dir, &err);
	ck_assert_msg(root, "%s", err.msg);
	ck_assert(!cc_systemd_booted(root));
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

START_TEST(test_systemctl_result)
{
	static const char *const ok[] = { "systemctl", "--version", NULL };
	static const char *const bad[] = { "systemctl", "no-such-verb", NULL };
	struct cc_err err = CC_ERR_INIT;

	if (access("/usr/bin/systemctl", X_OK) != 0 && access("/bin/systemctl", X_OK) != 0) {
		cc_test_skip("no systemctl on this host");
		return;
	}
	ck_assert_msg(cc_systemctl(ok, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cc_systemctl(bad, &err), -1);
	/* The command, its status and systemctl's own line, on one line. */
	ck_assert_msg(strstr(err.msg, "systemctl no-such-verb: exited with status 1: "), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "no-such-verb"), "%s", err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

static Suite *systemctl_suite(void)
{
	Suite *s = suite_create("systemctl");
	TCase *tc = tcase_create("systemctl");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_slice_unit, 0, (int)(sizeof(slices) / sizeof(slices[0])));
	tcase_add_test(tc, test_booted_not_on_a_tree);
	tcase_add_test(tc, test_systemctl_result);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(systemctl_suite)
