/* The topology cache: the model read back is the model discovered (every
 * fixture and synthetic shape, field for field and decision for decision),
 * a stale stamp or a damaged file is never used, and the cache never makes
 * a load fail. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"
#include "policy.h"
#include "testlib.h"
#include "topo_cache.h"

struct shape {
	const char *name;
	enum cc_topo_kind kind;
	const char *dir, *file, *top; /* fixtures */
	const char *desc;             /* synthetic */
};

static const struct shape shapes[] = {
	{ "F03", CC_TOPO_HOST, "F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1" },
	{ "F05", CC_TOPO_XML, "F05-amd-zen5-strixpoint-ryzen-ai9-hx370", "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml" },
	{ "F06", CC_TOPO_HOST, "F06-amd-epyc-7451-2s", "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451" },
	{ "F10", CC_TOPO_HOST, "F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve" },
	{ "F11", CC_TOPO_HOST, "F11-arm-X3-A715-A710-A510", "arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3" },
	{ "hybrid", CC_TOPO_SYNTHETIC, .desc = "pack:1 l3:1 l2:4 core:4 pu:1 | performance=0-3 efficient=4-15" },
	{ "8 numa 2 classes", CC_TOPO_SYNTHETIC,
	  .desc = "pack:2 numa:4 l3:1 core:6 pu:2 | performance=0-47 efficient=48-95" },
};
#define NSHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

/* A shape's source; NULL (loud skip) when its fixture is absent. */
static bool shape_source(const struct shape *s, struct cc_topo_source *src, struct cc_root **root)
{
	static char path[4096];
	const char *rootp = "/";
	struct cc_err err = CC_ERR_INIT;

	memset(src, 0, sizeof(*src));
	src->kind = s->kind;
	src->arg = s->desc;
	if (s->kind == CC_TOPO_HOST) {
		const char *tree = cc_test_fixture_tree(s->dir, s->file);

		if (!tree)
			return false;
		snprintf(path, sizeof(path), "%s/%s", tree, s->top);
		rootp = path;
	} else if (s->kind == CC_TOPO_XML) {
		src->arg = cc_test_fixture_file(s->dir, s->file);
		if (!src->arg)
			return false;
	}
	*root = cc_root_open(rootp, &err);
	ck_assert_msg(*root != NULL, "%s", err.msg);
	src->root = *root;
	return true;
}

static struct cc_topo *discover(const struct cc_topo_source *src)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t = cc_topo_load(src, &err);

	ck_assert_msg(t != NULL, "%s", err.msg);
	return t;
}

