/* corecarve: the ledger — node state under /run/corecarve (tmpfs: carves
 * die with a reboot, like cgroups).  One file, ledger.json (a JSON header
 * with an index, then a JSON line per carve: ledger_int.h), replaced
 * atomically (write temp, fsync, rename, fsync dir) under an exclusive
 * flock on a separate lock file, so concurrent hooks never hand out the
 * same CPU and a process killed at any point leaves either the old or the
 * new ledger.  A corrupt ledger is an error, never silently reset. */
#ifndef CC_LEDGER_H
#define CC_LEDGER_H

#include <hwloc.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "error.h"
#include "root.h"
#include "paths.h"

#define CC_LEDGER_FILE "ledger.json"
#define CC_LEDGER_VERSION 2
/* A ledger larger than this is refused as corrupt (a full 8192-CPU node
 * needs well under 1 MiB). */
#define CC_LEDGER_MAX (16u << 20)
/* A grant's id ("grant:<class>:<cpus>") and its token (hex): the sizes
 * of the ledger's record of one (grant.h parses the annotation). */
#define CC_GRANT_ID_MAX 224
#define CC_GRANT_TOKEN_LEN 32
#define CC_GRANT_TOKEN_MAX (CC_GRANT_TOKEN_LEN + 1)

struct cc_carve {
	char id[256];            /* container id, "vm:<name>", "exec:<pid>" */
	char kind[16];           /* container | vm | exec */
	char cgroup[PATH_MAX];   /* cgroup path relative to the cgroup2 mount, "" if none */
	char class_name[64];
	char core_class[32];
	char mode[32];           /* remote-partition | local-partition | cpuset-only | affinity */
	hwloc_bitmap_t cpus;     /* CPUs it runs on */
	hwloc_bitmap_t parked;   /* siblings held idle */
	hwloc_bitmap_t mems;
	bool exclusive;
	bool steer_irqs;         /* irq: steer-away */
	/* Its container is gone (or its start was refused) but undoing what it
	 * changed failed: its CPUs stay taken, and every hook's gc and
	 * `audit --fix` try the undo again until it succeeds. */
	bool releasing;
	long long created;       /* unix seconds */
	/* A grant's secret (corecarve device-plugin's Allocate draws it; the
	 * kubelet alone is told it, inside the container annotation), and for
	 * a container carved from a grant, that grant's id and secret: when
	 * the carve goes, by any path, the ledger gives its cores back to the
	 * grant (cc_ledger_remove, cc_ledger_drop), so the container's restart
	 * carves them again.  "" for every other carve. */
	char grant[CC_GRANT_ID_MAX];
	char token[CC_GRANT_TOKEN_MAX];
	/* Records of the carve's own, for modules whose changes belong to it
	 * alone (a VM's threads and their cgroups: vm.h).  Changes outside it
	 * that other carves may share are node records in sections
	 * (noderec.h), never here. */
	json_t *changes;
};

/* The ledger itself is opaque: its fields are the ledger's files' own
 * (ledger_int.h, included by ledger*.c alone; scripts/include-graph.sh
 * fails the build on any other includer).  Other modules read it through
 * the functions below: the carves (cc_ledger_carves, cc_ledger_find,
 * cc_ledger_foreach_carve), the sections (cc_ledger_section,
 * cc_ledger_section_get, cc_ledger_section_put, cc_ledger_set_section,
 * cc_ledger_rec_get and cc_ledger_rec_put), its directory and its fault
 * step. */
struct cc_ledger;

/* How long an opener waits for the lock before it gives up, by default.
 * A hook the runtime kills at its timeout (10 s in manifests/hooks.d and
 * the other registrations; test_manifests keeps it at least twice this)
 * says nothing; one that gives up first says who holds the lock.  5 s
 * leaves the other half of the timeout to the rest of the hook, which
 * takes milliseconds on hardware and under a second in the QEMU guest.
 * On hardware a carve holds the lock for milliseconds, so only a stuck
 * holder or hundreds of simultaneous starts reach the bound.  Even 32
 * containers started at once under QEMU's emulation, each hook holding
 * the lock 3 ms to 0.9 s, left the last of them waiting 2.5 to 3.8 s
 * (tests/e2e/scenarios/41-concurrent.sh, docs/design.md "The lock").
 * Entry points let $CORECARVE_LOCK_TIMEOUT change it. */
