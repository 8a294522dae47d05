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

static const char *const header_fields[] = { "version", "index", "sections", NULL };
static const char *const index_fields[] = { "carves", "taken", "steered", "digest", "records", NULL };
static const char *const records_fields[] = { "lines", "next", NULL };

#define DIGEST_MAX 32

/* The header's index (strings borrowed from the parsed header). */
struct header {
	size_t ncarves;
	const char *taken, *steered, *digest;
	/* Record lines per record section (ledger_rec_sections' order), their
	 * total, the sections' next sequence numbers. */
	size_t nrecs[LEDGER_NRECSETS], recs;
	long long next[LEDGER_NRECSETS];
};

/* Where the blocks of lines are in the file's bytes. */
struct blocks {
	const char *entries, *lines, *recs;
	size_t entries_len, lines_len, recs_len;
	size_t entries_lineno, lines_lineno, recs_lineno; /* the file's line number of each block's first line */
};

static void index_lines_drop(struct cc_ledger_index *ix)
{
	free(ix->eoff);
	free(ix->elen);
	free(ix->coff);
	free(ix->clen);
	ix->eoff = ix->elen = ix->coff = ix->clen = NULL;
}

void ledger_index_free(struct cc_ledger_index *ix)
{
	if (!ix)
		return;
	if (ix->loaded) {
		for (size_t i = 0; i < json_array_size(ix->entries); i++)
			if (ix->loaded[i]) {
				cc_carve_fini(ix->loaded[i]);
				free(ix->loaded[i]);
			}
		free(ix->loaded);
	}
	free(ix->gone);
	index_lines_drop(ix);
	if (ix->entries)
		json_decref(ix->entries);
	if (ix->taken)
		hwloc_bitmap_free(ix->taken);
	if (ix->steered)
		hwloc_bitmap_free(ix->steered);
	if (ix->file_taken)
		hwloc_bitmap_free(ix->file_taken);
	if (ix->file_steered)
		hwloc_bitmap_free(ix->file_steered);
	free(ix);
}

/* ---- the digest ------------------------------------------------------- */

/* FNV-1a (digest.h) of each block of lines, then of the hashes and the two
 * unions: a commit continues each block's hash over the lines it appends
 * rather than hashing the lines it keeps again.  With record lines, their
 * block's hash is the third, and each record section's line count and
 * next sequence number follow the unions. */
static void index_digest(uint64_t entries_hash, uint64_t lines_hash, uint64_t recs_hash, const size_t *nrecs,
			 const long long *next, const char *taken, const char *steered, char out[DIGEST_MAX])
{
	char all[64], counts[64];
	bool recs = false;
	uint64_t h;

	for (int k = 0; k < LEDGER_NRECSETS; k++)
		recs |= nrecs[k] > 0;
	if (recs)
		snprintf(all, sizeof(all), "%016" PRIx64 " %016" PRIx64 " %016" PRIx64, entries_hash, lines_hash,
			 recs_hash);
	else
		snprintf(all, sizeof(all), "%016" PRIx64 " %016" PRIx64, entries_hash, lines_hash);
	h = cc_fnv1a(CC_FNV1A_INIT, all, strlen(all) + 1);
	h = cc_fnv1a(h, taken, strlen(taken) + 1);
	h = cc_fnv1a(h, steered, strlen(steered) + 1);
	for (int k = 0; recs && k < LEDGER_NRECSETS; k++) {
		snprintf(counts, sizeof(counts), "%s %zu %lld", ledger_rec_sections[k], nrecs[k], nrecs[k] ? next[k] : 0);
		h = cc_fnv1a(h, counts, strlen(counts) + 1);
	}
	snprintf(out, DIGEST_MAX, "fnv1a64:%016" PRIx64, h);
}

/* ---- the header's version and sections ------------------------------- */

/* Version 2 only.  Version 1 (one indented document) was never released
 * and the ledger lives on tmpfs: a file of it, like one of a newer
 * corecarve, is refused with the way out. */
