/* Which sysfs files a class's power settings map to on this host, and
 * what they hold now.  Reads only, through the root.
 *
 *   cpufreq   /sys/devices/system/cpu/cpufreq/policyN/{scaling_governor,
 *             scaling_available_governors, energy_performance_preference,
 *             energy_performance_available_preferences, scaling_min_freq,
 *             scaling_max_freq, cpuinfo_min_freq, cpuinfo_max_freq,
 *             related_cpus}: one policy per clock domain, which may span
 *             several cores (related_cpus), so the policy directory is
 *             what gets recorded, not cpuN/cpufreq (a link to it);
 *   cpuidle   /sys/devices/system/cpu/cpuN/cpuidle/stateK/{latency,disable};
 *   uncore    /sys/devices/system/cpu/intel_uncore_frequency/
 *             package_PP_die_DD/ (up to 6.4) or uncoreNN/ with package_id
 *             (TPMI, 6.5 on): {min,max}_freq_khz, initial_{min,max}_freq_khz.
 * The kernel's documents: admin-guide/pm/cpufreq.rst, intel_pstate.rst,
 * cpuidle sysfs, admin-guide/pm/intel_uncore_frequency_scaling.rst. */
#define _GNU_SOURCE
#include "power.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

#define CPU_DIR "/sys/devices/system/cpu"
#define UNCORE_DIR CPU_DIR "/intel_uncore_frequency"

void cc_power_targets_fini(struct cc_power_targets *t)
{
	free(t->t);
	memset(t, 0, sizeof(*t));
}

/* A sysfs value: 0, 1 when the file is absent, -1 for anything else. */
static int read_value(const struct cc_root *root, const char *path, char *buf, size_t size,
		      struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 4096, &e);

	if (!s) {
		if (e.code == ENOENT || e.code == ENOTDIR)
			return 1;
		*err = e;
		return -1;
	}
	if (strlen(s) >= size)
		return cc_err_set(err, EINVAL, "%s: longer than %zu bytes", path, size - 1);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			return cc_err_set(err, EINVAL, "%s: control character in value", path);
	snprintf(buf, size, "%s", s);
	return 0;
}

static int read_khz(const struct cc_root *root, const char *path, long long *out, struct cc_err *err)
{
	char v[CC_POWER_VALUE_MAX], *end;
	int r = read_value(root, path, v, sizeof(v), err);

	if (r)
		return r;
	errno = 0;
	*out = strtoll(v, &end, 10);
	if (errno || end == v || *end || *out < 0)
		return cc_err_set(err, EINVAL, "%s: expected a frequency in kHz, got \"%s\"", path, v);
	return 0;
}

/* A word of a space-separated list such as scaling_available_governors. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

static int push(struct cc_power_targets *t, enum cc_power_kind kind, const char *path, const char *want,
		const char *cur)
{
	struct cc_power_target *grown = realloc(t->t, (size_t)(t->n + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	t->t = grown;
	memset(&t->t[t->n], 0, sizeof(t->t[0]));
	t->t[t->n].kind = kind;
	snprintf(t->t[t->n].path, sizeof(t->t[0].path), "%s", path);
	snprintf(t->t[t->n].want, sizeof(t->t[0].want), "%s", want);
	snprintf(t->t[t->n].cur, sizeof(t->t[0].cur), "%s", cur);
	t->n++;
	return 0;
}

/* A min/max pair in an order the driver accepts: raising the minimum above
 * the current maximum needs the maximum first. */
static int push_pair(struct cc_power_targets *t, enum cc_power_kind kmin, enum cc_power_kind kmax,
		     const char *pmin, const char *pmax, long long want_min, long long want_max,
		     const char *cur_min, const char *cur_max)
{
	char vmin[32], vmax[32];
	bool max_first = want_min && want_min > atoll(cur_max);

	snprintf(vmin, sizeof(vmin), "%lld", want_min);
	snprintf(vmax, sizeof(vmax), "%lld", want_max);
	if (max_first && want_max && push(t, kmax, pmax, vmax, cur_max) < 0)
		return -1;
	if (want_min && push(t, kmin, pmin, vmin, cur_min) < 0)
		return -1;
	if (!max_first && want_max && push(t, kmax, pmax, vmax, cur_max) < 0)
		return -1;
	return 0;
}

