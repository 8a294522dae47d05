/* tests/e2e/kwarn.sh, the guests' check that a scenario left the kernel
 * quiet (issue #45), against recorded console text: the 6.12 warning
 * 30-audit provoked, a quiet log, an old warning before the mark, a taint
 * alone.  It must be able to fail, so most cases here are ones it fails. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#define KWARN CC_SOURCE_DIR "/tests/e2e/kwarn.sh"

/* The 6.12 guest's log around 30-audit's repair (dmesg's format; the
 * trace as the issue recorded it). */
static const char warn_612[] =
	"[   41.100311] cgroup: some boot message\n"
	"[  118.402215] ------------[ cut here ]------------\n"
	"[  118.402230] WARNING: CPU: 15 PID: 2211 at kernel/cgroup/cpuset.c:1313 partition_xcpus_del+0xa3/0xb0\n"
	"[  118.402301] Modules linked in: overlay virtio_net net_failover failover virtio_blk\n"
	"[  118.402340] CPU: 15 UID: 0 PID: 2211 Comm: corecarve Not tainted 6.12.95+deb12-cloud-amd64 #1\n"
	"[  118.402390] RIP: 0010:partition_xcpus_del+0xa3/0xb0\n"
	"[  118.402430] Call Trace:\n"
	"[  118.402441]  <TASK>\n"
	"[  118.402460]  remote_partition_disable+0x99/0x120\n"
	"[  118.402480]  update_prstate+0x2cb/0x550\n"
	"[  118.402500]  sched_partition_write+0x90/0x1c0\n"
	"[  118.402520]  kernfs_fop_write_iter+0x13c/0x1d0\n"
	"[  118.402540]  vfs_write+0x2a4/0x440\n"
	"[  118.402560] ---[ end trace 0000000000000000 ]---\n";

static int scan(char **out, const char *log, const char *since, unsigned before, unsigned after)
{
	char *f = cc_test_write_tmp(log);
	int rc = cc_test_sh(out, ". %s && kwarn_scan %s %u %u <%s", KWARN, since, before, after, f);

	unlink(f);
	free(f);
	return rc;
}

/* The warning after the mark fails, with its first line and trace. */
START_TEST(test_warning_fails)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, warn_612, "100.0", 0, 512), 1);
	ck_assert_msg(strstr(out, "kernel: WARNING: CPU: 15 PID: 2211 at kernel/cgroup/cpuset.c:1313 "
				  "partition_xcpus_del+0xa3/0xb0\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "  remote_partition_disable+0x99/0x120\n"), "%s", out);
	/* The call trace's frames, not the registers and modules. */
	ck_assert_msg(strstr(out, "  sched_partition_write+0x90/0x1c0\n"), "%s", out);
	ck_assert_msg(strstr(out, "  vfs_write+0x2a4/0x440\n"), "%s", out);
	ck_assert_ptr_null(strstr(out, "Modules linked in"));
	ck_assert_ptr_null(strstr(out, "RIP:"));
	ck_assert_msg(strstr(out, "kernel: tainted 512 (was 0): new flags W\n"), "%s", out);
	free(out);
}
END_TEST

/* Even without a taint change (a flag set earlier), a new WARNING fails. */
START_TEST(test_warning_without_new_taint)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, warn_612, "100.0", 512, 512), 1);
	ck_assert_ptr_nonnull(strstr(out, "kernel: WARNING: "));
	ck_assert_ptr_null(strstr(out, "kernel: tainted"));
	free(out);
}
END_TEST

/* A warning from before the mark is another scenario's: quiet here. */
START_TEST(test_before_mark_is_quiet)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, warn_612, "118.402560", 512, 512), 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

/* A taint alone (a module, a machine check) fails, naming the flags. */
START_TEST(test_taint_alone_fails)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, "[  200.000001] e2e: nothing to see\n", "100.0", 1, 1 | 16 | 4096), 1);
	ck_assert_str_eq(out, "kernel: tainted 4113 (was 1): new flags M O\n");
	free(out);
}
END_TEST

/* BUG, Oops and the kernel's own log level prefix (dmesg -r). */
START_TEST(test_bug_and_oops)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, "<1>[  300.5] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
				    "<1>[  300.6] #PF: supervisor read access in kernel mode\n"
				    "<4>[  300.7]  cpuset_write_resmask+0x1a/0x30\n",
			      "300", 0, 128),
			 1);
	ck_assert_msg(strstr(out, "kernel: BUG: kernel NULL pointer dereference"), "%s", out);
	ck_assert_msg(strstr(out, "  cpuset_write_resmask+0x1a/0x30"), "%s", out);
	ck_assert_ptr_null(strstr(out, "#PF"));
	ck_assert_msg(strstr(out, "new flags D"), "%s", out);
	free(out);
	ck_assert_int_eq(scan(&out, "[  9.1] Oops: general protection fault, probably for non-canonical address\n", "0", 0,
			      0),
			 1);
	ck_assert_msg(strstr(out, "kernel: Oops: general protection fault"), "%s", out);
	free(out);
}
END_TEST

/* A quiet log and taint: status 0, nothing printed. */
START_TEST(test_quiet)
{
	char *out = NULL;

	ck_assert_int_eq(scan(&out, "[  50.0] cgroup: fork rejected\n[  51.0] virtio_net: link up\n", "10", 0, 0), 0);
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_int_eq(scan(&out, "", "0", 0, 0), 0);
	free(out);
}
END_TEST