static int check_version(json_t *doc, struct cc_err *err)
{
	json_int_t version;
	json_t *v;

	if (!json_is_object(doc))
		return cc_err_set(err, EINVAL, "expected an object at the top level, got %s", ledger_json_type(doc));
	/* The version first: a newer ledger may carry fields this one does not know. */
	v = json_object_get(doc, "version");
	if (!v)
		return cc_err_set(err, EINVAL, "missing field \"version\"");
	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "version: expected an integer, got %s", ledger_json_type(v));
	version = json_integer_value(v);
	if (version != CC_LEDGER_VERSION)
		return cc_err_set(err, EPROTO,
				  "version: unsupported ledger version %" JSON_INTEGER_FORMAT
				  " (this corecarve reads version %d): `corecarve audit --set-aside-ledger` moves it aside",
				  version, CC_LEDGER_VERSION);
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
	/* Written before record lines: the records go into lines, and the next
	 * commit writes them so. */
	for (int k = 0; ledger_rec_sections[k]; k++) {
		json_t *sec = json_object_get(l->sections, ledger_rec_sections[k]);

		if (!sec)
			continue;
		if (ledger_recs_from_section(l, ledger_rec_sections[k], sec, err) < 0)
			return -1;
		json_object_del(l->sections, ledger_rec_sections[k]);
	}
	return 0;
}

static int grow_carves(struct cc_ledger *l, size_t n, struct cc_err *err)
{
	l->carves = calloc(n ? n : 1, sizeof(*l->carves));
	if (!l->carves)
		return cc_err_sys(err, ENOMEM, "carves");
	return 0;
}

/* ---- version 2: a header, an entry line and a carve line per carve ---- */

/* index.records: {"<section>": {"lines": n, "next": seq}, ...}, present
 * only with record lines; a record section is then not in "sections". */
static int parse_records_index(json_t *recs, json_t *sections, struct header *h, struct cc_err *err)
{
	const char *name;
	json_t *o;

	if (!recs)
		return 0;
	if (!json_is_object(recs) || !json_object_size(recs))
		return cc_err_set(err, EINVAL, "index.records: expected an object of record sections, got %s",
				  json_is_object(recs) ? "an empty one" : ledger_json_type(recs));
	json_object_foreach(recs, name, o) {
		char what[64];
		json_t *lines, *next;
		int k;

		for (k = 0; ledger_rec_sections[k] && strcmp(ledger_rec_sections[k], name); k++)
			;
		if (!ledger_rec_sections[k])
			return cc_err_set(err, EINVAL, "index.records: unknown record section \"%.32s\"", name);
		snprintf(what, sizeof(what), "index.records.%s", name);
		if (!json_is_object(o))
			return cc_err_set(err, EINVAL, "%s: expected an object, got %s", what, ledger_json_type(o));
		if (ledger_check_keys(o, records_fields, what, err) < 0 || ledger_get_field(o, what, "lines", &lines, err) < 0 ||
		    ledger_get_field(o, what, "next", &next, err) < 0)
			return -1;
		if (!json_is_integer(lines) || json_integer_value(lines) < 1 ||
		    json_integer_value(lines) > (json_int_t)CC_LEDGER_MAX)
			return cc_err_set(err, EINVAL, "%s.lines: expected a count of lines, got %s", what,
					  json_is_integer(lines) ? "another integer" : ledger_json_type(lines));
		if (!json_is_integer(next) || json_integer_value(next) < 1)
			return cc_err_set(err, EINVAL, "%s.next: expected an integer >= 1, got %s", what,
					  json_is_integer(next) ? "another integer" : ledger_json_type(next));
		if (json_object_get(sections, name))
			return cc_err_set(err, EINVAL, "sections.%s: the section is in record lines (%s)", name, what);
		h->nrecs[k] = (size_t)json_integer_value(lines);
		h->next[k] = (long long)json_integer_value(next);
		h->recs += h->nrecs[k];
	}
	return 0;
}

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
	return parse_records_index(json_object_get(index, "records"), sections, h, err);
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

