/* The ledger lock (plugin/ledger/ledger_lock.c): a bounded wait, the holder's
 * line in the lock file, and the one line a waiter that gives up prints,
 * naming the holder — a corecarve process that recorded itself, one that
 * did not (an flock from another descriptor), readers, a dead holder's
 * stale line.  Holders are real processes and real flocks; no assertion is
 * about speed: a waiter must have waited at least its bound, and Check's
 * timeout only stops a hang. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ledger.h"
#include "testlib.h"

static char base[64];   /* private temp dir of this test */
static char state[128]; /* base/state: the ledger directory */
static char lockp[192]; /* state/lock */

static void setup(void)
{
	snprintf(base, sizeof(base), "%s/cc-lock-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(lockp, sizeof(lockp), "%s/lock", state);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void teardown(void)
{
	if (base[0])
		nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *lock_text(void)
{
	size_t len;
	char *t = cc_test_slurp_len(lockp, &len);

	ck_assert_ptr_nonnull(t);
	return t;
}

/* ---- a holder in another process ------------------------------------------ */

struct holder {
	pid_t pid;
	int release; /* write end: closing it lets the holder go */
};

/* Fork a process that opens the ledger for writing with `name` as its
 * holder, or (name NULL) takes a shared flock of the lock file itself, as
 * a reader does while it loads; says so, and holds it until released (or,
 * with hold_ms, for that long only).  Returns once it holds the lock. */
static struct holder hold(const char *name, int hold_ms)
{
	int ready[2], rel[2];
	struct holder h;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(rel), 0);
	h.pid = cc_test_fork();
	if (h.pid == 0) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_ledger_lock lk = { .wait_ms = 0, .holder = name };
		struct cc_ledger *l = NULL;
		int fd = -1;

		close(ready[0]);
		close(rel[1]);
		if (name) {
			l = cc_ledger_open_as(state, CC_LEDGER_WRITE, &lk, &err);
			if (!l) {
				fprintf(stderr, "holder: %s\n", err.msg);
				_exit(1);
			}
		} else {
			fd = open(lockp, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0)
				_exit(1);
		}
		if (write(ready[1], "x", 1) != 1)
			_exit(2);
		if (hold_ms > 0) {
			struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
			cc_ledger_close(l);
			l = NULL;
		}
		while (read(rel[0], &c, 1) > 0)
			;
		cc_ledger_close(l);
		if (fd >= 0)
			close(fd);
		_exit(0);
	}
	close(ready[1]);
	close(rel[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	h.release = rel[1];
	return h;
}

static void let_go(struct holder *h)
{
	int st;

	close(h->release);
	ck_assert_int_eq(waitpid(h->pid, &st, 0), h->pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "holder status %#x", st);
}

/* The message of a waiter that gave up: ETIMEDOUT, and it waited. */
static void gives_up(enum cc_ledger_mode mode, unsigned wait_ms, struct cc_err *err)
{
	struct cc_ledger_lock lk = { .wait_ms = wait_ms, .holder = "corecarve waiter" };
	long long t0 = mono_ms();
	struct cc_ledger *l = cc_ledger_open_as(state, mode, &lk, err);

	if (l)
		cc_ledger_close(l);
	ck_assert_msg(l == NULL, "took a held lock");
	ck_assert_int_eq(err->code, ETIMEDOUT);
	ck_assert_int_ge(mono_ms() - t0, wait_ms);
	ck_assert_msg(strncmp(err->msg, lockp, strlen(lockp)) == 0 && err->msg[strlen(lockp)] == ':', "%s",
		      err->msg);
}

static void assert_has(const char *msg, const char *want)
{
	ck_assert_msg(strstr(msg, want) != NULL, "\"%s\" not in \"%s\"", want, msg);
}

/* ---- the tests ------------------------------------------------------------ */

/* Free: taken on the first try, exclusive and shared alike. */
START_TEST(test_free_lock_taken_at_once)
{
	struct cc_ledger_lock once = { .wait_ms = 0, .holder = "corecarve test" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;

	setup();
	for (int m = CC_LEDGER_WRITE; m <= CC_LEDGER_READ; m++) {
		l = cc_ledger_open_as(state, (enum cc_ledger_mode)m, &once, &err);
		ck_assert_msg(l != NULL, "mode %d: %s", m, err.msg);
		cc_ledger_close(l);
	}
	/* Readers beside a reader. */
	{
		struct holder h = hold(NULL, 0);

		l = cc_ledger_open_as(state, CC_LEDGER_READ, &once, &err);
		ck_assert_msg(l != NULL, "%s", err.msg);
		cc_ledger_close(l);
		let_go(&h);
	}
	teardown();
}
END_TEST

/* The writer's line while it holds: its pid, the time, its command made
 * one printable line; the file 0600 (despite the umask); empty after. */
START_TEST(test_holder_line)
{
	struct cc_ledger_lock lk = { .wait_ms = 0, .holder = "corecarve hook createRuntime a\nb\x1b[1m" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *after = NULL, *want = NULL;
	struct cc_ledger *l;
	struct stat st;
	long long s;
	int ms, off = 0;
	long pid;

	setup();
	umask(0);
	l = cc_ledger_open_as(state, CC_LEDGER_WRITE, &lk, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	text = lock_text();
	ck_assert_msg(sscanf(text, "pid=%ld since=%lld.%3d cmd=%n", &pid, &s, &ms, &off) == 3 && off, "%s", text);
	ck_assert_int_eq(pid, getpid());
	ck_assert_int_le(llabs(s - (long long)time(NULL)), 60);
	ck_assert_str_eq(text + off, "corecarve hook createRuntime a?b?[1m\n");
	ck_assert_int_eq(stat(lockp, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	cc_ledger_close(l);
	after = lock_text();
	ck_assert_str_eq(after, "");

	/* No holder named: the pid and the time only. */
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	free(text);
	text = lock_text();
	ck_assert_int_ge(asprintf(&want, "pid=%ld since=", (long)getpid()), 0);
	ck_assert_msg(strncmp(text, want, strlen(want)) == 0 && strstr(text, " cmd=\n") &&
			      strlen(strstr(text, " cmd=\n")) == 6,
		      "%s", text);
	cc_ledger_close(l);

	/* A reader writes nothing (it could not: its descriptor is read-only). */
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_ledger_close(l);
	free(after);
	after = lock_text();
	ck_assert_str_eq(after, "");
	teardown();
}
END_TEST

/* A writer and a reader facing a writer that recorded itself: both give
 * up, naming it and how long it has held the lock. */
START_TEST(test_gives_up_naming_holder)
{
	static const enum cc_ledger_mode waiters[] = { CC_LEDGER_WRITE, CC_LEDGER_WRITE_INDEX, CC_LEDGER_READ };
	struct cc_err err = CC_ERR_INIT;
	struct holder h;
	char want[256];

	setup();
	h = hold("corecarve hook createRuntime abc", 0);
	snprintf(want, sizeof(want), ": held by pid %ld (corecarve hook createRuntime abc) for ", (long)h.pid);
	for (size_t i = 0; i < sizeof(waiters) / sizeof(waiters[0]); i++) {
		cc_err_clear(&err);
		gives_up(waiters[i], 300, &err);
		assert_has(err.msg, want);
		ck_assert_msg(strstr(err.msg, " s; gave up after 0.3 s") &&
				      !strcmp(strstr(err.msg, "; gave up"), "; gave up after 0.3 s"),
			      "%s", err.msg);
	}
	/* The line is the holder's still: a waiter writes nothing. */
	{
		_cleanup_free_ char *text = lock_text();
		char pid[32];

		snprintf(pid, sizeof(pid), "pid=%ld ", (long)h.pid);
		ck_assert_msg(strncmp(text, pid, strlen(pid)) == 0, "%s", text);
	}
	let_go(&h);
	teardown();
}
END_TEST

/* An flock from another descriptor, which writes no line: named from
 * /proc/locks, by pid and command line. */
START_TEST(test_unrecorded_holder_named)
{
	struct cc_err err = CC_ERR_INIT;
	char want[64];
	int fd;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	gives_up(CC_LEDGER_WRITE, 100, &err);
	snprintf(want, sizeof(want), ": held by pid %ld (", (long)getpid());
	assert_has(err.msg, want);
	assert_has(err.msg, "test_ledger_lock");
	assert_has(err.msg, "), which did not record itself; gave up after 0.1 s");
	close(fd);
	teardown();
}
END_TEST

/* A line left by a holder that was killed (flock is released on death,
 * the line is not), while a process that records nothing holds the lock:
 * the line is not trusted, and the waiter says its pid is gone. */
START_TEST(test_dead_holders_line)
{
	struct cc_err err = CC_ERR_INIT;
	char line[128], want[160];
	pid_t dead = cc_test_fork();
	int fd, st;

	if (dead == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, &st, 0), dead);
	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	snprintf(line, sizeof(line), "pid=%ld since=%lld.000 cmd=corecarve hook createRuntime old\n", (long)dead,
		 (long long)time(NULL) - 100);
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	gives_up(CC_LEDGER_READ, 100, &err);
	snprintf(want, sizeof(want), ": held by pid %ld (", (long)getpid());
	assert_has(err.msg, want);
	snprintf(want, sizeof(want),
		 "which did not record itself; the last recorded holder, pid %ld (corecarve hook createRuntime old), "
		 "no longer exists; gave up after 0.1 s",
		 (long)dead);
	assert_has(err.msg, want);
	close(fd);

	/* With the lock free, the stale line is no obstacle: taken at once,
	 * and the line is the new holder's. */
	{
		struct cc_ledger_lock once = { .wait_ms = 0, .holder = "corecarve next" };
		struct cc_ledger *l = cc_ledger_open_as(state, CC_LEDGER_WRITE, &once, &err);
		_cleanup_free_ char *text = NULL;

		ck_assert_msg(l != NULL, "%s", err.msg);
		text = lock_text();
		ck_assert_msg(strstr(text, " cmd=corecarve next\n") && !strstr(text, "old"), "%s", text);
		cc_ledger_close(l);
	}
	teardown();
}
END_TEST

/* A killed holder's lock is free at once (the kernel drops it). */
START_TEST(test_killed_holder_frees_it)
{
	struct cc_ledger_lock once = { .wait_ms = 0, .holder = "corecarve next" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct holder h;
	int st;

	setup();
	h = hold("corecarve hook createRuntime killed", 0);
	ck_assert_int_eq(kill(h.pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(h.pid, &st, 0), h.pid);
	close(h.release);
	l = cc_ledger_open_as(state, CC_LEDGER_WRITE, &once, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* Readers hold it: a writer gives up naming them as readers. */
START_TEST(test_readers_named)
{
	struct cc_err err = CC_ERR_INIT;
	struct holder r1, r2;
	char want[64];

	setup();
	/* A writer ran once: the lock file exists for the readers. */
	cc_ledger_close(cc_ledger_open(state, &err));
	r1 = hold(NULL, 0);
	r2 = hold(NULL, 0);
	gives_up(CC_LEDGER_WRITE, 100, &err);
	assert_has(err.msg, ": held shared by pid ");
	snprintf(want, sizeof(want), "pid %ld (", (long)r1.pid);
	if (!strstr(err.msg, want))
		snprintf(want, sizeof(want), "pid %ld (", (long)r2.pid);
	assert_has(err.msg, want);
	assert_has(err.msg, ") and 1 other; gave up after 0.1 s");
	/* The second holder has the first one's pipe too: it goes first. */
	let_go(&r2);
	let_go(&r1);
	teardown();
}
END_TEST

/* A holder that lets go while a writer waits: the writer gets the lock
 * and its line. */
START_TEST(test_released_while_waiting)
{
	struct cc_ledger_lock lk = { .wait_ms = 60000, .holder = "corecarve patient" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct holder h;

	setup();
	h = hold("corecarve brief", 200);
	l = cc_ledger_open_as(state, CC_LEDGER_WRITE, &lk, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	{
		_cleanup_free_ char *text = lock_text();

		ck_assert_msg(strstr(text, " cmd=corecarve patient\n"), "%s", text);
	}
	cc_ledger_close(l);
	let_go(&h);
	teardown();
}
END_TEST

/* ---- through the binary: $CORECARVE_LOCK_TIMEOUT -------------------------- */

static const struct {
	const char *value;
	int rc;           /* corecarve status' exit status with a holder */
	const char *want; /* in its one line */
} timeouts[] = {
	{ "0.2", 2, "gave up after 0.2 s" },
	{ "0", 2, "gave up after 0 s" },
	{ ".25", 2, "gave up after 0.25 s" },
	{ "abc", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds from 0 to 3600 (e.g. 5 or 0.5), got \"abc\"" },
	{ "-1", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
	{ "1e3", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
	{ "3601", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
	{ "0.0005", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
	{ "1.2.3", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
	{ ".", 2, "CORECARVE_LOCK_TIMEOUT: expected seconds" },
};

START_TEST(test_cli_timeout_table)
{
	const char *bin = cc_test_bin("corecarve status with the lock held");
	_cleanup_free_ char *out = NULL;
	struct holder h;
	char want[320];
	int rc;

	if (!bin)
		return;
	setup();
	h = hold("corecarve hook createRuntime abc", 0);
	rc = cc_test_sh(&out, "CORECARVE_LOCK_TIMEOUT='%s' '%s' status --state '%s' --synthetic 'pack:1 core:2 pu:2'",
			timeouts[_i].value, bin, state);
	let_go(&h);
	ck_assert_msg(rc == timeouts[_i].rc, "%s: exit %d: %s", timeouts[_i].value, rc, out);
	/* One line, "corecarve: ...". */
	ck_assert_msg(strncmp(out, "corecarve: ", 11) == 0 && strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
	assert_has(out, timeouts[_i].want);
	if (strstr(timeouts[_i].want, "gave up")) {
		snprintf(want, sizeof(want), "%s: held by pid %ld (corecarve hook createRuntime abc) for ", lockp,
			 (long)h.pid);
		assert_has(out, want);
	}
	teardown();
}
END_TEST

/* Unset or empty: the default, which takes a free lock. */
START_TEST(test_cli_default)
{
	const char *bin = cc_test_bin("corecarve with the default lock wait");
	_cleanup_free_ char *out = NULL;
	int rc;

	if (!bin)
		return;
	setup();
	/* A --state that does not exist is an error of its own (cc_cli_state_dir). */
	ck_assert_int_eq(mkdir(state, 0700), 0);
	rc = cc_test_sh(&out, "CORECARVE_LOCK_TIMEOUT= '%s' status --state '%s' --synthetic 'pack:1 core:2 pu:2'", bin,
			state);
	/* Then the capacity table (every class free). */
	ck_assert_msg(rc == 0 && !strncmp(out, "no carves\n\nCLASS", 16), "exit %d: %s", rc, out);
	teardown();
}
END_TEST

/* The hook reads $CORECARVE_LOCK_TIMEOUT only when it takes the lock: a
 * bad value refuses nothing for a container without the annotation (the
 * runtime's environment is every container's), and is reported, in the
 * same words, by a stage that needs the lock (a poststop looks in the
 * ledger). */
START_TEST(test_hook_timeout_deferred)
{
	const char *bin = cc_test_bin("corecarve hook with a bad lock timeout");
	_cleanup_free_ char *out = NULL, *out2 = NULL;
	char cfg[256];
	int rc;

	if (!bin)
		return;
	setup();
	snprintf(cfg, sizeof(cfg), "%s/b", base);
	ck_assert_int_eq(mkdir(cfg, 0700), 0);
	cc_test_write_file(cfg, "config.json", "{\"ociVersion\":\"1.0.2\"}");
	cc_test_sh(NULL, "printf '{\"id\":\"c1\",\"pid\":1,\"bundle\":\"%s\"}' >%s/st.json", cfg, base);
	rc = cc_test_sh(&out, "CORECARVE_LOCK_TIMEOUT=abc " CC_TEST_HOOK_ENV "'%s' hook createRuntime --state '%s' <%s/st.json",
			bin, state, base);
	ck_assert_msg(rc == 0 && !strcmp(out, ""), "exit %d: %s", rc, out);
	rc = cc_test_sh(&out2, "CORECARVE_LOCK_TIMEOUT=abc " CC_TEST_HOOK_ENV "'%s' hook poststop --state '%s' <%s/st.json",
			bin, state, base);
	ck_assert_int_eq(rc, 2);
	assert_has(out2, "corecarve: poststop c1: CORECARVE_LOCK_TIMEOUT: expected seconds from 0 to 3600 (e.g. 5 or "
			 "0.5), got \"abc\"\n");
	teardown();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ledger_lock");
	TCase *tc = tcase_create("lock");

	/* Waits are a few hundred ms each; the bound only stops a hang. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_free_lock_taken_at_once);
	tcase_add_test(tc, test_hook_timeout_deferred);
	tcase_add_test(tc, test_holder_line);
	tcase_add_test(tc, test_gives_up_naming_holder);
	tcase_add_test(tc, test_unrecorded_holder_named);
	tcase_add_test(tc, test_dead_holders_line);
	tcase_add_test(tc, test_killed_holder_frees_it);
	tcase_add_test(tc, test_readers_named);
	tcase_add_test(tc, test_released_while_waiting);
	tcase_add_loop_test(tc, test_cli_timeout_table, 0, (int)(sizeof(timeouts) / sizeof(timeouts[0])));
	tcase_add_test(tc, test_cli_default);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
