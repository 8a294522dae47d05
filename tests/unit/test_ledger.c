#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "ledger_int.h" /* white-box: the ledger's own fields */
#include "root.h"
#include "testlib.h"

/* ---- helpers ------------------------------------------------------------ */

static char base[64];   /* private temp dir of this test */
static char state[128]; /* base/state: the ledger directory */
static char lpath[192]; /* state/ledger.json */

static void setup(void)
{
	/* tmpfs where there is one, like /run in production: fsync there does
	 * not wait on a disk shared with whatever else the machine runs. */
	snprintf(base, sizeof(base), "%s/cc-ledger-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(lpath, sizeof(lpath), "%s/ledger.json", state);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void teardown(void)
{
	if (base[0])
		nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		ck_assert(feof(f));
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static void set_list(hwloc_bitmap_t b, const char *s)
{
	struct cc_err err = CC_ERR_INIT;

	ck_assert_msg(cc_cpulist_parse(s, b, "test", &err) == 0, "%s", err.msg);
}

static char *list_of(hwloc_const_bitmap_t b)
{
	char *s = cc_cpulist_format(b);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* Names in the state directory other than "." and "..", sorted by readdir. */
static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

/* ---- round trip --------------------------------------------------------- */


START_TEST(test_roundtrip)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve a, b;
	struct cc_carve *f;
	json_t *irq, *ch;
	struct stat st1, st2;
	_cleanup_free_ char *s = NULL;

	setup();
	umask(0); /* the ledger sets its own modes */
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 0);
	ck_assert_int_eq(mode_of(state), 0700);
	cc_test_carve(&a, "0123456789abcdef0123", "2-3", "10-11", true);
	cc_test_carve(&b, "vm:guest", "4-7", "", true);
	snprintf(b.kind, sizeof(b.kind), "vm");
	b.cgroup[0] = '\0';
	snprintf(b.mode, sizeof(b.mode), "cpuset-only");
	set_list(b.mems, "0-1");
	b.exclusive = false;
	b.steer_irqs = false;
	b.created = 0; /* stamped */
	json_decref(b.changes);
	b.changes = json_pack("[{s:s, s:s, s:s}]", "type", "cpu.max", "path", "/kubepods/pod1", "old",
			      "50000 100000");
	ck_assert_int_eq(cc_ledger_add(l, &a, &err), 0);
	ck_assert_int_eq(cc_ledger_add(l, &b, &err), 0);
	cc_carve_fini(&a);
	cc_carve_fini(&b);
	irq = cc_ledger_section(l, "irq", true);
	ck_assert_ptr_nonnull(irq);
	json_object_set_new(irq, "24", json_string("ff"));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);

	ck_assert_int_eq(mode_of(lpath), 0600);
	ck_assert_int_eq(mode_of(state), 0700);
	{
		char lock[PATH_MAX + 8];

		snprintf(lock, sizeof(lock), "%s/lock", state);
		ck_assert_int_eq(mode_of(lock), 0600);
	}
	s = slurp(lpath);
	ck_assert_ptr_nonnull(strstr(s, "\"version\": 2"));

	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 2);
	f = cc_ledger_find(l, "0123456789abcdef0123");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->kind, "container");
	ck_assert_str_eq(f->cgroup, "/kubepods/0123456789abcdef0123");
	ck_assert_str_eq(f->class_name, "latency");
	ck_assert_str_eq(f->core_class, "performance");
	ck_assert_str_eq(f->mode, "remote-partition");
	{
		_cleanup_free_ char *c = list_of(f->cpus), *p = list_of(f->parked), *m = list_of(f->mems);

		ck_assert_str_eq(c, "2-3");
		ck_assert_str_eq(p, "10-11");
		ck_assert_str_eq(m, "0");
	}
	ck_assert(f->exclusive && f->steer_irqs);
	ck_assert_int_eq(f->created, 1700000000);
	ck_assert_int_eq(json_array_size(f->changes), 0);
	f = cc_ledger_find(l, "vm:guest");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->kind, "vm");
	ck_assert_str_eq(f->cgroup, "");
	ck_assert(!f->exclusive && !f->steer_irqs);
	ck_assert_int_ge(f->created, (long long)time(NULL) - 60);
	ch = json_array_get(f->changes, 0);
	ck_assert_str_eq(json_string_value(json_object_get(ch, "old")), "50000 100000");
	{
		_cleanup_bitmap_ hwloc_bitmap_t t = cc_ledger_taken(l);
		_cleanup_free_ char *ts = list_of(t);

		ck_assert_str_eq(ts, "2-7,10-11");
	}
	ck_assert_str_eq(json_string_value(json_object_get(cc_ledger_section(l, "irq", false), "24")), "ff");
	ck_assert_ptr_null(cc_ledger_section(l, "vm", false));
	/* A snapshot cannot be written. */
	ck_assert_int_eq(cc_ledger_commit(l, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "opened read-only"));
	cc_ledger_close(l);

	/* No change: nothing rewritten.  An in-place edit of a section is a change. */
	ck_assert_int_eq(stat(lpath, &st1), 0);
	err = (struct cc_err)CC_ERR_INIT;
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	ck_assert_int_eq(stat(lpath, &st2), 0);
	ck_assert_int_eq(st1.st_ino, st2.st_ino);
	json_object_set_new(cc_ledger_section(l, "irq", false), "25", json_string("0f"));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	ck_assert_int_eq(stat(lpath, &st2), 0);
	ck_assert_int_ne(st1.st_ino, st2.st_ino);
	ck_assert_int_eq(cc_ledger_remove(l, "vm:guest"), 1);
	ck_assert_int_eq(cc_ledger_remove(l, "vm:guest"), 0);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);

	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 1);
	ck_assert_str_eq(l->carves[0]->id, "0123456789abcdef0123");
	ck_assert_str_eq(json_string_value(json_object_get(cc_ledger_section(l, "irq", false), "25")), "0f");
	cc_ledger_close(l);
	ck_assert_int_eq(count_entries(state, ""), 2); /* lock, ledger.json */
	teardown();
}
END_TEST

START_TEST(test_missing_dir_reads_empty)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;

	setup();
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 0);
	ck_assert_int_eq(access(state, F_OK), -1); /* created nothing */
	ck_assert_int_eq(cc_ledger_commit(l, &err), -1);
	cc_ledger_close(l);
	/* Opening for writing and closing without a change writes no ledger. */
	err = (struct cc_err)CC_ERR_INIT;
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	ck_assert_int_eq(access(lpath, F_OK), -1);
	teardown();
}
END_TEST

/* ---- strict parsing ----------------------------------------------------- */

/* Two carves of different kinds, as this corecarve writes them but for a
 * digest it does not check on a whole read (its first commit rewrites the
 * file once: test_foreign_format_rewritten_once). */
