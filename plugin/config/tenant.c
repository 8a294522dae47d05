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

bool cc_tenant_namespace_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n >= CC_NAMESPACE_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

/* Which runtime wrote the spec, from its own container-type key: both
 * keys means a pod wrote one of them (each runtime copies the pod's
 * annotations in), and nothing it says can be believed. */
static int runtime_of(const json_t *a, bool *containerd, bool *crio, struct cc_err *err)
{
	*containerd = ann_str(a, CC_K8S_CONTAINERD_TYPE) != NULL;
	*crio = ann_str(a, CC_K8S_CRIO_TYPE) != NULL;
	if (*containerd && *crio)
		return cc_err_set(err, EINVAL,
				  "annotations %s and %s: both runtimes' container-type keys are in the spec, so one was "
				  "copied from the pod (remove the pod's annotation; check containerd's pod_annotations "
				  "and CRI-O's allowed_annotations)",
				  CC_K8S_CONTAINERD_TYPE, CC_K8S_CRIO_TYPE);
	return 0;
}

int cc_tenant_read(const json_t *annotations, const struct cc_tenant_cpu *cpu, struct cc_tenant *out,
		   struct cc_err *err)
{
	const char *ns = NULL, *ns_key = NULL, *type;
	bool containerd, crio;

	memset(out, 0, sizeof(*out));
	if (runtime_of(annotations, &containerd, &crio, err) < 0)
		return -1;
	out->kubernetes = containerd || crio;
	if (containerd) {
		/* containerd's CRI (WithAnnotation after the pod's, in
		 * containerSpec) writes the sandbox's namespace on every
		 * container. */
		ns_key = CC_K8S_CONTAINERD_NAMESPACE;
	} else if (crio) {
		/* CRI-O (SpecAddAnnotations): the sandbox's annotations, its
		 * own keys (no namespace on a container), the kubelet's
		 * annotations, then the kubelet's labels, which name the pod's
		 * namespace and come last.  Its Namespace key is written on a
		 * sandbox only: on a container the pod put it there. */
		type = ann_str(annotations, CC_K8S_CRIO_TYPE);
		if (strcmp(type, "sandbox") && ann_str(annotations, CC_K8S_CRIO_NAMESPACE))
			return cc_err_set(err, EINVAL,
					  "annotation %s: CRI-O writes it on a pod's sandbox only, so on this container "
					  "the pod wrote it; remove it from the pod's annotations",
					  CC_K8S_CRIO_NAMESPACE);
		ns_key = strcmp(type, "sandbox") ? CC_K8S_LABEL_NAMESPACE : CC_K8S_CRIO_NAMESPACE;
	}
	ns = ns_key ? ann_str(annotations, ns_key) : NULL;
	if (ns) {
		if (!cc_tenant_namespace_ok(ns))
			return cc_err_set(err, EINVAL,
					  "annotation %s: \"%.63s\" is not a Kubernetes namespace name (a DNS label of "
					  "a-z, 0-9 and '-')",
					  ns_key, ns);
		snprintf(out->namespace_, sizeof(out->namespace_), "%s", ns);
	}
	/* Bounded so that the arithmetic below cannot overflow: the
	 * kernel takes no quota above about 2^44 us, no period above 1 s,
	 * and cgroup v1 no shares above 262144 (the kubelet's MaxShares). */
	if (cpu && (cpu->quota > (1LL << 46) || cpu->period > 1000000 || cpu->shares > 262144))
		return cc_err_set(err, ERANGE,
				  "config.json: linux.resources.cpu: quota %lld, period %lld or shares %lld is beyond what "
				  "the kernel takes (quota 2^46, period 1000000, shares 262144); fix the container's CPU "
				  "resources",
				  cpu->quota, cpu->period, cpu->shares);
	/* The runtimes: a quota of 0 or below is none (runc, crun); a
	 * period left out is the kernel's default. */
	out->cpu_quota = cpu && cpu->quota > 0 ? cpu->quota : -1;
	out->cpu_period = cpu && cpu->period > 0 ? cpu->period : 100000;
	out->cpu_shares = cpu && cpu->shares >= 0 ? cpu->shares : -1;
	return 0;
}

long long cc_tenant_paid_cpus(const struct cc_tenant *t)
{
	return t->cpu_quota > 0 ? t->cpu_quota / t->cpu_period : -1;
}

long long cc_tenant_guaranteed_cpus(const struct cc_tenant *t, long long *req_milli, long long *lim_milli)
{
	/* The kubelet (pkg/kubelet/cm/helpers_linux.go): shares =
	 * milliCPU * 1024 / 1000 (MilliCPUToShares, at least 2), quota =
	 * milliCPU * period / 1000 (MilliCPUToQuota).  A request of N whole
	 * CPUs is exactly N * 1024 shares: one millicore more or less is
	 * another number. */
	long long req = t->cpu_shares >= 0 ? (t->cpu_shares * 1000 + 512) / 1024 : -1;
	long long lim = t->cpu_quota > 0 ? t->cpu_quota * 1000 / t->cpu_period : -1;
	long long n;

	if (req_milli)
		*req_milli = req;
	if (lim_milli)
		*lim_milli = lim;
	if (lim <= 0 || (t->cpu_quota * 1000) % t->cpu_period || lim % 1000)
		return 0;
	n = lim / 1000;
	return t->cpu_shares == n * 1024 ? n : 0;
}
