/* corecarve: IRQ steering — keep device interrupts off the CPUs of carves
 * whose class says `irq: steer-away`, and give them back afterwards.
 *
 * Three layers, so the decisions stay pure:
 *   read    /proc/irq/N/{smp_affinity_list,effective_affinity_list,node},
 *           the handler names (the subdirectories of /proc/irq/N) and
 *           /proc/irq/default_smp_affinity, through the root (irq_proc.c);
 *   decide  cc_irq_plan(): from that table, the records kept in the ledger
 *           section "irq" and the CPUs to avoid (the union of every
 *           steer-away carve), which IRQ gets which affinity (irq.c);
 *   apply   write the plan, classify refusals, roll back (irq_proc.c).
 * cc_irq_reconcile() (irq_steer.c) runs the three under the ledger lock;
 * the hook calls it after the cgroup apply and before the ledger commit,
 * and again on release.
 *
 * Records: each IRQ's original affinity is recorded once, at the first
 * write, with the affinity corecarve set last.  While steer-away carves
 * remain, a recorded IRQ gets original minus their CPUs; when the last one
 * goes it gets its original back and the record is dropped.  An IRQ whose
 * affinity no longer is what corecarve set was moved by someone else
 * (irqbalance, an operator): it is left alone and its record dropped.
 * Kernel-managed IRQs (per-queue MSI-X vectors of NVMe, virtio-blk,
 * multi-queue NICs) refuse the write; they are recorded as unmovable and
 * reported, never fatal. */
#ifndef CC_IRQ_H
#define CC_IRQ_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "irqbalance.h"
#include "ledger.h"
#include "root.h"

#define CC_IRQ_SECTION "irq"       /* the ledger section this module owns */
#define CC_IRQ_DEFAULT (-1)        /* "IRQ number" of /proc/irq/default_smp_affinity */
#define CC_IRQ_NAME_MAX 128
#define CC_IRQ_NUMBER_MAX (1 << 20) /* larger numbers in /proc/irq are refused as malformed */

/* ---- the world: /proc/irq ------------------------------------------------ */

struct cc_irq_info {
	int irq;
	char name[CC_IRQ_NAME_MAX]; /* handler names, comma separated; "" when none */
	hwloc_bitmap_t affinity;    /* smp_affinity_list: what was asked for */
	hwloc_bitmap_t effective;   /* effective_affinity_list: where it fires */
	bool has_effective;         /* the kernel has effective_affinity_list */
	int node;                   /* /proc/irq/N/node; -1 when unknown */
};

struct cc_irq_table {
	int n;
	struct cc_irq_info *irqs;             /* sorted by number */
	hwloc_bitmap_t default_affinity; /* /proc/irq/default_smp_affinity */
	hwloc_bitmap_t online;           /* /sys/devices/system/cpu/online */
};

/* Read every /proc/irq/N under `root`.  All of it is read and checked
 * before anything is written, so a malformed entry stops a reconcile with
 * nothing changed; errors name the file: "/proc/irq/24/smp_affinity_list:
 * invalid cpu list ...".  An IRQ freed while reading is skipped. */
int cc_irq_table_read(const struct cc_root *root, struct cc_irq_table *t, struct cc_err *err);
void cc_irq_table_fini(struct cc_irq_table *t);
const struct cc_irq_info *cc_irq_find(const struct cc_irq_table *t, int irq);

/* Interrupt counts per IRQ and CPU from /proc/interrupts (status). */
struct cc_irq_counts {
	int ncols;
	int *cpus;                /* CPU number of each column (online CPUs only) */
	int nrows;
	int *irqs;                /* IRQ number of each row; rows of IPIs (NMI:, LOC:) are left out */
	unsigned long long *count; /* nrows x ncols */
};

/* Parse the text of /proc/interrupts; errors name the line. */
int cc_irq_counts_parse(const char *text, struct cc_irq_counts *c, struct cc_err *err);
int cc_irq_counts_read(const struct cc_root *root, struct cc_irq_counts *c, struct cc_err *err);
void cc_irq_counts_fini(struct cc_irq_counts *c);
/* Interrupts of `irq` on `cpu` (0 when either is absent). */
unsigned long long cc_irq_counts_get(const struct cc_irq_counts *c, int irq, int cpu);

/* ---- the records: ledger section "irq" --------------------------------- */

struct cc_irq_rec {
	int irq;                    /* CC_IRQ_DEFAULT for default_smp_affinity */
	char name[CC_IRQ_NAME_MAX]; /* names when recorded: a reused number is another device */
	bool unmovable;             /* the kernel refused the write */
	char refused[16];           /* unmovable: errno name of the refusal (EIO, EPERM, EROFS) */
	hwloc_bitmap_t orig;        /* steered: affinity before the first write; unmovable: its affinity */
	hwloc_bitmap_t set;         /* steered: the affinity corecarve wrote last, as read back */
	hwloc_bitmap_t pending;     /* steered, journal only: a write in flight; the IRQ holds
				     * `set` or this one (NULL: none) */
};

