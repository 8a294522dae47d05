/* make install / make uninstall (mk/install.mk) into a temporary DESTDIR:
 * the tree is exactly what it should be, every installed file is usable
 * (hooks.d JSON names the installed binary, units name it, man pages are
 * clean roff, the completion completes, the policy loads), an existing
 * policy is kept, and uninstall leaves nothing behind.  Also the
 * Kubernetes installer script (install-on-node.sh) into a fake node root:
 * the copied loader and libraries run the binary. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "ledger.h"
#include "policy.h"
#include "testlib.h"

#define SRC CC_SOURCE_DIR

/* make in the source tree, never rebuilding the binary under test. */
/* The binaries under test, never rebuilt: the one named, and the first
 * stage make unit names (the tree's own otherwise). */
#define FIRST_STAGE "\"${CORECARVE_FIRST_STAGE_BIN:-" SRC "/corecarve-hook}\""
#define MAKE "make -s --no-print-directory -C '" SRC "' BIN='%s' -o '%s' FIRST_STAGE_BIN=" FIRST_STAGE " -o " FIRST_STAGE

static void reset(char **p)
{
	free(*p);
	*p = NULL;
}

static char *tmpdir(void)
{
	char t[] = "/tmp/cc-install-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(t));
	return strdup(t);
}

/* With PREFIX=/usr; every unit in systemd/ comes in between. */
static const char *const tree_usr[] = {
	"/etc/corecarve/policy.yaml",
	"/usr/bin/corecarve",
	"/usr/bin/corecarve-hook",
	"UNITS",
	"/usr/share/bash-completion/completions/corecarve",
	"/usr/share/containers/oci/hooks.d/corecarve-createRuntime.json",
	"/usr/share/containers/oci/hooks.d/corecarve-poststop.json",
	"DOCS",
	"/usr/share/man/man5/corecarve-policy.5",
	"/usr/share/man/man7/corecarve-annotations.7",
	"/usr/share/man/man8/corecarve.8",
	NULL,
};

static void assert_mode(const char *dest, const char *file, mode_t want)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", dest, file);
	ck_assert_msg(stat(p, &st) == 0, "%s: %s", p, strerror(errno));
	ck_assert_msg((st.st_mode & 07777) == want, "%s: mode %o, want %o", file, st.st_mode & 07777, want);
}

