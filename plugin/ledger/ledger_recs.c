/* corecarve: the ledger's record sections (ledger_int.h): node records kept
 * one per line, sorted by key, read one at a time.  Every value still goes
 * through jansson; the bytes are only cut at newlines and, to find the
 * lines that may name a carve, searched for the string jansson writes for
 * its id. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "digest.h"
#include "ledger_int.h"

const char *const ledger_rec_sections[] = { "cgroup", NULL };

bool ledger_is_rec_section(const char *name)
{
	return name && ledger_in_list(ledger_rec_sections, name);
}

struct ledger_recset *ledger_recset(struct cc_ledger *l, const char *name)
{
	for (int k = 0; ledger_rec_sections[k]; k++)
		if (!strcmp(ledger_rec_sections[k], name)) {
			if (!l->recs) {
				l->recs = calloc(LEDGER_NRECSETS, sizeof(*l->recs));
				if (!l->recs)
					return NULL;
				for (int j = 0; j < LEDGER_NRECSETS; j++) {
					l->recs[j].name = ledger_rec_sections[j];
					l->recs[j].next = 1;
				}
			}
			return &l->recs[k];
		}
	return NULL;
}

static void rec_fini(struct ledger_rec *r)
{
	free(r->key);
	if (r->val)
		json_decref(r->val);
	memset(r, 0, sizeof(*r));
}

static void set_stale(struct ledger_recset *s)
{
	if (s->view)
		json_decref(s->view);
	s->view = NULL;
}

static void recset_clear(struct ledger_recset *s)
{
	for (int i = 0; i < s->n; i++)
		rec_fini(&s->r[i]);
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
	s->next = 1;
	set_stale(s);
}

void ledger_recs_free(struct cc_ledger *l)
{
	if (!l->recs)
		return;
	for (int k = 0; k < LEDGER_NRECSETS; k++)
		recset_clear(&l->recs[k]);
	free(l->recs);
	l->recs = NULL;
}

int ledger_recs_count(const struct cc_ledger *l)
{
	int n = 0;

	for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++)
		n += l->recs[k].n;
	return n;
}

static int grow(struct ledger_recset *s, int n)
{
	struct ledger_rec *r;

	if (n <= s->cap)
		return 0;
	r = realloc(s->r, (size_t)n * sizeof(*r));
	if (!r)
		return -1;
	s->r = r;
	s->cap = n;
	return 0;
}

/* ---- lines ------------------------------------------------------------ */

int ledger_rec_parse_line(const char *p, size_t len, char **key, json_t **val, const char *path, size_t lineno,
			  const char *section, struct cc_err *err)
{
	_cleanup_json_ json_t *k = NULL, *v = NULL;
	json_error_t je;
	size_t at;

	/* Two values: the key, then the record. */
	k = json_loadb(p, len, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &je);
	if (!k)
		return cc_err_set(err, EINVAL, "%s:%zu:%d: %s", path, lineno, je.column, je.text);
	if (!json_is_string(k) || !json_string_length(k))
		return cc_err_set(err, EINVAL, "%s:%zu: records.%s: expected \"<key>\" {record}, got %s first", path,
				  lineno, section, json_is_string(k) ? "an empty key" : ledger_json_type(k));
	if (ledger_check_text(json_string_value(k), LEDGER_REC_KEY_MAX, true, "records", section, err) < 0)
		return cc_err_prefix(err, "%s:%zu", path, lineno);
	at = (size_t)je.position;
	if (val) {
		v = json_loadb(p + at, len - at, JSON_REJECT_DUPLICATES, &je);
		if (!v)
			return cc_err_set(err, EINVAL, "%s:%zu:%zu: %s", path, lineno, at + (size_t)je.column, je.text);
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "%s:%zu: records.%s.%.200s: expected an object, got %s", path, lineno,
					  section, json_string_value(k), ledger_json_type(v));
	}
	*key = strdup(json_string_value(k));
	if (!*key)
		return cc_err_sys(err, ENOMEM, "%s: records", path);
	if (val)
		*val = cc_steal_ptr(v);
	return 0;
}

