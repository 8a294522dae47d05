/* corecarve init-parent: prepare a parent cgroup as a partition root so
 * containers below it become local partitions on kernels without
 * cpuset.cpus.exclusive (before 6.7).  Podman: --cgroup-parent=<it>. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "doctor.h"
#include "systemctl.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve init-parent CGROUP [--cpus LIST] [--mems LIST] [--policy FILE] [--if-needed]\n"
		     "                             [--dry-run] [--force] [--root DIR]\n\n"
		     "Make CGROUP (e.g. /corecarve.slice) a cpuset partition root holding LIST\n"
		     "(default: every online CPU that is not reserved by the policy), so containers\n"
		     "started below it can be carved as local partitions on kernels that lack\n"
		     "cpuset.cpus.exclusive.  Idempotent.  On a systemd host a slice (NAME.slice)\n"
		     "first gets AllowedCPUs=LIST and AllowedMemoryNodes= for this boot\n"
		     "(systemctl set-property --runtime): without them systemd empties or drops\n"
		     "the slice's cpuset when it starts a scope below it.\n\n"
		     "  --if-needed  first enable +cpuset +cpu below the root cgroup, then make CGROUP only\n"
		     "               when the kernel has no remote partitions (cpuset.cpus.exclusive): what\n"
		     "               corecarve-prepare.service runs at boot\n"
		     "  --dry-run    print each write it would make; write nothing\n"
		     "  --force      make it on a kubelet's node too\n"
		     "  --root DIR   read the node from a tree (corecarve capture); cgroups are written on\n"
		     "               this host only, so with --root only --dry-run goes through\n\n"
		     "Refused on a kubelet's node (its pod cgroups, or /var/lib/kubelet): the\n"
		     "kubelet's pods live outside CGROUP and would run on the reserved CPUs only,\n"
		     "and carves below the pods' cgroups cannot be local partitions anyway.\n"
		     "--force makes it all the same.\n");
}

/* Remote partitions show as cpuset.cpus.exclusive on every cgroup with
 * cpuset below the root: a first-level child that has cpuset files tells.
 * 1 yes, 0 no, -1 no child to ask. */
static int remote_partitions(const struct cc_cg *cg)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(cg->root, "/sys/fs/cgroup", &err);
	struct dirent *de;
	int seen = -1;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "/%s", de->d_name);
		if (!cc_cg_exists(cg, path, "cpuset.cpus"))
			continue;
		if (cc_cg_exists(cg, path, "cpuset.cpus.exclusive"))
			return 1;
		seen = 0;
	}
	return seen;
}

/* systemd realizes a slice's cpuset from its own AllowedCPUs= and
 * AllowedMemoryNodes=.  With none set, starting a scope below the slice
 * writes "" to its cpuset.cpus (Linux 6.1 keeps the partition root with no
 * CPUs, and the scope's attach fails with ENOSPC: Debian 12, systemd 252),
 * and once no unit needs cpuset systemd turns it off above the slice,
 * which removes the partition (Debian 13, systemd 257).  So the slice asks
 * systemd for exactly what init-parent writes, for this boot (--runtime,
 * as the partition itself lives until the reboot). */
static int slice_properties(const struct cc_root *root, const char *cgroup, const char *cpus,
			    const char *mems_arg_list, bool dry, struct cc_err *err)
{
	const char *unit = cc_slice_unit(cgroup);
	_cleanup_free_ char *mems = NULL;
	char acpus[512], amems[512];

	if (!unit || !cc_systemd_booted(root))
		return 0;
	if (mems_arg_list && *mems_arg_list) {
		mems = strdup(mems_arg_list);
	} else {
		/* Every node the root offers, as the partition's cpuset.mems
		 * inherits then. */
		mems = cc_root_read(root, "/sys/fs/cgroup/cpuset.mems.effective", 4096, err);
		if (!mems)
			return -1;
		mems[strcspn(mems, "\n")] = '\0';
	}
	if (!mems)
		return cc_err_sys(err, ENOMEM, "init-parent");
	snprintf(acpus, sizeof(acpus), "AllowedCPUs=%s", cpus);
	snprintf(amems, sizeof(amems), "AllowedMemoryNodes=%s", mems);
	{
		static const char *const opts[] = { "set-property", "--runtime", NULL };
		const char *const units[] = { unit, acpus, amems, NULL };

		if (dry) {
			printf("run systemctl set-property --runtime -- %s %s %s\n", unit, acpus, amems);
			return 0;
		}
		if (cc_systemctl(opts, units, err) < 0)
			return cc_err_prefix(err,
					     "init-parent %s: systemd's manager would empty or drop the slice's cpuset when "
					     "it starts a scope below it, so %s needs AllowedCPUs=",
					     cgroup, unit);
	}
	return 0;
}

