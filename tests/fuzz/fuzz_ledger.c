/* ledger.json's bytes, read whole and by the index.  The ledger is root's
 * own file, not input from a container, but its two readers must agree:
 * - when both accept the bytes, they see the same CPUs taken and steered
 *   and the same ids and cgroups, and the same records of every record
 *   section: each read alone by its key, each found among the lines that
 *   name each of its owners;
 * - when only the index-only reader accepts them (a digest that matches a
 *   damaged file: libFuzzer computes one from the comparison, as only a
 *   deliberate edit would), loading its carves fails: the mismatch is
 *   found before anything is written;
 * - what the writer writes for a ledger that loaded, the index-only reader
 *   trusts and reads back the same. */
#include "fuzz.h"
#include "ledger_int.h"

static struct cc_ledger *blank(void)
{
	struct cc_ledger *l = calloc(1, sizeof(*l));

	if (!l)
		abort();
	snprintf(l->dir, sizeof(l->dir), "fuzz");
	l->lockfd = l->dirfd = -1;
	l->sections = json_object();
	return l;
}

static struct cc_ledger *parse(const char *buf, size_t len, bool index_only)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = blank();
	int r = ledger_parse(l, "fuzz/ledger.json", buf, len, index_only, &err);

	CC_FUZZ_CHECK_ERR(r < 0, &err);
	if (r < 0) {
		cc_ledger_close(l);
		return NULL;
	}
	l->snapshot = cc_fuzz_str((const uint8_t *)buf, len);
	return l;
}

/* The same records: every record of `a` (its whole view) read alone from
 * `b` by its key, and found by each of its owners' ids. */
static void same_records(struct cc_ledger *a, struct cc_ledger *b)
{
	struct cc_err err = CC_ERR_INIT;

	for (int k = 0; ledger_rec_sections[k]; k++) {
		const char *name = ledger_rec_sections[k];
		json_t *view = cc_ledger_section(a, name, false), *f;
		size_t i;

		if (cc_ledger_rec_count(a, name) != cc_ledger_rec_count(b, name) ||
		    cc_ledger_rec_next(a, name) != cc_ledger_rec_next(b, name) ||
		    json_array_size(json_object_get(view, "files")) != (size_t)cc_ledger_rec_count(a, name))
			abort();
		json_array_foreach(json_object_get(view, "files"), i, f) {
			const char *key = json_string_value(json_object_get(f, "path")), *id;
			json_t *mine = json_deep_copy(f), *got = NULL, *v;

			if (!key || !mine)
				abort();
			json_object_del(mine, "path");
			if (cc_ledger_rec_get(b, name, key, &got, &err) != 1 || !json_equal(mine, got))
				abort();
			json_decref(mine);
			json_object_foreach(json_object_get(f, "owners"), id, v) {
				char **keys = NULL;
				int n = 0;
				bool found = false;

				if (cc_ledger_rec_naming(b, name, id, &keys, &n, &err) < 0)
					abort();
				for (int j = 0; j < n; j++) {
					found |= !strcmp(keys[j], key);
					free(keys[j]);
				}
				free(keys);
				if (!found)
					abort();
			}
		}
	}
}

/* A release's path: the first carve read alone and taken out of an
 * index-only ledger, written, is the ledger without it. */
static void drop_first(struct cc_ledger *whole, struct cc_ledger *again)
{
	struct cc_err err = CC_ERR_INIT;
	struct ledger_layout at;
	struct cc_ledger *back;
	struct cc_carve *c;
	hwloc_bitmap_t want, got;
	char *text;

	if (!whole->ncarves)
		return;
	if (cc_ledger_get(again, whole->carves[0]->id, &c, &err) != 1 || strcmp(c->cgroup, whole->carves[0]->cgroup) ||
	    !hwloc_bitmap_isequal(c->cpus, whole->carves[0]->cpus) || !again->index)
		abort();
	if (cc_ledger_drop(again, whole->carves[0]->id, &err) != 1 || cc_ledger_find(again, whole->carves[0]->id))
		abort();
	text = ledger_serialize(again, &at, &err);
	if (!text)
		abort();
	free(at.recs);
	back = parse(text, strlen(text), false);
	if (!back || back->ncarves != whole->ncarves - 1)
		abort();
	want = cc_ledger_taken(whole);
	got = cc_ledger_taken(back);
	if (!want || !got)
		abort();
	hwloc_bitmap_andnot(want, want, whole->carves[0]->cpus);
	hwloc_bitmap_andnot(want, want, whole->carves[0]->parked);
	if (!hwloc_bitmap_isequal(want, got))
		abort();
	for (int i = 1; i < whole->ncarves; i++)
		if (strcmp(back->carves[i - 1]->id, whole->carves[i]->id))
			abort();
	same_records(whole, back);
	hwloc_bitmap_free(want);
	hwloc_bitmap_free(got);
	cc_ledger_close(back);
	free(text);
}

/* Same CPUs taken and steered, same ids and cgroups in the same order. */
static void same(const struct cc_ledger *a, const struct cc_ledger *b)
{
	hwloc_bitmap_t ta = cc_ledger_taken(a), tb = cc_ledger_taken(b);
	hwloc_bitmap_t sa = cc_ledger_held(a, NULL, true), sb = cc_ledger_held(b, NULL, true);
	const char **ia = NULL, **ib = NULL, **ca = NULL, **cb = NULL;
	int na, nb;

	if (!ta || !tb || !sa || !sb || !hwloc_bitmap_isequal(ta, tb) || !hwloc_bitmap_isequal(sa, sb))
		abort();
	if (cc_ledger_refs(a, NULL, &ia, &ca, &na) < 0 || cc_ledger_refs(b, NULL, &ib, &cb, &nb) < 0 || na != nb)
		abort();
	for (int i = 0; i < na; i++)
		if (strcmp(ia[i], ib[i]) || strcmp(ca[i], cb[i]))
			abort();
	hwloc_bitmap_free(ta);
	hwloc_bitmap_free(tb);
	hwloc_bitmap_free(sa);
	hwloc_bitmap_free(sb);
	free(ia);
	free(ib);
	free(ca);
	free(cb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = cc_fuzz_str(data, size);
	struct cc_ledger *whole, *index, *again;
	struct ledger_layout at;
	struct cc_err err = CC_ERR_INIT;
	char *text;

	if (!buf)
		return 0;
	/* The readers see the bytes up to the first NUL, as load() does. */
	size = strlen(buf);
	whole = parse(buf, size, false);
	index = parse(buf, size, true);
	if (index && !whole && index->index && cc_ledger_load_all(index, &err) == 0)
		abort();
	if (index && !whole && !index->index)
		abort(); /* read whole, it must have failed as the whole read did */
	if (whole) {
		if (index) {
			same(whole, index);
			same_records(whole, index);
		}
		text = ledger_serialize(whole, &at, &err);
		if (!text)
			abort();
		free(at.recs);
		again = parse(text, strlen(text), true);
		if (!again || !again->index)
			abort();
		same(whole, again);
		same_records(whole, again);
		drop_first(whole, again);
		cc_ledger_close(again);
		again = parse(text, strlen(text), true);
		if (!again || cc_ledger_load_all(again, &err) < 0 || again->ncarves != whole->ncarves)
			abort();
		cc_ledger_close(again);
		free(text);
	}
	cc_ledger_close(whole);
	cc_ledger_close(index);
	free(buf);
	return 0;
}
