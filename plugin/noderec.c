/* corecarve: node records (noderec.h): the record type, its owners and
 * its strict JSON. */
#define _GNU_SOURCE
#include "noderec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

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
	memset(r, 0, sizeof(*r));
}

void cc_noderecs_fini(struct cc_noderecs *s)
{
	for (int i = 0; i < s->n; i++)
		rec_fini(&s->r[i]);
	free(s->r);
	cc_noderecs_init(s);
}

struct cc_noderec *cc_noderecs_find(const struct cc_noderecs *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->r[i].path, path))
			return &s->r[i];
	return NULL;
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

static struct cc_noderec *append(struct cc_noderecs *s)
{
	struct cc_noderec *grown = realloc(s->r, (size_t)(s->n + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	s->r = grown;
	memset(&s->r[s->n], 0, sizeof(s->r[s->n]));
	return &s->r[s->n++];
}

struct cc_noderec *cc_noderecs_add(struct cc_noderecs *s, const char *path, const char *kind, const char *orig)
{
	struct cc_noderec *r = append(s);

	if (!r)
		return NULL;
	if (cc_noderec_put(&r->path, path) < 0 || cc_noderec_put(&r->kind, kind) < 0 ||
	    cc_noderec_put(&r->orig, orig) < 0) {
		rec_fini(r);
		s->n--;
		return NULL;
	}
	r->seq = s->next++;
	return r;
}

void cc_noderecs_del(struct cc_noderecs *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->r[i].path, path)) {
			rec_fini(&s->r[i]);
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

static int parse_rec(const json_t *o, const char *where, const char *const *kinds, struct cc_noderec *r,
		     struct cc_err *err)
{
	static const char *const keys[] = { "path", "kind", "orig", "set", "pending", "seq", "owners", NULL };
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
	    get_str(o, "pending", true, false, where, CC_NODEREC_VALUE_MAX, &r->pending, err) < 0)
		return -1;
	if (r->path[0] != '/' || strstr(r->path, "/../") || strstr(r->path, "/./"))
		return cc_err_set(err, EINVAL, "%s.path: expected an absolute path without \".\" or \"..\", got \"%.200s\"",
				  where, r->path);
	for (k = 0; kinds[k] && strcmp(kinds[k], r->kind); k++)
		;
	if (!kinds[k])
		return cc_err_set(err, EINVAL, "%s.kind: unknown kind \"%.64s\"", where, r->kind);
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
	return 0;
}

int cc_noderecs_parse(const json_t *section, const char *where, const char *const *kinds,
		      struct cc_noderecs *s, struct cc_err *err)
{
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
		if (parse_rec(f, w, kinds, r, err) < 0) {
			cc_noderecs_fini(s);
			return -1;
		}
		for (int k = 0; k < s->n - 1; k++)
			if (!strcmp(s->r[k].path, r->path)) {
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

	if (!o || !owners || json_object_set_new(o, "owners", owners) < 0)
		return NULL;
	for (int i = 0; i < r->nowners; i++)
		if (json_object_set_new(owners, r->owners[i].id, json_string(r->owners[i].share)) < 0)
			return NULL;
	if (json_object_set_new(o, "path", json_string(r->path)) < 0 ||
	    json_object_set_new(o, "kind", json_string(r->kind)) < 0 ||
	    json_object_set_new(o, "orig", r->orig ? json_string(r->orig) : json_null()) < 0 ||
	    (r->set && json_object_set_new(o, "set", json_string(r->set)) < 0) ||
	    (r->pending && json_object_set_new(o, "pending", json_string(r->pending)) < 0) ||
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
		if (json_array_append_new(files, rec_json(&s->r[i])) < 0)
			return cc_err_sys(err, ENOMEM, "node records"), NULL;
	return cc_steal_ptr(o);
}
