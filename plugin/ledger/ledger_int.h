/* corecarve: what the ledger's files share, private to them.
 *
 *   ledger.c         the state directory, the public operations
 *   ledger_gc.c      gc: which carves are dead (their cgroup gone or, for
 *                    exec, emptied, as the caller's probe says), taken out one by one
 *   ledger_lock.c    the lock: its bounded wait, its holder's line, and
 *                    naming the holder when a waiter gives up
 *   ledger_carve.c   one carve: its rules and its JSON object
 *   ledger_format.c  the file: its layout, reading it whole or by its
 *                    index, writing it; one carve read or cut out alone
 *   ledger_recs.c    the record sections: one record per line
 *
 * The file (version 2) is one JSON value per line: a header, an entry line
 * per carve, a carve line per carve in the same order, then the lines of
 * the record sections (below), each a key and its record.
 *
 *   {"version": 2, "index": {"carves": 2, "taken": "0-3", "steered": "",
 *                            "digest": "fnv1a64:...",
 *                            "records": {"cgroup": {"lines": 2, "next": 3}}},
 *    "sections": {...}}
 *   ["c1", "container", "/kubepods/c1"]
 *   ["c2", "exec", "/corecarve.exec/exec-42"]
 *   {"id": "c1", "kind": "container", ..., "changes": []}
 *   {"id": "c2", ...}
 *   "/kubepods/cpu.max" {"owners": {"c1": "1"}, "kind": "quota", ...}
 *   "/kubepods/cpuset.cpus.exclusive" {"owners": {}, ..., "held": "0-1"}
 *
 * The header's index counts the carves and holds the union of their CPUs,
 * that of the steer-away ones, the record sections' line counts and a
 * digest of every block of lines; an entry names a carve (id, kind,
 * cgroup) as gc and the duplicate check need it.  A hook's create path
 * reads the header and the entries only (cc_ledger_open_index), the
 * records it touches one at a time, and writes every line it did not
 * change back as it was, with its own lines added: the cost of a decision
 * no longer grows with the JSON of every carve on the node, and no line it
 * keeps is printed again.  A release reads its own carve line alone and
 * cuts its two lines out (cc_ledger_get, cc_ledger_drop).  Every other
 * reader parses each line and checks the index, the entries and the
 * record order against the carves, so an index that disagrees with its
 * carves is a corrupt ledger, never a silent one.  Any other version is
 * refused (version 1, one indented document, was never released). */
#ifndef CC_LEDGER_INT_H
#define CC_LEDGER_INT_H

#include "ledger.h"

/* The carves that were in the file, left unparsed (cc_ledger_open_index). */
struct cc_ledger_index {
	json_t *entries;        /* [[id, kind, cgroup], ...] from the entry lines */
	hwloc_bitmap_t taken;   /* their cpus and parked */
	hwloc_bitmap_t steered; /* those of the steer-away ones */
	/* Both blocks of lines in l->snapshot, and their FNV-1a (digest.h). */
	size_t entries_off, entries_len, lines_off, lines_len;
	uint64_t entries_hash, lines_hash;
	size_t lines_lineno; /* the file's line number of the first carve line, for errors */
	/* The unions as the file said them (the working ones above lose the
	 * CPUs of a carve taken out): what a load of every carve checks. */
	hwloc_bitmap_t file_taken, file_steered;
	/* A carve read alone (cc_ledger_get), one taken out (cc_ledger_drop),
	 * by its position among the entries; NULL until one is. */
	struct cc_carve **loaded;
	bool *gone;
	bool cut;  /* one is loaded or gone: the next commit writes both blocks anew */
	/* Where each entry and carve line is in l->snapshot; NULL until asked
	 * for (ledger_index_lines), dropped at each commit. */
	size_t *eoff, *elen, *coff, *clen;
};

/* The ledger (ledger.h's opaque struct cc_ledger): what ledger*.c share,
 * and no other module sees. */
