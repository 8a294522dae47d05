/* corecarve-hook, the registered hook's first stage (hooks/first_stage.c):
 * it exits 0 by itself only where `corecarve hook` would do nothing, and
 * otherwise runs the `corecarve` beside it with the same arguments and the
 * same state on stdin.
 *
 * Most cases run a copy of the real first stage next to a recording
 * stand-in for the full binary (a shell script that keeps its arguments
 * and stdin and exits 7), so that which of the two answered is visible.
 * The last runs the real pair from the build: the first stage hands an
 * annotated container to the real full hook, whose refusal and exit
 * status reach the caller. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "ledger.h"
#include "testlib.h"

#define STANDIN_RC 7

static const char *first_stage_bin(void)
{
	static char path[4096];
	const char *env = getenv("CORECARVE_FIRST_STAGE_BIN");

	snprintf(path, sizeof(path), "%s", env && *env ? env : CC_SOURCE_DIR "/corecarve-hook");
	if (access(path, X_OK) != 0) {
		cc_test_skip("%s not built (make corecarve-hook)", path);
		return NULL;
	}
	return path;
}

/* A directory with a copy of the first stage and the stand-in beside it;
 * the bundle directory b/ inside, and the state directory state/. */
static bool setup(char *dir)
{
	const char *bin = first_stage_bin();

	if (!bin)
		return false;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(NULL,
				    "cp '%s' %s/corecarve-hook && mkdir %s/b %s/state && "
				    "printf '#!/bin/sh\\nprintf \"%%%%s\\\\n\" \"$*\" >\"${0%%%%/*}/full.args\"\\n"
				    "cat >\"${0%%%%/*}/full.stdin\"\\nexit %d\\n' >%s/corecarve && chmod +x %s/corecarve",
				    bin, dir, dir, dir, STANDIN_RC, dir, dir),
			 0);
	return true;
}

static void teardown(const char *dir)
{
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}

/* Run `corecarve-hook ARGS` with `state` on stdin (env: a shell prefix);
 * its exit status. */
static int run(const char *dir, const char *env, const char *args, const char *state)
{
	cc_test_write_file(dir, "state.json", state);
	return cc_test_sh(NULL, "cd %s && %s ./corecarve-hook %s <state.json", dir, env ? env : "", args);
}

/* The arguments the stand-in got, or NULL when it did not run. */
static char *full_args(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/full.args", dir);
	return access(path, F_OK) == 0 ? cc_test_slurp(path) : NULL;
}

/* The stand-in ran with `args` and exactly `state` on stdin. */
static void assert_full(const char *dir, const char *args, const char *state)
{
	_cleanup_free_ char *got = full_args(dir), *in = NULL;
	char path[4096], want[1024];

	ck_assert_msg(got != NULL, "the full hook did not run for \"%s\"", args);
	snprintf(want, sizeof(want), "%s\n", args);
	ck_assert_str_eq(got, want);
	snprintf(path, sizeof(path), "%s/full.stdin", dir);
	in = cc_test_slurp(path);
	ck_assert_str_eq(in, state);
}

static void assert_alone(const char *dir)
{
	_cleanup_free_ char *got = full_args(dir);

	ck_assert_msg(got == NULL, "the full hook ran: %s", got ? got : "");
}

static char *state_json(const char *id, const char *bundle, const char *annotations)
{
	char *s = NULL;

	ck_assert_int_ge(asprintf(&s,
				  "{\"ociVersion\":\"1.0.2\",\"id\":\"%s\",\"status\":\"creating\",\"pid\":1,"
				  "\"bundle\":\"%s\"%s%s}",
				  id, bundle, annotations ? ",\"annotations\":" : "", annotations ? annotations : ""),
			 0);
	return s;
}

