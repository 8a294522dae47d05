#define _GNU_SOURCE
#include "interrupts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "irq.h"

int cc_interrupts_sum(const struct cc_irq_counts *c, struct cc_interrupts *out, struct cc_err *err)
{
	int maxcpu = -1;

	memset(out, 0, sizeof(*out));
	for (int k = 0; k < c->ncols; k++)
		if (c->cpus[k] > maxcpu)
			maxcpu = c->cpus[k];
	out->count = calloc((size_t)maxcpu + 2, sizeof(*out->count));
	if (!out->count)
		return cc_err_sys(err, ENOMEM, "/proc/interrupts");
	out->ncpus = maxcpu + 1;
	for (int r = 0; r < c->nrows; r++)
		for (int k = 0; k < c->ncols; k++)
			out->count[c->cpus[k]] += c->count[(size_t)r * (size_t)c->ncols + (size_t)k];
	for (int i = 0; i < out->ncpus; i++)
		if (out->count[i] > out->max)
			out->max = out->count[i];
	out->nlines = c->nrows;
	return 0;
}

int cc_interrupts_parse(const char *text, struct cc_interrupts *out, struct cc_err *err)
{
	struct cc_irq_counts c;
	int r;

	memset(out, 0, sizeof(*out));
	if (cc_irq_counts_parse(text, &c, err) < 0)
		return -1;
	r = cc_interrupts_sum(&c, out, err);
	cc_irq_counts_fini(&c);
	return r;
}

int cc_interrupts_read(const struct cc_root *root, struct cc_interrupts *out, struct cc_err *err)
{
	struct cc_irq_counts c;
	int r;

	memset(out, 0, sizeof(*out));
	if (cc_irq_counts_read(root, &c, err) < 0)
		return -1;
	r = cc_interrupts_sum(&c, out, err);
	cc_irq_counts_fini(&c);
	return r;
}

void cc_interrupts_fini(struct cc_interrupts *in)
{
	free(in->count);
	memset(in, 0, sizeof(*in));
}
