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
static const char *const index_fields[] = { "carves", "taken", "steered", "digest", NULL };

#define DIGEST_MAX 32

/* The header's index (strings borrowed from the parsed header). */
struct header {
	size_t ncarves;
	const char *taken, *steered, *digest;
};

/* Where the two blocks of lines are in the file's bytes. */
struct blocks {
	const char *entries, *lines;
	size_t entries_len, lines_len;
	size_t entries_lineno, lines_lineno; /* the file's line number of each block's first line */
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

/* FNV-1a (digest.h) of each block of lines, then of both hashes and the two
 * unions: a commit continues each block's hash over the lines it appends
 * rather than hashing the lines it keeps again. */
static void index_digest(uint64_t entries_hash, uint64_t lines_hash, const char *taken, const char *steered,
			 char out[DIGEST_MAX])
{
	char both[40];
	uint64_t h;

	snprintf(both, sizeof(both), "%016" PRIx64 " %016" PRIx64, entries_hash, lines_hash);
	h = cc_fnv1a(CC_FNV1A_INIT, both, strlen(both) + 1);
	h = cc_fnv1a(h, taken, strlen(taken) + 1);
	h = cc_fnv1a(h, steered, strlen(steered) + 1);
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


/* ---- version 2: a header, an entry line and a carve line per carve ---- */

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
	    ledger_get_field(index, "index", "carves", &v, err) < 0)
		return -1;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)CC_LEDGER_MAX)
		return cc_err_set(err, EINVAL, "index.carves: expected a count of carves, got %s", ledger_json_type(v));
	h->ncarves = (size_t)json_integer_value(v);
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

/* entries[i]: [id, kind, cgroup] or, for a carve kept as releasing,
 * [id, kind, cgroup, "releasing"] (gc retries those from the index
 * alone); strings checked as the carve's own fields
 * are: an index-only reader joins the cgroup to the cgroup2 mount (gc) and
 * compares ids (duplicates) without ever parsing the carve. */
static int entry_fields(json_t *e, size_t i, const char *f[3], struct cc_err *err)
{
	char what[48];

	snprintf(what, sizeof(what), "entries[%zu]", i);
	if (!json_is_array(e) || json_array_size(e) < 3 || json_array_size(e) > 4)
		return cc_err_set(err, EINVAL, "%s: expected [id, kind, cgroup] or [id, kind, cgroup, \"releasing\"], got %s",
				  what, json_is_array(e) ? "another array" : ledger_json_type(e));
	if (json_array_size(e) == 4 && (!json_is_string(json_array_get(e, 3)) ||
					strcmp(json_string_value(json_array_get(e, 3)), "releasing")))
		return cc_err_set(err, EINVAL, "%s[3]: expected \"releasing\"", what);
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

/* Cut the bytes after the header into the entry block (h->ncarves lines)
 * and the carve block (the rest). */
static int cut_blocks(const char *path, const char *s, size_t len, size_t lineno, size_t n, struct blocks *b,
		      struct cc_err *err)
{
	const char *p = s, *end = s + len;

	for (size_t i = 0; i < n; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			return cc_err_set(err, EINVAL, "%s: index.carves: %zu, the file holds %zu entry lines", path, n, i);
		p = nl + 1;
	}
	b->entries = s;
	b->entries_len = (size_t)(p - s);
	b->entries_lineno = lineno;
	b->lines = p;
	b->lines_len = (size_t)(end - p);
	b->lines_lineno = lineno + n;
	return 0;
}

/* Parse each line of s[0, len) (the first is line `lineno`): the entry
 * lines into `entries`, checked; the carve lines into l->carves from index
 * l->ncarves on, each admitted against the carves before it (`ids`,
 * `taken`). */
static int parse_lines(struct cc_ledger *l, json_t *entries, const char *path, const char *s, size_t len,
		       size_t lineno, json_t *ids, hwloc_bitmap_t taken, struct cc_err *err)
{
	const char *p = s, *end = s + len;

	for (; p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		_cleanup_json_ json_t *v = NULL;
		json_error_t je;
		char what[48];
		const char *f[3];

		if (!nl)
			return cc_err_set(err, EINVAL, "%s:%zu: line without its newline (a cut-off file?)", path, lineno);
		v = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES, &je);
		if (!v)
			return cc_err_set(err, EINVAL, "%s:%zu:%d: %s", path, lineno, je.column, je.text);
		p = nl + 1;
		if (entries) {
			if (entry_fields(v, json_array_size(entries), f, err) < 0)
				return cc_err_prefix(err, "%s", path);
			if (json_array_append(entries, v) < 0)
				return cc_err_sys(err, ENOMEM, "%s: entries", path);
			continue;
		}
		snprintf(what, sizeof(what), "carves[%d]", l->ncarves);
		cc_carve_init(&l->carves[l->ncarves]);
		l->ncarves++;
		if (ledger_parse_carve(v, what, &l->carves[l->ncarves - 1], err) < 0 ||
		    ledger_admit_carve(l, l->ncarves - 1, ids, taken, what, err) < 0)
			return cc_err_prefix(err, "%s", path);
	}
	return 0;
}

