/* corecarve: node records — the one record type behind every change
 * corecarve makes outside a carve's own cgroup (docs/design.md, "One
 * restore model").
 *
 * A record is about one file (a peer's cpuset.cpus, a pod's cpu.max, an
 * ancestor's cpuset.cpus.exclusive, the parked partition, a cpufreq or
 * cpuidle file).  It holds the value the file had before corecarve first
 * wrote it (`orig`), the value corecarve wrote last as read back (`set`),
 * a write that may be in flight (`pending`, journaled before the write) and
 * the carves that need it (`owners`), each with its share: what that
 * carve contributes to the value (its CPUs, its CPU count), in the words
 * of the module that owns the record.
 *
 * The value to write is always a pure function of `orig` and the owners'
 * shares (the module's), never a snapshot replayed: whatever order carves
 * come and go in, the same live carves give the same value, and the last
 * owner to go writes `orig` back — only if the file still holds `set` (or
 * `pending`): a value someone else wrote since is theirs and stays.
 *
 * Records live in a ledger section of their module, as
 *   {"files": [{"path": ..., "kind": ..., "orig": ..., "set": ...,
 *    "pending": ..., "seq": n, "owners": {"<carve id>": "<share>", ...}}]}
 * with "orig" null for a file corecarve created, "set" and "pending" absent
 * when there is none.  Parsed strictly, and each record's values checked
 * by its module's rule as it is read (struct cc_noderec_schema): a restore
 * from a record corecarve cannot read would write a wrong value into the
 * kernel.
 *
 * A kind whose owners are exactly the carves a rule of its module names
 * (a cgroup ancestor's exclusive set: every remote carve below it) may keep
 * them as `held` instead: the union of their shares, which are CPU lists of
 * disjoint carves, so that a carve arriving adds its share and one going
 * takes it away without any other owner being read ("held kinds"; owners
 * listed for such a kind, as files written before held was, are folded
 * into it).  The module's audit checks held against the carves.
 *
 * The "cgroup" section is a record section of the ledger (ledger.h): one
 * line per record.  cc_noderecs_open() reads it lazily — a record is parsed
 * when it is first looked up, and cc_noderecs_store() writes back only the
 * records read, made or removed — so a hook's cost does not grow with the
 * records of every carve on the node. */
#ifndef CC_NODEREC_H
#define CC_NODEREC_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>

#include "error.h"

#define CC_NODEREC_VALUE_MAX 4096 /* bytes of one recorded value (a CPU list of a large node) */
#define CC_NODEREC_ID_MAX 256     /* a carve id, as the ledger bounds it */

struct cc_noderec_owner {
	char *id;
	char *share;
};

struct cc_noderec {
	char *path;    /* the file, absolute under the module's namespace */
	char *kind;    /* what the file is to its module ("peer", "quota", "governor", ...) */
	char *orig;    /* value before corecarve's first write; NULL: corecarve created it */
	char *set;     /* value corecarve wrote last, as read back; NULL: not written yet */
	char *pending; /* journal: a write of this value may have happened; NULL: none */
	long long seq; /* order of the first write: restores run in reverse */
	int nowners;
	struct cc_noderec_owner *owners; /* in the order they came */
	/* A held kind: the union of its unlisted owners' shares, parsed once
	 * as the record is read, formatted once as it is written; NULL: none
	 * (never an empty set). */
	hwloc_bitmap_t held;
};

struct cc_ledger;
struct cc_noderecs_src;

/* What one module's records are: the one description its sections are
 * read with, lazily or whole.  `check` (NULL: none) is the module's rule
 * for a record's values (a cgroup CPU list that parses, a sysfs path),
 * run once as each record is read: a record it refuses is refused there,
 * with the field named ("<where>.orig: ..."), so the module's rules never
 * meet a value they cannot read. */
struct cc_noderec_schema {
	const char *where;              /* the section in errors: "sections.cgroup" */
	const char *const *kinds;       /* NULL-terminated: the kinds the module knows */
	const char *const *held_kinds;  /* NULL-terminated, may be NULL: kinds that keep `held` */
	int (*check)(const struct cc_noderec *r, const char *where, struct cc_err *err);
};

struct cc_noderecs {
	long long next; /* the next seq: past the last record's */
	int n;
	/* Each record its own allocation: a pointer to one (a handle) stays
	 * valid until that record is removed, whatever is added or read. */
	struct cc_noderec **r;
	/* Read from a ledger's record section (cc_noderecs_open); NULL for a
	 * set parsed from JSON or made by hand. */
	struct cc_noderecs_src *src;
};

void cc_noderecs_init(struct cc_noderecs *s);
void cc_noderecs_fini(struct cc_noderecs *s);

/* The records of the ledger's record section `section`, read lazily:
 * cc_noderecs_find() reads a record the set does not hold yet, and a
 * failure to read one sticks (cc_noderecs_store refuses with it, and so
 * does the ledger's commit).  The schema stays the caller's (a static). */
int cc_noderecs_open(struct cc_noderecs *s, struct cc_ledger *l, const char *section,
		     const struct cc_noderec_schema *schema, struct cc_err *err);
/* Read now the records of `keys` and (owner not NULL) every record that
 * lists `owner` among its owners: what an undo of that carve iterates.  A
 * set that is not lazy holds everything already. */
int cc_noderecs_load(struct cc_noderecs *s, const char *const *keys, int nkeys, const char *owner,
		     struct cc_err *err);
/* Read every record (the audit's, a repair's view of the node). */
int cc_noderecs_load_all(struct cc_noderecs *s, struct cc_err *err);
/* Write the records read, made or removed back into the ledger (not
 * committed). */
int cc_noderecs_store(struct cc_noderecs *s, struct cc_err *err);

/* Parse a section (NULL: empty) whole.  Errors name the field:
 * "sections.cgroup.files.2.owners.c1: expected a string". */
int cc_noderecs_parse(const json_t *section, const struct cc_noderec_schema *schema, struct cc_noderecs *s,
		      struct cc_err *err);
/* The section's JSON; NULL when nothing is recorded (the module removes
 * its section then, so an idle node's ledger stays empty) or out of
 * memory (err set). */
json_t *cc_noderecs_json(const struct cc_noderecs *s, struct cc_err *err);

/* The record of `path`, NULL if none.  A lazy set reads it first when it
 * does not hold it (others keep their place). */
struct cc_noderec *cc_noderecs_find(const struct cc_noderecs *s, const char *path);
/* A new record for `path` (orig copied, NULL allowed) with the next seq,
 * no owners; NULL on ENOMEM. */
struct cc_noderec *cc_noderecs_add(struct cc_noderecs *s, const char *path, const char *kind, const char *orig);
/* A copy of `r` (its seq, values and owners) added to `s`: a record kept
 * aside and put back; NULL on ENOMEM. */
struct cc_noderec *cc_noderecs_add_copy(struct cc_noderecs *s, const struct cc_noderec *r);
void cc_noderecs_del(struct cc_noderecs *s, const char *path);
/* Whether the record has an owner, listed or held. */
bool cc_noderec_owned(const struct cc_noderec *r);

/* Owners.  Setting an id already there replaces its share. */
const char *cc_noderec_share(const struct cc_noderec *r, const char *id);
int cc_noderec_set_owner(struct cc_noderec *r, const char *id, const char *share);
/* Remove `id`; true when it was an owner. */
bool cc_noderec_del_owner(struct cc_noderec *r, const char *id);
/* Replace a string field (set, pending) with a copy of v (NULL clears). */
int cc_noderec_put(char **field, const char *v);

#endif
