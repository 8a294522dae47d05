/* systemd through systemctl (plugin/core/systemctl.h): which cgroup paths name
 * a slice unit, when the host counts as systemd-booted, and what a failed
 * systemctl leaves in the error (the real binary, its real message). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
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
	static const char *const ok[] = { "--version", NULL };
	static const char *const bad[] = { "no-such-verb", NULL };
	struct cc_err err = CC_ERR_INIT;

	if (access("/usr/bin/systemctl", X_OK) != 0 && access("/bin/systemctl", X_OK) != 0) {
		cc_test_skip("no systemctl on this host");
		return;
	}
	ck_assert_msg(cc_systemctl(ok, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cc_systemctl(bad, NULL, &err), -1);
	/* The command, its status and systemctl's own line, on one line. */
	ck_assert_msg(strstr(err.msg, "systemctl no-such-verb: exited with status 1: "), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "no-such-verb"), "%s", err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* A stand-in systemctl in DIR: it records its arguments (one a line) and
 * its whole environment, then runs BODY. */
static void standin(const char *dir, const char *body)
{
	char script[1024];

	snprintf(script, sizeof(script),
		 "#!/bin/sh\nfor a in \"$@\"; do printf '%%s\\n' \"$a\"; done >%s/args\n/usr/bin/env >%s/env\n%s\n", dir,
		 dir, body);
	cc_test_write_file(dir, "systemctl", script);
	ck_assert_int_eq(cc_test_sh(NULL, "chmod 0755 %s/systemctl", dir), 0);
}

/* systemctl gets none of the caller's environment (a SYSTEMD_* or PATH
 * of the runtime's or the admin's shell), only PATH and LANG=C, and "--"
 * before the unit names, so that a unit named like an option stays a
 * unit. */
