/* corecarve: node records (noderec.h): the record type, its owners and
 * its strict JSON. */
#define _GNU_SOURCE
#include "noderec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"

struct cc_noderecs_src {
	struct cc_ledger *l;
	char section[32];
	const struct cc_noderec_schema *schema;
	char **gone; /* keys removed, to remove from the ledger */
	int ngone;
	bool all;    /* every record read */
	struct cc_err err;
};

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

void cc_noderecs_init(struct cc_noderecs *s)
{
	memset(s, 0, sizeof(*s));
	s->next = 1;
}

static void rec_fini(struct cc_noderec *r)
{
	for (int i = 0; i < r->nowners; i++) {
		free(r->owners[i].id);
		free(r->owners[i].share);
	}
	free(r->owners);
	free(r->path);
	free(r->kind);
	free(r->orig);
	free(r->set);
	free(r->pending);
	hwloc_bitmap_free(r->held);
	memset(r, 0, sizeof(*r));
}

static void drop(struct cc_noderec *r)
{
	if (r)
		rec_fini(r);
	free(r);
}

static void src_free(struct cc_noderecs_src *src)
{
	if (!src)
		return;
	for (int i = 0; i < src->ngone; i++)
		free(src->gone[i]);
	free(src->gone);
	free(src);
}

void cc_noderecs_fini(struct cc_noderecs *s)
{
	for (int i = 0; i < s->n; i++)
		drop(s->r[i]);
	free(s->r);
	src_free(s->src);
	cc_noderecs_init(s);
}

bool cc_noderec_owned(const struct cc_noderec *r)
{
	return r->nowners > 0 || (r->held && !hwloc_bitmap_iszero(r->held));
}

static struct cc_noderec *held_in_memory(const struct cc_noderecs *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->r[i]->path, path))
			return s->r[i];
	return NULL;
}

static int gone_at(const struct cc_noderecs_src *src, const char *path)
{
	for (int i = 0; i < src->ngone; i++)
		if (!strcmp(src->gone[i], path))
			return i;
	return -1;
}

static int read_one(struct cc_noderecs *s, const char *path, struct cc_noderec **out, struct cc_err *err);

struct cc_noderec *cc_noderecs_find(const struct cc_noderecs *cs, const char *path)
{
	/* A lazy set reads what it does not hold: the set changes, not what
	 * it says. */
	struct cc_noderecs *s = (struct cc_noderecs *)cs;
	struct cc_noderec *r = held_in_memory(s, path);
	struct cc_err e = CC_ERR_INIT;

	if (r || !s->src || s->src->all || s->src->err.code || gone_at(s->src, path) >= 0)
		return r;
	if (read_one(s, path, &r, &e) < 0) {
		s->src->err = e;
		return NULL;
	}
	return r;
}

int cc_noderec_put(char **field, const char *v)
{
	char *dup = NULL;

	if (v && !(dup = strdup(v)))
		return -1;
	free(*field);
	*field = dup;
	return 0;
}

/* A new empty record at the end: its own allocation, so that no other
 * record moves (a handle stays valid until its record is removed). */