static void bundle(const char *dir, const char *annotations)
{
	char *cfg = NULL, b[4096];

	snprintf(b, sizeof(b), "%s/b", dir);
	ck_assert_int_ge(asprintf(&cfg, "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"]},"
					"\"root\":{\"path\":\"rootfs\"}%s%s}",
				  annotations ? ",\"annotations\":" : "", annotations ? annotations : ""),
			 0);
	cc_test_write_file(b, "config.json", cfg);
	free(cfg);
}

/* A container without the annotation (none in the state, none in
 * config.json, other keys in both): the first stage answers, for every
 * creation stage. */
START_TEST(test_unannotated_alone)
{
	char dir[] = "/tmp/cc-first-XXXXXX", b[4096];
	_cleanup_free_ char *st = NULL, *st2 = NULL;

	if (!setup(dir))
		return;
	snprintf(b, sizeof(b), "%s/b", dir);
	bundle(dir, "{\"io.kubernetes.cri.container-type\":\"container\",\"corecarve.io/other\":\"x\"}");
	st = state_json("c1", b, NULL);
	ck_assert_int_eq(run(dir, NULL, "createRuntime", st), 0);
	ck_assert_int_eq(run(dir, NULL, "prestart --verbose --state /nonexistent --policy /nonexistent", st), 0);
	/* The forms of the hook's table (hook_opts.c), the same as the full
	 * hook's: "--opt=VALUE" too. */
	ck_assert_int_eq(run(dir, NULL, "createRuntime --state=/nonexistent --policy=/nonexistent", st), 0);
	assert_alone(dir);
	/* The state's annotations are where the full hook looks first: when
	 * it has some, config.json is not read (here it would ask). */
	bundle(dir, "{\"corecarve.io/placement\":\"{class: latency}\"}");
	st2 = state_json("c1", b, "{\"io.kubernetes.cri.sandbox-id\":\"s1\"}");
	ck_assert_int_eq(run(dir, NULL, "createRuntime", st2), 0);
	assert_alone(dir);
	teardown(dir);
}
END_TEST

/* The annotation, plain or per container, in the state or in config.json,
 * or a grant's:
 * the full hook runs, with the arguments and the state's bytes, and its
 * exit status is the caller's. */
START_TEST(test_annotated_goes_full)
{
	char dir[] = "/tmp/cc-first-XXXXXX", b[4096];
	_cleanup_free_ char *st = NULL, *st2 = NULL;

	if (!setup(dir))
		return;
	snprintf(b, sizeof(b), "%s/b", dir);
	st = state_json("c1", b, "{\"corecarve.io/placement\":\"{class: latency}\"}");
	ck_assert_int_eq(run(dir, NULL, "createRuntime --state /x", st), STANDIN_RC);
	assert_full(dir, "hook createRuntime --state /x", st);
	unlink(strcat(strcpy(b, dir), "/full.args"));
	snprintf(b, sizeof(b), "%s/b", dir);
	bundle(dir, "{\"corecarve.io/placement.web\":\"{class: latency}\"}");
	st2 = state_json("c2", b, NULL);
	ck_assert_int_eq(run(dir, NULL, "prestart", st2), STANDIN_RC);
	assert_full(dir, "hook prestart", st2);
	/* A grant the device plugin answered, alone (issue #27). */
	unlink(strcat(strcpy(b, dir), "/full.args"));
	snprintf(b, sizeof(b), "%s/b", dir);
	bundle(dir, "{\"corecarve.io/grant\":\"grant:latency:2-3:0123456789abcdef0123456789abcdef\"}");
	ck_assert_int_eq(run(dir, NULL, "createRuntime", st2), STANDIN_RC);
	assert_full(dir, "hook createRuntime", st2);
	teardown(dir);
}
END_TEST

/* What the first stage cannot judge is the full hook's to report: a
 * state the full hook's parser refuses, a bundle without a readable
 * config.json, an option it does not know, no stage. */
