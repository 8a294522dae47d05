/* The ledger section "power": what the power settings must remember to
 * undo.
 *
 *   "power": {
 *     "next": 4,
 *     "files": [
 *       { "path": "/sys/devices/system/cpu/cpufreq/policy2/scaling_governor",
 *         "setting": "governor", "orig": "schedutil", "set": "performance",
 *         "seq": 1, "owners": [ "ctr-a" ] },
 *       { "path": "/sys/devices/system/cpu/cpu2/cpuidle/state3/disable",
 *         "setting": "cstate", "orig": "0", "set": "1", "seq": 2,
 *         "owners": [ "ctr-a" ], "pending": true }
 *     ]
 *   }
 *
 * Absent when nothing is recorded.  Parsed strictly: a restore from a
 * record corecarve cannot read would write a wrong value into sysfs. */
#define _GNU_SOURCE
#include "power.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define W "sections." CC_POWER_SECTION

static const char *const kind_names[] = {
	[CC_POWER_GOVERNOR] = "governor",     [CC_POWER_EPP] = "epp",
	[CC_POWER_MIN_FREQ] = "min-freq",     [CC_POWER_MAX_FREQ] = "max-freq",
	[CC_POWER_CSTATE] = "cstate",         [CC_POWER_UNCORE_MIN] = "uncore-min",
	[CC_POWER_UNCORE_MAX] = "uncore-max",
};

const char *cc_power_kind_name(enum cc_power_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "?";
}

int cc_power_kind_parse(const char *s, enum cc_power_kind *out)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(s, kind_names[i])) {
			*out = (enum cc_power_kind)i;
			return 0;
		}
	return -1;
}

