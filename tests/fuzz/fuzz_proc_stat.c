/* /proc/<tid>/stat as the audit reads it (a captured tree's is anyone's):
 * the start time, field 22, after a name that may hold spaces and
 * parentheses; a failure has a message, a success none. */
#include "audit.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cc_fuzz_str(data, size);
	unsigned long long start = 0;
	struct cc_err err = CC_ERR_INIT;
	int r;

	if (!s)
		abort();
	r = cc_audit_parse_stat_start(s, &start, &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	free(s);
	return 0;
}
