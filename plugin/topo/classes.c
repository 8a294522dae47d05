#define _GNU_SOURCE
#include "classes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

static int cmp_desc(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Tiers with a cut threshold of `pct` percent; pct 0 makes every distinct
 * value its own tier. */
static int tiers_pct(const unsigned long *values, int n, int *tier, unsigned pct)
{
	_cleanup_free_ unsigned long *v = NULL;
	_cleanup_free_ int *vt = NULL;
	int nd = 0, t = 0;

	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (values[i] == 0)
			return 0;
	v = malloc((size_t)n * sizeof(*v));
	vt = malloc((size_t)n * sizeof(*vt));
	if (!v || !vt)
		return -1;
	memcpy(v, values, (size_t)n * sizeof(*v));
	qsort(v, (size_t)n, sizeof(*v), cmp_desc);
	for (int i = 0; i < n; i++)
		if (nd == 0 || v[nd - 1] != v[i])
			v[nd++] = v[i];
	/* Cut on gaps between neighbours, not on the distance to the top of
	 * the tier: near-equal values are never split apart, whatever the
	 * top value is. */
	for (int i = 0; i < nd; i++) {
		if (i > 0 && (unsigned long long)(v[i - 1] - v[i]) * 100 >
				     (unsigned long long)v[i - 1] * pct)
			t++;
		vt[i] = t;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nd; k++)
			if (v[k] == values[i]) {
				tier[i] = vt[k];
				break;
			}
	return t + 1;
}

int cc_class_tiers(const unsigned long *values, int n, int *tier)
{
	int r = tiers_pct(values, n, tier, CC_CLASS_TIER_PCT);

	return r < 0 ? 0 : r;
}

void cc_class_tier_name(int t, int ntiers, char name[CC_NAME_MAX])
{
	if (t == 0)
		snprintf(name, CC_NAME_MAX, "performance");
	else if (t == ntiers - 1)
		snprintf(name, CC_NAME_MAX, "efficient");
	else if (ntiers == 3)
		snprintf(name, CC_NAME_MAX, "mid");
	else
		snprintf(name, CC_NAME_MAX, "mid-%d", t);
}

const char *cc_class_for_core_type(const char *core_type)
{
	static const struct {
		const char *type, *cls;
	} map[] = {
		{ "IntelCore", "performance" },
		{ "IntelAtom", "efficient" },
		{ "IntelLowPower", "low-power" },
		{ "AMDPerformance", "performance" },
		{ "AMDEfficiency", "efficient" },
		{ "AMDEfficieny", "efficient" }, /* hwloc's own spelling, kept in its XML exports */
	};

	if (!core_type)
		return NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(core_type, map[i].type) == 0)
			return map[i].cls;
	return NULL;
}

/* Rank of a standard class name (lower = more performant), -1 otherwise. */
static int standard_rank(const char *name)
{
	char *end;
	long k;

	if (strcmp(name, "performance") == 0)
		return 0;
	if (strcmp(name, "mid") == 0)
		return 1;
	if (strncmp(name, "mid-", 4) == 0 && name[4] >= '1' && name[4] <= '9') {
		k = strtol(name + 4, &end, 10);
		if (*end == '\0' && k < CC_CLASSES_MAX)
			return 1 + (int)k;
		return -1;
	}
	if (strcmp(name, "efficient") == 0)
		return 100;
	if (strcmp(name, "low-power") == 0)
		return 101;
	return -1;
}

/* Hardware-named classes: gather the distinct names and order them by
 * their standard rank. */
struct named {
	const char *name;
	const char *kind;
};

static int add_named(struct cc_classing *out, const struct named *n, int count,
		     const char *const *core_name, int ncores, int *core_class,
		     const char *source)
{
	int order[CC_CLASSES_MAX], no = 0;

	for (int i = 0; i < count; i++) {
		int pos = no;

		while (pos > 0 && standard_rank(n[order[pos - 1]].name) > standard_rank(n[i].name)) {
			order[pos] = order[pos - 1];
			pos--;
		}
		order[pos] = i;
		no++;
	}
	out->nclasses = no;
	for (int k = 0; k < no; k++) {
		snprintf(out->classes[k].name, CC_NAME_MAX, "%s", n[order[k]].name);
		snprintf(out->classes[k].kind, CC_KIND_MAX, "%s", n[order[k]].kind);
	}
	for (int i = 0; i < ncores; i++)
		for (int k = 0; k < no; k++)
			if (strcmp(core_name[i], out->classes[k].name) == 0)
				core_class[i] = k;
	snprintf(out->source, sizeof(out->source), "%s", source);
	return 0;
}

