/* examples/: every policy loads and carves what its comments promise on
 * the kind of host it is written for (real dumps where there are some:
 * F03 for the hybrid desktop, F10 for the 2-socket SMT server; the e2e
 * guest's shape for the VM host); every VM of vms.yaml fits on the VM host
 * at once; the placement microbenchmark builds and runs on this machine,
 * skipping what it cannot measure here. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"
#include "policy.h"
#include "testlib.h"
#include "vmconfig.h"

#define EX CC_SOURCE_DIR "/examples/"

static struct cc_policy *load(const char *file)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_load(file, &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	return p;
}

/* topo: "F03", "F10" (fixtures; NULL when absent) or a synthetic description. */
static struct cc_topo *topo(const char *which, const struct cc_policy *p)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo_source src = { .overrides = p->overrides, .noverrides = p->noverrides };
	_cleanup_root_ struct cc_root *root = NULL;
	char path[PATH_MAX];
	struct cc_topo *t;

	if (!strcmp(which, "F03") || !strcmp(which, "F10")) {
		const char *tree = !strcmp(which, "F03")
					   ? cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz")
					   : cc_test_fixture_tree("F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2");

		if (!tree)
			return NULL;
		snprintf(path, sizeof(path), "%s/%s", tree, !strcmp(which, "F03") ? "sample1" : "32intel64-2p8co2t+8ve");
		root = cc_root_open(path, &err);
		ck_assert_msg(root != NULL, "%s", err.msg);
		src.kind = CC_TOPO_HOST;
		src.root = root;
	} else {
		src.kind = CC_TOPO_SYNTHETIC;
		src.arg = which;
	}
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "%s: %s", which, err.msg);
	return t;
}

/* The VM host of policy-vm-host.yaml: 2 sockets x 8 cores x 2 threads. */
#define VMHOST "pack:2 numa:1 l3:1 l2:8 core:1 pu:2"

static const struct {
	const char *policy, *topo, *class_name;
	int cpus;
	const char *cpus_want, *parked_want, *mems_want; /* cpus_want NULL: refused */
	const char *why;
} cases[] = {
	/* Hybrid desktop on a real 4P+8E Alder Lake (same core types, fewer of them). */
	{ "policy-hybrid-desktop.yaml", "F03", "latency", 2, "2,4", "3,5", "0", NULL },
	{ "policy-hybrid-desktop.yaml", "F03", "throughput", 4, "8-11", "", "0", NULL },
	{ "policy-hybrid-desktop.yaml", "F03", "isolated", 1, "2", "3", "0", NULL },
	{ "policy-hybrid-desktop.yaml", "F03", "background", 1, "8-15", "", "0", NULL },
	/* minShared 2 binds the E-cores background shares, not the P-cores:
	 * every unreserved P-core may be carved, the E pool keeps 2. */
	{ "policy-hybrid-desktop.yaml", "F03", "latency", 3, "2,4,6", "3,5,7", "0", NULL },
	{ "policy-hybrid-desktop.yaml", "F03", "throughput", 7, NULL, NULL, NULL, "must keep 2 (minShared, for background)" },
	/* 2-socket Xeon, siblings N/N+16, reserved core 0 of each socket. */
	{ "policy-2socket-smt.yaml", "F10", "latency", 2, "1-2", "17-18", "0", NULL },
	{ "policy-2socket-smt.yaml", "F10", "throughput", 4, "1-2,17-18", "", "0", NULL },
	{ "policy-2socket-smt.yaml", "F10", "bandwidth", 4, "1-2,17-18", "", "0-1", NULL },
	{ "policy-2socket-smt.yaml", "F10", "batch", 1, "1-7,9-15,17-23,25-31", "", "0-1", NULL },
	/* One socket holds 7 free cores: 8 spans both (local memory follows). */
	{ "policy-2socket-smt.yaml", "F10", "latency", 8, "1-7,9", "17-23,25", "0-1", NULL },
	{ "policy-2socket-smt.yaml", "F10", "throughput", 3, NULL, NULL, NULL, "not a multiple of 2 threads per core" },
	/* VM host: whole cores for pinned VMs, one thread per core for real-time ones. */
	{ "policy-vm-host.yaml", VMHOST, "vm-pinned", 4, "2-5", "", "0", NULL },
	{ "policy-vm-host.yaml", VMHOST, "vm-realtime", 2, "2,4", "3,5", "0", NULL },
	{ "policy-vm-host.yaml", VMHOST, "vm-shared", 4, "2-15,18-31", "", "0-1", NULL },
	{ "policy-vm-host.yaml", VMHOST, "vm-pinned", 3, NULL, NULL, NULL, "not a multiple of 2 threads per core" },
};

