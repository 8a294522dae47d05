/* corecarve calibrate: the baseline file (JSON, docs/calibrate.md) and the
 * comparison of a node with it.  Parsing is strict: a baseline that does
 * not read as written is an error naming the field, never half a table. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibrate.h"
#include "cleanup.h"
#include "fileio.h"

static const char *const work_units[CC_WORK_N] = { "Mops/s", "MB/s" };

/* ---- writing ------------------------------------------------------------ */

static json_t *facts_json(const struct cc_calib_facts *f)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "kernel", f->kernel, "microcode", f->microcode, "model",
			 f->model, "governor", f->governor, "max_khz", f->max_khz, "smt", f->smt, "online", f->online,
			 "hwloc", f->hwloc);
}

static json_t *result_json(const struct cc_calib_result *r, enum cc_work w)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:s}", "ratio", r->ratio, "ratio_a", r->ratio_a, "ratio_b", r->ratio_b,
			 "solo_a", r->solo_a, "solo_b", r->solo_b, "unit", work_units[w]);
}

json_t *cc_baseline_json(const struct cc_baseline *b)
{
	_cleanup_json_ json_t *doc = NULL;
	json_t *pairs = json_array(), *skipped = json_array();

	doc = json_pack("{s:i,s:s,s:o,s:{s:i,s:i,s:I,s:s},s:o,s:o}", "schema_version", b->schema_version, "taken",
			b->taken, "facts", facts_json(&b->facts), "method", "rounds", b->rounds, "ms", b->ms,
			"mem_bytes", (json_int_t)b->mem_bytes, "ratio",
			"pair throughput / solo throughput, each side; ratio is their mean; medians over rounds",
			"pairs", pairs, "skipped", skipped);
	if (!doc)
		return NULL;
	for (int i = 0; i < b->n; i++) {
		const struct cc_calib_entry *e = &b->entries[i];
		json_t *o = json_pack("{s:s,s:[i,i],s:s}", "relation", cc_rel_name(e->pair.rel), "cpus", e->pair.a,
				      e->pair.b, "what", e->pair.what);

		if (!o || json_array_append_new(pairs, o) < 0)
			return NULL;
		for (int w = 0; w < CC_WORK_N; w++)
			if (json_object_set_new(o, cc_work_name((enum cc_work)w), result_json(&e->res[w], (enum cc_work)w)) < 0)
				return NULL;
	}
	for (int i = 0; i < b->nskipped; i++)
		if (json_array_append_new(skipped, json_pack("{s:s,s:s}", "relation", cc_rel_name(b->skipped[i].rel),
							     "reason", b->skipped[i].what)) < 0)
			return NULL;
	return cc_steal_ptr(doc);
}

static int mkdirs(char *dir, struct cc_err *err)
{
	struct stat st;
	char *slash;

	if (!*dir || stat(dir, &st) == 0)
		return 0;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdirs(dir, err) < 0)
			return -1;
		*slash = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return cc_err_sys(err, errno, "%s: cannot create the directory (run as root, or use --output FILE)", dir);
	return 0;
}

int cc_baseline_write(const char *path, const struct cc_baseline *b, struct cc_err *err)
{
	_cleanup_json_ json_t *doc = cc_baseline_json(b);
	_cleanup_free_ char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_free_ char *file = NULL;
	const struct cc_replace o = { .mode = 0644, .sync = CC_SYNC_FILE };
	struct cc_err e = CC_ERR_INIT;

	if (!text || !dir)
		return cc_err_set(err, ENOMEM, "%s: cannot format the baseline", path);
	if (asprintf(&file, "%s\n", text) < 0) {
		file = NULL;
		return cc_err_set(err, ENOMEM, "%s: cannot format the baseline", path);
	}
	if (mkdirs(dirname(dir), err) < 0)
		return -1;
	if (cc_replace_path(path, file, strlen(file), &o, &e) == 0)
		return 0;
	if (e.code == EACCES || e.code == EPERM || e.code == EROFS)
		return cc_err_set(err, e.code, "%s (run as root, or use --output FILE)", e.msg);
	return cc_err_set(err, e.code, "%s", e.msg);
}

/* ---- reading ------------------------------------------------------------ */

