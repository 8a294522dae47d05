/* The device plugin's decisions (plugin/devplugin): the resources and
 * devices a policy offers on the shared fixtures, their health from the
 * ledger, the preferred allocation and the grants Allocate records. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "devplugin.h"
#include "ledger.h"
#include "testlib.h"

/* Two exclusive classes on the P-cores (they share capacity), one on the
 * E-cores, a shared one (no resource). */
static const char policy_text[] = "classes:\n"
				  "  latency: {coreType: performance, smt: isolate, exclusive: true}\n"
				  "  fast: {coreType: performance, smt: full, exclusive: true}\n"
				  "  throughput: {coreType: efficient, smt: full, exclusive: true, align: l2}\n"
				  "  background: {coreType: efficient, exclusive: false}\n";

struct fx {
	struct cc_topo *t;
	struct cc_policy *p;
	struct cc_dp_resource *res;
	int nres;
	char dir[64];
	struct cc_devplugin dp;
};

static struct fx fx;

/* F03: Alder Lake-P, 4 P-cores with SMT (CPUs 0-7), 8 E-cores (8-15). */
static bool setup_f03(void)
{
	const char *tree = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	struct cc_err err = CC_ERR_INIT;
	char path[4096];
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_topo_source src = { .kind = CC_TOPO_HOST };

	if (!tree)
		return false;
	snprintf(path, sizeof(path), "%s/sample1", tree);
	root = cc_root_open(path, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	src.root = root;
	fx.t = cc_topo_load(&src, &err);
	ck_assert_msg(fx.t != NULL, "%s", err.msg);
	fx.p = cc_policy_parse(policy_text, strlen(policy_text), "p.yaml", &err);
	ck_assert_msg(fx.p != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_dp_resources(fx.t, fx.p, &fx.res, &fx.nres, &err), 0);
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/cc-dp-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	fx.dp = (struct cc_devplugin){ .t = fx.t, .p = fx.p, .state = fx.dir, .res = fx.res, .nres = fx.nres };
	return true;
}

static const struct cc_dp_resource *res(const char *cls)
{
	for (int i = 0; i < fx.nres; i++)
		if (!strcmp(fx.res[i].class_name, cls))
			return &fx.res[i];
	ck_abort_msg("no resource for %s", cls);
	return NULL;
}

/* "cpu0 cpu2!" : the IDs, '!' after an Unhealthy one. */
static void devices_str(const struct cc_dp_resource *r, const struct cc_ledger *l, char *out, size_t len)
{
	_cleanup_free_ struct cc_dp_device *d = NULL;
	struct cc_err err = CC_ERR_INIT;
	size_t off = 0;
	int n;

	ck_assert_int_eq(cc_dp_devices(fx.t, fx.p, r, l, &d, &n, &err), 0);
	out[0] = 0;
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(out + off, len - off, "%scpu%d%s@%d", i ? " " : "", d[i].cpu,
					d[i].healthy ? "" : "!", d[i].numa);
}

START_TEST(test_resources_f03)
{
	char s[512];

	if (!setup_f03())
		return;
	ck_assert_int_eq(fx.nres, 3);
	ck_assert_str_eq(res("latency")->name, "corecarve.io/latency-cores");
	ck_assert_str_eq(res("latency")->endpoint, "corecarve-latency.sock");
	ck_assert_str_eq(res("fast")->core_class, "performance");
	ck_assert_str_eq(res("throughput")->core_class, "efficient");
	/* The default reserved set: the package's lowest E-core (CPU 8). */
	devices_str(res("latency"), NULL, s, sizeof(s));
	ck_assert_str_eq(s, "cpu0@0 cpu2@0 cpu4@0 cpu6@0");
	devices_str(res("throughput"), NULL, s, sizeof(s));
	ck_assert_str_eq(s, "cpu9@0 cpu10@0 cpu11@0 cpu12@0 cpu13@0 cpu14@0 cpu15@0");
}
END_TEST

START_TEST(test_health_f03)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_carve c;
	char s[512];
	char *one[] = { "cpu4" };
	char *const *req[] = { one };
	int nids[] = { 1 };
	char grant[1][CC_DP_ID_MAX];

	if (!setup_f03())
		return;
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(fx.dir, &err);

		ck_assert_msg(l != NULL, "%s", err.msg);
		/* An annotation-only carve on core 2-3 (3 parked), one on an
		 * E-core. */
		cc_test_carve(&c, "c1", "2", "3", false);
		ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
		cc_carve_fini(&c);
		cc_test_carve(&c, "c2", "12", "", false);
		ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
		cc_carve_fini(&c);
		ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	}
	ck_assert_msg(cc_dp_allocate(&fx.dp, res("latency"), req, nids, 1, grant, &err) == 0, "%s", err.msg);
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(fx.dir, &err);

		/* latency's own grant leaves cpu4 Healthy for latency, not for
		 * fast, which draws on the same P-cores. */
		devices_str(res("latency"), l, s, sizeof(s));
		ck_assert_str_eq(s, "cpu0@0 cpu2!@0 cpu4@0 cpu6@0");
		devices_str(res("fast"), l, s, sizeof(s));
		ck_assert_str_eq(s, "cpu0@0 cpu2!@0 cpu4!@0 cpu6@0");
		/* The E-cores' shared pool keeps minShared (1, the default) for
		 * background: of the free E-cores the last is not offered. */
		devices_str(res("throughput"), l, s, sizeof(s));
		ck_assert_str_eq(s, "cpu9@0 cpu10@0 cpu11@0 cpu12!@0 cpu13@0 cpu14@0 cpu15!@0");
	}
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(fx.dir, &err);
		_cleanup_free_ struct cc_dp_device *d = NULL;
		int n;

		ck_assert_int_eq(cc_dp_devices(fx.t, fx.p, res("throughput"), l, &d, &n, &err), 0);
		ck_assert_int_eq(d[n - 1].cpu, 15);
		ck_assert_msg(strstr(d[n - 1].holder, "minShared"), "%s", d[n - 1].holder);
	}
	/* Allocate refuses what its own list says is Unhealthy (the kubelet
	 * asked from an older list), the whole request, nothing recorded:
	 * the core minShared keeps, the core another carve holds. */
	{
		static const struct {
			const char *cls, *id, *msg;
		} sick[] = {
			{ "throughput", "cpu15", "container request 1: device cpu15: Unhealthy, minShared (policy p.yaml): kept "
						 "shared (the kubelet asked from an older list; it grants again from the next)" },
			{ "fast", "cpu2", "container request 1: device cpu2: Unhealthy, held by container c1" },
			{ "fast", "cpu4", "container request 1: device cpu4: Unhealthy, held by grant grant:latency:4-5" },
		};

		for (size_t i = 0; i < sizeof(sick) / sizeof(sick[0]); i++) {
			char *ok[] = { strcmp(sick[i].cls, "throughput") ? "cpu6" : "cpu13" };
			char *bad[] = { (char *)sick[i].id };
			char *const *two[] = { ok, bad };
			int n2[] = { 1, 1 };
			char g2[2][CC_DP_ID_MAX];
			struct cc_err e = CC_ERR_INIT;
			_cleanup_ledger_ struct cc_ledger *l = NULL;

			ck_assert_int_eq(cc_dp_allocate(&fx.dp, res(sick[i].cls), two, n2, 2, g2, &e), -1);
			ck_assert_int_eq(e.code, EBUSY);
			ck_assert_msg(!strncmp(e.msg, sick[i].msg, strlen(sick[i].msg)), "%zu: %s", i, e.msg);
			l = cc_ledger_read(fx.dir, &err);
			ck_assert_int_eq(cc_ledger_ncarves(l), 3);
		}
	}
}
END_TEST

