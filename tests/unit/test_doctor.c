/* corecarve doctor: each check read-only on trees under --root (the shared
 * real-machine fixtures, and small trees holding the one file a check
 * parses), the pure parsers table-driven, the report's exit code. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "doctor.h"
#include "ledger.h"
#include "testlib.h"

/* ---- trees ----------------------------------------------------------------- */

static char *mktree(void)
{
	char *dir = strdup("/tmp/cc-doctor-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* Write `text` at `path` (absolute, inside the tree), creating parents. */
static void put(const char *tree, const char *path, const char *text)
{
	char full[4096];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", tree, path);
	for (char *p = full + strlen(tree) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ck_assert_msg(mkdir(full, 0755) == 0 || errno == EEXIST, "mkdir %s", full);
		*p = '/';
	}
	ck_assert_ptr_nonnull(f = fopen(full, "w"));
	fputs(text, f);
	fclose(f);
}

static struct cc_topo *synth(const char *desc)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open("/", &err);
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .root = root, .arg = desc };
	struct cc_topo *t = cc_topo_load(&src, &err);

	ck_assert_msg(t != NULL, "%s: %s", desc, err.msg);
	return t;
}

/* Run check `id` with root `tree`; the rest of ctx as given. */
static struct cc_doctor_item run(const char *tree, struct cc_doctor_ctx ctx, const char *id)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(tree, &err);
	struct cc_doctor_item it;

	ck_assert_msg(root != NULL, "%s", err.msg);
	ctx.root = root;
	ck_assert_msg(cc_doctor_run_one(&ctx, id, &it, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(it.id, id);
	ck_assert_msg(it.why[0], "%s: no why", id);
	/* A problem names its fix; what cannot be answered need not. */
	if (it.status == CC_DOCTOR_WARN || it.status == CC_DOCTOR_FAIL)
		ck_assert_msg(it.fix[0] || !strcmp(id, "topology") || !strcmp(id, "cmdline"), "%s: no fix", id);
	return it;
}

static void expect(const struct cc_doctor_item *it, enum cc_doctor_status st, const char *found)
{
	ck_assert_msg(it->status == st, "%s: status %s, want %s (found \"%s\")", it->id,
		      cc_doctor_status_name(it->status), cc_doctor_status_name(st), it->found);
	ck_assert_msg(strstr(it->found, found), "%s: found \"%s\" lacks \"%s\"", it->id, it->found, found);
}

/* ---- one file per check, table-driven -------------------------------------- */

static const struct file_case {
	const char *check;
	const char *path; /* NULL: the tree stays empty */
	const char *text;
	enum cc_doctor_status status;
	const char *found;
} file_cases[] = {
	{ "thp", "/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n", CC_DOCTOR_WARN, "THP always" },
	{ "thp", "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n", CC_DOCTOR_OK, "THP madvise" },
	{ "thp", "/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n", CC_DOCTOR_OK, "THP never" },
	{ "thp", "/sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n", CC_DOCTOR_WARN, "unreadable" },
	{ "thp", "/sys/kernel/mm/transparent_hugepage/enabled", "[] never\n", CC_DOCTOR_WARN, "unreadable" },
	/* A captured tree without the file cannot tell (on the host: "not built in"). */
	{ "thp", NULL, NULL, CC_DOCTOR_UNKNOWN, "not in the captured tree" },
	{ "numa-balancing", "/proc/sys/kernel/numa_balancing", "0\n", CC_DOCTOR_OK, "= 0" },
	{ "numa-balancing", "/proc/sys/kernel/numa_balancing", "1\n", CC_DOCTOR_WARN, "= 1 with 2 NUMA nodes" },
	{ "numa-balancing", "/proc/sys/kernel/numa_balancing", "2\n", CC_DOCTOR_WARN, "= 2 with 2 NUMA nodes" },
	{ "numa-balancing", NULL, NULL, CC_DOCTOR_UNKNOWN, "not in the captured tree" },
	{ "kubelet", "/var/lib/kubelet/cpu_manager_state",
	  "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,8-15\",\"checksum\":1}", CC_DOCTOR_WARN,
	  "policy static (defaultCpuSet \"0-1,8-15\")" },
	{ "kubelet", "/var/lib/kubelet/cpu_manager_state", "{\"policyName\":\"none\",\"defaultCpuSet\":\"\"}",
	  CC_DOCTOR_OK, "policy none" },
	{ "kubelet", "/var/lib/kubelet/cpu_manager_state", "{\"policyName\":", CC_DOCTOR_WARN,
	  "/var/lib/kubelet/cpu_manager_state:1:" },
	{ "kubelet", "/var/lib/kubelet/cpu_manager_state", "[1]", CC_DOCTOR_WARN, "expected an object" },
	{ "kubelet", "/var/lib/kubelet/cpu_manager_state", "{\"policyName\":3}", CC_DOCTOR_WARN,
	  "policyName: expected a string" },
	{ "kubelet", NULL, NULL, CC_DOCTOR_UNKNOWN, "no kubelet CPU manager state" },
	{ "kubelet", "/var/lib/dpkg/status", "", CC_DOCTOR_OK, "no kubelet CPU manager state" },
	{ "cgroup", "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n", CC_DOCTOR_OK,
	  "cgroup v2 with cpuset and cpu" },
	{ "cgroup", "/sys/fs/cgroup/cgroup.controllers", "cpu io memory\n", CC_DOCTOR_FAIL, "cpuset missing" },
	{ "cgroup", "/sys/fs/cgroup/cgroup.controllers", "cpuset io\n", CC_DOCTOR_FAIL, ": cpu missing" },
	{ "cgroup", "/sys/fs/cgroup/cgroup.controllers", "io memory\n", CC_DOCTOR_FAIL, "cpuset and cpu missing" },
	{ "cgroup", NULL, NULL, CC_DOCTOR_UNKNOWN, "the captured tree has no /sys/fs/cgroup" },
	/* Without cgroup v2's cpuset there is nothing to probe (test_partition has the rest). */
	{ "partition", "/sys/fs/cgroup/system.slice/cpuset.cpus.exclusive", "\n", CC_DOCTOR_UNKNOWN,
	  "needs cgroup v2 with the cpuset controller" },
	{ "partition", NULL, NULL, CC_DOCTOR_UNKNOWN, "needs cgroup v2 with the cpuset controller" },
	{ "cmdline", "/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet\n", CC_DOCTOR_OK, "no isolcpus" },
	{ "cmdline", "/proc/cmdline", "ro isolcpus=0-3 nohz_full=0-3\n", CC_DOCTOR_WARN, "overlap the reserved set 0-1" },
	{ "cmdline", "/proc/cmdline", "ro nohz_full=1\n", CC_DOCTOR_WARN, "overlap the reserved set 0-1" },
	{ "cmdline", "/proc/cmdline", "ro isolcpus=4-7\n", CC_DOCTOR_WARN, "isolcpus=4-7 (scheduler domains removed)" },
	{ "cmdline", "/proc/cmdline", "ro isolcpus=domain,managed_irq,4-7\n", CC_DOCTOR_WARN,
	  "isolcpus=domain,managed_irq,4-7" },
	{ "cmdline", "/proc/cmdline", "ro isolcpus=managed_irq,4-7 nohz_full=4-7\n", CC_DOCTOR_OK,
	  "isolcpus=managed_irq,4-7 nohz_full=4-7, disjoint from reserved 0-1" },
	{ "cmdline", "/proc/cmdline", "ro isolcpus=4-z\n", CC_DOCTOR_WARN, "/proc/cmdline: " },
	{ "cmdline", NULL, NULL, CC_DOCTOR_UNKNOWN, "cannot read /proc/cmdline" },
	{ "irqbalance", NULL, NULL, CC_DOCTOR_UNKNOWN, "the captured tree has no process list" },
	{ "irqbalance", "/proc/1/comm", "systemd\n", CC_DOCTOR_OK, "not running" },
	{ "hybrid-pmu", "/sys/devices/cpu/cpus", "0-15\n", CC_DOCTOR_OK, "not hybrid: cpu 0-15" },
	{ "governor", "/sys/devices/system/cpu/online", "0-15\n", CC_DOCTOR_OK, "cpufreq not exposed" },
	{ "governor", NULL, NULL, CC_DOCTOR_UNKNOWN, "the captured tree has no /sys/devices/system/cpu" },
	{ "power", "/sys/devices/system/cpu/online", "0-15\n", CC_DOCTOR_OK,
	  "idle states (driver none): none exposed; uncore frequency: 0 dies (not exposed); EPP: not exposed" },
	{ "power", "/sys/devices/system/cpu/intel_uncore_frequency/package_01_die_00/max_freq_khz", "2400000\n",
	  CC_DOCTOR_OK, "uncore frequency: 1 die;" },
	{ "smt", "/sys/devices/system/cpu/smt/control", "off\n", CC_DOCTOR_OK, "(control=off), up to 2 threads" },
};

START_TEST(test_file_cases)
{
	const struct file_case *c = &file_cases[_i];
	_cleanup_free_ char *tree = mktree();
	_cleanup_bitmap_ hwloc_bitmap_t reserved = hwloc_bitmap_alloc();
	struct cc_topo *topo = synth("pack:2 numa:1 core:4 pu:2");
	struct cc_doctor_item it;
	struct cc_doctor_ctx ctx = { .topo = topo, .reserved = reserved };

	hwloc_bitmap_set_range(reserved, 0, 1);
	if (c->path)
		put(tree, c->path, c->text);
	it = run(tree, ctx, c->check);
	ck_assert_msg(it.status == c->status, "case %d (%s): status %s, want %s: %s", _i, c->check,
		      cc_doctor_status_name(it.status), cc_doctor_status_name(c->status), it.found);
	ck_assert_msg(strstr(it.found, c->found), "case %d (%s): \"%s\" lacks \"%s\"", _i, c->check, it.found, c->found);
	cc_topo_free(topo);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* A kubelet node with a partition parent beside its pods (init-parent's
 * /corecarve.slice on 6.1): every ordinary pod runs on the reserved CPUs. */
START_TEST(test_partition_squeezes_pods)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	put(tree, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put(tree, "/sys/fs/cgroup/kubepods/cpuset.cpus", "\n");
	put(tree, "/sys/fs/cgroup/kubepods/cpuset.cpus.partition", "member\n");
	/* Kubernetes before 6.7 without a partition parent: cpuset-only under
	 * the kubelet's pods, said so. */
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
	expect(&it, CC_DOCTOR_WARN,
	       "local partitions only on a kubelet node (/sys/fs/cgroup/kubepods): carves below the kubelet's pod "
	       "cgroups are cpuset-only");
	/* A partition parent beside them squeezes them. */
	put(tree, "/sys/fs/cgroup/corecarve.slice/cpuset.cpus", "\n");
	put(tree, "/sys/fs/cgroup/corecarve.slice/cpuset.cpus.partition", "root\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
	expect(&it, CC_DOCTOR_FAIL, "a kubelet node (/sys/fs/cgroup/kubepods) with /corecarve.slice a partition root");
	ck_assert_ptr_nonnull(strstr(it.fix, "/sys/fs/cgroup/corecarve.slice/cpuset.cpus.partition"));
	/* At boot, before the kubelet made its cgroups: its state directory. */
	cc_test_sh(NULL, "rm -rf '%s/sys/fs/cgroup/kubepods'", tree);
	put(tree, "/var/lib/kubelet/config.yaml", "");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
	expect(&it, CC_DOCTOR_FAIL, "a kubelet node (/var/lib/kubelet) with /corecarve.slice a partition root");
	/* An invalid one takes nothing. */
	put(tree, "/sys/fs/cgroup/corecarve.slice/cpuset.cpus.partition", "root invalid (Parent is not a partition root)\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
	expect(&it, CC_DOCTOR_WARN, "cpuset-only");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* init-parent refuses a kubelet's node: the pods would be squeezed. */
START_TEST(test_init_parent_refuses_kubelet_node)
{
	const char *bin = cc_test_bin("init-parent CLI tests");
	const char *sys = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	_cleanup_free_ char *tree = NULL;
	char *out = NULL;
	int rc;

	if (!bin || !sys)
		return;
	tree = mktree();
	ck_assert_int_eq(cc_test_sh(NULL, "cp -a '%s/sample1/.' '%s/' && mkdir -p '%s/var/lib/kubelet'", sys, tree, tree), 0);
	rc = cc_test_sh(&out, "CORECARVE_POLICY= '%s' init-parent /corecarve.slice --root '%s' 2>&1", bin, tree);
	ck_assert_int_eq(rc, 1);
	ck_assert_msg(strstr(out, "corecarve: init-parent /corecarve.slice: refused on a kubelet node (/var/lib/kubelet): "
				  "as a partition root it would take its CPUs from the kubelet's pods"),
		      "%s", out);
	free(out);
	/* What corecarve-prepare.service runs: a skip there, exit 0 (a
	 * cgroup-v2 root for it to probe). */
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/sys/fs/cgroup' && echo 'cpuset cpu' >'%s/sys/fs/cgroup/cgroup.controllers' "
				    "&& : >'%s/sys/fs/cgroup/cgroup.subtree_control'", tree, tree, tree), 0);
	rc = cc_test_sh(&out, "CORECARVE_POLICY= '%s' init-parent --if-needed --dry-run /corecarve.slice --root '%s' 2>&1",
			bin, tree);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(out, "/corecarve.slice: not made: a kubelet node (/var/lib/kubelet)"), "%s", out);
	ck_assert_msg(!strstr(out, "cpuset.cpus.partition: root"), "%s", out);
	free(out);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* One NUMA node: balancing has nothing to migrate. */
START_TEST(test_numa_one_node)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_topo *topo = synth("pack:1 core:4 pu:2");
	struct cc_doctor_item it;

	put(tree, "/proc/sys/kernel/numa_balancing", "1\n");
	it = run(tree, (struct cc_doctor_ctx){ .topo = topo }, "numa-balancing");
	expect(&it, CC_DOCTOR_OK, "one NUMA node");
	cc_topo_free(topo);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* ---- irqbalance: the daemon, its version, its file ------------------------ */

static const char dpkg_status[] = "Package: irqbalanced\nVersion: 9.9\n\n"
				  "Package: irqbalance\nStatus: install ok installed\nVersion: %s\n\n"
				  "Package: zlib1g\nVersion: 1:1.2.13\n";

START_TEST(test_irqbalance_old)
{
	_cleanup_free_ char *tree = mktree();
	char status[512];
	struct cc_doctor_item it;

	snprintf(status, sizeof(status), dpkg_status, "1.7.0-1");
	put(tree, "/var/lib/dpkg/status", status);
	put(tree, "/proc/4242/comm", "irqbalance\n");
	put(tree, "/proc/1/comm", "systemd\n");
	put(tree, "/etc/default/irqbalance", "#IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPUS=0000000c\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "irqbalance");
	expect(&it, CC_DOCTOR_OK, "running (pid 4242, version 1.7.0-1: only IRQBALANCE_BANNED_CPUS); "
				  "/etc/default/irqbalance sets IRQBALANCE_BANNED_CPUS");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

START_TEST(test_irqbalance_no_file)
{
	_cleanup_free_ char *tree = mktree();
	char status[512];
	struct cc_doctor_item it;

	snprintf(status, sizeof(status), dpkg_status, "1.9.2-2");
	put(tree, "/var/lib/dpkg/status", status);
	put(tree, "/proc/77/comm", "irqbalance\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "irqbalance");
	expect(&it, CC_DOCTOR_WARN, "version 1.9.2-2: IRQBALANCE_BANNED_CPULIST and IRQBALANCE_BANNED_CPUS), no environment file");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* ---- hooks.d --------------------------------------------------------------- */

static void install_hooks(const char *tree, const char *dir, const char *bin)
{
	const char *stages[] = { "createRuntime", "poststop" };

	for (int i = 0; i < 2; i++) {
		char src[4096], dst[512];
		_cleanup_free_ char *text = NULL;

		snprintf(src, sizeof(src), "%s/manifests/hooks.d/corecarve-%s.json", CC_SOURCE_DIR, stages[i]);
		text = cc_test_slurp(src);
		snprintf(dst, sizeof(dst), "%s/corecarve-%s.json", dir, stages[i]);
		put(tree, dst, text);
	}
	if (bin)
		put(tree, bin, "#!/bin/sh\n");
}

START_TEST(test_hooks_installed)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	install_hooks(tree, "/usr/share/containers/oci/hooks.d", "/usr/local/bin/corecarve");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "hooks");
	expect(&it, CC_DOCTOR_OK, "createRuntime /usr/share/containers/oci/hooks.d, poststop "
				  "/usr/share/containers/oci/hooks.d: valid");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

static const struct {
	const char *json;
	const char *found;
} bad_hooks[] = {
	{ "{\"version\":\"2.0.0\",\"hook\":{\"path\":\"/usr/local/bin/corecarve\"},\"stages\":[\"createRuntime\"]}",
	  "corecarve-createRuntime.json: version: expected \"1.0.0\"" },
	{ "{\"version\":\"1.0.0\",\"hook\":{\"path\":\"corecarve\"},\"stages\":[\"createRuntime\"]}",
	  "hook.path: expected an absolute path" },
	{ "{\"version\":\"1.0.0\",\"hook\":{\"path\":\"/usr/bin/corecarve\"},\"stages\":[\"createRuntime\"]}",
	  "hook.path: /usr/bin/corecarve does not exist" },
	{ "{\"version\":\"1.0.0\",\"hook\":{\"path\":\"/usr/local/bin/corecarve\"},\"stages\":\"createRuntime\"}",
	  "stages: expected an array" },
	{ "{\"version\":\"1.0.0\",\"hook\":{\"path\":\"/usr/local/bin/corecarve\"},\"stages\":[\"poststop\"]}",
	  "stages: createRuntime missing" },
	{ "{\"version\":\"1.0.0\",", "corecarve-createRuntime.json:1:" },
};

START_TEST(test_hooks_bad)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	install_hooks(tree, "/etc/containers/oci/hooks.d", "/usr/local/bin/corecarve");
	put(tree, "/etc/containers/oci/hooks.d/corecarve-createRuntime.json", bad_hooks[_i].json);
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "hooks");
	expect(&it, CC_DOCTOR_FAIL, bad_hooks[_i].found);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

START_TEST(test_hooks_missing)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	install_hooks(tree, "/etc/containers/oci/hooks.d", "/usr/local/bin/corecarve");
	cc_test_sh(NULL, "rm '%s/etc/containers/oci/hooks.d/corecarve-poststop.json'", tree);
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "hooks");
	expect(&it, CC_DOCTOR_WARN, "createRuntime /etc/containers/oci/hooks.d, poststop not installed");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* ---- ledger and policy ------------------------------------------------------ */

START_TEST(test_ledger)
{
	_cleanup_free_ char *state = mktree();
	struct cc_doctor_item it;
	char want[512];

	it = run("/", (struct cc_doctor_ctx){ .state_dir = state }, "ledger");
	snprintf(want, sizeof(want), "%s readable: 0 carves", state);
	expect(&it, CC_DOCTOR_OK, want);
	put(state, "/ledger.json", "{\"version\": ");
	it = run("/", (struct cc_doctor_ctx){ .state_dir = state }, "ledger");
	snprintf(want, sizeof(want), "%s/ledger.json", state);
	expect(&it, CC_DOCTOR_FAIL, want);

	/* Its lock held past the wait: the line names the holder, the fix
	 * is the lock's, not the damaged file's. */
	{
		struct cc_ledger_lock lk = { .wait_ms = 100 };
		char lockp[400];
		int fd;

		snprintf(lockp, sizeof(lockp), "%s/lock", state);
		fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(flock(fd, LOCK_EX), 0);
		it = run("/", (struct cc_doctor_ctx){ .state_dir = state, .lock = &lk }, "ledger");
		close(fd);
		snprintf(want, sizeof(want), "%s: held by pid %ld (", lockp, (long)getpid());
		expect(&it, CC_DOCTOR_FAIL, want);
		expect(&it, CC_DOCTOR_FAIL, "; gave up after 0.1 s");
		ck_assert_msg(strstr(it.fix, "holds the ledger lock"), "%s", it.fix);
	}
	cc_test_sh(NULL, "rm -rf '%s'", state);
}
END_TEST

START_TEST(test_policy)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_default(&err);
	_cleanup_bitmap_ hwloc_bitmap_t reserved = hwloc_bitmap_alloc();
	struct cc_doctor_item it;

	ck_assert_msg(p != NULL, "%s", err.msg);
	hwloc_bitmap_set_range(reserved, 0, 1);
	it = run("/", (struct cc_doctor_ctx){ .policy = p, .reserved = reserved }, "policy");
	expect(&it, CC_DOCTOR_OK, "reserved 0-1");
	ck_assert_ptr_null(strstr(it.found, "default rule")); /* no topology: no rule to name */
	cc_policy_free(p);
	it = run("/", (struct cc_doctor_ctx){ .policy_error = "policy.yaml:3:5: classes.latency.smt: expected isolate" },
		 "policy");
	expect(&it, CC_DOCTOR_FAIL, "policy.yaml:3:5: classes.latency.smt");
}
END_TEST

/* ---- real machines (shared fixtures) ---------------------------------------- */

START_TEST(test_fixture_alderlake)
{
	const char *tree = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	struct cc_err err = CC_ERR_INIT;
	char root_path[4096];
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_topo_source src = { .kind = CC_TOPO_HOST };
	struct cc_topo *topo;
	struct cc_doctor_item it;

	if (!tree)
		return;
	snprintf(root_path, sizeof(root_path), "%s/sample1", tree);
	ck_assert_ptr_nonnull(root = cc_root_open(root_path, &err));
	src.root = root;
	ck_assert_msg((topo = cc_topo_load(&src, &err)) != NULL, "%s", err.msg);
	it = run(root_path, (struct cc_doctor_ctx){ .topo = topo }, "hybrid-pmu");
	ck_assert_msg(it.status == CC_DOCTOR_OK && strstr(it.found, "cpu_core 0-7") && strstr(it.found, "cpu_atom 8-15"),
		      "%s", it.found);
	it = run(root_path, (struct cc_doctor_ctx){ .topo = topo }, "governor");
	expect(&it, CC_DOCTOR_WARN, "powersave on 16 CPUs (driver intel_pstate)");
	ck_assert_ptr_nonnull(strstr(it.fix, "energy_performance_preference"));
	it = run(root_path, (struct cc_doctor_ctx){ .topo = topo }, "power");
	expect(&it, CC_DOCTOR_OK, "idle states (driver intel_idle): POLL 0us, C1E 2us, C6 170us, C8 200us, C10 230us; "
				  "uncore frequency: 1 die; EPP: balance_performance");
	it = run(root_path, (struct cc_doctor_ctx){ .topo = topo }, "smt");
	expect(&it, CC_DOCTOR_OK, "SMT on (control=on), up to 2 threads per core");
	it = run(root_path, (struct cc_doctor_ctx){ .topo = topo }, "topology");
	expect(&it, CC_DOCTOR_OK, "16 CPUs online (0-15), 2 core classes from hybrid-pmu");
	it = run(root_path, (struct cc_doctor_ctx){ .topo_error = "hwloc: no such file" }, "topology");
	expect(&it, CC_DOCTOR_FAIL, "topology did not load: hwloc: no such file");
	cc_topo_free(topo);
}
END_TEST

/* A 2-socket Xeon: not hybrid, the whole report runs and maps to an exit code. */
START_TEST(test_fixture_xeon_report)
{
	const char *tree = cc_test_fixture_tree("F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2");
	struct cc_err err = CC_ERR_INIT;
	char root_path[4096];
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_topo_source src = { .kind = CC_TOPO_HOST };
	struct cc_topo *topo;
	struct cc_doctor_report r;
	_cleanup_json_ json_t *doc = NULL;
	int worst = 0;

	if (!tree)
		return;
	snprintf(root_path, sizeof(root_path), "%s/32intel64-2p8co2t+8ve", tree);
	ck_assert_ptr_nonnull(root = cc_root_open(root_path, &err));
	src.root = root;
	ck_assert_msg((topo = cc_topo_load(&src, &err)) != NULL, "%s", err.msg);
	cc_doctor_run(&(struct cc_doctor_ctx){ .root = root, .topo = topo, .state_dir = "/nonexistent-cc-state" }, &r);
	ck_assert_int_eq(r.n, 16);
	for (int i = 0; i < r.n; i++) {
		/* unknown (the tree lacks cgroupfs, /proc) is counted, not graded */
		if (r.items[i].status != CC_DOCTOR_UNKNOWN && (int)r.items[i].status > worst)
			worst = (int)r.items[i].status;
		if (!strcmp(r.items[i].id, "hybrid-pmu"))
			expect(&r.items[i], CC_DOCTOR_OK, "not hybrid");
		if (!strcmp(r.items[i].id, "topology"))
			expect(&r.items[i], CC_DOCTOR_OK, "2 packages");
	}
	ck_assert_int_eq(cc_doctor_exit_code(&r), worst);
	ck_assert_ptr_nonnull(doc = cc_doctor_json(&r));
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "exit")), worst);
	ck_assert_int_eq((int)json_array_size(json_object_get(doc, "checks")), 16);
	cc_topo_free(topo);
}
END_TEST