static void file_path(const struct cc_ledger *l, char *out, size_t len)
{
	snprintf(out, len, "%s/" CC_LEDGER_FILE, l->dir);
}

/* The key of record i, parsing its line when it has not been yet. */
static const char *key_at(struct cc_ledger *l, struct ledger_recset *s, int i, struct cc_err *err)
{
	struct ledger_rec *r = &s->r[i];
	char path[PATH_MAX + 32];

	if (r->key)
		return r->key;
	file_path(l, path, sizeof(path));
	if (ledger_rec_parse_line(l->snapshot + r->off, r->len - 1, &r->key, NULL, path, s->lineno + (size_t)i,
				  s->name, err) < 0)
		return NULL;
	return r->key;
}

static int val_at(struct cc_ledger *l, struct ledger_recset *s, int i, struct cc_err *err)
{
	struct ledger_rec *r = &s->r[i];
	char path[PATH_MAX + 32], *key = NULL;
	int rc;

	if (r->val)
		return 0;
	file_path(l, path, sizeof(path));
	rc = ledger_rec_parse_line(l->snapshot + r->off, r->len - 1, &key, &r->val, path, s->lineno + (size_t)i, s->name,
				   err);
	if (rc == 0 && r->key && strcmp(key, r->key))
		rc = cc_err_set(err, EINVAL, "%s: records.%s: line %zu changed under the ledger", path, s->name,
				s->lineno + (size_t)i);
	if (rc == 0 && !r->key)
		r->key = cc_steal_ptr(key);
	free(key);
	return rc;
}

/* Binary search: the index of `key`, or -(insertion point) - 1.  The
 * lines are in key order (a whole read checks it; an index-only read
 * trusts the writer's digest). */
static int search(struct cc_ledger *l, struct ledger_recset *s, const char *key, int *at, struct cc_err *err)
{
	int lo = 0, hi = s->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, c;
		const char *k = key_at(l, s, mid, err);

		if (!k)
			return -1;
		c = strcmp(k, key);
		if (c == 0) {
			*at = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return 0;
}

/* A lazy read that failed sticks: whatever the caller does with its error,
 * the ledger refuses to commit afterwards. */
static int stick(struct cc_ledger *l, struct cc_err *e, struct cc_err *err)
{
	if (!l->lazy_err.code)
		l->lazy_err = *e;
	if (err)
		*err = *e;
	return -1;
}

int cc_ledger_rec_get(struct cc_ledger *l, const char *section, const char *key, json_t **out, struct cc_err *err)
{
	struct ledger_recset *s = ledger_recset(l, section);
	struct cc_err e = CC_ERR_INIT;
	int at, r;

	*out = NULL;
	if (!s)
		return cc_err_set(err, EINVAL, "ledger: \"%s\" is not a record section", section);
	r = search(l, s, key, &at, &e);
	if (r < 0 || (r > 0 && val_at(l, s, at, &e) < 0))
		return stick(l, &e, err);
	if (r > 0)
		*out = s->r[at].val;
	return r;
}

static int rec_put(struct cc_ledger *l, const char *section, const char *key, json_t *val, struct cc_err *err)
{
	_cleanup_json_ json_t *v = val;
	struct ledger_recset *s = ledger_recset(l, section);
	struct cc_err e = CC_ERR_INIT;
	struct ledger_rec *r;
	int at, found;

	if (!s)
		return cc_err_set(err, EINVAL, "ledger: \"%s\" is not a record section", section);
	if (v && !json_is_object(v))
		return cc_err_set(err, EINVAL, "records.%s.%.200s: expected an object", section, key);
	if (!key[0] || ledger_check_text(key, LEDGER_REC_KEY_MAX, false, "records", section, err) < 0)
		return key[0] ? -1 : cc_err_set(err, EINVAL, "records.%s: empty key", section);
	found = search(l, s, key, &at, &e);
	if (found < 0)
		return stick(l, &e, err);
	if (found) {
		r = &s->r[at];
		if (!v) {
			rec_fini(r);
			memmove(r, r + 1, (size_t)(s->n - at - 1) * sizeof(*r));
			s->n--;
		} else {
			/* Unchanged: its line stays as it is. */
			if (val_at(l, s, at, &e) < 0)
				return stick(l, &e, err);
			if (json_equal(r->val, v))
				return 0;
			json_decref(r->val);
			r->val = cc_steal_ptr(v);
			r->changed = true;
		}
	} else {
		if (!v)
			return 0;
		if (grow(s, s->n + 1) < 0)
			return cc_err_sys(err, ENOMEM, "records.%s", section);
		r = &s->r[at];
		memmove(r + 1, r, (size_t)(s->n - at) * sizeof(*r));
		memset(r, 0, sizeof(*r));
		s->n++;
		r->key = strdup(key);
		if (!r->key) {
			memmove(r, r + 1, (size_t)(s->n - at - 1) * sizeof(*r));
			s->n--;
			return cc_err_sys(err, ENOMEM, "records.%s", section);
		}
		r->val = cc_steal_ptr(v);
		r->changed = true;
	}
	set_stale(s);
	l->dirty = true;
	return 0;
}

int cc_ledger_rec_put(struct cc_ledger *l, const char *section, const char *key, json_t *val, struct cc_err *err)
{
	if (l->readonly) {
		if (val)
			json_decref(val);
		return cc_err_set(err, EPERM, "records.%s: ledger opened read-only", section);
	}
	return rec_put(l, section, key, val, err);
}

/* Whether `word` is a string of `v`: an object's key or a string value. */
static bool names(const json_t *v, const char *word)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return !strcmp(json_string_value(v), word);
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, x)
			if (!strcmp(k, word) || names(x, word))
				return true;
		return false;
	case JSON_ARRAY:
		json_array_foreach(v, i, x)
			if (names(x, word))
				return true;
		return false;
	default:
		return false;
	}
}