/* Cut the bytes after the header into the entry block (h->ncarves
 * lines), the carve block (as many lines when record lines follow, the
 * rest otherwise) and the record block (the rest). */
static int cut_blocks(const char *path, const char *s, size_t len, size_t lineno, const struct header *h,
		      struct blocks *b, struct cc_err *err)
{
	const char *p = s, *end = s + len;
	size_t n = h->ncarves;

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
	b->lines_lineno = lineno + n;
	if (!h->recs) {
		b->lines_len = (size_t)(end - p);
		b->recs = end;
		b->recs_len = 0;
		b->recs_lineno = b->lines_lineno + count_lines(p, b->lines_len);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			return cc_err_set(err, EINVAL, "%s: index.carves: %zu, the file holds %zu carve lines", path, n, i);
		p = nl + 1;
	}
	b->lines_len = (size_t)(p - b->lines);
	b->recs = p;
	b->recs_len = (size_t)(end - p);
	b->recs_lineno = b->lines_lineno + n;
	return 0;
}

/* The record block: h->nrecs lines per section, in order, nothing after. */
static int cut_records(struct cc_ledger *l, const char *buf, const char *path, const struct header *h,
		       const struct blocks *b, bool parse, struct cc_err *err)
{
	size_t off = (size_t)(b->recs - buf), lineno = b->recs_lineno;
	const char *end = b->recs + b->recs_len;

	if (count_lines(b->recs, b->recs_len) != h->recs || (b->recs_len && end[-1] != '\n'))
		return cc_err_set(err, EINVAL, "%s: index.records: %zu record lines, the file holds %zu lines after the carves%s",
				  path, h->recs, count_lines(b->recs, b->recs_len),
				  b->recs_len && end[-1] != '\n' ? " and a line without its newline" : "");
	for (int k = 0; k < LEDGER_NRECSETS; k++) {
		struct ledger_recset *s = ledger_recset(l, ledger_rec_sections[k]);
		const char *p = buf + off;
		size_t len = 0;

		if (!s)
			return cc_err_sys(err, ENOMEM, "%s: records", path);
		/* None in lines: those of a header section (read before) stay. */
		if (!h->nrecs[k])
			continue;
		s->next = h->next[k];
		for (size_t i = 0; i < h->nrecs[k]; i++) {
			const char *nl = memchr(p + len, '\n', (size_t)(end - (p + len)));

			len = (size_t)(nl + 1 - p);
		}
		if (ledger_recs_cut(s, buf, off, len, lineno, (int)h->nrecs[k], parse, path, err) < 0)
			return -1;
		off += len;
		lineno += h->nrecs[k];
	}
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
		if (!(l->carves[l->ncarves] = ledger_carve_new()))
			return cc_err_sys(err, ENOMEM, "%s: %s", path, what);
		l->ncarves++;
		if (ledger_parse_carve(v, what, l->carves[l->ncarves - 1], err) < 0 ||
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
		const struct cc_carve *c = l->carves[i];
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
static int parse_v2_whole(struct cc_ledger *l, const char *buf, const char *path, const struct header *h,
			  const struct blocks *b, struct cc_err *err)
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
	return cut_records(l, buf, path, h, b, true, err);
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
	if (count_lines(b->lines, b->lines_len) != h->ncarves || (b->lines_len && b->lines[b->lines_len - 1] != '\n') ||
	    count_lines(b->recs, b->recs_len) != h->recs || (b->recs_len && b->recs[b->recs_len - 1] != '\n'))
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
	/* The record lines are read one at a time, when asked for. */
	if (cut_records(l, buf, path, h, b, false, &why) < 0)
		goto out;
	index_digest(ix->entries_hash, ix->lines_hash, ledger_recs_hash(l, buf), h->nrecs, h->next, h->taken, h->steered,
		     digest);
	if (strcmp(digest, h->digest) != 0)
		goto out;
	if (!(ix->file_taken = hwloc_bitmap_dup(ix->taken)) || !(ix->file_steered = hwloc_bitmap_dup(ix->steered))) {
		rc = cc_err_sys(err, ENOMEM, "index");
		goto out;
	}
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
	json_error_t je;
	size_t end;

	/* The first document only: the header. */
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &je);
	if (!doc)
		return cc_err_set(err, EINVAL, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	if (check_version(doc, err) < 0)
		return cc_err_prefix(err, "%s", path);
	end = (size_t)je.position;
	if (end >= len || buf[end] != '\n')
		return cc_err_set(err, EINVAL, "%s:%d:%d: a newline must end the header", path, je.line, je.column);
	if (parse_header(doc, &h, err) < 0 || keep_sections(l, json_object_get(doc, "sections"), err) < 0)
		return cc_err_prefix(err, "%s", path);
	end++;
	if (cut_blocks(path, buf + end, len - end, count_lines(buf, end) + 1, &h, &b, err) < 0)
		return -1;
	if (index_only) {
		int r = parse_v2_index(l, buf, path, &h, &b, err);

		if (r <= 0)
			return r < 0 ? cc_err_prefix(err, "%s", path) : 0;
		/* Read whole after all: the records cut for the index go. */
		for (int k = 0; l->recs && k < LEDGER_NRECSETS; k++)
			if (h.nrecs[k])
				l->recs[k].n = 0;
	}
	return parse_v2_whole(l, buf, path, &h, &b, err);
}

/* ---- one carve of an index-only ledger -------------------------------- */

/* Where each entry and carve line of the file is. */
static int index_lines(struct cc_ledger *l, struct cc_err *err)
{
	struct cc_ledger_index *ix = l->index;
	size_t n = json_array_size(ix->entries);
	const struct {
		size_t off, len, **at, **len_at;
	} blocks[2] = { { ix->entries_off, ix->entries_len, &ix->eoff, &ix->elen },
			{ ix->lines_off, ix->lines_len, &ix->coff, &ix->clen } };

	if (ix->eoff)
		return 0;
	for (int b = 0; b < 2; b++) {
		const char *p = l->snapshot + blocks[b].off, *end = p + blocks[b].len;
		size_t *off = calloc(n + 1, sizeof(*off)), *len = calloc(n + 1, sizeof(*len));

		*blocks[b].at = off;
		*blocks[b].len_at = len;
		if (!off || !len) {
			index_lines_drop(ix);
			return cc_err_sys(err, ENOMEM, "ledger index");
		}
		for (size_t i = 0; i < n; i++) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			if (!nl) {
				index_lines_drop(ix);
				return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": index.carves: %zu, the file holds %zu %s lines",
						  l->dir, n, i, b ? "carve" : "entry");
			}
			off[i] = (size_t)(p - l->snapshot);
			len[i] = (size_t)(nl + 1 - p);
			p = nl + 1;
		}
	}
	return 0;
}