/* kwarn_judge and kwarn_report: a warning passes only where the scenario
 * declared its function (kwarn_expect), and then only that one with the
 * W taint; anything else fails the scenario. */
static int judge(char **out, const char *scan_out, const char *expect)
{
	char *s = cc_test_write_tmp(scan_out);
	char *e = expect ? cc_test_write_tmp(expect) : NULL;
	int rc = cc_test_sh(out, ". %s && kwarn_judge %s <%s", KWARN, e ? e : "", s);

	unlink(s);
	free(s);
	if (e) {
		unlink(e);
		free(e);
	}
	return rc;
}

START_TEST(test_judge)
{
	static const char expect[] = "partition_xcpus_del Linux 6.12 keeps an invalid remote partition (docs/audit.md)\n";
	char *out = NULL, *scanned = NULL;

	ck_assert_int_eq(scan(&scanned, warn_612, "100.0", 0, 512), 1);
	/* Declared: its reason printed. */
	ck_assert_int_eq(judge(&out, scanned, expect), 0);
	ck_assert_str_eq(out, "partition_xcpus_del: Linux 6.12 keeps an invalid remote partition (docs/audit.md)\n");
	free(out);
	/* Not declared, or another function declared: fails. */
	ck_assert_int_eq(judge(&out, scanned, NULL), 1);
	free(out);
	ck_assert_int_eq(judge(&out, scanned, "remote_partition_disable a frame, not the warning's function\n"), 1);
	free(out);
	ck_assert_int_eq(judge(&out, scanned, "partition_xcpus_de prefix only\n"), 1);
	free(out);
	free(scanned);
	/* A second, undeclared warning after the declared one fails. */
	{
		char two[sizeof(warn_612) + 256];

		snprintf(two, sizeof(two), "%s[  130.1] WARNING: CPU: 1 PID: 9 at kernel/sched/core.c:99 other_fn+0x1/0x2\n",
			 warn_612);
		ck_assert_int_eq(scan(&scanned, two, "100.0", 0, 512), 1);
		ck_assert_msg(strstr(scanned, "kernel: WARNING: CPU: 1 PID: 9"), "%s", scanned);
		ck_assert_int_eq(judge(&out, scanned, expect), 1);
		free(out);
		free(scanned);
	}
	/* A taint beyond W (D: the kernel died in a task) fails. */
	ck_assert_int_eq(scan(&scanned, warn_612, "100.0", 0, 512 | 128), 1);
	ck_assert_int_eq(judge(&out, scanned, expect), 1);
	free(out);
	free(scanned);
	/* A BUG is never declared away. */
	ck_assert_int_eq(judge(&out, "kernel: BUG: unable to handle page fault\n", "BUG: whatever\n"), 1);
	free(out);
}
END_TEST

/* kwarn_report's lines, as the runners print them, from a log the guest
 * would have: a quiet scenario passes, a declared warning is INFO, an
 * undeclared one is a FAIL counted by run.sh. */
START_TEST(test_report)
{
	char *log = cc_test_write_tmp(warn_612);
	char *exp = cc_test_write_tmp("partition_xcpus_del known kernel bug\n");
	char *out = NULL;

	/* kwarn_since reads dmesg and /proc: give it the recorded log. */
	ck_assert_int_eq(cc_test_sh(&out, ". %s && kwarn_since() { kwarn_scan \"${1%% *}\" 0 512 <%s; } && "
				    "kwarn_report 30-audit '100.0 0' %s",
				    KWARN, log, exp),
			 0);
	ck_assert_msg(strstr(out, "INFO 30-audit: the kernel warned as the scenario declared it would "
				  "(partition_xcpus_del: known kernel bug):\n") &&
			      strstr(out, "INFO 30-audit: kernel warned: kernel: WARNING: CPU: 15") && !strstr(out, "FAIL"),
		      "%s", out);
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, ". %s && kwarn_since() { kwarn_scan \"${1%% *}\" 0 512 <%s; } && "
				    "kwarn_report 30-audit '100.0 0' /nonexistent",
				    KWARN, log),
			 0);
	ck_assert_msg(out == strstr(out, "FAIL 30-audit/kernel-quiet: WARNING: CPU: 15 PID: 2211 at "
					 "kernel/cgroup/cpuset.c:1313 partition_xcpus_del+0xa3/0xb0\n") &&
			      strstr(out, "remote_partition_disable+0x99/0x120\n"),
		      "%s", out);
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, ". %s && kwarn_since() { kwarn_scan \"${1%% *}\" 0 0 <%s; } && "
				    "kwarn_report 10-hook '200.0 0' /nonexistent",
				    KWARN, log),
			 0);
	ck_assert_str_eq(out, "PASS 10-hook/kernel-quiet\n");
	free(out);
	unlink(log);
	unlink(exp);
	free(log);
	free(exp);
}
END_TEST

static Suite *kwarn_suite(void)
{
	Suite *s = suite_create("kwarn");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_warning_fails);
	tcase_add_test(t, test_warning_without_new_taint);
	tcase_add_test(t, test_before_mark_is_quiet);
	tcase_add_test(t, test_taint_alone_fails);
	tcase_add_test(t, test_bug_and_oops);
	tcase_add_test(t, test_quiet);
	tcase_add_test(t, test_judge);
	tcase_add_test(t, test_report);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(kwarn_suite)