static const char valid_doc[] =
	"{\"version\": 2, \"index\": {\"carves\": 2, \"taken\": \"2-5,10-11\", \"steered\": \"2-3,10-11\", "
	"\"digest\": \"fnv1a64:0000000000000000\"}, \"sections\": {\"irq\": {}}}\n"
	"[\"a\", \"container\", \"/kubepods/a\"]\n"
	"[\"b\", \"exec\", \"\"]\n"
	"{\"id\": \"a\", \"kind\": \"container\", \"cgroup\": \"/kubepods/a\", \"class\": \"latency\", "
	"\"core_class\": \"performance\", \"mode\": \"remote-partition\", \"cpus\": \"2-3\", \"parked\": \"10-11\", "
	"\"mems\": \"0\", \"exclusive\": true, \"steer_irqs\": true, \"created\": 1700000000, \"changes\": []}\n"
	"{\"id\": \"b\", \"kind\": \"exec\", \"cgroup\": \"\", \"class\": \"batch\", \"core_class\": \"efficient\", "
	"\"mode\": \"affinity\", \"cpus\": \"4-5\", \"parked\": \"\", \"mems\": \"\", \"exclusive\": false, "
	"\"steer_irqs\": false, \"created\": 1700000001, \"changes\": [{\"type\": \"cpu.max\"}]}\n";

static const struct {
	const char *needle; /* replaced by `with`; NULL: `with` is the whole file */
	const char *with;
	const char *why;    /* expected error after "<dir>/ledger.json" */
} corrupt[] = {
	{ NULL, "", ":1:0: '[' or '{' expected near end of file" },
	{ NULL, "{\"version\": 2, \"index\": [", ":1:25: ']' expected near end of file" },
	{ NULL, "[]", ": expected an object at the top level, got an array" },
	{ NULL, "{\"carves\": [], \"sections\": {}}", ": missing field \"version\"" },
	{ ", \"sections\": {\"irq\": {}}", "", ": ledger: missing field \"sections\"" },
	{ "\"version\": 2", "\"version\": 3",
	  ": version: unsupported ledger version 3 (this corecarve reads version 2): `corecarve audit --set-aside-ledger` "
	  "moves it aside" },
	{ "\"version\": 2", "\"version\": \"2\"", ": version: expected an integer, got a string" },
	{ "\"version\": 2", "\"version\": 2, \"extra\": 0", ": ledger: unknown field \"extra\"" },
	{ "\"cpus\": \"2-3\"", "\"cpus\": \"3-1\"", ": carves[0].cpus: invalid cpu list \"3-1\": range 3-1 is reversed" },
	{ "\"cpus\": \"4-5\"", "\"cpus\": \"4-5,\"", ": carves[1].cpus: invalid cpu list \"4-5,\": trailing comma" },
	{ "\"mems\": \"0\"", "\"mems\": 0", ": carves[0].mems: expected a cpu-list string, got an integer" },
	{ "\"id\": \"b\"", "\"id\": \"a\"", ": carves[1].id: duplicate id \"a\" (also carves[0])" },
	{ "\"cpus\": \"4-5\"", "\"cpus\": \"3-5\"", ": carves[1]: CPUs 3 already belong to carve \"a\"" },
	{ "\"cpus\": \"4-5\"", "\"cpus\": \"4-5,11\"", ": carves[1]: CPUs 11 already belong to carve \"a\"" },
	{ "\"parked\": \"10-11\"", "\"parked\": \"3,10\"", ": carves[0]: parked CPUs 3 are also in its cpus" },
	{ "\"id\": \"a\"", "\"id\": 5", ": carves[0].id: expected a string, got an integer" },
	{ "\"id\": \"a\"", "\"id\": \"\"", ": carves[0].id: empty" },
	{ "\"id\": \"a\"", "\"id\": \"a\", \"id\": \"z\"", ":4:16: duplicate object key near '\"id\"'" },
	{ "\"id\": \"a\"", "\"id\": \"a\\u0000\"", ":4:16: \\u0000 is not allowed without JSON_ALLOW_NUL" },
	{ "\"id\": \"a\"", "\"id\": \"a\", \"colour\": \"red\"", ": carves[0]: unknown field \"colour\"" },
	{ "\"mems\": \"0\", ", "", ": carves[0]: missing field \"mems\"" },
	{ "\"exclusive\": true", "\"exclusive\": \"yes\"", ": carves[0].exclusive: expected a boolean, got a string" },
	{ "\"created\": 1700000000", "\"created\": 1.5", ": carves[0].created: expected an integer, got a real number" },
	{ "\"kind\": \"container\"", "\"kind\": \"pod\"", ": carves[0].kind: expected container, vm, exec or grant, got \"pod\"" },
	{ "\"mode\": \"affinity\"", "\"mode\": \"pinned\"", ": carves[1].mode: expected remote-partition" },
	{ "\"mode\": \"affinity\"", "\"mode\": \"grant\"",
	  ": carves[1]: kind \"exec\" with mode \"grant\": a grant, and only a grant, has mode grant" },
	{ "\"cgroup\": \"/kubepods/a\"", "\"cgroup\": \"/kubepods/../a\"", ": carves[0].cgroup: \"/kubepods/../a\" has a" },
	{ "\"changes\": []", "\"changes\": [1]", ": carves[0].changes[0]: expected an object, got an integer" },
	{ "\"changes\": []", "\"changes\": null", ": carves[0].changes: expected an array, got null" },
	{ "\"irq\": {}", "\"irq\": []", ": sections.irq: expected an object, got an array" },
	{ "\"created\": 1700000001, \"changes\": [{\"type\": \"cpu.max\"}]}", "\"created\": 1", ":5:201: '}' expected near end of file" },
};

static char *replace(const char *doc, const char *needle, const char *with)
{
	const char *at;
	char *out;

	if (!needle)
		return strdup(with);
	at = strstr(doc, needle);
	ck_assert_msg(at != NULL, "needle %s", needle);
	ck_assert_int_ge(asprintf(&out, "%.*s%s%s", (int)(at - doc), doc, with, at + strlen(needle)), 0);
	return out;
}

START_TEST(test_valid_doc_loads)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, valid_doc, 0600);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 2);
	cc_ledger_close(l);
	teardown();
}
END_TEST

START_TEST(test_corrupt_table)
{
	_cleanup_free_ char *doc = replace(valid_doc, corrupt[_i].needle, corrupt[_i].with);
	_cleanup_free_ char *after = NULL, *want = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct stat st1, st2;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, doc, 0600);
	ck_assert_int_eq(stat(lpath, &st1), 0);
	ck_assert_int_ge(asprintf(&want, "%s%s", lpath, corrupt[_i].why), 0);

	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %d: want \"%s\", got \"%s\"", _i, want, err.msg);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %d (read): got \"%s\"", _i, err.msg);

	/* Never reset: the bad file is still there, byte for byte. */
	after = slurp(lpath);
	ck_assert_str_eq(after, doc);
	ck_assert_int_eq(stat(lpath, &st2), 0);
	ck_assert_int_eq(st1.st_ino, st2.st_ino);
	teardown();
}
END_TEST

START_TEST(test_huge_file)
{
	struct cc_err err = CC_ERR_INIT;
	struct stat st;
	int fd;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	fd = open(lpath, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)CC_LEDGER_MAX + 1), 0);
	close(fd);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "ledger.json: 16777217 bytes, larger than the 16777216-byte limit"));
	ck_assert_int_eq(stat(lpath, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)CC_LEDGER_MAX + 1);
	teardown();
}
END_TEST