/* ---- pure parsers ----------------------------------------------------------- */

static const struct {
	const char *cmdline, *param;
	int ret;
	const char *cpus;  /* when ret == 1 */
	const char *flags; /* NULL: none */
	const char *err;   /* when ret == -1 */
} cmdline_cases[] = {
	{ "ro quiet", "isolcpus", 0, NULL, NULL, NULL },
	{ "isolcpus=2-7", "isolcpus", 1, "2-7", NULL, NULL },
	{ "ro isolcpus=domain,managed_irq,2-7,9 x", "isolcpus", 1, "2-7,9", "domain,managed_irq", NULL },
	{ "isolcpus=1 isolcpus=3", "isolcpus", 1, "3", NULL, NULL }, /* the last one wins */
	{ "xisolcpus=3", "isolcpus", 0, NULL, NULL, NULL },
	{ "isolcpus_x=3", "isolcpus", 0, NULL, NULL, NULL },
	{ "nohz_full=8-15\n", "nohz_full", 1, "8-15", NULL, NULL },
	{ "isolcpus=managed_irq", "isolcpus", -1, NULL, NULL, "isolcpus=: no CPU list" },
	{ "isolcpus=", "isolcpus", -1, NULL, NULL, "isolcpus=: no CPU list" },
	{ "isolcpus=2-x", "isolcpus", -1, NULL, NULL, "isolcpus" },
	{ "nohz_full=7-3", "nohz_full", -1, NULL, NULL, "nohz_full" },
};