/* Where an IRQ goes when (its affinity minus the carves) is empty: the
 * reserved (housekeeping) CPUs of the device's NUMA node, else all of
 * them.  Recorded at each steer so a release needs no policy. */
struct cc_irq_node {
	int node;            /* NUMA node number */
	hwloc_bitmap_t cpus; /* its CPUs */
};

struct cc_irq_fallback {
	hwloc_bitmap_t reserved; /* the policy's reserved CPUs */
	int nnodes;
	struct cc_irq_node *nodes;
};

struct cc_irq_state {
	int n;
	struct cc_irq_rec *recs; /* sorted by irq; the default record first */
	struct cc_irq_fallback fb;
	struct cc_irqbalance_rec irqbalance;
};

void cc_irq_state_init(struct cc_irq_state *st);
void cc_irq_state_fini(struct cc_irq_state *st);
/* Parse the section (NULL: empty state).  Strict: errors name the field,
 * "sections.irq.irqs.24.orig: invalid cpu list ...". */
int cc_irq_state_parse(const json_t *section, struct cc_irq_state *st, struct cc_err *err);
/* The section for `st`; an empty object when nothing is recorded. */
json_t *cc_irq_state_json(const struct cc_irq_state *st, struct cc_err *err);
/* Replace the ledger's section with `st` (removing it when empty).  The
 * commit that follows detects the change. */
int cc_irq_state_store(struct cc_ledger *l, const struct cc_irq_state *st, struct cc_err *err);
bool cc_irq_state_empty(const struct cc_irq_state *st);
int cc_irq_state_copy(struct cc_irq_state *dst, const struct cc_irq_state *src);
const struct cc_irq_rec *cc_irq_state_find(const struct cc_irq_state *st, int irq);
/* Insert or replace a copy of `r` (bitmaps duplicated; `set` and
 * `pending` may be NULL); remove one.  Keep the order. */
int cc_irq_state_put(struct cc_irq_state *st, const struct cc_irq_rec *r);
void cc_irq_state_del(struct cc_irq_state *st, int irq);
int cc_irq_fallback_copy(struct cc_irq_fallback *dst, const struct cc_irq_fallback *src);
void cc_irq_fallback_fini(struct cc_irq_fallback *fb);

/* ---- decisions (pure) --------------------------------------------------- */

/* A record of handler names `recorded` still describes an IRQ whose
 * handlers are `now`: equal, or one of them has none. */
bool cc_irq_same_device(const char *recorded, const char *now);

/* CPUs IRQs must avoid: cpus and parked of every carve with steer_irqs
 * except the one named `except` (NULL: none).  Parked siblings count: they
 * share the carved core's L1/L2.  NULL only when out of memory. */
hwloc_bitmap_t cc_irq_avoid(const struct cc_ledger *l, const char *except);

/* The affinity for an IRQ at `cur` that must avoid `avoid`: cur minus
 * avoid when that keeps an online CPU, else the fallback (reserved CPUs of
 * `node`, all reserved CPUs, the node's other CPUs, every online CPU; each
 * minus `avoid`, first with an online CPU).  Sets *fell_back.  -1 with err
 * (ENOSPC) when no online CPU is left outside `avoid`. */
int cc_irq_target(hwloc_const_bitmap_t cur, hwloc_const_bitmap_t avoid, int node,
		  const struct cc_irq_fallback *fb, hwloc_const_bitmap_t online, hwloc_bitmap_t out,
		  bool *fell_back, struct cc_err *err);

enum cc_irq_why {
	CC_IRQ_WHY_STEER,   /* its affinity met the carves: moved off them */
	CC_IRQ_WHY_ADJUST,  /* recorded: original minus the carves changed */
	CC_IRQ_WHY_RESTORE, /* no steer-away carve left: the original back */
};

/* One write of a plan. */
struct cc_irq_step {
	int irq;                    /* CC_IRQ_DEFAULT: /proc/irq/default_smp_affinity */
	char name[CC_IRQ_NAME_MAX];
	enum cc_irq_why why;
	bool fell_back;             /* `to` is the fallback */
	hwloc_bitmap_t from;        /* affinity now */
	hwloc_bitmap_t to;          /* affinity to write */
};

struct cc_irq_plan {
	int n;
	struct cc_irq_step *steps;
	/* The records once every step is written; cc_irq_apply() fixes them
	 * up for the steps the kernel refused or that failed. */
	struct cc_irq_state next;
	/* The records to commit before the first write (write-ahead): every
	 * IRQ a step touches is recorded with `set` = where it is now and
	 * `pending` = where it goes, so whatever a crash leaves, the next
	 * reconcile knows both are corecarve's doing and the original. */
	struct cc_irq_state journal;
	int dropped_foreign;        /* records dropped: someone else moved the IRQ */
};

/* Decide.  `avoid` empty restores everything recorded.  `fb` NULL keeps
 * the fallback recorded in `st`. */
int cc_irq_plan(const struct cc_irq_table *t, const struct cc_irq_state *st, hwloc_const_bitmap_t avoid,
		const struct cc_irq_fallback *fb, struct cc_irq_plan *plan, struct cc_err *err);
void cc_irq_plan_fini(struct cc_irq_plan *plan);