/* Allocate: the grant recorded, and each refusal with nothing recorded. */
START_TEST(test_allocate_f03)
{
	static const struct {
		const char *cls;
		const char *ids[3];
		int code;
		const char *msg;
	} bad[] = {
		{ "latency", { "cpu2" }, EBUSY, "container request 0: CPUs 2-3: held by grant grant:latency:2-3" },
		{ "fast", { "cpu3" }, EINVAL, "container request 0: device cpu3: no core of this node has CPU 3 as its lowest" },
		{ "latency", { "cpu9" }, EINVAL, "container request 0: device cpu9: not a core of corecarve.io/latency-cores (its cores are performance)" },
		{ "throughput", { "cpu8" }, EINVAL, "container request 0: device cpu8: reserved by the policy (p.yaml)" },
		{ "latency", { "cpu0", "cpu0" }, EINVAL, "container request 0: device cpu0: named twice" },
		{ "latency", { "gpu0" }, EINVAL, "container request 0: device \"gpu0\": expected cpu<N>" },
		{ "latency", { "cpu007" }, EINVAL, "container request 0: device \"cpu007\": expected cpu<N>" },
	};
	struct cc_err err = CC_ERR_INIT;
	char *ids[] = { "cpu2" };
	char *const *req[] = { ids };
	int nids[] = { 1 };
	char grant[2][CC_DP_ID_MAX], token[CC_GRANT_TOKEN_MAX];

	if (!setup_f03())
		return;
	ck_assert_msg(cc_dp_allocate(&fx.dp, res("latency"), req, nids, 1, grant, &err) == 0, "%s", err.msg);
	/* The grant's id, then its token. */
	ck_assert_int_eq(strlen(grant[0]), strlen("grant:latency:2-3:") + CC_GRANT_TOKEN_LEN);
	ck_assert(!strncmp(grant[0], "grant:latency:2-3:", strlen("grant:latency:2-3:")));
	ck_assert_int_eq(strspn(grant[0] + strlen("grant:latency:2-3:"), "0123456789abcdef"), CC_GRANT_TOKEN_LEN);
	memcpy(token, grant[0] + strlen("grant:latency:2-3:"), sizeof(token));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cc_err e = CC_ERR_INIT;
		char *list[3] = { (char *)bad[i].ids[0], (char *)bad[i].ids[1], NULL };
		char *ok[] = { strcmp(bad[i].cls, "throughput") ? "cpu6" : "cpu13" };
		char *const *two[] = { ok, list };
		int n2[] = { 1, bad[i].ids[1] ? 2 : 1 };
		_cleanup_ledger_ struct cc_ledger *l = NULL;

		/* A good first container with a bad second: neither granted. */
		ck_assert_int_eq(cc_dp_allocate(&fx.dp, res(bad[i].cls), two, n2, 2, grant, &e), -1);
		ck_assert_int_eq(e.code, bad[i].code);
		ck_assert_msg(!strcmp(e.msg + strlen("container request 1: "), bad[i].msg + strlen("container request 0: ")),
			      "%zu: %s", i, e.msg);
		l = cc_ledger_read(fx.dir, &err);
		ck_assert_int_eq(cc_ledger_ncarves(l), 1);
		ck_assert_ptr_nonnull(cc_ledger_find(l, "grant:latency:2-3"));
	}
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(fx.dir, &err);
		const struct cc_carve *c = cc_ledger_find(l, "grant:latency:2-3");
		_cleanup_free_ char *cpus = cc_cpulist_format(c->cpus);

		ck_assert_str_eq(c->kind, "grant");
		ck_assert_str_eq(c->class_name, "latency");
		ck_assert_str_eq(cpus, "2-3");
		ck_assert_str_eq(c->token, token);
	}
}
END_TEST

