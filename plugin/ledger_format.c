/* corecarve: ledger.json's bytes: the layout ledger_int.h describes, read
 * whole or by its index, and written.  Every JSON value goes through
 * jansson; this file only decides which bytes each value is. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "digest.h"
#include "ledger_int.h"

static const char *const v1_fields[] = { "version", "carves", "sections", NULL };
static const char *const header_fields[] = { "version", "index", "sections", NULL };
static const char *const index_fields[] = { "taken", "steered", "digest", "carves", NULL };

#define DIGEST_MAX 32

/* The index as the header has it (borrowed from the parsed header). */
struct header {
	json_t *entries;
	const char *taken, *steered, *digest;
};

void ledger_index_free(struct cc_ledger_index *ix)
{
	if (!ix)
		return;
	if (ix->entries)
		json_decref(ix->entries);
	if (ix->taken)
		hwloc_bitmap_free(ix->taken);
	if (ix->steered)
		hwloc_bitmap_free(ix->steered);
	free(ix);
}

/* ---- the digest ------------------------------------------------------- */

/* FNV-1a (digest.h) over the carve lines, then the index: each entry's
 * strings and the two unions, each with its NUL.  The lines come first so
 * that a commit continues the hash of the lines it keeps (`lines_hash`,
 * taken at open) rather than hashing them again. */
static uint64_t fnv_str(uint64_t h, const char *s)
{
	return cc_fnv1a(h, s, strlen(s) + 1);
}

static void index_digest(uint64_t lines_hash, json_t *entries, const char *taken, const char *steered,
			 char out[DIGEST_MAX])
{
	uint64_t h = lines_hash;
	size_t i;
	json_t *e;

	json_array_foreach(entries, i, e)
		for (size_t k = 0; k < 3; k++)
			h = fnv_str(h, json_string_value(json_array_get(e, k)));
	h = fnv_str(fnv_str(h, taken), steered);
	snprintf(out, DIGEST_MAX, "fnv1a64:%016" PRIx64, h);
}

/* ---- pieces shared by both versions ----------------------------------- */

static int check_version(json_t *doc, json_int_t *version, struct cc_err *err)
{
	json_t *v;

	if (!json_is_object(doc))
		return cc_err_set(err, EINVAL, "expected an object at the top level, got %s", ledger_json_type(doc));
	/* The version first: a newer ledger may carry fields this one does not know. */
	v = json_object_get(doc, "version");
	if (!v)
		return cc_err_set(err, EINVAL, "missing field \"version\"");
	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "version: expected an integer, got %s", ledger_json_type(v));
	*version = json_integer_value(v);
	if (*version != CC_LEDGER_VERSION && *version != CC_LEDGER_VERSION_OLD)
		return cc_err_set(err, EPROTO,
				  "version: unsupported ledger version %" JSON_INTEGER_FORMAT
				  " (this corecarve reads versions %d and %d)",
				  *version, CC_LEDGER_VERSION_OLD, CC_LEDGER_VERSION);
	return 0;
}

static int check_sections(json_t *sections, struct cc_err *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(sections))
		return cc_err_set(err, EINVAL, "sections: expected an object, got %s", ledger_json_type(sections));
	json_object_foreach(sections, key, v)
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "sections.%.64s: expected an object, got %s", key,
					  ledger_json_type(v));
	return 0;
}

/* The parsed document is freed by the caller; its sections object lives
 * on in the ledger, no copy needed. */
static int keep_sections(struct cc_ledger *l, json_t *sections, struct cc_err *err)
{
	json_decref(l->sections);
	l->sections = json_incref(sections);
	if (!l->sections)
		return cc_err_sys(err, ENOMEM, "sections");
	return 0;
}

static int grow_carves(struct cc_ledger *l, size_t n, struct cc_err *err)
{
	l->carves = calloc(n ? n : 1, sizeof(*l->carves));
	if (!l->carves)
		return cc_err_sys(err, ENOMEM, "carves");
	return 0;
}

/* ---- version 1: one document ------------------------------------------ */

