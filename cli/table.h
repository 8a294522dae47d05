/* corecarve CLI: every table the commands print, through util-linux's
 * libsmartcols (what lsblk and lscpu -e use): column choice (--output),
 * --no-headers, --raw and the terminal's width (--width) from one table
 * definition.
 *
 * libsmartcols is loaded with dlopen() the first time a table is made, not
 * linked: Debian ships it shared only (libsmartcols-dev has no archive), and
 * a registered hook starts twice per container, mapping and relocating every
 * shared object it needs (docs/performance.md, section 4).  The hook prints
 * no table, so it never loads the library (tests/unit/test_table.c checks
 * both).  The header still comes from libsmartcols-dev, so every call is
 * type-checked against the library's own prototypes.
 *
 * The JSON documents stay jansson's: they nest (sets, arrays, a schema
 * version) where a table is flat, and their field names are an interface.
 */
#ifndef CC_TABLE_H
#define CC_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

enum {
	CC_COL_TRUNC = 1 << 0, /* cut to fit the terminal */
	CC_COL_WRAP = 1 << 1,  /* wrap at spaces to fit the terminal */
	CC_COL_RIGHT = 1 << 2, /* numbers */
};

struct cc_table_col {
	const char *name;  /* header, and the name --output takes (case-insensitive) */
	double whint;      /* libsmartcols' width hint: < 1 a fraction of the terminal, else columns */
	int flags;         /* CC_COL_* */
	const char *help;  /* one line for --help's column list */
};

/* The table options a command accepts (CC_CLI_OPTS_TABLE in its option
 * table, cc_table_set takes them). */
struct cc_table_opts {
	const char *output; /* --output LIST: column names, or "+LIST" to add to the defaults */
	bool noheadings;    /* --no-headers */
	bool raw;           /* --raw: one space between cells, nothing aligned or wrapped */
	int width;          /* --width N: lay out for N columns (0: the terminal's; a pipe: no limit) */
};

/* A table option cc_opts_next returned (CC_CLI_OPT_OUTPUT ...), into `o`:
 * 1 when `id` is one, 0 when not, -1 with err on a bad --width. */
int cc_table_set(struct cc_table_opts *o, int id, const char *val, struct cc_err *err);

/* The usage lines for the table options, and the columns of `cols`. */
void cc_table_usage(FILE *out, const struct cc_table_col *cols, int ncols, const char *defaults);

struct cc_table;

/* A table of `ncols` columns, showing `defaults` (comma-separated names)
 * unless o->output chooses others.  An unknown column name is an error
 * listing the known ones.  NULL with err set (also when libsmartcols cannot
 * be loaded). */
struct cc_table *cc_table_new(const struct cc_table_col *cols, int ncols, const char *defaults,
			      const struct cc_table_opts *o, struct cc_err *err);
/* One row: `cells` holds a value for every column of the definition, in its
 * order (NULL or "" prints empty). */
int cc_table_row(struct cc_table *t, const char *const *cells, struct cc_err *err);
/* Print to `out` and free.  0, or -1 with err set. */
int cc_table_print(struct cc_table *t, FILE *out, struct cc_err *err);
void cc_table_free(struct cc_table *t);
void cc_table_freep(struct cc_table **t);
#define _cleanup_table_ __attribute__((cleanup(cc_table_freep)))

/* Whether libsmartcols has been loaded into this process (tests). */
bool cc_table_loaded(void);

#endif
