/* Per-class power settings (plugin/effects/power*.c, policy_power.c):
 *   - the policy's `power:` mapping, strictly;
 *   - the ledger section, strictly, and its round trip;
 *   - the pure decisions: who writes, who shares, what is restored, in
 *     which order, and what is left to someone else's change;
 *   - the probe on a real machine's sysfs (fixture F03: Alder Lake with
 *     intel_pstate, intel_idle and intel_uncore_frequency), read only;
 *   - apply and release on a writable copy of that tree, a crash at each
 *     power fault step, and the cpuidle path on a tree made here. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"
#include "policy.h"
#include "power.h"
#include "testlib.h"

#define F03_DIR "F03-intel-alderlake-p-4P8E"
#define F03_TAR "test-data-sample1.tar.xz"
#define CPU "/sys/devices/system/cpu"
#define GOV2 CPU "/cpufreq/policy2/scaling_governor"
#define IDLE2 CPU "/cpu2/cpuidle/state2/disable"
#define UMIN CPU "/intel_uncore_frequency/package_00_die_00/min_freq_khz"
#define UMAX CPU "/intel_uncore_frequency/package_00_die_00/max_freq_khz"

/* ---- policy ---- */

static struct cc_policy *policy_with(const char *power, struct cc_err *err)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "classes:\n"
		 "  latency:\n"
		 "    coreType: performance\n"
		 "%s",
		 power);
	return cc_policy_parse(text, strlen(text), "p.yaml", err);
}

START_TEST(test_policy_power_full)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = policy_with("    power:\n"
							   "      governor: performance\n"
							   "      energyPerformancePreference: balance_performance\n"
							   "      minFreqKHz: 2000000\n"
							   "      maxFreqKHz: 3000000\n"
							   "      cstates: shallow\n"
							   "      cstateMaxLatencyUs: 20\n"
							   "      uncore: fixed\n"
							   "      uncoreFreqKHz: 2400000\n",
							   &err);
	const struct cc_power_spec *s;

	ck_assert_msg(p != NULL, "%s", err.msg);
	s = &p->classes[0].power;
	ck_assert_str_eq(s->governor, "performance");
	ck_assert_str_eq(s->epp, "balance_performance");
	ck_assert_int_eq(s->min_khz, 2000000);
	ck_assert_int_eq(s->max_khz, 3000000);
	ck_assert(s->cstates_shallow);
	ck_assert_int_eq(s->cstate_latency_us, 20);
	ck_assert(s->uncore_fixed);
	ck_assert_int_eq(s->uncore_khz, 2400000);
	ck_assert(!cc_power_spec_empty(s));
}
END_TEST

START_TEST(test_policy_power_defaults)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = policy_with("    power:\n      cstates: shallow\n", &err);
	_cleanup_policy_ struct cc_policy *none = policy_with("", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(p->classes[0].power.cstate_latency_us, CC_POWER_CSTATE_LATENCY_DEFAULT);
	ck_assert(!p->classes[0].power.uncore_fixed);
	ck_assert_ptr_nonnull(none);
	ck_assert(cc_power_spec_empty(&none->classes[0].power));
}
END_TEST

static const struct {
	const char *yaml;
	const char *want; /* in the one-line error */
} bad_power[] = {
	{ "    power:\n      turbo: off\n", "p.yaml:5:7: classes.latency.power.turbo: unknown key" },
	{ "    power:\n      governor: \"perf ormance\"\n", "classes.latency.power.governor: expected a name of a-z" },
	{ "    power:\n      governor: ../x\n", "classes.latency.power.governor: expected a name" },
	{ "    power:\n      minFreqKHz: 3000000\n      maxFreqKHz: 2000000\n",
	  "classes.latency.power.minFreqKHz: 3000000 is above maxFreqKHz 2000000" },
	{ "    power:\n      minFreqKHz: 0\n", "classes.latency.power.minFreqKHz: expected an integer >= 1" },
	{ "    power:\n      maxFreqKHz: 4800000000\n", "classes.latency.power.maxFreqKHz:" },
	{ "    power:\n      cstateMaxLatencyUs: 5\n", "classes.latency.power.cstateMaxLatencyUs: requires cstates: shallow" },
	{ "    power:\n      cstates: off\n", "classes.latency.power.cstates: expected any or shallow" },
	{ "    power:\n      uncoreFreqKHz: 2000000\n", "classes.latency.power.uncoreFreqKHz: requires uncore: fixed" },
	{ "    power:\n      uncore: pinned\n", "classes.latency.power.uncore: expected any or fixed" },
	{ "    power: performance\n", "classes.latency.power: expected a mapping" },
	{ "    exclusive: false\n    power:\n      governor: performance\n",
	  "classes.latency.power: power settings need exclusive: true" },
	{ "    governor: performance\n", "classes.latency.governor: unknown key (power settings go under power:)" },
};

START_TEST(test_policy_power_bad)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = policy_with(bad_power[_i].yaml, &err);

	ck_assert_msg(p == NULL, "accepted: %s", bad_power[_i].yaml);
	ck_assert_msg(strstr(err.msg, bad_power[_i].want), "got \"%s\", want \"%s\"", err.msg, bad_power[_i].want);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* ---- the ledger section ---- */

START_TEST(test_state_roundtrip)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs st, back;
	struct cc_noderec *r;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_empty(&err);

	cc_noderecs_init(&st);
	r = cc_noderecs_add(&st, UMIN, "uncore-min", "400000");
	ck_assert_ptr_nonnull(r);
	r->seq = 3;
	ck_assert_int_eq(cc_noderec_put(&r->set, "3000000"), 0);
	ck_assert_int_eq(cc_noderec_put(&r->pending, "4000000"), 0);
	ck_assert_int_eq(cc_power_rec_add_owner(r, "a"), 0);
	ck_assert_int_eq(cc_power_rec_add_owner(r, "b"), 0);
	ck_assert_int_eq(cc_power_rec_add_owner(r, "a"), 0); /* counted once */
	ck_assert_int_eq(r->nowners, 2);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cc_power_recs_store(l, &st, &err), 0);
	/* One record format: the node records' (noderec.h). */
	{
		_cleanup_free_ char *text = json_dumps(cc_ledger_section_get(l, CC_POWER_SECTION), JSON_SORT_KEYS);

		ck_assert_str_eq(text, "{\"files\": [{\"kind\": \"uncore-min\", \"orig\": \"400000\", \"owners\": {\"a\": \"\", "
				       "\"b\": \"\"}, \"path\": \"" UMIN "\", \"pending\": \"4000000\", \"seq\": 3, "
				       "\"set\": \"3000000\"}]}");
	}
	ck_assert_int_eq(cc_power_recs_load(l, &back, &err), 0);
	ck_assert_int_eq(back.n, 1);
	ck_assert_str_eq(back.r[0]->path, UMIN);
	ck_assert_int_eq(cc_power_rec_kind(back.r[0]), CC_POWER_UNCORE_MIN);
	ck_assert_str_eq(back.r[0]->orig, "400000");
	ck_assert_str_eq(back.r[0]->set, "3000000");
	ck_assert_str_eq(back.r[0]->pending, "4000000");
	ck_assert_str_eq(cc_power_rec_value(back.r[0]), "4000000");
	ck_assert_int_eq(back.r[0]->nowners, 2);
	ck_assert_str_eq(back.r[0]->owners[1].id, "b");
	ck_assert(cc_power_rec_owned_by(back.r[0], "a"));
	ck_assert(!cc_power_rec_owned_by(back.r[0], "c"));
	ck_assert_int_eq(back.r[0]->seq, 3);
	ck_assert_int_eq(back.next, 4);
	/* Emptied: the section goes, so an idle ledger stays empty. */
	cc_noderecs_fini(&back);
	cc_noderecs_fini(&st);
	ck_assert_int_eq(cc_power_recs_store(l, &st, &err), 0);
	ck_assert_ptr_null(cc_ledger_section_get(l, CC_POWER_SECTION));
}
END_TEST