START_TEST(test_install_tree)
{
	_cleanup_free_ char *d = tmpdir(), *out = NULL, *list = NULL, *units = NULL;
	const char *b = cc_test_bin("install tests");
	size_t off = 0;
	char want[8192];

	if (!b)
		return;
	ck_assert_msg(cc_test_sh(&out, MAKE " install DESTDIR='%s' PREFIX=/usr", b, b, d) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "(the default)"));
	/* Exactly these files, nothing else. */
	reset(&out);
	for (int i = 0; tree_usr[i]; i++) {
		if (!strcmp(tree_usr[i], "DOCS")) {
			_cleanup_free_ char *docs = NULL;

			ck_assert_int_eq(cc_test_sh(&docs, "cd '" SRC "/docs' && ls *.md | sed 's|^|/usr/share/doc/corecarve/|' | LC_ALL=C sort"), 0);
			off += (size_t)snprintf(want + off, sizeof(want) - off, "%s", docs);
			continue;
		}
		if (strcmp(tree_usr[i], "UNITS")) {
			off += (size_t)snprintf(want + off, sizeof(want) - off, "%s\n", tree_usr[i]);
			continue;
		}
		ck_assert_int_eq(cc_test_sh(&units, "cd '" SRC "/systemd' && ls corecarve* | sed 's/\\.in$//; s|^|/usr/lib/systemd/system/|' | LC_ALL=C sort"), 0);
		off += (size_t)snprintf(want + off, sizeof(want) - off, "%s", units);
	}
	ck_assert_int_eq(cc_test_sh(&list, "cd '%s' && find . -type f | sed 's/^\\.//' | LC_ALL=C sort", d), 0);
	ck_assert_str_eq(list, want);
	reset(&list);
	assert_mode(d, "/usr/bin/corecarve", 0755);
	assert_mode(d, "/usr/bin/corecarve-hook", 0755);
	assert_mode(d, "/etc/corecarve/policy.yaml", 0644);
	assert_mode(d, "/usr/share/containers/oci/hooks.d/corecarve-poststop.json", 0644);
	assert_mode(d, "/usr/lib/systemd/system/corecarve-audit.service", 0644);

	/* The binary runs; the policy is the default and loads. */
	ck_assert_int_eq(cc_test_sh(&out, "'%s/usr/bin/corecarve' --version", d), 0);
	ck_assert_str_eq(out, "corecarve 0.1.0\n");
	reset(&out);
	/* The first stage answers for a container without the annotation by
	 * itself, and hands the rest to the corecarve beside it. */
	ck_assert_int_eq(cc_test_sh(&out, "echo '{\"id\":\"c1\",\"bundle\":\"\"}' | '%s/usr/bin/corecarve-hook' createRuntime", d), 0);
	ck_assert_str_eq(out, "");
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "'%s/usr/bin/corecarve-hook' --help", d), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: corecarve hook"));
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "cmp '%s/etc/corecarve/policy.yaml' '" SRC "/examples/policy-default.yaml'", d), 0);
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "CORECARVE_POLICY='%s/etc/corecarve/policy.yaml' '%s/usr/bin/corecarve' plan "
				  "--synthetic 'pack:1 core:4 pu:2' --class latency --cpus 1 --state \"$(mktemp -d)\"",
			    d, d), 0);
	reset(&out);
	/* hooks.d and units name the installed binary; no placeholder is left. */
	ck_assert_int_eq(cc_test_sh(&out, "grep -h '\"path\"' '%s'/usr/share/containers/oci/hooks.d/*.json", d), 0);
	ck_assert_str_eq(out, "    \"path\": \"/usr/bin/corecarve\",\n    \"path\": \"/usr/bin/corecarve\",\n");
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "cd '%s'/usr/lib/systemd/system && sed -n 's/^ExecStart=//p' corecarve-audit.service && "
				  "grep -h '^ExecStart=.*/corecarve ' *.service | grep -v '/usr/bin/corecarve ' | wc -l", d), 0);
	ck_assert_str_eq(out, "/usr/bin/corecarve audit --fix=${AUTOFIX} --prometheus /var/lib/prometheus/node-exporter/corecarve.prom\n0\n");
	reset(&out);
	/* The schedule's codes are the audit's, and its repairs are what the
	 * unit may write. */
	ck_assert_int_eq(cc_test_sh(&out, "cd '%s'/usr/lib/systemd/system && l=$(sed -n 's/^Environment=AUTOFIX=//p' corecarve-audit.service) && "
				  "'%s/usr/bin/corecarve' audit --fix=\"$l\" --root /nonexistent 2>&1 | grep -c 'cannot act on --root'; "
				  "echo \"$l\" | grep -c TASK_ESCAPED; grep -c '^ReadWritePaths=.*/run/corecarve' corecarve-audit.service",
			    d, d), 0);
	ck_assert_str_eq(out, "1\n0\n1\n");
	reset(&out);
	ck_assert_int_ne(cc_test_sh(&out, "grep -rlI '@[A-Z][A-Z_]*@' '%s'", d), 0);
	reset(&out);
	/* Man pages: roff without warnings, and they render. */
	ck_assert_msg(cc_test_sh(&out, "cd '%s/usr/share/man' && for m in man8/corecarve.8 man5/corecarve-policy.5 man7/corecarve-annotations.7; do "
			       "groff -man -t -ww -z $m || exit 1; done", d) == 0 && !*out,
		      "groff: %s", out);
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "groff -man -t -Tascii -P-bou '%s/usr/share/man/man8/corecarve.8' | grep -c 'EXIT STATUS'", d), 0);
	reset(&out);
	/* The completion completes commands, options and the policy's classes. */
	ck_assert_int_eq(cc_test_sh(&out, "bash -c '. \"%s/usr/share/bash-completion/completions/corecarve\"; "
				  "COMP_WORDS=(corecarve ex); COMP_CWORD=1; _corecarve; echo \"${COMPREPLY[*]}\"; "
				  "COMP_WORDS=(corecarve status --s); COMP_CWORD=2; _corecarve; echo \"${COMPREPLY[*]}\"; "
				  "CORECARVE_POLICY=\"%s/etc/corecarve/policy.yaml\"; "
				  "COMP_WORDS=(corecarve exec --class \"\"); COMP_CWORD=3; _corecarve; echo \"${COMPREPLY[*]}\"; "
				  "COMP_WORDS=(corecarve exec --class latency -- ls); COMP_CWORD=5; _corecarve; "
				  "[[ \" ${COMPREPLY[*]} \" == *\" ls \"* ]] && echo cmd-ok'",
			    d, d), 0);
	ck_assert_str_eq(out, "exec\n--svg --state --synthetic\nlatency throughput background isolated\ncmd-ok\n");
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "bash -c '. \"%s/usr/share/bash-completion/completions/corecarve\"; "
				  "COMP_WORDS=(corecarve ca); COMP_CWORD=1; _corecarve; echo \"${COMPREPLY[*]}\"; "
				  "COMP_WORDS=(corecarve status --table \"\"); COMP_CWORD=3; _corecarve; echo \"${COMPREPLY[*]}\"; "
				  "COMP_WORDS=(corecarve doctor --pro); COMP_CWORD=2; _corecarve; echo \"${COMPREPLY[*]}\"'",
			    d), 0);
	ck_assert_str_eq(out, "capture calibrate\ncarves cpus capacity power\n--problems\n");
	reset(&out);

	/* uninstall: nothing left. */
	ck_assert_msg(cc_test_sh(&out, MAKE " uninstall DESTDIR='%s' PREFIX=/usr", b, b, d) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "unchanged default"));
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&list, "find '%s' -type f", d), 0);
	reset(&list);
	ck_assert_int_eq(cc_test_sh(&list, "find '%s' -type f | wc -l; test ! -e '%s/etc/corecarve'", d, d), 0);
	ck_assert_str_eq(list, "0\n");
	reset(&list);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", d), 0);
}
END_TEST