int ledger_index_get(struct cc_ledger *l, size_t i, struct cc_err *err)
{
	struct cc_ledger_index *ix = l->index;
	size_t n = json_array_size(ix->entries);
	json_t *e = json_array_get(ix->entries, i);
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *v = NULL;
	struct cc_carve *c = NULL;
	char path[PATH_MAX + 32], what[48];
	json_error_t je;

	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, l->dir);
	if (ix->loaded && ix->loaded[i])
		return 0;
	if (!mine || (!ix->loaded && !(ix->loaded = calloc(n + 1, sizeof(*ix->loaded)))) ||
	    (!ix->gone && !(ix->gone = calloc(n + 1, sizeof(*ix->gone)))))
		return cc_err_sys(err, ENOMEM, "%s: carves", path);
	if (index_lines(l, err) < 0)
		return -1;
	v = json_loadb(l->snapshot + ix->coff[i], ix->clen[i] - 1, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return cc_err_set(err, EINVAL, "%s:%zu:%d: %s", path, ix->lines_lineno + i, je.column, je.text);
	c = calloc(1, sizeof(*c));
	if (!c)
		return cc_err_sys(err, ENOMEM, "%s: carves", path);
	cc_carve_init(c);
	snprintf(what, sizeof(what), "carves[%zu]", i);
	if (ledger_parse_carve(v, what, c, err) < 0) {
		cc_err_prefix(err, "%s", path);
		goto fail;
	}
	/* What the index and its entry say of it, as a whole read checks
	 * (the carves it is checked against are not read: the digest vouches
	 * that they are the ones the writer admitted). */
	if (strcmp(json_string_value(json_array_get(e, 0)), c->id) || strcmp(json_string_value(json_array_get(e, 1)), c->kind) ||
	    strcmp(json_string_value(json_array_get(e, 2)), c->cgroup) || (json_array_size(e) == 4) != c->releasing) {
		cc_err_set(err, EINVAL, "%s: entries[%zu]: \"%.64s\" (%s, \"%.64s\") is not carves[%zu]", path, i,
			   json_string_value(json_array_get(e, 0)), json_string_value(json_array_get(e, 1)),
			   json_string_value(json_array_get(e, 2)), i);
		goto fail;
	}
	if (ledger_carve_union(c, mine) < 0 || !hwloc_bitmap_isincluded(mine, ix->file_taken) ||
	    (c->steer_irqs && !hwloc_bitmap_isincluded(mine, ix->file_steered))) {
		cc_err_set(err, EINVAL, "%s: carves[%zu]: its CPUs are not in index.%s", path, i,
			   c->steer_irqs && hwloc_bitmap_isincluded(mine, ix->file_taken) ? "steered" : "taken");
		goto fail;
	}
	ix->loaded[i] = c;
	ix->cut = true;
	return 0;
fail:
	cc_carve_fini(c);
	free(c);
	return -1;
}