static struct cc_noderec *append(struct cc_noderecs *s)
{
	struct cc_noderec **grown = realloc(s->r, (size_t)(s->n + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	s->r = grown;
	if (!(s->r[s->n] = calloc(1, sizeof(**s->r))))
		return NULL;
	return s->r[s->n++];
}

/* The last record appended, taken back (a failed add or parse). */
static void drop_last(struct cc_noderecs *s)
{
	drop(s->r[--s->n]);
}

struct cc_noderec *cc_noderecs_add(struct cc_noderecs *s, const char *path, const char *kind, const char *orig)
{
	struct cc_noderec *r;
	int g;

	/* Made anew after it was removed: written, not removed. */
	if (s->src && (g = gone_at(s->src, path)) >= 0) {
		free(s->src->gone[g]);
		s->src->gone[g] = s->src->gone[--s->src->ngone];
	}
	r = append(s);
	if (!r)
		return NULL;
	if (cc_noderec_put(&r->path, path) < 0 || cc_noderec_put(&r->kind, kind) < 0 ||
	    cc_noderec_put(&r->orig, orig) < 0) {
		drop_last(s);
		return NULL;
	}
	r->seq = s->next++;
	return r;
}

struct cc_noderec *cc_noderecs_add_copy(struct cc_noderecs *s, const struct cc_noderec *r)
{
	struct cc_noderec *c = cc_noderecs_add(s, r->path, r->kind, r->orig);

	if (!c)
		return NULL;
	c->seq = r->seq;
	if (cc_noderec_put(&c->set, r->set) < 0 || cc_noderec_put(&c->pending, r->pending) < 0 ||
	    (r->held && !(c->held = hwloc_bitmap_dup(r->held))))
		goto fail;
	for (int i = 0; i < r->nowners; i++)
		if (cc_noderec_set_owner(c, r->owners[i].id, r->owners[i].share) < 0)
			goto fail;
	return c;
fail:
	drop_last(s);
	return NULL;
}

void cc_noderecs_del(struct cc_noderecs *s, const char *path)
{
	/* Removed from the ledger too, read or not. */
	if (s->src && gone_at(s->src, path) < 0) {
		char **grown = realloc(s->src->gone, (size_t)(s->src->ngone + 1) * sizeof(*grown));
		char *dup = strdup(path);

		if (!grown || !dup) {
			free(dup);
			if (grown)
				s->src->gone = grown;
			if (!s->src->err.code)
				cc_err_sys(&s->src->err, ENOMEM, "%s", s->src->schema->where);
		} else {
			s->src->gone = grown;
			s->src->gone[s->src->ngone++] = dup;
		}
	}
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->r[i]->path, path)) {
			drop(s->r[i]);
			memmove(&s->r[i], &s->r[i + 1], (size_t)(s->n - i - 1) * sizeof(*s->r));
			s->n--;
			return;
		}
}

const char *cc_noderec_share(const struct cc_noderec *r, const char *id)
{
	for (int i = 0; i < r->nowners; i++)
		if (!strcmp(r->owners[i].id, id))
			return r->owners[i].share;
	return NULL;
}

int cc_noderec_set_owner(struct cc_noderec *r, const char *id, const char *share)
{
	struct cc_noderec_owner *grown;
	char *i = NULL, *sh = NULL;

	for (int k = 0; k < r->nowners; k++)
		if (!strcmp(r->owners[k].id, id))
			return cc_noderec_put(&r->owners[k].share, share ? share : "");
	i = strdup(id);
	sh = strdup(share ? share : "");
	grown = i && sh ? realloc(r->owners, (size_t)(r->nowners + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(i);
		free(sh);
		return -1;
	}
	r->owners = grown;
	r->owners[r->nowners++] = (struct cc_noderec_owner){ i, sh };
	return 0;
}

bool cc_noderec_del_owner(struct cc_noderec *r, const char *id)
{
	for (int i = 0; i < r->nowners; i++)
		if (!strcmp(r->owners[i].id, id)) {
			free(r->owners[i].id);
			free(r->owners[i].share);
			memmove(&r->owners[i], &r->owners[i + 1], (size_t)(r->nowners - i - 1) * sizeof(*r->owners));
			r->nowners--;
			return true;
		}
	return false;
}

/* ---- JSON ---- */

/* Values go into kernel files as they are: bounded, no control
 * characters.  NULL when the field is absent (`optional`) or null
 * (`nullable`). */
static int get_str(const json_t *o, const char *key, bool optional, bool nullable, const char *where,
		   size_t max, char **out, struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);
	const char *s;

	*out = NULL;
	if (!v && optional)
		return 0;
	if (json_is_null(v) && nullable)
		return 0;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a string%s", where, key, nullable ? " or null" : "");
	s = json_string_value(v);
	if (json_string_length(v) >= max)
		return cc_err_set(err, EINVAL, "%s.%s: longer than %zu bytes", where, key, max - 1);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return cc_err_set(err, EINVAL, "%s.%s: control character in value", where, key);
	*out = strdup(s);
	return *out ? 0 : cc_err_sys(err, ENOMEM, "%s.%s", where, key);
}

/* A held kind's listed owners go into `held` (their shares are CPU lists
 * of disjoint carves). */
