/* corecarve: the commands, their options and subcommands (commands.h):
 * main.c dispatches through this table, test_options checks each
 * command's --help and the bash completion against it. */
#include "commands.h"

const struct cc_cli_command cc_cli_commands[] = {
	{ "topology", cc_cmd_topology, "show packages, NUMA nodes, caches, cores and core classes", cc_opts_topology, NULL },
	{ "hook", cc_cmd_hook, "OCI hook: createRuntime|prestart|poststop (state JSON on stdin)", cc_opts_hook, NULL },
	{ "init-parent", cc_cmd_init_parent, "prepare a parent cgroup as a partition root (kernels < 6.7)", cc_opts_init_parent, NULL },
	{ "plan", cc_cmd_plan, "show what would be carved for a class and CPU count, and why (changes nothing)", cc_opts_plan, NULL },
	{ "status", cc_cmd_status, "show the carves, which carve owns which CPU, and what each class can still carve", cc_opts_status, NULL },
	{ "audit", cc_cmd_audit, "compare the ledger with the kernel: drifted cpusets, broken partitions, leaks (--fix)", cc_opts_audit, NULL },
	{ "exec", cc_cmd_exec, "run a command on CPUs of a placement class (taskset + numactl, or --carve)", cc_opts_exec, NULL },
	{ "irq", cc_cmd_irq, "IRQs on carved CPUs: status (who fires where), reconcile (steer new ones away)", cc_opts_irq, "status reconcile notify" },
	{ "vm", cc_cmd_vm, "pin VMs' vCPUs on whole cores of one class: reconcile, status, xml NAME", cc_opts_vm, "reconcile status xml" },
	{ "doctor", cc_cmd_doctor, "is this node ready? cgroups, partitions, capacity, governors, THP, irqbalance, hooks (exit 0/1/2)", cc_opts_doctor, NULL },
	{ "capture", cc_cmd_capture, "copy what corecarve reads of this node into a --root tree, for bug reports", cc_opts_capture, NULL },
	{ "device-plugin", cc_cmd_device_plugin, "publish each exclusive class's whole cores to the kubelet (device plugin API) and grant them", cc_opts_device_plugin, NULL },
	{ "policy", cc_cmd_policy, "what the policy means to the cluster: quotas (ResourceQuotas for the classes' namespaces)", cc_opts_policy, "quotas" },
	{ "calibrate", cc_cmd_calibrate, "measure this node's placement table (SMT, L2, L3, NUMA, package, class pairs) as its baseline", cc_opts_calibrate, NULL },
};
const int cc_cli_ncommands = sizeof(cc_cli_commands) / sizeof(cc_cli_commands[0]);
