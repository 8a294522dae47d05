/* corecarve: a placement class's `power:` settings (the policy embeds one
 * per class and policy_power.c reads them; the power effect, in
 * plugin/effects/power.h, applies them). */
#ifndef CC_POLICY_POWER_H
#define CC_POLICY_POWER_H

#include <stdbool.h>

/* Idle states with a larger exit latency (microseconds) are disabled by
 * `cstates: shallow` unless the class names its own bound: C1 and C1E
 * (1-10 us on current x86) stay, C6 and deeper (tens to hundreds) go. */
#define CC_POWER_CSTATE_LATENCY_DEFAULT 10

/* A placement class's `power:` settings (policy.h embeds one per class).
 * Empty strings and 0 mean "leave it as it is". */
struct cc_power_spec {
	char governor[32];           /* cpufreq scaling_governor */
	char epp[32];                /* energy_performance_preference (intel_pstate, amd-pstate) */
	long long min_khz, max_khz;  /* scaling_min_freq / scaling_max_freq */
	bool cstates_shallow;        /* disable idle states with latency > cstate_latency_us */
	long long cstate_latency_us;
	bool uncore_fixed;           /* min = max uncore frequency of the carve's packages */
	long long uncore_khz;        /* 0: the package's initial maximum */
};

bool cc_power_spec_empty(const struct cc_power_spec *s);

#endif