#define CC_LEDGER_WAIT_MS 5000u

/* How an opener takes the lock (docs/design.md, "The lock").  An exclusive
 * holder writes one line into the lock file while it holds it,
 *   pid=<pid> since=<unix time, ms> cmd=<holder>
 * and empties the file as it lets go, so that a waiter that gives up can
 * name it: "<dir>/lock: held by pid 1234 (corecarve hook createRuntime
 * abc) for 7.2 s; gave up after 5 s" (ETIMEDOUT).  A holder that wrote no
 * line (another program, a reader, a holder killed before it wrote) is
 * named from /proc/locks instead. */
struct cc_ledger_lock {
	unsigned wait_ms;   /* give up after this long; 0: a single try */
	const char *holder; /* what holds it, e.g. "corecarve hook createRuntime <id>"; NULL: the pid only */
	/* Non-NULL: the setting the wait came from was refused, and taking
	 * the lock fails with this line (EINVAL).  The hook reads its
	 * environment this way, so that a bad value refuses only the
	 * containers that need the lock, never one it has nothing to do with. */
	const char *refused;
};

enum cc_ledger_mode {
	CC_LEDGER_WRITE,       /* cc_ledger_open */
	CC_LEDGER_WRITE_INDEX, /* cc_ledger_open_index */
	CC_LEDGER_READ,        /* cc_ledger_read */
};

/* Open as `mode` does, waiting for the lock as `lock` says (NULL:
 * CC_LEDGER_WAIT_MS, no holder named but the pid).  The three functions
 * below are this with lock NULL; entry points pass theirs. */
struct cc_ledger *cc_ledger_open_as(const char *dir, enum cc_ledger_mode mode, const struct cc_ledger_lock *lock,
				    struct cc_err *err);

/* Directory from $CORECARVE_STATE_DIR is resolved by entry points; pass
 * NULL for CC_LEDGER_DIR.  Creates the directory 0700 if missing, takes an
 * exclusive lock (waiting at most CC_LEDGER_WAIT_MS), and loads
 * ledger.json (absent = empty).
 * Refuses a directory that is a symlink, is not owned by the effective uid
 * or is group/world writable.  Removes temp files left by killed writers.
 * A corrupt ledger is an error "<dir>/ledger.json: <field>: <problem>". */
struct cc_ledger *cc_ledger_open(const char *dir, struct cc_err *err);

/* The same, for a hook's create path: reads the header of ledger.json
 * (index and sections), not the carves.  cc_ledger_carves() then holds only the
 * carves added since; cc_ledger_taken, cc_ledger_held, cc_ledger_refs,
 * cc_ledger_add, cc_ledger_gc (while nothing is stale) and commit work
 * from the index.  Anything that needs one of the carves that were there
 * (cc_ledger_find or cc_ledger_remove of such an id, gc finding a stale
 * one, an overlap to name) loads them all first (cc_ledger_load_all);
 * a carve's handle stays valid through it (cc_ledger_carves).
 * Every other reader needs cc_ledger_open's whole ledger. */
struct cc_ledger *cc_ledger_open_index(const char *dir, struct cc_err *err);

/* Parse the carves an index-only ledger left out (nothing otherwise). */
int cc_ledger_load_all(struct cc_ledger *l, struct cc_err *err);

/* Read-only snapshot: shared lock while loading (the same bounded wait),
 * released on return.
 * Creates nothing: a missing directory or ledger reads as empty.  The
 * directory may also be owned by root.  cc_ledger_commit() refuses it. */
struct cc_ledger *cc_ledger_read(const char *dir, struct cc_err *err);

/* Recovery from a damaged ledger: under the exclusive lock, rename a
 * ledger.json that does not load to ledger.json.damaged.<unix time> (path
 * into `saved`), so the next hook starts an empty one.  What the damaged
 * file recorded is not undone: `corecarve audit` then reports the carves
 * still in the kernel (UNKNOWN_CARVE, LEDGER_MISSING) with their fixes.
 * Refuses (EEXIST) a ledger that loads.  `lock` as for cc_ledger_open_as. */
