/* corecarve: the cgroup-v2 manager.
 *
 * Every file is reached beneath the mount's directory fd, under the root
 * (so the audit reads captured trees); writes happen only on the real
 * host.  Three ways to make
 * a carve exclusive, chosen by probing the files the kernel offers:
 *   remote-partition  cpuset.cpus.exclusive exists (Linux >= 6.7)
 *   local-partition   the container's parent is a valid partition root
 *   cpuset-only       narrow cpuset.cpus and take the CPUs from peers
 */
#ifndef CC_CGROUP_H
#define CC_CGROUP_H

#include <dirent.h>
#include <hwloc.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>

#include "error.h"
#include "ledger.h"
#include "noderec.h"
#include "root.h"

#define CC_CGROUP_MOUNT "/sys/fs/cgroup"
#define CC_PARKED_NAME "corecarve.parked"

enum cc_cg_mode {
	CC_MODE_REMOTE,
	CC_MODE_LOCAL,
	CC_MODE_CPUSET_ONLY,
};

struct cc_cg;

/* How cgroup files are changed.  Reads always go beneath the mount's
 * directory fd (io.c); the writes go through these, so the whole apply
 * and undo can run against a test double over a temp tree
 * (tests/unit/fakecg.c) that models the cpuset rules the real kernels
 * were seen to follow.  The host's are cc_cg_host_ops (host.c): every
 * write, mkdir and rmdir beneath the same directory fd. */
struct cc_cg_ops {
	int (*write)(struct cc_cg *cg, const char *cgroup, const char *file, const char *value,
		     struct cc_err *err);
	int (*mkdir)(struct cc_cg *cg, const char *cgroup, struct cc_err *err);
	int (*rmdir)(struct cc_cg *cg, const char *cgroup, struct cc_err *err);
};

extern const struct cc_cg_ops cc_cg_host_ops;

struct cc_cg {
	const struct cc_root *root;
	char mount[PATH_MAX]; /* the mount's path under the root, for messages */
	/* The mount, opened once (O_PATH): every file of the cgroup manager
	 * is resolved beneath it (io.c).  -1: not open (CC_CG_INIT). */
	int mountfd;
	/* NULL: nothing is written (a captured tree under --root). */
	const struct cc_cg_ops *ops;
	void *ops_arg;             /* the test double's state */
	/* The host runs systemd: a slice's cpuset.cpus written is given to
	 * systemd as its AllowedCPUs= too (host.c says why). */
	bool systemd;
	FILE *trace; /* when set, every write is printed there (hook --verbose) */
	const char *fault; /* fault-injection step armed by the entry point (fault.h) */
};

/* One write that can be undone: what it was before (the VM threads'
 * cgroups, init-parent: cgroups owned by the caller alone). */
struct cc_cg_undo_entry {
	char cgroup[PATH_MAX];
	char file[64];
	char *old;
};

struct cc_cg_undo {
	int n, cap;
	struct cc_cg_undo_entry *e;
};

#define CC_CG_INIT { .mountfd = -1 }

/* Open the cgroup2 mount under `root`: writes through cc_cg_host_ops when
 * the root is the host, none otherwise (cc_cg_use sets a test double).
 * cc_cg_close closes it (a handle that was never opened too). */
int cc_cg_open(struct cc_cg *cg, const struct cc_root *root, struct cc_err *err);
void cc_cg_close(struct cc_cg *cg);
#define _cleanup_cg_ __attribute__((cleanup(cc_cg_close)))
void cc_cg_use(struct cc_cg *cg, const struct cc_cg_ops *ops, void *arg);

/* Read a control file of a cgroup (relative to the mount). Caller frees. */
char *cc_cg_read(const struct cc_cg *cg, const char *cgroup, const char *file,
		 struct cc_err *err);
int cc_cg_read_cpus(const struct cc_cg *cg, const char *cgroup, const char *file,
		    hwloc_bitmap_t out, struct cc_err *err);