START_TEST(test_unsure_goes_full)
{
	static const char *const bad_states[] = {
		"not json",
		"{\"ociVersion\":\"1.0.2\",\"status\":\"creating\"}",
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"pid\":\"one\"}",
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"annotations\":{\"a\":1}}",
		"{\"ociVersion\":\"1.0.2\",\"id\":\"../x\"}",
	};
	char dir[] = "/tmp/cc-first-XXXXXX", path[4096];
	_cleanup_free_ char *st = NULL, *st2 = NULL;

	if (!setup(dir))
		return;
	snprintf(path, sizeof(path), "%s/full.args", dir);
	for (size_t i = 0; i < sizeof(bad_states) / sizeof(bad_states[0]); i++) {
		ck_assert_int_eq(run(dir, NULL, "createRuntime", bad_states[i]), STANDIN_RC);
		assert_full(dir, "hook createRuntime", bad_states[i]);
		unlink(path);
	}
	st = state_json("c1", "/nonexistent", NULL);
	ck_assert_int_eq(run(dir, NULL, "createRuntime", st), STANDIN_RC);
	assert_full(dir, "hook createRuntime", st);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b", dir);
	bundle(dir, NULL);
	st2 = state_json("c1", path, NULL);
	snprintf(path, sizeof(path), "%s/full.args", dir);
	ck_assert_int_eq(run(dir, NULL, "createRuntime --root /", st2), STANDIN_RC);
	assert_full(dir, "hook createRuntime --root /", st2);
	unlink(path);
	/* An option without its value, or one the table does not know. */
	ck_assert_int_eq(run(dir, NULL, "createRuntime --state", st2), STANDIN_RC);
	assert_full(dir, "hook createRuntime --state", st2);
	unlink(path);
	ck_assert_int_eq(run(dir, NULL, "createRuntime --verbose=1", st2), STANDIN_RC);
	assert_full(dir, "hook createRuntime --verbose=1", st2);
	unlink(path);
	ck_assert_int_eq(run(dir, NULL, "", st2), STANDIN_RC);
	assert_full(dir, "hook", st2);
	unlink(path);
	ck_assert_int_eq(run(dir, NULL, "--help", st2), STANDIN_RC);
	unlink(path);
	ck_assert_int_eq(run(dir, NULL, "poststart", st2), STANDIN_RC);
	assert_full(dir, "hook poststart", st2);
	teardown(dir);
}
END_TEST

/* poststop: the full hook runs only for a container the ledger names.
 * The ledger is written by the ledger itself, so the id's bytes are the
 * writer's: a carve, found under --state, under $CORECARVE_STATE_DIR, and
 * not for another container or without a ledger. */
START_TEST(test_poststop_by_ledger)
{
	char dir[] = "/tmp/cc-first-XXXXXX", state[4096], env[4400], args[4200], path[4096];
	_cleanup_free_ char *mine = NULL, *other = NULL, *odd = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_carve c;
	struct cc_ledger *l;

	if (!setup(dir))
		return;
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(path, sizeof(path), "%s/full.args", dir);
	mine = state_json("0123456789abcdef", "/gone", NULL);
	other = state_json("fedcba9876543210", "/gone", NULL);
	snprintf(args, sizeof(args), "poststop --state %s", state);
	/* No ledger yet: nothing was ever carved. */
	ck_assert_int_eq(run(dir, NULL, args, mine), 0);
	assert_alone(dir);

	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "0123456789abcdef", "2-3", "10-11", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_carve_fini(&c);
	cc_ledger_close(l);

	ck_assert_int_eq(run(dir, NULL, args, other), 0);
	assert_alone(dir);
	ck_assert_int_eq(run(dir, NULL, args, mine), STANDIN_RC);
	snprintf(env, sizeof(env), "hook %s", args);
	assert_full(dir, env, mine);
	unlink(path);
	snprintf(env, sizeof(env), "CORECARVE_STATE_DIR=%s", state);
	ck_assert_int_eq(run(dir, env, "poststop", mine), STANDIN_RC);
	assert_full(dir, "hook poststop", mine);
	unlink(path);
	ck_assert_int_eq(run(dir, env, "poststop", other), 0);
	assert_alone(dir);
	/* An id JSON would escape cannot be looked for in the bytes. */
	odd = state_json("a\\\"b", "/gone", NULL);
	ck_assert_int_eq(run(dir, env, "poststop", odd), STANDIN_RC);
	unlink(path);
	free(odd);
	odd = state_json("caf\xc3\xa9", "/gone", NULL);
	ck_assert_int_eq(run(dir, env, "poststop", odd), STANDIN_RC);
	/* A ledger that cannot be read is the full hook's to report. */
	unlink(path);
	ck_assert_int_eq(cc_test_sh(NULL, "rm %s/" CC_LEDGER_FILE " && mkdir %s/" CC_LEDGER_FILE, state, state), 0);
	ck_assert_int_eq(run(dir, env, "poststop", other), STANDIN_RC);
	teardown(dir);
}
END_TEST