static const struct {
	const char *json;
	const char *want;
} bad_state[] = {
	{ "[]", "sections.power: expected an object" },
	{ "{\"next\": 1, \"files\": []}", "sections.power: expected only \"files\"" },
	{ "{\"next\": 1}", "sections.power.files: expected an array" },
	{ "{\"files\": [], \"x\": 1}", "sections.power: expected only" },
	{ "{\"files\": [{\"path\": \"/etc/shadow\", \"kind\": \"governor\", \"orig\": \"a\", \"set\": \"b\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.path: expected an absolute path under /sys" },
	{ "{\"files\": [{\"path\": \"/sys/../etc/x\", \"kind\": \"governor\", \"orig\": \"a\", \"set\": \"b\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.path: expected an absolute path without \".\" or \"..\"" },
	{ "{\"files\": [{\"path\": \"/sys/x/..\", \"kind\": \"governor\", \"orig\": \"a\", \"set\": \"b\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.path: expected an absolute path under /sys" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"turbo\", \"orig\": \"a\", \"set\": \"b\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.kind: unknown kind \"turbo\"" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"peer\", \"orig\": \"a\", \"set\": \"b\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.kind: unknown kind \"peer\"" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"setting\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0: unknown field \"setting\"" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\\n1\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.orig: control character" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"pending\": \"1\\u007f\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.pending: control character" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": null, \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.orig: expected a string (corecarve never creates a power file)" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": "
	  "\"0123456789012345678901234567890123456789012345678901234567890123\", \"seq\": 1, \"owners\": {}}]}",
	  "sections.power.files.0.set: longer than 63 bytes" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 0, \"owners\": {}}]}",
	  "sections.power.files.0.seq: expected an integer >= 1" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": [\"a\"]}]}",
	  "sections.power.files.0.owners: expected an object of carve ids" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {\"a\": 7}}]}",
	  "sections.power.files.0.owners.a: expected a string" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {\"a\": \"2-3\"}}]}",
	  "sections.power.files.0.owners.a: expected \"\" (power settings have no shares)" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}, \"pending\": true}]}",
	  "sections.power.files.0.pending: expected a string" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}, \"extra\": 1}]}",
	  "sections.power.files.0: unknown field \"extra\"" },
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 1, \"owners\": {}}, {\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"set\": \"1\","
	  " \"seq\": 2, \"owners\": {}}]}",
	  "sections.power.files.1.path: \"/sys/x\" recorded twice" },
	/* Power's checks name the record they refuse, after a good one. */
	{ "{\"files\": [{\"path\": \"/sys/x\", \"kind\": \"cstate\", \"orig\": \"0\", \"seq\": 1, \"owners\": {}},"
	  " {\"path\": \"/proc/y\", \"kind\": \"epp\", \"orig\": \"0\", \"seq\": 2, \"owners\": {}}]}",
	  "sections.power.files.1.path: expected an absolute path under /sys, got \"/proc/y\"" },
};

START_TEST(test_state_bad)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs st;
	json_error_t je;
	_cleanup_json_ json_t *j = json_loads(bad_state[_i].json, 0, &je);

	ck_assert_msg(j != NULL, "%s", je.text);
	ck_assert_int_eq(cc_power_recs_parse(j, &st, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_state[_i].want), "got \"%s\", want \"%s\"", err.msg, bad_state[_i].want);
	ck_assert_int_eq(st.n, 0);
}
END_TEST

/* ---- pure decisions ---- */

static void target(struct cc_power_targets *t, enum cc_power_kind k, const char *path, const char *want,
		   const char *cur)
{
	t->t = realloc(t->t, (size_t)(t->n + 1) * sizeof(*t->t));
	ck_assert_ptr_nonnull(t->t);
	memset(&t->t[t->n], 0, sizeof(t->t[0]));
	t->t[t->n].kind = k;
	snprintf(t->t[t->n].path, sizeof(t->t[0].path), "%s", path);
	snprintf(t->t[t->n].want, sizeof(t->t[0].want), "%s", want);
	snprintf(t->t[t->n].cur, sizeof(t->t[0].cur), "%s", cur);
	t->n++;
}