bool cc_cg_exists(const struct cc_cg *cg, const char *cgroup, const char *file);
/* The cgroup's directory, to list its children. */
DIR *cc_cg_opendir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* 1: the cgroup is a directory; 0: it is gone (cc_cg_gone); -1: err. */
int cc_cg_is_dir(const struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* The one place an error code says "that cgroup is gone": ENOENT (removed),
 * ENOTDIR (a path component is no directory any more), ENODEV (Linux's
 * answer for a cgroup whose rmdir is under way: a peer container that
 * exits mid-carve).  Reads, writes and undo all treat it alike. */
bool cc_cg_gone(int code);

/* Write a control file (beneath the mount on the host).  With `undo`, the old value
 * is recorded first so cc_cg_rollback() can put it back. */
int cc_cg_write(struct cc_cg *cg, const char *cgroup, const char *file,
		const char *value, struct cc_cg_undo *undo, struct cc_err *err);

/* "/a/b/c" -> "/a/b"; "/a" -> "/". */
void cc_cg_parent(const char *cgroup, char *out, size_t len);
/* `cgroup` lies strictly below `ancestor` ("/a/b" below "/a"). */
bool cc_cg_below(const char *cgroup, const char *ancestor);
/* cpu.max: "max 100000" (quota -1) or "50000 100000"; -1 when malformed. */
int cc_cg_parse_cpu_max(const char *s, long long *quota, long long *period);
/* The cgroup holding the parked siblings of a carve at `cgroup`: one
 * first-level cgroup for remote partitions, beside the container (under
 * the same parent partition) for local ones. */
int cc_cg_parked_cgroup(enum cc_cg_mode mode, const char *cgroup, char *out, size_t len,
			struct cc_err *err);
/* A cpuset.cpus.partition value of a valid partition root. */
bool cc_cg_partition_valid(const char *s);
/* Create a cgroup directory (host only); existing is fine. */
int cc_cg_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err);

/* The CPUs the kernel lets a carve at `cgroup` run on: what the cgroup a
 * carve there draws from has (the root's for a remote partition, the
 * parent's otherwise: a partition elsewhere, a parent narrowed by someone
 * else, take theirs away).  `exclusive` false: a shared-pool cgroup, its
 * parent's. */
int cc_cg_available(const struct cc_cg *cg, const char *cgroup, bool exclusive, hwloc_bitmap_t out,
		    struct cc_err *err);

/* The mode the kernel offers for this cgroup. */
enum cc_cg_mode cc_cg_probe_mode(const struct cc_cg *cg, const char *cgroup);
const char *cc_cg_mode_name(enum cc_cg_mode m);
int cc_cg_mode_parse(const char *s, enum cc_cg_mode *m);

/* Whether a recorded file holds what corecarve left there: what it wrote
 * last, a write that was in flight, or (never written) the original;
 * values compared as their kind reads them (CPU sets as sets, cpu.max as
 * quota and period).  The one rule the plan, the undo and the audit
 * apply (carve.c). */
bool cc_cg_rec_ours(const struct cc_noderec *r, const char *cur);
/* Whether a carve at `carve_cgroup` in mode `m` is an owner the held
 * record `r` of `rec_cgroup` must hold: a remote partition below an
 * ancestor's exclusive set, a partition parking its siblings in that
 * parked cgroup.  The rule the plan follows when it adds a share, and
 * the audit checks held against (carve.c). */
bool cc_cg_rec_held_by(const struct cc_noderec *r, const char *rec_cgroup, enum cc_cg_mode m,
		       const char *carve_cgroup);

