/* A placement class's `power:` mapping:
 *
 *   power:
 *     governor: performance              # cpufreq scaling_governor
 *     energyPerformancePreference: performance   # intel_pstate / amd-pstate EPP
 *     minFreqKHz: 2000000                # scaling_min_freq
 *     maxFreqKHz: 3500000                # scaling_max_freq
 *     cstates: shallow                   # or any (default): leave idle states
 *     cstateMaxLatencyUs: 10             # with shallow: deeper states are disabled
 *     uncore: fixed                      # or any (default)
 *     uncoreFreqKHz: 2400000             # with fixed; default: the package's maximum
 *
 * Only the shape is checked here; whether the host offers a governor or a
 * preference is the probe's business (power_probe.c), because one policy
 * serves nodes of different kinds. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "policy_schema.h"
#include "policy_power.h"

const char *const cc_policy_power_keys[] = { "governor", "energyPerformancePreference", "minFreqKHz", "maxFreqKHz",
					     "cstates", "cstateMaxLatencyUs", "uncore", "uncoreFreqKHz", NULL };

/* 100 GHz: anything above is a typo in the unit (Hz for kHz). */
#define FREQ_MAX_KHZ 100000000LL

enum { LEAVE, SHALLOW, FIXED };
static const struct cc_yenum cstates_values[] = { { "any", LEAVE }, { "shallow", SHALLOW }, { NULL, 0 } };
static const struct cc_yenum uncore_values[] = { { "any", LEAVE }, { "fixed", FIXED }, { NULL, 0 } };

/* Governor and preference names go into sysfs as they are: the kernel's
 * own alphabet, so a policy cannot smuggle a newline or a path. */
static int parse_name(const struct cc_ynode *map, const char *key, char *buf, size_t size, struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(map, key);

	if (!n)
		return 0;
	if (cc_ynode_strcpy(n, buf, size, err) < 0)
		return -1;
	if (strspn(buf, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(buf))
		return cc_ynode_err(n, err, EINVAL, "expected a name of a-z, 0-9 and '_' (as the kernel lists them), got \"%s\"",
				    buf);
	return 0;
}

static int parse_uint(const struct cc_ynode *map, const char *key, long long min, long long max, long long *out,
		      struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(map, key);

	return n ? cc_ynode_uint(n, min, max, out, err) : 0;
}

int cc_policy_parse_power(const struct cc_ynode *n, struct cc_power_spec *out, struct cc_err *err)
{
	const struct cc_ynode *v;
	int cstates = LEAVE, uncore = LEAVE;

	memset(out, 0, sizeof(*out));
	out->cstate_latency_us = CC_POWER_CSTATE_LATENCY_DEFAULT;
	if (cc_ynode_mapping(n, err) < 0 || cc_ynode_check_keys(n, cc_policy_power_keys, err) < 0)
		return -1;
	if (parse_name(n, "governor", out->governor, sizeof(out->governor), err) < 0 ||
	    parse_name(n, "energyPerformancePreference", out->epp, sizeof(out->epp), err) < 0 ||
	    parse_uint(n, "minFreqKHz", 1, FREQ_MAX_KHZ, &out->min_khz, err) < 0 ||
	    parse_uint(n, "maxFreqKHz", 1, FREQ_MAX_KHZ, &out->max_khz, err) < 0 ||
	    ((v = cc_ynode_get(n, "cstates")) && cc_ynode_enum(v, cstates_values, &cstates, err) < 0) ||
	    parse_uint(n, "cstateMaxLatencyUs", 0, 1000000, &out->cstate_latency_us, err) < 0 ||
	    ((v = cc_ynode_get(n, "uncore")) && cc_ynode_enum(v, uncore_values, &uncore, err) < 0) ||
	    parse_uint(n, "uncoreFreqKHz", 1, FREQ_MAX_KHZ, &out->uncore_khz, err) < 0)
		return -1;
	out->cstates_shallow = cstates == SHALLOW;
	out->uncore_fixed = uncore == FIXED;
	/* Settings that would be ignored are refused, not quietly dropped. */
	if (out->min_khz && out->max_khz && out->min_khz > out->max_khz)
		return cc_ynode_err(cc_ynode_get(n, "minFreqKHz"), err, EINVAL, "%lld is above maxFreqKHz %lld",
				    out->min_khz, out->max_khz);
	if ((v = cc_ynode_get(n, "cstateMaxLatencyUs")) && !out->cstates_shallow)
		return cc_ynode_err(v, err, EINVAL, "requires cstates: shallow");
	if ((v = cc_ynode_get(n, "uncoreFreqKHz")) && !out->uncore_fixed)
		return cc_ynode_err(v, err, EINVAL, "requires uncore: fixed");
	return 0;
}

bool cc_power_spec_empty(const struct cc_power_spec *s)
{
	return !s->governor[0] && !s->epp[0] && !s->min_khz && !s->max_khz && !s->cstates_shallow &&
	       !s->uncore_fixed;
}
