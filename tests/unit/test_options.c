/* The one option table (opts.h): its walk, and every command's table
 * against what a person reads (--help) and what bash completes
 * (completion/corecarve.bash), and against the command itself (each
 * option with a value asks for it in the table's words). */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "opts.h"
#include "testlib.h"

enum { T_STATE = 1, T_VERBOSE, T_FIX, T_NAME, T_FILE, T_STATUS_ONLY };

static const struct cc_opt tab[] = {
	{ "--state", NULL, "DIR", T_STATE, 0, NULL },
	{ "--verbose", "-v", NULL, T_VERBOSE, 0, NULL },
	{ "--fix", NULL, NULL, T_FIX, CC_OPT_OPTIONAL_VALUE, NULL },
	{ "--name", NULL, "NAME", T_NAME, CC_OPT_NONEMPTY, NULL },
	{ "--svg", NULL, "FILE", T_FILE, CC_OPT_FILE_NAME, NULL },
	{ "--sample", NULL, "N", T_STATUS_ONLY, 0, "status top" },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* One walk of argv (words split on spaces) to its first result. */
static int next(const char *sub, const char *line, const char **val, int *i, struct cc_err *err)
{
	static char buf[256];
	static char *argv[16];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 16; w = strtok_r(NULL, " ", &save))
		argv[argc++] = strcmp(w, "''") ? w : (char *)"";
	*i = 0;
	return cc_opts_next(tab, sub, argc, argv, i, val, err);
}

START_TEST(test_next_forms)
{
	struct cc_err err = CC_ERR_INIT;
	const char *v;
	int i;

	/* Both forms of a value, the same answer. */
	ck_assert_int_eq(next(NULL, "--state /run/x", &v, &i, &err), T_STATE);
	ck_assert_str_eq(v, "/run/x");
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(next(NULL, "--state=/run/x", &v, &i, &err), T_STATE);
	ck_assert_str_eq(v, "/run/x");
	ck_assert_int_eq(i, 0);
	/* A flag, by name or alias; with "=VALUE" it is no flag of the table. */
	ck_assert_int_eq(next(NULL, "--verbose", &v, &i, &err), T_VERBOSE);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(next(NULL, "-v", &v, &i, &err), T_VERBOSE);
	ck_assert_int_eq(next(NULL, "--verbose=1", &v, &i, &err), CC_OPT_WORD);
	ck_assert_str_eq(v, "--verbose=1");
	/* An optional value only after '='. */
	ck_assert_int_eq(next(NULL, "--fix next", &v, &i, &err), T_FIX);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(i, 0);
	ck_assert_int_eq(next(NULL, "--fix=A,B", &v, &i, &err), T_FIX);
	ck_assert_str_eq(v, "A,B");
	/* Words: not options, unknown ones, a prefix of a name, "-", "--". */
	ck_assert_int_eq(next(NULL, "poststop", &v, &i, &err), CC_OPT_WORD);
	ck_assert_str_eq(v, "poststop");
	ck_assert_int_eq(next(NULL, "--stat", &v, &i, &err), CC_OPT_WORD);
	ck_assert_int_eq(next(NULL, "--states", &v, &i, &err), CC_OPT_WORD);
	ck_assert_int_eq(next(NULL, "-", &v, &i, &err), CC_OPT_WORD);
	ck_assert_int_eq(next(NULL, "--", &v, &i, &err), CC_OPT_WORD);
	/* A value the argv does not have, or an empty one where that is none. */
	ck_assert_int_eq(next(NULL, "--state", &v, &i, &err), -1);
	ck_assert_str_eq(err.msg, "--state: missing argument");
	ck_assert_int_eq(next(NULL, "--state=", &v, &i, &err), T_STATE);
	ck_assert_str_eq(v, "");
	cc_err_clear(&err);
	ck_assert_int_eq(next(NULL, "--name=", &v, &i, &err), -1);
	ck_assert_str_eq(err.msg, "--name: missing argument");
	cc_err_clear(&err);
	ck_assert_int_eq(next(NULL, "--name ''", &v, &i, &err), -1);
	ck_assert_str_eq(err.msg, "--name: missing argument");
	cc_err_clear(&err);
	ck_assert_int_eq(next(NULL, "--svg", &v, &i, &err), -1);
	ck_assert_str_eq(err.msg, "--svg: missing file name");
	cc_err_clear(&err);
	/* An option of some subcommands only. */
	ck_assert_int_eq(next("status", "--sample 5", &v, &i, &err), T_STATUS_ONLY);
	ck_assert_int_eq(next("top", "--sample=5", &v, &i, &err), T_STATUS_ONLY);
	ck_assert_int_eq(next("stat", "--sample 5", &v, &i, &err), CC_OPT_WORD);
	ck_assert_int_eq(next("reconcile", "--sample 5", &v, &i, &err), CC_OPT_WORD);
	ck_assert_int_eq(next(NULL, "--sample 5", &v, &i, &err), T_STATUS_ONLY);
	ck_assert_ptr_eq(cc_opts_find(tab, T_FIX), &tab[2]);
	ck_assert_ptr_null(cc_opts_find(tab, 99));
}
END_TEST