int cc_ledger_rec_naming(struct cc_ledger *l, const char *section, const char *word, char ***keys, int *n,
			 struct cc_err *err)
{
	struct ledger_recset *s = ledger_recset(l, section);
	_cleanup_json_ json_t *w = json_string(word);
	_cleanup_free_ char *needle = NULL;
	struct cc_err e = CC_ERR_INIT;
	char **out = NULL;
	size_t nlen;
	int k = 0;

	*keys = NULL;
	*n = 0;
	if (!s)
		return cc_err_set(err, EINVAL, "ledger: \"%s\" is not a record section", section);
	/* The bytes jansson writes for the string: a line that does not hold
	 * them, written by the ledger's writer, cannot name it. */
	needle = w ? json_dumps(w, JSON_ENCODE_ANY) : NULL;
	if (!needle || !(out = calloc((size_t)s->n + 1, sizeof(*out))))
		return cc_err_sys(err, ENOMEM, "records.%s", section);
	nlen = strlen(needle);
	for (int i = 0; i < s->n; i++) {
		struct ledger_rec *r = &s->r[i];

		if (!r->val && !memmem(l->snapshot + r->off, r->len, needle, nlen))
			continue;
		if (val_at(l, s, i, &e) < 0) {
			for (int j = 0; j < k; j++)
				free(out[j]);
			free(out);
			return stick(l, &e, err);
		}
		if (!strcmp(r->key, word) || names(r->val, word)) {
			if (!(out[k] = strdup(r->key))) {
				for (int j = 0; j < k; j++)
					free(out[j]);
				free(out);
				return cc_err_sys(err, ENOMEM, "records.%s", section);
			}
			k++;
		}
	}
	*keys = out;
	*n = k;
	return 0;
}

long long cc_ledger_rec_next(struct cc_ledger *l, const char *section)
{
	struct ledger_recset *s = ledger_recset(l, section);

	return s ? s->next : 1;
}

void cc_ledger_rec_set_next(struct cc_ledger *l, const char *section, long long next)
{
	struct ledger_recset *s = ledger_recset(l, section);

	if (s && s->next != next) {
		s->next = next;
		l->dirty = true;
	}
}

int cc_ledger_rec_count(struct cc_ledger *l, const char *section)
{
	struct ledger_recset *s = ledger_recset(l, section);

	return s ? s->n : 0;
}

/* ---- the section as {"files": [...]} ---------------------------------- */