/* A container that asks for nothing, started while a cpuset-only carve
 * lives: the full hook narrows it as the carve's peer (container.c,
 * beside_carves), so the first stage hands it over; beside partition
 * carves only, it answers alone. */
START_TEST(test_unannotated_beside_cpuset_only)
{
	char dir[] = "/tmp/cc-first-XXXXXX", state[4096], args[4200], b[4096], path[4096], full[4400];
	_cleanup_free_ char *st = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_carve c;
	struct cc_ledger *l;

	if (!setup(dir))
		return;
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(path, sizeof(path), "%s/full.args", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	bundle(dir, "{\"io.kubernetes.cri.container-type\":\"container\"}");
	st = state_json("c9", b, NULL);
	snprintf(args, sizeof(args), "createRuntime --state %s", state);

	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "p1", "2-3", "10-11", false);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_carve_fini(&c);
	cc_ledger_close(l);
	ck_assert_int_eq(run(dir, NULL, args, st), 0);
	assert_alone(dir);

	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "k1", "4-5", "12-13", false);
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_carve_fini(&c);
	cc_ledger_close(l);
	ck_assert_int_eq(run(dir, NULL, args, st), STANDIN_RC);
	snprintf(full, sizeof(full), "hook %s", args);
	assert_full(dir, full, st);
	teardown(dir);
}
END_TEST

/* What neither stage reads refuses nothing: "annotations": null (in the
 * state and in config.json), a NUL byte in another tool's annotation
 * value, and a bad $CORECARVE_LOCK_TIMEOUT for a container that needs no
 * lock.  The first stage answers alone, and the real full hook, run
 * directly as a runtime without the first stage would, agrees (exit 0,
 * nothing printed). */
START_TEST(test_unread_agree)
{
	const char *bin = first_stage_bin(), *full = cc_test_bin("the full hook");
	char dir[] = "/tmp/cc-first-XXXXXX", b[4096];
	_cleanup_free_ char *nul = NULL, *null_st = NULL;
	const char *states[2];

	if (!bin || !full || !setup(dir))
		return;
	snprintf(b, sizeof(b), "%s/b", dir);
	bundle(dir, "null");
	null_st = state_json("c1", b, "null");
	nul = state_json("c1", b, "{\"example.com/blob\":\"a\\u0000b\",\"io.kubernetes.cri.sandbox-id\":\"s1\"}");
	states[0] = null_st;
	states[1] = nul;
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *out = NULL;
		int rc;

		ck_assert_int_eq(run(dir, "CORECARVE_LOCK_TIMEOUT=abc", "createRuntime", states[i]), 0);
		assert_alone(dir);
		rc = cc_test_sh(&out, "cd %s && CORECARVE_LOCK_TIMEOUT=abc CORECARVE_STATE_DIR=%s/state " CC_TEST_HOOK_ENV
				"'%s' hook createRuntime <state.json", dir, dir, full);
		ck_assert_msg(rc == 0 && !strcmp(out, ""), "%s: exit %d: %s", states[i], rc, out);
	}
	teardown(dir);
}
END_TEST