/* What the command line asks for. */
struct args {
	struct cc_cli_common common;
	const char *cgroup, *cpus, *mems;
	bool dry, if_needed, force;
};

enum { OPT_DRY_RUN = 1, OPT_IF_NEEDED, OPT_CPUS, OPT_FORCE, OPT_MEMS };

const struct cc_opt cc_opts_init_parent[] = {
	{ "--cpus", NULL, "LIST", OPT_CPUS, 0, NULL },
	{ "--mems", NULL, "LIST", OPT_MEMS, 0, NULL },
	{ "--if-needed", NULL, NULL, OPT_IF_NEEDED, 0, NULL },
	{ "--dry-run", NULL, NULL, OPT_DRY_RUN, 0, NULL },
	{ "--force", NULL, NULL, OPT_FORCE, 0, NULL },
	CC_CLI_OPTS_SOURCE(CC_CLI_REFUSED, NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* argv into `a`.  CGROUP is the first word that starts with '/'.  1:
 * --help was printed; -1 with err set. */
static int parse_args(int argc, char **argv, struct args *a, struct cc_err *err)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_init_parent, NULL, argc, argv, &i, &v, err);

		switch (id) {
		case -1:
			return -1;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case OPT_DRY_RUN:
			a->dry = true;
			break;
		case OPT_IF_NEEDED:
			a->if_needed = true;
			break;
		case OPT_FORCE:
			a->force = true;
			break;
		case OPT_CPUS:
			a->cpus = v;
			break;
		case OPT_MEMS:
			a->mems = v;
			break;
		case CC_OPT_WORD:
			if (!a->cgroup && v[0] == '/') {
				a->cgroup = v;
				break;
			}
			return cc_err_set(err, EINVAL,
					  "init-parent: unexpected argument \"%s\" (see corecarve init-parent --help)", v);
		default:
			cc_cli_common_set(&a->common, id, v);
		}
	}
	return 0;
}

/* --if-needed: 1 when the kernel lacks remote partitions and the parent
 * is to be made, 0 when it has them (said on stdout), -1 with err set. */
static int parent_needed(struct cc_cg *cg, const char *cgroup, bool dry, struct cc_err *err)
{
	int remote;

	/* What a container runtime or the first carve would do anyway:
	 * without cpuset below the root no child shows its files. */
	if (dry)
		printf("write /sys/fs/cgroup/cgroup.subtree_control: +cpuset +cpu\n");
	else if (cc_cg_write(cg, "/", "cgroup.subtree_control", "+cpuset +cpu", NULL, err) < 0)
		return -1;
	remote = remote_partitions(cg);
	if (remote < 0 && !dry) {
		/* No child with cpuset yet: ask one made for the purpose. */
		if (cc_cg_mkdir(cg, "/corecarve.probe", err) < 0)
			return -1;
		remote = cc_cg_exists(cg, "/corecarve.probe", "cpuset.cpus.exclusive");
		if (cc_cg_rmdir(cg, "/corecarve.probe", err) < 0)
			return -1;
	}
	if (remote > 0) {
		printf("%s: not needed: the kernel has remote partitions (cpuset.cpus.exclusive)\n", cgroup);
		return 0;
	}
	if (remote < 0)
		printf("(no cgroup below the root has cpuset yet: a real run asks /corecarve.probe)\n");
	return 1;
}

/* --dry-run: the writes of cc_cg_init_parent (cgroup/partition.c), in its
 * order. */
