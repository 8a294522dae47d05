/* corecarve init-parent: prepare a parent cgroup as a partition root so
 * containers below it become local partitions on kernels without
 * cpuset.cpus.exclusive (before 6.7).  Podman: --cgroup-parent=<it>. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "doctor.h"
#include "oci.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve init-parent CGROUP [--cpus LIST] [--mems LIST] [--policy FILE] [--force]\n\n"
		     "Make CGROUP (e.g. /corecarve.slice) a cpuset partition root holding LIST\n"
		     "(default: every online CPU that is not reserved by the policy), so containers\n"
		     "started below it can be carved as local partitions on kernels that lack\n"
		     "cpuset.cpus.exclusive.  Idempotent.\n\n"
		     "Refused on a kubelet's node (its pod cgroups, or /var/lib/kubelet): the\n"
		     "kubelet's pods live outside CGROUP and would run on the reserved CPUs only,\n"
		     "and carves below the pods' cgroups cannot be local partitions anyway.\n"
		     "--force makes it all the same.\n");
}

int cc_cmd_init_parent(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	_cleanup_free_ char *list = NULL;
	const char *cgroup = NULL, *cpus_arg = NULL, *mems_arg = NULL, *kubelet;
	bool force = false;
	struct cc_cg cg;

	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CC_EXIT_OK;
		}
		if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			cpus_arg = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--force")) {
			force = true;
			continue;
		}
		if (!strcmp(argv[i], "--mems") && i + 1 < argc) {
			mems_arg = argv[++i];
			continue;
		}
		r = cc_cli_common_opt(&common, argc, argv, &i, &err);
		if (r < 0)
			return cc_cli_fail(&err);
		if (r == 0 && !cgroup && argv[i][0] == '/') {
			cgroup = argv[i];
			continue;
		}
		if (r == 0) {
			cc_err_set(&err, EINVAL, "init-parent: unexpected argument \"%s\"", argv[i]);
			return cc_cli_fail(&err);
		}
	}
	if (!cgroup) {
		usage(stderr);
		return CC_EXIT_ERROR;
	}
	if (!cc_cgroup_path_safe(cgroup) || !strcmp(cgroup, "/")) {
		cc_err_set(&err, EINVAL, "init-parent: CGROUP: \"%s\" is not an absolute cgroup path below the root", cgroup);
		return cc_cli_fail(&err);
	}
	if (common.xml || common.synthetic) {
		cc_err_set(&err, EINVAL, "init-parent acts on this host: --hwloc-xml/--synthetic make no sense here");
		return cc_cli_fail(&err);
	}
	if (cc_cli_load(&common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	kubelet = cc_kubelet_evidence(root);
	if (kubelet && !force) {
		fprintf(stderr,
			"corecarve: init-parent %s: refused on a kubelet node (%s): as a partition root it would take its "
			"CPUs from the kubelet's pods, which live outside it and would run on the reserved CPUs only; "
			"before Linux 6.7 carves under the pods' cgroups are cpuset-only (docs/guide.md, corecarve doctor); "
			"--force makes it anyway\n",
			cgroup, kubelet);
		return CC_EXIT_REFUSED;
	}
	if (cpus_arg) {
		if (cc_cpulist_parse(cpus_arg, cpus, "--cpus", &err) < 0)
			return cc_cli_fail(&err);
	} else {
		_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(policy, topo);

		hwloc_bitmap_and(cpus, topo->online, topo->allowed);
		hwloc_bitmap_andnot(cpus, cpus, reserved);
	}
	if (mems_arg && cc_cpulist_parse(mems_arg, mems, "--mems", &err) < 0)
		return cc_cli_fail(&err);
	if (cc_cg_open(&cg, root, &err) < 0 || cc_cg_init_parent(&cg, cgroup, cpus, mems, &err) < 0)
		return cc_cli_fail(&err);
	list = cc_cpulist_format(cpus);
	printf("%s: partition root with cpus %s\n", cgroup, list ? list : "?");
	return CC_EXIT_OK;
}