static char *serialize(const struct cc_topo *t, const char *stamp)
{
	struct cc_err err = CC_ERR_INIT;
	char *s = cc_topo_serialize(t, stamp, &err);

	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

/* ---- the model read back ---------------------------------------------- */

static void same_sets(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b, const char *what, int i)
{
	ck_assert_msg(hwloc_bitmap_isequal(a, b), "%s %d differs", what, i);
}

static void same_domains(const struct cc_domain *a, const struct cc_domain *b, int n, const char *what)
{
	for (int i = 0; i < n; i++) {
		ck_assert_msg(a[i].id == b[i].id && a[i].os == b[i].os && a[i].ncores == b[i].ncores &&
				      a[i].package == b[i].package && a[i].numa == b[i].numa && a[i].level == b[i].level &&
				      a[i].size == b[i].size,
			      "%s %d differs", what, i);
		same_sets(a[i].cpus, b[i].cpus, what, i);
		same_sets(a[i].cores, b[i].cores, what, i);
	}
}

/* Field by field, every member of struct cc_topo. */
static void same_model(const struct cc_topo *a, const struct cc_topo *b)
{
	ck_assert_int_eq(a->npus, b->npus);
	ck_assert_int_eq(a->ncores, b->ncores);
	ck_assert_int_eq(a->npackages, b->npackages);
	ck_assert_int_eq(a->nnuma, b->nnuma);
	ck_assert_int_eq(a->nllcs, b->nllcs);
	ck_assert_int_eq(a->nl2s, b->nl2s);
	ck_assert_int_eq(a->nclasses, b->nclasses);
	ck_assert_str_eq(a->source, b->source);
	ck_assert_str_eq(a->class_source, b->class_source);
	same_sets(a->online, b->online, "online", 0);
	same_sets(a->allowed, b->allowed, "allowed", 0);
	same_sets(a->offline, b->offline, "offline", 0);
	same_sets(a->present, b->present, "present", 0);
	same_sets(a->possible, b->possible, "possible", 0);
	for (int i = 0; i < a->npus; i++) {
		const struct cc_pu *p = &a->pus[i], *q = &b->pus[i];

		ck_assert_msg(p->os == q->os && p->core == q->core && p->package == q->package && p->numa == q->numa &&
				      p->l2 == q->l2 && p->llc == q->llc && p->cls == q->cls && p->online == q->online &&
				      p->allowed == q->allowed,
			      "pu %d differs", i);
	}
	for (int i = 0; i < a->ncores; i++) {
		const struct cc_core *c = &a->cores[i], *d = &b->cores[i];

		ck_assert_msg(c->id == d->id && c->package == d->package && c->numa == d->numa && c->l2 == d->l2 &&
				      c->llc == d->llc && c->cls == d->cls && c->npus == d->npus,
			      "core %d differs", i);
		same_sets(c->pus, d->pus, "core", i);
	}
	same_domains(a->packages, b->packages, a->npackages, "package");
	same_domains(a->numa, b->numa, a->nnuma, "numa");
	same_domains(a->llcs, b->llcs, a->nllcs, "llc");
	same_domains(a->l2s, b->l2s, a->nl2s, "l2");
	for (int i = 0; i < a->nclasses; i++) {
		const struct cc_class *c = &a->classes[i], *d = &b->classes[i];

		ck_assert_str_eq(c->name, d->name);
		ck_assert_str_eq(c->kind, d->kind);
		ck_assert_msg(c->rank == d->rank && c->ncores == d->ncores && c->threads_per_core == d->threads_per_core,
			      "class %d differs", i);
		same_sets(c->cpus, d->cpus, "class cpus", i);
		same_sets(c->cores, d->cores, "class cores", i);
	}
	ck_assert_int_eq(a->distance != NULL, b->distance != NULL);
	if (a->distance)
		ck_assert_mem_eq(a->distance, b->distance, sizeof(int) * (size_t)a->nnuma * (size_t)a->nnuma);
}

/* The same decisions, request after request, with carves accumulating. */
static void same_decisions(const struct cc_topo *a, const struct cc_topo *b)
{
	struct cc_err e1 = CC_ERR_INIT, e2 = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_default(&e1);
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	static const struct {
		const char *cls;
		int cpus;
	} reqs[] = { { "latency", 1 }, { "throughput", 4 }, { "latency", 2 }, { "throughput", 2 },
		     { "latency", 3 }, { "throughput", 1 }, { "background", 1 } };

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct cc_request rq = { .cpus = reqs[i].cpus };
		struct cc_decision d1, d2;
		int r1, r2;

		snprintf(rq.class_name, sizeof(rq.class_name), "%s", reqs[i].cls);
		cc_err_clear(&e1);
		cc_err_clear(&e2);
		r1 = cc_allocate(a, p, taken, &rq, &d1, &e1);
		r2 = cc_allocate(b, p, taken, &rq, &d2, &e2);
		ck_assert_int_eq(r1, r2);
		ck_assert_str_eq(e1.msg, e2.msg);
		if (r1 < 0)
			continue;
		ck_assert(hwloc_bitmap_isequal(d1.cpus, d2.cpus));
		ck_assert(hwloc_bitmap_isequal(d1.parked, d2.parked));
		ck_assert(hwloc_bitmap_isequal(d1.mems, d2.mems));
		if (d1.exclusive) {
			hwloc_bitmap_or(taken, taken, d1.cpus);
			hwloc_bitmap_or(taken, taken, d1.parked);
		}
		cc_decision_fini(&d1);
		cc_decision_fini(&d2);
	}
}

