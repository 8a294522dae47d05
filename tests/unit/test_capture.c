/* corecarve capture (plugin/report/capture.h): the tree it writes is a --root tree
 * the other commands read as they read the node itself.  This host is
 * captured and read back (topology, doctor, irq status, plan, status); a
 * made-up cgroup-v2 node with a carve in its ledger is captured from a
 * tree and audited both ways; a directory with something in it, one
 * another user owns or can write, or a link, is refused; links in the
 * destination (from a hostile source tree, or swapped in by its owner
 * while the capture runs) are never written through. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "cleanup.h"
#include "ledger.h"
#include "testlib.h"

static char *mktree(void)
{
	char *dir = strdup("/tmp/cc-capture-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* `corecarve PRE [--root ROOT] POST` (ROOT NULL: the host), its stdout
 * minus lines matching `drop` (an extended regex, NULL: none). */
static char *run(const char *bin, const char *pre, const char *root, const char *post, const char *drop)
{
	char *out = NULL;

	cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' %s %s%s%s %s | grep -v -E '%s'", bin, pre, root ? "--root '" : "",
		   root ? root : "", root ? "'" : "", post, drop ? drop : "^$");
	return out;
}

/* This host, captured, reads back as itself. */
START_TEST(test_capture_this_host)
{
	const char *bin = cc_test_bin("capture");
	_cleanup_free_ char *base = mktree(), *out = NULL, *manifest = NULL;
	char dir[4096], state[4200], b[8400];
	static const struct {
		const char *what, *pre, *post, *drop;
	} same[] = {
		/* the map and the JSON name their source; all else is the node's */
		{ "topology", "topology", "--json", "\"source\"" },
		{ "irq status", "irq status", "--sample-ms 0", NULL },
		{ "doctor statuses", "doctor", "--json 2>/dev/null | grep '\"status\"'", NULL },
		{ "plan", "plan", "--class background --cpus 1 --json", "\"taken\"" },
	};

	if (!bin)
		return;
	snprintf(dir, sizeof(dir), "%s/node", base);
	snprintf(state, sizeof(state), "%s/state", base);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_msg(cc_test_sh(&out, "CORECARVE_STATE_DIR='%s' '%s' capture '%s'", state, bin, dir) == 0, "%s", out);
	ck_assert_msg(strstr(out, "captured this host into ") && strstr(out, "read it with: corecarve doctor --root"), "%s",
		      out);
	snprintf(b, sizeof(b), "%s/" CC_CAPTURE_MANIFEST, dir);
	manifest = cc_test_slurp(b);
	ck_assert_msg(strstr(manifest, "\nsource     this host\n") && strstr(manifest, "\nkernel     ") &&
			      strstr(manifest, "\ncorecarve  ") && strstr(manifest, "\nhwloc      "),
		      "%s", manifest);
	snprintf(b, sizeof(b), "%s/sys/devices/system/cpu/online", dir);
	ck_assert_int_eq(access(b, R_OK), 0);
	snprintf(b, sizeof(b), "%s/proc/self/mountinfo", dir);
	ck_assert_int_eq(access(b, R_OK), 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		_cleanup_free_ char *host = run(bin, same[i].pre, NULL, same[i].post, same[i].drop);
		_cleanup_free_ char *tree = run(bin, same[i].pre, dir, same[i].post, same[i].drop);

		ck_assert_msg(host && tree && *host && !strcmp(host, tree), "%s differs:\n--- host\n%s\n--- capture\n%s",
			      same[i].what, host, tree);
	}
	/* A second capture into the same directory is refused. */
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' capture '%s'", bin, dir), 2);
	ck_assert_msg(strstr(out, "is not empty; name a new directory"), "%s", out);
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST

static void put(const char *tree, const char *path, const char *text)
{
	char full[4096];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", tree, path);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p \"$(dirname '%s')\"", full), 0);
	ck_assert_ptr_nonnull(f = fopen(full, "w"));
	fputs(text, f);
	fclose(f);
}

/* A made-up cgroup-v2 node (F03's sysfs, a cgroupfs with one carve's
 * partition and a drifted peer, a ledger): audited as a tree and as its
 * capture, the same findings; the capture carries its ledger and policy. */
