/* corecarve: admission (admit.h). */
#include "admit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "0.1", "1.5", "4": milliCPU as people write a request or a limit. */
static void fmt_milli(long long milli, char *buf, size_t len)
{
	size_t n;

	if (milli % 1000 == 0) {
		snprintf(buf, len, "%lld", milli / 1000);
		return;
	}
	snprintf(buf, len, "%lld.%03lld", milli / 1000, milli % 1000);
	/* 1.500 -> 1.5; a decimal is not 0, so the point stays. */
	for (n = strlen(buf); n && buf[n - 1] == '0'; n--)
		buf[n - 1] = '\0';
}

static void fmt_limit(const struct cc_tenant *t, char *buf, size_t len)
{
	fmt_milli(t->cpu_quota * 1000 / t->cpu_period, buf, len);
}

static void join_namespaces(const struct cc_pclass *pc, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < pc->nnamespaces && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", pc->namespaces[i]);
}

/* Who may use the class: Kubernetes pods of its namespaces. */
static int admit_namespace(const struct cc_pclass *pc, const struct cc_tenant *t, const char *key,
			   struct cc_err *err)
{
	char list[512];

	if (!t->kubernetes || cc_policy_namespace_allowed(pc, t->namespace_))
		return 0;
	join_namespaces(pc, list, sizeof(list));
	if (!t->namespace_[0])
		return cc_err_set(err, EPERM,
				  "annotation %s: class: \"%s\" is for the namespaces %s (policy classes.%s.namespaces), "
				  "and the runtime named no namespace for this pod; ask for another class",
				  key, pc->name, list, pc->name);
	return cc_err_set(err, EPERM,
			  "annotation %s: class: namespace \"%s\" may not use class \"%s\" (policy classes.%s.namespaces: "
			  "%s); ask for another class, or have the node's admin add the namespace there",
			  key, t->namespace_, pc->name, pc->name, list);
}

/* What pays in Kubernetes: what the scheduler charged.  It books a pod's
 * requests, not its limits, and the kubelet's static CPU manager gives
 * exclusive CPUs only to containers of Guaranteed pods with an integer
 * CPU request (pkg/kubelet/cm/cpumanager/policy_static.go,
 * guaranteedCPUs): a container whose request is below its limit would
 * hold cores the scheduler thinks are free. */
static int admit_guaranteed(const struct cc_pclass *pc, const struct cc_request *req, const struct cc_tenant *t,
			    const char *key, struct cc_err *err)
{
	long long req_m, lim_m, n = cc_tenant_guaranteed_cpus(t, &req_m, &lim_m);
	char rq[32], lim[32];

	if (n >= req->cpus)
		return 0;
	fmt_milli(lim_m, lim, sizeof(lim));
	if (n > 0)
		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d exclusive CPUs exceed the %lld the scheduler charged this "
				  "container for (requests.cpu = limits.cpu = %lld); set both to %d, or ask for at most %lld",
				  key, req->cpus, n, n, req->cpus, n);
	if (req_m < 0)
		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d exclusive CPUs of class \"%s\" are for Guaranteed containers, and "
				  "the runtime passed no CPU request (linux.resources.cpu.shares) beside the limit of %s; set "
				  "requests.cpu = limits.cpu = %d",
				  key, req->cpus, pc->name, lim, req->cpus);
	fmt_milli(req_m, rq, sizeof(rq));
	return cc_err_set(err, EPERM,
			  "annotation %s: cpus: %d exclusive CPUs of class \"%s\" are for Guaranteed containers with whole "
			  "CPUs, as the kubelet's CPU manager gives them: this one requests %s CPU (cpu.shares %lld) and is "
			  "limited to %s (cpu.max %lld %lld), and the scheduler charged it the request; set "
			  "requests.cpu = limits.cpu = %d",
			  key, req->cpus, pc->name, rq, t->cpu_shares, lim, t->cpu_quota, t->cpu_period, req->cpus);
}

/* What pays outside Kubernetes (podman, crun: the node's own users): the
 * CPU limit, whole CPUs, rounded down. */
