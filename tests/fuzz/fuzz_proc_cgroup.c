/* /proc/<pid>/cgroup of the container's init: the path it yields is
 * joined to the cgroup mount, so it must be a safe absolute path. */
#include <limits.h>

#include "fuzz.h"
#include "oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cc_fuzz_str(data, size);
	char out[PATH_MAX];
	struct cc_err err = CC_ERR_INIT;
	int r;

	if (!s)
		abort();
	r = cc_proc_cgroup_parse(s, out, sizeof(out), &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0 && !cc_cgroup_path_safe(out))
		abort();
	free(s);
	return 0;
}