START_TEST(test_capture_audits_the_same)
{
	const char *bin = cc_test_bin("capture audit");
	const char *fx = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	_cleanup_free_ char *base = mktree(), *a = NULL, *b = NULL;
	char src[4096], cap[4096], state[4096], pol[4096];
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve c;

	if (!bin || !fx)
		return;
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(cap, sizeof(cap), "%s/cap", base);
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", base);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s' && cp -a '%s/sample1/.' '%s/'", src, fx, src), 0);
	put(src, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
	put(src, "/sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu\n");
	put(src, "/sys/fs/cgroup/cpuset.cpus.effective", "0-15\n");
	put(src, "/sys/fs/cgroup/kubepods/cpuset.cpus", "\n");
	put(src, "/sys/fs/cgroup/kubepods/cpuset.cpus.effective", "0-15\n");
	put(src, "/sys/fs/cgroup/kubepods/cpuset.cpus.partition", "member\n");
	put(src, "/sys/fs/cgroup/kubepods/cgroup.subtree_control", "cpuset cpu\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cpuset.cpus", "2,4\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cpuset.cpus.effective", "2,4\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cpuset.cpus.partition", "root invalid (Parent is not a partition root)\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cpuset.mems.effective", "0\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cgroup.events", "populated 1\nfrozen 0\n");
	put(src, "/sys/fs/cgroup/kubepods/c1/cgroup.threads", "");
	put(src, "/sys/fs/cgroup/kubepods/c1/cpu.max", "50000 100000\n");
	put(src, "/sys/fs/cgroup/kubepods/p1/cpuset.cpus", "\n");
	put(src, "/sys/fs/cgroup/kubepods/p1/cpuset.cpus.effective", "0-15\n");
	put(src, "/sys/fs/cgroup/kubepods/p1/cpuset.cpus.partition", "member\n");
	put(base, "/policy.yaml", "reserved: \"0-1\"\nclasses: {latency: {coreType: performance}}\n");
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_ptr_nonnull(l = cc_ledger_open(state, &err));
	cc_test_carve(&c, "c1", "2,4", "3,5", false);
	snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/c1");
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	/* A device-plugin grant with its secret token. */
	cc_test_carve(&c, "grant:latency:8-9", "8-9", "", false);
	snprintf(c.kind, sizeof(c.kind), "grant");
	snprintf(c.mode, sizeof(c.mode), "grant");
	snprintf(c.class_name, sizeof(c.class_name), "latency");
	snprintf(c.token, sizeof(c.token), "0123456789abcdef0123456789abcdef");
	c.cgroup[0] = 0;
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0 && cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	cc_ledger_close(l);

	/* status --kernel: the partition, its quota-limited ancestor and the
	 * parked partition without a ledger; the uncarved peer p1 is not one. */
	put(src, "/sys/fs/cgroup/kubepods/cpu.max", "200000 100000\n");
	put(src, "/sys/fs/cgroup/corecarve.parked/cpuset.cpus", "3,5\n");
	put(src, "/sys/fs/cgroup/corecarve.parked/cpuset.cpus.partition", "isolated\n");
	ck_assert_int_eq(cc_test_sh(&a, "CORECARVE_STATE_DIR= '%s' status --kernel --root '%s' | tr -s ' '", bin, src), 0);
	ck_assert_msg(strstr(a, "CGROUP PARTITION CPUS EFFECTIVE EXCLUSIVE QUOTA TASKS\n") == a &&
			      strstr(a, "\n/corecarve.parked isolated 3,5 ") && strstr(a, "\n/kubepods member - 0-15 (none) 200000 100000 no\n") &&
			      strstr(a, "\n/kubepods/c1 root invalid (Parent is not a partition root) 2,4 2,4 (none) 50000 100000 yes\n") &&
			      !strstr(a, "/kubepods/p1"),
		      "%s", a);
	free(a);
	a = NULL;
	ck_assert_int_eq(cc_test_sh(&a, "CORECARVE_STATE_DIR= '%s' status --kernel --root '%s' --json", bin, src), 0);
	ck_assert_msg(strstr(a, "\"schema_version\": 1") && strstr(a, "\"quota\": \"50000 100000\"") &&
			      strstr(a, "\"quota\": null"),
		      "%s", a);
	free(a);
	a = NULL;
	cc_test_sh(NULL, "rm -rf '%s/sys/fs/cgroup/corecarve.parked' && rm '%s/sys/fs/cgroup/kubepods/cpu.max'", src, src);
	ck_assert_int_eq(cc_test_sh(&a, "CORECARVE_STATE_DIR= '%s' audit --root '%s' --state '%s' --policy '%s' --json "
				       "--sample-ms 0",
				    bin, src, state, pol),
			 1);
	ck_assert_msg(strstr(a, "\"code\": \"PARTITION_INVALID\"") && strstr(a, "\"carves\": 2"), "%s", a);
	ck_assert_msg(cc_test_sh(&b, "CORECARVE_STATE_DIR= '%s' capture '%s' --root '%s' --state '%s' --policy '%s'", bin,
				 cap, src, state, pol) == 0,
		      "%s", b);
	free(b);
	b = NULL;
	/* The grant is there, its token is not (a capture goes into bug
	 * reports). */
	ck_assert_int_eq(cc_test_sh(&b, "cat '%s/run/corecarve/ledger.json'", cap), 0);
	ck_assert_msg(strstr(b, "grant:latency:8-9") && !strstr(b, "0123456789abcdef0123456789abcdef") &&
			      strstr(b, "00000000000000000000000000000000"),
		      "%s", b);
	free(b);
	b = NULL;
	/* The capture's own ledger and policy, with nothing named. */
	ck_assert_int_eq(cc_test_sh(&b, "CORECARVE_STATE_DIR= CORECARVE_POLICY= '%s' audit --root '%s' --json --sample-ms 0",
				    bin, cap),
			 1);
	{
		/* read_ms and check_ms are times, not findings */
		_cleanup_free_ char *fa = NULL, *fb = NULL;

		cc_test_sh(&fa, "printf %%s '%s' | grep -v -E '_ms\"'", a);
		cc_test_sh(&fb, "printf %%s '%s' | grep -v -E '_ms\"'", b);
		ck_assert_msg(!strcmp(fa, fb), "--- tree\n%s\n--- capture\n%s", fa, fb);
	}
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST


/* `hook --root TREE` never touches the node: with a scratch state
 * directory holding a live carve whose cgroup the tree lacks (the
 * old gc released it) and one kept as releasing, the hook says what it
 * would do and leaves the state directory as it was, byte for byte;
 * without --state it reads the tree's own, not $CORECARVE_STATE_DIR. */
START_TEST(test_hook_root_touches_nothing)
{
	const char *bin = cc_test_bin("hook --root");
	const char *fx = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	_cleanup_free_ char *base = mktree(), *before = NULL, *ls_before = NULL;
	char src[4096], state[4096], lpath[4200], bundle[4096], st[4096];
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve c;
	static const struct {
		const char *stage, *state_opt, *want;
		int status;
	} runs[] = {
		{ "createRuntime", "--state", "dry run: gc would release container carve live (cgroup /kubepods/live gone)", 0 },
		{ "createRuntime", "--state", "dry run: createRuntime c9 would carve class background on ", 0 },
		{ "poststop", "--state", "dry run: poststop c9: no carve recorded, nothing to give back", 0 },
		{ "createRuntime", NULL, "dry run: createRuntime c9 would carve class background on ", 0 },
	};

	if (!bin || !fx)
		return;
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(bundle, sizeof(bundle), "%s/bundle", base);
	snprintf(st, sizeof(st), "%s/state.json", base);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s' '%s' && cp -a '%s/sample1/.' '%s/'", src, bundle, fx, src), 0);
	put(src, "/proc/4242/cgroup", "0::/kubepods/pod1/c9\n");
	put(src, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n");
	put(src, "/sys/fs/cgroup/kubepods/pod1/c9/cgroup.procs", "4242\n");
	put(bundle, "/config.json", "{\"linux\": {\"cgroupsPath\": \"/kubepods/pod1/c9\"}}");
	{
		FILE *f = fopen(st, "w");

		ck_assert_ptr_nonnull(f);
		fprintf(f, "{\"id\":\"c9\",\"pid\":4242,\"bundle\":\"%s\",\"annotations\":{\"corecarve.io/placement\":"
			   "\"{class: background, cpus: 2}\"}}",
			bundle);
		fclose(f);
	}
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_ptr_nonnull(l = cc_ledger_open(state, &err));
	cc_test_carve(&c, "live", "2,4", "3,5", false);
	snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/live");
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0 && cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
	cc_ledger_close(l);
	snprintf(lpath, sizeof(lpath), "%s/" CC_LEDGER_FILE, state);
	before = cc_test_slurp(lpath);
	cc_test_sh(&ls_before, "ls -lA --time-style=+ '%s'", state);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		_cleanup_free_ char *out = NULL, *after = NULL, *ls = NULL;
		int rc;

		if (runs[i].state_opt)
			rc = cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' hook %s --root '%s' --state '%s' < '%s'", bin,
					runs[i].stage, src, state, st);
		else
			rc = cc_test_sh(&out, "CORECARVE_STATE_DIR='%s' '%s' hook %s --root '%s' < '%s'", state, bin,
					runs[i].stage, src, st);
		ck_assert_msg(rc == runs[i].status && strstr(out, runs[i].want), "%zu: exit %d: %s", i, rc, out);
		if (!runs[i].state_opt)
			ck_assert_msg(!strstr(out, "carve live"), "%zu: read $CORECARVE_STATE_DIR: %s", i, out);
		after = cc_test_slurp(lpath);
		ck_assert_msg(!strcmp(before, after), "%zu: the ledger changed:\n%s\n---\n%s", i, before, after);
		cc_test_sh(&ls, "ls -lA --time-style=+ '%s'", state);
		ck_assert_msg(!strcmp(ls_before, ls), "%zu: the state directory changed:\n%s\n---\n%s", i, ls_before, ls);
	}
	/* irq reconcile would commit that ledger: refused on a tree. */
	{
		_cleanup_free_ char *out = NULL, *after = NULL;

		ck_assert_int_eq(cc_test_sh(&out, "'%s' irq reconcile --root '%s' --state '%s'", bin, src, state), 2);
		ck_assert_msg(strstr(out, "irq reconcile moves this host's IRQs and records them in its ledger: the root "
					  "must be \"/\" (--dry-run shows the plan for --root "),
			      "%s", out);
		after = cc_test_slurp(lpath);
		ck_assert_str_eq(before, after);
	}
	{
		_cleanup_free_ char *ls = NULL;

		cc_test_sh(&ls, "ls -A '%s/run' 2>&1", src);
		ck_assert_msg(strstr(ls, "No such file"), "the tree's state was written: %s", ls);
	}
	/* A tree whose run/ is a link to the node's: its state is not read
	 * through it (the ledger is opened by name), by the hook or status. */
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir '%s/hostrun' && cp -a '%s' '%s/hostrun/corecarve' && ln -s '%s/hostrun' '%s/run'",
				    base, state, base, base, src),
			 0);
	{
		_cleanup_free_ char *out = NULL, *out2 = NULL;

		ck_assert_int_eq(cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' status --root '%s'", bin, src), 2);
		ck_assert_msg(strstr(out, ": /run/corecarve: a link on the way (the tree's state is read beneath it, never "
					  "through a link; name it with --state DIR)") &&
				      !strstr(out, "live"),
			      "%s", out);
		ck_assert_int_eq(cc_test_sh(&out2, "CORECARVE_STATE_DIR= '%s' hook poststop --root '%s' < '%s'", bin, src, st),
				 2);
		ck_assert_msg(strstr(out2, "a link on the way"), "%s", out2);
	}
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST

/* An existing destination that another user owns or can write, or a
 * link: refused in one line naming it, the reason and the fix, and
 * nothing written anywhere. */
START_TEST(test_capture_refuses_unsafe_dest)
{
	const char *bin = cc_test_bin("capture");
	_cleanup_free_ char *base = mktree();
	char dir[4096], target[4200];
	static const struct {
		const char *name, *setup, *why;
	} cases[] = {
		{ "foreign", "mkdir \"$D\" && chown 65534:65534 \"$D\"", "owned by uid 65534, not by the caller (uid 0)" },
		{ "world-writable", "mkdir \"$D\" && chmod 1777 \"$D\"", "mode 1777: writable by every user" },
		{ "group-writable", "mkdir \"$D\" && chmod 0770 \"$D\"", "mode 0770: writable by its group" },
		{ "link", "ln -s target \"$D\"", "a symbolic link" },
	};

	if (!bin)
		return;
	ck_assert_msg(geteuid() == 0, "the capture tests run as root (as CI does)");
	snprintf(target, sizeof(target), "%s/target", base);
	ck_assert_int_eq(mkdir(target, 0700), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL, *ls = NULL;
		char want[4400];

		snprintf(dir, sizeof(dir), "%s/%s", base, cases[i].name);
		ck_assert_int_eq(cc_test_sh(NULL, "D='%s'; %s", dir, cases[i].setup), 0);
		ck_assert_int_eq(cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' capture '%s'", bin, dir), 2);
		snprintf(want, sizeof(want), "corecarve: capture: %s: %s; name a new directory (DIR=$(mktemp -d))\n", dir,
			 cases[i].why);
		ck_assert_msg(!strcmp(out, want), "%s: %s", cases[i].name, out);
		cc_test_sh(&ls, "ls -A '%s' '%s' | grep -v -e '^$' -e ':$'", dir, target);
		ck_assert_msg(!*ls, "%s: written: %s", cases[i].name, ls);
	}
	/* One it makes itself is 0700. */
	{
		struct stat st;

		snprintf(dir, sizeof(dir), "%s/new", base);
		ck_assert_int_eq(cc_test_sh(NULL, "CORECARVE_STATE_DIR= '%s' capture '%s'", bin, dir), 0);
		ck_assert_int_eq(lstat(dir, &st), 0);
		ck_assert_int_eq(st.st_mode & 07777, 0700);
	}
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST

/* A hostile source tree makes links in the destination (the sysfs trees
 * are copied links as links) and then names a path through one (a
 * hooks.d file's hook.path, whose binary capture stands in with an empty
 * file): neither the link at a component nor the one at the leaf is
 * written through. */
START_TEST(test_capture_no_write_through_links)
{
	const char *bin = cc_test_bin("capture");
	_cleanup_free_ char *base = mktree(), *out = NULL, *ls = NULL;
	char src[4096], outside[4096], dest[4096], leaf[4200];

	if (!bin)
		return;
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(leaf, sizeof(leaf), "%s/victim", outside);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(cc_test_sh(NULL, "printf precious > '%s'", leaf), 0);
	/* In the tree, the links' targets exist too (the hook's binary is
	 * only stood in for when the tree has it). */
	ck_assert_int_eq(cc_test_sh(NULL,
				    "mkdir -p '%s/sys/devices/system/cpu' '%s%s' '%s/etc/containers/oci/hooks.d' && "
				    "touch '%s%s/x' '%s%s' && ln -s '%s' '%s/sys/devices/system/cpu/dir' && "
				    "ln -s '%s' '%s/sys/devices/system/cpu/leaf'",
				    src, src, outside, src, src, outside, src, leaf, outside, src, leaf, src),
			 0);
	cc_test_write_file(src, "etc/containers/oci/hooks.d/corecarve-createRuntime.json",
			   "{\"hook\": {\"path\": \"/sys/devices/system/cpu/dir/x\"}}");
	cc_test_write_file(src, "etc/containers/oci/hooks.d/corecarve-poststop.json",
			   "{\"hook\": {\"path\": \"/sys/devices/system/cpu/leaf\"}}");
	snprintf(dest, sizeof(dest), "%s/dest", base);
	ck_assert_int_eq(cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' capture '%s' --root '%s'", bin, dest, src), 2);
	ck_assert_msg(strstr(out, "capture: /sys/devices/system/cpu/dir: a link on the way, in the destination; not "
				  "followed") ||
			      strstr(out, "capture: sys/devices/system/cpu/dir: a link or a file where a directory goes"),
		      "%s", out);
	cc_test_sh(&ls, "ls -A '%s'", outside);
	ck_assert_msg(!strcmp(ls, "victim\n"), "written outside the destination: %s", ls);
	free(ls);
	ls = cc_test_slurp(leaf);
	ck_assert_str_eq(ls, "precious");
	/* The leaf alone: the link stays a link, its target untouched. */
	cc_test_write_file(src, "etc/containers/oci/hooks.d/corecarve-createRuntime.json", "{}");
	snprintf(dest, sizeof(dest), "%s/dest2", base);
	free(out);
	out = NULL;
	ck_assert_msg(cc_test_sh(&out, "CORECARVE_STATE_DIR= '%s' capture '%s' --root '%s'", bin, dest, src) == 0, "%s",
		      out);
	free(ls);
	ls = cc_test_slurp(leaf);
	ck_assert_str_eq(ls, "precious");
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST

/* The directory `rel` under `dir`, walked without following a link (the
 * swapper's own links must not lead it outside either), or -1. */
static int walk_nofollow(int dir, const char *rel)
{
	char buf[256];
	char *comp, *save = NULL;
	int fd = dup(dir);

	snprintf(buf, sizeof(buf), "%s", rel);
	for (comp = strtok_r(buf, "/", &save); fd >= 0 && comp; comp = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		close(fd);
		fd = next;
	}
	return fd;
}

/* Swap each directory a capture makes early with a link to `outside`
 * and back, until killed. */
static void swapper(const char *dest, const char *outside)
{
	static const struct {
		const char *parent, *name;
	} at[] = {
		{ "", "sys" }, { "", "proc" }, { "", "etc" }, { "", "run" }, { "sys", "devices" },
		{ "sys/devices", "system" }, { "sys/devices/system", "cpu" }, { "proc", "irq" }, { "sys", "fs" },
	};
	int root = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (root < 0)
		return;
	for (;;)
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			int pfd = at[i].parent[0] ? walk_nofollow(root, at[i].parent) : dup(root);
			char lnk[64];

			if (pfd < 0)
				continue;
			snprintf(lnk, sizeof(lnk), "%s.lnk", at[i].name);
			if (symlinkat(outside, pfd, lnk) == 0 || errno == EEXIST) {
				renameat2(pfd, at[i].name, pfd, lnk, RENAME_EXCHANGE);
				renameat2(pfd, at[i].name, pfd, lnk, RENAME_EXCHANGE);
			}
			close(pfd);
		}
}

/* The child's side of the race: unprivileged, capture after capture
 * into directories it owns while its swapper replaces their components
 * with links to `outside`.  Exits 0 when every capture ran (succeeded or
 * refused), 1 on a setup failure. */
static int race_as(uid_t uid, const char *bin, const char *base, const char *outside)
{
	struct timespec t0, t;
	int n = 0;

	if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		char dest[4200];
		pid_t sw, cap;
		int status;

		snprintf(dest, sizeof(dest), "%s/d%d", base, n++);
		if (mkdir(dest, 0700) < 0)
			return 1;
		sw = fork();
		if (sw == 0) {
			swapper(dest, outside);
			_exit(0);
		}
		cap = fork();
		if (cap == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
			execl(bin, bin, "capture", dest, "--state", base, (char *)NULL);
			_exit(127);
		}
		waitpid(cap, &status, 0);
		kill(sw, SIGKILL);
		waitpid(sw, NULL, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 2)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 3);
	return 0;
}

/* A symlink race run as an unprivileged user against its own capture:
 * whatever the interleaving, nothing lands outside the destination. */
START_TEST(test_capture_symlink_race)
{
	const char *bin = cc_test_bin("capture");
	_cleanup_free_ char *base = mktree(), *ls = NULL;
	char outside[4096], work[4096], copy[4200];
	uid_t nobody = 65534;
	pid_t pid;
	int status;

	if (!bin)
		return;
	ck_assert_msg(geteuid() == 0, "the race runs as uid 65534, set by root (as CI runs)");
	ck_assert_int_eq(chmod(base, 0755), 0);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(work, sizeof(work), "%s/work", base);
	ck_assert_int_eq(mkdir(outside, 0777), 0);
	ck_assert_int_eq(mkdir(work, 0700), 0);
	ck_assert_int_eq(chown(outside, nobody, nobody), 0);
	ck_assert_int_eq(chown(work, nobody, nobody), 0);
	/* The binary as uid 65534 can run it wherever the checkout is (a
	 * clone under a 0700 directory, as mktemp -d makes, is out of its
	 * reach). */
	snprintf(copy, sizeof(copy), "%s/corecarve", base);
	ck_assert_int_eq(cc_test_sh(NULL, "cp '%s' '%s' && chmod 0755 '%s'", bin, copy, copy), 0);
	pid = cc_test_fork();
	if (pid == 0)
		_exit(race_as(nobody, copy, work, outside));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the race did not run: status %d", status);
	cc_test_sh(&ls, "ls -A '%s'", outside);
	ck_assert_msg(!*ls, "written outside the destination: %s", ls);
	cc_test_sh(NULL, "rm -rf '%s'", base);
}
END_TEST

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("capture");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_capture_this_host);
	tcase_add_test(tc, test_capture_audits_the_same);
	tcase_add_test(tc, test_capture_refuses_unsafe_dest);
	tcase_add_test(tc, test_capture_no_write_through_links);
	tcase_add_test(tc, test_capture_symlink_race);
	tcase_add_test(tc, test_hook_root_touches_nothing);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(capture_suite)
