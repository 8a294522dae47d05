/* corecarve capture (plugin/report/capture.h): the tree it writes is a --root tree
 * the other commands read as they read the node itself.  This host is
 * captured and read back (topology, doctor, irq status, plan, status); a
 * made-up cgroup-v2 node with a carve in its ledger is captured from a
 * tree and audited both ways; a directory with something in it is
 * refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
	ck_assert_msg(strstr(a, "\"code\": \"PARTITION_INVALID\"") && strstr(a, "\"carves\": 1"), "%s", a);
	ck_assert_msg(cc_test_sh(&b, "CORECARVE_STATE_DIR= '%s' capture '%s' --root '%s' --state '%s' --policy '%s'", bin,
				 cap, src, state, pol) == 0,
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

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("capture");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_capture_this_host);
	tcase_add_test(tc, test_capture_audits_the_same);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(capture_suite)