int cc_ledger_set_aside(const char *dir, const struct cc_ledger_lock *lock, char *saved, size_t len,
			struct cc_err *err);

/* The text of the ledger in DIR as a reader loads it, every grant token
 * replaced by as many zeros (still a token's shape, so the text loads):
 * for `corecarve capture`, whose trees go into bug reports, and a token
 * lets whoever holds it carve that grant's cores.  0 with *text (caller
 * frees) and *len; *text NULL when there is no ledger; -1 (err) when it
 * does not load. */
int cc_ledger_export_redacted(const char *dir, char **text, size_t *len, struct cc_err *err);

/* Write the ledger atomically if changed.  Keeps the lock. */
int cc_ledger_commit(struct cc_ledger *l, struct cc_err *err);

/* A ledger of no carve in memory, on no directory (commit refuses): for
 * reading the kernel with nothing recorded (`corecarve status --kernel`). */
struct cc_ledger *cc_ledger_empty(struct cc_err *err);

/* Unlock and free (does not commit). NULL-safe. */
void cc_ledger_close(struct cc_ledger *l);
void cc_ledger_closep(struct cc_ledger **l);
#define _cleanup_ledger_ __attribute__((cleanup(cc_ledger_closep)))

/* The state directory it was opened on (no trailing '/'), for messages. */
const char *cc_ledger_dir(const struct cc_ledger *l);
/* Opened with cc_ledger_read (a snapshot: commit refuses). */
bool cc_ledger_readonly(const struct cc_ledger *l);
/* The fault-injection step an entry point armed (fault.h), NULL normally:
 * the modules that apply a carve's effects call cc_fault() with it. */
const char *cc_ledger_fault(const struct cc_ledger *l);
void cc_ledger_set_fault(struct cc_ledger *l, const char *step);
/* A load that failed inside a call with no error argument (cc_ledger_find,
 * cc_ledger_section of a record section): -1 and *err (may be NULL) set
 * to it; 0 when none failed. */
int cc_ledger_failed(const struct cc_ledger *l, struct cc_err *err);

/* The carves loaded: an array of cc_ledger_ncarves() handles, the array
 * borrowed until the ledger changes, each handle valid until its carve
 * is removed (an add, a load or another's removal never moves it).
 * Every carve in a ledger from cc_ledger_open or cc_ledger_read; in an
 * index-only one, only those added since it was opened
 * (cc_ledger_load_all first for the rest). */
int cc_ledger_ncarves(const struct cc_ledger *l);
const struct cc_carve *const *cc_ledger_carves(const struct cc_ledger *l);
/* Carve i of them (0 <= i < cc_ledger_ncarves()). */
const struct cc_carve *cc_ledger_carve_at(const struct cc_ledger *l, int i);
/* for (each loaded carve c at index i): `c` a const struct cc_carve *
 * declared by the caller, `i` an int declared here. */
#define cc_ledger_foreach_carve(l, i, c) \
	for (int i = 0; i < cc_ledger_ncarves(l) && ((c) = cc_ledger_carve_at((l), i)); i++)

/* Union of cpus and parked of every carve. Caller frees. */
hwloc_bitmap_t cc_ledger_taken(const struct cc_ledger *l);

/* Union of cpus and parked of the carves but `except` (NULL: none), all
 * of them or only the steer-away ones.  Caller frees.  NULL on ENOMEM,
 * and for an index-only ledger asked to leave out a carve it has not
 * loaded (EINVAL: load them first). */
hwloc_bitmap_t cc_ledger_held(const struct cc_ledger *l, const char *except, bool steered_only);

/* The carves but `except`: their ids and cgroups ("" for none), borrowed
 * until the ledger changes, in two arrays the caller frees (either may be
 * NULL when not wanted).  -1 as cc_ledger_held's NULL. */
int cc_ledger_refs(const struct cc_ledger *l, const char *except, const char ***ids, const char ***cgroups,
		   int *n);

/* The carve under `id`, NULL if none.  Borrowed until the ledger changes.
 * In an index-only ledger, an id that was in the file loads every carve
 * first; should that fail, NULL too, and commit refuses with the error:
 * cc_ledger_lookup says so at once. */
