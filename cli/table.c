/* corecarve CLI: tables through libsmartcols, loaded on first use (table.h
 * says why it is not linked). */
#define _GNU_SOURCE
#include "table.h"

#include <dlfcn.h>
#include <errno.h>
#include <libsmartcols.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"

#define SCOLS_SONAME "libsmartcols.so.1"

/* The functions used, typed from the library's own header. */
#define SCOLS_FUNCS(X)                                                                                                 \
	X(scols_new_table)                                                                                             \
	X(scols_unref_table)                                                                                           \
	X(scols_table_new_column)                                                                                      \
	X(scols_table_new_line)                                                                                        \
	X(scols_line_set_data)                                                                                         \
	X(scols_table_enable_raw)                                                                                      \
	X(scols_table_enable_noheadings)                                                                               \
	X(scols_table_set_termforce)                                                                                   \
	X(scols_table_set_termwidth)                                                                                   \
	X(scols_table_set_stream)                                                                                      \
	X(scols_print_table)                                                                                           \
	X(scols_column_set_wrapfunc)                                                                                   \
	X(scols_column_get_width)

static struct {
	void *handle;
#define X(f) __typeof__(f) *f;
	SCOLS_FUNCS(X)
#undef X
} lib;

static int load(struct cc_err *err)
{
	void *h;

	if (lib.handle)
		return 0;
	h = dlopen(SCOLS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return cc_err_set(err, ENOENT, "cannot print a table: %s (install libsmartcols1, util-linux's table library)",
				  dlerror());
#define X(f)                                                                                                           \
	if (!(lib.f = (__typeof__(f) *)dlsym(h, #f))) {                                                                \
		dlclose(h);                                                                                            \
		return cc_err_set(err, ENOENT, "cannot print a table: %s lacks %s (libsmartcols 2.29 or later needed)", \
				  SCOLS_SONAME, #f);                                                                   \
	}
	SCOLS_FUNCS(X)
#undef X
	lib.handle = h;
	return 0;
}

bool cc_table_loaded(void)
{
	return lib.handle != NULL;
}

/* ---- options ------------------------------------------------------------------ */

int cc_table_set(struct cc_table_opts *o, int id, const char *val, struct cc_err *err)
{
	char *end;
	long w;

	switch (id) {
	case CC_CLI_OPT_NO_HEADERS:
		o->noheadings = true;
		return 1;
	case CC_CLI_OPT_RAW:
		o->raw = true;
		return 1;
	case CC_CLI_OPT_OUTPUT:
		o->output = val;
		return 1;
	case CC_CLI_OPT_WIDTH:
		errno = 0;
		w = strtol(val, &end, 10);
		if (!*val || *end || errno || w < 20 || w > 10000)
			return cc_err_set(err, EINVAL, "--width: expected a number of columns from 20 to 10000, got \"%s\"", val);
		o->width = (int)w;
		return 1;
	}
	return 0;
}

void cc_table_usage(FILE *out, const struct cc_table_col *cols, int ncols, const char *defaults)
{
	fprintf(out, "table options:\n"
		     "  -o, --output LIST  the columns to show, comma-separated (\"+LIST\": the default ones and LIST)\n"
		     "  -n, --no-headers   no header line\n"
		     "  -r, --raw          cells separated by one space, nothing aligned, cut or wrapped\n"
		     "  --width N          lay out for N columns (default: the terminal's; unlimited in a pipe)\n");
	if (ncols)
		fprintf(out, "columns (default %s):\n", defaults);
	for (int c = 0; c < ncols; c++)
		fprintf(out, "  %-12s %s\n", cols[c].name, cols[c].help ? cols[c].help : "");
}

/* ---- the table ----------------------------------------------------------------- */

#define CC_TABLE_MAXCOLS 16

struct cc_table {
	struct libscols_table *tb;
	int ncols;                     /* of the definition */
	int nshown;
	int shown[CC_TABLE_MAXCOLS];   /* definition index of each printed column */
};

/* Wrap at spaces, not in the middle of a CPU list or a path: libsmartcols
 * asks for the widest piece that cannot be broken, then for each chunk. */
static size_t wrap_chunksize(const struct libscols_column *cl, const char *data, void *u)
{
	size_t best = 0, cur = 0;

	(void)cl;
	(void)u;
	for (const char *p = data; p && *p; p++) {
		cur = *p == ' ' ? 0 : cur + 1;
		if (cur > best)
			best = cur;
	}
	return best;
}

static char *wrap_nextchunk(const struct libscols_column *cl, char *data, void *u)
{
	size_t w = lib.scols_column_get_width(cl), n;
	char *cut = NULL;

	(void)u;
	if (!data || (n = strlen(data)) <= w)
		return NULL;
	for (size_t i = 1; i <= w; i++)
		if (data[i] == ' ')
			cut = data + i;
	/* A word wider than the column overflows it rather than being cut. */
	if (!cut && !(cut = strchr(data + w, ' ')))
		return NULL;
	*cut = '\0';
	return cut + 1;
}

static int find_col(const struct cc_table_col *cols, int ncols, const char *name, size_t len)
{
	for (int c = 0; c < ncols; c++)
		if (strlen(cols[c].name) == len && !strncasecmp(cols[c].name, name, len))
			return c;
	return -1;
}

/* Append the columns a comma-separated list names to `t->shown`. */
static int choose(struct cc_table *t, const struct cc_table_col *cols, int ncols, const char *list, const char *what,
		  struct cc_err *err)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		int c = find_col(cols, ncols, p, len);

		if (c < 0) {
			char known[512] = "";
			size_t off = 0;

			for (int k = 0; k < ncols && off < sizeof(known); k++)
				off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s", k ? ", " : "", cols[k].name);
			return cc_err_set(err, EINVAL, "%s: unknown column \"%.*s\" (columns: %s)", what, (int)len, p, known);
		}
		if (t->nshown >= CC_TABLE_MAXCOLS)
			return cc_err_set(err, EINVAL, "%s: more than %d columns", what, CC_TABLE_MAXCOLS);
		t->shown[t->nshown++] = c;
		p += len;
		p += *p == ',';
	}
	return 0;
}

struct cc_table *cc_table_new(const struct cc_table_col *cols, int ncols, const char *defaults,
			      const struct cc_table_opts *o, struct cc_err *err)
{
	struct cc_table *t;
	const char *out = o ? o->output : NULL;
	bool fit;

	if (ncols > CC_TABLE_MAXCOLS)
		return cc_err_set(err, EINVAL, "table: %d columns", ncols), NULL;
	if (out && (!*out || !strcmp(out, "+")))
		return cc_err_set(err, EINVAL, "--output: no column named"), NULL;
	if (load(err) < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return cc_err_sys(err, ENOMEM, "table"), NULL;
	t->ncols = ncols;
	if ((!out || out[0] == '+') && choose(t, cols, ncols, defaults, "table defaults", err) < 0)
		goto fail;
	if (out && choose(t, cols, ncols, out[0] == '+' ? out + 1 : out, "--output", err) < 0)
		goto fail;
	if (!(t->tb = lib.scols_new_table()))
		goto nomem;
	if (o && o->raw)
		lib.scols_table_enable_raw(t->tb, 1);
	if (o && o->noheadings)
		lib.scols_table_enable_noheadings(t->tb, 1);
	if (o && o->width) {
		lib.scols_table_set_termforce(t->tb, SCOLS_TERMFORCE_ALWAYS);
		lib.scols_table_set_termwidth(t->tb, (size_t)o->width);
	}
	/* Without a width (a pipe, a file) nothing is cut or wrapped: a
	 * script gets whole cells, as from lsblk. */
	fit = (o && o->width) || isatty(STDOUT_FILENO);
	for (int i = 0; i < t->nshown; i++) {
		const struct cc_table_col *c = &cols[t->shown[i]];
		int fl = (fit && c->flags & CC_COL_TRUNC ? SCOLS_FL_TRUNC : 0) |
			 (fit && c->flags & CC_COL_WRAP ? SCOLS_FL_WRAP : 0) | (c->flags & CC_COL_RIGHT ? SCOLS_FL_RIGHT : 0);
		struct libscols_column *cl = lib.scols_table_new_column(t->tb, c->name, c->whint, fl);

		if (!cl)
			goto nomem;
		if (fl & SCOLS_FL_WRAP)
			lib.scols_column_set_wrapfunc(cl, wrap_chunksize, wrap_nextchunk, NULL);
	}
	return t;
nomem:
	cc_err_sys(err, ENOMEM, "table");
fail:
	cc_table_free(t);
	return NULL;
}

int cc_table_row(struct cc_table *t, const char *const *cells, struct cc_err *err)
{
	struct libscols_line *ln = lib.scols_table_new_line(t->tb, NULL);

	if (!ln)
		return cc_err_sys(err, ENOMEM, "table");
	for (int i = 0; i < t->nshown; i++) {
		const char *v = cells[t->shown[i]];

		if (lib.scols_line_set_data(ln, (size_t)i, v ? v : "") < 0)
			return cc_err_sys(err, ENOMEM, "table");
	}
	return 0;
}

int cc_table_print(struct cc_table *t, FILE *out, struct cc_err *err)
{
	int r;

	fflush(out);
	lib.scols_table_set_stream(t->tb, out);
	/* The write's own errno names the cause (EPIPE: `| head` under a
	 * systemd unit, which ignores SIGPIPE); libsmartcols may return -1. */
	errno = 0;
	r = lib.scols_print_table(t->tb);
	if (r < 0 || fflush(out) == EOF || ferror(out))
		return cc_err_sys(err, errno ? errno : r < -1 ? -r : EIO, "cannot write the table");
	return 0;
}

void cc_table_free(struct cc_table *t)
{
	if (!t)
		return;
	if (t->tb)
		lib.scols_unref_table(t->tb);
	free(t);
}

void cc_table_freep(struct cc_table **t)
{
	cc_table_free(*t);
	*t = NULL;
}
