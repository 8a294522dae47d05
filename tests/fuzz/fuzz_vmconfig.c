/* /etc/corecarve/vms.yaml: which VMs to pin and how. */
#include "fuzz.h"
#include "vmconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_vmconfig cfg = { 0 };
	int r = cc_vmconfig_parse((const char *)data, size, "vms.yaml", &cfg, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		if (cfg.n < 0 || cfg.n > CC_VMS_MAX_VMS)
			abort();
		for (int i = 0; i < cfg.n; i++) {
			const struct cc_vm_spec *v = &cfg.vms[i];

			/* Names become ledger ids "vm:<name>"; each is found again. */
			if (!v->name[0] || cc_vmconfig_find(&cfg, v->name) != v || v->threads < 1 || v->threads > 2)
				abort();
		}
	}
	cc_vmconfig_fini(&cfg);
	return 0;
}