/* ---- a carve (carve.c) ------------------------------------------------
 *
 * A carve writes its own cgroup (cpuset.cpus, cpuset.cpus.exclusive, the
 * partition, cpuset.mems, cpu.max) and, outside it, files other carves
 * may need too: ancestors' cpuset.cpus.exclusive (remote partitions), the
 * parked partition, peers' cpuset.cpus (cpuset-only mode), ancestors'
 * cpu.max, and the cpuset.cpus of every shared-pool container.  Each of
 * those is a node record (noderec.h) in the ledger section "cgroup",
 * keyed by "<cgroup>/<file>", of one of five kinds:
 *
 *   exclusive  orig ∪ the owners' CPUs
 *   parked     orig ∪ the owners' parked siblings, an isolated partition
 *              (orig null: corecarve made the cgroup, and removes it)
 *   peer       (orig, or the parent's CPUs when orig is "" = inherit)
 *              minus the owners' CPUs and parked siblings; the owners are
 *              every cpuset-only carve whose CPUs it held when it was met,
 *              but those inside it, and each carve made beside it or beside
 *              one of its ancestors since
 *   quota      a pod's cpu.max: "max <period>" while it has owners (every
 *              live quota-dropping carve below it), orig after the last
 *   shared     a shared-pool container's cpuset.cpus: orig (its pool as
 *              it would be without any carve) minus the owners' CPUs and
 *              parked siblings; the owners are every live carve whose CPUs
 *              are in the pool.  The record is the container's: it stays
 *              without owners (the file reads orig again) until its cgroup
 *              goes, so CPUs a released carve gives back reach it
 *
 * so the value of every file is a function of its original and the live
 * carves, whatever order they came and go in.  A cgroup that belongs to a
 * live carve is never a peer.  A file that no longer reads what corecarve
 * wrote was changed by someone else: when a carve arrives their value
 * becomes the record's original; when one goes the record is dropped and
 * their value kept.  Either is said once (msgs). */

#define CC_CG_SECTION "cgroup"
extern const char *const cc_cg_rec_kinds[]; /* exclusive, parked, peer, quota, shared */
/* Those whose owners are exactly the carves the rule above names: kept
 * as `held` (noderec.h), the union of their shares. */
extern const char *const cc_cg_rec_held_kinds[]; /* exclusive, parked */
/* The section's schema (noderec.h): those kinds, and each record's values
 * checked as it is read: the CPU lists of a cpuset kind (orig, set,
 * pending, held, the owners' shares) parse, a quota's values are cpu.max
 * values and its shares CPU counts; a record that does not is refused
 * there, once, naming the field. */
extern const struct cc_noderec_schema cc_cg_rec_schema;

/* What one carve asks of the cgroups. */
struct cc_cg_carve {
	const char *id;
	const char *cgroup;          /* relative to the mount, e.g. /kubepods/pod1/ctr1 */
	hwloc_const_bitmap_t cpus;
	hwloc_const_bitmap_t parked; /* may be empty */
	hwloc_const_bitmap_t mems;   /* empty: cpuset.mems left alone */
	bool exclusive;              /* false: shared pool, only cpuset.cpus narrowed */
	/* A shared-pool container: its pool with no carve taken out, the
	 * orig of its "shared" record (cpus is that minus the live carves).
	 * NULL: cpus is written as it is, nothing recorded. */
	hwloc_const_bitmap_t pool;
	bool isolated;               /* partition isolated rather than root */
	bool drop_quota;
	enum cc_cg_mode mode;        /* planned: the mode found; undone: the mode recorded */
};

/* A carve under the same parent, for a peer record made now. */
struct cc_cg_share {
	char id[256];
	char share[CC_NODEREC_VALUE_MAX]; /* its CPUs and parked siblings, a CPU list */
};

