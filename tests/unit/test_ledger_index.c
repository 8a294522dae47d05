/* The ledger read by its index (cc_ledger_open_index, the hook's create
 * path): the same decisions and the same bytes as a whole read, the carves
 * that were there loaded only when one is needed, and an index that cannot
 * be trusted never used. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "ledger_int.h" /* white-box: the ledger's own fields */
#include "root.h"
#include "testlib.h"

static char base[64];
static char state[128], state2[128];
static char lpath[192], lpath2[192];

static void setup(void)
{
	snprintf(base, sizeof(base), "%s/cc-lindex-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
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

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(text, 1, len, f), len);
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

/* c1 0-1 (steers), c2 2-3 + parked 10 (with a change to restore), c3
 * 4-5, and an "irq" section. */
static void write_three(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open(state, &err);
	struct cc_carve *c2;

	ck_assert_msg(l != NULL, "%s", err.msg);
	add(l, "c1", "0-1", "", true);
	add(l, "c2", "2-3", "10", false);
	add(l, "c3", "4-5", "", false);
	c2 = cc_ledger_find(l, "c2");
	json_array_append_new(c2->changes, json_pack("{s:s, s:s}", "type", "cpu.max", "old", "max 100000"));
	json_object_set_new(cc_ledger_section(l, "irq", true), "24", json_string("ff"));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
}

static char *list(hwloc_const_bitmap_t b)
{
	char *s = cc_cpulist_format(b);

	ck_assert_ptr_nonnull(s);
	return s;
}

static struct cc_ledger *open_index(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_open_index(state, &err);

	ck_assert_msg(l != NULL, "%s", err.msg);
	return l;
}

static void assert_reads(const char *dir, int n, const char *taken)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l = cc_ledger_read(dir, &err);
	_cleanup_bitmap_ hwloc_bitmap_t t = NULL;
	_cleanup_free_ char *s = NULL;

	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, n);
	t = cc_ledger_taken(l);
	s = list(t);
	ck_assert_str_eq(s, taken);
	cc_ledger_close(l);
}


/* The carves that were there stay unparsed: the unions, ids and cgroups
 * come from the index, a new carve is checked against them, and the file
 * written is byte for byte the one a whole read would have written. */
START_TEST(test_index_same_as_whole)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *before = NULL, *after = NULL, *whole = NULL, *s = NULL;
	_cleanup_free_ const char **ids = NULL, **cgroups = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t t = NULL, st = NULL;
	struct cc_ledger *l;
	size_t blen, alen, wlen;
	int n;

	setup();
	write_three();
	before = cc_test_slurp_len(lpath, &blen);
	ck_assert_int_eq(mkdir(state2, 0700), 0);
	write_file(lpath2, before, blen);

	l = open_index();
	ck_assert_ptr_nonnull(l->index);
	ck_assert_int_eq(l->ncarves, 0);
	t = cc_ledger_taken(l);
	s = list(t);
	ck_assert_str_eq(s, "0-5,10");
	st = cc_ledger_held(l, NULL, true);
	free(s);
	s = list(st);
	ck_assert_str_eq(s, "0-1");
	ck_assert_int_eq(cc_ledger_refs(l, NULL, &ids, &cgroups, &n), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(ids[1], "c2");
	ck_assert_str_eq(cgroups[2], "/kubepods/c3");
	ck_assert_ptr_nonnull(cc_ledger_section(l, "irq", false));
	ck_assert_ptr_null(cc_ledger_find(l, "c9"));
	ck_assert_ptr_nonnull(l->index); /* an unknown id loads nothing */

	add(l, "c4", "6-7", "", true);
	ck_assert_ptr_nonnull(l->index);
	ck_assert_ptr_nonnull(cc_ledger_find(l, "c4"));
	free(s);
	hwloc_bitmap_free(st);
	st = cc_ledger_held(l, "c4", true);
	s = list(st);
	ck_assert_str_eq(s, "0-1");
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	/* A second commit of the same state writes nothing new. */
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	ck_assert_ptr_nonnull(l->index);
	cc_ledger_close(l);

	/* The same through a whole read. */
	l = cc_ledger_open(state2, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_ptr_null(l->index);
	add(l, "c4", "6-7", "", true);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);

	after = cc_test_slurp_len(lpath, &alen);
	whole = cc_test_slurp_len(lpath2, &wlen);
	ck_assert_int_eq(alen, wlen);
	ck_assert(memcmp(after, whole, alen) == 0);
	/* The lines that were there are the same bytes, each block with its
	 * new line after it. */
	{
		const char *e = strchr(before, '\n') + 1, *c = strstr(before, "\n{") + 1, *at;
		static const char entry[] = "[\"c4\", \"container\", \"/kubepods/c4\"]\n";

		at = memmem(after, alen, e, (size_t)(c - e));
		ck_assert_ptr_nonnull(at);
		ck_assert(!strncmp(at + (c - e), entry, strlen(entry)));
		at = strstr(after, c);
		ck_assert_ptr_nonnull(at);
		ck_assert_msg(!strncmp(at + strlen(c), "{\"id\": \"c4\",", 12), "%s", at + strlen(c));
	}
	assert_reads(state, 4, "0-7,10");
	teardown();
}
END_TEST

