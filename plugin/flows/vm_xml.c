/* corecarve: `vm xml` — the pinning as libvirt domain XML, for operators
 * who want libvirt to own it (vm.h). */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

int cc_vm_xml(FILE *out, const struct cc_vm_entry *e, struct cc_err *err)
{
	_cleanup_free_ char *cpus = cc_cpulist_format(e->carve.cpus);
	_cleanup_free_ char *mems = cc_cpulist_format(e->carve.mems);
	_cleanup_free_ char *emu = cc_cpulist_format(e->emulator);
	struct cc_vm_rec rec;

	if (e->state != CC_VM_NEW && e->state != CC_VM_KEEP)
		return cc_err_set(err, EINVAL, "VM %s: no carve to describe (%s)", e->name,
				  e->state == CC_VM_REFUSED ? e->reason : e->why[0] ? e->why : "not carved");
	if (!cpus || !mems || !emu)
		return cc_err_sys(err, ENOMEM, "xml");
	if (cc_vm_rec_parse(&e->carve, &rec, err) < 0)
		return -1;
	fprintf(out, "<!-- corecarve: VM %s, class %s on %s CPUs %s%s -->\n", e->name, e->carve.class_name,
		e->carve.core_class, cpus,
		e->state == CC_VM_KEEP ? " (reserved in the ledger)"
				       : " (planned, not reserved: corecarve vm reconcile reserves it)");
	fprintf(out, "<vcpu placement='static'>%d</vcpu>\n", rec.nvcpus);
	fprintf(out, "<cputune>\n");
	for (int i = 0; i < rec.nvcpus; i++)
		fprintf(out, "  <vcpupin vcpu='%d' cpuset='%d'/>\n", rec.vcpus[i].vcpu, rec.vcpus[i].cpu);
	if (*emu)
		fprintf(out, "  <emulatorpin cpuset='%s'/>\n", emu);
	fprintf(out, "</cputune>\n");
	if (*mems) {
		/* local: the carve's nodes, strictly; spread: interleaved over
		 * every node of the class, as `memory: spread` means. */
		fprintf(out, "<numatune>\n  <memory mode='%s' nodeset='%s'/>\n</numatune>\n",
			e->spec && e->spec->memory == CC_MEM_SPREAD ? "interleave" : "strict", mems);
	}
	if (rec.threads == 2)
		fprintf(out, "<cpu>\n  <topology sockets='1' dies='1' cores='%d' threads='2'/>\n</cpu>\n",
			rec.nvcpus / 2);
	cc_vm_rec_fini(&rec);
	return ferror(out) ? cc_err_sys(err, EIO, "xml") : 0;
}