START_TEST(test_preferred_f03)
{
	struct cc_err err = CC_ERR_INIT;
	char *avail[] = { "cpu9", "cpu10", "cpu11", "cpu12", "cpu13", "cpu14", "cpu15" };
	char *must[] = { "cpu15" };
	char **out = NULL;

	if (!setup_f03())
		return;
	/* E-cores come in L2 clusters of four (8-11, 12-15; 8 is reserved):
	 * four cores with align: l2 are the whole free cluster, not the first
	 * four offered. */
	ck_assert_msg(cc_dp_preferred(&fx.dp, res("throughput"), avail, 7, NULL, 0, 4, &out, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(out[0], "cpu12");
	ck_assert_str_eq(out[3], "cpu15");
	ck_assert_ptr_null(out[4]);
	for (int i = 0; out[i]; i++)
		free(out[i]);
	free(out);
	/* What the kubelet must include comes first. */
	ck_assert_msg(cc_dp_preferred(&fx.dp, res("throughput"), avail, 7, must, 1, 2, &out, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(out[0], "cpu15");
	ck_assert_ptr_nonnull(out[1]);
	ck_assert_str_ne(out[1], "cpu15");
	ck_assert_ptr_null(out[2]);
	for (int i = 0; out[i]; i++)
		free(out[i]);
	free(out);
	ck_assert_int_eq(cc_dp_preferred(&fx.dp, res("throughput"), avail, 7, must, 1, 8, &out, &err), -1);
	ck_assert_str_eq(err.msg, "allocation_size 8: expected 1..7 (must-include 1, available 7)");
}
END_TEST

/* Grants no pod holds are freed once past the grace; a listed one, a young
 * one and any other carve are kept. */
START_TEST(test_release_unused_f03)
{
	struct cc_err err = CC_ERR_INIT;
	char *a[] = { "cpu2" }, *b[] = { "cpu6" }, *c[] = { "cpu12" };
	char *const *req[] = { a, b };
	char *const *req2[] = { c };
	int nids[] = { 1, 1 };
	char grant[2][CC_DP_ID_MAX];
	struct cc_dp_inuse inuse[] = { { "corecarve.io/latency-cores", "cpu6" },
				       { "corecarve.io/fast-cores", "cpu2" } };
	struct cc_carve k;
	int freed = -1;
	long long now;

	if (!setup_f03())
		return;
	ck_assert_msg(cc_dp_allocate(&fx.dp, res("latency"), req, nids, 2, grant, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_dp_allocate(&fx.dp, res("throughput"), req2, nids, 1, grant, &err) == 0, "%s", err.msg);
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(fx.dir, &err);

		cc_test_carve(&k, "c1", "4", "5", false);
		ck_assert_int_eq(cc_ledger_add(l, &k, &err), 0);
		cc_carve_fini(&k);
		ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
		now = cc_ledger_find(l, "grant:latency:2-3")->created;
	}
	/* Within the grace: nothing freed, and the look took no exclusive
	 * lock: a reader holding the shared lock (as a hook's look or the
	 * audit does) does not stop it, where the lock is tried once. */
	{
		char lockf[128];
		int fd;
		struct cc_ledger_lock once = { .wait_ms = 0 };
		struct cc_devplugin dp = fx.dp;

		snprintf(lockf, sizeof(lockf), "%s/lock", fx.dir);
		fd = open(lockf, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(flock(fd, LOCK_SH), 0);
		dp.lock = &once;
		ck_assert_msg(cc_dp_release_unused(&dp, inuse, 2, now, 60, &freed, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(freed, 0);
		/* Something to free needs the hooks' lock, which is not free. */
		ck_assert_int_eq(cc_dp_release_unused(&dp, inuse, 2, now + 61, 60, &freed, &err), -1);
		ck_assert_int_eq(freed, 0);
		cc_err_clear(&err);
		close(fd);
	}
	/* Past it: cpu2's grant is freed (a fast-cores pod on cpu2 is not a
	 * latency pod), cpu6's kept (listed), cpu12's freed, c1 kept. */
	ck_assert_int_eq(cc_dp_release_unused(&fx.dp, inuse, 2, now + 61, 60, &freed, &err), 0);
	ck_assert_int_eq(freed, 2);
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(fx.dir, &err);

		ck_assert_int_eq(cc_ledger_ncarves(l), 2);
		ck_assert_ptr_nonnull(cc_ledger_find(l, "grant:latency:6-7"));
		ck_assert_ptr_nonnull(cc_ledger_find(l, "c1"));
	}
}
END_TEST

/* A capture's ledger carries no live grant token: the export zeroes each
 * and still loads, with the grants as they were. */
START_TEST(test_export_redacted_f03)
{
	struct cc_err err = CC_ERR_INIT;
	char *ids[] = { "cpu2" };
	char *const *req[] = { ids };
	int nids[] = { 1 };
	char grant[1][CC_DP_ID_MAX], dir[] = "/tmp/cc-dp-exp-XXXXXX", path[128];
	_cleanup_free_ char *text = NULL, *raw = NULL;
	size_t len = 0;
	const char *token;

	if (!setup_f03())
		return;
	ck_assert_msg(cc_dp_allocate(&fx.dp, res("latency"), req, nids, 1, grant, &err) == 0, "%s", err.msg);
	token = strrchr(grant[0], ':') + 1;
	snprintf(path, sizeof(path), "%s/ledger.json", fx.dir);
	raw = cc_test_slurp(path);
	ck_assert_ptr_nonnull(strstr(raw, token));
	ck_assert_msg(cc_ledger_export_redacted(fx.dir, &text, &len, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(strstr(text, token));
	ck_assert_ptr_nonnull(strstr(text, "00000000000000000000000000000000"));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	chmod(dir, 0700);
	snprintf(path, sizeof(path), "%s/ledger.json", dir);
	{
		FILE *f = fopen(path, "we");

		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(text, 1, len, f), len);
		fclose(f);
		chmod(path, 0600);
	}
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(dir, &err);
		const struct cc_carve *c = l ? cc_ledger_find(l, "grant:latency:2-3") : NULL;

		ck_assert_msg(l != NULL, "%s", err.msg);
		ck_assert_ptr_nonnull(c);
		ck_assert_str_eq(c->token, "00000000000000000000000000000000");
	}
	cc_test_sh(NULL, "rm -rf '%s'", dir);
	/* No ledger: nothing to export. */
	{
		char empty[] = "/tmp/cc-dp-exp-XXXXXX";
		_cleanup_free_ char *none = NULL;

		ck_assert_ptr_nonnull(mkdtemp(empty));
		ck_assert_int_eq(cc_ledger_export_redacted(empty, &none, &len, &err), 0);
		ck_assert_ptr_null(none);
		rmdir(empty);
	}
}
END_TEST

/* Bad options: one line naming the option and the fix, exit 2, nothing
 * made. */
START_TEST(test_cli_bad_input)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "--grace -1", "corecarve: --grace: expected a number of seconds >= 0, got \"-1\"\n" },
		{ "--grace", "corecarve: --grace: missing argument\n" },
		{ "--dir", "corecarve: --dir: missing argument\n" },
		{ "--bogus", "corecarve: device-plugin: unexpected argument \"--bogus\" (see corecarve device-plugin --help)\n" },
		{ "--synthetic 'pack:1 core:2 pu:1'",
		  "corecarve: device-plugin: unexpected argument \"--synthetic\" (see corecarve device-plugin --help)\n" },
		{ "--dir /nonexistent/dp",
		  "corecarve: --dir /nonexistent/dp: does not exist: name the kubelet's device plugin directory itself "
		  "(default /var/lib/kubelet/device-plugins)\n" },
		{ "--dir /tmp/cc-dp-cli/link",
		  "corecarve: --dir /tmp/cc-dp-cli/link: a symbolic link: name the kubelet's device plugin directory itself "
		  "(default /var/lib/kubelet/device-plugins)\n" },
		{ "--dir /tmp/cc-dp-cli/open",
		  "corecarve: --dir /tmp/cc-dp-cli/open: owned by uid 0 with mode 0777: whoever else may write there can "
		  "stand in for the kubelet or the plugin; the kubelet makes it root's, mode 0750\n" },
	};
	const char *bin = cc_test_bin("device-plugin CLI tests");

	if (!bin)
		return;
	if (geteuid() != 0) {
		cc_test_skip("device-plugin CLI tests: the cases name uid 0 (run as root)");
		return;
	}
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf /tmp/cc-dp-cli && mkdir -p /tmp/cc-dp-cli/real /tmp/cc-dp-cli/open && "
					  "chmod 0777 /tmp/cc-dp-cli/open && ln -s real /tmp/cc-dp-cli/link"),
			 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *out = NULL;

		ck_assert_int_eq(cc_test_sh(&out, "'%s' device-plugin %s 2>&1 >/dev/null", bin, cases[i].args), 2);
		ck_assert_str_eq(out, cases[i].want);
	}
	cc_test_sh(NULL, "rm -rf /tmp/cc-dp-cli");
}
END_TEST

/* The native interop test: a real gRPC peer (Debian's python3-grpcio, run
 * by /usr/bin/python3: the distribution's modules, not a pyenv's) plays the
 * kubelet's device manager against `corecarve device-plugin --root F03`
 * (tests/unit/devplugin_peer.py says what it checks). */
START_TEST(test_interop_f03)
{
	const char *tree = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	const char *bin = cc_test_bin("device-plugin interop");
	_cleanup_free_ char *out = NULL;
	char work[] = "/tmp/cc-dpi-XXXXXX";
	int rc;

	if (!tree || !bin)
		return;
	if (cc_test_sh(NULL, "/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null") != 0) {
		cc_test_skip("/usr/bin/python3 has no grpc module: apt-get install python3-grpcio python3-protobuf "
			     "(make deps)");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(work));
	rc = cc_test_sh(&out, "timeout 60 /usr/bin/python3 '%s/tests/unit/devplugin_peer.py' '%s' '%s/sample1' '%s'",
			CC_SOURCE_DIR, bin, tree, work);
	ck_assert_msg(rc == 0 && strstr(out, "interop: ok\n"), "exit %d:\n%s", rc, out);
	cc_test_sh(NULL, "rm -rf '%s'", work);
}
END_TEST

static Suite *devplugin_suite(void)
{
	Suite *s = suite_create("devplugin");
	TCase *tc = tcase_create("f03");

	tcase_add_test(tc, test_resources_f03);
	tcase_add_test(tc, test_health_f03);
	tcase_add_test(tc, test_allocate_f03);
	tcase_add_test(tc, test_preferred_f03);
	tcase_add_test(tc, test_release_unused_f03);
	tcase_add_test(tc, test_export_redacted_f03);
	tcase_add_test(tc, test_cli_bad_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("interop");
	/* The peer starts Python and gRPC twice over (a kubelet restart) and
	 * waits for the plugin's once-a-second retries: seconds on 2 CPUs. */
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_interop_f03);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(devplugin_suite)