/* One of the carves that were there is needed (an earlier carve under the
 * same id, or its removal): all are loaded, those added since kept. */
START_TEST(test_index_find_loads_all)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve *c;

	setup();
	write_three();
	l = open_index();
	add(l, "c4", "6-7", "", false);
	c = cc_ledger_find(l, "c2");
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(l->index);
	ck_assert_int_eq(l->ncarves, 4);
	ck_assert_str_eq(l->carves[3]->id, "c4");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(c->changes, 0), "old")), "max 100000");
	ck_assert_int_eq(cc_ledger_remove(l, "c2"), 1);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_reads(state, 3, "0-1,4-7");

	/* Removal by id alone. */
	l = open_index();
	ck_assert_int_eq(cc_ledger_remove(l, "c1"), 1);
	ck_assert_ptr_null(l->index);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_reads(state, 2, "4-7");
	teardown();
}
END_TEST

/* Handles (ledger.h): a carve read alone from an index-only ledger, one
 * added since and one of the file stay the same pointers, with the same
 * contents, through a load of every carve, an add and another carve's
 * removal: what lets gc's release and the effects keep a carve across
 * an undo that loads the ledger. */
START_TEST(test_index_handles_stay)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve *alone, *added, *c3, *c;

	setup();
	write_three();
	l = open_index();
	ck_assert_int_eq(cc_ledger_get(l, "c2", &alone, &err), 1);
	add(l, "c4", "6-7", "", false);
	added = cc_ledger_find(l, "c4");
	ck_assert_ptr_nonnull(added);
	ck_assert_ptr_nonnull(l->index);
	ck_assert_int_eq(cc_ledger_load_all(l, &err), 0);
	ck_assert_ptr_null(l->index);
	ck_assert_ptr_eq(cc_ledger_find(l, "c2"), alone);
	ck_assert_ptr_eq(cc_ledger_find(l, "c4"), added);
	c3 = cc_ledger_find(l, "c3");
	ck_assert_ptr_nonnull(c3);
	add(l, "c5", "8", "", false);
	ck_assert_int_eq(cc_ledger_remove(l, "c1"), 1);
	ck_assert_ptr_eq(cc_ledger_find(l, "c2"), alone);
	ck_assert_ptr_eq(cc_ledger_find(l, "c3"), c3);
	ck_assert_ptr_eq(cc_ledger_find(l, "c4"), added);
	ck_assert_str_eq(alone->id, "c2");
	ck_assert_str_eq(added->id, "c4");
	ck_assert_str_eq(c3->id, "c3");
	c = cc_ledger_find(l, "c5");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_reads(state, 4, "2-8,10");
	teardown();
}
END_TEST

