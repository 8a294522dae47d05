/* The ledger section "power": what the power settings must remember to
 * undo, as node records (noderec.h):
 *
 *   "power": {
 *     "files": [
 *       { "path": "/sys/devices/system/cpu/cpufreq/policy2/scaling_governor",
 *         "kind": "governor", "orig": "schedutil", "set": "performance",
 *         "seq": 1, "owners": { "ctr-a": "" } },
 *       { "path": "/sys/devices/system/cpu/cpu2/cpuidle/state3/disable",
 *         "kind": "cstate", "orig": "0", "pending": "1", "seq": 2,
 *         "owners": { "ctr-a": "" } }
 *     ]
 *   }
 *
 * Absent when nothing is recorded.  Parsed strictly, by the node records'
 * parser and then power's own checks: a restore from a record corecarve
 * cannot read would write a wrong value into sysfs. */
#define _GNU_SOURCE
#include "power.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define W "sections." CC_POWER_SECTION

/* The kinds of the section's records, in the order of enum cc_power_kind. */
const char *const cc_power_kinds[] = {
	[CC_POWER_GOVERNOR] = "governor",     [CC_POWER_EPP] = "epp",
	[CC_POWER_MIN_FREQ] = "min-freq",     [CC_POWER_MAX_FREQ] = "max-freq",
	[CC_POWER_CSTATE] = "cstate",         [CC_POWER_UNCORE_MIN] = "uncore-min",
	[CC_POWER_UNCORE_MAX] = "uncore-max", [CC_POWER_NKINDS] = NULL,
};

const char *cc_power_kind_name(enum cc_power_kind k)
{
	return (unsigned)k < CC_POWER_NKINDS ? cc_power_kinds[k] : "?";
}

int cc_power_kind_parse(const char *s, enum cc_power_kind *out)
{
	for (int i = 0; i < CC_POWER_NKINDS; i++)
		if (!strcmp(s, cc_power_kinds[i])) {
			*out = (enum cc_power_kind)i;
			return 0;
		}
	return -1;
}

/* ---- messages ---- */

static void msg_add(char (*lines)[256], int *n, const char *fmt, va_list ap)
{
	char line[256];

	vsnprintf(line, sizeof(line), fmt, ap);
	for (int i = 0; i < *n; i++)
		if (!strcmp(lines[i], line))
			return;
	if (*n < CC_POWER_MSG_MAX)
		snprintf(lines[(*n)++], sizeof(lines[0]), "%s", line);
}

void cc_power_warn(struct cc_power_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_add(m->warnings, &m->nwarnings, fmt, ap);
	va_end(ap);
}

void cc_power_note(struct cc_power_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_add(m->notes, &m->nnotes, fmt, ap);
	va_end(ap);
}

void cc_power_msgs_add(struct cc_power_msgs *dst, const struct cc_power_msgs *src)
{
	for (int i = 0; i < src->nwarnings; i++)
		cc_power_warn(dst, "%s", src->warnings[i]);
	for (int i = 0; i < src->nnotes; i++)
		cc_power_note(dst, "%s", src->notes[i]);
}

/* ---- records ---- */

enum cc_power_kind cc_power_rec_kind(const struct cc_noderec *r)
{
	enum cc_power_kind k;

	/* Parsed records are checked against cc_power_kinds, made ones
	 * take cc_power_kind_name(): always one of them. */
	return cc_power_kind_parse(r->kind, &k) == 0 ? k : CC_POWER_NKINDS;
}

const char *cc_power_rec_value(const struct cc_noderec *r)
{
	return r->pending ? r->pending : r->set ? r->set : r->orig;
}

bool cc_power_rec_ours(const struct cc_noderec *r, const char *cur)
{
	return cur && ((r->set && !strcmp(cur, r->set)) || (r->pending && !strcmp(cur, r->pending)));
}

bool cc_power_rec_owned_by(const struct cc_noderec *r, const char *id)
{
	return cc_noderec_share(r, id) != NULL;
}

int cc_power_rec_add_owner(struct cc_noderec *r, const char *id)
{
	/* Power's values do not depend on who asks: no share. */
	return cc_noderec_set_owner(r, id, "");
}