START_TEST(test_plan_new_shared_conflict)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs st;
	struct cc_power_targets ta = { 0 }, tb = { 0 }, tc = { 0 };
	struct cc_power_plan pa, pb, pc;

	cc_noderecs_init(&st);
	target(&ta, CC_POWER_GOVERNOR, GOV2, "performance", "powersave");
	target(&ta, CC_POWER_CSTATE, IDLE2, "1", "1"); /* already so: recorded, not written */
	target(&ta, CC_POWER_UNCORE_MIN, UMIN, "4000000", "400000");
	target(&ta, CC_POWER_UNCORE_MAX, UMAX, "4000000", "4000000");
	ck_assert_int_eq(cc_power_plan(&st, &ta, "a", &pa, &err), 0);
	ck_assert_int_eq(pa.n, 2);
	ck_assert_str_eq(pa.steps[0].path, GOV2);
	ck_assert_str_eq(pa.steps[0].to, "performance");
	ck_assert_str_eq(pa.steps[1].path, UMIN);
	ck_assert_int_eq(pa.next.n, 4);
	ck_assert_str_eq(pa.next.r[0]->pending, "performance"); /* journaled: the write to come */
	ck_assert_ptr_null(pa.next.r[0]->set);
	ck_assert_ptr_null(pa.next.r[1]->pending);
	ck_assert_ptr_null(pa.next.r[1]->set); /* recorded, never written */
	ck_assert_str_eq(pa.next.r[1]->orig, "1");
	ck_assert_str_eq(cc_power_rec_value(pa.next.r[1]), "1");
	ck_assert_str_eq(pa.next.r[0]->kind, "governor");
	ck_assert_str_eq(pa.next.r[0]->owners[0].share, "");
	ck_assert_int_eq(pa.next.r[0]->seq, 1);
	ck_assert_int_eq(pa.next.r[3]->seq, 4);

	/* b on the same package: the uncore is shared, counted, not written. */
	target(&tb, CC_POWER_UNCORE_MIN, UMIN, "4000000", "4000000");
	target(&tb, CC_POWER_UNCORE_MAX, UMAX, "4000000", "4000000");
	ck_assert_int_eq(cc_power_plan(&pa.next, &tb, "b", &pb, &err), 0);
	ck_assert_int_eq(pb.n, 0);
	ck_assert_int_eq(pb.msgs.nwarnings, 0);
	ck_assert_int_eq(cc_noderecs_find(&pb.next, UMIN)->nowners, 2);

	/* c wants another uncore frequency: a's stays, c is told. */
	target(&tc, CC_POWER_UNCORE_MIN, UMIN, "2000000", "4000000");
	ck_assert_int_eq(cc_power_plan(&pb.next, &tc, "c", &pc, &err), 0);
	ck_assert_int_eq(pc.n, 0);
	ck_assert_int_eq(pc.msgs.nwarnings, 1);
	ck_assert_msg(strstr(pc.msgs.warnings[0], "power.uncore-min: " UMIN " is held at \"4000000\" for a and others; "
						    "\"2000000\" not applied"),
		      "%s", pc.msgs.warnings[0]);
	ck_assert(!cc_power_rec_owned_by(cc_noderecs_find(&pc.next, UMIN), "c"));
	cc_power_plan_fini(&pa);
	cc_power_plan_fini(&pb);
	cc_power_plan_fini(&pc);
	cc_power_targets_fini(&ta);
	cc_power_targets_fini(&tb);
	cc_power_targets_fini(&tc);
}
END_TEST

static struct cc_power_now now_of(const struct cc_noderecs *st, const char *const *values)
{
	struct cc_power_now now = { .n = st->n, .value = calloc((size_t)st->n + 1, sizeof(char *)) };

	for (int i = 0; i < st->n; i++)
		now.value[i] = values[i] ? strdup(values[i]) : NULL;
	return now;
}

/* What apply does once each write is done: `set` as read back, nothing in
 * flight. */
static void written(struct cc_noderecs *st)
{
	for (int i = 0; i < st->n; i++)
		if (st->r[i]->pending) {
			ck_assert_int_eq(cc_noderec_put(&st->r[i]->set, st->r[i]->pending), 0);
			ck_assert_int_eq(cc_noderec_put(&st->r[i]->pending, NULL), 0);
		}
}

START_TEST(test_release_plan)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs st;
	struct cc_power_targets ta = { 0 }, tb = { 0 };
	struct cc_power_plan pa, pb, rel;
	struct cc_power_now now;
	const char *live_b[] = { "b", NULL };
	const char *none[] = { NULL };

	cc_noderecs_init(&st);
	target(&ta, CC_POWER_GOVERNOR, GOV2, "performance", "powersave");
	target(&ta, CC_POWER_MIN_FREQ, CPU "/cpufreq/policy2/scaling_min_freq", "2000000", "400000");
	target(&ta, CC_POWER_UNCORE_MAX, UMAX, "4000000", "3000000");
	target(&ta, CC_POWER_UNCORE_MIN, UMIN, "4000000", "400000");
	ck_assert_int_eq(cc_power_plan(&st, &ta, "a", &pa, &err), 0);
	target(&tb, CC_POWER_UNCORE_MAX, UMAX, "4000000", "4000000");
	target(&tb, CC_POWER_UNCORE_MIN, UMIN, "4000000", "4000000");
	ck_assert_int_eq(cc_power_plan(&pa.next, &tb, "b", &pb, &err), 0);
	written(&pb.next);

	/* a goes, b stays: the governor comes back; the min frequency was
	 * changed by someone since and stays theirs; the uncore stays (b). */
	now = now_of(&pb.next, (const char *const[]){ "performance", "1000000", "4000000", "4000000" });
	ck_assert_int_eq(cc_power_release_plan(&pb.next, &now, live_b, &rel, &err), 0);
	ck_assert_int_eq(rel.n, 1);
	ck_assert_str_eq(rel.steps[0].path, GOV2);
	ck_assert_str_eq(rel.steps[0].to, "powersave");
	ck_assert_int_eq(rel.msgs.nwarnings, 1);
	ck_assert_msg(strstr(rel.msgs.warnings[0], "scaling_min_freq was changed to \"1000000\" since corecarve set "
						     "\"2000000\"; left as it is (it was \"400000\" before)"),
		      "%s", rel.msgs.warnings[0]);
	ck_assert_int_eq(rel.next.n, 2);
	ck_assert_int_eq(cc_noderecs_find(&rel.next, UMIN)->nowners, 1);
	ck_assert_str_eq(cc_noderecs_find(&rel.next, UMIN)->owners[0].id, "b");
	cc_power_now_fini(&now);

	/* Nobody left: the uncore goes back in reverse order of the first
	 * writes (min before max, as max was raised first). */
	{
		struct cc_power_plan last;

		now = now_of(&rel.next, (const char *const[]){ "4000000", "4000000" });
		ck_assert_int_eq(cc_power_release_plan(&rel.next, &now, none, &last, &err), 0);
		ck_assert_int_eq(last.n, 2);
		ck_assert_str_eq(last.steps[0].path, UMIN);
		ck_assert_str_eq(last.steps[0].to, "400000");
		ck_assert_str_eq(last.steps[1].path, UMAX);
		ck_assert_str_eq(last.steps[1].to, "3000000");
		ck_assert_int_eq(last.next.n, 0);
		cc_power_plan_fini(&last);
		cc_power_now_fini(&now);
	}

	/* A pending write whose file is back already, and a file that is
	 * gone: no step, the records go, the gone one with a warning. */
	{
		struct cc_power_plan p2;

		ck_assert_str_eq(pa.next.r[0]->pending, "performance");
		now = now_of(&pa.next, (const char *const[]){ "powersave", NULL, "3000000", "400000" });
		ck_assert_int_eq(cc_power_release_plan(&pa.next, &now, none, &p2, &err), 0);
		ck_assert_int_eq(p2.n, 0);
		ck_assert_int_eq(p2.next.n, 0);
		ck_assert_int_eq(p2.msgs.nwarnings, 1);
		ck_assert_msg(strstr(p2.msgs.warnings[0], "scaling_min_freq is gone; nothing to restore"), "%s",
			      p2.msgs.warnings[0]);
		cc_power_plan_fini(&p2);
		cc_power_now_fini(&now);
	}
	/* Pending and half-written (a crash mid-write): restored. */
	{
		struct cc_power_plan p3;

		now = now_of(&pa.next, (const char *const[]){ "performance", "400000", "3000000", "400000" });
		ck_assert_int_eq(cc_power_release_plan(&pa.next, &now, none, &p3, &err), 0);
		ck_assert_int_eq(p3.n, 1);
		ck_assert_str_eq(p3.steps[0].to, "powersave");
		cc_power_plan_fini(&p3);
		cc_power_now_fini(&now);
	}
	/* Pending, and the file reads neither the write in flight nor the
	 * original: someone else's value, left with a warning. */
	{
		struct cc_power_plan p4;

		now = now_of(&pa.next, (const char *const[]){ "schedutil", "400000", "3000000", "400000" });
		ck_assert_int_eq(cc_power_release_plan(&pa.next, &now, none, &p4, &err), 0);
		ck_assert_int_eq(p4.n, 0);
		ck_assert_int_eq(p4.next.n, 0);
		ck_assert_int_eq(p4.msgs.nwarnings, 1);
		ck_assert_msg(strstr(p4.msgs.warnings[0], "power.governor: " GOV2 " was changed to \"schedutil\" since "
							   "corecarve set \"performance\""),
			      "%s", p4.msgs.warnings[0]);
		cc_power_plan_fini(&p4);
		cc_power_now_fini(&now);
	}
	cc_power_plan_fini(&rel);
	cc_power_plan_fini(&pa);
	cc_power_plan_fini(&pb);
	cc_power_targets_fini(&ta);
	cc_power_targets_fini(&tb);
}
END_TEST

