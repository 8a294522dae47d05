/* The corecarve.io/placement annotation: user-controlled YAML read by the
 * hook as root.  Parse it as the hook does; a success must satisfy what
 * the allocator relies on. */
#include "fuzz.h"
#include "policy.h"
#include "cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request req;
	int r = cc_request_parse((const char *)data, size, &req, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0 && (req.cpus < 1 || req.cpus > CC_CPU_LIMIT || !req.class_name[0] ||
		       memchr(req.class_name, '\0', sizeof(req.class_name)) == NULL))
		abort();
	return 0;
}