/* The carves parsed, the index and the entries must say the same. */
static int check_index(const struct cc_ledger *l, json_t *entries, const char *taken_list, const char *steered_list,
		       hwloc_const_bitmap_t taken, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t steered = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t said = hwloc_bitmap_alloc();
	size_t n = json_array_size(entries);

	if (!steered || !said)
		return cc_err_sys(err, ENOMEM, "index");
	if (n != (size_t)l->ncarves)
		return cc_err_set(err, EINVAL, "index.carves: %zu, the file holds %d carve lines", n, l->ncarves);
	for (size_t i = 0; i < n; i++) {
		const struct cc_carve *c = &l->carves[i];
		json_t *e = json_array_get(entries, i);
		const char *f[3] = { json_string_value(json_array_get(e, 0)), json_string_value(json_array_get(e, 1)),
				     json_string_value(json_array_get(e, 2)) };

		if (strcmp(f[0], c->id) || strcmp(f[1], c->kind) || strcmp(f[2], c->cgroup) ||
		    (json_array_size(e) == 4) != c->releasing)
			return cc_err_set(err, EINVAL, "entries[%zu]: \"%.64s\" (%s, \"%.64s\") is not carves[%zu]", i,
					  f[0], f[1], f[2], i);
		if (c->steer_irqs &&
		    (hwloc_bitmap_or(steered, steered, c->cpus) < 0 || hwloc_bitmap_or(steered, steered, c->parked) < 0))
			return cc_err_sys(err, ENOMEM, "index");
	}
	if (cc_cpulist_parse(taken_list, said, "index.taken", err) < 0)
		return -1;
	if (!hwloc_bitmap_isequal(said, taken))
		return cc_err_set(err, EINVAL, "index.taken: \"%.64s\" is not the CPUs of the carves", taken_list);
	if (cc_cpulist_parse(steered_list, said, "index.steered", err) < 0)
		return -1;
	if (!hwloc_bitmap_isequal(said, steered))
		return cc_err_set(err, EINVAL, "index.steered: \"%.64s\" is not the CPUs of the steer-away carves",
				  steered_list);
	return 0;
}

/* Every line parsed, the index checked against the carves.  The digest is
 * not required to match: it only tells an index-only reader whether it may
 * trust the index (the same carves spelled otherwise, by hand or by
 * another build, are the same ledger; the next commit writes them anew). */
static int parse_v2_whole(struct cc_ledger *l, const char *path, const struct header *h, const struct blocks *b,
			  struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *ids = json_object(), *entries = json_array();

	if (!taken || !ids || !entries || grow_carves(l, count_lines(b->lines, b->lines_len) + 1, err) < 0)
		return cc_err_sys(err, ENOMEM, "%s: carves", path);
	if (parse_lines(l, entries, path, b->entries, b->entries_len, b->entries_lineno, NULL, NULL, err) < 0 ||
	    parse_lines(l, NULL, path, b->lines, b->lines_len, b->lines_lineno, ids, taken, err) < 0)
		return -1;
	if (check_index(l, entries, h->taken, h->steered, taken, err) < 0)
		return cc_err_prefix(err, "%s", path);
	return 0;
}