START_TEST(test_systemctl_env_and_args)
{
	static const char *const opts[] = { "--no-block", "try-restart", NULL };
	static const char *const units[] = { "-H", "irqbalance.service", NULL };
	char dir[] = "/tmp/cc-sysctl-XXXXXX", path[128];
	_cleanup_free_ char *args = NULL, *env = NULL;
	struct cc_err err = CC_ERR_INIT;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	standin(dir, "exit 0");
	setenv("SYSTEMD_PAGER", "/tmp/evil", 1);
	setenv("CC_TEST_LEAK", "1", 1);
	snprintf(path, sizeof(path), "%s/systemctl", dir);
	ck_assert_msg(cc_systemctl_at(path, opts, units, 2000, &err) == 0, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/args", dir);
	args = cc_test_slurp(path);
	ck_assert_str_eq(args, "--no-block\ntry-restart\n--\n-H\nirqbalance.service\n");
	snprintf(path, sizeof(path), "%s/env", dir);
	env = cc_test_slurp(path);
	/* The shell adds PWD (and may add SHLVL, _): only those beside ours. */
	ck_assert_msg(strstr(env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n") && strstr(env, "LANG=C\n"), "%s", env);
	ck_assert_msg(!strstr(env, "SYSTEMD_") && !strstr(env, "CC_TEST_LEAK") && !strstr(env, "HOME="), "%s", env);
	unsetenv("SYSTEMD_PAGER");
	unsetenv("CC_TEST_LEAK");
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* A systemctl that does not answer (a hung manager) is killed at the
 * deadline, and the error names the command and the wait. */
START_TEST(test_systemctl_deadline)
{
	static const char *const opts[] = { "set-property", "--runtime", NULL };
	static const char *const units[] = { "corecarve.slice", "AllowedCPUs=0-3", NULL };
	char dir[] = "/tmp/cc-sysctl-XXXXXX", path[128];
	struct cc_err err = CC_ERR_INIT;
	struct timespec t0, t1;
	long ms;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	standin(dir, "exec sleep 30");
	snprintf(path, sizeof(path), "%s/systemctl", dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(cc_systemctl_at(path, opts, units, 300, &err), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ck_assert_int_eq(err.code, ETIMEDOUT);
	ck_assert_msg(strstr(err.msg, "systemctl set-property --runtime -- corecarve.slice AllowedCPUs=0-3: no answer "
				      "within 0.300 s, killed"),
		      "%s", err.msg);
	ck_assert_msg(ms >= 250 && ms < 5000, "returned after %ld ms", ms);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
}
END_TEST

/* A slice's CPUs and quota through the hook's helper (no fixed command):
 * systemctl set-property --runtime -- UNIT PROPS, for the three
 * properties corecarve sets.  What is not a slice and those is refused
 * by the caller, and by the helper when sent raw (a confined process
 * taken over sends what it likes), as is "run the command" when the
 * helper has none. */
START_TEST(test_set_through_helper)
{
	char dir[] = "/tmp/cc-sysctl-XXXXXX", path[128];
	_cleanup_free_ char *args = NULL;
	struct cc_err err = CC_ERR_INIT;
	static const char *const cpus[] = { "AllowedCPUs=0-1,4", NULL };
	static const char *const quota[] = { "CPUQuota=150.50%", "CPUQuotaPeriodSec=100000us", NULL };
	static const char *const none[] = { "CPUQuota=", "CPUQuotaPeriodSec=100000us", NULL };
	static const char *const bad[][3] = {
		{ "AllowedCPUs=1 2", NULL }, { "CPUQuota=1.234%", NULL }, { "CPUQuota=50", NULL },
		{ "CPUQuotaPeriodSec=1s", NULL }, { "Delegate=yes", NULL }, { NULL },
	};
	static const char *const raw[][2] = {
		{ "p--evil.slice\0" "AllowedCPUs=1", "28" }, { "pkubepods.slice\0" "AllowedCPUs=1;x", "32" },
		{ "px.service\0" "AllowedCPUs=1", "25" },    { "pkubepods.slice\0" "ExecStart=/x", "29" },
		{ "pkubepods.slice\0", "16" },               { "pkubepods.slice\0" "AllowedCPUs=1", "29" },
		{ "r", "1" },
	};

	ck_assert_ptr_nonnull(mkdtemp(dir));
	standin(dir, "exit 0");
	snprintf(path, sizeof(path), "%s/systemctl", dir);
	ck_assert_msg(cc_systemctl_helper_start(path, NULL, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(cc_systemctl_helper_fd(), 0);
	snprintf(path, sizeof(path), "%s/args", dir);
	ck_assert_msg(cc_systemd_set("kubepods-besteffort.slice", cpus, &err) == 0, "%s", err.msg);
	args = cc_test_slurp(path);
	ck_assert_str_eq(args, "set-property\n--runtime\n--\nkubepods-besteffort.slice\nAllowedCPUs=0-1,4\n");
	free(args);
	ck_assert_msg(cc_systemd_set("kubepods-pod1.slice", quota, &err) == 0, "%s", err.msg);
	args = cc_test_slurp(path);
	ck_assert_str_eq(args, "set-property\n--runtime\n--\nkubepods-pod1.slice\nCPUQuota=150.50%\n"
			       "CPUQuotaPeriodSec=100000us\n");
	free(args);
	ck_assert_msg(cc_systemd_set("kubepods-pod1.slice", none, &err) == 0, "%s", err.msg);
	args = cc_test_slurp(path);
	ck_assert_str_eq(args, "set-property\n--runtime\n--\nkubepods-pod1.slice\nCPUQuota=\nCPUQuotaPeriodSec=100000us\n");
	ck_assert_int_eq(cc_systemd_set("init.scope", cpus, &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(cc_systemd_set("kubepods.slice", bad[i], &err), -1);
		ck_assert_int_eq(err.code, EINVAL);
	}
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		char rep[2048];
		size_t n = (size_t)atoi(raw[i][1]);

		ck_assert_int_eq(send(cc_systemctl_helper_fd(), raw[i][0], n, 0), (ssize_t)n);
		ck_assert_int_gt(recv(cc_systemctl_helper_fd(), rep, sizeof(rep), 0), 0);
		ck_assert_msg(*(int *)rep == EINVAL, "request %zu: code %d", i, *(int *)rep);
	}
	/* Nothing ran for them: the last command is still the quota's. */
	free(args);
	args = cc_test_slurp(path);
	ck_assert_str_eq(args, "set-property\n--runtime\n--\nkubepods-pod1.slice\nCPUQuota=\nCPUQuotaPeriodSec=100000us\n");
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", dir), 0);
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
	tcase_add_test(tc, test_systemctl_env_and_args);
	tcase_add_test(tc, test_systemctl_deadline);
	tcase_add_test(tc, test_set_through_helper);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(systemctl_suite)
