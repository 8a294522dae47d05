/* The ledger's record sections and the release's one-carve path
 * (ledger_int.h): records as lines in key order, read one at a time from an
 * index-only ledger and written back with every other line copied; a file
 * that kept them in its header read into lines; an index whose record
 * lines were edited not trusted; a carve read and taken out alone, the file
 * the same as a whole read would write. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger_int.h"
#include "noderec.h"
#include "testlib.h"

static char base[64], state[128], state2[128], lpath[192], lpath2[192];

static void setup(void)
{
	snprintf(base, sizeof(base), "%s/cc-lrecs-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(state2, sizeof(state2), "%s/state2", base);
	snprintf(lpath, sizeof(lpath), "%s/ledger.json", state);
	snprintf(lpath2, sizeof(lpath2), "%s/ledger.json", state2);
}

static void teardown(void)
{
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s'", base), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0600), 0);
}

static void add(struct cc_ledger *l, const char *id, const char *cpus, const char *parked, bool steer)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_carve c;

	cc_test_carve(&c, id, cpus, parked, steer);
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
}

static void put(struct cc_ledger *l, const char *key, const char *json)
{
	struct cc_err err = CC_ERR_INIT;
	json_t *v = json_loads(json, 0, NULL);

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(cc_ledger_rec_put(l, "cgroup", key, v, &err) == 0, "%s", err.msg);
}

static const char rec_b[] = "{\"kind\": \"exclusive\", \"orig\": \"\", \"seq\": 2, \"owners\": {}, \"held\": \"4-5\"}";

/* c1 0-1 (steers), c2 2-3 + parked 10, c3 4-5; three records put out of
 * order. */
static void write_three(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open(state, &err);

	ck_assert_msg(l != NULL, "%s", err.msg);
	add(l, "c1", "0-1", "", true);
	add(l, "c2", "2-3", "10", false);
	add(l, "c3", "4-5", "", false);
	put(l, "/kubepods/c/cpu.max", "{\"kind\": \"quota\", \"orig\": \"100000 100000\", \"seq\": 3, \"owners\": {\"c2\": \"2\"}}");
	put(l, "/kubepods/b/cpuset.cpus.exclusive", rec_b);
	put(l, "/kubepods/a/cpuset.cpus", "{\"kind\": \"peer\", \"orig\": \"\", \"seq\": 1, \"owners\": {\"c1\": \"0-1\"}}");
	cc_ledger_rec_set_next(l, "cgroup", 4);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
}

static struct cc_ledger *open_index(const char *dir)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open_index(dir, &err);

	ck_assert_msg(l != NULL, "%s", err.msg);
	return l;
}

static void copy_state(void)
{
	ck_assert_int_eq(cc_test_sh(NULL, "rm -rf '%s' && cp -a '%s' '%s'", state2, state, state2), 0);
}

/* Lines in key order after the carves, declared in the index, read back
 * one at a time; a record put back unchanged writes nothing; the file an
 * index-only ledger writes is byte for byte a whole read's. */