START_TEST(test_cmdline_cpus)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();
	_cleanup_free_ char *flags = NULL, *s = NULL;
	int r = cc_doctor_cmdline_cpus(cmdline_cases[_i].cmdline, cmdline_cases[_i].param, b, &flags, &err);

	ck_assert_msg(r == cmdline_cases[_i].ret, "case %d: %d (%s)", _i, r, err.msg);
	if (r < 0) {
		ck_assert_ptr_null(flags);
		ck_assert_msg(strstr(err.msg, cmdline_cases[_i].err), "case %d: %s", _i, err.msg);
		return;
	}
	ck_assert(!cc_err_isset(&err));
	if (r == 0) {
		ck_assert(hwloc_bitmap_iszero(b));
		return;
	}
	s = cc_cpulist_format(b);
	ck_assert_str_eq(s, cmdline_cases[_i].cpus);
	if (cmdline_cases[_i].flags)
		ck_assert_str_eq(flags, cmdline_cases[_i].flags);
	else
		ck_assert_ptr_null(flags);
}
END_TEST

static const struct {
	const char *s;
	int v;
} version_cases[] = {
	{ "1.9.2-2", 1009 }, { "1.8.0", 1008 }, { "1.7.0-1ubuntu1", 1007 }, { "2.0", 2000 },
	{ "1", -1 },         { "1.", -1 },      { "x1.9", -1 },             { "", -1 },     { NULL, -1 },
};

