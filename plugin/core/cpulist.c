#define _GNU_SOURCE
#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* "N" or "N-M" items, M >= N, separated by single commas, decimal numbers
 * below CC_CPU_LIMIT.  Not hwloc's list parser: it reads numbers with base
 * 0, so "010" is CPU 8 and "08" the empty set, and "0,08-17" never returns
 * (found by tests/fuzz).  The list is checked whole first and only then
 * added to `out` (`out` NULL: only checked), so `out` changes only for a
 * list that parses; this runs for every CPU list the hook reads (the
 * topology cache has one per CPU, core and domain; the node records' are
 * as long as the node), so it reads digits itself and allocates nothing. */
static const char *number(const char *p, unsigned long *v)
{
	unsigned long n = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (unsigned long)(*p - '0');
		if (n >= CC_CPU_LIMIT) {
			while (*p >= '0' && *p <= '9')
				p++;
			*v = CC_CPU_LIMIT;
			return p;
		}
	}
	*v = n;
	return p;
}

static int parse_list(const char *s, hwloc_bitmap_t out, const char *what, struct cc_err *err)
{
	const char *p = s;

	while (*p) {
		unsigned long a, b;
		const char *start = p;

		if (!isdigit((unsigned char)*p))
			return cc_err_set(err, EINVAL, "%s: invalid cpu list \"%.64s\": expected a number at \"%.16s\"", what, s, p);
		p = number(p, &a);
		if (a >= CC_CPU_LIMIT)
			return cc_err_set(err, ERANGE, "%s: invalid cpu list \"%.64s\": %.16s is out of range (limit %d)", what, s, start, CC_CPU_LIMIT - 1);
		b = a;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return cc_err_set(err, EINVAL, "%s: invalid cpu list \"%.64s\": range without an end", what, s);
			start = p;
			p = number(p, &b);
			if (b >= CC_CPU_LIMIT)
				return cc_err_set(err, ERANGE, "%s: invalid cpu list \"%.64s\": %.16s is out of range (limit %d)", what, s, start, CC_CPU_LIMIT - 1);
			if (b < a)
				return cc_err_set(err, EINVAL, "%s: invalid cpu list \"%.64s\": range %lu-%lu is reversed", what, s, a, b);
		}
		if (out && hwloc_bitmap_set_range(out, (unsigned)a, (int)b) < 0)
			return cc_err_sys(err, ENOMEM, "%s", what);
		if (*p == ',') {
			p++;
			if (!*p)
				return cc_err_set(err, EINVAL, "%s: invalid cpu list \"%.64s\": trailing comma", what, s);
		} else if (*p) {
			return cc_err_set(err, EINVAL, "%s: invalid cpu list \"%.64s\": unexpected '%c'", what, s, *p);
		}
	}
	return 0;
}

int cc_cpulist_parse(const char *s, hwloc_bitmap_t out, const char *what,
		     struct cc_err *err)
{
	if (!s)
		return cc_err_set(err, EINVAL, "%s: missing cpu list", what);
	/* Checked first: `out` is replaced only by a list that parses. */
	if (parse_list(s, NULL, what, err) < 0)
		return -1;
	hwloc_bitmap_zero(out);
	return parse_list(s, out, what, err);
}

int cc_cpumask_parse(const char *s, hwloc_bitmap_t out, const char *what,
		     struct cc_err *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, words = 0;
	const char *p;

	if (!s || !*s)
		return cc_err_set(err, EINVAL, "%s: empty cpumask", what);
	/* Linux prints 32-bit words without "0x"; hwloc's bitmap syntax wants
	 * each word prefixed, so rewrite "ff,00000001" as "0xff,0x00000001". */
	for (p = s; *p; p++) {
		if (*p == ',') {
			if (p == s || p[1] == '\0' || p[1] == ',')
				return cc_err_set(err, EINVAL, "%s: invalid cpumask \"%.64s\"", what, s);
			continue;
		}
		if (!isxdigit((unsigned char)*p))
			return cc_err_set(err, EINVAL, "%s: invalid cpumask \"%.64s\": unexpected '%c'", what, s, *p);
	}
	words = 1;
	for (p = s; *p; p++)
		words += *p == ',';
	if (words * 32 > CC_CPU_LIMIT)
		return cc_err_set(err, ERANGE, "%s: cpumask \"%.32s...\" is wider than %d bits", what, s, CC_CPU_LIMIT);
	buf = malloc(strlen(s) + 2 * words + 1);
	if (!buf)
		return cc_err_sys(err, ENOMEM, "%s", what);
	for (p = s;;) {
		const char *end = strchr(p, ',');
		size_t wl = end ? (size_t)(end - p) : strlen(p);

		if (wl > 8)
			return cc_err_set(err, EINVAL, "%s: invalid cpumask \"%.64s\": word longer than 32 bits", what, s);
		n += (size_t)sprintf(buf + n, "%s0x%.*s", n ? "," : "", (int)wl, p);
		if (!end)
			break;
		p = end + 1;
	}
	if (hwloc_bitmap_sscanf(out, buf) < 0)
		return cc_err_set(err, EINVAL, "%s: invalid cpumask \"%.64s\"", what, s);
	return 0;
}

static char *put_number(char *p, unsigned v)
{
	char d[12];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = d[--n];
	return p;
}

/* hwloc's list syntax ("0-3,8,10-11"), byte for byte, written range by
 * range without a printf per range. */
char *cc_cpulist_format(hwloc_const_bitmap_t set)
{
	size_t cap = 64, len = 0;
	char *s, *grown;
	int a;

	if (hwloc_bitmap_iszero(set))
		return strdup("");
	/* An infinite set ("8-") is hwloc's to print. */
	if (hwloc_bitmap_weight(set) < 0) {
		s = NULL;
		return hwloc_bitmap_list_asprintf(&s, set) < 0 ? NULL : s;
	}
	s = malloc(cap);
	if (!s)
		return NULL;
	for (a = hwloc_bitmap_first(set); a >= 0;) {
		int next = hwloc_bitmap_next_unset(set, a), b = next - 1;

		/* Two numbers of up to 10 digits, '-', ',' and the NUL. */
		if (len + 24 > cap) {
			cap *= 2;
			grown = realloc(s, cap);
			if (!grown) {
				free(s);
				return NULL;
			}
			s = grown;
		}
		if (len)
			s[len++] = ',';
		len = (size_t)(put_number(s + len, (unsigned)a) - s);
		if (b > a) {
			s[len++] = '-';
			len = (size_t)(put_number(s + len, (unsigned)b) - s);
		}
		a = hwloc_bitmap_next(set, b);
	}
	s[len] = '\0';
	return s;
}

char *cc_cpumask_format(hwloc_const_bitmap_t set, unsigned nbits)
{
	int last = hwloc_bitmap_last(set);
	unsigned words, bits = nbits;
	char *s, *p;

	if (last >= 0 && (unsigned)last + 1 > bits)
		bits = (unsigned)last + 1;
	words = bits ? (bits + 31) / 32 : 1;
	s = malloc(words * 9 + 1);
	if (!s)
		return NULL;
	p = s;
	for (unsigned w = words; w-- > 0;) {
		unsigned long v = hwloc_bitmap_to_ith_ulong(set, w / (sizeof(unsigned long) / 4));

		if (sizeof(unsigned long) == 8)
			v = (w & 1) ? v >> 32 : v & 0xffffffffUL;
		p += sprintf(p, "%s%08lx", p == s ? "" : ",", v);
	}
	return s;
}