json_t *ledger_recs_view(struct cc_ledger *l, const char *name)
{
	struct ledger_recset *s = ledger_recset(l, name);
	struct cc_err e = CC_ERR_INIT;
	json_t *files;

	if (!s || !s->n)
		return NULL;
	if (s->view)
		return s->view;
	s->view = json_object();
	files = json_array();
	if (!s->view || !files || json_object_set_new(s->view, "files", files) < 0)
		goto fail;
	for (int i = 0; i < s->n; i++) {
		json_t *o;

		if (val_at(l, s, i, &e) < 0) {
			stick(l, &e, NULL);
			goto fail;
		}
		o = json_deep_copy(s->r[i].val);
		if (!o || json_object_set_new(o, "path", json_string(s->r[i].key)) < 0 || json_array_append_new(files, o) < 0)
			goto fail;
	}
	return s->view;
fail:
	set_stale(s);
	return NULL;
}

int ledger_recs_from_section(struct cc_ledger *l, const char *name, json_t *section, struct cc_err *err)
{
	struct ledger_recset *s = ledger_recset(l, name);
	json_t *files, *f;
	size_t i;

	if (!s)
		return cc_err_sys(err, ENOMEM, "sections.%s", name);
	if (section && (!json_is_object(section) || !json_is_array(files = json_object_get(section, "files")) ||
			json_object_size(section) != 1))
		return cc_err_set(err, EINVAL, "sections.%s: expected {\"files\": [records]}", name);
	recset_clear(s);
	l->dirty = true;
	if (!section)
		return 0;
	json_array_foreach(files, i, f) {
		json_t *path = json_object_get(f, "path"), *v;
		long long seq;

		if (!json_is_object(f) || !json_is_string(path))
			return cc_err_set(err, EINVAL, "sections.%s.files.%zu.path: expected a string", name, i);
		v = json_deep_copy(f);
		if (!v)
			return cc_err_sys(err, ENOMEM, "sections.%s", name);
		json_object_del(v, "path");
		/* The next sequence number is past every record's. */
		seq = json_is_integer(json_object_get(f, "seq")) ? (long long)json_integer_value(json_object_get(f, "seq")) : 0;
		if (seq >= s->next)
			s->next = seq + 1;
		if (cc_ledger_rec_get(l, name, json_string_value(path), &(json_t *){ NULL }, err) != 0) {
			json_decref(v);
			return err->code ? -1 : cc_err_set(err, EINVAL, "sections.%s.files.%zu.path: \"%.200s\" recorded twice",
							    name, i, json_string_value(path));
		}
		if (rec_put(l, name, json_string_value(path), v, err) < 0)
			return cc_err_prefix(err, "sections.%s.files.%zu", name, i);
	}
	return 0;
}

/* ---- reading and writing the block ------------------------------------ */

int ledger_recs_cut(struct ledger_recset *s, const char *buf, size_t off, size_t len, size_t lineno, int n,
		    bool parse, const char *path, struct cc_err *err)
{
	const char *p = buf + off, *end = p + len;

	if (grow(s, n) < 0)
		return cc_err_sys(err, ENOMEM, "%s: records", path);
	s->lineno = lineno;
	for (int i = 0; i < n; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct ledger_rec *r = &s->r[i];

		if (!nl)
			return cc_err_set(err, EINVAL, "%s:%zu: line without its newline (a cut-off file?)", path,
					  lineno + (size_t)i);
		if (nl == p)
			return cc_err_set(err, EINVAL, "%s:%zu: records.%s: empty line", path, lineno + (size_t)i, s->name);
		memset(r, 0, sizeof(*r));
		r->off = (size_t)(p - buf);
		r->len = (size_t)(nl + 1 - p);
		s->n = i + 1;
		p = nl + 1;
		if (!parse)
			continue;
		if (ledger_rec_parse_line(buf + r->off, r->len - 1, &r->key, &r->val, path, lineno + (size_t)i, s->name,
					  err) < 0)
			return -1;
		if (i && strcmp(s->r[i - 1].key, r->key) >= 0)
			return cc_err_set(err, EINVAL, "%s:%zu: records.%s: \"%.200s\" after \"%.200s\": the keys must be in order, each once",
					  path, lineno + (size_t)i, s->name, r->key, s->r[i - 1].key);
	}
	return 0;
}