static void print_dry_writes(const char *cgroup, const char *list, const char *mlist)
{
	printf("mkdir /sys/fs/cgroup%s (unless it exists)\n"
	       "write +cpuset (and +cpu) to cgroup.subtree_control of its ancestors\n",
	       cgroup);
	if (mlist && *mlist)
		printf("write /sys/fs/cgroup%s/cpuset.mems: %s\n", cgroup, mlist);
	printf("write /sys/fs/cgroup%s/cpuset.cpus: %s\n"
	       "write /sys/fs/cgroup%s/cpuset.cpus.exclusive: %s (where the kernel has the file)\n"
	       "write /sys/fs/cgroup%s/cpuset.cpus.partition: root (then read back: a valid root)\n"
	       "write /sys/fs/cgroup%s/cgroup.subtree_control: +cpuset\n"
	       "init-parent --dry-run: nothing was changed\n",
	       cgroup, list ? list : "?", cgroup, list ? list : "?", cgroup, cgroup);
}

int cc_cmd_init_parent(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct args a = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	_cleanup_free_ char *list = NULL, *mlist = NULL;
	const char *cgroup, *kubelet;
	_cleanup_cg_ struct cc_cg cg = CC_CG_INIT;
	int r;

	r = parse_args(argc, argv, &a, &err);
	if (r > 0)
		return CC_EXIT_OK;
	if (r < 0)
		return cc_cli_fail(&err);
	cgroup = a.cgroup;
	if (!cgroup) {
		usage(stderr);
		return CC_EXIT_ERROR;
	}
	if (!cc_cgroup_path_safe(cgroup) || !strcmp(cgroup, "/")) {
		cc_err_set(&err, EINVAL, "init-parent: CGROUP: \"%s\" is not an absolute cgroup path below the root", cgroup);
		return cc_cli_fail(&err);
	}
	if (a.common.xml || a.common.synthetic) {
		cc_err_set(&err, EINVAL, "init-parent acts on this host: --hwloc-xml/--synthetic make no sense here");
		return cc_cli_fail(&err);
	}
	if (cc_cli_load(&a.common, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	kubelet = cc_kubelet_evidence(root);
	if (kubelet && !a.force && !a.if_needed) {
		fprintf(stderr,
			"corecarve: init-parent %s: refused on a kubelet node (%s): as a partition root it would take its "
			"CPUs from the kubelet's pods, which live outside it and would run on the reserved CPUs only; "
			"before Linux 6.7 carves under the pods' cgroups are cpuset-only (docs/guide.md, corecarve doctor); "
			"--force makes it anyway\n",
			cgroup, kubelet);
		return CC_EXIT_REFUSED;
	}
	if (a.cpus) {
		if (cc_cpulist_parse(a.cpus, cpus, "--cpus", &err) < 0)
			return cc_cli_fail(&err);
	} else {
		_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(policy, topo);

		hwloc_bitmap_and(cpus, topo->online, topo->allowed);
		hwloc_bitmap_andnot(cpus, cpus, reserved);
	}
	if (a.mems && cc_cpulist_parse(a.mems, mems, "--mems", &err) < 0)
		return cc_cli_fail(&err);
	list = cc_cpulist_format(cpus);
	mlist = cc_cpulist_format(mems);
	if (cc_cg_open(&cg, root, &err) < 0)
		return cc_cli_fail(&err);
	if (a.if_needed) {
		r = parent_needed(&cg, cgroup, a.dry, &err);
		if (r < 0)
			return cc_cli_fail(&err);
		if (r == 0)
			return CC_EXIT_OK;
	}
	/* After --if-needed: where the kernel has remote partitions nothing is
	 * made, kubelet or not. */
	if (kubelet && !a.force && a.if_needed) {
		/* What corecarve-prepare.service runs at boot: a skip, not a
		 * failure, on a Kubernetes node before 6.7. */
		printf("%s: not made: a kubelet node (%s) on a kernel without cpuset.cpus.exclusive; a partition root "
		       "would squeeze the pods onto the reserved CPUs, and carves under the pods are cpuset-only "
		       "(docs/guide.md)\n",
		       cgroup, kubelet);
		return CC_EXIT_OK;
	}
	if (a.dry) {
		if (slice_properties(root, cgroup, list ? list : "", mlist, true, &err) < 0)
			return cc_cli_fail(&err);
		print_dry_writes(cgroup, list, mlist);
		return CC_EXIT_OK;
	}
	if (slice_properties(root, cgroup, list ? list : "", mlist, false, &err) < 0 ||
	    cc_cg_init_parent(&cg, cgroup, cpus, mems, &err) < 0)
		return cc_cli_fail(&err);
	printf("%s: partition root with cpus %s\n", cgroup, list ? list : "?");
	return CC_EXIT_OK;
}