int ledger_parse_lines(struct cc_ledger *l, struct cc_err *err)
{
	struct cc_ledger_index *ix = l->index;
	struct cc_carve **added = l->carves;
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
	t = cc_cpulist_format(ix->file_taken ? ix->file_taken : ix->taken);
	s = cc_cpulist_format(ix->file_steered ? ix->file_steered : ix->steered);
	if (!t || !s) {
		cc_err_sys(err, ENOMEM, "%s: index", path);
		goto undo;
	}
	if (check_index(l, ix->entries, t, s, taken, err) < 0) {
		cc_err_prefix(err, "%s", path);
		goto undo;
	}
	/* Those read alone since (and maybe changed) replace their line, as
	 * the same handle (a caller may hold it); those taken out go. */
	if (ix->loaded || ix->gone) {
		int k = 0;

		for (int i = 0; i < nparsed; i++) {
			if (ix->loaded && ix->loaded[i]) {
				ledger_carve_free(l->carves[i]);
				l->carves[i] = ix->loaded[i];
				ix->loaded[i] = NULL;
			}
			if (ix->gone && ix->gone[i]) {
				ledger_carve_free(l->carves[i]);
				continue;
			}
			l->carves[k++] = l->carves[i];
		}
		nparsed = k;
		l->ncarves = k;
		hwloc_bitmap_zero(taken);
		json_object_clear(ids);
		for (int i = 0; i < nparsed; i++) {
			hwloc_bitmap_or(taken, taken, l->carves[i]->cpus);
			hwloc_bitmap_or(taken, taken, l->carves[i]->parked);
			json_object_set_new(ids, l->carves[i]->id, json_integer(i));
		}
	}
	/* Those added since were checked against the index; once more
	 * against the carves themselves. */
	for (int j = 0; j < nadded; j++) {
		char what[300];

		l->carves[nparsed + j] = added[j];
		l->ncarves = nparsed + j + 1;
		snprintf(what, sizeof(what), "carve \"%.256s\"", added[j]->id);
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
		ledger_carve_free(l->carves[i]);
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

/* index.records, or NULL when there are no record lines. */
static json_t *records_index(const struct cc_ledger *l, size_t *nrecs, long long *next)
{
	json_t *o = NULL;

	for (int k = 0; k < LEDGER_NRECSETS; k++) {
		const struct ledger_recset *s = l->recs ? &l->recs[k] : NULL;

		nrecs[k] = s ? (size_t)s->n : 0;
		next[k] = s ? s->next : 1;
		if (!nrecs[k])
			continue;
		if (!o && !(o = json_object()))
			return NULL;
		if (set_new(o, ledger_rec_sections[k],
			    json_pack("{s:I, s:I}", "lines", (json_int_t)nrecs[k], "next", (json_int_t)next[k])) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* The entry and carve lines an index-only ledger keeps from its file,
 * when some were read alone (written anew from their carve: it may have
 * changed) or taken out (not written): both blocks again, and their
 * hashes. */
static int kept_blocks(struct cc_ledger *l, char **entries, size_t *elen, char **lines, size_t *llen, size_t *n,
		       struct cc_err *err)
{
	struct cc_ledger_index *ix = l->index;
	_cleanup_fclose_ FILE *fe = open_memstream(entries, elen);
	_cleanup_fclose_ FILE *fl = open_memstream(lines, llen);

	*n = 0;
	if (!fe || !fl)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir);
	if (index_lines(l, err) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(ix->entries); i++) {
		const struct cc_carve *c = ix->loaded ? ix->loaded[i] : NULL;

		if (ix->gone && ix->gone[i])
			continue;
		(*n)++;
		if (c) {
			_cleanup_json_ json_t *o = ledger_carve_to_json(c),
					      *e = c->releasing ? json_pack("[ssss]", c->id, c->kind, c->cgroup, "releasing")
								: json_pack("[sss]", c->id, c->kind, c->cgroup);

			if (!o || !e || put_line(fe, e) < 0 || put_line(fl, o) < 0)
				return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": carve \"%s\" cannot be serialised",
						  l->dir, c->id);
			continue;
		}
		if (fwrite(l->snapshot + ix->eoff[i], 1, ix->elen[i], fe) != ix->elen[i] ||
		    fwrite(l->snapshot + ix->coff[i], 1, ix->clen[i], fl) != ix->clen[i])
			return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir);
	}
	if (close_stream(&fe) != 0 || close_stream(&fl) != 0)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir);
	return 0;
}

/* The entry and carve lines the file already holds, kept as they are:
 * the snapshot's blocks, or kept_blocks' copies (*kept_entries and
 * *kept_lines, the caller's to free) when some were cut; none for a
 * ledger without an index. */
struct old_blocks {
	const char *entries, *lines;
	size_t entries_len, lines_len;
	size_t n;       /* carves in them */
	uint64_t eh, lh; /* their hashes, to continue over the new lines */
};

static int keep_old_blocks(struct cc_ledger *l, char **kept_entries, char **kept_lines, struct old_blocks *o,
		      struct cc_err *err)
{
	const struct cc_ledger_index *ix = l->index;

	if (ix && ix->cut) {
		size_t elen = 0, llen = 0, n = 0;

		if (kept_blocks(l, kept_entries, &elen, kept_lines, &llen, &n, err) < 0)
			return -1;
		*o = (struct old_blocks){ *kept_entries, *kept_lines, elen, llen, n,
					  cc_fnv1a(CC_FNV1A_INIT, *kept_entries, elen),
					  cc_fnv1a(CC_FNV1A_INIT, *kept_lines, llen) };
		return 0;
	}
	o->entries = ix ? l->snapshot + ix->entries_off : "";
	o->lines = ix ? l->snapshot + ix->lines_off : "";
	o->entries_len = ix ? ix->entries_len : 0;
	o->lines_len = ix ? ix->lines_len : 0;
	o->n = ix ? json_array_size(ix->entries) : 0;
	o->eh = ix ? ix->entries_hash : CC_FNV1A_INIT;
	o->lh = ix ? ix->lines_hash : CC_FNV1A_INIT;
	return 0;
}

/* The loaded carves' entry lines to `fe` and carve lines to `fl`, their
 * CPUs added to the index's taken and steered sets. */
static int new_blocks(const struct cc_ledger *l, FILE *fe, FILE *fl, hwloc_bitmap_t taken, hwloc_bitmap_t steered,
		      struct cc_err *err)
{
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = l->carves[i];
		_cleanup_json_ json_t *o = ledger_carve_to_json(c), *e = c->releasing ? json_pack("[ssss]", c->id, c->kind, c->cgroup, "releasing")
									    : json_pack("[sss]", c->id, c->kind, c->cgroup);

		if (!o || !e)
			return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": carve \"%s\" cannot be serialised",
					  l->dir, c->id);
		if (put_line(fe, e) < 0 || put_line(fl, o) < 0 || hwloc_bitmap_or(taken, taken, c->cpus) < 0 ||
		    hwloc_bitmap_or(taken, taken, c->parked) < 0)
			return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir);
		if (c->steer_irqs &&
		    (hwloc_bitmap_or(steered, steered, c->cpus) < 0 || hwloc_bitmap_or(steered, steered, c->parked) < 0))
			return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir);
	}
	return 0;
}