START_TEST(round_trip)
{
	const struct shape *s = &shapes[_i];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_topo_ struct cc_topo *t = NULL, *u = NULL;
	_cleanup_free_ char *text = NULL, *again = NULL;
	struct cc_topo_source src;

	if (!shape_source(s, &src, &root))
		return;
	t = discover(&src);
	text = serialize(t, "stamp 1");
	u = cc_topo_deserialize(text, strlen(text), "stamp 1", &err);
	ck_assert_msg(u != NULL, "%s: %s", s->name, err.msg);
	same_model(t, u);
	same_decisions(t, u);
	again = serialize(u, "stamp 1");
	ck_assert_str_eq(text, again);
}
END_TEST

START_TEST(stale_stamp_refused)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_topo_ struct cc_topo *t = NULL, *u = NULL;
	_cleanup_free_ char *text = NULL;
	struct cc_topo_source src;

	shape_source(&shapes[5], &src, &root);
	t = discover(&src);
	text = serialize(t, "v1 boot=a online=0-15");
	ck_assert_ptr_null(cc_topo_deserialize(text, strlen(text), "v1 boot=a online=0-14", &err));
	ck_assert_int_eq(err.code, ESTALE);
	ck_assert_str_eq(err.msg, "topology cache: line 2: stamp: the machine or the program changed since it was written");
	/* NULL: any stamp (for tools that only read the model). */
	u = cc_topo_deserialize(text, strlen(text), NULL, &err);
	ck_assert_ptr_nonnull(u);
}
END_TEST

/* ---- damaged files ------------------------------------------------------ */

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Replace the first `from` with `to` and write a valid checksum again, so
 * only the field checks can refuse it. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out, *end;
	size_t n;

	ck_assert_msg(at != NULL, "\"%s\" not in the text", from);
	ck_assert_int_ne(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)), -1);
	end = strstr(out, "\nend ");
	ck_assert_ptr_nonnull(end);
	n = (size_t)(end + 1 - out);
	snprintf(end + 1, 22, "end %016" PRIx64 "\n", fnv1a(out, n));
	return out;
}

/* The synthetic 2x2x2x2 hybrid of the table below (siblings adjacent). */
#define BAD_DESC "pack:2 numa:1 l3:1 l2:2 core:2 pu:2 | performance=0-3,8-11 efficient=4-7,12-15"