START_TEST(test_ledger_symlink_refused)
{
	struct cc_err err = CC_ERR_INIT;
	char other[PATH_MAX + 16];

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	snprintf(other, sizeof(other), "%s/other.json", base);
	write_file(other, valid_doc, 0600);
	ck_assert_int_eq(symlink(other, lpath), 0);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "ledger.json: is a symbolic link; refusing it"));
	teardown();
}
END_TEST

/* ---- the directory ------------------------------------------------------ */

START_TEST(test_dir_symlink_refused)
{
	struct cc_err err = CC_ERR_INIT;
	char real[PATH_MAX + 16], slash[PATH_MAX + 2], want[PATH_MAX + 64];

	setup();
	snprintf(real, sizeof(real), "%s/real", base);
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, state), 0);
	snprintf(want, sizeof(want), "state directory %s is a symbolic link; refusing it", state);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_str_eq(err.msg, want);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	ck_assert_str_eq(err.msg, want);
	/* A trailing slash would make open(2) follow it. */
	snprintf(slash, sizeof(slash), "%s/", state);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_open(slash, &err));
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(count_entries(real, ""), 0);
	teardown();
}
END_TEST

START_TEST(test_dir_permissions)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	char want[PATH_MAX + 128];

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(chmod(state, 0777), 0);
	snprintf(want, sizeof(want), "state directory %s is group- or world-writable (mode 0777); refusing it", state);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(chmod(state, 0720), 0);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "group- or world-writable (mode 0720)"));
	ck_assert_int_eq(count_entries(state, ""), 0); /* not even a lock file */

	/* Readable by others is fine (0755); only write access is refused. */
	ck_assert_int_eq(chmod(state, 0755), 0);
	err = (struct cc_err)CC_ERR_INIT;
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_ledger_close(l);

	/* Owned by somebody else: only root can set that up. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(state, 12345, 12345), 0);
		snprintf(want, sizeof(want), "state directory %s is owned by uid 12345, not 0; refusing it", state);
		err = (struct cc_err)CC_ERR_INIT;
		ck_assert_ptr_null(cc_ledger_open(state, &err));
		ck_assert_str_eq(err.msg, want);
		err = (struct cc_err)CC_ERR_INIT;
		ck_assert_ptr_null(cc_ledger_read(state, &err));
		ck_assert_str_eq(err.msg, want);
	} else {
		cc_test_skip("a state directory owned by another user needs root to set up");
	}

	/* Not a directory at all. */
	teardown();
	setup();
	write_file(state, "x", 0600);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	snprintf(want, sizeof(want), "state directory %s is not a directory", state);
	ck_assert_str_eq(err.msg, want);
	teardown();
}
END_TEST

START_TEST(test_new_dir_modes_despite_umask)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve c;

	setup();
	umask(0);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "x", "1", "", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	ck_assert_int_eq(mode_of(state), 0700);
	ck_assert_int_eq(mode_of(lpath), 0600);
	teardown();
	setup();
	umask(0277); /* would make a 0400 directory the ledger could not write into */
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "x", "1", "", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_ledger_close(l);
	ck_assert_int_eq(mode_of(state), 0700);
	ck_assert_int_eq(mode_of(lpath), 0600);
	umask(022);
	teardown();
}
END_TEST

START_TEST(test_stale_temp_removed)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	char tmp[PATH_MAX + 64];

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, valid_doc, 0600);
	snprintf(tmp, sizeof(tmp), "%s/ledger.json.tmp.99999", state);
	write_file(tmp, "{\"version\": 1, \"carv", 0600);
	/* A reader leaves it alone. */
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_ledger_close(l);
	ck_assert_int_eq(access(tmp, F_OK), 0);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(l->ncarves, 2);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* ---- add / remove ------------------------------------------------------- */

START_TEST(test_add_refusals)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve a, c;

	setup();
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&a, "a", "2-3", "10-11", true);
	/* Modules append to a fresh carve's changes while applying it. */
	ck_assert(json_is_array(a.changes) && json_array_size(a.changes) == 0);
	ck_assert_int_eq(cc_ledger_add(l, &a, &err), 0);

	ck_assert_int_eq(cc_ledger_add(l, &a, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"a\": already in the ledger");
	ck_assert_int_eq(err.code, EEXIST);

	cc_test_carve(&c, "b", "4,11", "", true);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"b\": CPUs 11 already belong to carve \"a\"");
	ck_assert_int_eq(err.code, EBUSY);

	set_list(c.cpus, "4-5");
	set_list(c.parked, "5");
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"b\": parked CPUs 5 are also in its cpus");

	hwloc_bitmap_zero(c.parked);
	snprintf(c.mode, sizeof(c.mode), "everything");
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "carve \"b\".mode: expected remote-partition"));

	snprintf(c.mode, sizeof(c.mode), "affinity");
	c.id[0] = '\0';
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"\".id: empty");

	snprintf(c.id, sizeof(c.id), "b\n");
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve.id: contains a control character");

	snprintf(c.id, sizeof(c.id), "b\xff");
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve.id: not valid UTF-8");

	snprintf(c.id, sizeof(c.id), "b");
	hwloc_bitmap_set(c.cpus, CC_CPU_LIMIT);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"b\".cpus: set reaches beyond 8191");

	hwloc_bitmap_clr(c.cpus, CC_CPU_LIMIT);
	json_decref(c.changes);
	c.changes = json_object();
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), -1);
	ck_assert_str_eq(err.msg, "carve \"b\".changes: expected an array, got an object");
	json_decref(c.changes);
	c.changes = NULL; /* reads as empty */

	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 2);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_carve_fini(&a);
	cc_carve_fini(&c);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* ---- concurrency -------------------------------------------------------- */

#define WORKERS 32

/* One hook invocation: lock, first-fit two adjacent free CPUs of the
 * universe, record, commit.  Exit 0 placed, 1 refused, 2+ error. */
static int worker(int id, int universe, int gate)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	hwloc_bitmap_t taken;
	struct cc_carve c;
	char name[32], go;
	int cpu = -1;

	if (read(gate, &go, 1) < 0)
		return 5;
	l = cc_ledger_open(state, &err);
	if (!l) {
		fprintf(stderr, "worker %d: %s\n", id, err.msg);
		return 2;
	}
	taken = cc_ledger_taken(l);
	for (int i = 0; i + 1 < universe && cpu < 0; i++)
		if (!hwloc_bitmap_isset(taken, (unsigned)i) && !hwloc_bitmap_isset(taken, (unsigned)i + 1))
			cpu = i;
	hwloc_bitmap_free(taken);
	if (cpu < 0) {
		cc_ledger_close(l);
		return 1;
	}
	snprintf(name, sizeof(name), "worker-%d", id);
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "%s", name);
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	hwloc_bitmap_set_range(c.cpus, cpu, cpu + 1);
	if (cc_ledger_add(l, &c, &err) < 0 || cc_ledger_commit(l, &err) < 0) {
		fprintf(stderr, "worker %d: %s\n", id, err.msg);
		cc_carve_fini(&c);
		cc_ledger_close(l);
		return 3;
	}
	cc_carve_fini(&c);
	cc_ledger_close(l);
	return 0;
}