int cc_power_recs_put(struct cc_noderecs *dst, const struct cc_noderec *r, bool owners)
{
	long long next = dst->next;
	struct cc_noderec *n = cc_noderecs_add(dst, r->path, r->kind, r->orig);

	if (!n)
		return -1;
	/* The copy keeps its place in the order of the first writes. */
	n->seq = r->seq;
	dst->next = next > r->seq ? next : r->seq + 1;
	if (cc_noderec_put(&n->set, r->set) < 0 || cc_noderec_put(&n->pending, r->pending) < 0)
		goto nomem;
	for (int i = 0; owners && i < r->nowners; i++)
		if (cc_noderec_set_owner(n, r->owners[i].id, r->owners[i].share) < 0)
			goto nomem;
	return 0;
nomem:
	cc_noderecs_del(dst, r->path);
	return -1;
}

int cc_power_recs_copy(struct cc_noderecs *dst, const struct cc_noderecs *src)
{
	cc_noderecs_init(dst);
	for (int i = 0; i < src->n; i++)
		if (cc_power_recs_put(dst, src->r[i], true) < 0) {
			cc_noderecs_fini(dst);
			return -1;
		}
	dst->next = src->next;
	return 0;
}

/* ---- JSON: node records (noderec.h), and what sysfs needs on top ---- */

static int check_value(const char *v, const char *where, const char *field, struct cc_err *err)
{
	if (v && strlen(v) >= CC_POWER_VALUE_MAX)
		return cc_err_set(err, EINVAL, "%s.%s: longer than %d bytes (a sysfs value)", where, field,
				  CC_POWER_VALUE_MAX - 1);
	return 0;
}

/* A record power may act on: a sysfs file (the values go into it as they
 * are), an original to restore (corecarve never creates a power file), no
 * shares (the value is the class's, whoever asks). */
static int check_rec(const struct cc_noderec *r, const char *where, struct cc_err *err)
{
	size_t n = strlen(r->path);

	if (strncmp(r->path, "/sys/", 5) != 0 || (n >= 3 && !strcmp(r->path + n - 3, "/..")) ||
	    (n >= 2 && !strcmp(r->path + n - 2, "/.")))
		return cc_err_set(err, EINVAL, "%s.path: expected an absolute path under /sys, got \"%.200s\"", where,
				  r->path);
	if (n >= CC_POWER_PATH_MAX)
		return cc_err_set(err, EINVAL, "%s.path: longer than %d bytes", where, CC_POWER_PATH_MAX - 1);
	if (!r->orig)
		return cc_err_set(err, EINVAL, "%s.orig: expected a string (corecarve never creates a power file)", where);
	if (check_value(r->orig, where, "orig", err) < 0 || check_value(r->set, where, "set", err) < 0 ||
	    check_value(r->pending, where, "pending", err) < 0)
		return -1;
	for (int k = 0; k < r->nowners; k++)
		if (r->owners[k].share[0])
			return cc_err_set(err, EINVAL, "%s.owners.%.64s: expected \"\" (power settings have no shares)",
					  where, r->owners[k].id);
	return 0;
}

static const struct cc_noderec_schema power_schema = { .where = W, .kinds = cc_power_kinds, .check = check_rec };

int cc_power_recs_parse(const json_t *section, struct cc_noderecs *s, struct cc_err *err)
{
	return cc_noderecs_parse(section, &power_schema, s, err);
}

int cc_power_recs_load(const struct cc_ledger *l, struct cc_noderecs *s, struct cc_err *err)
{
	return cc_power_recs_parse(cc_ledger_section_get(l, CC_POWER_SECTION), s, err);
}

int cc_power_recs_store(struct cc_ledger *l, const struct cc_noderecs *s, struct cc_err *err)
{
	/* Nothing recorded: no section (NULL), so an idle node's ledger is
	 * empty. */
	json_t *j = cc_noderecs_json(s, err);

	if (!j && s->n)
		return -1;
	return cc_ledger_set_section(l, CC_POWER_SECTION, j, err);
}
