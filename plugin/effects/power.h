/* corecarve: per-class CPU power settings — the frequency governor, the
 * energy-performance preference, frequency bounds, idle states and the
 * uncore frequency of the carved CPUs, applied on carve and restored when
 * the last carve that needed them goes.
 *
 * Same three layers as the IRQ module, so the decisions stay pure:
 *   read    cc_power_probe(): which sysfs files a class's settings map to
 *           for a carve's CPUs, each with its current value, and a warning
 *           for every setting the kernel does not expose (power_probe.c);
 *   decide  cc_power_plan() / cc_power_release_plan(): from those targets
 *           and the records of the ledger section "power", which files to
 *           write and which records change (power_plan.c);
 *   apply   write, read back, record (power_apply.c).
 *
 * Records: node records (noderec.h), one per sysfs file, with the value
 * before the first write (`orig`), the value corecarve set (`set`, as read
 * back), the write in flight (`pending`) and the carves that rely on it
 * (`owners`: the reference count, by id, so adding the same carve twice
 * after a crash counts once).  Files shared by several carves
 * (a package's uncore, a cpufreq policy spanning more than one core) are
 * written by the first and referenced by the others; a later carve whose
 * class wants another value is told so and gets what is there.  When the
 * last owner goes the original is written back — unless the file holds
 * neither what corecarve set nor the write in flight: someone else changed
 * it since, and theirs stays.  Every setting is optional and probed: a
 * missing file is a warning, never a refused container. */
#ifndef CC_POWER_H
#define CC_POWER_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "ledger.h"
#include "noderec.h"
#include "policy_power.h"
#include "root.h"

#define CC_POWER_SECTION "power"
#define CC_POWER_VALUE_MAX 64
#define CC_POWER_PATH_MAX 160
#define CC_POWER_MSG_MAX 8

/* ---- the world: what a spec maps to on this host ------------------------ */

/* Which setting a file holds; the order is the order of the writes on
 * carve (the reverse on release): the governor before the preference
 * (intel_pstate refuses a preference under `performance`). */
enum cc_power_kind {
	CC_POWER_GOVERNOR,
	CC_POWER_EPP,
	CC_POWER_MIN_FREQ,
	CC_POWER_MAX_FREQ,
	CC_POWER_CSTATE,
	CC_POWER_UNCORE_MIN,
	CC_POWER_UNCORE_MAX,
	CC_POWER_NKINDS,
};

const char *cc_power_kind_name(enum cc_power_kind k);
int cc_power_kind_parse(const char *s, enum cc_power_kind *out);

struct cc_power_target {
	char path[CC_POWER_PATH_MAX];    /* absolute sysfs path, under the root */
	enum cc_power_kind kind;
	char want[CC_POWER_VALUE_MAX];   /* value the class asks for */
	char cur[CC_POWER_VALUE_MAX];    /* value now */
};

/* Free-form lines for the decision: what could not be applied and why
 * (warnings) and what the operator should know (notes: shared files). */
struct cc_power_msgs {
	int nwarnings, nnotes;
	char warnings[CC_POWER_MSG_MAX][256];
	char notes[CC_POWER_MSG_MAX][256];
};

/* Append a line to the warnings or the notes; a line already there is
 * not repeated, and lines past CC_POWER_MSG_MAX are dropped. */