static void run_workers(int universe, int *placed, int *refused)
{
	pid_t pids[WORKERS];
	int gate[2];

	ck_assert_int_eq(pipe(gate), 0);
	for (int i = 0; i < WORKERS; i++) {
		pids[i] = cc_test_fork();
		if (pids[i] == 0) {
			close(gate[1]);
			_exit(worker(i, universe, gate[0]));
		}
	}
	/* All start together: closing the gate wakes every reader. */
	close(gate[0]);
	close(gate[1]);
	*placed = *refused = 0;
	for (int i = 0; i < WORKERS; i++) {
		int st;

		ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "worker %d: status %#x", i, st);
		if (WEXITSTATUS(st) == 0)
			(*placed)++;
		else
			(*refused)++;
	}
}

static void check_parallel(int universe, int want_placed)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	hwloc_bitmap_t taken;
	int placed, refused, weight = 0;

	setup();
	run_workers(universe, &placed, &refused);
	ck_assert_int_eq(placed, want_placed);
	ck_assert_int_eq(refused, WORKERS - want_placed);
	/* The strict loader itself refuses overlapping carves. */
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, want_placed);
	for (int i = 0; i < l->ncarves; i++) {
		ck_assert_int_eq(hwloc_bitmap_weight(l->carves[i]->cpus), 2);
		weight += hwloc_bitmap_weight(l->carves[i]->cpus);
	}
	taken = cc_ledger_taken(l);
	ck_assert_int_eq(hwloc_bitmap_weight(taken), weight);
	ck_assert_int_eq(weight, 2 * want_placed);
	ck_assert_int_lt(hwloc_bitmap_last(taken), universe);
	hwloc_bitmap_free(taken);
	cc_ledger_close(l);
	ck_assert_int_eq(count_entries(state, "ledger.json.tmp."), 0);
	teardown();
}

START_TEST(test_parallel_64)
{
	check_parallel(64, WORKERS);
}
END_TEST

START_TEST(test_parallel_40)
{
	check_parallel(40, 20);
}
END_TEST

/* ---- killed writers ----------------------------------------------------- */

/* Generation k of the ledger: k%4+1 carves "g<k>-<j>" on CPUs 8j + k%8,
 * and section "gen" {"k": k, "pad": k%97 bytes} so sizes differ. */
static int write_generation(struct cc_ledger *l, long k, struct cc_err *err)
{
	char pad[128];
	json_t *sec;

	while (l->ncarves)
		cc_ledger_remove(l, l->carves[0]->id);
	for (int j = 0; j < (int)(k % 4) + 1; j++) {
		struct cc_carve c;
		int r;

		cc_carve_init(&c);
		snprintf(c.id, sizeof(c.id), "g%ld-%d", k, j);
		snprintf(c.kind, sizeof(c.kind), "exec");
		snprintf(c.mode, sizeof(c.mode), "affinity");
		hwloc_bitmap_set(c.cpus, (unsigned)(8 * j + k % 8));
		r = cc_ledger_add(l, &c, err);
		cc_carve_fini(&c);
		if (r < 0)
			return -1;
	}
	memset(pad, 'x', sizeof(pad));
	pad[k % 97] = '\0';
	sec = cc_ledger_section(l, "gen", true);
	json_object_set_new(sec, "k", json_integer(k));
	json_object_set_new(sec, "pad", json_string(pad));
	return cc_ledger_commit(l, err);
}

/* The generation the ledger holds, or -1 if it is not a whole one. */
static long read_generation(const struct cc_ledger *l)
{
	json_t *sec = json_object_get(l->sections, "gen");
	long k;

	if (!sec)
		return l->ncarves == 0 ? 0 : -1;
	k = (long)json_integer_value(json_object_get(sec, "k"));
	if (l->ncarves != (int)(k % 4) + 1 || json_string_length(json_object_get(sec, "pad")) != (size_t)(k % 97))
		return -1;
	for (int j = 0; j < l->ncarves; j++) {
		char id[64];

		snprintf(id, sizeof(id), "g%ld-%d", k, j);
		if (strcmp(l->carves[j]->id, id) != 0 || hwloc_bitmap_weight(l->carves[j]->cpus) != 1 ||
		    hwloc_bitmap_first(l->carves[j]->cpus) != (int)(8 * j + k % 8))
			return -1;
	}
	return k;
}

static void committer(long from)
{
	for (long k = from + 1;; k++) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_ledger *l = cc_ledger_open(state, &err);

		if (!l || write_generation(l, k, &err) < 0) {
			fprintf(stderr, "committer: %s\n", err.msg);
			_exit(2);
		}
		cc_ledger_close(l);
	}
}

#define KILLS 300
#define KILL_BUDGET_US 4000000L

static long since_us(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000000L + (t1.tv_nsec - t0->tv_nsec) / 1000);
}

START_TEST(test_killed_writer)
{
	struct timespec start;
	long gen = 0, window = 4000;
	int caught_temp = 0, advanced = 0, kills = 0;

	setup();
	srand((unsigned)getpid());
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* The kill lands at a random moment within `window`, which follows
	 * the speed of commits (slower under valgrind or on a loaded machine):
	 * it widens after a kill that let no commit through and narrows after
	 * one that did, so kills keep landing before, inside and after
	 * commits.  Bounded in count and in time. */
	for (; kills < KILLS && (kills < 60 || since_us(&start) < KILL_BUDGET_US); kills++) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_ledger *l;
		pid_t pid = cc_test_fork();
		long k;
		int st;

		if (pid == 0)
			committer(gen);
		usleep((useconds_t)(rand() % window));
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFSIGNALED(st), "committer exited on its own (%#x)", st);
		if (access(state, F_OK) == 0)
			caught_temp += count_entries(state, "ledger.json.tmp.") > 0;

		l = cc_ledger_open(state, &err);
		ck_assert_msg(l != NULL, "after kill %d: %s", kills, err.msg);
		k = read_generation(l);
		ck_assert_msg(k >= gen, "after kill %d: generation %ld, was %ld", kills, k, gen);
		if (k > gen) {
			advanced++;
			window = window * 4 / 5 > 1000 ? window * 4 / 5 : 1000;
		} else {
			window = window * 5 / 4 < 200000 ? window * 5 / 4 : 200000;
		}
		gen = k;
		cc_ledger_close(l);
		/* The open cleared what the killed writer left. */
		ck_assert_int_eq(count_entries(state, "ledger.json.tmp."), 0);
		ck_assert_int_eq(count_entries(state, ""), gen ? 2 : 1);
	}
	printf("test_killed_writer: %d kills, %d advanced, %d left a temp file, generation %ld, window %ld us\n",
	       kills, advanced, caught_temp, gen, window);
	ck_assert_msg(advanced >= 10, "committer rarely got anywhere: %d/%d", advanced, kills);
	teardown();
}
END_TEST

/* ---- gc ----------------------------------------------------------------- */

struct released {
	int n;
	char ids[8][sizeof(((struct cc_carve *)0)->id)];
	int fail; /* return -1 for this many calls */
};

static int release_cb(struct cc_carve *c, void *arg)
{
	struct released *r = arg;

	if (r->fail > 0) {
		r->fail--;
		return -1;
	}
	snprintf(r->ids[r->n++ % 8], sizeof(r->ids[0]), "%s", c->id);
	return 0;
}

