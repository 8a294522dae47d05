/* corecarve: who a container is and what it pays with — what the hook
 * reads of a container's spec before it carves for it (docs/security.md,
 * "Who pays, who may").  Only keys a pod cannot set itself count: the
 * CRI runtimes' own annotations (set after the pod's are copied in) and
 * linux.resources, which the kubelet (or podman) writes from the pod's
 * limits. */
#ifndef CC_TENANT_H
#define CC_TENANT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "error.h"

/* The keys, per runtime (docs/security.md lists them). */
#define CC_K8S_CONTAINERD_TYPE "io.kubernetes.cri.container-type"
#define CC_K8S_CONTAINERD_NAMESPACE "io.kubernetes.cri.sandbox-namespace"
#define CC_K8S_CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define CC_K8S_CRIO_NAMESPACE "io.kubernetes.cri-o.Namespace"

#define CC_NAMESPACE_MAX 64 /* a Kubernetes namespace: a DNS label, 63 bytes */

struct cc_tenant {
	/* Started by the kubelet through a CRI runtime (containerd's or
	 * CRI-O's container-type key is in its spec). */
	bool kubernetes;
	/* Its pod's namespace, "" when the runtime gave none. */
	char namespace_[CC_NAMESPACE_MAX];
	/* The container's CPU limit, linux.resources.cpu: quota -1 when it
	 * has none (absent, 0 or negative), period 100000 when absent as the
	 * runtimes write it. */
	long long cpu_quota, cpu_period;
};

/* Fill `out` from a container's annotations (the state's or config.json's,
 * NULL for none) and its linux.resources.cpu values (quota -1 for none).
 * -1 with err when the runtimes' keys contradict each other (containerd's
 * and CRI-O's namespace both present and different: one of them is
 * forged) or a namespace is not a DNS label. */
int cc_tenant_read(const json_t *annotations, long long cpu_quota, long long cpu_period, struct cc_tenant *out,
		   struct cc_err *err);

/* The whole CPUs a limit pays for: floor(quota / period); -1 without a
 * limit. */
long long cc_tenant_paid_cpus(const struct cc_tenant *t);

#endif