static int parse_v1(struct cc_ledger *l, json_t *doc, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *ids = json_object();
	json_t *carves, *sections, *v;
	size_t i;

	if (ledger_check_keys(doc, v1_fields, "ledger", err) < 0)
		return -1;
	if (ledger_get_field(doc, "ledger", "carves", &carves, err) < 0 ||
	    ledger_get_field(doc, "ledger", "sections", &sections, err) < 0)
		return -1;
	if (!json_is_array(carves))
		return cc_err_set(err, EINVAL, "carves: expected an array, got %s", ledger_json_type(carves));
	if (check_sections(sections, err) < 0)
		return -1;
	if (!taken || !ids || grow_carves(l, json_array_size(carves), err) < 0)
		return cc_err_sys(err, ENOMEM, "carves");
	json_array_foreach(carves, i, v) {
		struct cc_carve *c = &l->carves[i];
		char what[48];

		snprintf(what, sizeof(what), "carves[%zu]", i);
		cc_carve_init(c);
		l->ncarves = (int)i + 1;
		if (ledger_parse_carve(v, what, c, err) < 0 ||
		    ledger_admit_carve(l, (int)i, ids, taken, what, err) < 0)
			return -1;
	}
	return keep_sections(l, sections, err);
}

/* ---- version 2: a header line, then a line per carve ------------------- */

static int parse_header(json_t *doc, struct header *h, struct cc_err *err)
{
	static const char *const strings[] = { "taken", "steered", "digest" };
	const char **out[] = { &h->taken, &h->steered, &h->digest };
	json_t *index, *sections, *v;

	if (ledger_check_keys(doc, header_fields, "ledger", err) < 0 ||
	    ledger_get_field(doc, "ledger", "index", &index, err) < 0 ||
	    ledger_get_field(doc, "ledger", "sections", &sections, err) < 0 || check_sections(sections, err) < 0)
		return -1;
	if (!json_is_object(index))
		return cc_err_set(err, EINVAL, "index: expected an object, got %s", ledger_json_type(index));
	if (ledger_check_keys(index, index_fields, "index", err) < 0 ||
	    ledger_get_field(index, "index", "carves", &h->entries, err) < 0)
		return -1;
	if (!json_is_array(h->entries))
		return cc_err_set(err, EINVAL, "index.carves: expected an array, got %s", ledger_json_type(h->entries));
	for (size_t k = 0; k < 3; k++) {
		if (ledger_get_field(index, "index", strings[k], &v, err) < 0)
			return -1;
		if (!json_is_string(v))
			return cc_err_set(err, EINVAL, "index.%s: expected a string, got %s", strings[k],
					  ledger_json_type(v));
		*out[k] = json_string_value(v);
	}
	return 0;
}

/* index.carves[i]: [id, kind, cgroup], strings checked as the carve's own
 * fields are: an index-only reader joins the cgroup to the cgroup2 mount
 * (gc) and compares ids (duplicates) without ever parsing the carve. */
static int entry_fields(json_t *e, size_t i, const char *f[3], struct cc_err *err)
{
	char what[48];

	snprintf(what, sizeof(what), "index.carves[%zu]", i);
	if (!json_is_array(e) || json_array_size(e) != 3)
		return cc_err_set(err, EINVAL, "%s: expected [id, kind, cgroup], got %s", what, ledger_json_type(e));
	for (size_t k = 0; k < 3; k++) {
		json_t *s = json_array_get(e, k);

		if (!json_is_string(s))
			return cc_err_set(err, EINVAL, "%s[%zu]: expected a string, got %s", what, k,
					  ledger_json_type(s));
		f[k] = json_string_value(s);
	}
	if (!f[0][0])
		return cc_err_set(err, EINVAL, "%s: empty id", what);
	if (ledger_check_text(f[0], sizeof(((struct cc_carve *)0)->id), true, what, "id", err) < 0 ||
	    ledger_check_text(f[2], sizeof(((struct cc_carve *)0)->cgroup), true, what, "cgroup", err) < 0)
		return -1;
	if (!ledger_in_list(ledger_carve_kinds, f[1]))
		return cc_err_set(err, EINVAL, "%s: kind \"%.32s\" is not container, vm or exec", what, f[1]);
	return ledger_check_cgroup(f[2], what, err);
}

static size_t count_lines(const char *s, size_t len)
{
	const char *end = s + len;
	size_t n = 0;

	for (const char *p = s; p < end && (p = memchr(p, '\n', (size_t)(end - p))); p++)
		n++;
	return n;
}

/* Parse the carve lines s[0, len) (the first is line `lineno` of the file)
 * into l->carves from index l->ncarves on, each admitted against the carves
 * before it (`ids`, `taken`). */