static int fold_owners(struct cc_noderec *r, const char *where, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
	char w[256];

	if (!all || !one)
		return cc_err_sys(err, ENOMEM, "%s", where);
	if (r->held)
		hwloc_bitmap_copy(all, r->held);
	for (int i = 0; i < r->nowners; i++) {
		snprintf(w, sizeof(w), "%.120s.owners.%.64s", where, r->owners[i].id);
		if (cc_cpulist_parse(r->owners[i].share, one, w, err) < 0)
			return -1;
		hwloc_bitmap_or(all, all, one);
	}
	while (r->nowners)
		cc_noderec_del_owner(r, r->owners[0].id);
	hwloc_bitmap_free(r->held);
	r->held = hwloc_bitmap_iszero(all) ? NULL : cc_steal_ptr(all);
	return 0;
}

static int parse_rec(const json_t *o, const char *where, const struct cc_noderec_schema *schema,
		     struct cc_noderec *r, struct cc_err *err)
{
	const char *const *kinds = schema->kinds, *const *held_kinds = schema->held_kinds;
	static const char *const keys[] = { "path", "kind", "orig", "set", "pending", "seq", "owners", "held", NULL };
	_cleanup_free_ char *held = NULL;
	const char *key;
	const json_t *v, *owners;
	size_t k;

	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, "%s: expected an object", where);
	json_object_foreach((json_t *)o, key, v) {
		for (k = 0; keys[k] && strcmp(keys[k], key); k++)
			;
		if (!keys[k])
			return cc_err_set(err, EINVAL, "%s: unknown field \"%s\"", where, key);
	}
	if (get_str(o, "path", false, false, where, 4096, &r->path, err) < 0 ||
	    get_str(o, "kind", false, false, where, 64, &r->kind, err) < 0 ||
	    get_str(o, "orig", false, true, where, CC_NODEREC_VALUE_MAX, &r->orig, err) < 0 ||
	    get_str(o, "set", true, false, where, CC_NODEREC_VALUE_MAX, &r->set, err) < 0 ||
	    get_str(o, "pending", true, false, where, CC_NODEREC_VALUE_MAX, &r->pending, err) < 0 ||
	    get_str(o, "held", true, false, where, CC_NODEREC_VALUE_MAX, &held, err) < 0)
		return -1;
	if (r->path[0] != '/' || strstr(r->path, "/../") || strstr(r->path, "/./"))
		return cc_err_set(err, EINVAL, "%s.path: expected an absolute path without \".\" or \"..\", got \"%.200s\"",
				  where, r->path);
	for (k = 0; kinds[k] && strcmp(kinds[k], r->kind); k++)
		;
	if (!kinds[k])
		return cc_err_set(err, EINVAL, "%s.kind: unknown kind \"%.64s\"", where, r->kind);
	if (held && !in_list(held_kinds, r->kind))
		return cc_err_set(err, EINVAL, "%s.held: a %s record lists its owners", where, r->kind);
	if (held) {
		char w[256];

		snprintf(w, sizeof(w), "%.200s.held", where);
		if (!(r->held = hwloc_bitmap_alloc()))
			return cc_err_sys(err, ENOMEM, "%s", w);
		if (cc_cpulist_parse(held, r->held, w, err) < 0)
			return -1;
		if (hwloc_bitmap_iszero(r->held))
			r->held = (hwloc_bitmap_free(r->held), NULL);
	}
	v = json_object_get(o, "seq");
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return cc_err_set(err, EINVAL, "%s.seq: expected an integer >= 1", where);
	r->seq = json_integer_value(v);
	owners = json_object_get(o, "owners");
	if (!json_is_object(owners))
		return cc_err_set(err, EINVAL, "%s.owners: expected an object of carve ids", where);
	json_object_foreach((json_t *)owners, key, v) {
		char w[192];
		char *share;

		snprintf(w, sizeof(w), "%s.owners", where);
		if (!key[0] || strlen(key) >= CC_NODEREC_ID_MAX)
			return cc_err_set(err, EINVAL, "%s: expected carve ids as keys", w);
		snprintf(w, sizeof(w), "%.90s.owners.%.64s", where, key);
		if (!json_is_string(v))
			return cc_err_set(err, EINVAL, "%s: expected a string", w);
		if (get_str(owners, key, false, false, w, CC_NODEREC_VALUE_MAX, &share, err) < 0)
			return -1;
		if (cc_noderec_set_owner(r, key, share) < 0) {
			free(share);
			return cc_err_sys(err, ENOMEM, "%s", w);
		}
		free(share);
	}
	if (r->nowners && in_list(held_kinds, r->kind) && fold_owners(r, where, err) < 0)
		return -1;
	return schema->check ? schema->check(r, where, err) : 0;
}