START_TEST(test_version)
{
	ck_assert_int_eq(cc_doctor_version(version_cases[_i].s), version_cases[_i].v);
}
END_TEST

START_TEST(test_thp_mode)
{
	_cleanup_free_ char *a = cc_doctor_thp_mode("always [madvise] never");
	_cleanup_free_ char *b = cc_doctor_thp_mode("always madvise never");

	ck_assert_str_eq(a, "madvise");
	ck_assert_ptr_null(b);
}
END_TEST

START_TEST(test_exit_code)
{
	struct cc_doctor_report r = { .n = 3 };
	struct cc_err err = CC_ERR_INIT;
	struct cc_doctor_item it;

	ck_assert_int_eq(cc_doctor_exit_code(&r), 0);
	r.items[1].status = CC_DOCTOR_WARN;
	ck_assert_int_eq(cc_doctor_exit_code(&r), 1);
	r.items[2].status = CC_DOCTOR_FAIL;
	ck_assert_int_eq(cc_doctor_exit_code(&r), 2);
	ck_assert_int_eq(cc_doctor_run_one(&(struct cc_doctor_ctx){ 0 }, "gpu", &it, &err), -1);
	ck_assert_str_eq(err.msg, "doctor: no check \"gpu\"");
}
END_TEST

/* The CLI's one-line errors and exit codes. */
START_TEST(test_cli_bad_args)
{
	const char *bin = cc_test_bin("doctor CLI");
	_cleanup_free_ char *out = NULL;

	if (!bin)
		return;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' doctor --frobnicate", bin), 2);
	ck_assert_str_eq(out, "corecarve: doctor: unexpected argument \"--frobnicate\" (see corecarve doctor --help)\n");
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, "'%s' doctor --synthetic 'pack:1 pu:1'", bin), 2);
	ck_assert_ptr_nonnull(strstr(out, "--hwloc-xml and --synthetic describe no node to check"));
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, "'%s' doctor --state", bin), 2);
	ck_assert_str_eq(out, "corecarve: --state: missing argument\n");
}
END_TEST

