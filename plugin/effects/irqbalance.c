/* irqbalance's environment file: reading and rewriting its banned-CPU
 * variables (pure text functions) and deciding what it must say. */
#define _GNU_SOURCE
#include "irqbalance.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

/* Debian and Ubuntu; Fedora, RHEL and SUSE. */
const char *const cc_irqbalance_files[] = { "/etc/default/irqbalance", "/etc/sysconfig/irqbalance", NULL };

void cc_irqbalance_rec_init(struct cc_irqbalance_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->banned = hwloc_bitmap_alloc();
}

void cc_irqbalance_rec_fini(struct cc_irqbalance_rec *r)
{
	free(r->cpulist);
	free(r->cpus);
	if (r->banned)
		hwloc_bitmap_free(r->banned);
	if (r->pending)
		hwloc_bitmap_free(r->pending);
	memset(r, 0, sizeof(*r));
}

static int dup_opt(char **dst, const char *src)
{
	free(*dst);
	*dst = NULL;
	return src && !(*dst = strdup(src)) ? -1 : 0;
}

int cc_irqbalance_rec_copy(struct cc_irqbalance_rec *dst, const struct cc_irqbalance_rec *src)
{
	dst->active = src->active;
	memcpy(dst->file, src->file, sizeof(dst->file));
	if (!dst->banned && !(dst->banned = hwloc_bitmap_alloc()))
		return -1;
	if (dup_opt(&dst->cpulist, src->cpulist) < 0 || dup_opt(&dst->cpus, src->cpus) < 0)
		return -1;
	if (src->banned)
		hwloc_bitmap_copy(dst->banned, src->banned);
	else
		hwloc_bitmap_zero(dst->banned);
	if (dst->pending)
		hwloc_bitmap_free(dst->pending);
	dst->pending = src->pending ? hwloc_bitmap_dup(src->pending) : NULL;
	return src->pending && !dst->pending ? -1 : 0;
}

/* ---- shell-style assignments ------------------------------------------------ */

/* If the line [p, end) assigns `var`, return where its value starts. */
static const char *assignment(const char *p, const char *end, const char *var)
{
	size_t n = strlen(var);

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p > 7 && !strncmp(p, "export", 6) && (p[6] == ' ' || p[6] == '\t')) {
		p += 6;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	if ((size_t)(end - p) <= n || strncmp(p, var, n) != 0 || p[n] != '=')
		return NULL;
	return p + n + 1;
}

static const char *line_end(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl : p + strlen(p);
}

/* The value without surrounding blanks and one pair of matching quotes. */
static char *unquote(const char *raw)
{
	const char *a = raw, *b = raw + strlen(raw);

	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	if (b - a >= 2 && (*a == '"' || *a == '\'') && b[-1] == *a) {
		a++;
		b--;
	}
	return strndup(a, (size_t)(b - a));
}

int cc_env_get(const char *text, const char *var, char **raw, char **value, struct cc_err *err)
{
	const char *found = NULL, *found_end = NULL;

	*raw = NULL;
	if (value)
		*value = NULL;
	for (const char *p = text; *p;) {
		const char *end = line_end(p), *v = assignment(p, end, var);

		if (v) {
			found = v;
			found_end = end > v && end[-1] == '\r' ? end - 1 : end;
		}
		p = *end ? end + 1 : end;
	}
	if (!found)
		return 0;
	*raw = strndup(found, (size_t)(found_end - found));
	if (!*raw || (value && !(*value = unquote(*raw)))) {
		free(*raw);
		*raw = NULL;
		return cc_err_sys(err, ENOMEM, "%s", var);
	}
	return 0;
}

