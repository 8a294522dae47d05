/* corecarve: the one option table.
 *
 * Every command, the hook and its first stage declare their options once,
 * each in a table of struct cc_opt ended by an entry whose name is NULL:
 * the name, a short alias, the value's name (NULL for a flag), the
 * subcommands it is for, and whether the first stage reads it itself.
 * cc_opts_next walks argv through a table, so the forms agree everywhere:
 * "--name VALUE" and "--name=VALUE" for an option with a value, "--name"
 * alone for a flag.  Each command keeps its own synopsis, examples and
 * notes in its --help; test_options checks that every --help, the bash
 * completion and the tables name the same options. */
#ifndef CC_OPTS_H
#define CC_OPTS_H

#include <stdbool.h>

#include "error.h"

/* The first stage (hooks/first_stage.c) reads it itself: it cannot change
 * the first stage's answer.  Any other option of the hook's table makes
 * the first stage hand the call to the full hook. */
#define CC_OPT_FIRST_STAGE 0x1u
/* A flag that may also take a value after '=': "--fix", "--fix=CODES". */
#define CC_OPT_OPTIONAL_VALUE 0x2u
/* An empty value ("--state=", "--dir ''") is a missing one. */
#define CC_OPT_NONEMPTY 0x4u
/* The value is a file name, and a missing or empty one is said so
 * ("--svg: missing file name"). */
#define CC_OPT_FILE_NAME 0x8u

struct cc_opt {
	const char *name;  /* "--state" */
	const char *alias; /* "-o", or NULL */
	const char *arg;   /* the value's name ("DIR"); NULL: a flag */
	int id;            /* > 0, what cc_opts_next returns for it */
	unsigned flags;
	/* The subcommands it is for, space-separated ("reconcile status");
	 * NULL: every one.  Elsewhere it is not an option of the command. */
	const char *subs;
};

#define CC_OPT_WORD 0 /* not an option of the table: a word, or an unknown option */

/* The next argument, argv[*i]: the id of the option it is (with *val its
 * value, NULL for a flag), CC_OPT_WORD with *val = argv[*i] when it is no
 * option of the table for `sub` (NULL: no subcommand), or -1 with err
 * ("--state: missing argument").  A flag written with "=VALUE" is a word:
 * the caller refuses it as the argument it does not expect.  *i is left on
 * the last argument taken. */
int cc_opts_next(const struct cc_opt *tab, const char *sub, int argc, char **argv, int *i, const char **val,
		 struct cc_err *err);

/* The entry of `id`, or NULL. */
const struct cc_opt *cc_opts_find(const struct cc_opt *tab, int id);

/* Whether `o` is an option of `sub` (NULL: of the command itself). */
bool cc_opts_for(const struct cc_opt *o, const char *sub);

#endif