START_TEST(test_record_lines)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *a = NULL, *b = NULL;
	struct cc_ledger *l;
	json_t *v = NULL, *view;
	const char *p;
	size_t len;

	setup();
	write_three();
	text = cc_test_slurp_len(lpath, &len);
	ck_assert_ptr_nonnull(strstr(text, "\"records\": {\"cgroup\": {\"lines\": 3, \"next\": 4}}"));
	p = strstr(text, "\n\"/kubepods/a/cpuset.cpus\" {");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(strstr(p, "\n\"/kubepods/b/cpuset.cpus.exclusive\" {"));
	ck_assert_ptr_nonnull(strstr(strstr(p, "exclusive\" {"), "\n\"/kubepods/c/cpu.max\" {"));
	ck_assert_ptr_null(strstr(text, "\"sections\": {\"cgroup\""));

	l = open_index(state);
	ck_assert_ptr_nonnull(l->index);
	ck_assert_int_eq(cc_ledger_rec_count(l, "cgroup"), 3);
	ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", "/kubepods/b/cpuset.cpus.exclusive", &v, &err), 1);
	ck_assert_str_eq(json_string_value(json_object_get(v, "held")), "4-5");
	/* Only the lines probed by the search are read: not the last one. */
	ck_assert_ptr_null(l->recs[0].r[2].val);
	ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", "/kubepods/zz", &v, &err), 0);
	put(l, "/kubepods/b/cpuset.cpus.exclusive", rec_b);
	ck_assert(!l->dirty);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	a = cc_test_slurp_len(lpath, &len);
	ck_assert_str_eq(a, text);

	/* A change, a new record and a removal: the same file from both reads. */
	copy_state();
	for (int k = 0; k < 2; k++) {
		l = k ? cc_ledger_open(state2, &err) : open_index(state);
		ck_assert_ptr_nonnull(l);
		put(l, "/kubepods/b/cpuset.cpus.exclusive",
		    "{\"kind\": \"exclusive\", \"orig\": \"\", \"seq\": 2, \"owners\": {}, \"held\": \"4-5,8\"}");
		put(l, "/kubepods/aa/cpu.max", "{\"kind\": \"quota\", \"orig\": \"max 100000\", \"seq\": 4, \"owners\": {}}");
		ck_assert_int_eq(cc_ledger_rec_put(l, "cgroup", "/kubepods/c/cpu.max", NULL, &err), 0);
		cc_ledger_rec_set_next(l, "cgroup", 5);
		ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
		cc_ledger_close(l);
	}
	free(a);
	a = cc_test_slurp_len(lpath, &len);
	b = cc_test_slurp_len(lpath2, &len);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "\n\"/kubepods/a/cpuset.cpus\" {"));
	ck_assert_ptr_nonnull(strstr(a, "\"held\": \"4-5,8\""));
	ck_assert_ptr_null(strstr(a, "/kubepods/c/cpu.max"));

	/* The view of a whole read. */
	l = cc_ledger_open(state, &err);
	ck_assert_ptr_nonnull(l);
	view = cc_ledger_section(l, "cgroup", false);
	ck_assert_int_eq(json_array_size(json_object_get(view, "files")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(view, "files"), 1), "path")),
			 "/kubepods/aa/cpu.max");
	ck_assert_int_eq(cc_ledger_rec_next(l, "cgroup"), 5);
	/* Every record gone: no section, no index entry, the count again. */
	ck_assert_int_eq(cc_ledger_set_section(l, "cgroup", NULL, &err), 0);
	ck_assert_ptr_null(cc_ledger_section(l, "cgroup", false));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	free(a);
	a = cc_test_slurp_len(lpath, &len);
	ck_assert_ptr_null(strstr(a, "records"));
	teardown();
}
END_TEST

/* The lines that name a carve: those whose bytes hold its id as jansson
 * writes it, each checked once parsed. */
START_TEST(test_record_naming)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	char **keys = NULL;
	int n = 0;

	setup();
	write_three();
	l = open_index(state);
	ck_assert_int_eq(cc_ledger_rec_naming(l, "cgroup", "c2", &keys, &n, &err), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(keys[0], "/kubepods/c/cpu.max");
	free(keys[0]);
	free(keys);
	/* "c" is in every key but names no record as a string of its own. */
	ck_assert_int_eq(cc_ledger_rec_naming(l, "cgroup", "c", &keys, &n, &err), 0);
	ck_assert_int_eq(n, 0);
	free(keys);
	/* Not read for that: lines without the bytes stay unparsed. */
	ck_assert_ptr_null(l->recs[0].r[1].val);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* A file that kept its records in the header (before record lines): the
 * same records, read by either read, written as lines by the next commit;
 * the cgroup effect reads the owners it listed into held. */
START_TEST(test_header_section_read)
{
	static const char old[] =
		"{\"version\": 2, \"index\": {\"carves\": 0, \"taken\": \"\", \"steered\": \"\", \"digest\": \"fnv1a64:0\"}, "
		"\"sections\": {\"cgroup\": {\"files\": [{\"path\": \"/kubepods/cpuset.cpus.exclusive\", \"kind\": \"exclusive\", "
		"\"orig\": \"\", \"set\": \"2,4-5\", \"seq\": 7, \"owners\": {\"a1\": \"2\", \"b2\": \"4-5\"}}]}}}\n";
	static const char *const kinds[] = { "exclusive", "parked", "peer", "quota", NULL };
	static const char *const held[] = { "exclusive", "parked", NULL };
	static const struct cc_noderec_schema schema = { "sections.cgroup", kinds, held, NULL };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *held_s = NULL;
	struct cc_noderecs recs;
	struct cc_noderec *r;
	struct cc_ledger *l;
	json_t *v = NULL;
	size_t len;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, old);
	for (int k = 0; k < 2; k++) {
		l = k ? open_index(state) : cc_ledger_read(state, &err);
		ck_assert_msg(l != NULL, "%s", err.msg);
		ck_assert_int_eq(cc_ledger_rec_get(l, "cgroup", "/kubepods/cpuset.cpus.exclusive", &v, &err), 1);
		ck_assert_int_eq(cc_ledger_rec_next(l, "cgroup"), 8);
		ck_assert_ptr_null(json_object_get(l->sections, "cgroup"));
		cc_ledger_close(l);
	}
	l = open_index(state);
	ck_assert_int_eq(cc_noderecs_open(&recs, l, "cgroup", &schema, &err), 0);
	r = cc_noderecs_find(&recs, "/kubepods/cpuset.cpus.exclusive");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->nowners, 0);
	held_s = cc_cpulist_format(r->held);
	ck_assert_str_eq(held_s, "2,4-5");
	ck_assert_int_eq(cc_noderecs_store(&recs, &err), 0);
	cc_noderecs_fini(&recs);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	text = cc_test_slurp_len(lpath, &len);
	ck_assert_ptr_nonnull(strstr(text, "\"records\": {\"cgroup\": {\"lines\": 1, \"next\": 8}}"));
	ck_assert_ptr_nonnull(strstr(text, "\n\"/kubepods/cpuset.cpus.exclusive\" {"));
	ck_assert_ptr_nonnull(strstr(text, "\"held\": \"2,4-5\""));
	ck_assert_ptr_nonnull(strstr(text, "\"sections\": {}"));
	l = open_index(state);
	ck_assert_ptr_nonnull(l->index);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* Record lines the index does not vouch for: an edited line is read whole
 * (which loads it, or says what is wrong); lines out of order, twice, more
 * or fewer than the index says, or no record, are refused. */