static const struct {
	const char *name, *from, *to, *want;
} bad[] = {
	{ "version", "corecarve-topology-cache 1", "corecarve-topology-cache 2",
	  "topology cache: line 1: header: not a corecarve topology cache of this version" },
	{ "no CPUs", "counts 16 ", "counts 0 ", "topology cache: line 6: npus: 0 is out of range [1, 8192]" },
	{ "class count", "counts 16 8 2 2 2 4 2 0", "counts 16 8 2 2 2 4 17 0",
	  "topology cache: line 6: nclasses: 17 is out of range [1, 16]" },
	{ "distance count", "counts 16 8 2 2 2 4 2 0", "counts 16 8 2 2 2 4 2 1",
	  "topology cache: line 6: ndistance: must be 0 or nnuma" },
	{ "record order", "numa 0 0 0", "nuna 0 0 0", "topology cache: line 9: numa: expected this record here" },
	{ "domain id", "llc 1 -1 1 1", "llc 0 -1 1 1", "topology cache: line 12: id: 0 is out of range [1, 1]" },
	{ "domain core count", "l2 3 -1 1 1 2 4194304 2 12-15 6-7", "l2 3 -1 1 1 2 4194304 2 12-15 6",
	  "topology cache: l2 3: does not list a core that points at it" },
	{ "domain ncores", "l2 3 -1 1 1 2 4194304 2 12-15 6-7", "l2 3 -1 1 1 2 4194304 1 12-15 6-7",
	  "topology cache: l2 3: ncores differs from the cores that point at it" },
	{ "core class", "core 7 1 1 3 1 1 2 14-15", "core 7 1 1 3 1 5 2 14-15",
	  "topology cache: line 24: class: 5 is out of range [-1, 1]" },
	{ "core numa", "core 7 1 1 3 1 1 2 14-15", "core 7 1 2 3 1 1 2 14-15",
	  "topology cache: line 24: numa: 2 is out of range [-1, 1]" },
	{ "reversed list", "core 7 1 1 3 1 1 2 14-15", "core 7 1 1 3 1 1 2 15-14",
	  "topology cache: line 24: pus: invalid cpu list" },
	{ "core pu count", "core 7 1 1 3 1 1 2 14-15", "core 7 1 1 3 1 1 3 14-15",
	  "topology cache: core 7: npus differs from the CPUs that point at it" },
	{ "pu order", "pu 3 1 0 0 0 0 0 1 1", "pu 1 1 0 0 0 0 0 1 1",
	  "topology cache: line 28: os: 1 is out of range [3, 8191]" },
	{ "missing field", "pu 15 7 1 1 3 1 1 1 1", "pu 15 7 1 1 3 1 1 1",
	  "topology cache: line 40: allowed: missing" },
	{ "extra field", "pu 15 7 1 1 3 1 1 1 1", "pu 15 7 1 1 3 1 1 1 1 1",
	  "topology cache: line 40: pu: unexpected data at the end of the line" },
	{ "not a number", "pu 15 7 1 1 3 1 1 1 1", "pu 15 7 1 1 3 1 1 yes 1",
	  "topology cache: line 40: online: expected an integer" },
	{ "escape", "performance synthetic", "perf%ZZ synthetic", "topology cache: line 41: name: invalid %-escape" },
	{ "disagreeing pu", "pu 15 7 1 1 3 1 1 1 1", "pu 15 6 1 1 3 1 1 1 1",
	  "topology cache: core 6: does not list CPU 15, whose pu record points at it" },
	{ "extra record", "class 1 2 4 4-7,12-15 2-3,6-7 efficient synthetic\n",
	  "class 1 2 4 4-7,12-15 2-3,6-7 efficient synthetic\nclass 2 1 0 - - x y\n",
	  "topology cache: line 43: end: unexpected records before the end line" },
};

static char *bad_base(void)
{
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = BAD_DESC };
	_cleanup_topo_ struct cc_topo *t = discover(&src);

	return serialize(t, "s");
}

START_TEST(bad_field)
{
	_cleanup_free_ char *base = bad_base(), *text = edit(base, bad[_i].from, bad[_i].to);
	struct cc_err err = CC_ERR_INIT;

	ck_assert_ptr_null(cc_topo_deserialize(text, strlen(text), "s", &err));
	ck_assert_msg(strncmp(err.msg, bad[_i].want, strlen(bad[_i].want)) == 0, "%s: got \"%s\"", bad[_i].name,
		      err.msg);
}
END_TEST

START_TEST(truncated_and_damaged)
{
	_cleanup_free_ char *text = bad_base();
	size_t len = strlen(text);
	struct cc_err err = CC_ERR_INIT;

	/* Every cut, from nothing to one byte short. */
	for (size_t n = 0; n < len; n++) {
		cc_err_clear(&err);
		ck_assert_msg(cc_topo_deserialize(text, n, "s", &err) == NULL, "accepted %zu of %zu bytes", n, len);
		ck_assert_str_eq(err.msg, "topology cache: end: missing (truncated file)");
	}
	/* A changed byte anywhere before the checksum. */
	for (size_t n = 0; n + 21 < len; n += 7) {
		text[n] ^= 0x01;
		cc_err_clear(&err);
		ck_assert_ptr_null(cc_topo_deserialize(text, len, "s", &err));
		ck_assert_msg(strstr(err.msg, "checksum mismatch") || strstr(err.msg, "missing (truncated file)"),
			      "byte %zu: %s", n, err.msg);
		text[n] ^= 0x01;
	}
}
END_TEST

/* ---- the cache file ----------------------------------------------------- */

