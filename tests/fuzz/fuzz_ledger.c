/* ledger.json's bytes, read whole and by the index.  The ledger is root's
 * own file, not input from a container, but its two readers must agree:
 * - when both accept the bytes, they see the same CPUs taken and steered
 *   and the same ids and cgroups;
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
		if (index)
			same(whole, index);
		text = ledger_serialize(whole, &at, &err);
		if (!text)
			abort();
		again = parse(text, strlen(text), true);
		if (!again || !again->index)
			abort();
		same(whole, again);
		if (cc_ledger_load_all(again, &err) < 0 || again->ncarves != whole->ncarves)
			abort();
		cc_ledger_close(again);
		free(text);
	}
	cc_ledger_close(whole);
	cc_ledger_close(index);
	free(buf);
	return 0;
}