static int parse_lines(struct cc_ledger *l, const char *path, const char *s, size_t len, size_t lineno,
		       json_t *ids, hwloc_bitmap_t taken, struct cc_err *err)
{
	const char *p = s, *end = s + len;

	for (; p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		int i = l->ncarves;
		struct cc_carve *c = &l->carves[i];
		_cleanup_json_ json_t *v = NULL;
		json_error_t je;
		char what[48];

		if (!nl)
			return cc_err_set(err, EINVAL, "%s:%zu: carve line without its newline (a cut-off file?)", path,
					  lineno);
		v = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES, &je);
		if (!v)
			return cc_err_set(err, EINVAL, "%s:%zu:%d: %s", path, lineno, je.column, je.text);
		snprintf(what, sizeof(what), "carves[%d]", i);
		cc_carve_init(c);
		l->ncarves = i + 1;
		if (ledger_parse_carve(v, what, c, err) < 0 || ledger_admit_carve(l, i, ids, taken, what, err) < 0)
			return cc_err_prefix(err, "%s", path);
		p = nl + 1;
	}
	return 0;
}

/* The carves parsed, the index must say the same of them. */
static int check_index(const struct cc_ledger *l, const struct header *h, hwloc_const_bitmap_t taken,
		       struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t steered = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t said = hwloc_bitmap_alloc();
	size_t n = json_array_size(h->entries);
	const char *f[3];

	if (!steered || !said)
		return cc_err_sys(err, ENOMEM, "index");
	if (n != (size_t)l->ncarves)
		return cc_err_set(err, EINVAL, "index.carves: names %zu carves, the file holds %d", n, l->ncarves);
	for (size_t i = 0; i < n; i++) {
		const struct cc_carve *c = &l->carves[i];

		if (entry_fields(json_array_get(h->entries, i), i, f, err) < 0)
			return -1;
		if (strcmp(f[0], c->id) || strcmp(f[1], c->kind) || strcmp(f[2], c->cgroup))
			return cc_err_set(err, EINVAL, "index.carves[%zu]: \"%.64s\" (%s, \"%.64s\") is not carves[%zu]",
					  i, f[0], f[1], f[2], i);
		if (c->steer_irqs &&
		    (hwloc_bitmap_or(steered, steered, c->cpus) < 0 || hwloc_bitmap_or(steered, steered, c->parked) < 0))
			return cc_err_sys(err, ENOMEM, "index");
	}
	if (cc_cpulist_parse(h->taken, said, "index.taken", err) < 0)
		return -1;
	if (!hwloc_bitmap_isequal(said, taken))
		return cc_err_set(err, EINVAL, "index.taken: \"%.64s\" is not the CPUs of the carves", h->taken);
	if (cc_cpulist_parse(h->steered, said, "index.steered", err) < 0)
		return -1;
	if (!hwloc_bitmap_isequal(said, steered))
		return cc_err_set(err, EINVAL, "index.steered: \"%.64s\" is not the CPUs of the steer-away carves",
				  h->steered);
	return 0;
}

static bool digest_matches(const struct header *h, uint64_t lines_hash)
{
	char want[DIGEST_MAX];

	index_digest(lines_hash, h->entries, h->taken, h->steered, want);
	return strcmp(want, h->digest) == 0;
}

/* Every carve parsed, the index checked against them.  The digest is not
 * required to match: it only tells an index-only reader whether it may
 * trust the index (the same carves spelled otherwise, by hand or by
 * another build, are the same ledger; the next commit writes them anew). */
static int parse_v2_whole(struct cc_ledger *l, const char *path, const struct header *h, const char *lines,
			  size_t len, size_t lineno, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *ids = json_object();

	if (!taken || !ids || grow_carves(l, count_lines(lines, len) + 1, err) < 0)
		return cc_err_sys(err, ENOMEM, "%s: carves", path);
	if (parse_lines(l, path, lines, len, lineno, ids, taken, err) < 0)
		return -1;
	if (check_index(l, h, taken, err) < 0)
		return cc_err_prefix(err, "%s", path);
	return 0;
}

/* The index alone, when it can be trusted: well formed, one entry per
 * line, and the digest of index and lines as the writer left it.  1 when
 * it cannot (the caller reads the whole file, which says what is wrong or
 * loads the same carves spelled another way). */