bool cc_power_spec_empty(const struct cc_power_spec *s)
{
	return !s->governor[0] && !s->epp[0] && !s->min_khz && !s->max_khz && !s->cstates_shallow &&
	       !s->uncore_fixed;
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

void cc_power_state_init(struct cc_power_state *st)
{
	memset(st, 0, sizeof(*st));
	st->next_seq = 1;
}

static void rec_fini(struct cc_power_rec *r)
{
	for (int i = 0; i < r->nowners; i++)
		free(r->owners[i]);
	free(r->owners);
	r->owners = NULL;
	r->nowners = 0;
}

void cc_power_state_fini(struct cc_power_state *st)
{
	for (int i = 0; i < st->n; i++)
		rec_fini(&st->recs[i]);
	free(st->recs);
	cc_power_state_init(st);
}

struct cc_power_rec *cc_power_state_find(struct cc_power_state *st, const char *path)
{
	for (int i = 0; i < st->n; i++)
		if (!strcmp(st->recs[i].path, path))
			return &st->recs[i];
	return NULL;
}

bool cc_power_rec_owned_by(const struct cc_power_rec *r, const char *id)
{
	for (int i = 0; i < r->nowners; i++)
		if (!strcmp(r->owners[i], id))
			return true;
	return false;
}

int cc_power_rec_add_owner(struct cc_power_rec *r, const char *id)
{
	char **grown, *dup;

	if (cc_power_rec_owned_by(r, id))
		return 0;
	dup = strdup(id);
	grown = dup ? realloc(r->owners, (size_t)(r->nowners + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(dup);
		return -1;
	}
	grown[r->nowners++] = dup;
	r->owners = grown;
	return 0;
}

void cc_power_rec_del_owner(struct cc_power_rec *r, const char *id)
{
	for (int i = 0; i < r->nowners; i++)
		if (!strcmp(r->owners[i], id)) {
			free(r->owners[i]);
			memmove(&r->owners[i], &r->owners[i + 1], (size_t)(r->nowners - i - 1) * sizeof(*r->owners));
			r->nowners--;
			return;
		}
}

int cc_power_state_put(struct cc_power_state *st, const struct cc_power_rec *r)
{
	struct cc_power_rec n = *r, *grown;

	n.owners = NULL;
	n.nowners = 0;
	for (int i = 0; i < r->nowners; i++)
		if (cc_power_rec_add_owner(&n, r->owners[i]) < 0) {
			rec_fini(&n);
			return -1;
		}
	grown = realloc(st->recs, (size_t)(st->n + 1) * sizeof(*grown));
	if (!grown) {
		rec_fini(&n);
		return -1;
	}
	st->recs = grown;
	st->recs[st->n++] = n;
	if (n.seq >= st->next_seq)
		st->next_seq = n.seq + 1;
	return 0;
}

void cc_power_state_del(struct cc_power_state *st, const char *path)
{
	for (int i = 0; i < st->n; i++)
		if (!strcmp(st->recs[i].path, path)) {
			rec_fini(&st->recs[i]);
			memmove(&st->recs[i], &st->recs[i + 1], (size_t)(st->n - i - 1) * sizeof(*st->recs));
			st->n--;
			return;
		}
}

/* ---- JSON ---- */

static int get_str(const json_t *o, const char *key, char *buf, size_t size, const char *where, bool path,
		   struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);
	const char *s;

	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a string", where, key);
	s = json_string_value(v);
	if (strlen(s) >= size)
		return cc_err_set(err, EINVAL, "%s.%s: longer than %zu bytes", where, key, size - 1);
	/* Values go into sysfs as they are: no control characters; paths are
	 * absolute sysfs paths without "..". */
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return cc_err_set(err, EINVAL, "%s.%s: control character in value", where, key);
	if (path && (strncmp(s, "/sys/", 5) != 0 || strstr(s, "/../") || strstr(s, "/./")))
		return cc_err_set(err, EINVAL, "%s.%s: expected an absolute path under /sys, got \"%s\"", where,
				  key, s);
	snprintf(buf, size, "%s", s);
	return 0;
}

static int parse_rec(const json_t *o, const char *where, struct cc_power_rec *r, struct cc_err *err)
{
	static const char *const keys[] = { "path", "setting", "orig", "set", "seq", "owners", "pending", NULL };
	char setting[32];
	const char *key;
	const json_t *v, *owners;
	size_t i;

	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, "%s: expected an object", where);
	json_object_foreach((json_t *)o, key, v) {
		size_t k;

		for (k = 0; keys[k] && strcmp(keys[k], key); k++)
			;
		if (!keys[k])
			return cc_err_set(err, EINVAL, "%s: unknown field \"%s\"", where, key);
	}
	if (get_str(o, "path", r->path, sizeof(r->path), where, true, err) < 0 ||
	    get_str(o, "setting", setting, sizeof(setting), where, false, err) < 0 ||
	    get_str(o, "orig", r->orig, sizeof(r->orig), where, false, err) < 0 ||
	    get_str(o, "set", r->set, sizeof(r->set), where, false, err) < 0)
		return -1;
	if (cc_power_kind_parse(setting, &r->kind) < 0)
		return cc_err_set(err, EINVAL, "%s.setting: unknown setting \"%s\"", where, setting);
	v = json_object_get(o, "seq");
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return cc_err_set(err, EINVAL, "%s.seq: expected an integer >= 1", where);
	r->seq = json_integer_value(v);
	v = json_object_get(o, "pending");
	if (v && !json_is_boolean(v))
		return cc_err_set(err, EINVAL, "%s.pending: expected true or false", where);
	r->pending = v && json_is_true(v);
	owners = json_object_get(o, "owners");
	if (!json_is_array(owners))
		return cc_err_set(err, EINVAL, "%s.owners: expected an array of carve ids", where);
	json_array_foreach(owners, i, v) {
		if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= 256)
			return cc_err_set(err, EINVAL, "%s.owners.%zu: expected a carve id", where, i);
		if (cc_power_rec_add_owner(r, json_string_value(v)) < 0)
			return cc_err_sys(err, ENOMEM, "%s.owners", where);
	}
	return 0;
}

