#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "doctor.h"
#include "ledger.h"

/* The --root the command line named, for the hint cc_cli_fail adds to a
 * cgroup error (entry points only: the library never sees it). */
static const char *named_root;

int cc_cli_common_set(struct cc_cli_common *c, int id, const char *val)
{
	switch (id) {
	case CC_CLI_OPT_ROOT:
		c->root = named_root = val;
		return 1;
	case CC_CLI_OPT_XML:
		c->xml = val;
		return 1;
	case CC_CLI_OPT_SYNTHETIC:
		c->synthetic = val;
		return 1;
	case CC_CLI_OPT_POLICY:
		c->policy = val;
		return 1;
	case CC_CLI_OPT_JSON:
		c->json = true;
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
	/* NULL: the root's own (cc_policy_load_in): a captured tree carries
	 * the policy it was captured with, read beneath the tree's root. */
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
	l->lock.refused = NULL;
	if (v && *v && parse_seconds(v, LOCK_TIMEOUT_MAX_S, &l->lock.wait_ms) < 0)
		return cc_err_set(err, EINVAL,
				  "CORECARVE_LOCK_TIMEOUT: expected seconds from 0 to %d (e.g. 5 or 0.5), got \"%.32s\"",
				  LOCK_TIMEOUT_MAX_S, v);
	n = (size_t)snprintf(l->holder, sizeof(l->holder), "corecarve");
	for (int i = 0; i < argc && n < sizeof(l->holder); i++)
		n += (size_t)snprintf(l->holder + n, sizeof(l->holder) - n, " %s", argv[i]);
	return 0;
}

void cc_cli_lock_deferred(struct cc_cli_lock *l, int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;

	if (cc_cli_lock(l, argc, argv, &err) == 0)
		return;
	snprintf(l->refused, sizeof(l->refused), "%s", err.msg);
	l->lock.wait_ms = CC_LEDGER_WAIT_MS;
	l->lock.refused = l->refused;
	/* The holder line as cc_cli_lock would have written it. */
	snprintf(l->holder, sizeof(l->holder), "corecarve");
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
	policy = cc_policy_load_in(root, cc_cli_policy_path(c), err);
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

/* "corecarve needs the unified hierarchy" alone names no fix: add what
 * doctor's cgroup check finds (hybrid or legacy layout) and its remedy. */
static void cgroup_hint(const char *msg, char *out, size_t len)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_cgroup_layout l;
	char found[CC_DOCTOR_TEXT_MAX], fix[CC_DOCTOR_TEXT_MAX];

	out[0] = '\0';
	if (!strstr(msg, "corecarve needs the unified hierarchy") || !(root = cc_root_open(named_root ? named_root : "/", &e)))
		return;
	cc_doctor_cgroup_layout(root, &l);
	if (!l.known)
		return;
	cc_doctor_cgroup_explain(root, &l, found, sizeof(found), fix, sizeof(fix));
	/* The first sentence of the fix: the rest is doctor's. */
	if (strstr(fix, ". "))
		*strstr(fix, ". ") = '\0';
	snprintf(out, len, ": %s; %s (corecarve doctor explains)", found, fix);
}

int cc_cli_fail(const struct cc_err *err)
{
	const unsigned char *m = (const unsigned char *)(err->msg[0] ? err->msg : "unknown error");
	char line[4 * CC_ERR_MSG_MAX + 16], hint[2 * CC_DOCTOR_TEXT_MAX + 64];
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
	cgroup_hint((const char *)line, hint, sizeof(hint));
	fprintf(stderr, "corecarve: %s%s\n", line, hint);
	return CC_EXIT_ERROR;
}

/* A tree's own state directory, TREE/run/corecarve, which the ledger
 * then opens by name: a link on the way (run -> /run) would read the
 * node's, so none is accepted.  Absent reads as no carves, like an
 * absent default. */
static int tree_state_dir(const char *tree, char *buf, size_t len, const char **dir, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open(tree, &e);
	int fd;

	snprintf(buf, len, "%s" CC_LEDGER_DIR, tree);
	*dir = buf;
	if (!root)
		return 0; /* the command's own open of the root says why */
	fd = cc_root_open_nofollow(root, CC_LEDGER_DIR, O_PATH | O_DIRECTORY, &e);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (e.code == ENOENT)
		return 0;
	return cc_err_set(err, e.code,
			  "--root %s: %s: %s (the tree's state is read beneath it, never through a link; name it "
			  "with --state DIR)",
			  tree, CC_LEDGER_DIR, e.code == ELOOP || e.code == EXDEV ? "a link on the way" : strerror(e.code));
}

int cc_cli_state_dir(const char *opt, const char *root, char *buf, size_t len, const char **dir,
		     struct cc_err *err)
{
	const char *env = getenv("CORECARVE_STATE_DIR"), *what = "--state";
	struct stat st;

	*dir = NULL;
	/* The variable names this node's state (the hook's environment sets
	 * it): a captured tree is read with its own unless --state says
	 * otherwise, never with the node's. */
	if ((!opt || !*opt) && (!root || !strcmp(root, "/"))) {
		opt = env && *env ? env : NULL;
		what = "CORECARVE_STATE_DIR";
	}
	if (opt) {
		if (stat(opt, &st) < 0 || !S_ISDIR(st.st_mode))
			return cc_err_set(err, ENOENT,
					  "%s %s: %s (the hook's state directory is " CC_LEDGER_DIR
					  " unless its hooks.d entry or environment sets CORECARVE_STATE_DIR; a wrong one "
					  "would read as a node with no carves)",
					  what, opt, stat(opt, &st) < 0 ? "no such directory" : "not a directory");
		*dir = opt;
		return 0;
	}
	/* A captured tree carries its own ledger; the host's describes another
	 * machine. */
	if (root && strcmp(root, "/"))
		return tree_state_dir(root, buf, len, dir, err);
	return 0;
}

void cc_cli_ledger_hint(struct cc_err *err)
{
	size_t n = strlen(err->msg);

	if (err->code == EACCES || (err->code == EPERM && strstr(err->msg, "owned by uid")))
		snprintf(err->msg + n, sizeof(err->msg) - n,
			 " (the ledger is root's, mode 0700: run corecarve as root)");
	else if (err->code == EINVAL || err->code == EPROTO || err->code == EFBIG)
		snprintf(err->msg + n, sizeof(err->msg) - n,
			 " (a damaged ledger: `corecarve status --kernel` shows the node's partitions without it; "
			 "recovery: corecarve(8), DAMAGED LEDGER)");
}

struct cc_ledger *cc_cli_ledger_open(const char *dir, enum cc_ledger_mode mode, const struct cc_ledger_lock *lock,
				     struct cc_err *err)
{
	struct cc_ledger *l = cc_ledger_open_as(dir, mode, lock, err);

	if (!l)
		cc_cli_ledger_hint(err);
	return l;
}
