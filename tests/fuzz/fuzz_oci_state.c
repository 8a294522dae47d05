/* The OCI state the runtime writes on the hook's stdin. */
#include "fuzz.h"
#include "oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;
	int r = cc_oci_state_parse((const char *)data, size, &st, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		/* The id becomes a ledger key and a file-name part. */
		if (!st.id[0] || strchr(st.id, '/') || !st.annotations || st.pid < 0)
			abort();
		cc_oci_state_fini(&st);
	}
	return 0;
}
