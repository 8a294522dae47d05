/* corecarve audit: VM findings.  The VM module reads the VMs (vms.yaml,
 * their QEMU threads) and judges them (cc_vm_findings); the audit reports
 * them with the other findings, under stable codes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "vm.h"

static enum cc_audit_code code_of(enum cc_vm_finding_kind k)
{
	switch (k) {
	case CC_VM_MIXED_CLASSES:
		return CC_AUDIT_VM_MIXED_CLASSES;
	case CC_VM_SHARED_CPU:
		return CC_AUDIT_VM_SHARED_CPU;
	case CC_VM_DRIFT:
		return CC_AUDIT_VM_DRIFT;
	case CC_VM_GONE:
		break;
	}
	return CC_AUDIT_VM_GONE;
}

int cc_audit_add_vm(struct cc_audit_report *r, const struct cc_vm_finding *f, int n, struct cc_err *err)
{
	for (int i = 0; i < n; i++) {
		char carve[CC_VM_NAME_MAX + 4];
		struct cc_finding *x;

		snprintf(carve, sizeof(carve), "vm:%s", f[i].vm);
		x = cc_audit_add(r, code_of(f[i].kind), carve, err);
		if (!x)
			return -1;
		x->repair = CC_REPAIR_VM_RECONCILE;
		cc_audit_text(x->object, sizeof(x->object), "vm %s", f[i].vm);
		cc_audit_text(x->expected, sizeof(x->expected), "%s",
			      f[i].kind == CC_VM_GONE ? "a running VM for the carve"
						      : "every vCPU alone on its recorded CPU, one core class");
		cc_audit_text(x->actual, sizeof(x->actual), "%s", f[i].msg);
		cc_audit_text(x->fix, sizeof(x->fix), "%s",
			      f[i].kind == CC_VM_GONE ? "corecarve vm reconcile releases the carve"
						      : "corecarve vm reconcile re-pins the vCPUs");
	}
	return 0;
}
