/* corecarve policy: what the node's policy means to the cluster.
 * `quotas` prints the ResourceQuota objects that keep the namespaces a
 * class's `namespaces` leaves out at 0 of its resource
 * (cc_policy_quotas), so the API server refuses at creation the pods
 * the hook would refuse at start. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "tenant.h"

/* Bounds on what `-` reads: a cluster's namespaces, one a line. */
#define NS_MAX 100000
#define NS_LINE_MAX 256

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve policy quotas [--policy FILE] [--root DIR] NAMESPACE... | -\n\n"
		"quotas: print, as YAML for kubectl apply, a ResourceQuota \"" CC_QUOTA_NAME "\" for each\n"
		"NAMESPACE that an exclusive class's namespaces list leaves out, holding it at\n"
		"requests." CC_RESOURCE_DOMAIN "<class>" CC_RESOURCE_SUFFIX ": \"0\" of each such class: the API\n"
		"server then refuses those pods when they are created, as the hook would refuse them\n"
		"when they start.  A namespace every class admits gets none.  \"-\" reads the names\n"
		"from standard input, one a line, as kubectl prints them:\n\n"
		"  kubectl get namespaces -o name | corecarve policy quotas - | kubectl apply -f -\n\n"
		"Run it again when a namespace is made or the policy changes.  The policy: --policy,\n"
		"else $CORECARVE_POLICY, else " CC_POLICY_PATH " (the embedded default when absent).\n");
}

struct names {
	char **v;
	int n, cap;
};

static void names_fini(struct names *ns)
{
	for (int i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int names_add(struct names *ns, const char *s, size_t len, struct cc_err *err)
{
	if (ns->n >= NS_MAX)
		return cc_err_set(err, E2BIG, "policy quotas: more than %d namespaces", NS_MAX);
	if (ns->n == ns->cap) {
		int cap = ns->cap ? 2 * ns->cap : 64;
		char **v = realloc(ns->v, (size_t)cap * sizeof(*v));

		if (!v)
			return cc_err_sys(err, ENOMEM, "policy quotas");
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n] = strndup(s, len);
	if (!ns->v[ns->n])
		return cc_err_sys(err, ENOMEM, "policy quotas");
	ns->n++;
	return 0;
}

/* One name a line: blank lines and "#" comments skipped, surrounding
 * blanks trimmed, kubectl's "namespace/" (or "namespaces/") taken off. */
static int read_names(FILE *in, struct names *ns, struct cc_err *err)
{
	char line[NS_LINE_MAX + 2];
	int lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		char *s = line, *e;

		lineno++;
		if (!strchr(line, '\n') && !feof(in))
			return cc_err_set(err, EINVAL, "policy quotas: standard input line %d: longer than %d bytes",
					  lineno, NS_LINE_MAX);
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == s || *s == '#')
			continue;
		if (!strncmp(s, "namespace/", 10))
			s += 10;
		else if (!strncmp(s, "namespaces/", 11))
			s += 11;
		if (names_add(ns, s, (size_t)(e - s), err) < 0)
			return -1;
	}
	if (ferror(in))
		return cc_err_sys(err, errno ? errno : EIO, "policy quotas: standard input");
	return 0;
}

const struct cc_opt cc_opts_policy[] = {
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, "quotas" },
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, "quotas" },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static int quotas(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common common = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *p = NULL;
	struct names ns = { 0 };
	bool from_stdin = false;
	int rc = CC_EXIT_ERROR;

	for (int i = 2; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_policy, "quotas", argc, argv, &i, &v, &err);

		switch (id) {
		case -1:
			goto out;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			names_fini(&ns);
			return CC_EXIT_OK;
		case CC_OPT_WORD:
			if (!strcmp(v, "-")) {
				from_stdin = true;
				break;
			}
			if (v[0] != '-') {
				if (names_add(&ns, v, strlen(v), &err) < 0)
					goto out;
				break;
			}
			cc_err_set(&err, EINVAL, "policy quotas: unexpected argument \"%s\" (see corecarve policy --help)", v);
			goto out;
		default:
			cc_cli_common_set(&common, id, v);
		}
	}
	if (from_stdin && read_names(stdin, &ns, &err) < 0)
		goto out;
	if (!ns.n) {
		cc_err_set(&err, EINVAL,
			   "policy quotas: name the namespaces (arguments, or - to read them: kubectl get namespaces "
			   "-o name | corecarve policy quotas -)");
		goto out;
	}
	root = cc_root_open(common.root ? common.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		goto out;
	}
	p = cc_policy_load_in(root, cc_cli_policy_path(&common), &err);
	if (!p)
		goto out;
	if (cc_policy_quotas(p, ns.v, ns.n, stdout, &err) < 0) {
		cc_err_prefix(&err, "policy quotas");
		goto out;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cc_err_sys(&err, errno ? errno : EIO, "policy quotas: standard output");
		goto out;
	}
	rc = CC_EXIT_OK;
out:
	names_fini(&ns);
	return rc == CC_EXIT_OK ? rc : cc_cli_fail(&err);
}

int cc_cmd_policy(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CC_EXIT_ERROR : CC_EXIT_OK;
	}
	if (!strcmp(argv[1], "quotas"))
		return quotas(argc, argv);
	cc_err_set(&err, EINVAL, "policy: unknown subcommand \"%s\" (expected quotas)", argv[1]);
	return cc_cli_fail(&err);
}