static long long clamp(long long v, long long lo, long long hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- cpufreq ---- */

struct problem {
	hwloc_bitmap_t cpus; /* CPUs of the carve this problem applies to */
	char why[160];       /* the first reason seen */
};

static void problem_add(struct problem *p, hwloc_const_bitmap_t cpus, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem_add(struct problem *p, hwloc_const_bitmap_t cpus, const char *fmt, ...)
{
	va_list ap;

	hwloc_bitmap_or(p->cpus, p->cpus, cpus);
	if (p->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
}

static void problem_warn(struct cc_power_msgs *m, const struct problem *p, const char *setting)
{
	_cleanup_free_ char *list = NULL;

	if (hwloc_bitmap_iszero(p->cpus))
		return;
	list = cc_cpulist_format(p->cpus);
	cc_power_warn(m, "power.%s: %s on CPUs %s; left as it is", setting, p->why, list ? list : "?");
}

static int probe_policy(const struct cc_root *root, const struct cc_power_spec *spec, const char *dir,
			hwloc_const_bitmap_t mine, struct cc_power_targets *t, struct problem *pr,
			struct cc_err *err)
{
	char path[CC_POWER_PATH_MAX], p2[CC_POWER_PATH_MAX], v[CC_POWER_VALUE_MAX], avail[512];
	char driver[CC_POWER_VALUE_MAX] = "";
	int r;

	snprintf(path, sizeof(path), "%.96s/scaling_driver", dir);
	if (read_value(root, path, driver, sizeof(driver), err) < 0)
		return -1;
	if (spec->governor[0]) {
		snprintf(path, sizeof(path), "%.96s/scaling_available_governors", dir);
		if ((r = read_value(root, path, avail, sizeof(avail), err)) < 0)
			return -1;
		snprintf(p2, sizeof(p2), "%.96s/scaling_governor", dir);
		if (r == 0 && has_word(avail, spec->governor)) {
			if ((r = read_value(root, p2, v, sizeof(v), err)) < 0)
				return -1;
			if (r == 0 && push(t, CC_POWER_GOVERNOR, p2, spec->governor, v) < 0)
				return cc_err_sys(err, ENOMEM, "power");
		} else if (r == 0) {
			problem_add(&pr[0], mine, "\"%s\" is not offered by %s (offered: %s)", spec->governor,
				    driver[0] ? driver : "the cpufreq driver", avail);
		} else {
			problem_add(&pr[0], mine, "no scaling_available_governors");
		}
	}
	if (spec->epp[0]) {
		snprintf(p2, sizeof(p2), "%.96s/energy_performance_preference", dir);
		if ((r = read_value(root, p2, v, sizeof(v), err)) < 0)
			return -1;
		snprintf(path, sizeof(path), "%.96s/energy_performance_available_preferences", dir);
		if (r == 1) {
			problem_add(&pr[1], mine, "%s has no energy_performance_preference",
				    driver[0] ? driver : "the cpufreq driver");
		} else {
			int ra = read_value(root, path, avail, sizeof(avail), err);
			bool number = strspn(spec->epp, "0123456789") == strlen(spec->epp);

			if (ra < 0)
				return -1;
			/* A raw 0-255 value is accepted by HWP as is. */
			if (!number && ra == 0 && !has_word(avail, spec->epp))
				problem_add(&pr[1], mine, "\"%s\" is not offered (offered: %s)", spec->epp, avail);
			else if (push(t, CC_POWER_EPP, p2, spec->epp, v) < 0)
				return cc_err_sys(err, ENOMEM, "power");
		}
	}
	if (spec->min_khz || spec->max_khz) {
		char pmin[CC_POWER_PATH_MAX], pmax[CC_POWER_PATH_MAX], cmin[32], cmax[32];
		long long lo = 0, hi = 0, wmin = spec->min_khz, wmax = spec->max_khz;

		snprintf(pmin, sizeof(pmin), "%.96s/scaling_min_freq", dir);
		snprintf(pmax, sizeof(pmax), "%.96s/scaling_max_freq", dir);
		snprintf(path, sizeof(path), "%.96s/cpuinfo_min_freq", dir);
		snprintf(p2, sizeof(p2), "%.96s/cpuinfo_max_freq", dir);
		if ((r = read_khz(root, path, &lo, err)) < 0 || (r |= read_khz(root, p2, &hi, err)) < 0)
			return -1;
		if (r == 0 && (r = read_value(root, pmin, cmin, sizeof(cmin), err)) == 0)
			r = read_value(root, pmax, cmax, sizeof(cmax), err);
		if (r < 0)
			return -1;
		if (r == 1) {
			problem_add(&pr[2], mine, "%s has no scaling_min_freq/scaling_max_freq",
				    driver[0] ? driver : "the cpufreq driver");
			return 0;
		}
		/* The kernel clamps to the hardware's range anyway; clamping
		 * here makes what is recorded what reads back. */
		if ((wmin && clamp(wmin, lo, hi) != wmin) || (wmax && clamp(wmax, lo, hi) != wmax))
			problem_add(&pr[3], mine, "clamped to the hardware's range %lld-%lld kHz", lo, hi);
		if (wmin)
			wmin = clamp(wmin, lo, hi);
		if (wmax)
			wmax = clamp(wmax, lo, hi);
		if (push_pair(t, CC_POWER_MIN_FREQ, CC_POWER_MAX_FREQ, pmin, pmax, wmin, wmax, cmin, cmax) < 0)
			return cc_err_sys(err, ENOMEM, "power");
	}
	return 0;
}

static int probe_cpufreq(const struct cc_root *root, const struct cc_power_spec *spec, hwloc_const_bitmap_t cores,
			 struct cc_power_targets *t, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t covered = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t related = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t missing = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t policies = hwloc_bitmap_alloc();
	struct problem pr[4] = { { hwloc_bitmap_alloc() }, { hwloc_bitmap_alloc() }, { hwloc_bitmap_alloc() },
				 { hwloc_bitmap_alloc() } };
	static const char *const setting[4] = { "governor", "energyPerformancePreference", "minFreqKHz/maxFreqKHz",
						"minFreqKHz/maxFreqKHz" };
	struct cc_err e = CC_ERR_INIT;
	struct dirent *de;
	int rc = -1, policy;

	if (!covered || !related || !mine || !missing || !policies || !pr[0].cpus || !pr[1].cpus || !pr[2].cpus || !pr[3].cpus) {
		cc_err_sys(err, ENOMEM, "power");
		goto out;
	}
	d = cc_root_opendir(root, CPU_DIR "/cpufreq", &e);
	if (!d && e.code != ENOENT) {
		*err = e;
		goto out;
	}
	/* In policy order, so the writes (and a journal) read the same on
	 * every run. */
	while (d && (errno = 0, de = readdir(d))) {
		char *end;
		unsigned long v;

		if (strncmp(de->d_name, "policy", 6) != 0 || !isdigit((unsigned char)de->d_name[6]))
			continue;
		v = strtoul(de->d_name + 6, &end, 10);
		if (*end || v >= CC_CPU_LIMIT)
			continue;
		hwloc_bitmap_set(policies, (unsigned)v);
	}
	hwloc_bitmap_foreach_begin(policy, policies) {
		char dir[CC_POWER_PATH_MAX], path[CC_POWER_PATH_MAX], list[4096], where[CC_POWER_PATH_MAX + 16];
		char name[32];
		int r;

		snprintf(name, sizeof(name), "policy%d", policy);
		snprintf(dir, sizeof(dir), CPU_DIR "/cpufreq/%s", name);
		snprintf(path, sizeof(path), "%.96s/related_cpus", dir);
		if ((r = read_value(root, path, list, sizeof(list), err)) < 0)
			goto out;
		if (r == 1)
			continue;
		/* related_cpus is space separated ("0 1 8 9"): the cpulist
		 * parser reads it once the spaces are commas. */
		for (char *p = list; *p; p++)
			if (*p == ' ')
				*p = ',';
		snprintf(where, sizeof(where), "%s", path);
		if (list[0] && cc_cpulist_parse(list, related, where, err) < 0)
			goto out;
		if (!list[0])
			hwloc_bitmap_zero(related);
		hwloc_bitmap_and(mine, related, cores);
		if (hwloc_bitmap_iszero(mine))
			continue;
		hwloc_bitmap_or(covered, covered, mine);
		if (probe_policy(root, spec, dir, mine, t, pr, err) < 0)
			goto out;
		if (!hwloc_bitmap_isincluded(related, cores)) {
			_cleanup_bitmap_ hwloc_bitmap_t others = hwloc_bitmap_dup(related);
			_cleanup_free_ char *ol = NULL;

			if (others)
				hwloc_bitmap_andnot(others, others, cores);
			ol = others ? cc_cpulist_format(others) : NULL;
			cc_power_note(&t->msgs, "power: cpufreq %s also drives CPUs %s outside this carve: its settings are "
				       "shared with them and reference-counted", name, ol ? ol : "?");
		}
	}
	hwloc_bitmap_foreach_end();
	hwloc_bitmap_andnot(missing, cores, covered);
	if (!hwloc_bitmap_iszero(missing)) {
		_cleanup_free_ char *list = cc_cpulist_format(missing);

		char what[96];

		snprintf(what, sizeof(what), "%s%s%s%s", spec->governor[0] ? ", governor" : "",
			 spec->epp[0] ? ", energyPerformancePreference" : "", spec->min_khz ? ", minFreqKHz" : "",
			 spec->max_khz ? ", maxFreqKHz" : "");
		cc_power_warn(&t->msgs, "power: cpufreq is not exposed for CPUs %s (a VM, or no cpufreq driver); %s left as %s",
		     list ? list : "?", what + 2, strchr(what + 2, ',') ? "they are" : "it is");
	}
	for (int i = 0; i < 4; i++)
		problem_warn(&t->msgs, &pr[i], setting[i]);
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		hwloc_bitmap_free(pr[i].cpus);
	return rc;
}

/* ---- cpuidle ---- */

static int probe_cstates(const struct cc_root *root, const struct cc_power_spec *spec, hwloc_const_bitmap_t cpus,
			 struct cc_power_targets *t, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t none = hwloc_bitmap_alloc();
	char driver[CC_POWER_VALUE_MAX] = "";
	int cpu;

	if (!none)
		return cc_err_sys(err, ENOMEM, "power");
	if (read_value(root, CPU_DIR "/cpuidle/current_driver", driver, sizeof(driver), err) < 0)
		return -1;
	hwloc_bitmap_foreach_begin(cpu, cpus) {
		char path[CC_POWER_PATH_MAX];
		int nstates = 0;

		for (int k = 0; k < 64; k++) {
			char lat[CC_POWER_VALUE_MAX], dis[CC_POWER_VALUE_MAX], *end;
			long long us;
			int r;

			snprintf(path, sizeof(path), CPU_DIR "/cpu%d/cpuidle/state%d/latency", cpu, k);
			if ((r = read_value(root, path, lat, sizeof(lat), err)) < 0)
				return -1;
			if (r == 1)
				break;
			nstates++;
			us = strtoll(lat, &end, 10);
			if (end == lat || *end || us < 0)
				return cc_err_set(err, EINVAL, "%s: expected microseconds, got \"%s\"", path, lat);
			if (us <= spec->cstate_latency_us)
				continue;
			snprintf(path, sizeof(path), CPU_DIR "/cpu%d/cpuidle/state%d/disable", cpu, k);
			if ((r = read_value(root, path, dis, sizeof(dis), err)) < 0)
				return -1;
			/* Disabled already (by the operator, or the kernel's
			 * command line): not ours to record or give back. */
			if (r == 1 || strcmp(dis, "0") != 0)
				continue;
			if (push(t, CC_POWER_CSTATE, path, "1", dis) < 0)
				return cc_err_sys(err, ENOMEM, "power");
		}
		if (!nstates)
			hwloc_bitmap_set(none, (unsigned)cpu);
	}
	hwloc_bitmap_foreach_end();
	if (!hwloc_bitmap_iszero(none)) {
		_cleanup_free_ char *list = cc_cpulist_format(none);

		cc_power_warn(&t->msgs, "power.cstates: no cpuidle states on CPUs %s (cpuidle driver: %s); left as it is",
		     list ? list : "?", driver[0] ? driver : "none");
	}
	return 0;
}

/* ---- uncore ---- */

/* Packages (and dies) of `cores`: bit p*256+d of `out`. */
static int packages_of(const struct cc_root *root, hwloc_const_bitmap_t cores, hwloc_bitmap_t pkgs,
		       hwloc_bitmap_t pkg_dies, struct cc_err *err)
{
	int cpu;

	hwloc_bitmap_foreach_begin(cpu, cores) {
		char path[CC_POWER_PATH_MAX];
		long pkg, die = 0;
		struct cc_err e = CC_ERR_INIT;

		snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/physical_package_id", cpu);
		if (cc_root_read_long(root, path, &pkg, err) < 0)
			return -1;
		snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/die_id", cpu);
		if (cc_root_read_long(root, path, &die, &e) < 0 && e.code != ENOENT) {
			*err = e;
			return -1;
		}
		if (pkg < 0 || pkg > 4095 || die < 0 || die > 255)
			return cc_err_set(err, EINVAL, "CPU %d: package %ld die %ld out of range", cpu, pkg, die);
		hwloc_bitmap_set(pkgs, (unsigned)pkg);
		hwloc_bitmap_set(pkg_dies, (unsigned)(pkg * 256 + die));
	}
	hwloc_bitmap_foreach_end();
	return 0;
}

static int probe_uncore_dir(const struct cc_root *root, const struct cc_power_spec *spec, const char *name,
			    struct cc_power_targets *t, struct cc_err *err)
{
	char dir[CC_POWER_PATH_MAX], pmin[CC_POWER_PATH_MAX], pmax[CC_POWER_PATH_MAX], path[CC_POWER_PATH_MAX];
	char cmin[32], cmax[32];
	long long lo, hi, want;
	int r;

	snprintf(dir, sizeof(dir), UNCORE_DIR "/%.40s", name);
	snprintf(pmin, sizeof(pmin), "%.96s/min_freq_khz", dir);
	snprintf(pmax, sizeof(pmax), "%.96s/max_freq_khz", dir);
	snprintf(path, sizeof(path), "%.96s/initial_min_freq_khz", dir);
	if ((r = read_khz(root, path, &lo, err)) != 0)
		return r < 0 ? -1 : cc_err_set(err, ENOENT, "%s: missing", path);
	snprintf(path, sizeof(path), "%.96s/initial_max_freq_khz", dir);
	if ((r = read_khz(root, path, &hi, err)) != 0)
		return r < 0 ? -1 : cc_err_set(err, ENOENT, "%s: missing", path);
	if ((r = read_value(root, pmin, cmin, sizeof(cmin), err)) != 0 ||
	    (r = read_value(root, pmax, cmax, sizeof(cmax), err)) != 0)
		return r < 0 ? -1 : cc_err_set(err, ENOENT, "%s: missing min_freq_khz or max_freq_khz", dir);
	want = spec->uncore_khz ? clamp(spec->uncore_khz, lo, hi) : hi;
	if (spec->uncore_khz && want != spec->uncore_khz)
		cc_power_warn(&t->msgs, "power.uncoreFreqKHz: %lld clamped to %s's range %lld-%lld kHz", spec->uncore_khz, name,
		     lo, hi);
	if (push_pair(t, CC_POWER_UNCORE_MIN, CC_POWER_UNCORE_MAX, pmin, pmax, want, want, cmin, cmax) < 0)
		return cc_err_sys(err, ENOMEM, "power");
	cc_power_note(&t->msgs, "power: uncore %s fixed at %lld kHz: shared by every tenant of the package, kept while "
		       "any carve there asks for it (reference-counted)", name, want);
	return 0;
}

static int probe_uncore(const struct cc_root *root, const struct cc_power_spec *spec, hwloc_const_bitmap_t cores,
			struct cc_power_targets *t, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t pkgs = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t pkg_dies = hwloc_bitmap_alloc();
	_cleanup_closedir_ DIR *d = NULL;
	struct cc_err e = CC_ERR_INIT;
	struct dirent *de;
	int found = 0;

	if (!pkgs || !pkg_dies)
		return cc_err_sys(err, ENOMEM, "power");
	d = cc_root_opendir(root, UNCORE_DIR, &e);
	if (!d) {
		if (e.code != ENOENT)
			return *err = e, -1;
		cc_power_warn(&t->msgs, "power.uncore: intel_uncore_frequency is not exposed (not an Intel server, or the "
			       "module is not loaded); left as it is");
		return 0;
	}
	if (packages_of(root, cores, pkgs, pkg_dies, err) < 0)
		return -1;
	while ((errno = 0, de = readdir(d))) {
		unsigned pkg, die;
		char tail;
		bool mine = false;

		if (sscanf(de->d_name, "package_%u_die_%u%c", &pkg, &die, &tail) == 2) {
			mine = pkg < 4096 && die < 256 && hwloc_bitmap_isset(pkg_dies, pkg * 256 + die);
		} else if (!strncmp(de->d_name, "uncore", 6) && isdigit((unsigned char)de->d_name[6])) {
			char path[CC_POWER_PATH_MAX];
			long id;

			/* TPMI: one directory per power domain; every domain
			 * of the package is fixed. */
			snprintf(path, sizeof(path), UNCORE_DIR "/%.40s/package_id", de->d_name);
			if (cc_root_read_long(root, path, &id, err) < 0)
				return -1;
			mine = id >= 0 && id < 4096 && hwloc_bitmap_isset(pkgs, (unsigned)id);
		}
		if (!mine)
			continue;
		if (probe_uncore_dir(root, spec, de->d_name, t, err) < 0)
			return -1;
		found++;
	}
	if (!found)
		cc_power_warn(&t->msgs, "power.uncore: no intel_uncore_frequency domain for this carve's packages; left as it is");
	return 0;
}

int cc_power_probe(const struct cc_root *root, const struct cc_power_spec *spec, hwloc_const_bitmap_t cpus,
		   hwloc_const_bitmap_t cores, struct cc_power_targets *t, struct cc_err *err)
{
	memset(t, 0, sizeof(*t));
	if ((spec->governor[0] || spec->epp[0] || spec->min_khz || spec->max_khz) &&
	    probe_cpufreq(root, spec, cores, t, err) < 0)
		goto fail;
	if (spec->cstates_shallow && probe_cstates(root, spec, cpus, t, err) < 0)
		goto fail;
	if (spec->uncore_fixed && probe_uncore(root, spec, cores, t, err) < 0)
		goto fail;
	return 0;
fail:
	cc_power_targets_fini(t);
	return -1;
}