static int note_name(struct named *n, int *count, const char *name, const char *kind)
{
	for (int i = 0; i < *count; i++)
		if (strcmp(n[i].name, name) == 0)
			return 0;
	if (*count >= CC_CLASSES_MAX)
		return -1;
	n[*count].name = name;
	n[*count].kind = kind;
	(*count)++;
	return 0;
}

/* Intel hybrid PMUs: cpu_core → performance, cpu_atom → efficient.  Meteor
 * Lake's low-power E-cores sit in the SoC tile outside the compute tile's
 * L3 and are listed in cpu_atom too: an atom core without an L3 while
 * other atom cores have one is low-power (hwloc 2.10 uses the same test). */
static int by_pmu(const struct cc_core_facts *f, int ncores, int *core_class,
		  struct cc_classing *out)
{
	_cleanup_free_ const char **core_name = calloc((size_t)ncores, sizeof(*core_name));
	struct named n[CC_CLASSES_MAX];
	int count = 0;
	bool atom_l3 = false;

	if (!core_name)
		return -1;
	for (int i = 0; i < ncores; i++) {
		if (f[i].pmu == CC_PMU_NONE)
			return 1;
		if (f[i].pmu == CC_PMU_ATOM && f[i].llc_level >= 3)
			atom_l3 = true;
	}
	for (int i = 0; i < ncores; i++) {
		if (f[i].pmu == CC_PMU_CORE) {
			core_name[i] = "performance";
			note_name(n, &count, core_name[i], "cpu_core");
		} else if (atom_l3 && f[i].llc_level < 3) {
			core_name[i] = "low-power";
			note_name(n, &count, core_name[i], "cpu_atom without L3");
		} else {
			core_name[i] = "efficient";
			note_name(n, &count, core_name[i], "cpu_atom");
		}
	}
	return add_named(out, n, count, core_name, ncores, core_class, "hybrid-pmu");
}

static int by_core_type(const struct cc_core_facts *f, int ncores, int *core_class,
			struct cc_classing *out)
{
	_cleanup_free_ const char **core_name = calloc((size_t)ncores, sizeof(*core_name));
	struct named n[CC_CLASSES_MAX];
	int count = 0;

	if (!core_name)
		return -1;
	for (int i = 0; i < ncores; i++)
		if (!cc_class_for_core_type(f[i].core_type))
			return 1;
	for (int i = 0; i < ncores; i++) {
		core_name[i] = cc_class_for_core_type(f[i].core_type);
		if (note_name(n, &count, core_name[i], f[i].core_type) < 0)
			return -1;
	}
	return add_named(out, n, count, core_name, ncores, core_class, "hwloc-cpukinds");
}

enum metric { M_CAPACITY, M_BASE, M_MAX, M_EFFICIENCY };

static unsigned long metric_of(const struct cc_core_facts *f, enum metric m)
{
	switch (m) {
	case M_CAPACITY:
		return f->capacity;
	case M_BASE:
		return f->base_mhz;
	case M_MAX:
		return f->max_mhz;
	case M_EFFICIENCY:
		/* hwloc ranks kinds 0.. (higher = more performant); shift so
		 * that "unknown" (-1) is 0. */
		return f->efficiency < 0 ? 0 : (unsigned long)f->efficiency + 1;
	}
	return 0;
}

static void metric_kind(enum metric m, unsigned long lo, unsigned long hi, char *kind)
{
	if (m == M_EFFICIENCY) {
		lo--;
		hi--;
	}
	switch (m) {
	case M_CAPACITY:
		if (lo == hi)
			snprintf(kind, CC_KIND_MAX, "cpu_capacity %lu", lo);
		else
			snprintf(kind, CC_KIND_MAX, "cpu_capacity %lu-%lu", lo, hi);
		break;
	case M_BASE:
		if (lo == hi)
			snprintf(kind, CC_KIND_MAX, "base %lu MHz", lo);
		else
			snprintf(kind, CC_KIND_MAX, "base %lu-%lu MHz", lo, hi);
		break;
	case M_MAX:
		if (lo == hi)
			snprintf(kind, CC_KIND_MAX, "max %lu MHz", lo);
		else
			snprintf(kind, CC_KIND_MAX, "max %lu-%lu MHz", lo, hi);
		break;
	case M_EFFICIENCY:
		if (lo == hi)
			snprintf(kind, CC_KIND_MAX, "hwloc efficiency %lu", lo);
		else
			snprintf(kind, CC_KIND_MAX, "hwloc efficiency %lu-%lu", lo, hi);
		break;
	}
}

