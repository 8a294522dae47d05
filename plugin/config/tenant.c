/* corecarve: who a container is and what it pays with (tenant.h). */
#include "tenant.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *ann_str(const json_t *a, const char *key)
{
	const json_t *v = json_is_object(a) ? json_object_get(a, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* RFC 1123 label: what the API server admits as a namespace name. */
static bool dns_label(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n >= CC_NAMESPACE_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

int cc_tenant_read(const json_t *annotations, long long cpu_quota, long long cpu_period, struct cc_tenant *out,
		   struct cc_err *err)
{
	const char *ns_ctrd = ann_str(annotations, CC_K8S_CONTAINERD_NAMESPACE);
	const char *ns_crio = ann_str(annotations, CC_K8S_CRIO_NAMESPACE);
	const char *ns = ns_ctrd ? ns_ctrd : ns_crio;

	memset(out, 0, sizeof(*out));
	out->kubernetes = ann_str(annotations, CC_K8S_CONTAINERD_TYPE) || ann_str(annotations, CC_K8S_CRIO_TYPE);
	/* A runtime writes one of the two; both, and different, means a pod
	 * wrote the other through an annotation passthrough. */
	if (ns_ctrd && ns_crio && strcmp(ns_ctrd, ns_crio))
		return cc_err_set(err, EINVAL,
				  "annotations %s \"%.63s\" and %s \"%.63s\" disagree: one of them was not written by the "
				  "runtime (remove the pod's copy; check containerd's pod_annotations)",
				  CC_K8S_CONTAINERD_NAMESPACE, ns_ctrd, CC_K8S_CRIO_NAMESPACE, ns_crio);
	if (ns && out->kubernetes) {
		if (!dns_label(ns))
			return cc_err_set(err, EINVAL,
					  "annotation %s: \"%.63s\" is not a Kubernetes namespace name (a DNS label of "
					  "a-z, 0-9 and '-')",
					  ns_ctrd ? CC_K8S_CONTAINERD_NAMESPACE : CC_K8S_CRIO_NAMESPACE, ns);
		snprintf(out->namespace_, sizeof(out->namespace_), "%s", ns);
	}
	/* The runtimes: a quota of 0 or below is none (runc, crun); a
	 * period left out is the kernel's default. */
	out->cpu_quota = cpu_quota > 0 ? cpu_quota : -1;
	out->cpu_period = cpu_period > 0 ? cpu_period : 100000;
	return 0;
}

long long cc_tenant_paid_cpus(const struct cc_tenant *t)
{
	return t->cpu_quota > 0 ? t->cpu_quota / t->cpu_period : -1;
}
