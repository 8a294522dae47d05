/* Shared helpers for the Check suites. */
#ifndef CC_TESTLIB_H
#define CC_TESTLIB_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>

struct cc_carve;
struct cc_err;
struct cc_ledger;
struct cc_root;

/* Note which test (and loop iteration) runs, for cc_test_skip: Check tells
 * neither to a helper, so START_TEST below calls this first. */
void cc_test_enter(const char *name, int iter);

/* Check's START_TEST (same TTest, same registration), its body entered
 * through cc_test_enter. */
#undef START_TEST
#define START_TEST(__testname)                                                                          \
	static void __testname##_body(int _i);                                                         \
	static void __testname##_fn(int _i)                                                            \
	{                                                                                              \
		cc_test_enter(#__testname, _i);                                                        \
		__testname##_body(_i);                                                                 \
	}                                                                                              \
	static const TTest __testname##_ttest = {                                                      \
		.name = #__testname, .fn = __testname##_fn, .file = __FILE__, .line = __LINE__         \
	};                                                                                             \
	static const TTest *__testname = &__testname##_ttest;                                          \
	static void __testname##_body(int _i CK_ATTRIBUTE_UNUSED)

/* The one way to skip: the running test cannot check (part of) what it is
 * for here (a fixture, the binary, root or a tool is missing).  Prints one
 * line on stdout,
 *   SKIPPED: <suite binary>:<test>:<iteration>: <reason>
 * which tests/unit/run.sh counts as one skipped test case, never a pass,
 * however many such lines the test prints (a test that skips and then
 * fails counts as failed).  The caller returns, or goes on with what it can
 * still check.  Called outside a test it aborts. */
void cc_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fork(2) for a test: the child gets 0 back having made no Check call;
 * a failed fork fails the test.  Check's messages (a passing ck_assert
 * writes one) go to one file that every process of the test shares, so a
 * child the test kills must make none: one killed in the middle of writing
 * a message that crosses a page leaves a torn one there, the runner reads
 * the rest out of step ("Bad message type") and the whole suite ends
 * unfinished (stop 52's CI: test_ledger's killed committers, once in
 * about 80 runs).  The pattern it replaces, `pid = fork(); ck_assert(pid
 * >= 0)`, made that call in the child too. */
pid_t cc_test_fork(void);

/* Directory of the shared real-machine fixtures (../shared/fixtures next to
 * the repository, or $CC_SHARED_DIR/fixtures).  NULL when absent. */
const char *cc_test_fixtures_dir(void);

/* Extract fixture `dir`'s archive `file` (tar, any compression) into a
 * private temporary directory once per process and return that directory,
 * or NULL (the test skipped, cc_test_skip) when the fixture is absent. */
const char *cc_test_fixture_tree(const char *dir, const char *file);

/* Path of a fixture file, or NULL (the test skipped, cc_test_skip). */
const char *cc_test_fixture_file(const char *dir, const char *file);

/* Write `text` to a new temporary file; returns its path (static buffer per call, caller frees). */
char *cc_test_write_tmp(const char *text);

/* Write `text` to DIR/NAME, replacing it; fails the test when it cannot. */
void cc_test_write_file(const char *dir, const char *name, const char *text);

/* Run a shell command (printf-style); its stdout and stderr together in
 * *out (caller frees; out may be NULL).  Returns its exit status, -1 when
 * it did not exit. */
int cc_test_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A whole file, NUL-terminated (caller frees); fails the test when unreadable. */
char *cc_test_slurp(const char *path);

/* Every byte of a file (NULs included) in *len, NUL-terminated, or NULL
 * when it cannot be opened. */
char *cc_test_slurp_len(const char *path, size_t *len);

/* The corecarve binary under test ($CORECARVE_BIN, else ./corecarve in the
 * source tree), or NULL (the test skipped, naming `what`) when it is not built. */
const char *cc_test_bin(const char *what);

/* Run body(arg) in a forked child once load() (one of sandbox.h's
 * filters; NULL: none) has confined it; the child leaves with _exit (a
 * sanitizer's exit-time work is not the command's).  Returns what body
 * returned, -2000 when the filter did not load (printed), -1000 when the
 * child died; its wait status into *status when status is not NULL. */
int cc_test_filtered_status(int (*load)(struct cc_err *), int (*body)(void *), void *arg, int *status);
int cc_test_filtered(int (*load)(struct cc_err *), int (*body)(void *), void *arg);

/* The environment, as a shell prefix, for `corecarve hook` run on this
 * host, where it confines itself (plugin/core/sandbox.c).  In a SANITIZE=1
 * build LeakSanitizer's scan at exit stops the world with a tracer thread
 * and mprotect, which the filter refuses on purpose: the hook would spin
 * there until the test's timeout.  Leaks are still checked in every other
 * run of the binary, and the filter itself in test_seccomp. */
#if defined(__SANITIZE_ADDRESS__)
#define CC_TEST_HOOK_ENV "ASAN_OPTIONS=detect_leaks=0 "
#else
#define CC_TEST_HOOK_ENV ""
#endif

/* A finished container carve as the ledger suites record it: id, cgroup
 * /kubepods/<id>, class latency on performance cores, a remote partition
 * on `cpus` with `parked`, mems 0; free it with cc_carve_fini. */
void cc_test_carve(struct cc_carve *c, const char *id, const char *cpus, const char *parked, bool steer_irqs);

/* The ledger's gc (and its dry run) as a hook runs it (container_gc.c):
 * the cgroup layer's cc_cg_gc_probe answers it, under `root` and the
 * cgroup mount `mount` (NULL: /sys/fs/cgroup). */
int cc_test_gc(struct cc_ledger *l, const struct cc_root *root, const char *mount,
	       int (*release)(struct cc_carve *c, void *arg), void *arg, struct cc_err *err);
int cc_test_gc_due(struct cc_ledger *l, const struct cc_root *root, const char *mount,
		   void (*due)(const struct cc_carve *c, void *arg), void *arg, struct cc_err *err);

/* Run the suite in fork mode and exit with its status. */
#define CC_TEST_MAIN(suite_fn)                                                 \
	int main(void)                                                         \
	{                                                                      \
		SRunner *sr = srunner_create(suite_fn());                      \
		int nf;                                                        \
		srunner_run_all(sr, CK_NORMAL);                                \
		nf = srunner_ntests_failed(sr);                                \
		srunner_free(sr);                                              \
		return nf ? EXIT_FAILURE : EXIT_SUCCESS;                       \
	}

#endif
