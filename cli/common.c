#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"

int cc_cli_common_opt(struct cc_cli_common *c, int argc, char **argv, int *i,
		      struct cc_err *err)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "--root", offsetof(struct cc_cli_common, root) },
		{ "--hwloc-xml", offsetof(struct cc_cli_common, xml) },
		{ "--synthetic", offsetof(struct cc_cli_common, synthetic) },
		{ "--policy", offsetof(struct cc_cli_common, policy) },
	};
	const char *a = argv[*i];

	if (strcmp(a, "--json") == 0) {
		c->json = true;
		return 1;
	}
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		size_t n = strlen(opts[k].name);
		const char **slot = (const char **)((char *)c + opts[k].off);

		if (strncmp(a, opts[k].name, n) != 0)
			continue;
		if (a[n] == '=') {
			*slot = a + n + 1;
			return 1;
		}
		if (a[n] != '\0')
			continue;
		if (*i + 1 >= argc)
			return cc_err_set(err, EINVAL, "%s: missing argument", opts[k].name);
		*slot = argv[++*i];
		return 1;
	}
	return 0;
}

const char *cc_cli_policy_path(const struct cc_cli_common *c)
{
	const char *env;

	if (c->policy)
		return c->policy;
	env = getenv("CORECARVE_POLICY");
	if (env && *env)
		return env;
	return NULL;
}

/* Seconds with at most three decimals: the decimal point is '.' whatever
 * the locale, and nothing finer than a millisecond is meant. */
static int parse_seconds(const char *v, unsigned max_s, unsigned *ms)
{
	unsigned long whole = 0, frac = 0;
	int digits = 0, fdigits = 0;
	const char *p = v;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (unsigned long)(*p - '0');
		if (whole > max_s)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && fdigits < 3; p++, fdigits++)
			frac = frac * 10 + (unsigned long)(*p - '0');
		for (int k = fdigits; k < 3; k++)
			frac *= 10;
	}
	if (*p || (!digits && !fdigits) || whole * 1000 + frac > (unsigned long)max_s * 1000)
		return -1;
	*ms = (unsigned)(whole * 1000 + frac);
	return 0;
}

/* An hour: a longer wait is a typo, and no runtime lets a hook run so long. */
#define LOCK_TIMEOUT_MAX_S 3600

int cc_cli_lock(struct cc_cli_lock *l, int argc, char **argv, struct cc_err *err)
{
	const char *v = getenv("CORECARVE_LOCK_TIMEOUT");
	size_t n;

	l->lock.wait_ms = CC_LEDGER_WAIT_MS;
	l->lock.holder = l->holder;
	if (v && *v && parse_seconds(v, LOCK_TIMEOUT_MAX_S, &l->lock.wait_ms) < 0)
		return cc_err_set(err, EINVAL,
				  "CORECARVE_LOCK_TIMEOUT: expected seconds from 0 to %d (e.g. 5 or 0.5), got \"%.32s\"",
				  LOCK_TIMEOUT_MAX_S, v);
	n = (size_t)snprintf(l->holder, sizeof(l->holder), "corecarve");
	for (int i = 0; i < argc && n < sizeof(l->holder); i++)
		n += (size_t)snprintf(l->holder + n, sizeof(l->holder) - n, " %s", argv[i]);
	return 0;
}

int cc_cli_load(const struct cc_cli_common *c, struct cc_root **rootp,
		struct cc_policy **policyp, struct cc_topo **topop, struct cc_err *err)
{
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	struct cc_topo_source src = { 0 };
	struct cc_topo *topo;
	int nsrc = !!c->root + !!c->xml + !!c->synthetic;

	if (nsrc > 1)
		return cc_err_set(err, EINVAL, "--root, --hwloc-xml and --synthetic exclude each other");
	root = cc_root_open(c->root ? c->root : "/", err);
	if (!root)
		return cc_err_prefix(err, "--root");
	policy = cc_policy_load(cc_cli_policy_path(c), err);
	if (!policy)
		return -1;
	src.root = root;
	src.overrides = policy->overrides;
	src.noverrides = policy->noverrides;
	src.caller_view = c->caller_view;
	if (c->xml) {
		src.kind = CC_TOPO_XML;
		src.arg = c->xml;
	} else if (c->synthetic) {
		src.kind = CC_TOPO_SYNTHETIC;
		src.arg = c->synthetic;
	} else {
		src.kind = CC_TOPO_HOST;
	}
	topo = cc_topo_load(&src, err);
	if (!topo)
		return -1;
	*topop = topo;
	if (policyp)
		*policyp = cc_steal_ptr(policy);
	if (rootp)
		*rootp = cc_steal_ptr(root);
	return 0;
}

int cc_cli_fail(const struct cc_err *err)
{
	const unsigned char *m = (const unsigned char *)(err->msg[0] ? err->msg : "unknown error");
	char line[4 * CC_ERR_MSG_MAX + 16];
	size_t n = 0;

	/* One line, whatever the message quotes (input from a file or an
	 * annotation may hold newlines and escape sequences), written at once. */
	for (; *m && n + 6 < sizeof(line); m++) {
		if (*m == '\n')
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\\n");
		else if (*m == '\t')
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\\t");
		else if (*m < 0x20 || *m == 0x7f)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\\x%02x", *m);
		else
			line[n++] = (char)*m;
	}
	line[n] = '\0';
	fprintf(stderr, "corecarve: %s\n", line);
	return CC_EXIT_ERROR;
}
