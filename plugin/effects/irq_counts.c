/* Per-IRQ, per-CPU interrupt counts from /proc/interrupts, so `corecarve irq
 * status` can show whether interrupts still land on carved CPUs.  (The
 * interrupts module sums them per CPU for the pictures; this one keeps the
 * rows.) */
#define _GNU_SOURCE
#include "irq.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

#define WHAT "/proc/interrupts"
/* Grows with CPUs x IRQs; 8192 CPUs and thousands of IRQs stay below. */
#define COUNTS_MAX (256u << 20)

static const char *blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static int parse_header(const char *p, const char *end, struct cc_irq_counts *c, struct cc_err *err)
{
	int cap = 0;

	for (;;) {
		char *e;
		long v;

		p = blank(p, end);
		if (p >= end)
			break;
		if (strncmp(p, "CPU", 3) != 0)
			return cc_err_set(err, EINVAL, WHAT ":1: expected CPU<n> columns, got \"%.16s\"", p);
		errno = 0;
		v = strtol(p + 3, &e, 10);
		if (e == p + 3 || errno || v < 0 || v >= CC_CPU_LIMIT || (e < end && *e != ' ' && *e != '\t'))
			return cc_err_set(err, EINVAL, WHAT ":1: bad CPU column \"%.16s\"", p);
		if (c->ncols == cap) {
			int *g;

			cap = cap ? 2 * cap : 64;
			g = realloc(c->cpus, (size_t)cap * sizeof(*g));
			if (!g)
				return cc_err_sys(err, ENOMEM, WHAT);
			c->cpus = g;
		}
		c->cpus[c->ncols++] = (int)v;
		p = e;
	}
	if (!c->ncols)
		return cc_err_set(err, EINVAL, WHAT ":1: no CPU columns");
	return 0;
}

/* One "<irq>: <counts> <chip> <hwirq> <names>" row into row `r`. */
static int parse_row(const char *p, const char *end, int lineno, struct cc_irq_counts *c, int r,
		     struct cc_err *err)
{
	unsigned long long *row = &c->count[(size_t)r * (size_t)c->ncols];

	for (int k = 0; k < c->ncols; k++) {
		char *e;

		p = blank(p, end);
		if (p >= end || !isdigit((unsigned char)*p))
			break; /* fewer counts than columns: the rest are 0 */
		errno = 0;
		row[k] = strtoull(p, &e, 10);
		if (errno)
			return cc_err_set(err, ERANGE, WHAT ":%d: count out of range", lineno);
		if (e < end && *e != ' ' && *e != '\t') {
			row[k] = 0; /* "2-edge": the description, not a count */
			break;
		}
		p = e;
	}
	return 0;
}

int cc_irq_counts_parse(const char *text, struct cc_irq_counts *c, struct cc_err *err)
{
	const char *p = text, *nl = strchr(text, '\n');
	int lineno = 1, cap = 0;

	memset(c, 0, sizeof(*c));
	if (parse_header(p, nl ? nl : p + strlen(p), c, err) < 0)
		goto fail;
	while (nl) {
		const char *end, *q, *colon;
		char *e;
		long irq;

		p = nl + 1;
		lineno++;
		nl = strchr(p, '\n');
		end = nl ? nl : p + strlen(p);
		q = blank(p, end);
		if (q >= end)
			continue;
		colon = memchr(q, ':', (size_t)(end - q));
		if (!colon) {
			cc_err_set(err, EINVAL, WHAT ":%d: expected \"<irq>: <counts>\", got \"%.24s\"", lineno, q);
			goto fail;
		}
		if (!isdigit((unsigned char)*q))
			continue; /* NMI:, LOC:, ERR: ...: not IRQs of /proc/irq */
		errno = 0;
		irq = strtol(q, &e, 10);
		if (e != colon || errno || irq >= CC_IRQ_NUMBER_MAX) {
			cc_err_set(err, EINVAL, WHAT ":%d: bad IRQ number \"%.16s\"", lineno, q);
			goto fail;
		}
		if (c->nrows == cap) {
			int *gi;
			unsigned long long *gc;

			cap = cap ? 2 * cap : 64;
			gi = realloc(c->irqs, (size_t)cap * sizeof(*gi));
			if (gi)
				c->irqs = gi;
			gc = gi ? realloc(c->count, (size_t)cap * (size_t)c->ncols * sizeof(*gc)) : NULL;
			if (!gc) {
				cc_err_sys(err, ENOMEM, WHAT);
				goto fail;
			}
			c->count = gc;
		}
		memset(&c->count[(size_t)c->nrows * (size_t)c->ncols], 0, (size_t)c->ncols * sizeof(*c->count));
		c->irqs[c->nrows] = (int)irq;
		if (parse_row(colon + 1, end, lineno, c, c->nrows, err) < 0)
			goto fail;
		c->nrows++;
	}
	return 0;
fail:
	cc_irq_counts_fini(c);
	return -1;
}

int cc_irq_counts_read(const struct cc_root *root, struct cc_irq_counts *c, struct cc_err *err)
{
	_cleanup_free_ char *text = cc_root_read(root, WHAT, COUNTS_MAX, err);

	memset(c, 0, sizeof(*c));
	if (!text)
		return -1;
	return cc_irq_counts_parse(text, c, err);
}

void cc_irq_counts_fini(struct cc_irq_counts *c)
{
	free(c->cpus);
	free(c->irqs);
	free(c->count);
	memset(c, 0, sizeof(*c));
}

unsigned long long cc_irq_counts_get(const struct cc_irq_counts *c, int irq, int cpu)
{
	int col = -1;

	for (int k = 0; k < c->ncols; k++)
		if (c->cpus[k] == cpu)
			col = k;
	if (col < 0)
		return 0;
	for (int r = 0; r < c->nrows; r++)
		if (c->irqs[r] == irq)
			return c->count[(size_t)r * (size_t)c->ncols + (size_t)col];
	return 0;
}