static int get_str(const json_t *o, const char *key, char *dst, size_t n, const char *where, const char *ctx,
		   struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s: %s%s: expected a string (rerun corecarve calibrate)", where, ctx, key);
	if (strlen(json_string_value(v)) >= n)
		return cc_err_set(err, EINVAL, "%s: %s%s: longer than %zu bytes", where, ctx, key, n - 1);
	snprintf(dst, n, "%s", json_string_value(v));
	return 0;
}

static int get_num(const json_t *o, const char *key, double lo, double hi, double *dst, const char *where,
		   const char *ctx, struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo ||
	    json_number_value(v) > hi)
		return cc_err_set(err, EINVAL, "%s: %s%s: expected a number from %g to %g (rerun corecarve calibrate)",
				  where, ctx, key, lo, hi);
	*dst = json_number_value(v);
	return 0;
}

static int parse_result(const json_t *o, const char *where, const char *ctx, struct cc_calib_result *r,
			struct cc_err *err)
{
	/* A pair can speed a side up (turbo shared over fewer busy cores
	 * is not that, but a cache warmed by the sibling can be): up to
	 * CC_CALIB_RATIO_MAX. */
	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, "%s: %.*s: expected an object", where, (int)strlen(ctx) - 1, ctx);
	if (get_num(o, "ratio", 0, CC_CALIB_RATIO_MAX, &r->ratio, where, ctx, err) < 0 ||
	    get_num(o, "ratio_a", 0, CC_CALIB_RATIO_MAX, &r->ratio_a, where, ctx, err) < 0 ||
	    get_num(o, "ratio_b", 0, CC_CALIB_RATIO_MAX, &r->ratio_b, where, ctx, err) < 0 ||
	    get_num(o, "solo_a", 0, 1e12, &r->solo_a, where, ctx, err) < 0 ||
	    get_num(o, "solo_b", 0, 1e12, &r->solo_b, where, ctx, err) < 0)
		return -1;
	return 0;
}

static int parse_rel(const json_t *o, const char *where, const char *ctx, bool *seen, enum cc_rel *rel,
		     struct cc_err *err)
{
	const json_t *v = json_object_get(o, "relation");
	int r = json_is_string(v) ? cc_rel_parse(json_string_value(v)) : -1;

	if (r < 0)
		return cc_err_set(err, EINVAL,
				  "%s: %srelation: expected smt, l2, l3, l3x, numa, package or class, got %s", where,
				  ctx, json_is_string(v) ? json_string_value(v) : "no string");
	if (seen[r])
		return cc_err_set(err, EINVAL, "%s: %srelation: %s appears twice", where, ctx, cc_rel_name((enum cc_rel)r));
	seen[r] = true;
	*rel = (enum cc_rel)r;
	return 0;
}