/* The subcommands of command `c` to look at: each, or NULL alone. */
static int subs_of(const struct cc_cli_command *c, char subs[][32], int max)
{
	int n = 0;

	if (!c->subs) {
		subs[n++][0] = '\0';
		return n;
	}
	for (const char *s = c->subs; *s && n < max;) {
		size_t len = strcspn(s, " ");

		snprintf(subs[n++], 32, "%.*s", (int)len, s);
		s += len + (s[len] == ' ');
	}
	return n;
}

/* `word` in `text` as a whole option: not followed by a letter, a digit
 * or '-' (so "--state" is not found in "--states"), nor preceded by one. */
static bool names(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text; (p = strstr(p, word)); p += n) {
		char after = p[n], before = p == text ? ' ' : p[-1];

		if (!(after == '-' || (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9')) &&
		    before != '-' && !(before >= 'a' && before <= 'z'))
			return true;
	}
	return false;
}

/* Every option of every table is in its command's --help. */
START_TEST(test_help_names_the_table)
{
	const char *bin = cc_test_bin("options");

	if (!bin)
		return;
	for (int k = 0; k < cc_cli_ncommands; k++) {
		const struct cc_cli_command *c = &cc_cli_commands[k];
		_cleanup_free_ char *out = NULL;

		ck_assert_msg(c->opts, "%s: no option table", c->name);
		ck_assert_int_eq(cc_test_sh(&out, "'%s' %s --help 2>&1", bin, c->name), 0);
		for (const struct cc_opt *o = c->opts; o->name; o++) {
			/* --help is what prints it. */
			if ((o->flags & CC_CLI_REFUSED) || o->id == CC_CLI_OPT_HELP)
				continue;
			ck_assert_msg(names(out, o->name), "corecarve %s --help does not name %s", c->name, o->name);
		}
	}
}
END_TEST

/* The completion of "corecarve CMD [SUB] -": the options bash offers,
 * space-separated and sorted. */
static char *completed(const char *cmd, const char *sub)
{
	char *out = NULL;

	ck_assert_int_eq(cc_test_sh(&out,
				    "bash -c '. \"%s/completion/corecarve.bash\"; COMP_WORDS=(corecarve %s %s -); "
				    "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _corecarve; printf \"%%s\\n\" \"${COMPREPLY[@]}\"' "
				    "| grep -- \"^-.\" | grep -vx -- \"--\" | sort | tr \"\\n\" \" \"",
				    CC_SOURCE_DIR, cmd, sub),
			 0);
	return out;
}

/* The table's options for `sub`, as the completion offers them: names,
 * not aliases; "--fix=" too for an optional value; sorted. */
static char *tabled(const struct cc_opt *opts, const char *sub)
{
	char *out = NULL, list[4096] = "";

	for (const struct cc_opt *o = opts; o->name; o++) {
		if ((o->flags & CC_CLI_REFUSED) || !cc_opts_for(o, *sub ? sub : NULL) || names(list, o->name))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\n", o->name);
		if (o->flags & CC_OPT_OPTIONAL_VALUE)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s=\n", o->name);
	}
	ck_assert_int_eq(cc_test_sh(&out, "printf '%%s' '%s' | sort | tr '\\n' ' '", list), 0);
	return out;
}

/* bash completes exactly each table's options, per subcommand. */
START_TEST(test_completion_is_the_table)
{
	for (int k = 0; k < cc_cli_ncommands; k++) {
		const struct cc_cli_command *c = &cc_cli_commands[k];
		char subs[8][32];
		int n = subs_of(c, subs, 8);

		for (int s = 0; s < n; s++) {
			_cleanup_free_ char *got = completed(c->name, subs[s]);
			_cleanup_free_ char *want = tabled(c->opts, subs[s]);

			ck_assert_msg(!strcmp(got, want), "corecarve %s %s: the completion offers \"%s\", the table \"%s\"",
				      c->name, subs[s], got, want);
		}
	}
}
END_TEST

/* Each option with a value, given none, is refused in the table's words:
 * every command parses through its table. */
START_TEST(test_values_asked_for)
{
	const char *bin = cc_test_bin("options");

	if (!bin)
		return;
	for (int k = 0; k < cc_cli_ncommands; k++) {
		const struct cc_cli_command *c = &cc_cli_commands[k];
		char subs[8][32];
		int n = subs_of(c, subs, 8);

		for (int s = 0; s < n; s++)
			for (const struct cc_opt *o = c->opts; o->name; o++) {
				_cleanup_free_ char *out = NULL;
				char want[128];

				if (!o->arg || !cc_opts_for(o, *subs[s] ? subs[s] : NULL))
					continue;
				snprintf(want, sizeof(want), "corecarve: %s: missing %s\n", o->name,
					 o->flags & CC_OPT_FILE_NAME ? "file name" : "argument");
				/* exec's own failures are 125: 2 is its command's. */
				ck_assert_int_eq(cc_test_sh(&out, "'%s' %s %s %s 2>&1 </dev/null", bin, c->name, subs[s], o->name),
						 c->run == cc_cmd_exec ? 125 : 2);
				ck_assert_msg(!strcmp(out, want), "corecarve %s %s %s: \"%s\", not \"%s\"", c->name, subs[s],
					      o->name, out, want);
			}
	}
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_next_forms);
	tcase_add_test(tc, test_help_names_the_table);
	tcase_add_test(tc, test_completion_is_the_table);
	tcase_add_test(tc, test_values_asked_for);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(options_suite)