/* What the plan asks about the other live carves (the ledger knows). */
struct cc_cg_others {
	/* Whether `cgroup` is the cgroup of a live carve other than this one. */
	bool (*is_carve)(void *arg, const char *cgroup);
	/* The live cpuset-only carves other than this one whose CPUs or
	 * parked siblings meet `held` (what `peer` runs on now), but those in
	 * `peer` or below it: the owners of `peer`'s record made now (a peer
	 * gives up the CPUs of every carve outside it, never of those inside
	 * it, and it may have been made after them); *shares is the caller's
	 * to free.  -1 with err. */
	int (*beside)(void *arg, const char *peer, hwloc_const_bitmap_t held, struct cc_cg_share **shares, int *n,
		      struct cc_err *err);
	/* The live quota-dropping carves other than this one below
	 * `ancestor`, each with its CPU count as its share ("2"); *shares is
	 * the caller's to free (NULL callback: none).  -1 with err. */
	int (*quota_carves_below)(void *arg, const char *ancestor, struct cc_cg_share **shares, int *n,
				  struct cc_err *err);
	/* The live exclusive carves whose CPUs or parked siblings meet `set`,
	 * each with its CPUs and parked siblings as its share: the owners of
	 * a shared container's record made now (NULL callback: none). */
	int (*carves_in)(void *arg, hwloc_const_bitmap_t set, struct cc_cg_share **shares, int *n, struct cc_err *err);
	void *arg;
};

#define CC_CG_MSG_MAX 8
/* Lines for the entry point to print once: a value someone else wrote,
 * kept; a kernel that would not take the original back. */
struct cc_cg_msgs {
	int n;
	char line[CC_CG_MSG_MAX][320];
	bool note[CC_CG_MSG_MAX]; /* for --verbose only: how, not a change to know of */
};

struct cc_cg_step;
struct cc_cg_plan {
	enum cc_cg_mode mode;
	int n, done;            /* steps, and how many were written */
	struct cc_cg_step *steps;
	struct cc_cg_msgs msgs;
	/* The peer record the carve's own cpuset.cpus had (its cgroup ran
	 * beside an earlier cpuset-only carve), which the plan replaced: a
	 * refused start puts it back (cc_cg_undo_carve). */
	struct cc_noderecs replaced;
};

/* Read the world and decide, for a carve arriving: the writes to its own
 * cgroup and to the recorded files, in the order the kernel needs them
 * (ancestors' exclusive sets top-down before the partition, peers after
 * the carve's own cpuset).  `recs` becomes the journal: owners added,
 * records made for files met for the first time (orig = their value now),
 * `pending` = the value each write will leave; the caller commits it
 * before cc_cg_apply_plan.  Nothing is written but the controllers on the
 * path (cgroup.subtree_control: runtimes enable them too; never undone).
 * Refused without write ops (a captured tree) and for a cgroup that is not
 * a directory reached without a symbolic link.  c->mode is set. */
int cc_cg_plan_carve(struct cc_cg *cg, struct cc_cg_carve *c, const struct cc_cg_others *others,
		     struct cc_noderecs *recs, struct cc_cg_plan *plan, struct cc_err *err);

/* Write the plan in order, read every partition back (the kernel accepts
 * a write and then reports "root invalid (reason)"), and last the carve's
 * cpuset.cpus.effective (and cpuset.cpus.exclusive.effective where the
 * kernel has it): a carve that does not run on exactly its CPUs is
 * refused (seen on Linux 6.1 with a partition root elsewhere taking
 * them).  Records get the value read back as `set` and lose `pending`.
 * -1 at the first failure, with nothing undone: the caller undoes with
 * cc_cg_undo_carve(..., plan, ...). */
int cc_cg_apply_plan(struct cc_cg *cg, const struct cc_cg_carve *c, struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_err *err);
void cc_cg_plan_fini(struct cc_cg_plan *plan);

/* Undo a carve: its own partition released when its cgroup is still
 * there (given the plan of a failed apply, the carve's own files put back
 * as they were, the record its own cpuset.cpus had before the plan
 * (plan->replaced) back, a shared container's record made by the plan
 * gone), then every record it owns recomputed without it: the
 * last owner writes orig back when the file still reads what corecarve
 * wrote.  Best effort: every step is tried, and a record whose write
 * failed keeps the carve as owner so a retry computes the same.  -1 with
 * the first failure (the caller keeps the carve as `releasing`). */