char *cc_env_set(const char *text, const char *var, const char *raw, struct cc_err *err)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	bool seen = false;

	if (!f)
		return cc_err_sys(err, ENOMEM, "%s", var), NULL;
	for (const char *p = text; *p;) {
		const char *end = line_end(p), *v = assignment(p, end, var);
		const char *next = *end ? end + 1 : end;

		if (!v) {
			fwrite(p, 1, (size_t)(next - p), f);
		} else if (raw) {
			/* Keep "export " and the indentation; the value is ours. */
			fwrite(p, 1, (size_t)(v - p), f);
			fprintf(f, "%s%s", raw, *end ? "\n" : "");
			seen = true;
		}
		p = next;
	}
	/* open_memstream updates out and len on fflush. */
	if (raw && !seen && fflush(f) == 0)
		fprintf(f, "%s%s=%s\n", len && out[len - 1] != '\n' ? "\n" : "", var, raw);
	if (fclose(f) != 0) {
		free(out);
		return cc_err_sys(err, ENOMEM, "%s", var), NULL;
	}
	return out;
}

/* ---- decisions ------------------------------------------------------------- */

int cc_irqbalance_base(const struct cc_irqbalance_rec *rec, hwloc_const_bitmap_t autoban, hwloc_bitmap_t out,
		       struct cc_err *err)
{
	_cleanup_free_ char *mask = rec->cpus ? unquote(rec->cpus) : NULL;
	_cleanup_free_ char *list = rec->cpulist ? unquote(rec->cpulist) : NULL;
	char what[128];

	if ((rec->cpus && !mask) || (rec->cpulist && !list))
		return cc_err_sys(err, ENOMEM, "%s", rec->file);
	/* irqbalance 1.8 and 1.9 check the old mask first and let it win. */
	if (mask && *mask) {
		snprintf(what, sizeof(what), "%s: " CC_IRQBALANCE_MASK, rec->file);
		return cc_cpumask_parse(mask, out, what, err);
	}
	if (list && *list) {
		snprintf(what, sizeof(what), "%s: " CC_IRQBALANCE_LIST, rec->file);
		return cc_cpulist_parse(list, out, what, err);
	}
	/* Setting either variable turns off irqbalance's own banning of
	 * isolated and nohz_full CPUs: keep them banned. */
	hwloc_bitmap_copy(out, autoban);
	return 0;
}

/* The value corecarve writes for each variable. */
static char *format_var(const char *var, hwloc_const_bitmap_t b)
{
	return !strcmp(var, CC_IRQBALANCE_MASK) ? cc_cpumask_format(b, 0) : cc_cpulist_format(b);
}

/* A variable whose line no longer holds what corecarve wrote (or, after a
 * crash, was about to write) was edited by hand: that value is the
 * operator's now. */
static int adopt_edit(const char *text, const char *var, const struct cc_irqbalance_rec *rec, char **orig,
		      struct cc_err *err)
{
	_cleanup_free_ char *raw = NULL;
	_cleanup_free_ char *ours = format_var(var, rec->banned);
	_cleanup_free_ char *next = rec->pending ? format_var(var, rec->pending) : NULL;

	if (!ours || (rec->pending && !next))
		return cc_err_sys(err, ENOMEM, "%s", var);
	if (cc_env_get(text, var, &raw, NULL, err) < 0)
		return -1;
	if (raw && (!strcmp(raw, ours) || (next && !strcmp(raw, next))))
		return 0;
	free(*orig);
	*orig = cc_steal_ptr(raw);
	return 0;
}

static int set_var(char **text, const char *var, const char *raw, struct cc_err *err)
{
	char *n = cc_env_set(*text, var, raw, err);

	if (!n)
		return -1;
	free(*text);
	*text = n;
	return 0;
}