static int admit_paid(const struct cc_policy *p, const struct cc_pclass *pc, const struct cc_request *req,
		      const struct cc_tenant *t, const char *key, struct cc_err *err)
{
	long long paid = cc_tenant_paid_cpus(t);
	char lim[32];

	if (paid < 0) {
		enum cc_unlimited u = t->kubernetes ? p->unlimited_kubernetes : p->unlimited_other;

		if (u == CC_UNLIMITED_ALLOW)
			return 0;
		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d exclusive CPUs of class \"%s\" need a CPU limit of at least %d: "
				  "a %s container without one pays for none (policy withoutCpuLimit.%s: refuse); set its CPU "
				  "limit to %d (resources.limits.cpu: \"%d\")",
				  key, req->cpus, pc->name, req->cpus, t->kubernetes ? "Kubernetes" : "non-Kubernetes",
				  t->kubernetes ? "kubernetes" : "others", req->cpus, req->cpus);
	}
	if (t->kubernetes)
		return admit_guaranteed(pc, req, t, key, err);
	if (paid >= req->cpus)
		return 0;
	fmt_limit(t, lim, sizeof(lim));
	if (paid == 0)
		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d exclusive CPUs exceed the container's CPU limit of %s (cpu.max "
				  "%lld %lld pays for no whole CPU); raise the limit to %d (resources.limits.cpu: \"%d\")",
				  key, req->cpus, lim, t->cpu_quota, t->cpu_period, req->cpus, req->cpus);
	return cc_err_set(err, EPERM,
			  "annotation %s: cpus: %d exclusive CPUs exceed the container's CPU limit of %s (cpu.max %lld "
			  "%lld pays for %lld whole CPU%s); raise the limit to %d (resources.limits.cpu: \"%d\") or ask for "
			  "at most %lld",
			  key, req->cpus, lim, t->cpu_quota, t->cpu_period, paid, paid == 1 ? "" : "s", req->cpus,
			  req->cpus, paid);
}

int cc_admit_tenant(const struct cc_policy *p, const struct cc_pclass *pc, const struct cc_request *req,
		    const struct cc_tenant *t, const char *key, struct cc_err *err)
{
	/* A shared class carves nothing: the pool is everyone's already. */
	if (!pc->exclusive)
		return 0;
	if (!key || !*key)
		key = CC_ANNOTATION_KEY;
	if (admit_namespace(pc, t, key, err) < 0)
		return -1;
	return admit_paid(p, pc, req, t, key, err);
}

bool cc_admit_has_caps(const struct cc_pclass *pc)
{
	return pc->exclusive && (pc->max_cpus_per_pod > 0 || pc->max_cpus > 0);
}

int cc_admit_caps(const struct cc_pclass *pc, const struct cc_request *req, const struct cc_admit_usage *u,
		  const char *pod, const char *key, struct cc_err *err)
{
	if (!cc_admit_has_caps(pc))
		return 0;
	if (!key || !*key)
		key = CC_ANNOTATION_KEY;
	if (pc->max_cpus_per_pod > 0 && u->pod_cpus + req->cpus > pc->max_cpus_per_pod) {
		int left = pc->max_cpus_per_pod - u->pod_cpus;

		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d more CPUs of class \"%s\" would give pod %s %d, more than the %d "
				  "one pod may carve (policy classes.%s.maxCpusPerPod); ask for %s%d",
				  key, req->cpus, pc->name, pod, u->pod_cpus + req->cpus, pc->max_cpus_per_pod, pc->name,
				  left > 0 ? "at most " : "", left > 0 ? left : 0);
	}
	if (pc->max_cpus > 0 && u->class_cpus + req->cpus > pc->max_cpus) {
		int left = pc->max_cpus - u->class_cpus;

		return cc_err_set(err, EPERM,
				  "annotation %s: cpus: %d more CPUs of class \"%s\" would make %d on this node, more than "
				  "its %d (policy classes.%s.maxCpus); ask for %s%d, or wait for a carve of the class to go",
				  key, req->cpus, pc->name, u->class_cpus + req->cpus, pc->max_cpus, pc->name,
				  left > 0 ? "at most " : "", left > 0 ? left : 0);
	}
	return 0;
}