START_TEST(test_policy_examples)
{
	struct cc_err err = CC_ERR_INIT;
	char file[PATH_MAX];
	_cleanup_policy_ struct cc_policy *p = NULL;
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	struct cc_request req = { .cpus = cases[_i].cpus };
	struct cc_decision d;
	int r;

	snprintf(file, sizeof(file), EX "%s", cases[_i].policy);
	p = load(file);
	t = topo(cases[_i].topo, p);
	if (!t)
		return;
	snprintf(req.class_name, sizeof(req.class_name), "%s", cases[_i].class_name);
	r = cc_allocate(t, p, taken, &req, &d, &err);
	if (!cases[_i].cpus_want) {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(err.msg, cases[_i].why) != NULL, "got \"%s\"", err.msg);
		return;
	}
	ck_assert_msg(r == 0, "%s %s %d: %s", cases[_i].policy, cases[_i].class_name, cases[_i].cpus, err.msg);
	{
		_cleanup_free_ char *c = cc_cpulist_format(d.cpus);
		_cleanup_free_ char *k = cc_cpulist_format(d.parked);
		_cleanup_free_ char *m = cc_cpulist_format(d.mems);

		ck_assert_str_eq(c, cases[_i].cpus_want);
		ck_assert_str_eq(k, cases[_i].parked_want);
		ck_assert_str_eq(m, cases[_i].mems_want);
	}
	cc_decision_fini(&d);
}
END_TEST

/* Every class of every example is reachable on its host: a request of one
 * core succeeds. */
START_TEST(test_every_class_carves)
{
	static const struct {
		const char *policy, *topo;
	} hosts[] = {
		{ "policy-hybrid-desktop.yaml", "F03" },
		{ "policy-2socket-smt.yaml", "F10" },
		{ "policy-vm-host.yaml", VMHOST },
		{ "policy-default.yaml", "F03" },
	};

	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
		char file[PATH_MAX];
		_cleanup_policy_ struct cc_policy *p = NULL;
		_cleanup_topo_ struct cc_topo *t = NULL;
		_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();

		snprintf(file, sizeof(file), EX "%s", hosts[h].policy);
		p = load(file);
		t = topo(hosts[h].topo, p);
		if (!t)
			continue;
		for (int i = 0; i < p->nclasses; i++) {
			struct cc_err err = CC_ERR_INIT;
			struct cc_request req = { .cpus = p->classes[i].smt == CC_SMT_FULL ? 2 : 1 };
			struct cc_decision d;

			snprintf(req.class_name, sizeof(req.class_name), "%s", p->classes[i].name);
			ck_assert_msg(cc_allocate(t, p, taken, &req, &d, &err) == 0, "%s: %s: %s", hosts[h].policy,
				      p->classes[i].name, err.msg);
			if (d.exclusive)
				ck_assert_int_eq(d.numa_nodes, 1);
			cc_decision_fini(&d);
		}
	}
}
END_TEST

/* vms.yaml: it loads as the VM module reads it, names classes of the VM
 * host policy, and the VMs fit on that host together, each asking for its
 * vCPUs with its `threads` as the VM planner does (vm_plan.c). */