int cc_baseline_parse(const json_t *doc, const char *where, struct cc_baseline *b, struct cc_err *err)
{
	const json_t *sv = json_object_get(doc, "schema_version"), *facts = json_object_get(doc, "facts");
	const json_t *method = json_object_get(doc, "method"), *pairs = json_object_get(doc, "pairs");
	const json_t *skipped = json_object_get(doc, "skipped");
	struct cc_calib_facts *f = &b->facts;
	bool seen[CC_REL_N] = { false };
	double rounds, ms, mem;
	size_t i;
	json_t *v;

	memset(b, 0, sizeof(*b));
	if (!json_is_object(doc))
		return cc_err_set(err, EINVAL, "%s: expected a JSON object", where);
	if (!json_is_integer(sv))
		return cc_err_set(err, EINVAL, "%s: schema_version: missing (not a corecarve baseline?)", where);
	if (json_integer_value(sv) != CC_BASELINE_SCHEMA)
		return cc_err_set(err, EINVAL,
				  "%s: schema_version: expected %d, got %lld (written by another corecarve: rerun "
				  "corecarve calibrate)",
				  where, CC_BASELINE_SCHEMA, (long long)json_integer_value(sv));
	b->schema_version = CC_BASELINE_SCHEMA;
	if (get_str(doc, "taken", b->taken, sizeof(b->taken), where, "", err) < 0)
		return -1;
	if (!json_is_object(facts))
		return cc_err_set(err, EINVAL, "%s: facts: expected an object", where);
	if (get_str(facts, "kernel", f->kernel, sizeof(f->kernel), where, "facts.", err) < 0 ||
	    get_str(facts, "microcode", f->microcode, sizeof(f->microcode), where, "facts.", err) < 0 ||
	    get_str(facts, "model", f->model, sizeof(f->model), where, "facts.", err) < 0 ||
	    get_str(facts, "governor", f->governor, sizeof(f->governor), where, "facts.", err) < 0 ||
	    get_str(facts, "max_khz", f->max_khz, sizeof(f->max_khz), where, "facts.", err) < 0 ||
	    get_str(facts, "smt", f->smt, sizeof(f->smt), where, "facts.", err) < 0 ||
	    get_str(facts, "online", f->online, sizeof(f->online), where, "facts.", err) < 0 ||
	    get_str(facts, "hwloc", f->hwloc, sizeof(f->hwloc), where, "facts.", err) < 0)
		return -1;
	if (!json_is_object(method))
		return cc_err_set(err, EINVAL, "%s: method: expected an object", where);
	if (get_num(method, "rounds", 1, 101, &rounds, where, "method.", err) < 0 ||
	    get_num(method, "ms", 1, 10000, &ms, where, "method.", err) < 0 ||
	    get_num(method, "mem_bytes", 1, 1e12, &mem, where, "method.", err) < 0)
		return -1;
	b->rounds = (int)rounds;
	b->ms = (int)ms;
	b->mem_bytes = (unsigned long long)mem;
	if (!json_is_array(pairs) || json_array_size(pairs) > CC_REL_N)
		return cc_err_set(err, EINVAL, "%s: pairs: expected an array of at most %d pairs", where, CC_REL_N);
	if (!json_is_array(skipped) || json_array_size(skipped) + json_array_size(pairs) > CC_REL_N)
		return cc_err_set(err, EINVAL, "%s: skipped: expected an array, with pairs at most %d relations", where,
				  CC_REL_N);
	json_array_foreach(pairs, i, v) {
		struct cc_calib_entry *e = &b->entries[b->n];
		const json_t *cpus = json_object_get(v, "cpus");
		char ctx[48];

		snprintf(ctx, sizeof(ctx), "pairs[%zu].", i);
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "%s: pairs[%zu]: expected an object", where, i);
		if (parse_rel(v, where, ctx, seen, &e->pair.rel, err) < 0)
			return -1;
		if (!json_is_array(cpus) || json_array_size(cpus) != 2 || !json_is_integer(json_array_get(cpus, 0)) ||
		    !json_is_integer(json_array_get(cpus, 1)) || json_integer_value(json_array_get(cpus, 0)) < 0 ||
		    json_integer_value(json_array_get(cpus, 1)) < 0 ||
		    json_integer_value(json_array_get(cpus, 0)) > 1 << 20 ||
		    json_integer_value(json_array_get(cpus, 1)) > 1 << 20)
			return cc_err_set(err, EINVAL, "%s: %scpus: expected two CPU numbers", where, ctx);
		e->pair.present = true;
		e->pair.a = (int)json_integer_value(json_array_get(cpus, 0));
		e->pair.b = (int)json_integer_value(json_array_get(cpus, 1));
		if (get_str(v, "what", e->pair.what, sizeof(e->pair.what), where, ctx, err) < 0)
			return -1;
		for (int w = 0; w < CC_WORK_N; w++) {
			char wctx[64];

			snprintf(wctx, sizeof(wctx), "%s%s.", ctx, cc_work_name((enum cc_work)w));
			if (parse_result(json_object_get(v, cc_work_name((enum cc_work)w)), where, wctx, &e->res[w], err) < 0)
				return -1;
		}
		b->n++;
	}
	json_array_foreach(skipped, i, v) {
		struct cc_calib_pair *s = &b->skipped[b->nskipped];
		char ctx[48];

		snprintf(ctx, sizeof(ctx), "skipped[%zu].", i);
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "%s: skipped[%zu]: expected an object", where, i);
		if (parse_rel(v, where, ctx, seen, &s->rel, err) < 0 ||
		    get_str(v, "reason", s->what, sizeof(s->what), where, ctx, err) < 0)
			return -1;
		b->nskipped++;
	}
	return 0;
}

static int parse_text(const char *text, const char *where, struct cc_baseline *b, struct cc_err *err)
{
	json_error_t je;
	_cleanup_json_ json_t *doc = json_loads(text, 0, &je);

	if (!doc)
		return cc_err_set(err, EINVAL, "%s:%d:%d: %s (rerun corecarve calibrate)", where, je.line, je.column,
				  je.text);
	return cc_baseline_parse(doc, where, b, err);
}

