/* /proc/interrupts: both readers of it (the per-CPU load the pictures
 * show, and the per-IRQ counts of the IRQ module's status). */
#include "fuzz.h"
#include "interrupts.h"
#include "irq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cc_fuzz_str(data, size);
	struct cc_interrupts in = { 0 };
	struct cc_irq_counts counts;
	struct cc_err err = CC_ERR_INIT;
	int r;

	if (!s)
		abort();
	r = cc_interrupts_parse(s, &in, &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		for (int c = 0; c < in.ncpus; c++)
			if (in.count[c] > in.max)
				abort();
		cc_interrupts_fini(&in);
	}
	cc_err_clear(&err);
	r = cc_irq_counts_parse(s, &counts, &err);
	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r == 0) {
		for (int k = 0; k < counts.ncols; k++)
			if (counts.cpus[k] < 0)
				abort();
		cc_irq_counts_fini(&counts);
	}
	free(s);
	return 0;
}
