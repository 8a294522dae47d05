/* corecarve: which VMs to pin, and how (/etc/corecarve/vms.yaml, or the
 * `vms:` section of the policy).
 *
 *   vms:
 *     web:                      # the VM's name: ledger id "vm:web"
 *       class: latency          # placement class of the policy (required)
 *       libvirt: web            # find it: libvirt's /run/libvirt/qemu/<domain>.pid,
 *       # pidfile: /run/web.pid #   a pid file, or
 *       # qemuName: web         #   the `-name` of a running QEMU (the default: the VM's name)
 *       threads: 1              # 1: one thread of each whole core; 2: SMT pairs, whole cores
 *                               #   (default: the class's smt, isolate 1, full 2)
 *       emulator: shared        # emulator/I/O threads: shared (uncarved CPUs) or reserved
 *       memory: local           # local: the carve's NUMA nodes; spread: every node of the class
 *
 * Operator input read by a privileged command, so it is parsed as
 * strictly as the policy (plugin/config/yaml_tree.h); errors read
 * "<file>:<line>:<col>: vms.<name>.<key>: <reason>". */
#ifndef CC_VMCONFIG_H
#define CC_VMCONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "placement.h"
#include "yaml_tree.h"

#define CC_VMS_PATH "/etc/corecarve/vms.yaml"
#define CC_VMS_MAX (1u << 20)
#define CC_VM_NAME_MAX 64 /* bytes with the NUL: names are 1 to 63 characters */
#define CC_VMS_MAX_VMS 1024

/* How the QEMU process of a VM is found (vm_find.c). */
enum cc_vm_find {
	CC_VM_FIND_NAME,    /* a QEMU whose -name (guest=) is `target` */
	CC_VM_FIND_LIBVIRT, /* /run/libvirt/qemu/<target>.pid */
	CC_VM_FIND_PIDFILE, /* the pid file `target` (an absolute path) */
};

/* Where QEMU's other threads (main loop, I/O, workers) run. */
enum cc_vm_emulator {
	CC_VM_EMU_SHARED,   /* every online CPU no carve owns */
	CC_VM_EMU_RESERVED, /* the policy's reserved (housekeeping) CPUs */
};

struct cc_vm_spec {
	char name[CC_VM_NAME_MAX];
	char class_name[64];
	char class_where[512]; /* "<file>:<line>:<col>: vms.<name>.class", for errors found later */
	enum cc_vm_find find;
	char target[PATH_MAX];
	int threads;           /* 1 or 2; 1 when not set */
	bool threads_set;      /* false: the class decides (cc_vm_threads) */
	enum cc_vm_emulator emulator;
	enum cc_memory memory; /* local or spread */
};

struct cc_vmconfig {
	char source[PATH_MAX]; /* file path, "" when nothing declares VMs */
	int n;
	struct cc_vm_spec *vms; /* in the order written */
};

/* Parse the `vms` mapping node of a document (vms.yaml or the policy). */
int cc_vmconfig_parse_node(const struct cc_ynode *vms, struct cc_vmconfig *out, struct cc_err *err);

/* Parse a vms.yaml text: a mapping whose only key is `vms`.  `name` names
 * the source in errors. */
int cc_vmconfig_parse(const char *text, size_t len, const char *name, struct cc_vmconfig *out,
		      struct cc_err *err);

/* Where the VMs come from: `path` (--config; must exist), else
 * CC_VMS_PATH when it exists, else the `vms:` section of the policy file
 * `policy_path` (NULL: /etc/corecarve/policy.yaml; absent: none), else no
 * VMs (out->n 0, source "").  VMs declared both in vms.yaml and in the
 * policy are refused: one of them would be ignored. */
int cc_vmconfig_load(const char *path, const char *policy_path, struct cc_vmconfig *out,
		     struct cc_err *err);

const struct cc_vm_spec *cc_vmconfig_find(const struct cc_vmconfig *cfg, const char *name);
void cc_vmconfig_fini(struct cc_vmconfig *cfg);

/* The VM's name in a ledger id "vm:<name>", or NULL when `id` is not one. */
const char *cc_vm_id_name(const char *id);

const char *cc_vm_find_name(enum cc_vm_find f);
const char *cc_vm_emulator_name(enum cc_vm_emulator e);

#endif