/* The file: the header line, then every entry line (kept, then new),
 * every carve line (the same), and the record lines; where each block
 * starts goes into `at`, the record lines' offset into *recs_off.  NULL:
 * out of memory. */
static char *assemble(const char *head, const struct old_blocks *o, const char *entries, size_t entries_len,
		      const char *lines, size_t lines_len, const char *recs, size_t recs_len, int ncarves,
		      struct ledger_layout *at, size_t *recs_off)
{
	size_t head_len = strlen(head);
	char *out = malloc(head_len + 1 + o->entries_len + entries_len + o->lines_len + lines_len + recs_len + 1), *p;

	if (!out)
		return NULL;
	p = mempcpy(out, head, head_len);
	*p++ = '\n';
	at->entries_off = (size_t)(p - out);
	p = mempcpy(p, o->entries, o->entries_len);
	p = mempcpy(p, entries, entries_len);
	at->lines_off = (size_t)(p - out);
	at->lines_lineno = 2 + o->n + (size_t)ncarves;
	p = mempcpy(p, o->lines, o->lines_len);
	p = mempcpy(p, lines, lines_len);
	*recs_off = (size_t)(p - out);
	at->recs_lineno = at->lines_lineno + o->n + (size_t)ncarves;
	p = mempcpy(p, recs, recs_len);
	*p = '\0';
	return out;
}