START_TEST(test_record_lines_checked)
{
	static const struct {
		const char *needle, *with, *why; /* why NULL: it loads, read whole */
	} cases[] = {
		{ "\"held\": \"4-5\"", "\"held\" : \"4-5\"", NULL },
		{ "\"/kubepods/a/cpuset.cpus\" {", "\"/kubepods/z/cpuset.cpus\" {", "\"/kubepods/b/cpuset.cpus.exclusive\" after \"/kubepods/z/cpuset.cpus\"" },
		{ "\"/kubepods/a/cpuset.cpus\" {", "\"/kubepods/b/cpuset.cpus.exclusive\" {", "after \"/kubepods/b/cpuset.cpus.exclusive\": the keys must be in order, each once" },
		{ "\"lines\": 3", "\"lines\": 2", "index.records: 2 record lines, the file holds 3" },
		{ "\"lines\": 3", "\"lines\": 0", "index.records.cgroup.lines: expected a count of lines" },
		{ "\"/kubepods/a/cpuset.cpus\" {", "[\"/kubepods/a/cpuset.cpus\"] {", "records.cgroup: expected \"<key>\" {record}, got an array first" },
		{ "\"/kubepods/a/cpuset.cpus\" {\"kind\"", "\"/kubepods/a/cpuset.cpus\" [{\"kind\"", "" },
		{ "\"records\": {\"cgroup\"", "\"records\": {\"irq\"", "index.records: unknown record section \"irq\"" },
		{ "\"sections\": {}", "\"sections\": {\"cgroup\": {}}", "sections.cgroup: the section is in record lines" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		_cleanup_free_ char *text = NULL, *doc = NULL;
		struct cc_ledger *l;
		char *at;
		size_t len;

		setup();
		write_three();
		text = cc_test_slurp_len(lpath, &len);
		at = strstr(text, cases[i].needle);
		ck_assert_msg(at != NULL, "case %zu", i);
		ck_assert_int_ge(asprintf(&doc, "%.*s%s%s", (int)(at - text), text, cases[i].with, at + strlen(cases[i].needle)),
				 0);
		write_file(lpath, doc);
		l = cc_ledger_open_index(state, &err);
		if (!cases[i].why) {
			ck_assert_msg(l != NULL, "case %zu: %s", i, err.msg);
			ck_assert_ptr_null(l->index);
			ck_assert_int_eq(cc_ledger_rec_count(l, "cgroup"), 3);
			cc_ledger_close(l);
		} else {
			ck_assert_msg(l == NULL, "case %zu loaded", i);
			ck_assert_msg(strstr(err.msg, cases[i].why), "case %zu: %s", i, err.msg);
		}
		teardown();
	}
}
END_TEST

/* The release's path: the carve's own line read alone, the unions and the
 * others' lines left as they are; taken out, the file is what a whole read
 * would write after removing it. */
START_TEST(test_get_and_drop)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *a = NULL, *b = NULL;
	_cleanup_free_ const char **ids = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t held = NULL;
	_cleanup_free_ char *s = NULL;
	struct cc_ledger *l;
	struct cc_carve *c;
	size_t len;
	int n;

	setup();
	write_three();
	copy_state();
	l = open_index(state);
	ck_assert_int_eq(cc_ledger_get(l, "c1", &c, &err), 1);
	ck_assert_str_eq(c->cgroup, "/kubepods/c1");
	ck_assert(c->steer_irqs);
	ck_assert_ptr_nonnull(l->index);
	ck_assert_ptr_eq(cc_ledger_find(l, "c1"), c);
	ck_assert_ptr_nonnull(l->index);
	/* Read alone, it can be left out of the unions and the others. */
	held = cc_ledger_held(l, "c1", true);
	ck_assert_ptr_nonnull(held);
	ck_assert(hwloc_bitmap_iszero(held));
	ck_assert_int_eq(cc_ledger_refs(l, "c1", &ids, NULL, &n), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ids[0], "c2");
	ck_assert_int_eq(cc_ledger_get(l, "c9", &c, &err), 0);
	ck_assert_int_eq(cc_ledger_drop(l, "c1", &err), 1);
	ck_assert_ptr_nonnull(l->index);
	ck_assert_ptr_null(cc_ledger_find(l, "c1"));
	add(l, "c4", "0", "", false); /* its CPUs are free again */
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	ck_assert_ptr_nonnull(l->index);
	/* A second one, after that commit. */
	ck_assert_int_eq(cc_ledger_get(l, "c3", &c, &err), 1);
	ck_assert_int_eq(cc_ledger_mark_releasing(l, "c3"), 1);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);

	l = cc_ledger_open(state2, &err);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cc_ledger_remove(l, "c1"), 1);
	add(l, "c4", "0", "", false);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	ck_assert_int_eq(cc_ledger_mark_releasing(l, "c3"), 1);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	a = cc_test_slurp_len(lpath, &len);
	b = cc_test_slurp_len(lpath2, &len);
	ck_assert_str_eq(a, b);
	/* And the index-only reader trusts it. */
	l = open_index(state);
	ck_assert_ptr_nonnull(l->index);
	held = (hwloc_bitmap_free(held), cc_ledger_taken(l));
	s = cc_cpulist_format(held);
	ck_assert_str_eq(s, "0,2-5,10");
	ck_assert_int_eq(cc_ledger_load_all(l, &err), 0);
	ck_assert_int_eq(l->ncarves, 3);
	ck_assert(l->carves[1]->releasing);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* A carve read alone whose line and entry disagree (behind a digest that
 * matches: a deliberate edit) is refused, and nothing is written after. */
