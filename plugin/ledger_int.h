/* corecarve: what the ledger's three files share, private to them.
 *
 *   ledger.c         the state directory, the public operations
 *   ledger_lock.c    the lock: its bounded wait, its holder's line, and
 *                    naming the holder when a waiter gives up
 *   ledger_carve.c   one carve: its rules and its JSON object
 *   ledger_format.c  the file: its layout, reading it whole or by its
 *                    index, writing it
 *
 * The file (version 2) is one JSON value per line: a header, an entry line
 * per carve, then a carve line per carve, in the same order.
 *
 *   {"version": 2, "index": {"carves": 2, "taken": "0-3", "steered": "",
 *                            "digest": "fnv1a64:..."}, "sections": {...}}
 *   ["c1", "container", "/kubepods/c1"]
 *   ["c2", "exec", "/corecarve.exec/exec-42"]
 *   {"id": "c1", "kind": "container", ..., "changes": []}
 *   {"id": "c2", ...}
 *
 * The header's index counts the carves and holds the union of their CPUs,
 * that of the steer-away ones, and a digest of both blocks of lines; an
 * entry names a carve (id, kind, cgroup) as gc and the duplicate check need
 * it.  A hook's create path reads the header and the entries only
 * (cc_ledger_open_index) and writes both blocks back as they were, with
 * its own lines appended: the cost of a decision no longer grows with the
 * JSON of every carve on the node, and no line it keeps is printed again.
 * Every other reader parses each line and checks the index and the entries
 * against the carves, so an index that disagrees with its carves is a
 * corrupt ledger, never a silent one.  Version 1 (one indented document)
 * is still read; the next commit writes 2. */
#ifndef CC_LEDGER_INT_H
#define CC_LEDGER_INT_H

#include "ledger.h"

#define CC_LEDGER_VERSION_OLD 1

/* The carves that were in the file, left unparsed (cc_ledger_open_index). */
struct cc_ledger_index {
	json_t *entries;        /* [[id, kind, cgroup], ...] from the entry lines */
	hwloc_bitmap_t taken;   /* their cpus and parked */
	hwloc_bitmap_t steered; /* those of the steer-away ones */
	/* Both blocks of lines in l->snapshot, and their FNV-1a (digest.h). */
	size_t entries_off, entries_len, lines_off, lines_len;
	uint64_t entries_hash, lines_hash;
	size_t lines_lineno; /* the file's line number of the first carve line, for errors */
};

/* Where ledger_serialize put the blocks it kept. */
struct ledger_layout {
	size_t entries_off, lines_off, lines_lineno;
};

void ledger_index_free(struct cc_ledger_index *ix);

/* ---- ledger_lock.c ---- */
/* Open <dir>/lock (a writer creates it 0600) and take it, exclusive or
 * shared, waiting as `lock` says (NULL: the defaults).  A reader finds no
 * lock file when no writer ever ran: 0, and l->lockfd stays -1. */
int ledger_lock(struct cc_ledger *l, bool exclusive, const struct cc_ledger_lock *lock, struct cc_err *err);
/* Empty the holder's line (a writer) and let go; -1 lockfd is a no-op. */
void ledger_unlock(struct cc_ledger *l);

/* ---- ledger_carve.c ---- */
bool ledger_in_list(const char *const *list, const char *s);
const char *ledger_json_type(const json_t *j);
extern const char *const ledger_carve_kinds[];
int ledger_check_text(const char *s, size_t cap, bool parsed, const char *what, const char *field,
		      struct cc_err *err);
int ledger_check_cgroup(const char *cg, const char *what, struct cc_err *err);
int ledger_validate_carve(const struct cc_carve *c, bool parsed, const char *what, struct cc_err *err);
int ledger_carve_union(const struct cc_carve *c, hwloc_bitmap_t out);
int ledger_check_disjoint(const struct cc_carve *carves, int n, const struct cc_carve *c, const char *what,
			  struct cc_err *err);
int ledger_admit_carve(struct cc_ledger *l, int i, json_t *ids, hwloc_bitmap_t taken, const char *what,
		       struct cc_err *err);
int ledger_get_field(json_t *obj, const char *what, const char *key, json_t **out, struct cc_err *err);
int ledger_check_keys(json_t *obj, const char *const *known, const char *what, struct cc_err *err);
int ledger_parse_carve(json_t *obj, const char *what, struct cc_carve *c, struct cc_err *err);
json_t *ledger_carve_to_json(const struct cc_carve *c);

/* ---- ledger_format.c ---- */
/* Fill `l` (empty) from the file's bytes `buf` (NUL-terminated, `len`
 * long): every carve, or with `index_only` a version-2 file's header
 * alone (l->index set; a version-1 file is read whole).  Errors name the
 * file (`path`) and the field or the line. */
int ledger_parse(struct cc_ledger *l, const char *path, const char *buf, size_t len, bool index_only,
		 struct cc_err *err);
/* Parse the carve lines an index-only ledger left, put them before the
 * carves added since, check the lot, and drop the index. */
int ledger_parse_lines(struct cc_ledger *l, struct cc_err *err);
/* The file's bytes for the ledger's state; `at` says where the blocks an
 * index-only ledger kept are in them. */
char *ledger_serialize(const struct cc_ledger *l, struct ledger_layout *at, struct cc_err *err);

#endif
