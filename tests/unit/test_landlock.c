/* Landlock (plugin/core/landlock.h): in a forked child that applied a
 * ruleset, writes succeed beneath the directories it names and fail with
 * EACCES everywhere else, reads stay free and nothing can be executed;
 * the hook's own ruleset, built over a scratch tree as its root, lets the
 * hook write its cgroup files and its ledger and nothing else.  Where the
 * kernel has no Landlock the probe says so and the hook goes on (these
 * tests then check that path instead: it is a kernel fact, not a skip).
 * This build machine's kernel has it (ABI >= 1); say it in CI's log. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "landlock.h"
#include "ledger.h"
#include "root.h"
#include "testlib.h"

static char tmp[] = "/tmp/cc-landlock-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(cc_test_sh(NULL,
				    "cd %s && mkdir -p ok other tree/sys/fs/cgroup/kubepods tree/proc/irq/5 "
				    "tree/etc/default tree/etc/cron.d tree/sys/devices/system/cpu/cpu0/cpuidle/state1 "
				    "tree/sys/devices/system/cpu/cpu0/topology state && echo keep >other/f && "
				    "echo 1 >tree/sys/devices/system/cpu/cpu0/online && printf '#!/bin/sh\\nexit 0\\n' >ok/x "
				    "&& chmod +x ok/x",
				    tmp),
			 0);
}

static void teardown(void)
{
	cc_test_sh(NULL, "rm -rf '%s'", tmp);
	strcpy(tmp, "/tmp/cc-landlock-XXXXXX");
}

/* 0 when creating DIR/NAME for writing works, else its errno. */
static int try_create(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", tmp, dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_write(const char *rel)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Run FN in a forked child; its exit status (a step number that failed,
 * 0 when all did as expected). */
static int in_child(int (*fn)(void))
{
	int status = 0;
	pid_t pid = cc_test_fork();
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static int confine_to_ok(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_landlock ll;
	char path[512];
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *kept = NULL;

	snprintf(path, sizeof(path), "%s/ok", tmp);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || cc_landlock_begin(&ll, &err) != 1 || cc_landlock_allow_fd(&ll, fd, path, &err) < 0 ||
	    cc_landlock_apply(&ll, &err) < 0)
		return fprintf(stderr, "%s\n", err.msg), 10;
	if (try_create("ok", "new") != 0)
		return 11;                               /* a write beneath the allowed directory */
	if (try_create("other", "new") != EACCES)
		return 12;                               /* a write elsewhere */
	if (try_write("other/f") != EACCES)
		return 13;                               /* an existing file elsewhere */
	snprintf(path, sizeof(path), "%s/other/f", tmp);
	if (truncate(path, 0) == 0 || errno != EACCES)
		return 14;                               /* truncation elsewhere (ABI 3) */
	kept = cc_test_slurp(path);                     /* reads stay free */
	if (strcmp(kept, "keep\n"))
		return 15;
	snprintf(path, sizeof(path), "%s/other/d", tmp);
	if (mkdir(path, 0700) == 0 || errno != EACCES)
		return 16;
	snprintf(path, sizeof(path), "%s/ok/x", tmp);
	execl(path, "x", (char *)NULL);                 /* nothing runs, even where writes may go */
	return errno == EACCES ? 0 : 17;
}

START_TEST(test_ruleset_refuses_outside)
{
	int abi = cc_landlock_abi();

	setup();
	if (abi == 0) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_landlock ll;

		/* No Landlock in this kernel: the probe says so, nothing is
		 * begun, and the hook's ruleset is "not applied", no error. */
		fprintf(stderr, "test_landlock: this kernel has no Landlock; only the absent path is checked\n");
		ck_assert_int_eq(cc_landlock_begin(&ll, &err), 0);
		ck_assert_int_eq(ll.fd, -1);
	} else {
		ck_assert_int_eq(in_child(confine_to_ok), 0);
	}
	teardown();
}
END_TEST

static int confine_as_hook(void)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_close_ int sfd = -1;
	char path[512], to[512];
	int r;

	snprintf(path, sizeof(path), "%s/tree", tmp);
	root = cc_root_open(path, &err);
	snprintf(path, sizeof(path), "%s/state", tmp);
	sfd = root ? cc_state_dir_open(path, true, NULL, &err) : -1;
	if (sfd < 0)
		return fprintf(stderr, "%s\n", err.msg), 20;
	r = cc_landlock_hook(root, sfd, &err);
	if (r != 1)
		return fprintf(stderr, "%d %s\n", r, err.msg), 21;
	if (try_create("tree/sys/fs/cgroup/kubepods", "cpuset.cpus") != 0)
		return 22;                               /* a cgroup file */
	snprintf(path, sizeof(path), "%s/tree/sys/fs/cgroup/kubepods/corecarve.parked", tmp);
	if (mkdir(path, 0755) < 0 || rmdir(path) < 0)
		return 23;                               /* the parked-siblings cgroup */
	if (try_create("tree/proc/irq/5", "smp_affinity") != 0)
		return 24;
	if (try_create("tree/sys/devices/system/cpu/cpu0/cpuidle/state1", "disable") != 0)
		return 25;
	if (try_write("tree/sys/devices/system/cpu/cpu0/online") != EACCES)
		return 26;                               /* a CPU's other files are not power settings */
	if (try_create("tree/etc/cron.d", "job") != EACCES)
		return 27;                               /* the rest of /etc */
	/* The ledger's replace: a temp file renamed over ledger.json. */
	if (try_create("state", CC_LEDGER_FILE ".tmp.1") != 0)
		return 28;
	snprintf(path, sizeof(path), "%s/state/" CC_LEDGER_FILE ".tmp.1", tmp);
	snprintf(to, sizeof(to), "%s/state/" CC_LEDGER_FILE, tmp);
	if (rename(path, to) < 0)
		return 29;
	/* irqbalance's file, replaced the same way in its directory. */
	if (try_create("tree/etc/default", "irqbalance") != 0)
		return 30;
	if (try_create("other", "x") != EACCES)
		return 31;
	return 0;
}

START_TEST(test_hook_ruleset)
{
	setup();
	if (cc_landlock_abi() == 0) {
		struct cc_err err = CC_ERR_INIT;
		_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);

		ck_assert_ptr_nonnull(root);
		ck_assert_int_eq(cc_landlock_hook(root, -1, &err), 0);
	} else {
		ck_assert_int_eq(in_child(confine_as_hook), 0);
	}
	teardown();
}
END_TEST

static Suite *landlock_suite(void)
{
	Suite *s = suite_create("landlock");
	TCase *tc = tcase_create("landlock");

	tcase_add_test(tc, test_ruleset_refuses_outside);
	tcase_add_test(tc, test_hook_ruleset);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(landlock_suite)
