#define _GNU_SOURCE
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cpulist.h"
#include "error.h"
#include "ledger.h"

/* In fork mode each test runs in its own child, which sets these once. */
static const char *cur_test;
static int cur_iter;

void cc_test_enter(const char *name, int iter)
{
	cur_test = name;
	cur_iter = iter;
}

void cc_test_skip(const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* One line per skip: run.sh reads them line by line. */
	for (char *p = reason; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (!cur_test) {
		fprintf(stderr, "testlib: cc_test_skip outside a test (\"%s\"): skip inside START_TEST\n", reason);
		abort();
	}
	printf("SKIPPED: %s:%s:%d: %s\n", program_invocation_short_name, cur_test, cur_iter, reason);
	/* Out now: a test that then crashes never flushes stdout. */
	fflush(stdout);
}

const char *cc_test_fixtures_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("CC_SHARED_DIR");
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s/fixtures", env);
	else
		snprintf(dir, sizeof(dir), "%s", CC_SOURCE_DIR "/../shared/fixtures");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return dir;
}

const char *cc_test_fixture_file(const char *dir, const char *file)
{
	static char path[PATH_MAX];
	const char *base = cc_test_fixtures_dir();

	if (base) {
		snprintf(path, sizeof(path), "%s/%s/%s", base, dir, file);
		if (access(path, R_OK) == 0)
			return path;
	}
	cc_test_skip("fixture %s/%s not found (expected under %s)", dir, file,
		     base ? base : "../shared/fixtures, or $CC_SHARED_DIR/fixtures");
	return NULL;
}