/* ---- cgroup layouts: hybrid, legacy, unified -------------------------------- */

/* /proc/self/mountinfo of a 2-vCPU Debian 12 VM with hybrid cgroups (the
 * machine these tests were written on, kernel 6.18): cgroup v1 for every
 * controller, an empty cgroup2 at /sys/fs/cgroup/unified. */
static const char hybrid_mountinfo[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void hybrid_tree(const char *tree)
{
	put(tree, "/proc/self/mountinfo", hybrid_mountinfo);
	put(tree, "/proc/cmdline", "console=ttyS0 quiet reboot=k panic=1\n");
	put(tree, "/proc/sys/kernel/osrelease", "6.18.44\n");
	put(tree, "/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
	put(tree, "/sys/fs/cgroup/cpuset/cpuset.cpus", "0-1\n");
	put(tree, "/sys/fs/cgroup/cpu/cpu.shares", "1024\n");
}

/* The misdiagnosis of issue 19: "no cgroup v2", a mount -t cgroup2 fix, and
 * a partition check that points at a missing file and asks for 5.11. */
START_TEST(test_cgroup_hybrid)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	hybrid_tree(tree);
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "cgroup");
	expect(&it, CC_DOCTOR_FAIL, "hybrid hierarchy: cgroup2 is mounted at /sys/fs/cgroup/unified with controllers "
				    "\"hugetlb\"; cpuset and cpu are on cgroup v1 (/sys/fs/cgroup/cpuset, /sys/fs/cgroup/cpu)");
	ck_assert_msg(strstr(it.fix, "boot with systemd.unified_cgroup_hierarchy=1") &&
			      strstr(it.fix, "GRUB_CMDLINE_LINUX") && strstr(it.fix, "Do not mount cgroup2 over /sys/fs/cgroup"),
		      "%s", it.fix);
	ck_assert_ptr_null(strstr(it.fix, "remove "));
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
	expect(&it, CC_DOCTOR_UNKNOWN, "needs cgroup v2 with the cpuset controller at /sys/fs/cgroup (see the cgroup line)");
	ck_assert_ptr_null(strstr(it.found, "5.11"));
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* cgroup v1 only, pinned by the kernel command line: the fix says to drop
 * the parameter. */
START_TEST(test_cgroup_legacy_cmdline)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	put(tree, "/proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
					  "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n");
	put(tree, "/proc/cmdline", "ro systemd.unified_cgroup_hierarchy=0 quiet\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "cgroup");
	expect(&it, CC_DOCTOR_FAIL, "legacy hierarchy: no cgroup2 mount; cpuset and cpu are on cgroup v1 "
				    "(/sys/fs/cgroup/cpuset, /sys/fs/cgroup/cpu,cpuacct)");
	ck_assert_msg(strstr(it.fix, "remove systemd.unified_cgroup_hierarchy=0 from the kernel command line and boot "
				     "with systemd.unified_cgroup_hierarchy=1"),
		      "%s", it.fix);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

/* Unified, but a v1 hierarchy still holds cpuset: the fix names it. */
START_TEST(test_cgroup_v1_holds_cpuset)
{
	_cleanup_free_ char *tree = mktree();
	struct cc_doctor_item it;

	put(tree, "/proc/self/mountinfo", "31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
					  "50 31 0:40 / /run/v1cpuset rw - cgroup cgroup rw,cpuset\n");
	put(tree, "/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
	it = run(tree, (struct cc_doctor_ctx){ 0 }, "cgroup");
	expect(&it, CC_DOCTOR_FAIL, "cpuset missing");
	ck_assert_msg(strstr(it.fix, "unmount the cgroup v1 hierarchy holding it (/run/v1cpuset)"), "%s", it.fix);
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

static const struct {
	const char *text;
	bool unified;
	const char *v2, *cpuset, *cpu;
	int nv1;
} mountinfo_cases[] = {
	{ hybrid_mountinfo, false, "/sys/fs/cgroup/unified", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/cpu", 5 },
	{ "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", true, "/sys/fs/cgroup", "", "", 0 },
	/* optional fields (shared:N) before the separator; cpuacct is not cpu */
	{ "32 31 0:29 / /sys/fs/cgroup/cpuacct rw shared:9 master:2 - cgroup cgroup rw,cpuacct\n", false, "", "", "", 1 },
	{ "garbage\n\n- - -\n", false, "", "", "", 0 },
	{ "", false, "", "", "", 0 },
};

START_TEST(test_parse_mountinfo)
{
	struct cc_cgroup_layout l;

	cc_doctor_parse_mountinfo(mountinfo_cases[_i].text, &l);
	ck_assert(l.known);
	ck_assert_int_eq(l.unified, mountinfo_cases[_i].unified);
	ck_assert_str_eq(l.v2_mount, mountinfo_cases[_i].v2);
	ck_assert_str_eq(l.v1_cpuset, mountinfo_cases[_i].cpuset);
	ck_assert_str_eq(l.v1_cpu, mountinfo_cases[_i].cpu);
	ck_assert_int_eq(l.nv1, mountinfo_cases[_i].nv1);
}
END_TEST

/* Partition support, read from which files the first-level children have. */
START_TEST(test_partition)
{
	static const struct {
		const char *file, *subtree, *release;
		enum cc_doctor_status st;
		const char *found, *fix;
	} cases[] = {
		{ "cpuset.cpus.exclusive", "cpuset cpu", "6.12.0", CC_DOCTOR_OK, "remote: cpuset.cpus.exclusive present (seen on /system.slice)", NULL },
		{ "cpuset.cpus.partition", "cpuset cpu", "6.1.0", CC_DOCTOR_WARN, "local: cpuset.cpus.partition", "corecarve init-parent" },
		{ "cpuset.cpus", "cpuset cpu", "5.10.0", CC_DOCTOR_WARN, "none: child cgroups have cpuset.cpus but no cpuset.cpus.partition (kernel 5.10.0)", "Linux 5.11 or later" },
		/* No child has cpuset yet: the kernel's support cannot be seen. */
		{ "cgroup.procs", "", "6.18.0", CC_DOCTOR_UNKNOWN, "no child cgroup has the cpuset controller yet (root subtree_control \"\")", "echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *tree = mktree();
		char path[256];
		struct cc_doctor_item it;

		put(tree, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
		put(tree, "/sys/fs/cgroup/cgroup.subtree_control", cases[i].subtree);
		put(tree, "/proc/sys/kernel/osrelease", cases[i].release);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/system.slice/%s", cases[i].file);
		put(tree, path, "\n");
		it = run(tree, (struct cc_doctor_ctx){ 0 }, "partition");
		expect(&it, cases[i].st, cases[i].found);
		if (cases[i].fix)
			ck_assert_msg(strstr(it.fix, cases[i].fix), "case %zu: %s", i, it.fix);
		cc_test_sh(NULL, "rm -rf '%s'", tree);
	}
}
END_TEST

/* ---- capacity: every class can carve its smallest request --------------- */

static struct cc_policy *policy_text(const char *text)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_parse(text, strlen(text), "p.yaml", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	return p;
}

START_TEST(test_capacity)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *topo = synth("pack:1 core:2 pu:1");
	struct cc_policy *def = cc_policy_default(&err), *all = policy_text("reserved: \"0-200\"\n"
									     "classes: {latency: {coreType: performance}}\n");
	_cleanup_bitmap_ hwloc_bitmap_t res = NULL;
	struct cc_doctor_item it;

	ck_assert_ptr_nonnull(def);
	/* This 2-vCPU host under the embedded default: CPU 0 is reserved and
	 * background keeps CPU 1, so no exclusive class can ever carve. */
	res = cc_policy_reserved(def, topo);
	it = run("/", (struct cc_doctor_ctx){ .topo = topo, .policy = def, .reserved = res }, "capacity");
	expect(&it, CC_DOCTOR_FAIL, "3 of 4 classes can never carve here (latency, throughput, isolated: its 1 unreserved "
				    "performance CPU must keep 1 for background (minShared)); on an empty node: latency up to 0 "
				    "CPUs, throughput up to 0 CPUs, background 1 CPU shared, isolated up to 0 CPUs");
	ck_assert_str_eq(it.fix, "lower minShared, or reserve fewer performance CPUs, in the policy");
	hwloc_bitmap_free(res);
	/* reserved: "0-200" on 2 CPUs passes the policy check no longer. */
	res = cc_policy_reserved(all, topo);
	it = run("/", (struct cc_doctor_ctx){ .topo = topo, .policy = all, .reserved = res }, "capacity");
	expect(&it, CC_DOCTOR_FAIL, "latency: every one of its 2 performance CPUs is reserved");
	ck_assert_str_eq(it.fix, "take some performance CPUs out of the policy's reserved");
	it = run("/", (struct cc_doctor_ctx){ .topo = topo, .policy = all, .reserved = res }, "policy");
	expect(&it, CC_DOCTOR_WARN, "reserved 0-200 names CPUs 2-200 this node does not have online (online 0-1)");
	it = run("/", (struct cc_doctor_ctx){ .policy = all }, "capacity");
	expect(&it, CC_DOCTOR_UNKNOWN, "needs the policy and the topology");
	hwloc_bitmap_free(res);
	res = NULL;
	cc_topo_free(topo);
	cc_policy_free(def);
	cc_policy_free(all);
}
END_TEST

/* The embedded default on the hybrid fixtures: every class fits, and the
 * policy line says which rule reserved what. */
START_TEST(test_capacity_fixtures)
{
	static const struct {
		const char *dir, *file, *top, *found, *reserved;
	} fx[] = {
		{ "F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1",
		  "every class fits its smallest request; on an empty node: latency up to 4 CPUs, throughput up to 6 CPUs, "
		  "background 7 CPUs shared, isolated up to 4 CPUs",
		  "reserved 8 (the default rule: the first core of efficient, the most plentiful core class" },
		{ "F11-arm-X3-A715-A710-A510", "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3",
		  "latency up to 1 CPU,", "reserved 3 (the default rule: the first core of mid" },
	};
	struct cc_err err = CC_ERR_INIT;

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		const char *tree = cc_test_fixture_tree(fx[i].dir, fx[i].file);
		char root_path[4096];
		_cleanup_root_ struct cc_root *root = NULL;
		_cleanup_policy_ struct cc_policy *def = cc_policy_default(&err);
		_cleanup_bitmap_ hwloc_bitmap_t res = NULL;
		struct cc_topo_source src = { .kind = CC_TOPO_HOST };
		struct cc_topo *topo;
		struct cc_doctor_item it;

		if (!tree)
			continue;
		snprintf(root_path, sizeof(root_path), "%s/%s", tree, fx[i].top);
		ck_assert_ptr_nonnull(root = cc_root_open(root_path, &err));
		src.root = root;
		ck_assert_msg((topo = cc_topo_load(&src, &err)) != NULL, "%s", err.msg);
		res = cc_policy_reserved(def, topo);
		it = run(root_path, (struct cc_doctor_ctx){ .topo = topo, .policy = def, .reserved = res }, "capacity");
		expect(&it, CC_DOCTOR_OK, fx[i].found);
		it = run(root_path, (struct cc_doctor_ctx){ .topo = topo, .policy = def, .reserved = res }, "policy");
		expect(&it, CC_DOCTOR_OK, fx[i].reserved);
		cc_topo_free(topo);
	}
}
END_TEST

/* ---- the report: counts, unknowns, JSON ------------------------------------- */

START_TEST(test_verdict_counts)
{
	struct cc_doctor_report r = { .n = 4 };
	char v[128];
	_cleanup_json_ json_t *doc = NULL;

	r.items[0].id = "a";
	r.items[1].id = "b";
	r.items[2].id = "c";
	r.items[3].id = "d";
	r.items[1].status = CC_DOCTOR_UNKNOWN;
	r.items[2].status = CC_DOCTOR_UNKNOWN;
	/* Unknowns are counted, never graded. */
	ck_assert_int_eq(cc_doctor_exit_code(&r), 0);
	cc_doctor_verdict(&r, v, sizeof(v));
	ck_assert_str_eq(v, "ready: 0 fail, 0 warn, 2 ok, 2 unknown");
	r.items[3].status = CC_DOCTOR_WARN;
	ck_assert_int_eq(cc_doctor_exit_code(&r), 1);
	cc_doctor_verdict(&r, v, sizeof(v));
	ck_assert_str_eq(v, "ready, with warnings: 0 fail, 1 warn, 1 ok, 2 unknown");
	ck_assert_ptr_nonnull(doc = cc_doctor_json(&r));
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "schema_version")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "counts"), "unknown")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "counts"), "warn")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "warnings");
}
END_TEST