/* A record line's hash, and the block's: FNV-1a over the lines' hashes
 * (eight bytes each, least significant first), so that a commit that
 * rewrites a few records hashes those lines and not the block. */
static uint64_t line_hash(const char *p, size_t len)
{
	return cc_fnv1a(CC_FNV1A_INIT, p, len);
}

static uint64_t fold_hash(uint64_t h, uint64_t line)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(line >> (8 * i));
	return cc_fnv1a(h, b, sizeof(b));
}

uint64_t ledger_recs_hash(struct cc_ledger *l, const char *buf)
{
	uint64_t h = CC_FNV1A_INIT;

	for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++) {
		struct ledger_recset *s = &l->recs[k];

		for (int i = 0; i < s->n; i++) {
			struct ledger_rec *r = &s->r[i];

			if (!r->hashed) {
				r->hash = line_hash(buf + r->off, r->len);
				r->hashed = true;
			}
			h = fold_hash(h, r->hash);
		}
	}
	return h;
}

int ledger_recs_write(struct cc_ledger *l, char **out, size_t *outlen, uint64_t *hash, struct ledger_rec_at *at,
		      struct cc_err *err)
{
	int n = ledger_recs_count(l), k2 = 0;
	char **fresh = calloc((size_t)n + 1, sizeof(*fresh));
	size_t total = 0, pos = 0;
	uint64_t h = CC_FNV1A_INIT;
	char *buf = NULL;
	int rc = -1;

	*out = NULL;
	*outlen = 0;
	if (!fresh)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": records", l->dir);
	/* The lines written anew, then one copy of every line. */
	for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++) {
		struct ledger_recset *s = &l->recs[k];

		for (int i = 0; i < s->n; i++, k2++) {
			struct ledger_rec *r = &s->r[i];

			if (r->changed || !l->snapshot || !r->len) {
				_cleanup_json_ json_t *kj = json_string(r->key);
				_cleanup_free_ char *key = kj ? json_dumps(kj, JSON_ENCODE_ANY) : NULL;
				_cleanup_free_ char *val = r->val ? json_dumps(r->val, 0) : NULL;

				if (!key || !val || asprintf(&fresh[k2], "%s %s\n", key, val) < 0) {
					fresh[k2] = NULL;
					cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": records.%s", l->dir, s->name);
					goto out;
				}
				at[k2].len = strlen(fresh[k2]);
			} else {
				at[k2].len = r->len;
			}
			total += at[k2].len;
		}
	}
	buf = malloc(total + 1);
	if (!buf) {
		cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": records", l->dir);
		goto out;
	}
	k2 = 0;
	for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++) {
		struct ledger_recset *s = &l->recs[k];

		for (int i = 0; i < s->n; i++, k2++) {
			struct ledger_rec *r = &s->r[i];
			const char *line = fresh[k2] ? fresh[k2] : l->snapshot + r->off;

			memcpy(buf + pos, line, at[k2].len);
			at[k2].off = pos;
			at[k2].hash = !fresh[k2] && r->hashed ? r->hash : line_hash(line, at[k2].len);
			h = fold_hash(h, at[k2].hash);
			pos += at[k2].len;
		}
	}
	buf[pos] = '\0';
	*out = buf;
	*outlen = pos;
	*hash = h;
	rc = 0;
out:
	for (int i = 0; i < n; i++)
		free(fresh[i]);
	free(fresh);
	return rc;
}

void ledger_recs_written(struct cc_ledger *l, const struct ledger_rec_at *at, size_t lineno)
{
	int k2 = 0;

	for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++) {
		struct ledger_recset *s = &l->recs[k];

		s->lineno = lineno;
		lineno += (size_t)s->n;
		for (int i = 0; i < s->n; i++, k2++) {
			s->r[i].off = at[k2].off;
			s->r[i].len = at[k2].len;
			s->r[i].hash = at[k2].hash;
			s->r[i].hashed = true;
			s->r[i].changed = false;
		}
	}
}