char *ledger_serialize(struct cc_ledger *l, struct ledger_layout *at, struct cc_err *err)
{
	const struct cc_ledger_index *ix = l->index;
	_cleanup_free_ char *kept_entries = NULL, *kept_lines = NULL;
	struct old_blocks old;
	uint64_t recs_hash = CC_FNV1A_INIT;
	size_t entries_len = 0, lines_len = 0, recs_len = 0;
	size_t nrecs[LEDGER_NRECSETS], recs_off;
	long long next[LEDGER_NRECSETS];
	int nlines = ledger_recs_count(l);
	_cleanup_json_ json_t *doc = json_object(), *index = json_object(), *recs_index = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t taken = ix ? hwloc_bitmap_dup(ix->taken) : hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t steered = ix ? hwloc_bitmap_dup(ix->steered) : hwloc_bitmap_alloc();
	_cleanup_free_ char *entries = NULL, *lines = NULL, *recs = NULL, *head = NULL, *t = NULL, *s = NULL;
	_cleanup_free_ struct ledger_rec_at *rec_at = NULL;
	_cleanup_fclose_ FILE *fe = NULL;
	_cleanup_fclose_ FILE *fl = NULL;
	char digest[DIGEST_MAX], *out;

	at->recs = NULL;
	if (!doc || !index || !taken || !steered)
		goto nomem;
	if (keep_old_blocks(l, &kept_entries, &kept_lines, &old, err) < 0)
		return NULL;
	at->entries_len = old.entries_len;
	at->lines_len = old.lines_len;
	at->entries_hash = old.eh;
	at->lines_hash = old.lh;
	fe = open_memstream(&entries, &entries_len);
	fl = open_memstream(&lines, &lines_len);
	rec_at = calloc((size_t)nlines + 1, sizeof(*rec_at));
	if (!fe || !fl || !rec_at)
		goto nomem;
	if (new_blocks(l, fe, fl, taken, steered, err) < 0)
		return NULL;
	if (ledger_recs_write(l, &recs, &recs_len, &recs_hash, rec_at, err) < 0)
		return NULL;
	if (close_stream(&fe) != 0 || close_stream(&fl) != 0)
		goto nomem;
	t = cc_cpulist_format(taken);
	s = cc_cpulist_format(steered);
	recs_index = records_index(l, nrecs, next);
	if (!t || !s || (nlines && !recs_index))
		goto nomem;
	index_digest(cc_fnv1a(old.eh, entries, entries_len), cc_fnv1a(old.lh, lines, lines_len), recs_hash, nrecs,
		     next, t, s, digest);
	if (set_new(doc, "version", json_integer(CC_LEDGER_VERSION)) < 0 ||
	    set_new(index, "carves", json_integer((json_int_t)(old.n + (size_t)l->ncarves))) < 0 ||
	    set_new(index, "taken", json_string(t)) < 0 || set_new(index, "steered", json_string(s)) < 0 ||
	    set_new(index, "digest", json_string(digest)) < 0 ||
	    (recs_index && set_new(index, "records", json_incref(recs_index)) < 0) ||
	    set_new(doc, "index", json_incref(index)) < 0 || set_new(doc, "sections", json_incref(l->sections)) < 0)
		goto nomem;
	head = json_dumps(doc, 0);
	if (!head)
		goto nomem;
	out = assemble(head, &old, entries, entries_len, lines, lines_len, recs, recs_len, l->ncarves, at, &recs_off);
	if (!out)
		goto nomem;
	for (int i = 0; i < nlines; i++)
		rec_at[i].off += recs_off;
	at->recs = cc_steal_ptr(rec_at);
	return out;
nomem:
	return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
}