START_TEST(test_vms)
{
	static const struct {
		const char *name;
		int nvcpus; /* what each domain is defined with in this example */
	} vcpus[] = { { "db1", 8 }, { "nfv-edge", 2 }, { "ci-runner", 4 } };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = load(EX "policy-vm-host.yaml");
	_cleanup_topo_ struct cc_topo *t = topo(VMHOST, p);
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_free_ char *text = NULL, *s = NULL;
	struct cc_vmconfig cfg = { 0 };
	size_t len = 0;
	FILE *f = fopen(EX "vms.yaml", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_gt(getdelim(&text, &len, '\0', f), 0);
	fclose(f);
	ck_assert_msg(cc_vmconfig_parse(text, strlen(text), "vms.yaml", &cfg, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_policy_check_vms(p, &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.n, 3);
	for (size_t i = 0; i < sizeof(vcpus) / sizeof(vcpus[0]); i++) {
		const struct cc_vm_spec *vm = cc_vmconfig_find(&cfg, vcpus[i].name);
		struct cc_request req = { .cpus = vcpus[i].nvcpus, .has_smt = true, .has_memory = true };
		struct cc_decision d;

		ck_assert_ptr_nonnull(vm);
		snprintf(req.class_name, sizeof(req.class_name), "%s", vm->class_name);
		req.smt = vm->threads == 2 ? CC_SMT_FULL : CC_SMT_ISOLATE;
		req.memory = vm->memory;
		ck_assert_msg(cc_allocate(t, p, taken, &req, &d, &err) == 0, "%s: %s", vm->name, err.msg);
		if (d.exclusive) {
			hwloc_bitmap_or(taken, taken, d.cpus);
			hwloc_bitmap_or(taken, taken, d.parked);
		}
		cc_decision_fini(&d);
	}
	/* db1 (8 vCPUs on 4 whole cores) and nfv-edge (2 cores, siblings
	 * parked), packed on socket 0; ci-runner carves nothing. */
	s = cc_cpulist_format(taken);
	ck_assert_str_eq(s, "2-13");
	cc_vmconfig_fini(&cfg);
}
END_TEST

START_TEST(test_placement_bench)
{
	_cleanup_free_ char *out = NULL, *siblings = NULL;
	char *line;
	int n = 0;

	ck_assert_msg(cc_test_sh(&out, "make -s -C " EX "placement-bench") == 0, "%s", out);
	free(out);
	ck_assert_msg(cc_test_sh(&out, EX "placement-bench/placement-bench --runs 3 --iters 200000 --mem-mib 3") == 0, "%s", out);
	/* Header, column titles, solo, three placements, footnote. */
	ck_assert_msg(!strncmp(out, "placement-bench: ", 17), "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "median of 3 runs"));
	for (line = out; (line = strchr(line, '\n')); line++)
		n++;
	ck_assert_int_eq(n, 7);
	ck_assert_ptr_nonnull(strstr(out, "\nsolo "));
	/* A placement is measured exactly when this machine offers it. */
	ck_assert_int_eq(cc_test_sh(&siblings, "for c in /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list; do "
				       "case $(cat $c) in *[,-]*) echo smt; exit;; esac; done; echo nosmt"), 0);
	if (!strcmp(siblings, "nosmt\n"))
		ck_assert_ptr_nonnull(strstr(out, "\nsiblings      skipped: no SMT sibling"));
	else
		ck_assert_ptr_null(strstr(out, "\nsiblings      skipped"));
	ck_assert_ptr_nonnull(strstr(out, "\nsame-socket "));
	ck_assert_ptr_nonnull(strstr(out, "\ncross-socket "));
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, EX "placement-bench/placement-bench --runs 0"), 2);
	ck_assert_str_eq(out, "placement-bench: --runs: expected 1 to 99, got \"0\"\n");
	free(out);
	ck_assert_int_eq(cc_test_sh(&out, EX "placement-bench/placement-bench --anchor 8191"), 2);
	ck_assert_str_eq(out, "placement-bench: --anchor: CPU 8191 is not one this process may use\n");
}
END_TEST

START_TEST(test_podman_script)
{
	_cleanup_free_ char *out = NULL;

	/* Its real run is the e2e podman scenario; here only that it parses. */
	ck_assert_msg(cc_test_sh(&out, "sh -n " EX "podman-run.sh") == 0, "%s", out);
}
END_TEST

static Suite *examples_suite(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = tcase_create("policies");

	tcase_add_loop_test(tc, test_policy_examples, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_every_class_carves);
	tcase_add_test(tc, test_vms);
	suite_add_tcase(s, tc);
	tc = tcase_create("programs");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_placement_bench);
	tcase_add_test(tc, test_podman_script);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(examples_suite)
