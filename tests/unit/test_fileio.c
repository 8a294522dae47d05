/* Whole files in and out (plugin/core/fileio.h): the bounded read at and over
 * its limit, the atomic replace (the old file or the new one, after a
 * crash too), and write_all through a small pipe under signals. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "testlib.h"

static char dir[] = "/tmp/cc-fileio-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *name, const char *data, size_t len, mode_t mode)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cc_write_all(fd, data, len), 0);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* A fresh directory holding `name` (its path in `path`), and an fd of the
 * directory for cc_replace_at. */
static int seeded_dir(const char *name, const char *data, mode_t mode, char *path, size_t size)
{
	int dfd;

	setup();
	put(name, data, strlen(data), mode);
	snprintf(path, size, "%s/%s", dir, name);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

/* Names in the directory but `except`, space-separated, sorted. */
static char *others(const char *except)
{
	char *out = NULL;

	ck_assert_int_eq(cc_test_sh(&out, "cd '%s' && ls -A | grep -vx '%s' | sort | tr '\\n' ' '", dir, except), 0);
	return out;
}

/* ---- reading ---------------------------------------------------------- */

#define MAX 1000

/* Sizes around the bound, read as a regular file (sized first) and as
 * anything else (read until the end): at the bound reads, one over does
 * not, and the message names the file and the bound. */
static const struct {
	size_t size;
	unsigned flags;
	const char *why; /* after "NAME: "; NULL: it reads */
} sizes[] = {
	{ 0, 0, NULL },
	{ 0, CC_READ_REGULAR, NULL },
	{ MAX - 1, CC_READ_REGULAR, NULL },
	{ MAX, 0, NULL },
	{ MAX, CC_READ_REGULAR, NULL },
	{ MAX + 1, 0, "larger than the 1000-byte limit" },
	{ MAX + 1, CC_READ_REGULAR, "1001 bytes, larger than the 1000-byte limit" },
	{ 3 * MAX, 0, "larger than the 1000-byte limit" },
	{ MAX + 1, CC_READ_TRUNCATE, NULL },
};

START_TEST(test_read_sizes)
{
	_cleanup_free_ char *data = malloc(sizes[_i].size + 1), *want = NULL;
	struct cc_err err = CC_ERR_INIT;
	char *buf = (char *)"unset", path[128];
	size_t len = 12345;
	int r;

	setup();
	for (size_t k = 0; k < sizes[_i].size; k++)
		data[k] = (char)('a' + k % 26);
	put("f", data, sizes[_i].size, 0644);
	snprintf(path, sizeof(path), "%s/f", dir);
	r = cc_read_at(AT_FDCWD, path, "the file", MAX, sizes[_i].flags, &buf, &len, &err);
	if (sizes[_i].why) {
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(err.code, EFBIG);
		ck_assert_ptr_null(buf);
		ck_assert_int_ge(asprintf(&want, "the file: %s", sizes[_i].why), 0);
		ck_assert_str_eq(err.msg, want);
	} else {
		size_t n = sizes[_i].size > MAX ? MAX : sizes[_i].size;

		ck_assert_msg(r == 0, "case %d: %s", _i, err.msg);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(len, n);
		ck_assert_int_eq(buf[len], '\0');
		ck_assert_int_eq(memcmp(buf, data, n), 0);
		free(buf);
	}
	teardown();
}
END_TEST

/* An empty file is an empty string, not NULL; bytes after a NUL count. */
START_TEST(test_read_empty_and_nul)
{
	struct cc_err err = CC_ERR_INIT;
	char *buf = NULL, path[128];
	size_t len = 7;

	setup();
	put("empty", "", 0, 0600);
	snprintf(path, sizeof(path), "%s/empty", dir);
	ck_assert_int_eq(cc_read_at(AT_FDCWD, path, NULL, MAX, CC_READ_REGULAR, &buf, &len, &err), 0);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(buf, "");
	free(buf);
	put("nul", "a\0b", 3, 0600);
	snprintf(path, sizeof(path), "%s/nul", dir);
	ck_assert_int_eq(cc_read_at(AT_FDCWD, path, NULL, MAX, 0, &buf, &len, &err), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(memcmp(buf, "a\0b", 4), 0);
	free(buf);
	teardown();
}
END_TEST

/* A missing file names itself and the reason; with ABSENT_OK it is no
 * error at all.  Not regular, a link refused: each says so. */
START_TEST(test_read_refusals)
{
	struct cc_err err = CC_ERR_INIT;
	char *buf = (char *)"unset", path[128], link[128];
	_cleanup_free_ char *want = NULL;
	size_t len = 7;
	int dfd;

	setup();
	snprintf(path, sizeof(path), "%s/missing", dir);
	ck_assert_int_eq(cc_read_at(AT_FDCWD, path, NULL, MAX, CC_READ_REGULAR, &buf, &len, &err), -1);
	ck_assert_int_eq(err.code, ENOENT);
	ck_assert_int_ge(asprintf(&want, "%s: No such file or directory", path), 0);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(buf);

	cc_err_clear(&err);
	buf = (char *)"unset";
	ck_assert_int_eq(cc_read_at(AT_FDCWD, path, NULL, MAX, CC_READ_ABSENT_OK, &buf, &len, &err), 0);
	ck_assert_ptr_null(buf);
	ck_assert_uint_eq(len, 0);
	ck_assert(!cc_err_isset(&err));

	ck_assert_int_eq(cc_read_at(AT_FDCWD, dir, "the dir", MAX, CC_READ_REGULAR, &buf, &len, &err), -1);
	ck_assert_str_eq(err.msg, "the dir: not a regular file");

	/* Relative to a directory, through a link it refuses. */
	put("target", "x", 1, 0600);
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(symlink("target", link), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_read_at(dfd, "link", "state/link", MAX, CC_READ_NOFOLLOW, &buf, &len, &err), -1);
	ck_assert_str_eq(err.msg, "state/link: is a symbolic link; refusing it");
	ck_assert_int_eq(cc_read_at(dfd, "link", NULL, MAX, 0, &buf, &len, &err), 0);
	ck_assert_str_eq(buf, "x");
	free(buf);
	close(dfd);
	teardown();
}
END_TEST

/* A pipe says no size: the buffer grows as it reads (past its first 256
 * bytes), and the bound holds. */
START_TEST(test_read_pipe_grows)
{
	struct cc_err err = CC_ERR_INIT;
	char chunk[1000], *buf = NULL;
	size_t len = 0;
	int p[2];
	pid_t pid;

	memset(chunk, 'z', sizeof(chunk));
	for (int round = 0; round < 2; round++) {
		size_t total = round == 0 ? 50000 : 50001;
		int status;

		ck_assert_int_eq(pipe(p), 0);
		pid = cc_test_fork();
		if (pid == 0) {
			close(p[0]);
			for (size_t n = 0; n < total; n += sizeof(chunk))
				if (cc_write_all(p[1], chunk, total - n < sizeof(chunk) ? total - n : sizeof(chunk)) < 0)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		cc_err_clear(&err);
		if (round == 0) {
			ck_assert_msg(cc_read_fd(p[0], "pipe", 50000, 0, &buf, &len, &err) == 0, "%s", err.msg);
			ck_assert_uint_eq(len, 50000);
			ck_assert_uint_eq(strspn(buf, "z"), 50000);
			free(buf);
		} else {
			ck_assert_int_eq(cc_read_fd(p[0], "pipe", 50000, 0, &buf, &len, &err), -1);
			ck_assert_str_eq(err.msg, "pipe: larger than the 50000-byte limit");
		}
		close(p[0]);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	}
}
END_TEST

/* ---- replacing -------------------------------------------------------- */

/* Over an existing file: the new bytes, the mode asked for whatever the
 * umask, and nothing else left in the directory.  With `like`, the mode of
 * the file replaced. */
START_TEST(test_replace_over_existing)
{
	struct cc_replace o = { .mode = 0600, .sync = CC_SYNC_DIR, .shown_dir = dir };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *rest = NULL;
	char path[128];
	struct stat st;
	mode_t old = umask(077);
	int dfd;

	dfd = seeded_dir("f", "old content\n", 0644, path, sizeof(path));
	ck_assert_msg(cc_replace_at(dfd, "f", "new\n", 4, &o, &err) == 0, "%s", err.msg);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "new\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	rest = others("f");
	ck_assert_str_eq(rest, "");

	/* The operator's 0640 file stays 0640 (irqbalance's config). */
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	o.like = &st;
	o.hidden = true;
	ck_assert_msg(cc_replace_at(dfd, "f", "newer", 5, &o, &err) == 0, "%s", err.msg);
	free(text);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "newer");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	free(rest);
	rest = others("f");
	ck_assert_str_eq(rest, "");
	close(dfd);
	umask(old);
	teardown();
}
END_TEST

/* Killed between the complete temp file and the rename (the fault step):
 * the old file is whole, the temp is the new one whole; the next replace
 * (a new pid, or the same pid's temp left over) puts the new one in
 * place. */
START_TEST(test_replace_crash_leaves_old)
{
	struct cc_replace o = { .mode = 0600, .sync = CC_SYNC_FILE, .fault = "step", .fault_step = "step" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *rest = NULL, *want = NULL, *tmp = NULL;
	char path[128];
	int status, dfd;
	pid_t pid;

	dfd = seeded_dir("f", "old", 0600, path, sizeof(path));
	pid = cc_test_fork();
	if (pid == 0) {
		cc_replace_at(dfd, "f", "new", 3, &o, &err);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "old");
	ck_assert_int_ge(asprintf(&want, "f.tmp.%d ", (int)pid), 0);
	rest = others("f");
	ck_assert_str_eq(rest, want);
	ck_assert_int_ge(asprintf(&tmp, "%s/f.tmp.%d", dir, (int)pid), 0);
	free(text);
	text = cc_test_slurp(tmp);
	ck_assert_str_eq(text, "new");

	/* A temp of our own pid, left by an earlier process: replaced. */
	free(tmp);
	ck_assert_int_ge(asprintf(&tmp, "f.tmp.%d", (int)getpid()), 0);
	put(tmp, "stale", 5, 0600);
	o.fault = NULL;
	ck_assert_msg(cc_replace_at(dfd, "f", "newest", 6, &o, &err) == 0, "%s", err.msg);
	free(text);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "newest");
	free(rest);
	rest = others("f");
	ck_assert_str_eq(rest, want); /* only the killed writer's temp */
	close(dfd);
	teardown();
}
END_TEST

/* A fixed temp name (the caller holds a lock) is truncated, not refused,
 * when a killed writer left it. */
START_TEST(test_replace_fixed_tmp)
{
	const struct cc_replace o = { .mode = 0600, .fixed_tmp = true };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *rest = NULL;
	char path[128];
	int dfd;

	setup();
	put("cache.tmp", "a much longer stale temp file", 29, 0600);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_msg(cc_replace_at(dfd, "cache", "fresh", 5, &o, &err) == 0, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/cache", dir);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "fresh");
	rest = others("cache");
	ck_assert_str_eq(rest, "");
	close(dfd);
	teardown();
}
END_TEST

/* By path: the new file in place; a missing directory names the temp
 * file it could not create; a failed rename leaves the old file and no
 * temp. */
START_TEST(test_replace_path)
{
	const struct cc_replace o = { .mode = 0644, .sync = CC_SYNC_DIR_TRY, .hidden = true };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *rest = NULL, *want = NULL;
	char path[128], sub[128];

	setup();
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	ck_assert_msg(cc_replace_path(path, "metric 1\n", 9, &o, &err) == 0, "%s", err.msg);
	text = cc_test_slurp(path);
	ck_assert_str_eq(text, "metric 1\n");

	ck_assert_int_eq(cc_replace_path("/nonexistent-dir/x.prom", "m", 1, &o, &err), -1);
	ck_assert_int_ge(asprintf(&want, "/nonexistent-dir/.x.prom.tmp.%d: No such file or directory", (int)getpid()), 0);
	ck_assert_str_eq(err.msg, want);

	/* A directory where the file belongs: rename refuses, nothing left. */
	snprintf(sub, sizeof(sub), "%s/d", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_replace_path(sub, "m", 1, &o, &err), -1);
	ck_assert_int_eq(err.code, EISDIR);
	ck_assert_msg(strstr(err.msg, ": rename from ") != NULL, "%s", err.msg);
	rest = others("x.prom");
	ck_assert_str_eq(rest, "d ");
	teardown();
}
END_TEST

/* ---- write_all -------------------------------------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
}

/* 1 MiB through a one-page pipe to a slow reader, with a timer firing
 * every millisecond (no SA_RESTART): write(2) returns short counts and
 * EINTR, and every byte arrives once, in order. */
START_TEST(test_write_all_pipe)
{
	const size_t total = 1u << 20;
	_cleanup_free_ char *data = malloc(total);
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	unsigned long long sum = 0, got = 0;
	int p[2], back[2], status;
	pid_t pid;

	for (size_t k = 0; k < total; k++) {
		data[k] = (char)(k * 7 + k / 4096);
		sum = sum * 31 + (unsigned char)data[k];
	}
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(back), 0);
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	pid = cc_test_fork();
	if (pid == 0) {
		unsigned long long h = 0;
		char buf[1500];
		ssize_t n;

		close(p[1]);
		close(back[0]);
		while ((n = read(p[0], buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				_exit(1);
			for (ssize_t k = 0; k < n; k++)
				h = h * 31 + (unsigned char)buf[k];
			usleep(20);
		}
		_exit(cc_write_all(back[1], &h, sizeof(h)) < 0);
	}
	close(p[0]);
	close(back[1]);
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &every, NULL), 0);
	ck_assert_int_eq(cc_write_all(p[1], data, total), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	close(p[1]);
	ck_assert_int_eq(read(back[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	close(back[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert(got == sum);

	/* Nobody reading: -1 with errno, for the caller to name the file. */
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	errno = 0;
	ck_assert_int_eq(cc_write_all(p[1], "x", 1), -1);
	ck_assert_int_eq(errno, EPIPE);
	close(p[1]);
}
END_TEST

static Suite *fileio_suite(void)
{
	Suite *s = suite_create("fileio");
	TCase *tc = tcase_create("fileio");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_read_sizes, 0, (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(tc, test_read_empty_and_nul);
	tcase_add_test(tc, test_read_refusals);
	tcase_add_test(tc, test_read_pipe_grows);
	tcase_add_test(tc, test_replace_over_existing);
	tcase_add_test(tc, test_replace_crash_leaves_old);
	tcase_add_test(tc, test_replace_fixed_tmp);
	tcase_add_test(tc, test_replace_path);
	tcase_add_test(tc, test_write_all_pipe);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(fileio_suite)