void cc_power_warn(struct cc_power_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cc_power_note(struct cc_power_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every line of `src` appended to `dst`, as above. */
void cc_power_msgs_add(struct cc_power_msgs *dst, const struct cc_power_msgs *src);

/* In write order: the order of enum cc_power_kind, except that a minimum
 * raised above the current maximum goes after the maximum (the uncore
 * driver refuses min > max). */
struct cc_power_targets {
	int n;
	struct cc_power_target *t;
	struct cc_power_msgs msgs;
};

/* Map `spec` to files for a carve: frequency settings on the cpufreq
 * policies of `cores` (the carve's CPUs and parked siblings: a core's
 * threads share its clock), idle states on `cpus` only (a parked sibling
 * should sleep deep, not poll next to the carved thread), the uncore of
 * the packages of `cores`.  Reads only.  A setting the host does not offer
 * (no cpufreq, a governor not in scaling_available_governors, no cpuidle
 * states, no intel_uncore_frequency) is a warning in t->msgs.  -1 only for
 * out of memory or a malformed file (named in err). */
int cc_power_probe(const struct cc_root *root, const struct cc_power_spec *spec, hwloc_const_bitmap_t cpus,
		   hwloc_const_bitmap_t cores, struct cc_power_targets *t, struct cc_err *err);
void cc_power_targets_fini(struct cc_power_targets *t);

/* ---- the records: ledger section "power" -------------------------------- */

/* Node records (noderec.h), one per sysfs file, their kind the setting's
 * name (cc_power_kinds).  On top of the node records' parser: the path is
 * under /sys and shorter than CC_POWER_PATH_MAX, `orig` is a string
 * (corecarve never creates a power file), the values are shorter than
 * CC_POWER_VALUE_MAX, and the owners' shares are empty (the value is the
 * class's, whoever asks).  A record corecarve made but did not write (the
 * file held the value wanted already) has no `set`. */
extern const char *const cc_power_kinds[]; /* NULL-terminated, in the order of enum cc_power_kind */

enum cc_power_kind cc_power_rec_kind(const struct cc_noderec *r);
/* The value corecarve holds the file at: the write in flight, else the
 * one written last, else the original (recorded, never written). */
const char *cc_power_rec_value(const struct cc_noderec *r);
/* `cur` (NULL: the file is gone) is what corecarve left there: `set` or
 * `pending`. */
bool cc_power_rec_ours(const struct cc_noderec *r, const char *cur);
bool cc_power_rec_owned_by(const struct cc_noderec *r, const char *id);
/* Add `id` as owner, with an empty share; once however often it is added. */
int cc_power_rec_add_owner(struct cc_noderec *r, const char *id);

/* Parse the ledger's section (NULL: empty).  Strict; errors name the
 * field: "sections.power.files.2.path: expected an absolute path under
 * /sys, got ...". */
int cc_power_recs_parse(const json_t *section, struct cc_noderecs *s, struct cc_err *err);
int cc_power_recs_load(const struct cc_ledger *l, struct cc_noderecs *s, struct cc_err *err);
/* Replace the ledger's section (removed when empty). */
int cc_power_recs_store(struct cc_ledger *l, const struct cc_noderecs *s, struct cc_err *err);
/* Append a copy of `r` that keeps its seq, with its owners when asked. */
int cc_power_recs_put(struct cc_noderecs *dst, const struct cc_noderec *r, bool owners);
/* `dst` (uninitialised) becomes a copy of `src`. */
int cc_power_recs_copy(struct cc_noderecs *dst, const struct cc_noderecs *src);

/* ---- decisions (pure) --------------------------------------------------- */

struct cc_power_step {
	char path[CC_POWER_PATH_MAX];
	enum cc_power_kind kind;
	char from[CC_POWER_VALUE_MAX];
	char to[CC_POWER_VALUE_MAX];
};

struct cc_power_plan {
	int n;
	struct cc_power_step *steps;  /* in write order */
	struct cc_noderecs next;      /* records once the steps are written (`pending` on each write) */
	struct cc_power_msgs msgs;
};

/* Carve `id` needs `t`: a file already recorded with the value wanted gains
 * `id` as owner; recorded with another value, it is left and a warning
 * says who holds it; not recorded, it is recorded (orig = its value now)
 * and written when it differs.  Messages of t->msgs are carried over. */
int cc_power_plan(const struct cc_noderecs *st, const struct cc_power_targets *t, const char *id,
		  struct cc_power_plan *plan, struct cc_err *err);

/* Current value of every recorded file, in the order of st->r; NULL
 * entries for files that are gone. */
struct cc_power_now {
	int n;
	char **value;
};

/* The owners left are those in `live` (NULL-terminated carve ids); a
 * record with none is restored (orig written) when the file holds what
 * corecarve set or the value of the write in flight (cc_power_rec_ours),
 * dropped without a write when it already holds orig, and dropped with a
 * warning when someone else changed it.  Steps go in reverse order of the
 * first writes. */
int cc_power_release_plan(const struct cc_noderecs *st, const struct cc_power_now *now,
			  const char *const *live, struct cc_power_plan *plan, struct cc_err *err);
void cc_power_plan_fini(struct cc_power_plan *plan);

/* ---- apply -------------------------------------------------------------- */

struct cc_power_report {
	int written, restored, kept;  /* files written, put back, left to someone else's change */
	struct cc_power_msgs msgs;
};

/* cc_power_apply() cut at its journal, for a caller that commits one
 * journal for several effects (effect_power.c): plan puts the records with
 * their pending values in the section (`journaled`: something to commit),
 * writing nothing; apply writes, reads back and stores the final records;
 * fini whatever happened. */
struct cc_power_pass {
	struct cc_noderecs st;
	struct cc_power_targets t;
	struct cc_power_plan plan;
	const char *id;
	bool journaled;
};

int cc_power_pass_plan(const struct cc_root *root, struct cc_ledger *l, const struct cc_power_spec *spec,
		       const char *id, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked,
		       struct cc_power_pass *p, struct cc_power_report *rep, struct cc_err *err);
int cc_power_pass_apply(const struct cc_root *root, struct cc_ledger *l, struct cc_power_pass *p, FILE *trace,
			struct cc_power_report *rep, struct cc_err *err);
void cc_power_pass_fini(struct cc_power_pass *p);

/* Apply a class's settings for the carve `id` (already in the ledger,
 * which is open for writing): probe, plan, commit the journal (records
 * with `pending`) before the first write, write, read back, store the
 * final records in the section (the caller commits).  A write the kernel
 * refuses is a warning, not a failure, and its record goes (the file still
 * holds its original).  -1 only when the journal cannot be committed or
 * memory runs out; then nothing was written.  Fault steps:
 * "after-power-journal", "mid-power-write". */
int cc_power_apply(const struct cc_root *root, struct cc_ledger *l, const struct cc_power_spec *spec,
		   const char *id, hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked, FILE *trace,
		   struct cc_power_report *rep, struct cc_err *err);

/* Give back what no carve of the ledger other than `except` (NULL: none)
 * still owns.  Best effort: every restore is tried; a failed one keeps its
 * record without owners (the audit reports it, `audit --fix` retries) and
 * the first failure is returned.  Updates the section; the caller
 * commits. */
int cc_power_release(const struct cc_root *root, struct cc_ledger *l, const char *except, FILE *trace,
		     struct cc_power_report *rep, struct cc_err *err);

/* Current values of every record (cc_power_now), for the release and the
 * audit. */
int cc_power_read_now(const struct cc_root *root, const struct cc_noderecs *st, struct cc_power_now *now,
		      struct cc_err *err);
void cc_power_now_fini(struct cc_power_now *now);

#endif