static char *state_dir(void)
{
	char *d = strdup("/tmp/cc-topo-cache-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static void rm_state(const char *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	ck_assert_int_eq(system(cmd), 0);
}

static struct cc_topo *cached(const struct cc_topo_source *src, const char *dir, struct cc_topo_cache_info *info)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t = cc_topo_cache_load(src, dir, info, &err);

	ck_assert_msg(t != NULL, "%s", err.msg);
	return t;
}

START_TEST(miss_store_hit)
{
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_free_ char *dir = state_dir();
	struct cc_topo_cache_info info;
	struct cc_topo_source src;
	struct cc_topo *t, *u, *v;

	/* F10: a captured tree, keyed by its identity. */
	if (!shape_source(&shapes[3], &src, &root)) {
		rm_state(dir);
		return;
	}
	t = cached(&src, dir, &info);
	ck_assert(!info.hit && info.stored);
	ck_assert_str_eq(info.why, "absent");
	u = cached(&src, dir, &info);
	ck_assert(info.hit && !info.stored);
	same_model(t, u);
	v = discover(&src);
	same_model(v, u);
	cc_topo_free(t);
	cc_topo_free(u);
	cc_topo_free(v);
	rm_state(dir);
}
END_TEST

START_TEST(overrides_change_the_stamp)
{
	_cleanup_free_ char *dir = state_dir();
	struct cc_err err = CC_ERR_INIT;
	struct cc_class_override ov[2] = { { "performance", hwloc_bitmap_alloc() }, { "efficient", hwloc_bitmap_alloc() } };
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = "pack:1 core:8 pu:1" };
	struct cc_topo_cache_info info;
	struct cc_topo *t;

	t = cached(&src, dir, &info);
	ck_assert_int_eq(t->nclasses, 1);
	cc_topo_free(t);
	ck_assert_int_eq(cc_cpulist_parse("0-3", ov[0].cpus, "ov", &err), 0);
	ck_assert_int_eq(cc_cpulist_parse("4-7", ov[1].cpus, "ov", &err), 0);
	src.overrides = ov;
	src.noverrides = 2;
	t = cached(&src, dir, &info);
	ck_assert(!info.hit && info.stored);
	ck_assert_msg(strncmp(info.why, "stale: ", 7) == 0, "%s", info.why);
	ck_assert_int_eq(t->nclasses, 2);
	cc_topo_free(t);
	t = cached(&src, dir, &info);
	ck_assert(info.hit);
	ck_assert_int_eq(t->nclasses, 2);
	cc_topo_free(t);
	hwloc_bitmap_free(ov[0].cpus);
	hwloc_bitmap_free(ov[1].cpus);
	rm_state(dir);
}
END_TEST

START_TEST(damaged_file_replaced)
{
	_cleanup_free_ char *dir = state_dir();
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = BAD_DESC };
	struct cc_topo_cache_info info;
	struct cc_topo *t;

	cc_test_write_file(dir, CC_TOPO_CACHE_FILE, "corecarve-topology-cache 1\nstamp x\n");
	t = cached(&src, dir, &info);
	ck_assert(!info.hit && info.stored);
	ck_assert_str_eq(info.why, "unusable: topology cache: end: missing (truncated file)");
	ck_assert_int_eq(t->npus, 16);
	cc_topo_free(t);
	t = cached(&src, dir, &info);
	ck_assert(info.hit);
	cc_topo_free(t);
	rm_state(dir);
}
END_TEST

START_TEST(untrusted_places_not_used)
{
	_cleanup_free_ char *dir = state_dir();
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = BAD_DESC };
	struct cc_topo_cache_info info;
	char path[512], link[512];
	struct cc_topo *t;

	/* A cache file that is a symlink is not followed. */
	snprintf(path, sizeof(path), "%s/elsewhere", dir);
	cc_test_write_file(dir, "elsewhere", "x");
	snprintf(link, sizeof(link), "%s/" CC_TOPO_CACHE_FILE, dir);
	ck_assert_int_eq(symlink(path, link), 0);
	t = cached(&src, dir, &info);
	ck_assert(!info.hit);
	ck_assert_msg(strstr(info.why, "unreadable: " CC_TOPO_CACHE_FILE ": Too many levels of symbolic links"),
		      "%s", info.why);
	cc_topo_free(t);
	unlink(link);

	/* A directory others may write to is not used at all. */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	t = cached(&src, dir, &info);
	ck_assert(!info.hit && !info.stored);
	ck_assert_msg(strstr(info.why, "state directory: ") && strstr(info.why, "not a private directory"), "%s",
		      info.why);
	ck_assert_int_eq(t->npus, 16);
	cc_topo_free(t);
	ck_assert_int_eq(access(link, F_OK), -1);
	rm_state(dir);
}
END_TEST

