/* A ledger section of node records (plugin/ledger/noderec.h), as the cgroup
 * effect reads it: parsed strictly (with and without held kinds), written
 * back to the same records, and every record's value computed without a
 * crash. */
#include "cgroup.h"
#include "fuzz.h"
#include "noderec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs a, b;
	json_error_t je;
	json_t *in = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je), *out;
	hwloc_bitmap_t parent = hwloc_bitmap_alloc();
	int r;

	if (!in || !parent) {
		json_decref(in);
		hwloc_bitmap_free(parent);
		return 0;
	}
	hwloc_bitmap_set_range(parent, 0, 15);
	for (int held = 0; held < 2; held++) {
		/* The cgroup schema, and the same without held kinds. */
		struct cc_noderec_schema schema = cc_cg_rec_schema;

		if (!held)
			schema.held_kinds = NULL;
		err = (struct cc_err)CC_ERR_INIT;
		r = cc_noderecs_parse(in, &schema, &a, &err);
		CC_FUZZ_CHECK_ERR(r < 0, &err);
		if (r == 0) {
			/* What is written reads back as the same records. */
			out = cc_noderecs_json(&a, &err);
			if (!out != !a.n || cc_noderecs_parse(out, &schema, &b, &err) < 0 ||
			    b.n != a.n)
				abort();
			for (int i = 0; i < a.n; i++) {
				char *v = NULL;
				struct cc_err e = CC_ERR_INIT;

				if (strcmp(a.r[i]->path, b.r[i]->path) || a.r[i]->nowners != b.r[i]->nowners ||
				    a.r[i]->seq != b.r[i]->seq || !a.r[i]->held != !b.r[i]->held ||
				    (a.r[i]->held && !hwloc_bitmap_isequal(a.r[i]->held, b.r[i]->held)))
					abort();
				/* A held kind lists no owner once read. */
				if (held && a.r[i]->nowners && (!strcmp(a.r[i]->kind, "exclusive") || !strcmp(a.r[i]->kind, "parked")))
					abort();
				r = cc_cg_rec_value(a.r[i], parent, &v, &e);
				CC_FUZZ_CHECK_ERR(r < 0, &e);
				free(v);
			}
			cc_noderecs_fini(&b);
			json_decref(out);
		}
		cc_noderecs_fini(&a);
	}
	json_decref(in);
	hwloc_bitmap_free(parent);
	return 0;
}