static int parse_v2_index(struct cc_ledger *l, const struct header *h, size_t lines_off, const char *lines,
			  size_t len, struct cc_err *err)
{
	struct cc_ledger_index *ix = calloc(1, sizeof(*ix));
	struct cc_err why = CC_ERR_INIT; /* dropped: the whole read reports it */
	size_t n = json_array_size(h->entries);
	const char *f[3];
	int rc = 1;

	if (!ix || !(ix->taken = hwloc_bitmap_alloc()) || !(ix->steered = hwloc_bitmap_alloc())) {
		rc = cc_err_sys(err, ENOMEM, "index");
		goto out;
	}
	ix->entries = json_incref(h->entries);
	ix->lines_off = lines_off;
	ix->lines_len = len;
	ix->lines_hash = cc_fnv1a(CC_FNV1A_INIT, lines, len);
	for (size_t i = 0; i < n; i++)
		if (entry_fields(json_array_get(h->entries, i), i, f, &why) < 0)
			goto out;
	if (n != count_lines(lines, len) || (len && lines[len - 1] != '\n'))
		goto out;
	if (cc_cpulist_parse(h->taken, ix->taken, "index.taken", &why) < 0 ||
	    cc_cpulist_parse(h->steered, ix->steered, "index.steered", &why) < 0 || !digest_matches(h, ix->lines_hash))
		goto out;
	l->index = ix;
	ix = NULL;
	rc = 0;
out:
	ledger_index_free(ix);
	return rc;
}

int ledger_parse(struct cc_ledger *l, const char *path, const char *buf, size_t len, bool index_only,
		 struct cc_err *err)
{
	_cleanup_json_ json_t *doc = NULL;
	struct header h = { 0 };
	json_int_t version = 0;
	json_error_t je;
	size_t end;

	/* The first document only: the header of a version-2 file, the
	 * whole of a version-1 one. */
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &je);
	if (doc && check_version(doc, &version, err) < 0)
		return cc_err_prefix(err, "%s", path);
	if (!doc || version == CC_LEDGER_VERSION_OLD) {
		/* Again, as the one document it must be: its errors say where. */
		json_decref(doc);
		doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
		if (!doc)
			return cc_err_set(err, EINVAL, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		if (check_version(doc, &version, err) < 0 || version != CC_LEDGER_VERSION_OLD || parse_v1(l, doc, err) < 0)
			return cc_err_prefix(err, "%s", path);
		return 0;
	}
	end = (size_t)je.position;
	if (end >= len || buf[end] != '\n')
		return cc_err_set(err, EINVAL, "%s:%d:%d: a newline must end the header", path, je.line, je.column);
	if (parse_header(doc, &h, err) < 0 || keep_sections(l, json_object_get(doc, "sections"), err) < 0)
		return cc_err_prefix(err, "%s", path);
	end++;
	if (index_only) {
		int r = parse_v2_index(l, &h, end, buf + end, len - end, err);

		if (r <= 0)
			return r < 0 ? cc_err_prefix(err, "%s", path) : 0;
	}
	return parse_v2_whole(l, path, &h, buf + end, len - end, count_lines(buf, end) + 1, err);
}

int ledger_parse_lines(struct cc_ledger *l, struct cc_err *err)
{
	struct cc_ledger_index *ix = l->index;
	struct cc_carve *added = l->carves;
	int nadded = l->ncarves, nparsed = -1; /* -1: lines not all parsed */
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *ids = json_object();
	_cleanup_free_ char *t = NULL, *s = NULL;
	char path[PATH_MAX + 32];
	struct header h = { 0 };

	if (!ix)
		return 0;
	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, l->dir);
	l->carves = NULL;
	l->ncarves = 0;
	if (!taken || !ids || grow_carves(l, json_array_size(ix->entries) + (size_t)nadded, err) < 0) {
		cc_err_sys(err, ENOMEM, "%s: carves", path);
		goto undo;
	}
	if (parse_lines(l, path, l->snapshot + ix->lines_off, ix->lines_len, 2, ids, taken, err) < 0)
		goto undo;
	nparsed = l->ncarves;
	/* The digest matched at open; the lines must say what the index
	 * said, as in a whole read. */
	h.entries = ix->entries;
	h.taken = t = cc_cpulist_format(ix->taken);
	h.steered = s = cc_cpulist_format(ix->steered);
	if (!t || !s) {
		cc_err_sys(err, ENOMEM, "%s: index", path);
		goto undo;
	}
	if (check_index(l, &h, taken, err) < 0) {
		cc_err_prefix(err, "%s", path);
		goto undo;
	}
	/* Those added since were checked against the index; once more
	 * against the carves themselves. */
	for (int j = 0; j < nadded; j++) {
		char what[300];

		l->carves[nparsed + j] = added[j];
		l->ncarves = nparsed + j + 1;
		snprintf(what, sizeof(what), "carve \"%.256s\"", added[j].id);
		if (ledger_admit_carve(l, nparsed + j, ids, taken, what, err) < 0)
			goto undo;
	}
	free(added);
	ledger_index_free(ix);
	l->index = NULL;
	return 0;