void ledger_index_written(struct cc_ledger *l, const struct ledger_layout *at)
{
	struct cc_ledger_index *ix = l->index;
	size_t n, k = 0;
	json_t *entries;

	if (!ix)
		return;
	ix->entries_off = at->entries_off;
	ix->lines_off = at->lines_off;
	ix->lines_lineno = at->lines_lineno;
	index_lines_drop(ix);
	if (!ix->cut)
		return;
	/* The blocks as written: those taken out are gone from the entries,
	 * those read alone stay read (and their entries say what they are). */
	ix->entries_len = at->entries_len;
	ix->lines_len = at->lines_len;
	ix->entries_hash = at->entries_hash;
	ix->lines_hash = at->lines_hash;
	hwloc_bitmap_copy(ix->file_taken, ix->taken);
	hwloc_bitmap_copy(ix->file_steered, ix->steered);
	n = json_array_size(ix->entries);
	entries = json_array();
	if (!entries)
		return;
	for (size_t i = 0; i < n; i++) {
		struct cc_carve *c = ix->loaded ? ix->loaded[i] : NULL;
		json_t *e;

		if (ix->gone && ix->gone[i]) {
			if (c) {
				cc_carve_fini(c);
				free(c);
			}
			continue;
		}
		e = c ? (c->releasing ? json_pack("[ssss]", c->id, c->kind, c->cgroup, "releasing")
				      : json_pack("[sss]", c->id, c->kind, c->cgroup))
		      : json_incref(json_array_get(ix->entries, i));
		json_array_append_new(entries, e);
		if (ix->loaded)
			ix->loaded[k] = c;
		k++;
	}
	json_decref(ix->entries);
	ix->entries = entries;
	if (ix->gone)
		memset(ix->gone, 0, (n + 1) * sizeof(*ix->gone));
	ix->cut = false;
	for (size_t i = 0; ix->loaded && i < k; i++)
		ix->cut |= ix->loaded[i] != NULL;
	for (size_t i = k; ix->loaded && i < n; i++)
		ix->loaded[i] = NULL;
}