static void mkdirs(const char *under, const char *rel)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", under, rel);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_gc)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct released rel = { 0 };
	struct cc_ledger *l;
	struct cc_carve c;
	char path[PATH_MAX + 64];

	setup();
	mkdirs(base, "root/sys/fs/cgroup/kubepods/a");
	mkdirs(base, "root/sys/fs/cgroup/kubepods/b");
	mkdirs(base, "root/cg/kubepods/a");
	snprintf(path, sizeof(path), "%s/root", base);
	root = cc_root_open(path, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);

	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&c, "a", "1", "", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	cc_test_carve(&c, "b", "2", "", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	cc_test_carve(&c, "vm:x", "3", "", true); /* not a container: kept */
	snprintf(c.kind, sizeof(c.kind), "vm");
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	cc_test_carve(&c, "nocg", "4", "", true); /* no cgroup recorded: kept */
	c.cgroup[0] = '\0';
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	cc_test_carve(&c, "rel", "5", "", true); /* relative cgroup path */
	snprintf(c.cgroup, sizeof(c.cgroup), "kubepods/a");
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);

	/* Everything alive. */
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 0);
	ck_assert_int_eq(rel.n, 0);

	/* b's cgroup is gone. */
	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/b", base);
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_int_eq(rel.n, 1);
	ck_assert_str_eq(rel.ids[0], "b");
	ck_assert_ptr_null(cc_ledger_find(l, "b"));
	ck_assert_int_eq(l->ncarves, 4);

	/* Another mount point, where only kubepods/a exists: b is gone already. */
	ck_assert_int_eq(cc_test_gc(l, root, "/cg", release_cb, &rel, &err), 0);

	/* a and rel are gone; the first release fails: gc keeps it as
	 * releasing, goes on with rel, and commits both at once. */
	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/a", base);
	ck_assert_int_eq(rmdir(path), 0);
	rel.fail = 1;
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_ptr_nonnull(cc_ledger_find(l, "a"));
	ck_assert(cc_ledger_find(l, "a")->releasing);
	ck_assert_ptr_null(cc_ledger_find(l, "rel"));
	{
		/* On disk already (the lock is ours: the file itself). */
		char lp[PATH_MAX + 32];
		_cleanup_free_ char *txt = NULL;

		snprintf(lp, sizeof(lp), "%s/ledger.json", state);
		txt = cc_test_slurp(lp);
		ck_assert_ptr_nonnull(strstr(txt, "[\"a\", \"container\", \"/kubepods/a\", \"releasing\"]"));
		ck_assert_ptr_nonnull(strstr(txt, "\"state\": \"releasing\""));
		ck_assert_ptr_null(strstr(txt, "\"rel\""));
	}
	{
		_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);

		ck_assert(hwloc_bitmap_isset(taken, 1));
	}
	/* The next gc tries a again, though its cgroup question is settled. */
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_int_eq(rel.n, 3);
	ck_assert_str_eq(rel.ids[1], "rel");
	ck_assert_str_eq(rel.ids[2], "a");
	ck_assert_int_eq(l->ncarves, 2);
	ck_assert_ptr_nonnull(cc_ledger_find(l, "vm:x"));
	ck_assert_ptr_nonnull(cc_ledger_find(l, "nocg"));

	/* A cgroup that is a file is no cgroup; NULL release is allowed. */
	cc_test_carve(&c, "f", "6", "", true);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/f", base);
	write_file(path, "", 0600);
	ck_assert_int_eq(cc_test_gc(l, root, NULL, NULL, NULL, &err), 1);

	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 2);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* A carve the ledger says is releasing is asked about again before it
 * is undone: while its cgroup is there with processes in it (the fake
 * host's cgroup.events), gc keeps it and its CPUs; empty, or gone, it
 * is released.  A VM's, with no cgroup to ask, is retried as before. */
START_TEST(test_gc_rechecks_releasing)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct released rel = { 0 };
	struct cc_ledger *l;
	struct cc_carve c;
	char path[PATH_MAX + 64];

	setup();
	mkdirs(base, "root/sys/fs/cgroup/kubepods/live");
	mkdirs(base, "root/sys/fs/cgroup/kubepods/gone");
	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/live/cgroup.events", base);
	write_file(path, "populated 1\nfrozen 0\n", 0644);
	snprintf(path, sizeof(path), "%s/root", base);
	ck_assert_ptr_nonnull(root = cc_root_open(path, &err));
	ck_assert_ptr_nonnull(l = cc_ledger_open(state, &err));
	cc_test_carve(&c, "live", "1", "", true);
	snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/live");
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	cc_test_carve(&c, "vm:x", "3", "", true);
	snprintf(c.kind, sizeof(c.kind), "vm");
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	cc_carve_fini(&c);
	ck_assert_int_eq(cc_ledger_mark_releasing(l, "live"), 1);
	ck_assert_int_eq(cc_ledger_mark_releasing(l, "vm:x"), 1);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);

	/* From the index, as a hook opens it: the live one stays. */
	ck_assert_ptr_nonnull(l = cc_ledger_open_index(state, &err));
	ck_assert_int_eq(cc_test_gc_due(l, root, NULL, NULL, NULL, &err), 1);
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_int_eq(rel.n, 1);
	ck_assert_str_eq(rel.ids[0], "vm:x");
	ck_assert_ptr_nonnull(cc_ledger_find(l, "live"));
	{
		_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);

		ck_assert(hwloc_bitmap_isset(taken, 1));
	}
	/* Its last process gone, the cgroup left behind: released. */
	snprintf(path, sizeof(path), "%s/root/sys/fs/cgroup/kubepods/live/cgroup.events", base);
	write_file(path, "populated 0\nfrozen 0\n", 0644);
	ck_assert_int_eq(cc_test_gc(l, root, NULL, release_cb, &rel, &err), 1);
	ck_assert_str_eq(rel.ids[1], "live");
	ck_assert_int_eq(l->ncarves, 0);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* ---- corecarve status: the ledger's reader on the command line ---------- */