undo:
	/* As it was: the parsed carves go, the added ones (still owned by
	 * `added`) come back. */
	if (nparsed < 0)
		nparsed = l->ncarves;
	for (int i = 0; i < nparsed; i++)
		cc_carve_fini(&l->carves[i]);
	free(l->carves);
	l->carves = added;
	l->ncarves = nadded;
	return -1;
}

/* ---- writing ---------------------------------------------------------- */

static int set_new(json_t *obj, const char *key, json_t *v)
{
	return v ? json_object_set_new(obj, key, v) : -1;
}

char *ledger_serialize(const struct cc_ledger *l, size_t *lines_off, struct cc_err *err)
{
	const struct cc_ledger_index *ix = l->index;
	const char *old = ix ? l->snapshot + ix->lines_off : "";
	size_t old_len = ix ? ix->lines_len : 0, new_len = 0, head_len;
	_cleanup_json_ json_t *doc = json_object(), *index = json_object(), *entries = json_array();
	_cleanup_bitmap_ hwloc_bitmap_t taken = ix ? hwloc_bitmap_dup(ix->taken) : hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t steered = ix ? hwloc_bitmap_dup(ix->steered) : hwloc_bitmap_alloc();
	_cleanup_free_ char *added = NULL, *head = NULL, *t = NULL, *s = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char digest[DIGEST_MAX], *out;

	if (!doc || !index || !entries || !taken || !steered || (ix && json_array_extend(entries, ix->entries) < 0))
		goto nomem;
	f = open_memstream(&added, &new_len);
	if (!f)
		goto nomem;
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = &l->carves[i];
		_cleanup_json_ json_t *o = ledger_carve_to_json(c);
		_cleanup_free_ char *line = o ? json_dumps(o, 0) : NULL;

		if (!line)
			return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": carve \"%s\" cannot be serialised",
					  l->dir, c->id),
			       NULL;
		if (fputs(line, f) < 0 || fputc('\n', f) < 0 ||
		    json_array_append_new(entries, json_pack("[sss]", c->id, c->kind, c->cgroup)) < 0 ||
		    hwloc_bitmap_or(taken, taken, c->cpus) < 0 || hwloc_bitmap_or(taken, taken, c->parked) < 0)
			goto nomem;
		if (c->steer_irqs &&
		    (hwloc_bitmap_or(steered, steered, c->cpus) < 0 || hwloc_bitmap_or(steered, steered, c->parked) < 0))
			goto nomem;
	}
	if (fclose(f) != 0) {
		f = NULL;
		goto nomem;
	}
	f = NULL;
	t = cc_cpulist_format(taken);
	s = cc_cpulist_format(steered);
	if (!t || !s)
		goto nomem;
	index_digest(cc_fnv1a(ix ? ix->lines_hash : CC_FNV1A_INIT, added ? added : "", new_len), entries, t, s,
		     digest);
	if (set_new(doc, "version", json_integer(CC_LEDGER_VERSION)) < 0 ||
	    set_new(index, "taken", json_string(t)) < 0 || set_new(index, "steered", json_string(s)) < 0 ||
	    set_new(index, "digest", json_string(digest)) < 0 || set_new(index, "carves", json_incref(entries)) < 0 ||
	    set_new(doc, "index", json_incref(index)) < 0 || set_new(doc, "sections", json_incref(l->sections)) < 0)
		goto nomem;
	head = json_dumps(doc, 0);
	if (!head)
		goto nomem;
	head_len = strlen(head);
	out = malloc(head_len + 1 + old_len + new_len + 1);
	if (!out)
		goto nomem;
	memcpy(out, head, head_len);
	out[head_len] = '\n';
	memcpy(out + head_len + 1, old, old_len);
	memcpy(out + head_len + 1 + old_len, added ? added : "", new_len);
	out[head_len + 1 + old_len + new_len] = '\0';
	*lines_off = head_len + 1;
	return out;
nomem:
	return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
}
