/* corecarve doctor: the node against its calibrated baseline
 * (plugin/report/calibrate.h).  Kept apart from the check table: the line exists
 * only on a node that has a baseline. */
#ifndef CC_DOCTOR_BASELINE_H
#define CC_DOCTOR_BASELINE_H

#include "calibrate.h"
#include "doctor.h"

/* The quick re-measurement doctor makes: every baseline pair, on the
 * same CPUs, 3 rounds of 30 ms (about half a second a pair). */
#define CC_DOCTOR_BASELINE_ROUNDS 3
#define CC_DOCTOR_BASELINE_MS 30

/* Append a "baseline" item to `out` when CC_BASELINE_PATH exists under
 * the root: the recorded facts compared always, the ratios and solo
 * throughputs re-measured when the root is the real host. */
void cc_doctor_baseline(const struct cc_doctor_ctx *ctx, struct cc_doctor_report *out);

/* The item itself, for a baseline already loaded and (may be NULL) a
 * measurement taken now; pure, for the tests. */
void cc_doctor_baseline_item(const struct cc_baseline *old, const char *path, const struct cc_baseline *now,
			     struct cc_doctor_item *it);

#endif
