/* corecarve doctor: the node against the baseline `corecarve calibrate`
 * wrote.  Facts (SMT, governor, frequency, microcode, kernel, hwloc) are
 * compared on any root; the ratios and the solo throughputs are measured
 * again, briefly, on the same CPU pairs, only on the real host. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_baseline.h"

static const char *const why = "the placement table corecarve calibrate measured is what plan --explain quotes; a node "
			       "that drifted from it (a lower core or uncore frequency, another governor, SMT back on) "
			       "no longer gives those numbers";

void cc_doctor_baseline_item(const struct cc_baseline *old, const char *path, const struct cc_baseline *now,
			     struct cc_doctor_item *it)
{
	struct cc_calib_tolerance tol = CC_CALIB_TOLERANCE_DEFAULT;
	struct cc_calib_compare c;
	char list[CC_DOCTOR_TEXT_MAX] = "";
	size_t off = 0;

	memset(it, 0, sizeof(*it));
	it->id = "baseline";
	if (cc_baseline_compare(old, now, &tol, &c) == 0) {
		if (now->n)
			cc_doctor_set(it, CC_DOCTOR_OK, why, NULL,
				      "%s (%s): as calibrated: %d pair%s re-measured within %.2f, facts unchanged", path,
				      old->taken, now->n, now->n == 1 ? "" : "s", tol.ratio);
		else
			cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "%s (%s): facts unchanged (ratios not re-measured: not the host)",
				      path, old->taken);
		return;
	}
	for (int i = 0; i < c.n && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? "; " : "", c.findings[i]);
	cc_doctor_set(it, CC_DOCTOR_WARN, why,
		      "find what changed (BIOS, kernel, tuned profile, microcode); when the change is meant, rerun "
		      "corecarve calibrate",
		      "%d difference%s from %s (%s): %s", c.n, c.n == 1 ? "" : "s", path, old->taken, list);
}

static bool pu_online(const struct cc_topo *t, int cpu)
{
	int i = cc_topo_pu_index(t, cpu);

	return i >= 0 && t->pus[i].online;
}

void cc_doctor_baseline(const struct cc_doctor_ctx *ctx, struct cc_doctor_report *out)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_baseline *old, *now;
	struct cc_doctor_item *it;

	if (out->n >= CC_DOCTOR_MAX || !cc_root_exists(ctx->root, CC_BASELINE_PATH))
		return;
	it = &out->items[out->n++];
	old = calloc(1, sizeof(*old));
	now = calloc(1, sizeof(*now));
	if (!old || !now || cc_baseline_load_root(ctx->root, CC_BASELINE_PATH, old, &err) < 0) {
		memset(it, 0, sizeof(*it));
		it->id = "baseline";
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "rerun corecarve calibrate", "%s",
			      err.msg[0] ? err.msg : "out of memory");
		free(old);
		free(now);
		return;
	}
	cc_calib_facts_read(ctx->root, old->n ? old->entries[0].pair.a : 0, &now->facts);
	if (ctx->root->is_host && old->n) {
		struct cc_calib_plan p = { .mem_bytes = old->mem_bytes };
		struct cc_calib_opts o = { .rounds = CC_DOCTOR_BASELINE_ROUNDS, .ms = CC_DOCTOR_BASELINE_MS };

		/* The baseline's own pairs: like is compared with like. */
		for (int r = 0; r < CC_REL_N; r++)
			p.pairs[r].rel = (enum cc_rel)r;
		for (int i = 0; i < old->n; i++) {
			const struct cc_calib_pair *pr = &old->entries[i].pair;

			/* A CPU gone offline shows as the online fact and a
			 * pair not measurable now, not as a failure. */
			if (ctx->topo && (!pu_online(ctx->topo, pr->a) || !pu_online(ctx->topo, pr->b)))
				continue;
			p.pairs[pr->rel] = *pr;
		}
		if (cc_calib_measure(ctx->root, &p, &o, NULL, now, &err) < 0) {
			memset(it, 0, sizeof(*it));
			it->id = "baseline";
			cc_doctor_set(it, CC_DOCTOR_WARN, why,
				      "run doctor where the baseline's CPUs are usable (not inside a smaller cpuset)",
				      "%s: cannot re-measure: %s", CC_BASELINE_PATH, err.msg);
			free(old);
			free(now);
			return;
		}
	}
	cc_doctor_baseline_item(old, CC_BASELINE_PATH, now, it);
	free(old);
	free(now);
}