/* Refusals are those of a whole read: a duplicate id, CPUs that belong to
 * a carve in the file (named), and no union that leaves out a carve the
 * index cannot subtract. */
START_TEST(test_index_refusals)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ const char **ids = NULL, **cgroups = NULL;
	struct cc_ledger *l;
	struct cc_carve c;
	int n;

	setup();
	write_three();
	l = open_index();
	errno = 0;
	ck_assert_ptr_null(cc_ledger_held(l, "c1", false));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cc_ledger_refs(l, "c2", &ids, &cgroups, &n), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(l->index);

	cc_test_carve(&c, "c5", "6,10", "", false);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"c5\": CPUs 10 already belong to carve \"c2\"");
	cc_carve_fini(&c);
	cc_ledger_close(l);

	l = open_index();
	err = (struct cc_err)CC_ERR_INIT;
	cc_test_carve(&c, "c3", "8", "", false);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"c3\": already in the ledger");
	cc_carve_fini(&c);
	cc_ledger_close(l);
	assert_reads(state, 3, "0-5,10");
	teardown();
}
END_TEST

struct released {
	int n;
	char id[sizeof(((struct cc_carve *)0)->id)];
	char old[64]; /* the change it had to restore */
};

static int release_cb(struct cc_carve *c, void *arg)
{
	struct released *r = arg;
	const char *old = json_string_value(json_object_get(json_array_get(c->changes, 0), "old"));

	r->n++;
	snprintf(r->id, sizeof(r->id), "%s", c->id);
	snprintf(r->old, sizeof(r->old), "%s", old ? old : "");
	return 0;
}

/* gc from the index while every cgroup is there; a stale carve is
 * released from its whole record. */
START_TEST(test_index_gc)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct released rel = { 0 };
	char path[PATH_MAX + 64];
	struct cc_ledger *l;

	setup();
	write_three();
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/root/sys/fs/cgroup/kubepods/c1' "
					  "'%s/root/sys/fs/cgroup/kubepods/c2' '%s/root/sys/fs/cgroup/kubepods/c3'",
				    base, base, base),
			 0);
	snprintf(path, sizeof(path), "%s/root", base);
	root = cc_root_open(path, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);

	l = open_index();
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 0);
	ck_assert_ptr_nonnull(l->index);
	cc_ledger_close(l);

	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/c2", base);
	ck_assert_int_eq(rmdir(path), 0);
	l = open_index();
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_ptr_null(l->index);
	ck_assert_int_eq(rel.n, 1);
	ck_assert_str_eq(rel.id, "c2");
	ck_assert_str_eq(rel.old, "max 100000");
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_reads(state, 2, "0-1,4-5");
	teardown();
}
END_TEST

/* The same on the host's root, where a cgroup is looked up with one stat:
 * a directory is live, a missing path or a file in its place is gone. */
START_TEST(test_index_gc_host)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct released rel = { 0 };
	char mount[PATH_MAX + 64];
	struct cc_ledger *l;

	setup();
	write_three();
	snprintf(mount, sizeof(mount), "%s/cgroup", base);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/kubepods/c1' && touch '%s/kubepods/c3'", mount, mount), 0);
	root = cc_root_open("/", &err);
	ck_assert_msg(root != NULL && root->is_host, "%s", err.msg);
	ck_assert_int_eq(cc_root_is_dir(root, mount, &err), 1);
	ck_assert_int_eq(cc_root_is_dir(root, "/nonexistent/corecarve", &err), 0);

	l = open_index();
	ck_assert_int_eq(cc_test_gc(l, root, mount, release_cb, &rel, &err), 2);
	ck_assert_int_eq(rel.n, 2);
	ck_assert_int_eq(l->ncarves, 1);
	ck_assert_str_eq(l->carves[0]->id, "c1");
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_reads(state, 1, "0-1");
	teardown();
}
END_TEST

/* An index that does not match its lines byte for byte is not used: the
 * whole file is read, which loads the same carves spelled another way (and
 * the next commit writes them anew) or says what is wrong. */