/* A wrong --state is the ledger line's failure, not an empty ledger. */
START_TEST(test_ledger_wrong_state)
{
	struct cc_doctor_item it = run("/", (struct cc_doctor_ctx){ .state_dir = "/nonexistent-cc",
								    .state_error = "--state /nonexistent-cc: no such directory" },
				       "ledger");

	expect(&it, CC_DOCTOR_FAIL, "--state /nonexistent-cc: no such directory");
}
END_TEST

/* The command on this host's layout and on a fixture: a short table, only
 * the problems with --problems, the fixes below it, each line within
 * --width. */
START_TEST(test_cli_report)
{
	const char *bin = cc_test_bin("doctor report");
	const char *fx = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	_cleanup_free_ char *tree = mktree(), *out = NULL;
	char *line, *save = NULL;
	int rc;

	if (!bin)
		return;
	hybrid_tree(tree);
	rc = cc_test_sh(&out, "'%s' doctor --root '%s' --problems --width 80 2>&1", bin, tree);
	ck_assert_msg(rc == 2, "%d: %s", rc, out);
	ck_assert_msg(strstr(out, "STATUS  CHECK") == out && strstr(out, "\nfail    cgroup ") &&
			      strstr(out, "\nunknown partition ") && !strstr(out, "\nok ") &&
			      strstr(out, "\ndoctor: not usable: ") && strstr(out, "\n\nCHECK") &&
			      strstr(out, "systemd.unified_cgroup_hierarchy=1"),
		      "%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ck_assert_msg(strlen(line) <= 80, "%zu columns: %s", strlen(line), line);
	free(out);
	out = NULL;
	if (!fx)
		return;
	rc = cc_test_sh(&out, "'%s' doctor --root '%s/sample1' --json", bin, fx);
	ck_assert_msg(rc == 1 || rc == 2, "%d: %s", rc, out);
	ck_assert_msg(strstr(out, "\"schema_version\": 1") && strstr(out, "\"unknown\": ") &&
			      strstr(out, "\"id\": \"capacity\",\n      \"status\": \"ok\""),
		      "%s", out);
	free(out);
	out = NULL;
	/* -o chooses the columns; a name that is none lists them. */
	ck_assert_int_eq(cc_test_sh(&out, "'%s' doctor --root '%s' -o STATUS,CHECK --no-headers", bin, tree), 2);
	ck_assert_msg(strstr(out, "fail    cgroup\n") == out, "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' doctor -o STATUS,COLOR", bin), 2);
	ck_assert_str_eq(out, "corecarve: --output: unknown column \"COLOR\" (columns: STATUS, CHECK, FOUND, WHY, FIX)\n");
	cc_test_sh(NULL, "rm -rf '%s'", tree);
}
END_TEST