int cc_cg_undo_carve(struct cc_cg *cg, const struct cc_cg_carve *c, const struct cc_cg_plan *plan,
		     struct cc_noderecs *recs, struct cc_cg_msgs *msgs, struct cc_err *err);

/* audit --fix: the shared container's record `path` reads narrower than
 * its pool minus the live carves: its owners become `owners` (the live
 * carves in its pool) and its value is written again, after `journal` has
 * committed the pending write. */
int cc_cg_shared_widen(struct cc_cg *cg, const char *path, const struct cc_cg_share *owners, int n,
		       struct cc_noderecs *recs,
		       int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		       struct cc_err *err);

/* audit --fix: a cgroup holding CPUs of carves becomes their peer — a
 * peer record with `owners` (their shares added to any it has), its new
 * value written after `journal` has committed the record.  Refused for a
 * cgroup that is a partition of its own. */
int cc_cg_take_peer(struct cc_cg *cg, const char *peer, const struct cc_cg_share *owners, int n,
		    struct cc_noderecs *recs,
		    int (*journal)(void *arg, const struct cc_noderecs *recs, struct cc_err *err), void *arg,
		    struct cc_cg_msgs *msgs, struct cc_err *err);

/* audit --fix: the held record `path` holds CPUs outside `carved` (those
 * of every carve): they go, as an undo of an owner that had them would
 * take them out, and the file is recomputed. */
int cc_cg_drop_held(struct cc_cg *cg, const char *path, hwloc_const_bitmap_t carved, struct cc_noderecs *recs,
		    struct cc_cg_msgs *msgs, struct cc_err *err);

/* The value a record asks for now: the pure function above.  `parent_cpus`
 * is the peer's parent's cpuset.cpus.effective (peer records with orig ""
 * only).  NULL value for a parked record with orig null and no owners (the
 * cgroup goes).  -1 on a malformed record (err names it). */
int cc_cg_rec_value(const struct cc_noderec *r, hwloc_const_bitmap_t parent_cpus, char **value,
		    struct cc_err *err);

/* Undo a cc_cg_write() journal (VM threads' cgroups, init-parent) in
 * reverse.  Every entry is tried; -1 with the first failure. */
int cc_cg_rollback(struct cc_cg *cg, struct cc_cg_undo *undo, struct cc_err *err);
void cc_cg_undo_fini(struct cc_cg_undo *undo);

/* Prepare a parent cgroup as a partition root holding `cpus`, so that
 * containers below it can be local partitions on kernels without
 * cpuset.cpus.exclusive (corecarve init-parent). */
int cc_cg_init_parent(struct cc_cg *cg, const char *cgroup, hwloc_const_bitmap_t cpus,
		      hwloc_const_bitmap_t mems, struct cc_err *err);

/* Transient cgroups of `corecarve exec --carve` (transient.c). */
/* "populated" of cgroup.events: a process in the cgroup or below. */
int cc_cg_populated(const struct cc_cg *cg, const char *cgroup, bool *populated, struct cc_err *err);

/* The ledger's gc asks what became of a carve's cgroup (struct
 * cc_ledger_probe, with `cg` its arg): CC_LEDGER_CGROUP_GONE (not there,
 * or not a directory), _EMPTY ("populated 0") or _USED; an unreadable
 * cgroup.events is USED: CPUs are never handed out on a guess.  -1 only
 * when whether it is there cannot be told (EACCES, EIO). */
int cc_cg_gc_probe(const char *cgroup, void *cg, struct cc_err *err);
/* Kill every process in the cgroup (cgroup.kill, else SIGKILL each one in
 * cgroup.procs) and wait until it is empty.  Host only; a missing cgroup
 * is empty. */
int cc_cg_empty(struct cc_cg *cg, const char *cgroup, struct cc_err *err);
/* Remove an empty cgroup; a missing one is fine.  Host only. */
int cc_cg_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err);

#endif