int cc_irqbalance_render(const char *text, const struct cc_irqbalance_rec *rec, hwloc_const_bitmap_t avoid,
			 hwloc_const_bitmap_t autoban, struct cc_irqbalance_pending *p, struct cc_err *err)
{
	struct cc_irqbalance_rec *n = &p->next;
	_cleanup_free_ char *out = strdup(text);
	_cleanup_free_ char *list = NULL;
	_cleanup_free_ char *mask = NULL;
	bool restoring = hwloc_bitmap_iszero(avoid);

	if (!out || cc_irqbalance_rec_copy(n, rec) < 0 || (!p->list && !(p->list = hwloc_bitmap_alloc())))
		return cc_err_sys(err, ENOMEM, "%s", p->file);
	hwloc_bitmap_zero(p->list);
	p->tell = false;
	if (!rec->active) {
		if (restoring)
			return 0; /* never touched: nothing to give back */
		snprintf(n->file, sizeof(n->file), "%s", p->file);
		if (cc_env_get(text, CC_IRQBALANCE_LIST, &n->cpulist, NULL, err) < 0 ||
		    cc_env_get(text, CC_IRQBALANCE_MASK, &n->cpus, NULL, err) < 0)
			return -1;
		n->active = true;
	} else if (adopt_edit(text, CC_IRQBALANCE_LIST, rec, &n->cpulist, err) < 0 ||
		   adopt_edit(text, CC_IRQBALANCE_MASK, rec, &n->cpus, err) < 0) {
		return -1;
	}
	if (n->pending) {
		hwloc_bitmap_free(n->pending);
		n->pending = NULL;
	}
	if (restoring) {
		struct cc_err ignored = CC_ERR_INIT;

		/* A value irqbalance itself cannot read must not block giving
		 * the operator's lines back: the daemon then drops the override. */
		if (cc_irqbalance_base(n, autoban, p->list, &ignored) < 0)
			hwloc_bitmap_zero(p->list);
	} else if (cc_irqbalance_base(n, autoban, p->list, err) < 0) {
		return -1;
	}
	if (restoring) {
		/* The operator's lines back, byte for byte (or gone when there
		 * were none); a running daemon gets the operator's set. */
		if (set_var(&out, CC_IRQBALANCE_LIST, n->cpulist, err) < 0 ||
		    set_var(&out, CC_IRQBALANCE_MASK, n->cpus, err) < 0)
			return -1;
		cc_irqbalance_rec_fini(n);
		cc_irqbalance_rec_init(n);
		if (!n->banned)
			return cc_err_sys(err, ENOMEM, "%s", p->file);
	} else {
		hwloc_bitmap_or(p->list, p->list, avoid);
		list = format_var(CC_IRQBALANCE_LIST, p->list);
		mask = format_var(CC_IRQBALANCE_MASK, p->list);
		if (!list || !mask)
			return cc_err_sys(err, ENOMEM, "%s", p->file);
		/* Both: irqbalance < 1.8 knows only the mask, and 1.8+ lets a
		 * non-empty mask win over the list. */
		if (set_var(&out, CC_IRQBALANCE_LIST, list, err) < 0 || set_var(&out, CC_IRQBALANCE_MASK, mask, err) < 0)
			return -1;
		hwloc_bitmap_copy(n->banned, p->list);
	}
	p->tell = rec->active ? !hwloc_bitmap_isequal(rec->banned, n->banned) || restoring : true;
	if (strcmp(out, text) != 0)
		p->new_text = cc_steal_ptr(out);
	return 0;
}

void cc_irqbalance_pending_fini(struct cc_irqbalance_pending *p)
{
	free(p->new_text);
	cc_irqbalance_rec_fini(&p->next);
	if (p->list)
		hwloc_bitmap_free(p->list);
	memset(p, 0, sizeof(*p));
}

char *cc_irqbalance_message(hwloc_const_bitmap_t list)
{
	_cleanup_free_ char *s = hwloc_bitmap_iszero(list) ? strdup("NULL") : cc_cpulist_format(list);
	char *msg = NULL;

	/* irqbalance reads one message of at most 500 bytes. */
	if (!s || strlen(s) > 400 || asprintf(&msg, "settings cpus %s", s) < 0)
		return NULL;
	return msg;
}
