/* The bundle's config.json (annotations, linux.cgroupsPath, cpu quota),
 * then the annotation lookup the hook does on what it found. */
#include "fuzz.h"
#include "oci.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_config cfg;
	int r = cc_oci_config_parse((const char *)data, size, &cfg, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		struct cc_err e2 = CC_ERR_INIT;
		struct cc_request req;
		const char *key = NULL;
		int found;

		if (!cfg.annotations)
			abort();
		found = cc_request_lookup(cfg.annotations, "ctr", &req, &key, &e2);
		CC_FUZZ_CHECK_ERR(found < 0, &e2);
		if (found == 1 && !key)
			abort();
		cc_oci_config_fini(&cfg);
	}
	return 0;
}