int cc_noderecs_parse(const json_t *section, const struct cc_noderec_schema *schema, struct cc_noderecs *s,
		      struct cc_err *err)
{
	const char *where = schema->where;
	const json_t *files, *f;
	size_t i;

	cc_noderecs_init(s);
	if (!section)
		return 0;
	if (!json_is_object(section))
		return cc_err_set(err, EINVAL, "%s: expected an object", where);
	files = json_object_get(section, "files");
	if (!json_is_array(files))
		return cc_err_set(err, EINVAL, "%s.files: expected an array", where);
	if (json_object_size(section) != 1)
		return cc_err_set(err, EINVAL, "%s: expected only \"files\"", where);
	json_array_foreach(files, i, f) {
		struct cc_noderec *r;
		char w[96];

		snprintf(w, sizeof(w), "%s.files.%zu", where, i);
		r = append(s);
		if (!r) {
			cc_noderecs_fini(s);
			return cc_err_sys(err, ENOMEM, "%s", w);
		}
		if (parse_rec(f, w, schema, r, err) < 0) {
			cc_noderecs_fini(s);
			return -1;
		}
		for (int k = 0; k < s->n - 1; k++)
			if (!strcmp(s->r[k]->path, r->path)) {
				cc_err_set(err, EINVAL, "%s.path: \"%.200s\" recorded twice", w, r->path);
				cc_noderecs_fini(s);
				return -1;
			}
		/* seq orders the live records only: the next is past the last. */
		if (r->seq >= s->next)
			s->next = r->seq + 1;
	}
	return 0;
}

static json_t *rec_json(const struct cc_noderec *r)
{
	_cleanup_json_ json_t *o = json_object();
	json_t *owners = json_object();
	_cleanup_free_ char *held = r->held ? cc_cpulist_format(r->held) : NULL;

	if (!o || !owners || json_object_set_new(o, "owners", owners) < 0 || (r->held && !held))
		return NULL;
	for (int i = 0; i < r->nowners; i++)
		if (json_object_set_new(owners, r->owners[i].id, json_string(r->owners[i].share)) < 0)
			return NULL;
	if (json_object_set_new(o, "path", json_string(r->path)) < 0 ||
	    json_object_set_new(o, "kind", json_string(r->kind)) < 0 ||
	    json_object_set_new(o, "orig", r->orig ? json_string(r->orig) : json_null()) < 0 ||
	    (r->set && json_object_set_new(o, "set", json_string(r->set)) < 0) ||
	    (r->pending && json_object_set_new(o, "pending", json_string(r->pending)) < 0) ||
	    (held && json_object_set_new(o, "held", json_string(held)) < 0) ||
	    json_object_set_new(o, "seq", json_integer(r->seq)) < 0)
		return NULL;
	return cc_steal_ptr(o);
}

json_t *cc_noderecs_json(const struct cc_noderecs *s, struct cc_err *err)
{
	_cleanup_json_ json_t *o = NULL;
	json_t *files;

	if (!s->n)
		return NULL;
	o = json_object();
	files = json_array();
	if (!o || !files || json_object_set_new(o, "files", files) < 0)
		return cc_err_sys(err, ENOMEM, "node records"), NULL;
	for (int i = 0; i < s->n; i++)
		if (json_array_append_new(files, rec_json(s->r[i])) < 0)
			return cc_err_sys(err, ENOMEM, "node records"), NULL;
	return cc_steal_ptr(o);
}

/* ---- a ledger's record section, lazily ---- */

int cc_noderecs_open(struct cc_noderecs *s, struct cc_ledger *l, const char *section,
		     const struct cc_noderec_schema *schema, struct cc_err *err)
{
	cc_noderecs_init(s);
	s->src = calloc(1, sizeof(*s->src));
	if (!s->src)
		return cc_err_sys(err, ENOMEM, "%s", schema->where);
	s->src->l = l;
	snprintf(s->src->section, sizeof(s->src->section), "%s", section);
	s->src->schema = schema;
	s->next = cc_ledger_rec_next(l, section);
	return 0;
}