/* ---- on F03's sysfs ---- */

static const char *f03(void)
{
	static char root[512];
	const char *tree = cc_test_fixture_tree(F03_DIR, F03_TAR);

	if (!tree)
		return NULL;
	snprintf(root, sizeof(root), "%s/sample1", tree);
	return root;
}

/* A private writable copy of F03's tree. */
static const char *f03_copy(void)
{
	static char dir[] = "/tmp/cc-power-XXXXXX";
	const char *src = f03();
	char cmd[1024];

	if (!src)
		return NULL;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/sys' '%s/'", src, dir);
	ck_assert_int_eq(system(cmd), 0);
	return dir;
}

/* Every file of the copied sys tree with its contents, hashed: equal
 * sums before and after mean the tree is byte for byte as it was. */
static char *tree_sum(const char *dir)
{
	char *sum = NULL;

	ck_assert_int_eq(cc_test_sh(&sum, "cd '%s' && find sys -type f | sort | while read f; do printf \"%%s=%%s\\n\" \"$f\" \"$(cat \"$f\" 2>/dev/null)\"; done | md5sum", dir), 0);
	return sum;
}

static hwloc_bitmap_t bm(const char *list)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	struct cc_err err = CC_ERR_INIT;

	ck_assert_int_eq(cc_cpulist_parse(list, b, "test", &err), 0);
	return b;
}

static const struct cc_power_target *find_target(const struct cc_power_targets *t, const char *path)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->t[i].path, path))
			return &t->t[i];
	return NULL;
}

static void has_warning(const struct cc_power_msgs *m, const char *want)
{
	for (int i = 0; i < m->nwarnings; i++)
		if (strstr(m->warnings[i], want))
			return;
	ck_abort_msg("no warning \"%s\" among %d (first: \"%s\")", want, m->nwarnings,
		     m->nwarnings ? m->warnings[0] : "");
}

static struct cc_power_spec full_spec(void)
{
	struct cc_power_spec s = { .governor = "performance", .min_khz = 2000000, .cstates_shallow = true,
				   .cstate_latency_us = 10, .uncore_fixed = true };

	return s;
}

START_TEST(test_probe_f03)
{
	const char *root_dir = f03();
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = bm("2"), cores = bm("2-3");
	struct cc_power_spec s = full_spec();
	struct cc_power_targets t;
	const struct cc_power_target *x;

	if (!root_dir)
		return;
	root = cc_root_open(root_dir, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	snprintf(s.epp, sizeof(s.epp), "balance_power");
	ck_assert_msg(cc_power_probe(root, &s, cpus, cores, &t, &err) == 0, "%s", err.msg);
	/* Two per-CPU intel_pstate policies (2 and 3: one core's threads). */
	x = find_target(&t, CPU "/cpufreq/policy2/scaling_governor");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->cur, "powersave");
	ck_assert_ptr_nonnull(find_target(&t, CPU "/cpufreq/policy3/scaling_governor"));
	ck_assert_ptr_null(find_target(&t, CPU "/cpufreq/policy4/scaling_governor"));
	x = find_target(&t, CPU "/cpufreq/policy2/energy_performance_preference");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->want, "balance_power");
	x = find_target(&t, CPU "/cpufreq/policy2/scaling_min_freq");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->want, "2000000");
	/* intel_idle's C6, C8, C10 (170, 200, 230 us) go on CPU 2 only; POLL
	 * and C1E (0, 2 us) stay; the parked sibling sleeps as deep as it
	 * likes. */
	ck_assert_ptr_nonnull(find_target(&t, CPU "/cpu2/cpuidle/state2/disable"));
	ck_assert_ptr_nonnull(find_target(&t, CPU "/cpu2/cpuidle/state3/disable"));
	ck_assert_ptr_nonnull(find_target(&t, CPU "/cpu2/cpuidle/state4/disable"));
	ck_assert_ptr_null(find_target(&t, CPU "/cpu2/cpuidle/state1/disable"));
	ck_assert_ptr_null(find_target(&t, CPU "/cpu3/cpuidle/state2/disable"));
	/* The package's uncore, pinned at its initial maximum, min after max
	 * as max is there already. */
	x = find_target(&t, UMIN);
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->want, "4000000");
	ck_assert_str_eq(x->cur, "400000");
	ck_assert_int_eq(t.n, 2 + 2 + 2 + 3 + 2);
	ck_assert_int_eq(t.msgs.nwarnings, 0);
	ck_assert_int_eq(t.msgs.nnotes, 1);
	ck_assert_msg(strstr(t.msgs.notes[0], "uncore package_00_die_00 fixed at 4000000 kHz: shared by every tenant"),
		      "%s", t.msgs.notes[0]);
	/* Order: governor before EPP before frequencies before idle states. */
	ck_assert_int_eq(t.t[0].kind, CC_POWER_GOVERNOR);
	ck_assert_int_eq(t.t[t.n - 1].kind, CC_POWER_UNCORE_MAX);
	cc_power_targets_fini(&t);
}
END_TEST