/* Unnamed kinds: rank the cores on one metric, in tiers. */
static int by_metric(const struct cc_core_facts *f, int ncores, enum metric m,
		     int *core_class, struct cc_classing *out, struct cc_err *err)
{
	static const char *const source[] = {
		[M_CAPACITY] = "capacity",
		[M_BASE] = "frequency",
		[M_MAX] = "frequency",
		[M_EFFICIENCY] = "hwloc-cpukinds",
	};
	_cleanup_free_ unsigned long *v = malloc((size_t)ncores * sizeof(*v));
	int ntiers;

	if (!v)
		return cc_err_sys(err, ENOMEM, "core classes");
	for (int i = 0; i < ncores; i++) {
		v[i] = metric_of(&f[i], m);
		if (!v[i])
			return 1;
	}
	/* Efficiency ranks are ordinal, not measures: every distinct rank
	 * is its own tier, no threshold applies. */
	ntiers = tiers_pct(v, ncores, core_class, m == M_EFFICIENCY ? 0 : CC_CLASS_TIER_PCT);
	if (ntiers < 0)
		return cc_err_sys(err, ENOMEM, "core classes");
	if (ntiers > CC_CLASSES_MAX)
		return cc_err_set(err, E2BIG, "core classes: %d tiers of %s, at most %d are supported",
				  ntiers, source[m], CC_CLASSES_MAX);
	out->nclasses = ntiers;
	for (int t = 0; t < ntiers; t++) {
		unsigned long lo = 0, hi = 0;

		for (int i = 0; i < ncores; i++) {
			if (core_class[i] != t)
				continue;
			if (!lo || v[i] < lo)
				lo = v[i];
			if (v[i] > hi)
				hi = v[i];
		}
		cc_class_tier_name(t, ntiers, out->classes[t].name);
		metric_kind(m, lo, hi, out->classes[t].kind);
	}
	snprintf(out->source, sizeof(out->source), "%s", source[m]);
	return 0;
}

int cc_classify(const struct cc_core_facts *facts, int ncores, int *core_class,
		struct cc_classing *out, struct cc_err *err)
{
	static const enum metric metrics[] = { M_CAPACITY, M_BASE, M_MAX, M_EFFICIENCY };
	int r;

	memset(out, 0, sizeof(*out));
	if (ncores <= 0)
		return cc_err_set(err, EINVAL, "core classes: no cores");
	r = by_pmu(facts, ncores, core_class, out);
	if (r <= 0)
		goto done;
	r = by_core_type(facts, ncores, core_class, out);
	if (r <= 0)
		goto done;
	/* The first metric every core has decides, even when it finds one
	 * tier: a uniform base frequency must not fall through to the max
	 * frequency, which Turbo Boost Max 3.0 raises on two P-cores. */
	for (size_t k = 0; k < sizeof(metrics) / sizeof(metrics[0]); k++) {
		r = by_metric(facts, ncores, metrics[k], core_class, out, err);
		if (r <= 0)
			goto done;
	}
	out->nclasses = 1;
	snprintf(out->classes[0].name, CC_NAME_MAX, "performance");
	snprintf(out->classes[0].kind, CC_KIND_MAX, "uniform");
	snprintf(out->source, sizeof(out->source), "uniform");
	for (int i = 0; i < ncores; i++)
		core_class[i] = 0;
	return 0;
done:
	if (r < 0 && !cc_err_isset(err))
		cc_err_sys(err, ENOMEM, "core classes");
	return r < 0 ? -1 : 0;
}

