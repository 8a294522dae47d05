/* The corecarve.io/grant annotation: a container's annotation, which a
 * pod's author may be able to write, read by the hook as root.  Parse it
 * as the hook does; a success must be the id the ledger would write
 * (class, then the cpu-list in its own spelling) and a 32-digit token. */
#include "fuzz.h"
#include "cpulist.h"
#include "grant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_grant_ref g;
	int r = cc_grant_ref_parse((const char *)data, size, &g, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		char *list = cc_cpulist_format(g.cpus);
		char id[CC_GRANT_ID_MAX];

		if (!list)
			abort();
		snprintf(id, sizeof(id), "grant:%s:%s", g.class_name, list);
		if (strcmp(id, g.id) || strlen(g.token) != CC_GRANT_TOKEN_LEN || hwloc_bitmap_iszero(g.cpus))
			abort();
		free(list);
		cc_grant_ref_fini(&g);
	}
	return 0;
}