struct cc_ledger {
	char dir[PATH_MAX];
	int lockfd;
	int ncarves;
	/* Each carve its own allocation: a pointer to one (a handle) stays
	 * valid until that carve is removed, whatever is added, loaded or
	 * taken out beside it (ledger_carve_new, ledger_carve_free). */
	struct cc_carve **carves;
	/* Node-wide sections owned by other modules (e.g. "irq": original
	 * affinities recorded once), kept as JSON and written back as is. */
	json_t *sections;
	bool dirty;       /* changed through a call that says so: commit writes */
	const char *fault; /* fault-injection step armed by the entry point (fault.h) */
	int commits;       /* replace_file calls so far: fault.h's @n */
	int dirfd;        /* the state directory, -1 when it does not exist (read only) */
	bool readonly;    /* from cc_ledger_read: commit refuses */
	char *snapshot;   /* ledger.json's bytes as read or last written, NULL when no file */
	/* Index-only (cc_ledger_open_index): the carves that were in the file,
	 * unparsed; `carves` holds only those added since.  NULL otherwise. */
	struct cc_ledger_index *index;
	/* A load of those carves that failed inside a call with no error
	 * argument (cc_ledger_find): commit refuses with it. */
	struct cc_err lazy_err;
	/* The record sections (ledger_recs.c), NULL until one is used. */
	struct ledger_recset *recs;
};

/* ---- record sections (ledger_recs.c) ----
 *
 * A record section ("cgroup": noderec.h) keeps one record per line after
 * the carve lines, each line the record's key and its object,
 *   "/kubepods/pod1/cpu.max" {"kind": "quota", "orig": ..., ...}
 * sorted by key, so that one record is found by a binary search over keys
 * parsed one at a time, and written back while every other line is copied
 * as it is.  The header's index says how many lines each section has and
 * the next sequence number its module hands out (the digest covers the
 * block by its lines' hashes, ledger_recs_hash):
 *   "records": {"cgroup": {"lines": 1368, "next": 2051}}
 * (absent when there are none).  A file that holds a record section in its
 * header (written before record lines) is read into lines. */
#define LEDGER_NRECSETS 1
#define LEDGER_REC_KEY_MAX 4160

extern const char *const ledger_rec_sections[];

struct ledger_rec {
	char *key;       /* NULL until its line is parsed */
	json_t *val;     /* NULL until its line is parsed */
	size_t off, len; /* its line in l->snapshot, newline included */
	bool changed;    /* written from val; otherwise its line is copied */
	bool hashed;     /* hash is its line's FNV-1a */
	uint64_t hash;
};

struct ledger_recset {
	const char *name;
	long long next;   /* the module's next sequence number */
	int n, cap;
	struct ledger_rec *r; /* in key order */
	size_t lineno;    /* the file's line number of its first line, for errors */
	json_t *view;     /* cc_ledger_section's {"files": [...]}; NULL when stale */
};

/* Where ledger_serialize put each record line. */
struct ledger_rec_at {
	size_t off, len;
	uint64_t hash;
};

bool ledger_is_rec_section(const char *name);
/* The record section `name` (NULL: not one; ENOMEM). */
struct ledger_recset *ledger_recset(struct cc_ledger *l, const char *name);
void ledger_recs_free(struct cc_ledger *l);
int ledger_recs_count(const struct cc_ledger *l);
/* One line's key and (val not NULL) record. */
int ledger_rec_parse_line(const char *p, size_t len, char **key, json_t **val, const char *path, size_t lineno,
			  const char *section, struct cc_err *err);
/* Take the n lines at buf + off (buf: the file's bytes, l->snapshot once
 * loaded) as the section's records; `parse`: every one parsed and the
 * order checked (a whole read). */
int ledger_recs_cut(struct ledger_recset *s, const char *buf, size_t off, size_t len, size_t lineno, int n,
		    bool parse, const char *path, struct cc_err *err);
/* The records as {"files": [...]} (each with its "path"), or NULL. */
json_t *ledger_recs_view(struct cc_ledger *l, const char *name);
/* Replace every record of `name` with those of a {"files": [...]} object
 * (NULL: none). */