/* An operator's policy survives install and uninstall; PREFIX moves the
 * binary and what names it, not the hooks.d directory or /etc. */
START_TEST(test_install_keeps_policy)
{
	_cleanup_free_ char *d = tmpdir(), *out = NULL;
	const char *b = cc_test_bin("install tests");

	if (!b)
		return;
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/etc/corecarve' && echo 'minShared: 3' > '%s/etc/corecarve/policy.yaml'", d, d), 0);
	ck_assert_msg(cc_test_sh(&out, MAKE " install DESTDIR='%s'", b, b, d) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "policy: keeping the existing"));
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "cat '%s/etc/corecarve/policy.yaml'", d), 0);
	ck_assert_str_eq(out, "minShared: 3\n");
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "test -x '%s/usr/local/bin/corecarve' && test -e '%s/usr/share/containers/oci/hooks.d/corecarve-createRuntime.json' && "
				  "test -e '%s/usr/local/share/man/man8/corecarve.8' && test -e '%s/usr/local/lib/systemd/system/corecarve-prepare.service' && "
				  "grep -h '\"path\"' '%s/usr/share/containers/oci/hooks.d/corecarve-createRuntime.json'",
			    d, d, d, d, d), 0);
	ck_assert_str_eq(out, "    \"path\": \"/usr/local/bin/corecarve\",\n");
	reset(&out);
	ck_assert_msg(cc_test_sh(&out, MAKE " uninstall DESTDIR='%s'", b, b, d) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "policy: keeping"));
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "find '%s' -type f", d), 0);
	ck_assert_str_eq(out + strlen(d), "/etc/corecarve/policy.yaml\n");
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", d), 0);
}
END_TEST

