/* The hook's trace (plugin/core/journal.h, hooks/hook.c): one line per decision
 * in the system log, from the real binary through its real sandbox, to a
 * syslog daemon on /dev/log in a private mount namespace (busybox syslogd,
 * as the e2e guest runs it); and the crash-test switch CORECARVE_FAULT,
 * which only the test build reads. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "journal.h"
#include "testlib.h"

/* Run `hook STAGE` with `state` on stdin, in a mount namespace whose /dev
 * holds only null and a busybox syslogd's /dev/log; the log it wrote, or
 * NULL (skipped) when the machine cannot. */
static char *hook_log(const char *stage, const char *state, const char *dir, int *rc)
{
	const char *bin = cc_test_bin("hook journal");
	_cleanup_free_ char *out = NULL;
	char path[4096];

	if (!bin)
		return NULL;
	if (geteuid() != 0) {
		cc_test_skip("needs root (a mount namespace with its own /dev/log)");
		return NULL;
	}
	if (cc_test_sh(NULL, "command -v unshare && command -v busybox") != 0) {
		cc_test_skip("unshare or busybox missing (util-linux, busybox-static)");
		return NULL;
	}
	*rc = cc_test_sh(&out,
			 "unshare -m sh -c 'mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && "
			 "{ busybox syslogd -n -O %s/log -l 8 & } && "
			 "for i in 1 2 3 4 5 6 7 8 9 10; do [ -S /dev/log ] && break; sleep 0.1; done; "
			 "printf %%s \"$0\" | " CC_TEST_HOOK_ENV "%s hook %s --state %s/state; r=$?; sleep 0.3; kill $!; "
			 "exit $r' '%s'",
			 dir, bin, stage, dir, state);
	snprintf(path, sizeof(path), "%s/log", dir);
	return cc_test_slurp(path);
}

/* poststop of a container never carved: the hook ran and matched nothing,
 * and says so (at debug priority). */
START_TEST(test_nothing_to_do)
{
	char dir[] = "/tmp/cc-journal-XXXXXX";
	_cleanup_free_ char *log = NULL;
	int rc = -1;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	log = hook_log("poststop", "{\"ociVersion\":\"1.0.2\",\"id\":\"c-none\",\"status\":\"stopped\",\"pid\":0,"
				   "\"bundle\":\"/nonexistent\"}",
		       dir, &rc);
	if (log) {
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(strstr(log, " daemon.debug corecarve[") &&
				      strstr(log, "]: poststop c-none: no carve recorded, nothing to give back\n"),
			      "%s", log);
	}
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* A refused container: the reason, at warning priority; the runtime still
 * gets its one line on stderr and exit 2. */
START_TEST(test_refusal)
{
	char dir[] = "/tmp/cc-journal-XXXXXX", state[512];
	_cleanup_free_ char *log = NULL;
	int rc = -1;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	cc_test_sh(NULL, "mkdir %s/b && echo '{\"ociVersion\":\"1.0.2\",\"annotations\":{\"corecarve.io/placement\":"
			 "\"{class: latency, cpus: 0}\"}}' > %s/b/config.json",
		   dir, dir);
	snprintf(state, sizeof(state),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"c-bad\",\"status\":\"created\",\"pid\":%d,\"bundle\":\"%s/b\"}",
		 (int)getpid(), dir);
	log = hook_log("createRuntime", state, dir, &rc);
	if (log) {
		ck_assert_int_eq(rc, 2);
		ck_assert_msg(strstr(log, " daemon.warn corecarve[") &&
				      strstr(log, "]: refuse c-bad at createRuntime: annotation corecarve.io/placement: cpus: "
						  "expected an integer >= 1, got \"0\"\n"),
			      "%s", log);
	}
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* The fields of the native protocol, and control characters escaped. */
START_TEST(test_format)
{
	struct cc_journal_field f[] = { { "CORECARVE_EVENT", "release" }, { "CORECARVE_CLASS", "" },
					{ "CORECARVE_CPUS", "2\n3" } };
	char buf[256];
	int n = cc_journal_format(true, 6, "release c1\r\n", f, 3, buf, sizeof(buf));

	ck_assert_int_eq(n, (int)strlen(buf));
	ck_assert_str_eq(buf, "PRIORITY=6\nSYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=corecarve\nMESSAGE=release c1\\r\\n\n"
			      "CORECARVE_EVENT=release\nCORECARVE_CPUS=2\\n3\n");
	/* A buffer too small cuts, never overflows. */
	n = cc_journal_format(true, 6, "release c1", f, 3, buf, 16);
	ck_assert_int_eq(n, 15);
	ck_assert_str_eq(buf, "PRIORITY=6\nSYSL");
}
END_TEST

/* journald keeps a MESSAGE that is not valid UTF-8 as a blob: a message
 * cut by the buffer ends between characters, a stray byte and a bidi
 * override are escaped (issue #26). */
START_TEST(test_format_utf8)
{
	static const char head[] = "PRIORITY=4\nSYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=corecarve\nMESSAGE=";
	char buf[sizeof(head) + 7];
	int n = cc_journal_format(true, 4, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", NULL, 0, buf, sizeof(buf));

	/* 7 bytes are left after the head, and the NUL: 3 whole "é", not
	 * 3.5, then the newline that ends the field. */
	ck_assert_int_eq(n, (int)strlen(head) + 7);
	ck_assert_str_eq(buf + strlen(head), "\xc3\xa9\xc3\xa9\xc3\xa9\n");
	n = cc_journal_format(false, 4, "id \xe2\x80\xae" "cba \xff", NULL, 0, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "id \\u202ecba \\xff"));
}
END_TEST

/* CORECARVE_FAULT is read by the test build only: the installed binary
 * has no code that looks at it, and neither tells of it in --help. */
START_TEST(test_fault_switch_test_build_only)
{
	const char *test_bin = cc_test_bin("the fault switch");
	const char *release = getenv("CORECARVE_RELEASE_BIN");
	_cleanup_free_ char *out = NULL;

	if (!test_bin)
		return;
	if (!release || !*release) {
		cc_test_skip("CORECARVE_RELEASE_BIN unset (make unit sets it to the installed build)");
		return;
	}
	ck_assert_int_eq(cc_test_sh(&out, "grep -c CORECARVE_FAULT '%s'", release), 1);
	ck_assert_str_eq(out, "0\n");
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "grep -c CORECARVE_FAULT '%s'", test_bin), 0);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' hook --help; '%s' exec --help", release, test_bin), 0);
	ck_assert_msg(!strstr(out, "CORECARVE_FAULT") && strstr(out, "journal"), "%s", out);
}
END_TEST

static Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("journal");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_nothing_to_do);
	tcase_add_test(tc, test_refusal);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_format_utf8);
	tcase_add_test(tc, test_fault_switch_test_build_only);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(journal_suite)
