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

/* The keys, per runtime (docs/security.md lists them, with the runtimes'
 * functions that write them).  Each runtime copies the pod's annotations
 * into a container's spec first and writes its own keys after, so only
 * its own keys are to be believed, and only the runtime's own: containerd
 * writes the sandbox's namespace; CRI-O writes none on a container (its
 * Namespace key is the sandbox's: on a container the pod wrote it) but
 * copies the kubelet's labels last, the pod's namespace among them. */
#define CC_K8S_CONTAINERD_TYPE "io.kubernetes.cri.container-type"
#define CC_K8S_CONTAINERD_NAMESPACE "io.kubernetes.cri.sandbox-namespace"
#define CC_K8S_CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define CC_K8S_CRIO_NAMESPACE "io.kubernetes.cri-o.Namespace"
#define CC_K8S_LABEL_NAMESPACE "io.kubernetes.pod.namespace"

#define CC_NAMESPACE_MAX 64 /* a Kubernetes namespace: a DNS label, 63 bytes */
/* An RFC 1123 label: what the API server admits as a namespace name. */
bool cc_tenant_namespace_ok(const char *s);

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
	/* Its CPU request as the kubelet passes it, linux.resources.cpu.shares
	 * (milliCPU * 1024 / 1000, at least 2): -1 when absent. */
	long long cpu_shares;
};

/* A container's linux.resources.cpu (config.json): quota and shares -1
 * when absent, period 0 when absent. */
struct cc_tenant_cpu {
	long long quota, period, shares;
};

/* Fill `out` from a container's annotations (the state's or config.json's,
 * NULL for none) and its linux.resources.cpu values.  -1 with err when the
 * spec carries both runtimes' container-type keys, a CRI-O container
 * carries CRI-O's sandbox namespace key (the pod wrote it), or a namespace
 * is not a DNS label: one-line messages naming the key. */
int cc_tenant_read(const json_t *annotations, const struct cc_tenant_cpu *cpu, struct cc_tenant *out,
		   struct cc_err *err);

/* The whole CPUs a limit pays for: floor(quota / period); -1 without a
 * limit. */
long long cc_tenant_paid_cpus(const struct cc_tenant *t);

/* The CPUs the scheduler charged a Kubernetes container for, as the
 * kubelet's static CPU manager counts them: N when its request and its
 * limit are both N whole CPUs (shares N * 1024, quota N * period: a
 * Guaranteed container with an integer request), 0 otherwise.  Into
 * `req_milli` and `lim_milli` (either may be NULL) the request and the
 * limit in milliCPU as far as the spec says them (-1: not said). */
long long cc_tenant_guaranteed_cpus(const struct cc_tenant *t, long long *req_milli, long long *lim_milli);

#endif
