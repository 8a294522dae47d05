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
 * when there is none.  Parsed strictly: a restore from a record corecarve
 * cannot read would write a wrong value into the kernel. */
#ifndef CC_NODEREC_H
#define CC_NODEREC_H

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
};

struct cc_noderecs {
	long long next; /* the next seq: past the last record's */
	int n;
	struct cc_noderec *r;
};

void cc_noderecs_init(struct cc_noderecs *s);
void cc_noderecs_fini(struct cc_noderecs *s);

/* Parse a section (NULL: empty).  `where` names it in errors, e.g.
 * "sections.cgroup"; `kinds` (NULL-terminated) are the kinds the module
 * knows.  Errors name the field: "sections.cgroup.files.2.owners.c1:
 * expected a string". */
int cc_noderecs_parse(const json_t *section, const char *where, const char *const *kinds,
		      struct cc_noderecs *s, struct cc_err *err);
/* The section's JSON; NULL when nothing is recorded (the module removes
 * its section then, so an idle node's ledger stays empty) or out of
 * memory (err set). */
json_t *cc_noderecs_json(const struct cc_noderecs *s, struct cc_err *err);

struct cc_noderec *cc_noderecs_find(const struct cc_noderecs *s, const char *path);
/* A new record for `path` (orig copied, NULL allowed) with the next seq,
 * no owners; NULL on ENOMEM.  Pointers into s->r are invalidated. */
struct cc_noderec *cc_noderecs_add(struct cc_noderecs *s, const char *path, const char *kind, const char *orig);
void cc_noderecs_del(struct cc_noderecs *s, const char *path);

/* Owners.  Setting an id already there replaces its share. */
const char *cc_noderec_share(const struct cc_noderec *r, const char *id);
int cc_noderec_set_owner(struct cc_noderec *r, const char *id, const char *share);
/* Remove `id`; true when it was an owner. */
bool cc_noderec_del_owner(struct cc_noderec *r, const char *id);
/* Replace a string field (set, pending) with a copy of v (NULL clears). */
int cc_noderec_put(char **field, const char *v);

#endif