START_TEST(test_probe_f03_warnings)
{
	const char *root_dir = f03();
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = bm("2"), cores = bm("2-3");
	struct cc_power_spec s = { .governor = "schedutil", .epp = "max_turbo", .max_khz = 9000000,
				   .uncore_fixed = true, .uncore_khz = 100 };
	struct cc_power_targets t;
	const struct cc_power_target *x;

	if (!root_dir)
		return;
	root = cc_root_open(root_dir, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_power_probe(root, &s, cpus, cores, &t, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(find_target(&t, CPU "/cpufreq/policy2/scaling_governor"));
	ck_assert_ptr_null(find_target(&t, CPU "/cpufreq/policy2/energy_performance_preference"));
	x = find_target(&t, CPU "/cpufreq/policy2/scaling_max_freq");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->want, "4800000"); /* clamped to cpuinfo_max_freq */
	x = find_target(&t, UMIN);
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->want, "400000"); /* clamped to initial_min_freq_khz */
	ck_assert_int_eq(t.msgs.nwarnings, 4);
	has_warning(&t.msgs, "power.governor: \"schedutil\" is not offered by intel_pstate (offered: performance powersave) "
			     "on CPUs 2-3; left as it is");
	has_warning(&t.msgs, "power.energyPerformancePreference: \"max_turbo\" is not offered (offered: default "
			     "performance balance_performance balance_power power");
	has_warning(&t.msgs, "power.minFreqKHz/maxFreqKHz: clamped to the hardware's range 400000-4800000 kHz on CPUs 2-3");
	has_warning(&t.msgs, "power.uncoreFreqKHz: 100 clamped to package_00_die_00's range 400000-4000000 kHz");
	cc_power_targets_fini(&t);
}
END_TEST

/* A tree without cpufreq, cpuidle or uncore (a VM, like the e2e guest):
 * every setting is a warning, nothing is a target. */
START_TEST(test_probe_absent)
{
	char dir[] = "/tmp/cc-power-none-XXXXXX", cmd[1024];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = bm("2"), cores = bm("2-3");
	struct cc_power_spec s = full_spec();
	struct cc_power_targets t;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s" CPU "/cpu2/topology %s" CPU "/cpu3/topology %s" CPU "/cpuidle && "
		 "echo none > %s" CPU "/cpuidle/current_driver && "
		 "echo 0 > %s" CPU "/cpu2/topology/physical_package_id && echo 0 > %s" CPU "/cpu3/topology/physical_package_id",
		 dir, dir, dir, dir, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_power_probe(root, &s, cpus, cores, &t, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(t.n, 0);
	ck_assert_int_eq(t.msgs.nwarnings, 3);
	ck_assert_msg(strstr(t.msgs.warnings[0], "power: cpufreq is not exposed for CPUs 2-3"), "%s", t.msgs.warnings[0]);
	ck_assert_msg(strstr(t.msgs.warnings[1], "power.cstates: no cpuidle states on CPUs 2 (cpuidle driver: none)"), "%s",
		      t.msgs.warnings[1]);
	ck_assert_msg(strstr(t.msgs.warnings[2], "power.uncore: intel_uncore_frequency is not exposed"), "%s",
		      t.msgs.warnings[2]);
	cc_power_targets_fini(&t);
}
END_TEST

/* ---- apply and release on a writable copy of F03 ---- */

static char *get(const char *base, const char *path)
{
	char full[1024];
	char *s;
	size_t n;

	snprintf(full, sizeof(full), "%s%s", base, path);
	s = cc_test_slurp(full);
	n = strlen(s);
	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	return s;
}

static void put(const char *base, const char *path, const char *v)
{
	char full[1024];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", base, path);
	f = fopen(full, "w");
	ck_assert_ptr_nonnull(f);
	fputs(v, f);
	fclose(f);
}

#define ck_file(base, path, want)                                              \
	do {                                                                   \
		char *v_ = get(base, path);                                    \
		ck_assert_msg(!strcmp(v_, want), "%s: \"%s\", want \"%s\"", path, v_, want); \
		free(v_);                                                      \
	} while (0)

static void add_carve(struct cc_ledger *l, const char *id, const char *cpus, const char *parked)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_carve c;

	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	ck_assert_int_eq(cc_cpulist_parse(cpus, c.cpus, "cpus", &err), 0);
	ck_assert_int_eq(cc_cpulist_parse(parked, c.parked, "parked", &err), 0);
	c.exclusive = true;
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	cc_carve_fini(&c);
}

static int apply(struct cc_root *root, struct cc_ledger *l, const struct cc_power_spec *s, const char *id,
		 const char *cpus, const char *parked, struct cc_power_report *rep)
{
	_cleanup_bitmap_ hwloc_bitmap_t c = bm(cpus), p = bm(parked);
	struct cc_err err = CC_ERR_INIT;
	int rc = cc_power_apply(root, l, s, id, c, p, NULL, rep, &err);

	ck_assert_msg(rc == 0, "%s", err.msg);
	return rc;
}