/* poststop with a state directory or a ledger the full hook refuses: the
 * first stage hands it over (it used to answer "nothing recorded"): a
 * symlinked, a world-writable and a foreign-owned directory, a ledger
 * larger than CC_LEDGER_MAX, one with a NUL byte, a damaged one. */
START_TEST(test_poststop_refused_state)
{
	static const char *const prep[] = {
		"mv $D/state $D/real && ln -s real $D/state",
		"chmod 0777 $D/state",
		"chown 4242 $D/state",
		"truncate -s 17M $D/state/" CC_LEDGER_FILE,
		"printf '{\"version\":2}\\n\\0\\n' >$D/state/" CC_LEDGER_FILE,
		"printf '{\"version\":2}\\n[\"other\", \\n' >$D/state/" CC_LEDGER_FILE,
		"printf '{\"version\":1}\\n' >$D/state/" CC_LEDGER_FILE,
		"printf 'not json\\n' >$D/state/" CC_LEDGER_FILE,
	};
	char dir[] = "/tmp/cc-first-XXXXXX", args[4200], path[4096];
	_cleanup_free_ char *st = NULL;

	if (!setup(dir))
		return;
	st = state_json("0123456789abcdef", "/gone", NULL);
	snprintf(args, sizeof(args), "poststop --state %s/state", dir);
	snprintf(path, sizeof(path), "%s/full.args", dir);
	for (size_t i = 0; i < sizeof(prep) / sizeof(prep[0]); i++) {
		ck_assert_int_eq(cc_test_sh(NULL, "D=%s; rm -rf $D/state $D/real && mkdir -m 0700 $D/state", dir), 0);
		ck_assert_int_eq(cc_test_sh(NULL, "D=%s; %s", dir, prep[i]), 0);
		ck_assert_msg(run(dir, NULL, args, st) == STANDIN_RC, "%s: answered alone", prep[i]);
		unlink(path);
	}
	/* The same directory, healthy and empty, is "nothing recorded". */
	ck_assert_int_eq(cc_test_sh(NULL, "D=%s; rm -rf $D/state $D/real && mkdir -m 0700 $D/state", dir), 0);
	ck_assert_int_eq(run(dir, NULL, args, st), 0);
	assert_alone(dir);
	teardown(dir);
}
END_TEST

/* The full binary runs as root: the first stage executes it only when it
 * and its directory are root's alone (here, the test's own user's: it
 * runs as whoever runs the tests).  A group-writable binary, one owned by
 * another uid, a link in its place, a world-writable directory: an error
 * naming it, exit 2, and the stand-in never runs. */
START_TEST(test_full_binary_checked)
{
	static const struct {
		const char *prep, *want;
	} cases[] = {
		{ "chmod g+w $D/corecarve", "group- or world-writable (mode 0775)" },
		{ "chown 4242 $D/corecarve", "owned by uid 4242, not root" },
		{ "mv $D/corecarve $D/real && ln -s real $D/corecarve", "not a regular file" },
		{ "chmod 0777 $D", "the directory is group- or world-writable (mode 0777)" },
	};
	char dir[] = "/tmp/cc-first-XXXXXX", b[4096];
	_cleanup_free_ char *st = NULL;

	if (!setup(dir))
		return;
	snprintf(b, sizeof(b), "%s/b", dir);
	st = state_json("c1", b, "{\"corecarve.io/placement\":\"{class: latency}\"}");
	cc_test_write_file(dir, "state.json", st);
	ck_assert_int_eq(cc_test_sh(NULL, "chmod 0755 %s/corecarve %s", dir, dir), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL;
		int rc;

		ck_assert_int_eq(cc_test_sh(NULL, "D=%s; %s", dir, cases[i].prep), 0);
		rc = cc_test_sh(&out, "cd %s && ./corecarve-hook createRuntime <state.json", dir);
		ck_assert_msg(rc == 2, "%s: exit %d", cases[i].prep, rc);
		ck_assert_msg(strstr(out, cases[i].want) && strstr(out, "refusing to run it"), "%s: %s", cases[i].prep,
			      out);
		assert_alone(dir);
		/* Back to a good pair for the next case. */
		ck_assert_int_eq(cc_test_sh(NULL, "D=%s; if [ -L $D/corecarve ]; then rm $D/corecarve && mv $D/real "
						  "$D/corecarve; fi; chown 0 $D/corecarve && chmod 0755 $D/corecarve $D",
					    dir),
				 0);
	}
	/* And the good pair runs. */
	ck_assert_int_eq(cc_test_sh(NULL, "cd %s && ./corecarve-hook createRuntime <state.json", dir), STANDIN_RC);
	teardown(dir);
}
END_TEST