START_TEST(test_index_untrusted)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL, *edited = NULL, *again = NULL;
	struct cc_ledger *l;
	size_t len;
	char *at;

	setup();
	write_three();
	text = cc_test_slurp_len(lpath, &len);

	/* Another spelling of c3's line. */
	edited = strdup(text);
	at = strstr(edited, "\"id\": \"c3\"");
	memcpy(at, "\"id\":\"c3\" ", 10);
	write_file(lpath, edited, len);
	l = open_index();
	ck_assert_ptr_null(l->index);
	ck_assert_int_eq(l->ncarves, 3);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	again = cc_test_slurp_len(lpath, &len);
	ck_assert_str_eq(again, text);
	l = open_index();
	ck_assert_ptr_nonnull(l->index);
	cc_ledger_close(l);

	/* The index's union edited: the whole read refuses the file. */
	free(edited);
	edited = strdup(text);
	at = strstr(edited, "\"taken\": \"0-5,10\"");
	memcpy(at, "\"taken\": \"0-4,10\"", 17);
	write_file(lpath, edited, len);
	ck_assert_ptr_null(cc_ledger_open_index(state, &err));
	ck_assert_msg(strstr(err.msg, "ledger.json: index.taken: \"0-4,10\" is not the CPUs of the carves"), "%s",
		      err.msg);

	/* Cut off before its last newline. */
	err = (struct cc_err)CC_ERR_INIT;
	write_file(lpath, text, len - 1);
	ck_assert_ptr_null(cc_ledger_open_index(state, &err));
	ck_assert_msg(strstr(err.msg, "ledger.json:7: line without its newline"), "%s", err.msg);
	teardown();
}
END_TEST

/* The digest as ledger_format.c computes it: FNV-1a 64 of "<hash of the
 * entry lines> <hash of the carve lines>" (16 hex digits each), the two
 * unions, each with its NUL. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

/* Write `text` (a version-2 ledger edited by the caller) with the digest
 * its index and lines have now, as only a deliberate edit would. */
static void write_redigested(const char *text)
{
	const uint64_t init = 0xcbf29ce484222325ULL;
	const char *entries = strchr(text, '\n') + 1, *carves = strstr(text, "\n{") + 1, *taken, *steered;
	_cleanup_json_ json_t *doc = json_loadb(text, (size_t)(entries - text), 0, NULL);
	_cleanup_free_ char *head = NULL, *out = NULL;
	char both[40], digest[32];
	json_t *index;
	uint64_t h;

	ck_assert_ptr_nonnull(doc);
	index = json_object_get(doc, "index");
	taken = json_string_value(json_object_get(index, "taken"));
	steered = json_string_value(json_object_get(index, "steered"));
	snprintf(both, sizeof(both), "%016" PRIx64 " %016" PRIx64, fnv(init, entries, (size_t)(carves - entries)),
		 fnv(init, carves, strlen(carves)));
	h = fnv(fnv(fnv(init, both, strlen(both) + 1), taken, strlen(taken) + 1), steered, strlen(steered) + 1);
	snprintf(digest, sizeof(digest), "fnv1a64:%016" PRIx64, h);
	json_object_set_new(index, "digest", json_string(digest));
	head = json_dumps(doc, 0);
	ck_assert_int_ge(asprintf(&out, "%s\n%s", head, entries), 0);
	write_file(lpath, out, strlen(out));
}

/* A file whose digest matches but whose entries do not say what its carve
 * lines say (only a deliberate edit makes one): the index is trusted at
 * open, the mismatch is found when the carves are loaded, and nothing is
 * written after that. */