/* The DaemonSet's installer, into a directory standing for the node. */
START_TEST(test_install_on_node)
{
	_cleanup_free_ char *d = tmpdir(), *out = NULL;
	const char *b = cc_test_bin("install tests");

	if (!b)
		return;
	ck_assert_msg(cc_test_sh(&out, "HOST='%s' BIN='%s' HOOK_BIN=" FIRST_STAGE " HOOKS='" SRC "/manifests/hooks.d' POLICY=/nonexistent "
			       "DEFAULT_POLICY='" SRC "/examples/policy-default.yaml' sh '" SRC "/manifests/kubernetes/image/install-on-node.sh'",
			 d, b) == 0, "%s", out);
	reset(&out);
	/* The first stage, static, beside the wrapper it runs when there is
	 * work: it answers an unannotated container on the node as it is. */
	ck_assert_int_eq(cc_test_sh(&out, "echo '{\"id\":\"c1\",\"bundle\":\"\"}' | '%s/opt/corecarve/bin/corecarve-hook' createRuntime", d), 0);
	ck_assert_str_eq(out, "");
	reset(&out);
	/* The wrapper runs the binary through the copied loader. */
	ck_assert_int_eq(cc_test_sh(&out, "sed -n 3p '%s/opt/corecarve/bin/corecarve'", d), 0);
	ck_assert_msg(!strncmp(out, "exec /opt/corecarve/lib/ld-", 27) && strstr(out, " --library-path /opt/corecarve/lib /opt/corecarve/libexec/corecarve \"$@\""),
		      "%s", out);
	reset(&out);
	ck_assert_int_eq(cc_test_sh(&out, "cd '%s/opt/corecarve' && ./lib/ld-*.so.* --library-path ./lib ./libexec/corecarve --version", d), 0);
	ck_assert_str_eq(out, "corecarve 0.1.0\n");
	reset(&out);
	/* Tables work through the copied libraries too (libsmartcols is
	 * dlopen()ed, so ldd does not name it). */
	ck_assert_msg(cc_test_sh(&out, "cd '%s/opt/corecarve' && ./lib/ld-*.so.* --library-path ./lib ./libexec/corecarve "
				       "status --state \"$(mktemp -d)\" --synthetic 'pack:1 pu:1' --table capacity -n -o CLASS",
				 d) == 0 && strstr(out, "latency\n"),
		      "%s", out);
	reset(&out);
	ck_assert_int_eq(cc_test_sh(NULL, "test -e '%s/opt/corecarve/lib/libsmartcols.so.1'", d), 0);
	ck_assert_int_eq(cc_test_sh(&out, "grep -h '\"path\"' '%s'/etc/containers/oci/hooks.d/*.json", d), 0);
	ck_assert_str_eq(out, "    \"path\": \"/opt/corecarve/bin/corecarve\",\n    \"path\": \"/opt/corecarve/bin/corecarve\",\n");
	reset(&out);
	/* A policy that does not load replaces nothing. */
	ck_assert_int_eq(cc_test_sh(NULL, "printf 'classes:\\n  a: {coreType: performance, smt: half}\\n' > '%s/bad.yaml'", d), 0);
	ck_assert_int_eq(cc_test_sh(&out, "HOST='%s' BIN='%s' HOOKS='" SRC "/manifests/hooks.d' POLICY='%s/bad.yaml' "
				  "HOOK_BIN=" FIRST_STAGE " sh '" SRC "/manifests/kubernetes/image/install-on-node.sh'", d, b, d), 1);
	ck_assert_ptr_nonnull(strstr(out, "classes.a.smt: expected isolate or full, got \"half\""));
	ck_assert_ptr_nonnull(strstr(out, "the node keeps its current one"));
	reset(&out);
	ck_assert_int_eq(cc_test_sh(NULL, "cmp '%s/etc/corecarve/policy.yaml' '" SRC "/examples/policy-default.yaml'", d), 0);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", d), 0);
}
END_TEST

