/* corecarve: who pays and who may (policy_int.h) — the policy's
 * withoutCpuLimit and minShared, a class's namespaces and caps.  The
 * decisions that read them are cc_admit_* (plugin/alloc/admit.h). */
#include "policy_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "policy_schema.h"

static const struct cc_yenum unlimited_values[] = {
	{ "refuse", CC_UNLIMITED_REFUSE },
	{ "allow", CC_UNLIMITED_ALLOW },
	{ NULL, 0 },
};

const char *cc_unlimited_name(enum cc_unlimited v)
{
	return cc_yenum_name(unlimited_values, (int)v);
}

int cc_policy_min_shared(const struct cc_policy *p, int unreserved)
{
	if (unreserved < 0)
		unreserved = 0;
	if (!p->min_shared_share)
		return p->min_shared < 0 ? 0 : p->min_shared;
	/* Rounded up: "25%" of a 2-CPU pool keeps one. */
	return (int)(((long long)unreserved * p->min_shared_pct + 99) / 100);
}

/* minShared: 2, or minShared: "25%" (a share of each pool, 0 to 100). */
static int parse_min_shared(struct cc_policy *p, const struct cc_ynode *n, struct cc_err *err)
{
	const char *s;
	char *end;
	long v;

	if (n->type == CC_YSCALAR && n->text[0] && n->text[strlen(n->text) - 1] == '%') {
		if (cc_ynode_string(n, &s, err) < 0)
			return -1;
		errno = 0;
		v = strtol(s, &end, 10);
		if (s[0] < '0' || s[0] > '9' || errno || *end != '%' || end[1] || v > 100)
			return cc_ynode_err(n, err, EINVAL, "expected a count of CPUs or a share from \"0%%\" to \"100%%\", got \"%.32s\"",
					    s);
		p->min_shared_pct = (int)v;
		p->min_shared_share = true;
		return 0;
	}
	long long c;

	if (cc_ynode_uint(n, 0, CC_CPU_LIMIT, &c, err) < 0)
		return -1;
	p->min_shared = (int)c;
	return 0;
}

/* withoutCpuLimit: {kubernetes: refuse, others: allow}. */
static int parse_unlimited(struct cc_policy *p, const struct cc_ynode *n, struct cc_err *err)
{
	static const char *const keys[] = { "kubernetes", "others", NULL };
	const struct cc_ynode *v;
	int k = (int)p->unlimited_kubernetes, o = (int)p->unlimited_other;

	if (cc_ynode_mapping(n, err) < 0 || cc_ynode_check_keys(n, keys, err) < 0)
		return -1;
	v = cc_ynode_get(n, "kubernetes");
	if (v && cc_ynode_enum(v, unlimited_values, &k, err) < 0)
		return -1;
	v = cc_ynode_get(n, "others");
	if (v && cc_ynode_enum(v, unlimited_values, &o, err) < 0)
		return -1;
	p->unlimited_kubernetes = (enum cc_unlimited)k;
	p->unlimited_other = (enum cc_unlimited)o;
	return 0;
}

int policy_parse_trust_top(struct cc_policy *p, const struct cc_ynode *root, struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(root, "minShared");

	if (n && parse_min_shared(p, n, err) < 0)
		return -1;
	n = cc_ynode_get(root, "withoutCpuLimit");
	return n ? parse_unlimited(p, n, err) : 0;
}

/* A namespace name or a glob of one: what a DNS label holds, and '*'. */
static bool namespace_pattern_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n >= CC_POLICY_NAMESPACE_LEN)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '*'))
			return false;
	return true;
}

static int parse_namespaces(const struct cc_ynode *n, struct cc_pclass *c, struct cc_err *err)
{
	char got[96];

	if (n->type != CC_YSEQUENCE || !n->first) {
		cc_ynode_describe(n, got, sizeof(got));
		return cc_ynode_err(n, err, EINVAL,
				    "expected a non-empty list of Kubernetes namespaces such as [trading, \"rt-*\"], got %s "
				    "(leave the key out to let every namespace use the class)",
				    got);
	}
	for (const struct cc_ynode *k = n->first; k; k = k->next) {
		const char *s;

		if (c->nnamespaces >= CC_POLICY_NAMESPACES_MAX)
			return cc_ynode_err(k, err, EINVAL, "more than %d namespaces: use a glob such as \"team-*\"",
					    CC_POLICY_NAMESPACES_MAX);
		if (cc_ynode_string(k, &s, err) < 0)
			return -1;
		if (!namespace_pattern_ok(s))
			return cc_ynode_err(k, err, EINVAL,
					    "\"%.63s\" is not a namespace name or glob (a-z, 0-9, '-' and '*', at most %d characters)",
					    s, CC_POLICY_NAMESPACE_LEN - 1);
		snprintf(c->namespaces[c->nnamespaces++], CC_POLICY_NAMESPACE_LEN, "%s", s);
	}
	return 0;
}

void cc_policy_resource_name(const struct cc_pclass *c, char *buf, size_t len)
{
	snprintf(buf, len, CC_RESOURCE_DOMAIN "%s" CC_RESOURCE_SUFFIX, c->name);
}

int policy_parse_class_trust(const struct cc_ynode *cls, struct cc_pclass *c, struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(cls, "namespaces");
	size_t room = CC_RESOURCE_NAME_MAX - strlen(CC_RESOURCE_SUFFIX);
	long long v;

	/* The kubelet refuses to register a resource whose name is not a
	 * qualified name: an exclusive class must make one. */
	if (c->exclusive && (strlen(c->name) > room || c->name[0] == '-'))
		return cc_ynode_err(cls, err, EINVAL,
				    "an exclusive class is published to Kubernetes as " CC_RESOURCE_DOMAIN "<name>"
				    CC_RESOURCE_SUFFIX ", so its name starts with a-z or 0-9 and has at most %zu "
				    "characters; rename the class",
				    room);

	if (n && parse_namespaces(n, c, err) < 0)
		return -1;
	n = cc_ynode_get(cls, "maxCpusPerPod");
	if (n) {
		if (cc_ynode_uint(n, 1, CC_CPU_LIMIT, &v, err) < 0)
			return -1;
		c->max_cpus_per_pod = (int)v;
	}
	n = cc_ynode_get(cls, "maxCpus");
	if (n) {
		if (cc_ynode_uint(n, 1, CC_CPU_LIMIT, &v, err) < 0)
			return -1;
		c->max_cpus = (int)v;
	}
	if ((c->nnamespaces || c->max_cpus_per_pod || c->max_cpus) && !c->exclusive)
		return cc_ynode_err(cc_ynode_get(cls, "exclusive"), err, EINVAL,
				    "false: namespaces, maxCpusPerPod and maxCpus are for classes that carve (exclusive: true)");
	return 0;
}

bool cc_policy_namespace_allowed(const struct cc_pclass *c, const char *ns)
{
	if (!c->nnamespaces)
		return true;
	for (int i = 0; i < c->nnamespaces; i++)
		if (ns[0] && fnmatch(c->namespaces[i], ns, 0) == 0)
			return true;
	return false;
}
