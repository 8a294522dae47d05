/* corecarve: the Kubernetes ResourceQuota objects that make the API
 * server refuse, at pod creation, what the hook would refuse at start by
 * a class's `namespaces` (corecarve policy quotas, policy.h).  A class is
 * requested as the extended resource corecarve.io/<class>-cores; a
 * ResourceQuota with requests.<resource>: "0" in a namespace makes the
 * API server refuse every pod of that namespace that requests it
 * (ResourceQuota admission; extended resources take only the requests.
 * prefix).  Pure: the policy and the names in, YAML out. */
#define _GNU_SOURCE
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "tenant.h"

/* Whether class `c` is one a namespace can be kept out of. */
static bool limits_namespaces(const struct cc_pclass *c)
{
	return c->exclusive && c->nnamespaces > 0;
}

/* The policy's source in a YAML comment: a path with a control character
 * would end the comment, so it is named "?" then. */
static const char *comment_safe(const char *s)
{
	for (const char *q = s; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return "?";
	return s;
}

static void header(const struct cc_policy *p, FILE *out)
{
	int n = 0;

	fprintf(out, "# ResourceQuotas from corecarve policy %s (corecarve policy quotas).\n",
		comment_safe(p->source));
	for (int i = 0; i < p->nclasses; i++) {
		const struct cc_pclass *c = &p->classes[i];
		char res[128];

		if (!limits_namespaces(c))
			continue;
		cc_policy_resource_name(c, res, sizeof(res));
		fprintf(out, "# %s: only namespaces ", res);
		for (int k = 0; k < c->nnamespaces; k++)
			fprintf(out, "%s%s", k ? ", " : "", c->namespaces[k]);
		fprintf(out, " (classes.%s.namespaces)\n", c->name);
		n++;
	}
	if (!n)
		fprintf(out, "# No exclusive class names namespaces: every namespace may use every class, and\n"
			     "# there is nothing to apply.\n");
	else
		fprintf(out, "# Each namespace below is kept at 0 of the classes that leave it out; a namespace\n"
			     "# every class admits gets no quota.  Apply with kubectl apply -f -; run again when\n"
			     "# a namespace is made or the policy changes (delete the quota of a namespace that\n"
			     "# no longer gets one).\n");
}

int cc_policy_quotas(const struct cc_policy *p, char *const *ns, int n, FILE *out, struct cc_err *err)
{
	_cleanup_json_ json_t *seen = NULL;

	/* Every name checked before a line is written. */
	for (int i = 0; i < n; i++)
		if (!cc_tenant_namespace_ok(ns[i]))
			return cc_err_set(err, EINVAL,
					  "namespace \"%.80s\": not a Kubernetes namespace name (a-z, 0-9 and '-', "
					  "at most %d characters, starting and ending with a letter or digit)",
					  ns[i], CC_NAMESPACE_MAX - 1);
	/* A repeated name once: the names seen, in a hash (jansson's object),
	 * not a scan of those before (a cluster's list may be long). */
	seen = json_object();
	if (!seen)
		return cc_err_sys(err, ENOMEM, "policy quotas");
	header(p, out);
	for (int i = 0; i < n; i++) {
		bool first = true;

		if (json_object_get(seen, ns[i]))
			continue;
		if (json_object_set_new(seen, ns[i], json_true()) < 0)
			return cc_err_sys(err, ENOMEM, "policy quotas");
		for (int c = 0; c < p->nclasses; c++) {
			const struct cc_pclass *pc = &p->classes[c];
			char res[128];

			if (!limits_namespaces(pc) || cc_policy_namespace_allowed(pc, ns[i]))
				continue;
			if (first)
				fprintf(out, "---\n"
					     "apiVersion: v1\n"
					     "kind: ResourceQuota\n"
					     "metadata:\n"
					     "  name: " CC_QUOTA_NAME "\n"
					     "  namespace: %s\n"
					     "  labels:\n"
					     "    app.kubernetes.io/managed-by: corecarve\n"
					     "spec:\n"
					     "  hard:\n",
					ns[i]);
			first = false;
			cc_policy_resource_name(pc, res, sizeof(res));
			fprintf(out, "    requests.%s: \"0\"\n", res);
		}
	}
	return 0;
}