START_TEST(caller_view_not_cached)
{
	_cleanup_free_ char *dir = state_dir();
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = BAD_DESC, .caller_view = true };
	struct cc_topo_cache_info info;
	struct cc_topo *t;

	ck_assert_ptr_null(cc_topo_stamp(&src, &err));
	ck_assert_str_eq(err.msg, "not cacheable: the caller's view depends on its cgroup and affinity");
	t = cached(&src, dir, &info);
	ck_assert(!info.hit && !info.stored);
	cc_topo_free(t);
	rm_state(dir);
}
END_TEST

/* A host kind (a live kernel's tree, here one of the test's own: a unit
 * test reads no host file, tests/unit/hostguard.c) is keyed by its boot
 * id and CPU lists.  A real kernel's stamp: e2e 12-topo-cache. */
START_TEST(host_stamp)
{
	char dir[] = "/tmp/cc-stamp-XXXXXX", want[256];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_free_ char *stamp = NULL;
	struct cc_topo_source src = { .kind = CC_TOPO_HOST };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p %s/proc/sys/kernel/random %s/sys/devices/system/cpu "
					  "%s/sys/devices/system/node", dir, dir, dir),
			 0);
	cc_test_write_file(dir, "proc/sys/kernel/random/boot_id", "0f4c9d2e-1b7a-4e3f-9c61-2d8e5a7b3c10\n");
	cc_test_write_file(dir, "sys/devices/system/cpu/online", "0-5,7\n");
	cc_test_write_file(dir, "sys/devices/system/cpu/present", "0-7\n");
	cc_test_write_file(dir, "sys/devices/system/node/online", "0\n");
	root = cc_root_open(dir, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	src.root = root;
	stamp = cc_topo_stamp(&src, &err);
	ck_assert_msg(stamp != NULL, "%s", err.msg);
	ck_assert_msg(strstr(stamp, " boot=0f4c9d2e-1b7a-4e3f-9c61-2d8e5a7b3c10 "), "%s", stamp);
	ck_assert_msg(strstr(stamp, " online=0-5,7 "), "%s", stamp);
	snprintf(want, sizeof(want), " kind=host root=%s ", dir);
	ck_assert_msg(strstr(stamp, want), "%s", stamp);
	ck_assert_msg(strncmp(stamp, "v1 build=", 9) == 0, "%s", stamp);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

static Suite *topo_cache_suite(void)
{
	Suite *s = suite_create("topo_cache");
	TCase *rt = tcase_create("round_trip");
	TCase *bd = tcase_create("bad");
	TCase *fl = tcase_create("file");

	tcase_add_loop_test(rt, round_trip, 0, NSHAPES);
	tcase_add_test(rt, stale_stamp_refused);
	tcase_set_timeout(rt, 60);
	suite_add_tcase(s, rt);
	tcase_add_loop_test(bd, bad_field, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(bd, truncated_and_damaged);
	suite_add_tcase(s, bd);
	tcase_add_test(fl, miss_store_hit);
	tcase_add_test(fl, overrides_change_the_stamp);
	tcase_add_test(fl, damaged_file_replaced);
	tcase_add_test(fl, untrusted_places_not_used);
	tcase_add_test(fl, caller_view_not_cached);
	tcase_add_test(fl, host_stamp);
	tcase_set_timeout(fl, 60);
	suite_add_tcase(s, fl);
	return s;
}

CC_TEST_MAIN(topo_cache_suite)