const char *cc_test_fixture_tree(const char *dir, const char *file)
{
	static char out[PATH_MAX];
	char cmd[4 * PATH_MAX + 128], marker[PATH_MAX + 16];
	const char *src = cc_test_fixture_file(dir, file);

	if (!src)
		return NULL;
	/* One extraction per fixture, reused across test processes (Check forks
	 * each test); the marker is written only after tar succeeded. */
	snprintf(out, sizeof(out), "/tmp/corecarve-fixtures-%u/%s", (unsigned)getuid(), dir);
	snprintf(marker, sizeof(marker), "%s/.extracted", out);
	if (access(marker, F_OK) == 0)
		return out;
	/* tar picks the decompressor; fixtures hold looping symlinks, which are
	 * extracted as links, never followed. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && tar -xf '%s' -C '%s' 2>/dev/null && touch '%s'",
		 out, out, src, out, marker);
	if (system(cmd) != 0) {
		cc_test_skip("could not extract %s", src);
		return NULL;
	}
	return out;
}

char *cc_test_write_tmp(const char *text)
{
	char tmpl[] = "/tmp/cc-test-XXXXXX";
	int fd = mkstemp(tmpl);
	size_t len = strlen(text);

	if (fd < 0)
		return NULL;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	close(fd);
	return strdup(tmpl);
}

void cc_test_write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s: cannot write", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

int cc_test_sh(char **out, const char *fmt, ...)
{
	char *cmd = NULL, *full = NULL, *buf = NULL;
	size_t len = 0;
	va_list ap;
	FILE *p;
	int st, r;

	va_start(ap, fmt);
	r = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(r, 0);
	ck_assert_int_ge(asprintf(&full, "(%s) 2>&1", cmd), 0);
	free(cmd);
	p = popen(full, "r");
	free(full);
	ck_assert_ptr_nonnull(p);
	if (getdelim(&buf, &len, '\0', p) < 0) {
		free(buf);
		buf = strdup("");
	}
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *cc_test_slurp_len(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	*len = 0;
	if (!f)
		return NULL;
	/* fread, not getdelim: seeds and outputs may hold any byte. */
	do {
		if (cap - n < 4096) {
			char *g = realloc(buf, cap + 65536);

			ck_assert_ptr_nonnull(g);
			buf = g;
			cap += 65536;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

char *cc_test_slurp(const char *path)
{
	size_t len;
	char *buf = cc_test_slurp_len(path, &len);

	ck_assert_msg(buf != NULL, "%s: cannot open", path);
	return buf;
}

const char *cc_test_bin(const char *what)
{
	static char path[PATH_MAX];
	const char *env = getenv("CORECARVE_BIN");

	snprintf(path, sizeof(path), "%s", env && *env ? env : CC_SOURCE_DIR "/corecarve");
	if (access(path, X_OK) != 0) {
		cc_test_skip("%s: no corecarve binary at %s (make first)", what, path);
		return NULL;
	}
	return path;
}

void cc_test_carve(struct cc_carve *c, const char *id, const char *cpus, const char *parked, bool steer_irqs)
{
	struct cc_err err = CC_ERR_INIT;

	cc_carve_init(c);
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->kind, sizeof(c->kind), "container");
	snprintf(c->cgroup, sizeof(c->cgroup), "/kubepods/%s", id);
	snprintf(c->class_name, sizeof(c->class_name), "latency");
	snprintf(c->core_class, sizeof(c->core_class), "performance");
	snprintf(c->mode, sizeof(c->mode), "remote-partition");
	ck_assert_msg(cc_cpulist_parse(cpus, c->cpus, "cpus", &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_cpulist_parse(parked, c->parked, "parked", &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_cpulist_parse("0", c->mems, "mems", &err) == 0, "%s", err.msg);
	c->exclusive = true;
	c->steer_irqs = steer_irqs;
	c->created = 1700000000;
}

pid_t cc_test_fork(void)
{
	pid_t pid;

	/* What stdio holds would otherwise be written by both processes. */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		ck_abort_msg("fork: %s", strerror(errno));
	return pid;
}

int cc_test_filtered_status(int (*load)(struct cc_err *), int (*body)(void *), void *arg, int *status)
{
	int fds[2], result = -1000, st = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = cc_test_fork();
	if (pid == 0) {
		struct cc_err err = CC_ERR_INIT;
		int r;

		close(fds[0]);
		if (load && load(&err) < 0) {
			fprintf(stderr, "filter: %s\n", err.msg);
			r = -2000;
		} else {
			r = body(arg);
		}
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &result, sizeof(result)) != sizeof(result))
		result = -1000;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (status)
		*status = st;
	return result;
}

int cc_test_filtered(int (*load)(struct cc_err *), int (*body)(void *), void *arg)
{
	return cc_test_filtered_status(load, body, arg, NULL);
}

/* The struct is filled by hand: the suites' fake roots have no
 * cgroup.controllers for cc_cg_open, and the probe only reads (beneath
 * the mount, as the hook's own does; a root without one has every
 * cgroup gone). */
static struct cc_cg gc_cg(const struct cc_root *root, const char *mount)
{
	struct cc_err e = CC_ERR_INIT;
	struct cc_cg cg;

	memset(&cg, 0, sizeof(cg));
	cg.root = root;
	snprintf(cg.mount, sizeof(cg.mount), "%s", mount ? mount : CC_CGROUP_MOUNT);
	cg.mountfd = cc_root_open_nofollow(root, cg.mount, O_PATH | O_DIRECTORY, &e);
	return cg;
}

int cc_test_gc(struct cc_ledger *l, const struct cc_root *root, const char *mount,
	       int (*release)(struct cc_carve *c, void *arg), void *arg, struct cc_err *err)
{
	_cleanup_cg_ struct cc_cg cg = gc_cg(root, mount);
	const struct cc_ledger_probe probe = { cc_cg_gc_probe, &cg };

	return cc_ledger_gc(l, &probe, release, arg, err);
}

int cc_test_gc_due(struct cc_ledger *l, const struct cc_root *root, const char *mount,
		   void (*due)(const struct cc_carve *c, void *arg), void *arg, struct cc_err *err)
{
	_cleanup_cg_ struct cc_cg cg = gc_cg(root, mount);
	const struct cc_ledger_probe probe = { cc_cg_gc_probe, &cg };

	return cc_ledger_gc_due(l, &probe, due, arg, err);
}