/* Started with SIGCHLD ignored (a runtime or a shell may hand that down),
 * the confined child's answer still reaches the first stage: a container
 * with nothing recorded is answered alone, not sent to the full hook. */
START_TEST(test_sigchld_ignored)
{
	char dir[] = "/tmp/cc-first-XXXXXX", args[4200];
	_cleanup_free_ char *st = NULL;

	if (!setup(dir))
		return;
	st = state_json("0123456789abcdef", "/gone", NULL);
	snprintf(args, sizeof(args), "poststop --state %s/state", dir);
	ck_assert_int_eq(run(dir, "perl -e '$SIG{CHLD} = \"IGNORE\"; exec @ARGV or exit 99'", args, st), 0);
	assert_alone(dir);
	teardown(dir);
}
END_TEST

/* The real pair from the build: the first stage hands an annotated
 * container to the full hook beside it, which refuses its request with
 * its own message and exit status; an unannotated one never reaches it. */
START_TEST(test_real_pair)
{
	const char *bin = first_stage_bin();
	char dir[] = "/tmp/cc-first-XXXXXX";
	_cleanup_free_ char *out = NULL, *st = NULL, *st2 = NULL;
	char b[4096];
	int rc;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(b, sizeof(b), "%s/b", dir);
	ck_assert_int_eq(mkdir(b, 0755), 0);
	bundle(dir, "{\"corecarve.io/placement\":\"{class: latency, cpus: 0}\"}");
	st = state_json("c-bad", b, NULL);
	cc_test_write_file(dir, "state.json", st);
	rc = cc_test_sh(&out, "CORECARVE_STATE_DIR=%s/state " CC_TEST_HOOK_ENV "'%s' createRuntime <%s/state.json", dir,
			bin, dir);
	ck_assert_int_eq(rc, 2);
	ck_assert_msg(strstr(out, "corecarve: createRuntime c-bad: annotation corecarve.io/placement: cpus: "
				  "expected an integer >= 1, got \"0\"\n"),
		      "%s", out);
	free(out);
	out = NULL;
	bundle(dir, NULL);
	st2 = state_json("c-none", b, NULL);
	cc_test_write_file(dir, "state.json", st2);
	rc = cc_test_sh(&out, "CORECARVE_STATE_DIR=%s/state '%s' createRuntime <%s/state.json", dir, bin, dir);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out, "");
	teardown(dir);
}
END_TEST

static Suite *first_stage_suite(void)
{
	Suite *s = suite_create("first_stage");
	TCase *tc = tcase_create("first_stage");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_unannotated_alone);
	tcase_add_test(tc, test_annotated_goes_full);
	tcase_add_test(tc, test_unsure_goes_full);
	tcase_add_test(tc, test_poststop_by_ledger);
	tcase_add_test(tc, test_unannotated_beside_cpuset_only);
	tcase_add_test(tc, test_unread_agree);
	tcase_add_test(tc, test_poststop_refused_state);
	tcase_add_test(tc, test_full_binary_checked);
	tcase_add_test(tc, test_sigchld_ignored);
	tcase_add_test(tc, test_real_pair);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(first_stage_suite)