START_TEST(test_index_mismatch_found_late)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL;
	struct cc_ledger *l;
	struct cc_carve *c, dup;
	size_t len;
	char *at;

	setup();
	write_three();
	text = cc_test_slurp_len(lpath, &len);
	/* The entry says c9 where the carve line says c3. */
	at = strstr(text, "[\"c3\"");
	ck_assert_ptr_nonnull(at);
	at[3] = '9';
	write_redigested(text);

	l = open_index();
	ck_assert_ptr_nonnull(l->index);
	add(l, "c4", "6", "", false);
	ck_assert_int_eq(cc_ledger_lookup(l, "c4", &c, &err), 1); /* added since: no load */
	ck_assert_int_eq(cc_ledger_lookup(l, "c8", &c, &err), 0);
	ck_assert_int_eq(cc_ledger_lookup(l, "c1", &c, &err), -1);
	ck_assert_msg(strstr(err.msg, "entries[2]: \"c9\""), "%s", err.msg);
	/* Adding under an id in the file needs the load: refused with its error. */
	err = (struct cc_err)CC_ERR_INIT;
	cc_test_carve(&dup, "c9", "7", "", false);
	ck_assert_int_eq(cc_ledger_add(l, &dup, &err), -1);
	ck_assert_msg(strstr(err.msg, "entries[2]: \"c9\""), "%s", err.msg);
	cc_carve_fini(&dup);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_find(l, "c9")); /* the load fails */
	ck_assert_ptr_null(cc_ledger_find(l, "c1"));
	ck_assert_ptr_nonnull(l->index);
	ck_assert_int_eq(l->ncarves, 1); /* c4 kept */
	ck_assert_int_eq(cc_ledger_commit(l, &err), -1);
	ck_assert_msg(strstr(err.msg, "entries[2]: \"c9\" (container, \"/kubepods/c3\") is not carves[2]"), "%s",
		      err.msg);
	cc_ledger_close(l);
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	teardown();
}
END_TEST

/* A carve line that does not parse, behind a matching digest: commits that
 * need no carve still work (its bytes are copied as they are), and the
 * error of the load that comes later names the line where it now is. */
START_TEST(test_index_damaged_line_found_late)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL;
	struct cc_ledger *l;
	struct cc_carve *c;
	size_t len;
	char *at;

	setup();
	write_three();
	text = cc_test_slurp_len(lpath, &len);
	at = strstr(text, "\"cpus\": \"2-3\"");
	ck_assert_ptr_nonnull(at);
	memcpy(at, "\"cpus\": [2-3]", 13);
	write_redigested(text);

	l = open_index();
	ck_assert_ptr_nonnull(l->index);
	add(l, "c4", "6", "", false);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	add(l, "c5", "7", "", false);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	/* Header, 5 entry lines, then c1, c2: line 8. */
	ck_assert_int_eq(cc_ledger_lookup(l, "c1", &c, &err), -1);
	ck_assert_msg(strstr(err.msg, "ledger.json:8:"), "%s", err.msg);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_commit(l, &err), -1);
	cc_ledger_close(l);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	ck_assert_msg(strstr(err.msg, "ledger.json:8:"), "%s", err.msg);
	teardown();
}
END_TEST

/* A NUL byte anywhere is refused, by both reads. */
START_TEST(test_nul_byte_refused)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL;
	size_t len;

	setup();
	write_three();
	text = cc_test_slurp_len(lpath, &len);
	text[len - 3] = '\0';
	write_file(lpath, text, len);
	ck_assert_ptr_null(cc_ledger_open_index(state, &err));
	ck_assert_msg(strstr(err.msg, "ledger.json: contains a NUL byte"), "%s", err.msg);
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	teardown();
}
END_TEST

static Suite *ledger_index_suite(void)
{
	Suite *s = suite_create("ledger_index");
	TCase *tc = tcase_create("index");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_index_same_as_whole);
	tcase_add_test(tc, test_index_find_loads_all);
	tcase_add_test(tc, test_index_handles_stay);
	tcase_add_test(tc, test_index_refusals);
	tcase_add_test(tc, test_index_gc);
	tcase_add_test(tc, test_index_gc_host);
	tcase_add_test(tc, test_index_untrusted);
	tcase_add_test(tc, test_index_mismatch_found_late);
	tcase_add_test(tc, test_index_damaged_line_found_late);
	tcase_add_test(tc, test_nul_byte_refused);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(ledger_index_suite)