START_TEST(test_apply_release_f03)
{
	const char *dir = f03_copy();
	char state[256];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	struct cc_power_spec s = full_spec(), sb = { .uncore_fixed = true, .min_khz = 3000000 };
	struct cc_power_report rep;
	_cleanup_free_ char *before = NULL, *after = NULL;

	if (!dir)
		return;
	before = tree_sum(dir);
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	snprintf(state, sizeof(state), "%s/state", dir);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);

	add_carve(l, "a", "2", "3");
	apply(root, l, &s, "a", "2", "3", &rep);
	ck_assert_int_eq(rep.written, 2 + 2 + 3 + 1); /* uncore max is at 4000000 already */
	ck_assert_int_eq(rep.msgs.nwarnings, 0);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	ck_file(dir, GOV2, "performance");
	ck_file(dir, CPU "/cpufreq/policy3/scaling_governor", "performance");
	ck_file(dir, CPU "/cpufreq/policy2/scaling_min_freq", "2000000");
	ck_file(dir, CPU "/cpu2/cpuidle/state2/disable", "1");
	ck_file(dir, CPU "/cpu2/cpuidle/state4/disable", "1");
	ck_file(dir, CPU "/cpu2/cpuidle/state1/disable", "0");
	ck_file(dir, CPU "/cpu3/cpuidle/state2/disable", "0");
	ck_file(dir, UMIN, "4000000");

	/* b on CPUs 4-5 (another core, the same package): shares the uncore. */
	add_carve(l, "b", "4", "5");
	apply(root, l, &sb, "b", "4", "5", &rep);
	ck_assert_int_eq(rep.written, 2); /* its min frequencies */
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	{
		struct cc_noderecs st;

		ck_assert_int_eq(cc_power_recs_load(l, &st, &err), 0);
		ck_assert_int_eq(cc_noderecs_find(&st, UMIN)->nowners, 2);
		ck_assert_ptr_null(cc_noderecs_find(&st, GOV2)->pending);
		ck_assert_str_eq(cc_noderecs_find(&st, GOV2)->set, "performance");
		cc_noderecs_fini(&st);
	}

	/* `corecarve status` shows what is held, for whom (the ledger lock is
	 * let go meanwhile: status takes a shared one). */
	{
		const char *bin = cc_test_bin("status with power");
		_cleanup_free_ char *out = NULL;

		cc_ledger_close(l);
		l = NULL;
		if (bin) {
			ck_assert_int_eq(cc_test_sh(&out, "'%s' status --root '%s' --state '%s'", bin, dir, state), 0);
			ck_assert_msg(strstr(out, "\nSETTING    VALUES          FILES FOR\ngovernor   performance         2 a\n"),
				      "%s", out);
			ck_assert_msg(strstr(out, "\nuncore-min 4000000             1 a,b\n"), "%s", out);
			free(out);
			out = NULL;
			ck_assert_int_eq(cc_test_sh(&out, "'%s' status --json --root '%s' --state '%s'", bin, dir, state), 0);
			ck_assert_msg(strstr(out, "\"power\": [") && strstr(out, "\"path\": \"" GOV2 "\""), "%s", out);
		}
		l = cc_ledger_open(state, &err);
		ck_assert_msg(l != NULL, "%s", err.msg);
	}

	/* Someone raises CPU 2's min frequency by hand after the carve. */
	put(dir, CPU "/cpufreq/policy2/scaling_min_freq", "2500000");

	/* a goes: its files come back, except the hand-made change; the
	 * uncore stays for b. */
	ck_assert_int_eq(cc_power_release(root, l, "a", NULL, &rep, &err), 0);
	ck_assert_int_eq(cc_ledger_remove(l, "a"), 1);
	ck_assert_int_eq(rep.restored, 2 + 3 + 1);
	ck_assert_int_eq(rep.msgs.nwarnings, 1);
	ck_assert_msg(strstr(rep.msgs.warnings[0], "policy2/scaling_min_freq was changed to \"2500000\""), "%s",
		      rep.msgs.warnings[0]);
	ck_file(dir, GOV2, "powersave");
	ck_file(dir, CPU "/cpu2/cpuidle/state2/disable", "0");
	ck_file(dir, CPU "/cpufreq/policy3/scaling_min_freq", "400000");
	ck_file(dir, UMIN, "4000000");
	put(dir, CPU "/cpufreq/policy2/scaling_min_freq", "400000");

	/* b goes: the uncore and b's frequencies come back, the section goes. */
	ck_assert_int_eq(cc_power_release(root, l, "b", NULL, &rep, &err), 0);
	ck_assert_int_eq(cc_ledger_remove(l, "b"), 1);
	ck_assert_int_eq(rep.restored, 2 + 1);
	ck_assert_ptr_null(cc_ledger_section_get(l, CC_POWER_SECTION));
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	after = tree_sum(dir);
	ck_assert_str_eq(before, after);
}
END_TEST

/* A file the kernel refuses to write (here: made read-only, as
 * intel_pstate refuses a preference under `performance` with EBUSY): a
 * warning, its record goes, the rest applies. */
START_TEST(test_apply_refused_write)
{
	const char *dir = f03_copy();
	char state[256], path[512];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	struct cc_power_spec s = { .governor = "performance", .epp = "performance" };
	struct cc_power_report rep;
	struct cc_noderecs st;
	_cleanup_bitmap_ hwloc_bitmap_t c2 = bm("2"), c3 = bm("3");

	if (!dir)
		return;
	if (geteuid() == 0) {
		/* root writes a 0444 file anyway: use a directory instead. */
		snprintf(path, sizeof(path), "%s" CPU "/cpufreq/policy2/energy_performance_preference", dir);
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	} else {
		snprintf(path, sizeof(path), "%s" CPU "/cpufreq/policy2/energy_performance_preference", dir);
		ck_assert_int_eq(chmod(path, 0444), 0);
	}
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	snprintf(state, sizeof(state), "%s/state", dir);
	l = cc_ledger_open(state, &err);
	ck_assert_ptr_nonnull(l);
	add_carve(l, "a", "2", "3");
	if (geteuid() == 0) {
		/* A directory reads as malformed: the probe gives up with a
		 * warning and nothing is written. */
		ck_assert_int_eq(cc_power_apply(root, l, &s, "a", c2, c3, NULL, &rep, &err), 0);
		ck_assert_int_eq(rep.written, 0);
		ck_assert_int_eq(rep.msgs.nwarnings, 1);
		ck_assert_msg(strstr(rep.msgs.warnings[0], "settings left as they are"), "%s", rep.msgs.warnings[0]);
		ck_file(dir, GOV2, "powersave");
		return;
	}
	ck_assert_int_eq(cc_power_apply(root, l, &s, "a", c2, c3, NULL, &rep, &err), 0);
	ck_assert_int_eq(rep.written, 3);
	ck_assert_int_eq(rep.msgs.nwarnings, 1);
	ck_assert_msg(strstr(rep.msgs.warnings[0], "power.epp: write \"performance\" to " CPU
						    "/cpufreq/policy2/energy_performance_preference"),
		      "%s", rep.msgs.warnings[0]);
	ck_assert_int_eq(cc_power_recs_load(l, &st, &err), 0);
	ck_assert_int_eq(st.n, 3);
	ck_assert_ptr_null(cc_noderecs_find(&st, CPU "/cpufreq/policy2/energy_performance_preference"));
	cc_noderecs_fini(&st);
}
END_TEST

/* Killed at each power fault step (after the journal; after the first
 * write): the next release puts every file back. */
static const char *const power_faults[] = { "after-power-journal", "mid-power-write" };