int cc_baseline_load_root(const struct cc_root *root, const char *path, struct cc_baseline *b, struct cc_err *err)
{
	_cleanup_free_ char *text = cc_root_read(root, path, 0, err);

	if (!text)
		return -1;
	return parse_text(text, path, b, err);
}

int cc_baseline_load_file(const char *path, struct cc_baseline *b, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (cc_read_at(AT_FDCWD, path, path, CC_ROOT_READ_MAX, 0, &text, &len, err) < 0)
		return -1;
	return parse_text(text, path, b, err);
}

const struct cc_calib_entry *cc_baseline_entry(const struct cc_baseline *b, enum cc_rel r)
{
	for (int i = 0; i < b->n; i++)
		if (b->entries[i].pair.rel == r)
			return &b->entries[i];
	return NULL;
}

/* ---- comparison --------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static void add(struct cc_calib_compare *c, const char *fmt, ...)
{
	va_list ap;

	if (c->n >= CC_CALIB_FINDINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(c->findings[c->n++], sizeof(c->findings[0]), fmt, ap);
	va_end(ap);
}

static void fact(struct cc_calib_compare *c, const char *name, const char *was, const char *now)
{
	if (!strcmp(was, now))
		return;
	c->changed_facts++;
	if (!strcmp(name, "smt") && !strcmp(was, "0") && !strcmp(now, "1"))
		add(c, "SMT was off at calibration and is on now (a BIOS or kernel setting turned it back on)");
	else
		add(c, "%s changed: \"%.60s\" at calibration, \"%.60s\" now", name, was[0] ? was : "(none)",
		    now[0] ? now : "(none)");
}

static void solo(struct cc_calib_compare *c, enum cc_rel rel, enum cc_work w, int cpu, double was, double now,
		 double tol)
{
	if (was <= 0 || now >= was * (1 - tol))
		return;
	c->slower++;
	add(c, "%s alone on CPU %d (%s pair): %.0f %s at calibration, %.0f now (%.0f%%): %s", cc_work_name(w), cpu,
	    cc_rel_name(rel), was, work_units[w], now, (now / was - 1) * 100,
	    w == CC_WORK_CPU ? "a lower core frequency?" : "a lower uncore or memory frequency?");
}

int cc_baseline_compare(const struct cc_baseline *old, const struct cc_baseline *now,
			const struct cc_calib_tolerance *tol, struct cc_calib_compare *c)
{
	const struct cc_calib_facts *a = &old->facts, *b = &now->facts;

	memset(c, 0, sizeof(*c));
	fact(c, "smt", a->smt, b->smt);
	fact(c, "governor", a->governor, b->governor);
	fact(c, "max_khz", a->max_khz, b->max_khz);
	fact(c, "microcode", a->microcode, b->microcode);
	fact(c, "kernel", a->kernel, b->kernel);
	fact(c, "online", a->online, b->online);
	fact(c, "hwloc", a->hwloc, b->hwloc);
	for (int i = 0; i < now->n; i++) {
		const struct cc_calib_entry *e = &now->entries[i], *o = cc_baseline_entry(old, e->pair.rel);

		if (!o) {
			add(c, "%s: measurable now (%s), absent from the baseline: the topology changed",
			    cc_rel_name(e->pair.rel), e->pair.what);
			c->changed_facts++;
			continue;
		}
		for (int w = 0; w < CC_WORK_N; w++) {
			double d = e->res[w].ratio - o->res[w].ratio;

			if (fabs(d) > tol->ratio) {
				c->ratio_moves++;
				add(c, "%s %s: %.2fx at calibration, %.2fx now (tolerance %.2f)", cc_rel_name(e->pair.rel),
				    cc_work_name((enum cc_work)w), o->res[w].ratio, e->res[w].ratio, tol->ratio);
			}
			/* Solo throughputs compare only on the same CPUs. */
			if (e->pair.a == o->pair.a)
				solo(c, e->pair.rel, (enum cc_work)w, e->pair.a, o->res[w].solo_a, e->res[w].solo_a, tol->solo);
		}
	}
	for (int i = 0; now->n && i < old->n; i++)
		if (!cc_baseline_entry(now, old->entries[i].pair.rel)) {
			add(c, "%s: in the baseline (%s), not measurable now", cc_rel_name(old->entries[i].pair.rel),
			    old->entries[i].pair.what);
			c->changed_facts++;
		}
	return c->n;
}