int ledger_recs_from_section(struct cc_ledger *l, const char *name, json_t *section, struct cc_err *err);
/* The record block's hash for the digest: FNV-1a over its lines' FNV-1a
 * (eight bytes each, least significant first), each line's kept with it
 * (buf: the bytes the offsets are in). */
uint64_t ledger_recs_hash(struct cc_ledger *l, const char *buf);
/* Every record line, in a new buffer (*out, *len) with the block's hash;
 * at[] (ledger_recs_count entries) gets where each line is in it. */
int ledger_recs_write(struct cc_ledger *l, char **out, size_t *len, uint64_t *hash, struct ledger_rec_at *at,
		      struct cc_err *err);
/* After the file was replaced: the lines are where at[] says. */
void ledger_recs_written(struct cc_ledger *l, const struct ledger_rec_at *at, size_t lineno);

/* Where ledger_serialize put the blocks it kept. */
struct ledger_layout {
	size_t entries_off, lines_off, lines_lineno;
	size_t entries_len, lines_len;        /* with a cut index: its blocks' new lengths */
	uint64_t entries_hash, lines_hash;    /* and their hashes */
	size_t recs_lineno;
	struct ledger_rec_at *recs; /* ledger_recs_count entries, freed by the caller */
};

void ledger_index_free(struct cc_ledger_index *ix);

/* ---- ledger.c ---- */
/* Index-only: whether the file's carve at position i was taken out
 * (cc_ledger_drop); false for a ledger read whole. */
bool ledger_gone_at(const struct cc_ledger *l, size_t i);

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
/* The grant carve `c` was made from, as it was before (its cores, class,
 * id and token) into `g` (the caller's to cc_carve_fini): 1, or 0 when c
 * was made from none, -1 out of memory. */
int ledger_grant_of(const struct cc_carve *c, struct cc_carve *g);
/* A carve of the ledger: allocated and cc_carve_init'd (NULL on ENOMEM);
 * finished and freed (NULL is fine). */
struct cc_carve *ledger_carve_new(void);
void ledger_carve_free(struct cc_carve *c);
int ledger_check_disjoint(struct cc_carve *const *carves, int n, const struct cc_carve *c, const char *what,
			  struct cc_err *err);
int ledger_admit_carve(struct cc_ledger *l, int i, json_t *ids, hwloc_bitmap_t taken, const char *what,
		       struct cc_err *err);
int ledger_get_field(json_t *obj, const char *what, const char *key, json_t **out, struct cc_err *err);
int ledger_check_keys(json_t *obj, const char *const *known, const char *what, struct cc_err *err);
int ledger_parse_carve(json_t *obj, const char *what, struct cc_carve *c, struct cc_err *err);
json_t *ledger_carve_to_json(const struct cc_carve *c);

/* ---- ledger_format.c ---- */
/* Fill `l` (empty) from the file's bytes `buf` (NUL-terminated, `len`
 * long): every carve, or with `index_only` the header alone (l->index
 * set).  Errors name the file (`path`) and the field or the line. */
int ledger_parse(struct cc_ledger *l, const char *path, const char *buf, size_t len, bool index_only,
		 struct cc_err *err);
/* Parse the carve lines an index-only ledger left, put them before the
 * carves added since, check the lot, and drop the index. */
int ledger_parse_lines(struct cc_ledger *l, struct cc_err *err);
/* Index-only: read carve i of the file alone, checked against its entry
 * and the index (sets ix->loaded[i]). */
int ledger_index_get(struct cc_ledger *l, size_t i, struct cc_err *err);
/* After a commit: the index says what the file now holds. */
void ledger_index_written(struct cc_ledger *l, const struct ledger_layout *at);

/* The file's bytes for the ledger's state; `at` says where the blocks an
 * index-only ledger kept are in them. */
char *ledger_serialize(struct cc_ledger *l, struct ledger_layout *at, struct cc_err *err);

#endif