/* Run `corecarve status ARGS`; returns the exit status, output in *out. */
static int run_status(const char *args, char **out)
{
	const char *bin = cc_test_bin("status tests");
	_cleanup_free_ char *cmd = NULL;
	FILE *p;
	size_t len = 0;
	int st;

	*out = NULL;
	if (!bin)
		return -1;
	ck_assert_int_ge(asprintf(&cmd, "CORECARVE_STATE_DIR= '%s' status %s 2>&1", bin, args), 0);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (getdelim(out, &len, '\0', p) < 0) {
		free(*out);
		*out = strdup("");
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_status_cli)
{
	_cleanup_free_ char *args = NULL, *out = NULL;
	_cleanup_json_ json_t *doc = NULL;
	json_error_t je;
	json_t *cpu;
	size_t i;
	int roles = 0;

	setup();
	ck_assert_int_ge(asprintf(&args, "--state '%s' --synthetic 'pack:2 core:8 pu:2'", state), 0);
	if (run_status(args, &out) < 0) {
		teardown();
		return;
	}
	/* A directory --state names must exist: a misspelt one would read as
	 * a node with no carves.  Nothing is created. */
	ck_assert_msg(strstr(out, "corecarve: --state ") == out && strstr(out, ": no such directory (the hook's state "
									     "directory is /run/corecarve"),
		      "%s", out);
	ck_assert_int_eq(access(state, F_OK), -1);
	free(out);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	/* An empty one: no carves, and what each class could carve. */
	ck_assert_int_eq(run_status(args, &out), 0);
	ck_assert_msg(strstr(out, "no carves\n\nCLASS      CORE-CLASS  TOTAL RESERVED CARVED PARKED FREE LARGEST\n"
				  "latency    performance    32        4      0      0   28      13\n") == out,
		      "%s", out);

	write_file(lpath, valid_doc, 0600);
	free(out);
	ck_assert_int_eq(run_status(args, &out), 0);
	ck_assert_msg(strstr(out, "CARVE ") && strstr(out, "\na ") && strstr(out, "2-3   run      a\n") &&
			      strstr(out, "10-11 parked   a\n") && strstr(out, "4-5   run      b\n") &&
			      strstr(out, "\nCLASS      CORE-CLASS  TOTAL RESERVED CARVED PARKED FREE LARGEST\n"),
		      "%s", out);
	/* One table, chosen columns, no header. */
	free(out);
	free(args);
	ck_assert_int_ge(asprintf(&args, "--state '%s' --synthetic 'pack:2 core:8 pu:2' --table cpus -o ROLE,CPUS -n", state), 0);
	ck_assert_int_eq(run_status(args, &out), 0);
	ck_assert_msg(strstr(out, "reserved 0-1\nrun      2-3\nrun      4-5\nfree     6-9\nparked   10-11\n") == out, "%s", out);
	free(out);
	free(args);
	ck_assert_int_ge(asprintf(&args, "--state '%s' --synthetic 'pack:2 core:8 pu:2' -o ROLE", state), 0);
	ck_assert_int_eq(run_status(args, &out), 2);
	ck_assert_str_eq(out, "corecarve: --output: name the table it applies to with --table carves|cpus|capacity|power\n");
	free(args);
	ck_assert_int_ge(asprintf(&args, "--state '%s' --synthetic 'pack:2 core:8 pu:2' --table capacity --raw -n", state), 0);
	free(out);
	ck_assert_int_eq(run_status(args, &out), 0);
	ck_assert_msg(strstr(out, "latency performance 32 4 4 2 22 10\n") == out, "%s", out);

	free(args);
	ck_assert_int_ge(asprintf(&args, "--state='%s' --synthetic 'pack:2 core:8 pu:2' --json", state), 0);
	free(out);
	ck_assert_int_eq(run_status(args, &out), 0);
	doc = json_loads(out, 0, &je);
	ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "carves")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "schema_version")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "capacity")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(doc, "carves"), 0), "state")), "live");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(doc, "carves"), 1), "mode")),
			 "affinity");
	ck_assert_int_eq(json_array_size(json_object_get(doc, "cpus")), 32);
	json_array_foreach(json_object_get(doc, "cpus"), i, cpu) {
		json_int_t n = json_integer_value(json_object_get(cpu, "cpu"));
		const char *role = json_string_value(json_object_get(cpu, "role"));
		const char *owner = json_string_value(json_object_get(cpu, "owner"));

		ck_assert_int_eq(n, (json_int_t)i);
		if (n == 2 || n == 3 || n == 4 || n == 5) {
			ck_assert_str_eq(role, "run");
			ck_assert_str_eq(owner, n < 4 ? "a" : "b");
			roles++;
		} else if (n == 10 || n == 11) {
			ck_assert_str_eq(role, "parked");
			ck_assert_str_eq(owner, "a");
			roles++;
		} else {
			ck_assert_msg(!strcmp(role, "free") || !strcmp(role, "reserved"), "cpu %d: %s", (int)n, role);
			ck_assert(json_is_null(json_object_get(cpu, "owner")));
		}
	}
	ck_assert_int_eq(roles, 6);

	/* A corrupt ledger is reported, not shown as empty. */
	write_file(lpath, "{\"version\": 2, \"index\": [", 0600);
	free(out);
	ck_assert_int_eq(run_status(args, &out), 2);
	ck_assert_msg(strstr(out, "corecarve: ") == out && strstr(out, "ledger.json:1:25: ']' expected") &&
			      strstr(out, "(a damaged ledger: `corecarve status --kernel` shows the node's partitions without it"),
		      "%s", out);
	teardown();
}
END_TEST

/* ---- the file's bytes ----------------------------------------------------- */

/* Commit compares the new text with the file's bytes: the text must stay
 * what jansson prints for the same values (json_dumps, no flags: one line
 * each, the header then a carve a line), or an unchanged ledger would be
 * rewritten on every commit.  Escapes, non-ASCII, extreme CPU numbers and
 * nested changes included, and everything reads back. */
static void assert_jansson_format(const char *path)
{
	_cleanup_free_ char *text = slurp(path);
	char *line, *save = NULL;
	int n = 0;

	ck_assert_ptr_nonnull(text);
	ck_assert(text[0] && text[strlen(text) - 1] == '\n');
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		_cleanup_json_ json_t *doc = NULL;
		_cleanup_free_ char *again = NULL;
		json_error_t je;

		doc = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		ck_assert_msg(doc != NULL, "line %d: %s: %s", n + 1, je.text, line);
		ck_assert(n > 0 || json_integer_value(json_object_get(doc, "version")) == CC_LEDGER_VERSION);
		again = json_dumps(doc, 0);
		ck_assert_ptr_nonnull(again);
		ck_assert_str_eq(line, again);
	}
	ck_assert_int_ge(n, 1);
}

START_TEST(test_format_is_janssons)
{
	/* Sets whose list form has singles, pairs, long runs, CPU 0 and the
	 * highest CPU the ledger takes. */
	static const char *const sets[][2] = {
		{ "0", "8191" }, { "1-2", "5,7,9" }, { "3,10-11,13-40", "" }, { "100-101,103", "8000-8190" },
	};
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	json_t *sec;

	setup();
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	/* Empty, then with carves. */
	sec = cc_ledger_section(l, "empty", true);
	ck_assert_ptr_nonnull(sec);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	assert_jansson_format(lpath);
	for (int i = 0; i < (int)(sizeof(sets) / sizeof(sets[0])); i++) {
		struct cc_carve c;
		char id[64];

		/* Escapes and non-ASCII go through jansson's own string writer. */
		snprintf(id, sizeof(id), i == 1 ? "q\"uo\\te/%d" : i == 2 ? "caf\xc3\xa9-%d" : "plain-%d", i);
		cc_test_carve(&c, id, sets[i][0], sets[i][1], true);
		c.exclusive = i % 2;
		c.created = i == 3 ? 0 : 1700000000 + i;
		if (i == 2) {
			json_decref(c.changes);
			c.changes = json_pack("[{s:s, s:s, s:{s:[i,i], s:{}}}, {s:s, s:[]}]", "type", "cpu.max", "old",
					      "50000 100000", "nested", "list", 1, 2, "obj", "type", "x\ny", "more");
			ck_assert_ptr_nonnull(c.changes);
		}
		ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
		cc_carve_fini(&c);
	}
	sec = cc_ledger_section(l, "irq", true);
	json_object_set_new(sec, "24", json_string("ff"));
	json_object_set_new(sec, "deep", json_pack("{s:[{s:b}], s:f}", "a", "b", 1, "r", 0.5));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	assert_jansson_format(lpath);

	/* Read back: the lists are cc_cpulist_format's, the sets the same. */
	l = cc_ledger_read(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 4);
	for (int i = 0; i < 4; i++) {
		_cleanup_free_ char *c = list_of(l->carves[i]->cpus), *p = list_of(l->carves[i]->parked);
		_cleanup_bitmap_ hwloc_bitmap_t want = hwloc_bitmap_alloc();
		_cleanup_free_ char *w = NULL;

		set_list(want, sets[i][0]);
		w = list_of(want);
		ck_assert_str_eq(c, w);
		ck_assert_str_eq(p, sets[i][1]);
	}
	ck_assert_str_eq(l->carves[2]->id, "caf\xc3\xa9-2");
	ck_assert_str_eq(l->carves[1]->id, "q\"uo\\te/1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l->carves[2]->changes, 1), "type")), "x\ny");
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(json_array_get(l->carves[2]->changes, 0),
									   "nested"), "list")), 2);
	cc_ledger_close(l);
	teardown();
}
END_TEST