int cc_power_state_parse(const json_t *section, struct cc_power_state *st, struct cc_err *err)
{
	const json_t *files, *next, *f;
	size_t i;

	cc_power_state_init(st);
	if (!section)
		return 0;
	if (!json_is_object(section))
		return cc_err_set(err, EINVAL, W ": expected an object");
	next = json_object_get(section, "next");
	files = json_object_get(section, "files");
	if (!json_is_integer(next) || json_integer_value(next) < 1)
		return cc_err_set(err, EINVAL, W ".next: expected an integer >= 1");
	if (!json_is_array(files))
		return cc_err_set(err, EINVAL, W ".files: expected an array");
	if (json_object_size(section) != 2)
		return cc_err_set(err, EINVAL, W ": expected only \"next\" and \"files\"");
	json_array_foreach(files, i, f) {
		struct cc_power_rec r = { 0 };
		char where[64];

		snprintf(where, sizeof(where), W ".files.%zu", i);
		if (parse_rec(f, where, &r, err) < 0) {
			rec_fini(&r);
			cc_power_state_fini(st);
			return -1;
		}
		if (cc_power_state_find(st, r.path)) {
			rec_fini(&r);
			cc_power_state_fini(st);
			return cc_err_set(err, EINVAL, "%s.path: \"%s\" recorded twice", where, r.path);
		}
		if (cc_power_state_put(st, &r) < 0) {
			rec_fini(&r);
			cc_power_state_fini(st);
			return cc_err_sys(err, ENOMEM, W);
		}
		rec_fini(&r);
	}
	if (json_integer_value(next) > st->next_seq)
		st->next_seq = json_integer_value(next);
	return 0;
}

int cc_power_state_load(const struct cc_ledger *l, struct cc_power_state *st, struct cc_err *err)
{
	return cc_power_state_parse(json_object_get(l->sections, CC_POWER_SECTION), st, err);
}

static json_t *rec_json(const struct cc_power_rec *r)
{
	json_t *o = json_object(), *owners = json_array();
	int bad = !o || !owners;

	for (int i = 0; !bad && i < r->nowners; i++)
		bad |= json_array_append_new(owners, json_string(r->owners[i]));
	if (!bad)
		bad |= json_object_set_new(o, "path", json_string(r->path)) |
		       json_object_set_new(o, "setting", json_string(cc_power_kind_name(r->kind))) |
		       json_object_set_new(o, "orig", json_string(r->orig)) |
		       json_object_set_new(o, "set", json_string(r->set)) |
		       json_object_set_new(o, "seq", json_integer(r->seq)) |
		       json_object_set(o, "owners", owners);
	if (!bad && r->pending)
		bad |= json_object_set_new(o, "pending", json_true());
	json_decref(owners);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int cc_power_state_store(struct cc_ledger *l, const struct cc_power_state *st, struct cc_err *err)
{
	_cleanup_json_ json_t *o = NULL;
	json_t *files;

	if (!st->n) {
		/* Nothing recorded: no section, so an idle node's ledger is empty. */
		if (json_object_get(l->sections, CC_POWER_SECTION))
			json_object_del(l->sections, CC_POWER_SECTION);
		return 0;
	}
	o = json_object();
	files = json_array();
	if (!o || !files || json_object_set_new(o, "files", files) < 0 ||
	    json_object_set_new(o, "next", json_integer(st->next_seq)) < 0)
		return cc_err_sys(err, ENOMEM, W);
	for (int i = 0; i < st->n; i++)
		if (json_array_append_new(files, rec_json(&st->recs[i])) < 0)
			return cc_err_sys(err, ENOMEM, W);
	if (json_object_set(l->sections, CC_POWER_SECTION, o) < 0)
		return cc_err_sys(err, ENOMEM, W);
	return 0;
}
