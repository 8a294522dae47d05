/* cpu-lists ("0-3,8") and hex cpumasks ("ff,00000001"): kernel files,
 * policy values and ledger fields.  Whatever parses must print back to a
 * list that parses to the same set, the very bytes hwloc's own printer
 * writes (files already written compare equal). */
#include <hwloc.h>

#include "cpulist.h"
#include "fuzz.h"

static void roundtrip(hwloc_const_bitmap_t set)
{
	struct cc_err err = CC_ERR_INIT;
	hwloc_bitmap_t again = hwloc_bitmap_alloc();
	char *s = cc_cpulist_format(set), *h = NULL;

	if (!again || !s)
		abort();
	if (!hwloc_bitmap_iszero(set) && (hwloc_bitmap_list_asprintf(&h, set) < 0 || strcmp(h, s)))
		abort();
	free(h);
	if (hwloc_bitmap_last(set) >= CC_CPU_LIMIT || hwloc_bitmap_weight(set) < 0)
		abort(); /* beyond the limit or infinite: must have been refused */
	if (cc_cpulist_parse(s, again, "roundtrip", &err) < 0 || !hwloc_bitmap_isequal(set, again))
		abort();
	free(s);
	hwloc_bitmap_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cc_fuzz_str(data, size);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	struct cc_err err = CC_ERR_INIT;
	int r;

	if (!s || !set)
		abort();
	r = cc_cpulist_parse(s, set, "cpus", &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0)
		roundtrip(set);
	cc_err_clear(&err);
	r = cc_cpumask_parse(s, set, "smp_affinity", &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0)
		roundtrip(set);
	hwloc_bitmap_free(set);
	free(s);
	return 0;
}