int cc_classify_override(const struct cc_class_override *ov, int nov,
			 const hwloc_const_bitmap_t *core_pus, int ncores,
			 hwloc_const_bitmap_t online, hwloc_const_bitmap_t known,
			 const char *what, int *core_class,
			 struct cc_classing *out, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t covered = hwloc_bitmap_alloc();
	int order[CC_CLASSES_MAX];
	bool all_standard = true;

	memset(out, 0, sizeof(*out));
	if (!tmp || !covered)
		return cc_err_sys(err, ENOMEM, "%s", what);
	if (nov <= 0)
		return cc_err_set(err, EINVAL, "%s: no classes", what);
	if (nov > CC_CLASSES_MAX)
		return cc_err_set(err, E2BIG, "%s: %d classes, at most %d are supported", what, nov, CC_CLASSES_MAX);
	for (int i = 0; i < nov; i++) {
		if (!ov[i].name[0])
			return cc_err_set(err, EINVAL, "%s: a class has an empty name", what);
		for (int j = 0; j < i; j++)
			if (strcmp(ov[i].name, ov[j].name) == 0)
				return cc_err_set(err, EINVAL, "%s: class %s is listed twice", what, ov[i].name);
		if (!ov[i].cpus)
			return cc_err_set(err, EINVAL, "%s.%s: no cpu list", what, ov[i].name);
		hwloc_bitmap_andnot(tmp, ov[i].cpus, known);
		if (!hwloc_bitmap_iszero(tmp)) {
			_cleanup_free_ char *s = cc_cpulist_format(tmp);

			return cc_err_set(err, EINVAL, "%s.%s: CPUs %s do not exist on this host",
					  what, ov[i].name, s ? s : "?");
		}
		if (!hwloc_bitmap_intersects(ov[i].cpus, online))
			return cc_err_set(err, EINVAL, "%s.%s: none of its CPUs is online", what, ov[i].name);
		for (int j = 0; j < i; j++) {
			hwloc_bitmap_and(tmp, ov[i].cpus, ov[j].cpus);
			if (!hwloc_bitmap_iszero(tmp)) {
				_cleanup_free_ char *s = cc_cpulist_format(tmp);

				return cc_err_set(err, EINVAL, "%s.%s: CPUs %s are also in %s.%s", what, ov[i].name,
						  s ? s : "?", what, ov[j].name);
			}
		}
		hwloc_bitmap_or(covered, covered, ov[i].cpus);
		all_standard &= standard_rank(ov[i].name) >= 0;
	}
	for (int c = 0; c < ncores; c++) {
		core_class[c] = -1;
		for (int i = 0; i < nov; i++) {
			if (!hwloc_bitmap_intersects(core_pus[c], ov[i].cpus))
				continue;
			if (!hwloc_bitmap_isincluded(core_pus[c], ov[i].cpus)) {
				_cleanup_free_ char *cs = cc_cpulist_format(core_pus[c]);
				_cleanup_free_ char *in = NULL, *out_ = NULL;

				hwloc_bitmap_and(tmp, core_pus[c], ov[i].cpus);
				in = cc_cpulist_format(tmp);
				hwloc_bitmap_andnot(tmp, core_pus[c], ov[i].cpus);
				out_ = cc_cpulist_format(tmp);
				return cc_err_set(err, EINVAL,
						  "%s.%s: splits core %d (CPUs %s): it has %s but not %s; list whole cores",
						  what, ov[i].name, c, cs ? cs : "?", in ? in : "?", out_ ? out_ : "?");
			}
			core_class[c] = i;
		}
	}
	hwloc_bitmap_andnot(tmp, online, covered);
	if (!hwloc_bitmap_iszero(tmp)) {
		_cleanup_free_ char *s = cc_cpulist_format(tmp);

		return cc_err_set(err, EINVAL, "%s: online CPUs %s are in no class", what, s ? s : "?");
	}

	for (int i = 0; i < nov; i++) {
		int pos = i;

		/* Stable insertion: standard names in their rank order, any
		 * other name list keeps the operator's order. */
		while (all_standard && pos > 0 && standard_rank(ov[order[pos - 1]].name) > standard_rank(ov[i].name)) {
			order[pos] = order[pos - 1];
			pos--;
		}
		order[pos] = i;
	}
	out->nclasses = nov;
	for (int k = 0; k < nov; k++) {
		snprintf(out->classes[k].name, CC_NAME_MAX, "%s", ov[order[k]].name);
		snprintf(out->classes[k].kind, CC_KIND_MAX, "%s", what);
	}
	for (int c = 0; c < ncores; c++)
		for (int k = 0; k < nov; k++)
			if (order[k] == core_class[c]) {
				core_class[c] = k;
				break;
			}
	snprintf(out->source, sizeof(out->source), "override");
	return 0;
}