/* The cgroup records' values are checked once, as each record is read
 * (cc_cg_rec_schema): a value the rules could not read is refused there,
 * naming its field, whole or lazily, and a lazy set keeps the refusal
 * (its store, and so the commit, refuses with it). */
static const struct {
	const char *rec, *err;
} bad_values[] = {
	{ "{\"path\": \"/a/cpuset.cpus\", \"kind\": \"peer\", \"orig\": \"0-3,x\", \"seq\": 1, \"owners\": {}}",
	  "sections.cgroup.files.0.orig: " },
	{ "{\"path\": \"/a/cpuset.cpus\", \"kind\": \"shared\", \"orig\": \"0-7\", \"set\": \"0-7\", \"pending\": \"7-\", "
	  "\"seq\": 1, \"owners\": {}}", "sections.cgroup.files.0.pending: " },
	{ "{\"path\": \"/a/cpuset.cpus\", \"kind\": \"peer\", \"orig\": \"\", \"seq\": 1, \"owners\": {\"c1\": \"two\"}}",
	  "sections.cgroup.files.0.owners.c1: " },
	{ "{\"path\": \"/a/cpuset.cpus.exclusive\", \"kind\": \"exclusive\", \"orig\": \"\", \"held\": \"4-x\", \"seq\": 1, "
	  "\"owners\": {}}", "sections.cgroup.files.0.held: " },
	{ "{\"path\": \"/a/cpu.max\", \"kind\": \"quota\", \"orig\": \"lots\", \"seq\": 1, \"owners\": {}}",
	  "sections.cgroup.files.0.orig: \"lots\" is not a cpu.max value (\"max P\" or \"Q P\")" },
	{ "{\"path\": \"/a/cpu.max\", \"kind\": \"quota\", \"orig\": \"max 100000\", \"set\": \"max 0\", \"seq\": 1, "
	  "\"owners\": {}}", "sections.cgroup.files.0.set: \"max 0\" is not a cpu.max value" },
	{ "{\"path\": \"/a/cpu.max\", \"kind\": \"quota\", \"orig\": \"max 100000\", \"seq\": 1, \"owners\": {\"c1\": \"0-1\"}}",
	  "sections.cgroup.files.0.owners.c1: \"0-1\" is not a CPU count" },
	{ NULL, NULL },
};

