/* corecarve: the CLI entry point.  Dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef CC_VERSION
#define CC_VERSION "0.1.0"
#endif

struct cc_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct cc_command commands[] = {
	{ "topology", cc_cmd_topology, "show packages, NUMA nodes, caches, cores and core classes" },
	{ "hook", cc_cmd_hook, "OCI hook: createRuntime|prestart|poststop (state JSON on stdin)" },
	{ "init-parent", cc_cmd_init_parent, "prepare a parent cgroup as a partition root (kernels < 6.7)" },
	{ "plan", cc_cmd_plan, "show what would be carved for a class and CPU count, and why (changes nothing)" },
	{ "status", cc_cmd_status, "show the carves, which carve owns which CPU, and what each class can still carve" },
	{ "audit", cc_cmd_audit, "compare the ledger with the kernel: drifted cpusets, broken partitions, leaks (--fix)" },
	{ "exec", cc_cmd_exec, "run a command on CPUs of a placement class (taskset + numactl, or --carve)" },
	{ "irq", cc_cmd_irq, "IRQs on carved CPUs: status (who fires where), reconcile (steer new ones away)" },
	{ "vm", cc_cmd_vm, "pin VMs' vCPUs on whole cores of one class: reconcile, status, xml NAME" },
	{ "doctor", cc_cmd_doctor, "is this node ready? cgroups, partitions, capacity, governors, THP, irqbalance, hooks (exit 0/1/2)" },
	{ "capture", cc_cmd_capture, "copy what corecarve reads of this node into a --root tree, for bug reports" },
	{ "device-plugin", cc_cmd_device_plugin, "publish each exclusive class's whole cores to the kubelet (device plugin API) and grant them" },
	{ "policy", cc_cmd_policy, "what the policy means to the cluster: quotas (ResourceQuotas for the classes' namespaces)" },
	{ "calibrate", cc_cmd_calibrate, "measure this node's placement table (SMT, L2, L3, NUMA, package, class pairs) as its baseline" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve <command> [options]\n"
		     "       corecarve <command> --help\n\n"
		     "Carve exclusive, class-aware cpuset partitions for containers and VMs.\n\n"
		     "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nexit status: 0 success, 1 refused or findings, 2 error\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CC_EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CC_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("corecarve %s\n", CC_VERSION);
		return CC_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "corecarve: unknown command \"%s\" (see corecarve --help)\n", argv[1]);
	return CC_EXIT_ERROR;
}