struct cc_carve *cc_ledger_find(struct cc_ledger *l, const char *id);

/* cc_ledger_find with the load's failure told apart: 1 and *out set, 0
 * when there is no such carve, -1 (err set). */
int cc_ledger_lookup(struct cc_ledger *l, const char *id, struct cc_carve **out, struct cc_err *err);

/* The carve under `id` for a release: in an index-only ledger only its own
 * line is read (checked against its entry and the index; the other carves
 * stay unread, and cc_ledger_held/cc_ledger_refs can leave it out).  1 and
 * *out set (borrowed until the ledger changes), 0 when there is none, -1
 * when its line cannot be read (commit then refuses too). */
int cc_ledger_get(struct cc_ledger *l, const char *id, struct cc_carve **out, struct cc_err *err);

/* Remove by id after cc_ledger_get: in an index-only ledger its two lines
 * are cut out and its CPUs taken out of the index's unions (carves are
 * disjoint) without reading the other carves.  1 removed, 0 unknown, -1
 * (err set). */
int cc_ledger_drop(struct cc_ledger *l, const char *id, struct cc_err *err);

/* Add a copy of `c` (bitmaps duplicated, changes reference taken).
 * Refuses a duplicate id and any CPU overlap with existing carves, and
 * anything the loader would refuse (unknown kind/mode, empty id, cpus
 * overlapping parked).  NULL bitmaps/changes read as empty; created 0
 * is stamped with the current time. */
int cc_ledger_add(struct cc_ledger *l, const struct cc_carve *c, struct cc_err *err);

/* Remove by id; returns 1 if removed, 0 if unknown, or if it was in an
 * index-only ledger's file and loading the carves failed (commit then
 * refuses; cc_ledger_lookup first tells the cases apart). */
int cc_ledger_remove(struct cc_ledger *l, const char *id);

/* Initialise/free a carve's owned members: empty bitmaps and an empty
 * `changes` array (modules append to it while applying the carve). */
void cc_carve_init(struct cc_carve *c);
void cc_carve_fini(struct cc_carve *c);

/* Get (creating if asked) a node-wide section object by name.  Borrowed.
 * Changes made through it (or through a carve's `changes`) are detected
 * by cc_ledger_commit(), which compares with what is on disk. */
json_t *cc_ledger_section(struct cc_ledger *l, const char *name, bool create);
/* Replace a section with `value` (its reference is taken; NULL removes the
 * section). */
int cc_ledger_set_section(struct cc_ledger *l, const char *name, json_t *value, struct cc_err *err);
/* A section that is not a record section ("irq", "power"), to read:
 * borrowed, NULL when absent (and for a record section: those are read
 * with cc_ledger_section or cc_ledger_rec_get). */
json_t *cc_ledger_section_get(const struct cc_ledger *l, const char *name);
/* Replace (value, its reference taken) or remove (NULL) such a section as
 * an edit of cc_ledger_section's object in place would: commit finds the
 * change by comparing with the disk, and a ledger that had no file and
 * ends up empty still writes none.  cc_ledger_set_section marks the
 * ledger changed instead. */
int cc_ledger_section_put(struct cc_ledger *l, const char *name, json_t *value, struct cc_err *err);

/* Record sections: node records (noderec.h) of the modules that have
 * many, "cgroup", kept one per line in key order, so that a hook reads
 * and writes only the records it touches (ledger_int.h has the layout).
 * cc_ledger_section() of one gives its records as {"files": [{"path":
 * <key>, ...}, ...]} — a view to read, rebuilt after each change, NULL
 * when there are none — and cc_ledger_set_section() replaces them all;
 * one at a time: */
/* The record `key` (borrowed until the record is put or the ledger
 * closes): 1, 0 when there is none, -1 when its line cannot be read (the
 * ledger then refuses to commit). */
int cc_ledger_rec_get(struct cc_ledger *l, const char *section, const char *key, json_t **out, struct cc_err *err);
/* Set the record `key` to `val` (an object, its reference taken), or remove
 * it (NULL).  A value equal to the one there changes nothing. */
int cc_ledger_rec_put(struct cc_ledger *l, const char *section, const char *key, json_t *val, struct cc_err *err);
/* The keys of the records that name `word` (as an object's key or a string
 * value anywhere in them): those that may list a carve as an owner.  Only
 * the lines that hold the bytes of that string are parsed.  *keys (n of
 * them) is the caller's to free, each and the array. */