START_TEST(test_cgroup_values_checked)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs recs;
	struct cc_ledger *l;
	char text[512];

	for (int i = 0; bad_values[i].rec; i++) {
		_cleanup_json_ json_t *j = NULL;

		snprintf(text, sizeof(text), "{\"files\": [%s]}", bad_values[i].rec);
		j = json_loads(text, 0, NULL);
		ck_assert_ptr_nonnull(j);
		err = (struct cc_err)CC_ERR_INIT;
		ck_assert_int_eq(cc_noderecs_parse(j, &cc_cg_rec_schema, &recs, &err), -1);
		ck_assert_msg(strstr(err.msg, bad_values[i].err) == err.msg, "%d: %s", i, err.msg);
		ck_assert_int_eq(err.code, EINVAL);
	}
	/* Good values of every kind pass. */
	{
		_cleanup_json_ json_t *j = json_loads(
			"{\"files\": [{\"path\": \"/a/cpu.max\", \"kind\": \"quota\", \"orig\": \"150000 100000\", "
			"\"set\": \"max 100000\", \"seq\": 1, \"owners\": {\"c1\": \"2\"}}, {\"path\": \"/a/b/cpuset.cpus\", "
			"\"kind\": \"peer\", \"orig\": \"\", \"set\": \"0-1,6-15\", \"seq\": 2, \"owners\": {\"c1\": \"2-5\"}}]}",
			0, NULL);

		ck_assert_ptr_nonnull(j);
		ck_assert_msg(cc_noderecs_parse(j, &cc_cg_rec_schema, &recs, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(recs.n, 2);
		cc_noderecs_fini(&recs);
	}
	/* Lazily: the record is refused when it is first asked for. */
	setup();
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	put(l, "/a/cpu.max", "{\"kind\": \"quota\", \"orig\": \"lots\", \"seq\": 1, \"owners\": {}}");
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	l = open_index(state);
	ck_assert_int_eq(cc_noderecs_open(&recs, l, CC_CG_SECTION, &cc_cg_rec_schema, &err), 0);
	ck_assert_ptr_null(cc_noderecs_find(&recs, "/a/cpu.max"));
	ck_assert_int_eq(cc_noderecs_store(&recs, &err), -1);
	ck_assert_msg(strstr(err.msg, "sections.cgroup[\"/a/cpu.max\"].orig: \"lots\" is not a cpu.max value"), "%s",
		      err.msg);
	cc_noderecs_fini(&recs);
	cc_ledger_close(l);
	teardown();
}
END_TEST

START_TEST(test_get_checked)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve *c;

	setup();
	write_three();
	l = open_index(state);
	/* The entry says c2; make its loaded line say otherwise by asking for a
	 * carve whose CPUs the index does not hold. */
	hwloc_bitmap_clr(l->index->file_taken, 10);
	ck_assert_int_eq(cc_ledger_get(l, "c2", &c, &err), -1);
	ck_assert_msg(strstr(err.msg, "carves[1]: its CPUs are not in index.taken"), "%s", err.msg);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_commit(l, &err), -1);
	cc_ledger_close(l);
	teardown();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ledger_recs");
	TCase *t = tcase_create("records");

	tcase_add_test(t, test_record_lines);
	tcase_add_test(t, test_record_naming);
	tcase_add_test(t, test_header_section_read);
	tcase_add_test(t, test_record_lines_checked);
	tcase_add_test(t, test_get_and_drop);
	tcase_add_test(t, test_get_checked);
	tcase_add_test(t, test_cgroup_values_checked);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(suite)