/* The record of `path` from the ledger into the set (*out NULL: none). */
static int read_one(struct cc_noderecs *s, const char *path, struct cc_noderec **out, struct cc_err *err)
{
	struct cc_noderecs_src *src = s->src;
	_cleanup_json_ json_t *o = NULL;
	struct cc_noderec *r;
	json_t *v = NULL;
	char w[256];
	int found;

	*out = NULL;
	found = cc_ledger_rec_get(src->l, src->section, path, &v, err);
	if (found <= 0)
		return found;
	/* The key is its path. */
	o = json_deep_copy(v);
	if (!o || json_object_set_new(o, "path", json_string(path)) < 0)
		return cc_err_sys(err, ENOMEM, "%s", src->schema->where);
	snprintf(w, sizeof(w), "%.40s[\"%.200s\"]", src->schema->where, path);
	r = append(s);
	if (!r)
		return cc_err_sys(err, ENOMEM, "%s", w);
	if (parse_rec(o, w, src->schema, r, err) < 0) {
		drop_last(s);
		return -1;
	}
	if (r->seq >= s->next)
		s->next = r->seq + 1;
	*out = r;
	return 0;
}

int cc_noderecs_load(struct cc_noderecs *s, const char *const *keys, int nkeys, const char *owner,
		     struct cc_err *err)
{
	struct cc_noderecs_src *src = s->src;
	char **named = NULL;
	int n = 0, rc = 0;

	if (!src || src->all)
		return 0;
	if (src->err.code) {
		if (err)
			*err = src->err;
		return -1;
	}
	for (int i = 0; i < nkeys; i++) {
		struct cc_noderec *r;

		if (!held_in_memory(s, keys[i]) && gone_at(src, keys[i]) < 0 && read_one(s, keys[i], &r, err) < 0)
			return -1;
	}
	if (!owner)
		return 0;
	if (cc_ledger_rec_naming(src->l, src->section, owner, &named, &n, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct cc_noderec *r;

		if (rc == 0 && !held_in_memory(s, named[i]) && gone_at(src, named[i]) < 0 && read_one(s, named[i], &r, err) < 0)
			rc = -1;
		free(named[i]);
	}
	free(named);
	return rc;
}

int cc_noderecs_load_all(struct cc_noderecs *s, struct cc_err *err)
{
	struct cc_noderecs_src *src = s->src;
	json_t *view, *f;
	size_t i;

	if (!src || src->all)
		return 0;
	if (src->err.code) {
		if (err)
			*err = src->err;
		return -1;
	}
	view = cc_ledger_section(src->l, src->section, false);
	if (!view && cc_ledger_failed(src->l, err) < 0)
		return -1;
	json_array_foreach(json_object_get(view, "files"), i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		struct cc_noderec *r;

		if (!path)
			return cc_err_set(err, EINVAL, "%s.files.%zu.path: expected a string", src->schema->where, i);
		if (!held_in_memory(s, path) && gone_at(src, path) < 0 && read_one(s, path, &r, err) < 0)
			return -1;
	}
	src->all = true;
	return 0;
}

int cc_noderecs_store(struct cc_noderecs *s, struct cc_err *err)
{
	struct cc_noderecs_src *src = s->src;

	if (!src)
		return cc_err_set(err, EINVAL, "node records: not read from a ledger");
	if (src->err.code) {
		if (err)
			*err = src->err;
		return -1;
	}
	for (int i = 0; i < src->ngone; i++)
		if (cc_ledger_rec_put(src->l, src->section, src->gone[i], NULL, err) < 0)
			return -1;
	for (int i = 0; i < s->n; i++) {
		json_t *o = rec_json(s->r[i]);

		if (!o)
			return cc_err_sys(err, ENOMEM, "%s", src->schema->where);
		json_object_del(o, "path");
		if (cc_ledger_rec_put(src->l, src->section, s->r[i]->path, o, err) < 0)
			return -1;
	}
	/* An idle node's ledger has no records, and starts its count again. */
	cc_ledger_rec_set_next(src->l, src->section, cc_ledger_rec_count(src->l, src->section) ? s->next : 1);
	return 0;
}
