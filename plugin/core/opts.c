/* corecarve: the one option table (opts.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "opts.h"

bool cc_opts_for(const struct cc_opt *o, const char *sub)
{
	size_t n;

	if (!o->subs || !sub)
		return true;
	n = strlen(sub);
	for (const char *s = o->subs; (s = strstr(s, sub)); s += n)
		if ((s == o->subs || s[-1] == ' ') && (s[n] == ' ' || !s[n]))
			return true;
	return false;
}

const struct cc_opt *cc_opts_find(const struct cc_opt *tab, int id)
{
	for (; tab->name; tab++)
		if (tab->id == id)
			return tab;
	return NULL;
}

/* argv word `a` names `o`: the length of the name it was written with,
 * 0 when it does not. */
static size_t names(const struct cc_opt *o, const char *a)
{
	const char *forms[] = { o->name, o->alias };

	for (int k = 0; k < 2; k++) {
		size_t n = forms[k] ? strlen(forms[k]) : 0;

		if (n && !strncmp(a, forms[k], n) && (!a[n] || a[n] == '='))
			return n;
	}
	return 0;
}

int cc_opts_next(const struct cc_opt *tab, const char *sub, int argc, char **argv, int *i, const char **val,
		 struct cc_err *err)
{
	const char *a = argv[*i];

	*val = a;
	if (a[0] != '-' || !strcmp(a, "-") || !strcmp(a, "--"))
		return CC_OPT_WORD;
	for (const struct cc_opt *o = tab; o->name; o++) {
		size_t n = names(o, a);

		if (!n || !cc_opts_for(o, sub))
			continue;
		if (!o->arg) {
			if (a[n] == '=' && !(o->flags & CC_OPT_OPTIONAL_VALUE))
				return CC_OPT_WORD;
			*val = a[n] == '=' ? a + n + 1 : NULL;
			return o->id;
		}
		if (a[n] == '=')
			*val = a + n + 1;
		else if (*i + 1 < argc)
			*val = argv[++*i];
		else
			*val = NULL;
		if (!*val || (!**val && (o->flags & (CC_OPT_NONEMPTY | CC_OPT_FILE_NAME))))
			return cc_err_set(err, EINVAL, "%.*s: missing %s", (int)n, a,
					  o->flags & CC_OPT_FILE_NAME ? "file name" : "argument");
		return o->id;
	}
	return CC_OPT_WORD;
}