START_TEST(test_crash_then_release)
{
	const char *dir = f03_copy();
	char state[256];
	struct cc_err err = CC_ERR_INIT;
	struct cc_power_spec s = full_spec();
	_cleanup_free_ char *before = NULL, *after = NULL;
	pid_t pid;
	int status;

	if (!dir)
		return;
	before = tree_sum(dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	pid = cc_test_fork();
	if (pid == 0) {
		struct cc_root *root = cc_root_open(dir, &err);
		struct cc_ledger *l = cc_ledger_open(state, &err);
		struct cc_power_report rep;

		if (!root || !l)
			_exit(3);
		add_carve(l, "a", "2", "3");
		if (cc_ledger_commit(l, &err) < 0)
			_exit(4);
		cc_ledger_set_fault(l, power_faults[_i]);
		cc_power_apply(root, l, &s, "a", bm("2"), bm("3"), NULL, &rep, &err);
		_exit(5);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
	{
		_cleanup_root_ struct cc_root *root = cc_root_open(dir, &err);
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_open(state, &err);
		struct cc_power_report rep;
		struct cc_noderecs st;

		ck_assert_ptr_nonnull(l);
		ck_assert_int_eq(cc_power_recs_load(l, &st, &err), 0);
		ck_assert_int_eq(st.n, 9); /* everything journaled before the first write */
		ck_assert_str_eq(st.r[0]->path, GOV2);
		ck_assert_str_eq(st.r[0]->pending, "performance");
		cc_noderecs_fini(&st);
		if (!strcmp(power_faults[_i], "mid-power-write"))
			ck_file(dir, GOV2, "performance");
		/* gc: the container is gone. */
		ck_assert_int_eq(cc_ledger_remove(l, "a"), 1);
		ck_assert_msg(cc_power_release(root, l, NULL, NULL, &rep, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(rep.msgs.nwarnings, 0);
		ck_assert_ptr_null(cc_ledger_section_get(l, CC_POWER_SECTION));
		ck_assert_int_eq(cc_ledger_commit(l, &err), 0);
	}
	after = tree_sum(dir);
	ck_assert_str_eq(before, after);
}
END_TEST

/* ---- the audit ---- */

/* Drift (someone set the governor back while the carve runs) and a
 * record no carve owns that was not restored: both found, both fixed by
 * `audit --fix`'s repair, and the next audit is clean. */
START_TEST(test_audit_power)
{
	const char *dir = f03_copy();
	char state[256], path[512];
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	struct cc_power_spec s = full_spec(), sb = { .cstates_shallow = true, .cstate_latency_us = 10 };
	struct cc_power_report rep;
	struct cc_audit_snap snap;
	struct cc_audit_report r = { 0 };
	struct cc_audit_in in;
	struct cc_audit_fix_ctx fx;
	struct cc_audit_fix_result res;
	int drift = 0, orphan = 0;
	FILE *out;

	if (!dir)
		return;
	/* cc_audit_fix opens the cgroup manager: a cgroup2 mount in the tree. */
	snprintf(path, sizeof(path), "mkdir -p '%s/sys/fs/cgroup' && echo 'cpuset cpu' > '%s/sys/fs/cgroup/cgroup.controllers'",
		 dir, dir);
	ck_assert_int_eq(system(path), 0);
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	snprintf(state, sizeof(state), "%s/state", dir);
	l = cc_ledger_open(state, &err);
	ck_assert_ptr_nonnull(l);
	add_carve(l, "a", "2", "3");
	apply(root, l, &s, "a", "2", "3", &rep);
	add_carve(l, "b", "4", "5");
	apply(root, l, &sb, "b", "4", "5", &rep);
	/* C8 and C10: this capture lacks CPU 4's state2/disable. */
	ck_assert_int_eq(rep.written, 2);
	/* b's record leaves the ledger without its release (a poststop that
	 * failed half-way), and the governor of a is changed by hand. */
	ck_assert_int_eq(cc_ledger_remove(l, "b"), 1);
	put(dir, GOV2, "powersave");

	memset(&snap, 0, sizeof(snap));
	ck_assert_int_eq(cc_power_recs_load(l, &snap.power, &err), 0);
	ck_assert_int_eq(cc_power_read_now(root, &snap.power, &snap.power_now, &err), 0);
	in = (struct cc_audit_in){ .ledger = l, .snap = &snap };
	ck_assert_msg(cc_audit_check_power(&in, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < r.n; i++) {
		if (r.f[i].code == CC_AUDIT_POWER_DRIFT) {
			drift++;
			ck_assert_str_eq(r.f[i].carve, "a");
			ck_assert_str_eq(r.f[i].object, "power governor " GOV2);
			ck_assert_str_eq(r.f[i].expected, "performance");
			ck_assert_str_eq(r.f[i].actual, "powersave");
		} else if (r.f[i].code == CC_AUDIT_POWER_NOT_RESTORED) {
			orphan++;
			ck_assert_str_eq(r.f[i].expected, "0");
			ck_assert_str_eq(r.f[i].actual, "1");
		}
		ck_assert_int_eq(r.f[i].repair, CC_REPAIR_POWER);
	}
	ck_assert_int_eq(drift, 1);
	ck_assert_int_eq(orphan, 2);
	cc_audit_snap_fini(&snap);

	out = tmpfile();
	ck_assert_ptr_nonnull(out);
	fx = (struct cc_audit_fix_ctx){ .root = root, .ledger = l, .out = out };
	ck_assert_msg(cc_audit_fix(&fx, &r, &res, &err) == 0, "%s", err.msg);
	fclose(out);
	ck_assert_int_eq(res.failed, 0);
	ck_file(dir, GOV2, "performance");
	ck_file(dir, CPU "/cpu4/cpuidle/state3/disable", "0");
	ck_file(dir, CPU "/cpu4/cpuidle/state4/disable", "0");
	ck_file(dir, CPU "/cpu2/cpuidle/state2/disable", "1");
	cc_audit_report_fini(&r);

	memset(&snap, 0, sizeof(snap));
	ck_assert_int_eq(cc_power_recs_load(l, &snap.power, &err), 0);
	ck_assert_int_eq(snap.power.n, 9); /* a's only */
	ck_assert_int_eq(cc_power_read_now(root, &snap.power, &snap.power_now, &err), 0);
	ck_assert_int_eq(cc_audit_check_power(&in, &r, &err), 0);
	ck_assert_int_eq(r.n, 0);
	cc_audit_snap_fini(&snap);
	cc_audit_report_fini(&r);
}
END_TEST

/* ---- `corecarve plan` shows what the hook would write ---- */

START_TEST(test_cli_plan_power)
{
	const char *bin = cc_test_bin("plan with power");
	const char *tree = f03();
	char *pol, *out = NULL;
	int rc;

	if (!bin || !tree)
		return;
	/* P-core 0 reserved, so the carve is P-core 1 (CPUs 2-3). */
	pol = cc_test_write_tmp("reserved: \"0-1\"\n"
				"classes:\n"
				"  latency:\n"
				"    coreType: performance\n"
				"    power:\n"
				"      governor: performance\n"
				"      cstates: shallow\n"
				"      uncore: fixed\n");
	rc = cc_test_sh(&out, "'%s' plan --root '%s' --policy '%s' --class latency --cpus 1 --json", bin, tree, pol);
	ck_assert_msg(rc == 0, "%s", out);
	ck_assert_msg(strstr(out, "\"path\": \"" GOV2 "\",\n      \"setting\": \"governor\",\n      \"from\": "
				  "\"powersave\",\n      \"to\": \"performance\""),
		      "%s", out);
	ck_assert_msg(strstr(out, "\"path\": \"" CPU "/cpu2/cpuidle/state4/disable\""), "%s", out);
	ck_assert_msg(strstr(out, "\"path\": \"" UMIN "\""), "%s", out);
	free(out);
	out = NULL;
	/* The same tree through the text output, then a policy the reader
	 * refuses: exit 2, one line naming the field, nothing on stdout. */
	rc = cc_test_sh(&out, "'%s' plan --root '%s' --policy '%s' --class latency --cpus 1", bin, tree, pol);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(out, "\npower    " GOV2 ": powersave -> performance\n"), "%s", out);
	ck_assert_msg(strstr(out, "\nnote     power: uncore package_00_die_00 fixed at 4000000 kHz"), "%s", out);
	free(out);
	free(pol);
	pol = cc_test_write_tmp("classes:\n"
				"  latency:\n"
				"    coreType: performance\n"
				"    power:\n"
				"      cstateMaxLatencyUs: 5\n");
	rc = cc_test_sh(&out, "'%s' plan --root '%s' --policy '%s' --class latency --cpus 1 2>&1 >/dev/null", bin, tree,
			pol);
	ck_assert_int_eq(rc, 2);
	ck_assert_msg(strstr(out, "corecarve: ") == out &&
			      strstr(out, "classes.latency.power.cstateMaxLatencyUs: requires cstates: shallow\n"),
		      "%s", out);
	ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1); /* one line */
	free(out);
	free(pol);
}
END_TEST

/* `status` lists each owner once, by whole id: "a" is not taken for part
 * of "ab", nor the value 1000000 for part of 10000000. */
START_TEST(test_cli_status_whole_names)
{
	const char *bin = cc_test_bin("status owner names");
	char state[] = "/tmp/cc-power-status-XXXXXX";
	struct cc_err err = CC_ERR_INIT;
	struct cc_noderecs st;
	struct cc_noderec *r;
	_cleanup_free_ char *out = NULL;
	struct cc_ledger *l;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(state));
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	add_carve(l, "ab", "2", "3");
	add_carve(l, "a", "4", "5");
	cc_noderecs_init(&st);
	r = cc_noderecs_add(&st, CPU "/cpufreq/policy2/scaling_min_freq", "min-freq", "400000");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cc_noderec_put(&r->set, "10000000"), 0);
	ck_assert_int_eq(cc_power_rec_add_owner(r, "ab"), 0);
	r = cc_noderecs_add(&st, CPU "/cpufreq/policy4/scaling_min_freq", "min-freq", "400000");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cc_noderec_put(&r->set, "1000000"), 0);
	ck_assert_int_eq(cc_power_rec_add_owner(r, "a"), 0);
	ck_assert_int_eq(cc_power_recs_store(l, &st, &err), 0);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_ledger_close(l);
	cc_noderecs_fini(&st);
	ck_assert_int_eq(cc_test_sh(&out, "'%s' status --state '%s' --synthetic 'pack:2 core:8 pu:2'", bin, state), 0);
	ck_assert_msg(strstr(out, "\nmin-freq 10000000,1000000     2 ab,a\n"), "%s", out);
}
END_TEST