/* uninstall refuses while carves are recorded (their poststop hooks name
 * the binary it would remove), lists them, and goes on with FORCE=1. */
START_TEST(test_uninstall_live_carves)
{
	_cleanup_free_ char *d = tmpdir(), *out = NULL;
	const char *b = cc_test_bin("install tests");
	struct cc_err err = CC_ERR_INIT;
	char state[4096];
	struct cc_ledger *l;
	struct cc_carve c;

	if (!b)
		return;
	ck_assert_msg(cc_test_sh(&out, MAKE " install DESTDIR='%s' PREFIX=/usr", b, b, d) == 0, "%s", out);
	reset(&out);
	snprintf(state, sizeof(state), "%s/state", d);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_ptr_nonnull(l = cc_ledger_open(state, &err));
	cc_test_carve(&c, "3f9c2a7be0d1", "2,4", "3,5", false);
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0 && cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	cc_ledger_close(l);
	ck_assert_int_ne(cc_test_sh(&out, MAKE " uninstall DESTDIR='%s' PREFIX=/usr STATE='%s'", b, b, d, state), 0);
	ck_assert_msg(strstr(out, "uninstall: refused: ") && strstr(out, "records live carves (id kind class cgroup):") &&
			      strstr(out, "  3f9c2a7be0d1 container latency /kubepods/3f9c2a7be0d1\n") &&
			      strstr(out, "make uninstall RELEASE=1") && strstr(out, "FORCE=1"),
		      "%s", out);
	reset(&out);
	ck_assert_int_eq(cc_test_sh(NULL, "test -x '%s/usr/bin/corecarve'", d), 0);
	ck_assert_msg(cc_test_sh(&out, MAKE " uninstall DESTDIR='%s' PREFIX=/usr STATE='%s' FORCE=1", b, b, d, state) == 0,
		      "%s", out);
	reset(&out);
	ck_assert_int_ne(cc_test_sh(NULL, "test -e '%s/usr/bin/corecarve'", d), 0);
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", d), 0);
}
END_TEST

/* The units follow systemd's conventions: a slice unit for the partition
 * parent, no shell one-liners, no condition that skips a failing audit. */
START_TEST(test_units)
{
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(cc_test_sh(&out, "cd '" SRC "/systemd' && grep -l 'sh -c' corecarve*; "
					  "grep -l ^ConditionPathExists corecarve-audit.service.in corecarve-prepare.service.in; "
					  "sed -n 's/^ExecStart=//p' corecarve-prepare.service.in; grep -c '^\\[Unit\\]' corecarve.slice; "
					  "grep -h '^Requires=\\|^After=corecarve' corecarve-prepare.service.in"),
			 0);
	ck_assert_str_eq(out, "@BINDIR@/corecarve init-parent --if-needed @PARENT@\n1\nRequires=corecarve.slice\n"
			      "After=corecarve.slice\n");
	reset(&out);
	if (cc_test_sh(NULL, "command -v systemd-analyze >/dev/null") == 0) {
		ck_assert_msg(cc_test_sh(&out, "cd '" SRC "/systemd' && systemd-analyze verify --man=no corecarve.slice 2>&1 | "
					       "grep -v 'not found\\|Unit .* not found'") != 0 || !*out,
			      "%s", out);
	}
}
END_TEST

static Suite *install_suite(void)
{
	Suite *s = suite_create("install");
	TCase *tc = tcase_create("install");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_install_tree);
	tcase_add_test(tc, test_install_keeps_policy);
	tcase_add_test(tc, test_install_on_node);
	tcase_add_test(tc, test_uninstall_live_carves);
	tcase_add_test(tc, test_units);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(install_suite)
