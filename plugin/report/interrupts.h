/* corecarve: device interrupt load per CPU, for the pictures.
 *
 * The pictures show how many device interrupts each CPU has served since
 * boot, so a person sees at a glance whether IRQs land on carved CPUs (the
 * classic "everything on CPU0" or "the NIC on my latency core").  The rows
 * come from the IRQ module's reader of /proc/interrupts (irq.h,
 * cc_irq_counts); this only sums them per CPU.  Architecture lines (LOC:
 * timer ticks, NMI:, IPIs) are left out: they fire on every busy CPU and
 * say nothing about where devices interrupt. */
#ifndef CC_INTERRUPTS_H
#define CC_INTERRUPTS_H

#include "error.h"
#include "root.h"

struct cc_irq_counts;

struct cc_interrupts {
	int ncpus;                 /* one more than the highest CPU column, 0 if none */
	unsigned long long *count; /* per CPU number; CPUs without a column read 0 */
	unsigned long long max;    /* the largest count */
	int nlines;                /* IRQs summed */
};

/* Sum the rows of `c` per CPU. */
int cc_interrupts_sum(const struct cc_irq_counts *c, struct cc_interrupts *out, struct cc_err *err);

/* Parse the text of /proc/interrupts and sum it. */
int cc_interrupts_parse(const char *text, struct cc_interrupts *out, struct cc_err *err);

/* Read /proc/interrupts under `root` and sum it. */
int cc_interrupts_read(const struct cc_root *root, struct cc_interrupts *out, struct cc_err *err);

void cc_interrupts_fini(struct cc_interrupts *in);

#endif