static Suite *doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("doctor");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_file_cases, 0, (int)(sizeof(file_cases) / sizeof(file_cases[0])));
	tcase_add_test(tc, test_numa_one_node);
	tcase_add_test(tc, test_partition_squeezes_pods);
	tcase_add_test(tc, test_init_parent_refuses_kubelet_node);
	tcase_add_test(tc, test_irqbalance_old);
	tcase_add_test(tc, test_irqbalance_no_file);
	tcase_add_test(tc, test_hooks_installed);
	tcase_add_loop_test(tc, test_hooks_bad, 0, (int)(sizeof(bad_hooks) / sizeof(bad_hooks[0])));
	tcase_add_test(tc, test_hooks_missing);
	tcase_add_test(tc, test_ledger);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_fixture_alderlake);
	tcase_add_test(tc, test_fixture_xeon_report);
	tcase_add_loop_test(tc, test_cmdline_cpus, 0, (int)(sizeof(cmdline_cases) / sizeof(cmdline_cases[0])));
	tcase_add_loop_test(tc, test_version, 0, (int)(sizeof(version_cases) / sizeof(version_cases[0])));
	tcase_add_test(tc, test_thp_mode);
	tcase_add_test(tc, test_exit_code);
	tcase_add_test(tc, test_cli_bad_args);
	tcase_add_test(tc, test_cgroup_hybrid);
	tcase_add_test(tc, test_cgroup_legacy_cmdline);
	tcase_add_test(tc, test_cgroup_v1_holds_cpuset);
	tcase_add_loop_test(tc, test_parse_mountinfo, 0, (int)(sizeof(mountinfo_cases) / sizeof(mountinfo_cases[0])));
	tcase_add_test(tc, test_partition);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_capacity_fixtures);
	tcase_add_test(tc, test_verdict_counts);
	tcase_add_test(tc, test_ledger_wrong_state);
	tcase_add_test(tc, test_cli_report);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(doctor_suite)