/* A ledger another build formatted differently (here: by hand) is
 * rewritten by the first commit, even an unchanged one, and then no more. */
START_TEST(test_foreign_format_rewritten_once)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct stat st1, st2, st3;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, valid_doc, 0600);
	ck_assert_int_eq(stat(lpath, &st1), 0);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	ck_assert_int_eq(stat(lpath, &st2), 0);
	ck_assert_int_ne(st1.st_ino, st2.st_ino);
	assert_jansson_format(lpath);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 2);
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	/* An in-place edit of a carve's changes is seen, as of a section. */
	ck_assert_int_eq(stat(lpath, &st3), 0);
	ck_assert_int_eq(st2.st_ino, st3.st_ino);
	json_array_append_new(l->carves[0]->changes, json_pack("{s:s}", "type", "peer-cpuset"));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	ck_assert_int_eq(stat(lpath, &st3), 0);
	ck_assert_int_ne(st2.st_ino, st3.st_ino);
	teardown();
}
END_TEST

/* The loader tests each carve against the union of those before it and
 * searches pairwise only to name the owner: the message names the carve
 * that holds the CPUs, not the first one, and counts parked CPUs. */
START_TEST(test_overlap_names_owner)
{
	static const char doc[] =
		"{\"version\": 2, \"index\": {\"carves\": 4, \"taken\": \"0-9\", \"steered\": \"\","
		" \"digest\": \"fnv1a64:0000000000000000\"}, \"sections\": {}}\n"
		"[\"a\", \"exec\", \"\"]\n[\"b\", \"exec\", \"\"]\n[\"c\", \"exec\", \"\"]\n[\"d\", \"exec\", \"\"]\n"
		"{\"id\": \"a\", \"kind\": \"exec\", \"cgroup\": \"\", \"class\": \"c\", \"core_class\": \"p\","
		" \"mode\": \"affinity\", \"cpus\": \"0-1\", \"parked\": \"\", \"mems\": \"\", \"exclusive\": false,"
		" \"steer_irqs\": false, \"created\": 1, \"changes\": []}\n"
		"{\"id\": \"b\", \"kind\": \"exec\", \"cgroup\": \"\", \"class\": \"c\", \"core_class\": \"p\","
		" \"mode\": \"affinity\", \"cpus\": \"4-5\", \"parked\": \"8-9\", \"mems\": \"\", \"exclusive\": false,"
		" \"steer_irqs\": false, \"created\": 1, \"changes\": []}\n"
		"{\"id\": \"c\", \"kind\": \"exec\", \"cgroup\": \"\", \"class\": \"c\", \"core_class\": \"p\","
		" \"mode\": \"affinity\", \"cpus\": \"2-3\", \"parked\": \"\", \"mems\": \"\", \"exclusive\": false,"
		" \"steer_irqs\": false, \"created\": 1, \"changes\": []}\n"
		"{\"id\": \"d\", \"kind\": \"exec\", \"cgroup\": \"\", \"class\": \"c\", \"core_class\": \"p\","
		" \"mode\": \"affinity\", \"cpus\": \"6,9\", \"parked\": \"7\", \"mems\": \"\", \"exclusive\": false,"
		" \"steer_irqs\": false, \"created\": 1, \"changes\": []}\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *want = NULL;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, doc, 0600);
	ck_assert_int_ge(asprintf(&want, "%s: carves[3]: CPUs 9 already belong to carve \"b\"", lpath), 0);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_str_eq(err.msg, want);
	teardown();
}
END_TEST

/* A ledger as the ledger writes it, damaged one value at a time: each
 * damage is refused with the message naming the field (by the open and
 * the read-only load alike), and what is only another spelling of the
 * same document (escapes, spacing) still loads. */
static void write_canonical(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve a, b, c;

	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_test_carve(&a, "c1", "0-1", "", true);
	cc_test_carve(&b, "c2", "2-3", "10", true);
	cc_test_carve(&c, "c3", "4-5", "", true);
	json_decref(b.changes);
	b.changes = json_pack("[{s:s, s:s}]", "type", "cpu.max", "old", "max 100000");
	ck_assert_int_eq(cc_ledger_add(l, &a, &err), 0);
	ck_assert_int_eq(cc_ledger_add(l, &b, &err), 0);
	ck_assert_int_eq(cc_ledger_add(l, &c, &err), 0);
	json_object_set_new(cc_ledger_section(l, "irq", true), "24", json_string("ff"));
	ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	cc_ledger_close(l);
	cc_carve_fini(&a);
	cc_carve_fini(&b);
	cc_carve_fini(&c);
}