/* ---- apply -------------------------------------------------------------- */

/* Refusals that mean "the kernel manages this IRQ" (or /proc/irq is read
 * only, as in a container): EIO (Linux 6.1), EPERM (6.12), EROFS. */
bool cc_irq_refusal(int code);

enum cc_irq_outcome {
	CC_IRQ_PENDING,
	CC_IRQ_WRITTEN,
	CC_IRQ_UNMOVABLE, /* refused with cc_irq_refusal() */
	CC_IRQ_VANISHED,  /* freed meanwhile */
	CC_IRQ_FAILED,    /* any other error (best effort only) */
	CC_IRQ_UNDONE,    /* written, then put back by a rollback */
};

struct cc_irq_apply_opts {
	bool best_effort; /* release: try every step, report the first failure */
	FILE *trace;      /* every write is printed there (hook --verbose) */
	const char *fault; /* "mid-irq-write": SIGKILL after the first write (fault.h) */
};

/* Write the plan's steps in order.  Strict mode: the first failure that is
 * not a refusal puts back every IRQ written so far (in reverse) and
 * returns -1 naming the IRQ; plan->next is then meaningless.  Best
 * effort: every step is tried, failed ones keep their old record, the
 * first failure is returned.  `outcome` (plan->n entries) says what
 * happened to each step; plan->next is updated to match. */
int cc_irq_apply(const struct cc_root *root, struct cc_irq_plan *plan, const struct cc_irq_state *prev,
		 const struct cc_irq_apply_opts *opts, enum cc_irq_outcome *outcome, struct cc_err *err);

/* Put back every step cc_irq_apply() wrote (a later step of the caller
 * failed); the first failure to put one back is appended to err. */
void cc_irq_undo(const struct cc_root *root, struct cc_irq_plan *plan, enum cc_irq_outcome *outcome, FILE *trace,
		 struct cc_err *err);

/* ---- the whole reconcile ------------------------------------------------ */

struct cc_irq_report {
	int moved;       /* steps written with why STEER or ADJUST */
	int restored;    /* steps written with why RESTORE */
	int fell_back;   /* written steps whose target was the fallback */
	int unmovable;   /* IRQs recorded unmovable after this run */
	int vanished;
	int foreign;     /* records dropped: moved by someone else */
	char unmovable_list[256]; /* "28 29 30 31" (truncated with "...") */
	struct cc_irqbalance_result irqbalance;
};

struct cc_irq_opts {
	const struct cc_root *root;
	const struct cc_irq_fallback *fb; /* NULL: keep the recorded one */
	const char *except;               /* carve being released, NULL for none */
	bool best_effort;                 /* release: see cc_irq_apply_opts */
	bool notify;                      /* tell a running irqbalance (not from the sandboxed hook) */
	FILE *trace;
};

/* Bring the kernel in line with the ledger: steer every IRQ off the union
 * of steer-away carves (less `except`), restore what no carve needs,
 * maintain irqbalance's banned CPUs, store the records in the ledger's
 * "irq" section.  Before the first write the plan's journal is committed
 * (the ledger must be open for writing); the final records are left for
 * the caller's commit.  Strict mode: on failure every IRQ written is put
 * back and the section holds what it held before.  Fault steps (fault.h):
 * "after-irq-journal", "mid-irq-write" (after the first IRQ write). */
int cc_irq_reconcile(struct cc_ledger *l, const struct cc_irq_opts *opts, struct cc_irq_report *rep,
		     struct cc_err *err);

/* One reconcile cut at its journal, for a caller that commits one journal
 * for several effects (effect_irq.c); cc_irq_reconcile() is the three
 * steps with the commit between them.  cc_irq_pass_plan reads /proc/irq,
 * the records and irqbalance's file, decides, and puts the journal (the
 * records with their pending values) in the ledger's "irq" section,
 * writing nothing; `journaled` says whether there is one to commit before
 * cc_irq_pass_apply writes.  cc_irq_pass_fini, whatever happened. */
struct cc_irq_pass {
	struct cc_irq_state st;      /* the records as they were */
	struct cc_irq_table t;
	struct cc_irq_plan plan;
	struct cc_irqbalance_pending ib;
	struct cc_irqbalance_result read_only; /* irqbalance's file on a read-only /etc */
	enum cc_irq_outcome *outcome;
	struct cc_err later;         /* best effort: the first failure */
	bool parsed, ib_ok, journaled;
};

int cc_irq_pass_plan(struct cc_ledger *l, const struct cc_irq_opts *opts, struct cc_irq_pass *p,
		     struct cc_err *err);
int cc_irq_pass_apply(struct cc_ledger *l, const struct cc_irq_opts *opts, struct cc_irq_pass *p,
		      struct cc_irq_report *rep, struct cc_err *err);
void cc_irq_pass_fini(struct cc_irq_pass *p);

/* The fallback for a topology and reserved set (cc_policy_reserved()). */
struct cc_topo;
int cc_irq_fallback_from_topo(const struct cc_topo *topo, hwloc_const_bitmap_t reserved,
			      struct cc_irq_fallback *fb, struct cc_err *err);

#endif