/* ---- this host's real cpuidle files ---- */

/* The cpuidle path on a sysfs tree under --root, the same on every
 * machine (it ran on the host's own files, and skipped where the host had
 * no writable state deeper than 0 us): `cstates: shallow` with a bound of
 * 0 us disables every enabled state deeper than that on the carve's CPU
 * (not POLL at 0 us, not one the operator disabled, not another CPU's),
 * and the release puts each one back. */
START_TEST(test_tree_cpuidle)
{
	static const char *const lat[] = { "0", "2", "10", "100" }, *const orig[] = { "0", "0", "1", "0" };
	static const char *const during[] = { "0", "1", "1", "1" };
	char dir[] = "/tmp/cc-power-tree-XXXXXX", state[64], sub[128];
	struct cc_err err = CC_ERR_INIT;
	struct cc_power_spec s = { .cstates_shallow = true, .cstate_latency_us = 0 };
	struct cc_power_report rep_a = { 0 }, rep_r = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s%s/cpuidle", dir, CPU);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s'", sub), 0);
	cc_test_write_file(sub, "current_driver", "intel_idle\n");
	for (int cpu = 0; cpu < 2; cpu++)
		for (int k = 0; k < 4; k++) {
			snprintf(sub, sizeof(sub), "%s%s/cpu%d/cpuidle/state%d", dir, CPU, cpu, k);
			ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s'", sub), 0);
			cc_test_write_file(sub, "latency", lat[k]);
			cc_test_write_file(sub, "disable", orig[k]);
		}
	snprintf(state, sizeof(state), "%s/state", dir);
	root = cc_root_open(dir, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	add_carve(l, "a", "1", "");
	apply(root, l, &s, "a", "1", "", &rep_a);
	ck_assert_int_eq(rep_a.written, 2);
	for (int k = 0; k < 4; k++) {
		snprintf(sub, sizeof(sub), CPU "/cpu1/cpuidle/state%d/disable", k);
		ck_file(dir, sub, during[k]);
		snprintf(sub, sizeof(sub), CPU "/cpu0/cpuidle/state%d/disable", k);
		ck_file(dir, sub, orig[k]);
	}
	cc_ledger_remove(l, "a");
	ck_assert_msg(cc_power_release(root, l, NULL, NULL, &rep_r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rep_r.restored, 2);
	for (int k = 0; k < 4; k++) {
		snprintf(sub, sizeof(sub), CPU "/cpu1/cpuidle/state%d/disable", k);
		ck_file(dir, sub, orig[k]);
	}
	ck_assert_ptr_null(cc_ledger_section(l, "power", false));
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

static Suite *power_suite(void)
{
	Suite *s = suite_create("power");
	TCase *tc = tcase_create("power");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_policy_power_full);
	tcase_add_test(tc, test_policy_power_defaults);
	tcase_add_loop_test(tc, test_policy_power_bad, 0, (int)(sizeof(bad_power) / sizeof(bad_power[0])));
	tcase_add_test(tc, test_state_roundtrip);
	tcase_add_loop_test(tc, test_state_bad, 0, (int)(sizeof(bad_state) / sizeof(bad_state[0])));
	tcase_add_test(tc, test_plan_new_shared_conflict);
	tcase_add_test(tc, test_release_plan);
	tcase_add_test(tc, test_probe_f03);
	tcase_add_test(tc, test_probe_f03_warnings);
	tcase_add_test(tc, test_probe_absent);
	tcase_add_test(tc, test_apply_release_f03);
	tcase_add_test(tc, test_apply_refused_write);
	tcase_add_loop_test(tc, test_crash_then_release, 0, 2);
	tcase_add_test(tc, test_audit_power);
	tcase_add_test(tc, test_cli_plan_power);
	tcase_add_test(tc, test_cli_status_whole_names);
	tcase_add_test(tc, test_tree_cpuidle);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(power_suite)