/* The index and the entry lines alone, when they can be trusted: well
 * formed, a carve line per entry, and the digest of both blocks as the
 * writer left it.  1 when they cannot (the caller reads the whole file,
 * which says what is wrong or loads the same carves spelled another way). */
static int parse_v2_index(struct cc_ledger *l, const char *buf, const char *path, const struct header *h,
			  const struct blocks *b, struct cc_err *err)
{
	struct cc_ledger_index *ix = calloc(1, sizeof(*ix));
	struct cc_err why = CC_ERR_INIT; /* dropped: the whole read reports it */
	char digest[DIGEST_MAX];
	int rc = 1;

	if (!ix || !(ix->taken = hwloc_bitmap_alloc()) || !(ix->steered = hwloc_bitmap_alloc()) ||
	    !(ix->entries = json_array())) {
		rc = cc_err_sys(err, ENOMEM, "index");
		goto out;
	}
	if (count_lines(b->lines, b->lines_len) != h->ncarves || (b->lines_len && b->lines[b->lines_len - 1] != '\n'))
		goto out;
	if (parse_lines(l, ix->entries, path, b->entries, b->entries_len, b->entries_lineno, NULL, NULL, &why) < 0 ||
	    cc_cpulist_parse(h->taken, ix->taken, "index.taken", &why) < 0 ||
	    cc_cpulist_parse(h->steered, ix->steered, "index.steered", &why) < 0)
		goto out;
	ix->entries_off = (size_t)(b->entries - buf);
	ix->entries_len = b->entries_len;
	ix->lines_off = (size_t)(b->lines - buf);
	ix->lines_len = b->lines_len;
	ix->entries_hash = cc_fnv1a(CC_FNV1A_INIT, b->entries, b->entries_len);
	ix->lines_hash = cc_fnv1a(CC_FNV1A_INIT, b->lines, b->lines_len);
	ix->lines_lineno = b->lines_lineno;
	index_digest(ix->entries_hash, ix->lines_hash, h->taken, h->steered, digest);
	if (strcmp(digest, h->digest) != 0)
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
	struct blocks b = { 0 };
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
	if (cut_blocks(path, buf + end, len - end, count_lines(buf, end) + 1, h.ncarves, &b, err) < 0)
		return -1;
	if (index_only) {
		int r = parse_v2_index(l, buf, path, &h, &b, err);

		if (r <= 0)
			return r < 0 ? cc_err_prefix(err, "%s", path) : 0;
	}
	return parse_v2_whole(l, path, &h, &b, err);
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
	size_t n;

	if (!ix)
		return 0;
	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, l->dir);
	n = json_array_size(ix->entries);
	l->carves = NULL;
	l->ncarves = 0;
	if (!taken || !ids || grow_carves(l, n + (size_t)nadded, err) < 0) {
		cc_err_sys(err, ENOMEM, "%s: carves", path);
		goto undo;
	}
	if (parse_lines(l, NULL, path, l->snapshot + ix->lines_off, ix->lines_len, ix->lines_lineno, ids, taken,
			err) < 0)
		goto undo;
	nparsed = l->ncarves;
	/* The digest matched at open; the carves must say what the index
	 * said, as in a whole read. */
	t = cc_cpulist_format(ix->taken);
	s = cc_cpulist_format(ix->steered);
	if (!t || !s) {
		cc_err_sys(err, ENOMEM, "%s: index", path);
		goto undo;
	}
	if (check_index(l, ix->entries, t, s, taken, err) < 0) {
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

/* A jansson value as one line, appended to `f`. */
static int put_line(FILE *f, json_t *v)
{
	_cleanup_free_ char *line = v ? json_dumps(v, 0) : NULL;

	if (!line || fputs(line, f) < 0 || fputc('\n', f) < 0)
		return -1;
	return 0;
}

static int close_stream(FILE **f)
{
	int r = fclose(*f);

	*f = NULL;
	return r;
}

char *ledger_serialize(const struct cc_ledger *l, struct ledger_layout *at, struct cc_err *err)
{
	const struct cc_ledger_index *ix = l->index;
	const char *old_entries = ix ? l->snapshot + ix->entries_off : "", *old_lines = ix ? l->snapshot + ix->lines_off : "";
	size_t old_entries_len = ix ? ix->entries_len : 0, old_lines_len = ix ? ix->lines_len : 0;
	size_t entries_len = 0, lines_len = 0, head_len, n = ix ? json_array_size(ix->entries) : 0;
	_cleanup_json_ json_t *doc = json_object(), *index = json_object();
	_cleanup_bitmap_ hwloc_bitmap_t taken = ix ? hwloc_bitmap_dup(ix->taken) : hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t steered = ix ? hwloc_bitmap_dup(ix->steered) : hwloc_bitmap_alloc();
	_cleanup_free_ char *entries = NULL, *lines = NULL, *head = NULL, *t = NULL, *s = NULL;
	_cleanup_fclose_ FILE *fe = NULL;
	_cleanup_fclose_ FILE *fl = NULL;
	char digest[DIGEST_MAX], *out, *p;

	if (!doc || !index || !taken || !steered)
		goto nomem;
	fe = open_memstream(&entries, &entries_len);
	fl = open_memstream(&lines, &lines_len);
	if (!fe || !fl)
		goto nomem;
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = &l->carves[i];
		_cleanup_json_ json_t *o = ledger_carve_to_json(c), *e = c->releasing ? json_pack("[ssss]", c->id, c->kind, c->cgroup, "releasing")
									    : json_pack("[sss]", c->id, c->kind, c->cgroup);

		if (!o || !e)
			return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": carve \"%s\" cannot be serialised",
					  l->dir, c->id),
			       NULL;
		if (put_line(fe, e) < 0 || put_line(fl, o) < 0 || hwloc_bitmap_or(taken, taken, c->cpus) < 0 ||
		    hwloc_bitmap_or(taken, taken, c->parked) < 0)
			goto nomem;
		if (c->steer_irqs &&
		    (hwloc_bitmap_or(steered, steered, c->cpus) < 0 || hwloc_bitmap_or(steered, steered, c->parked) < 0))
			goto nomem;
	}
	if (close_stream(&fe) != 0 || close_stream(&fl) != 0)
		goto nomem;
	t = cc_cpulist_format(taken);
	s = cc_cpulist_format(steered);
	if (!t || !s)
		goto nomem;
	index_digest(cc_fnv1a(ix ? ix->entries_hash : CC_FNV1A_INIT, entries, entries_len),
		     cc_fnv1a(ix ? ix->lines_hash : CC_FNV1A_INIT, lines, lines_len), t, s, digest);
	if (set_new(doc, "version", json_integer(CC_LEDGER_VERSION)) < 0 ||
	    set_new(index, "carves", json_integer((json_int_t)(n + (size_t)l->ncarves))) < 0 ||
	    set_new(index, "taken", json_string(t)) < 0 || set_new(index, "steered", json_string(s)) < 0 ||
	    set_new(index, "digest", json_string(digest)) < 0 || set_new(doc, "index", json_incref(index)) < 0 ||
	    set_new(doc, "sections", json_incref(l->sections)) < 0)
		goto nomem;
	head = json_dumps(doc, 0);
	if (!head)
		goto nomem;
	head_len = strlen(head);
	out = malloc(head_len + 1 + old_entries_len + entries_len + old_lines_len + lines_len + 1);
	if (!out)
		goto nomem;
	p = mempcpy(out, head, head_len);
	*p++ = '\n';
	at->entries_off = (size_t)(p - out);
	p = mempcpy(p, old_entries, old_entries_len);
	p = mempcpy(p, entries, entries_len);
	at->lines_off = (size_t)(p - out);
	at->lines_lineno = 2 + n + (size_t)l->ncarves;
	p = mempcpy(p, old_lines, old_lines_len);
	p = mempcpy(p, lines, lines_len);
	*p = '\0';
	return out;
nomem:
	return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
}