int cc_ledger_rec_naming(struct cc_ledger *l, const char *section, const char *word, char ***keys, int *n,
			 struct cc_err *err);
/* The section's module's next sequence number (1 for a section without
 * records), kept with its records. */
long long cc_ledger_rec_next(struct cc_ledger *l, const char *section);
void cc_ledger_rec_set_next(struct cc_ledger *l, const char *section, long long next);
int cc_ledger_rec_count(struct cc_ledger *l, const char *section);

/* Keep the carve `id` as `releasing` (struct cc_carve); 0 when unknown. */
int cc_ledger_mark_releasing(struct cc_ledger *l, const char *id);

/* What became of a carve's cgroup, told by the caller (the cgroup layer's
 * cc_cg_gc_probe reads it): the ledger keeps each carve's cgroup as data and
 * asks, it reads no cgroup file.  `cgroup` is called with a carve's
 * cgroup as recorded (relative to the cgroup mount) and returns a
 * CC_LEDGER_CGROUP_* or -1 with err set: whether it is there cannot be
 * told.  An unreadable "populated" is USED: CPUs are never handed out on a
 * guess. */
enum { CC_LEDGER_CGROUP_GONE, CC_LEDGER_CGROUP_EMPTY, CC_LEDGER_CGROUP_USED };
struct cc_ledger_probe {
	int (*cgroup)(const char *cgroup, void *arg, struct cc_err *err);
	void *arg;
};

/* Release carves of kind "container" whose cgroup `probe` says is gone,
 * carves of kind "exec" whose cgroup is gone or empty (the command ended
 * and its `corecarve exec` was killed before releasing), and carves kept
 * as `releasing` whose cgroup is gone or empty too (one with processes in
 * it stays: the cgroup is asked again before anything is undone):
 * calls `release` (may be NULL; the hook undoes the carve's effects there),
 * then removes the carve, or — `release` returned < 0 — keeps it as
 * `releasing` for the next try.  Each change is committed at once, so a
 * process killed during gc loses nothing it did.  Carves without a cgroup
 * and other kinds are kept.  Returns the number removed, or -1: a probe
 * that failed, or a commit that failed. */
int cc_ledger_gc(struct cc_ledger *l, const struct cc_ledger_probe *probe,
		 int (*release)(struct cc_carve *c, void *arg), void *arg,
		 struct cc_err *err);

/* What cc_ledger_gc would take up, changing nothing: `due` (may be NULL)
 * is called with each such carve.  The number of them, or -1. */
int cc_ledger_gc_due(struct cc_ledger *l, const struct cc_ledger_probe *probe,
		     void (*due)(const struct cc_carve *c, void *arg), void *arg, struct cc_err *err);

/* The state directory and the ledger file as every reader opens them
 * (ledger_dir.c): the full hook, through the ledger, and the first stage
 * (hooks/first_stage.c), which must refuse exactly what the full hook
 * refuses, so that a directory or a ledger the hook would report is never
 * answered "nothing to do".  ledger_dir.c stands alone for that: the
 * first stage is static and links it without the rest of the ledger
 * (mk/first-stage.mk). */
/* Open DIR (O_RDONLY | O_DIRECTORY) without following a symlink in its
 * last component, creating it 0700 when `create`; refuse one another user
 * could write into (group- or world-writable, owned by another uid than
 * ours; a reader also trusts root's).  A writer makes it 0700.  The
 * descriptor, or -1 with err set; with `missing` non-NULL a directory
 * that does not exist sets *missing and returns -1 with err untouched. */
int cc_state_dir_open(const char *dir, bool create, bool *missing, struct cc_err *err);

/* Read the ledger file in the state directory DIRFD (shown as DIR): a
 * regular file, not a link, at most CC_LEDGER_MAX bytes, without a NUL
 * byte.  0 with *buf (NUL-terminated) and *len, 0 with *buf NULL when
 * there is none, -1 with err set. */
int cc_state_ledger_read(int dirfd, const char *dir, char **buf, size_t *len, struct cc_err *err);

#endif