static const struct {
	const char *needle, *with;
	const char *why; /* after "<dir>/ledger.json"; NULL: it loads */
} canonical_cases[] = {
	{ "\"id\": \"c2\"", "\"id\": \"c1\"", ": carves[1].id: duplicate id \"c1\" (also carves[0])" },
	{ "\"cpus\": \"4-5\"", "\"cpus\": \"3-5\"", ": carves[2]: CPUs 3 already belong to carve \"c2\"" },
	{ "\"cpus\": \"4-5\"", "\"cpus\": \"5,10\"", ": carves[2]: CPUs 10 already belong to carve \"c2\"" },
	{ "\"cpus\": \"0-1\"", "\"cpus\": \"1-0\"", ": carves[0].cpus: invalid cpu list \"1-0\": range 1-0 is reversed" },
	{ "\"kind\": \"container\"", "\"kind\": \"pod\"", ": carves[0].kind: expected container, vm, exec or grant, got \"pod\"" },
	{ "\"created\": 1700000000", "\"created\": 01700000000", ":5:230: invalid token near '0'" },
	{ "\"created\": 1700000000", "\"created\": 99999999999999999999", ":5:249: too big integer near" },
	{ "\"type\": \"cpu.max\"", "\"type\": \"cpu.max\", \"type\": \"x\"", ":6:281: duplicate object key near '\"type\"'" },
	{ "\"changes\": []", "\"changes\": {}", ": carves[0].changes: expected an array, got an object" },
	{ "\"irq\": {\"24\": \"ff\"}", "\"irq\": 5", ": sections.irq: expected an object, got an integer" },
	{ "\"version\": 2", "\"version\": 3", ": version: unsupported ledger version 3" },
	/* The index must say what the carves say. */
	{ "\"taken\": \"0-5,10\"", "\"taken\": \"0-5\"", ": index.taken: \"0-5\" is not the CPUs of the carves" },
	{ "[\"c2\", \"container\"", "[\"c9\", \"container\"", ": entries[1]: \"c9\" (container, \"/kubepods/c2\") is not carves[1]" },
	{ "\"carves\": 3", "\"carves\": 4", ": entries[3]: expected [id, kind, cgroup] or [id, kind, cgroup, \"releasing\"], got an object" },
	{ "\"carves\": 3", "\"carves\": 2", ": carves[0]: expected an object, got an array" },
	{ "\"steered\": \"0-5,10\"", "\"steered\": \"\"", ": index.steered: \"\" is not the CPUs of the steer-away carves" },
	{ "\"index\": {", "\"index\": {\"more\": 1, ", ": index: unknown field \"more\"" },
	{ "\"c1\", \"container\", \"/kubepods/c1\"]", "\"c1\", \"container\"]", ": entries[0]: expected [id, kind, cgroup] or [id, kind, cgroup, \"releasing\"], got another array" },
	{ "}\n{\"id\": \"c2\"", "}\n\n{\"id\": \"c2\"", ":6:0: '[' or '{' expected near end of file" },
	{ "\"mode\": \"remote-partition\"", "\"mode\": \"remote-partitio\\u00f1\"",
	  ": carves[0].mode: expected remote-partition, local-partition, cpuset-only, affinity or grant, got \"remote-partitio\xc3\xb1\"" },
	/* Another spelling of a valid document: it loads. */
	{ "\"mode\": \"remote-partition\"", "\"mode\": \"remote\\u002dpartition\"", NULL },
	{ "\"cgroup\": \"/kubepods/c3\"", "\"cgroup\": \"/kubepods/c\\u0033\"", NULL },
	{ "\"steer_irqs\": true", "\"steer_irqs\" : true", NULL },
	{ "\"version\": 2, ", "\"version\" :2 ,", NULL },
	{ "\"digest\": \"fnv1a64:", "\"digest\": \"fnv1a64:0", NULL },
};

START_TEST(test_canonical_layout_table)
{
	_cleanup_free_ char *text = NULL, *doc = NULL, *want = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;

	setup();
	write_canonical();
	text = slurp(lpath);
	doc = replace(text, canonical_cases[_i].needle, canonical_cases[_i].with);
	write_file(lpath, doc, 0600);
	if (!canonical_cases[_i].why) {
		l = cc_ledger_read(state, &err);
		ck_assert_msg(l != NULL, "case %d: %s", _i, err.msg);
		ck_assert_int_eq(l->ncarves, 3);
		ck_assert_str_eq(l->carves[0]->mode, "remote-partition");
		ck_assert_str_eq(l->carves[2]->cgroup, "/kubepods/c3");
		cc_ledger_close(l);
		teardown();
		return;
	}
	ck_assert_int_ge(asprintf(&want, "%s%s", lpath, canonical_cases[_i].why), 0);
	ck_assert_ptr_null(cc_ledger_open(state, &err));
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %d: want \"%s\", got \"%s\"", _i, want, err.msg);
	err = (struct cc_err)CC_ERR_INIT;
	ck_assert_ptr_null(cc_ledger_read(state, &err));
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %d (read): got \"%s\"", _i, err.msg);
	teardown();
}
END_TEST

/* A version-1 file (one indented document, from builds before any
 * release) is refused by every way of opening it, in one line that names
 * the file, the version and the way out; the file is left as it was, and
 * the way out works. */
START_TEST(test_version1_refused)
{
	static const char v1[] = "{\n  \"version\": 1,\n  \"carves\": [],\n  \"sections\": {\"irq\": {}}\n}\n";
	_cleanup_free_ char *want = NULL, *after = NULL;
	struct cc_err err = CC_ERR_INIT;
	char saved[PATH_MAX + 64];
	struct cc_ledger *l;

	setup();
	ck_assert_int_eq(mkdir(state, 0700), 0);
	write_file(lpath, v1, 0600);
	ck_assert_int_ge(asprintf(&want, "%s: version: unsupported ledger version 1 (this corecarve reads version 2): "
				  "`corecarve audit --set-aside-ledger` moves it aside", lpath), 0);
	for (int how = 0; how < 3; how++) {
		err = (struct cc_err)CC_ERR_INIT;
		l = how == 0 ? cc_ledger_open(state, &err) : how == 1 ? cc_ledger_open_index(state, &err)
								: cc_ledger_read(state, &err);
		ck_assert_ptr_null(l);
		ck_assert_int_eq(err.code, EPROTO);
		ck_assert_str_eq(err.msg, want);
	}
	after = slurp(lpath);
	ck_assert_str_eq(after, v1);

	ck_assert_int_eq(cc_ledger_set_aside(state, NULL, saved, sizeof(saved), &err), 0);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_int_eq(l->ncarves, 0);
	cc_ledger_close(l);
	free(after);
	after = slurp(saved);
	ck_assert_str_eq(after, v1);
	teardown();
}
END_TEST

static Suite *ledger_suite(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc = tcase_create("ledger");
	TCase *cli = tcase_create("status");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_missing_dir_reads_empty);
	tcase_add_test(tc, test_valid_doc_loads);
	tcase_add_loop_test(tc, test_corrupt_table, 0, (int)(sizeof(corrupt) / sizeof(corrupt[0])));
	tcase_add_test(tc, test_huge_file);
	tcase_add_test(tc, test_ledger_symlink_refused);
	tcase_add_test(tc, test_dir_symlink_refused);
	tcase_add_test(tc, test_dir_permissions);
	tcase_add_test(tc, test_new_dir_modes_despite_umask);
	tcase_add_test(tc, test_stale_temp_removed);
	tcase_add_test(tc, test_add_refusals);
	tcase_add_test(tc, test_parallel_64);
	tcase_add_test(tc, test_parallel_40);
	tcase_add_test(tc, test_killed_writer);
	tcase_add_test(tc, test_gc);
	tcase_add_test(tc, test_gc_rechecks_releasing);
	tcase_add_test(tc, test_format_is_janssons);
	tcase_add_test(tc, test_foreign_format_rewritten_once);
	tcase_add_test(tc, test_overlap_names_owner);
	tcase_add_loop_test(tc, test_canonical_layout_table, 0,
			    (int)(sizeof(canonical_cases) / sizeof(canonical_cases[0])));
	tcase_add_test(tc, test_version1_refused);
	suite_add_tcase(s, tc);
	tcase_set_timeout(cli, 30);
	tcase_add_test(cli, test_status_cli);
	suite_add_tcase(s, cli);
	return s;
}

CC_TEST_MAIN(ledger_suite)
