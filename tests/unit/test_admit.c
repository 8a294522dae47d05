/* Admission (plugin/alloc/admit.h, plugin/config/tenant.h, the policy's
 * trust keys) — issue #26, "a pod gets only what it pays for and is
 * allowed": the CPU limit pays for a carve, a class names who may use it
 * and its caps, minShared may be a share; and on the cgroup double, the
 * hook's own create path: a 0.1-CPU container asking for 5 CPUs is
 * refused with nothing recorded, and a quota above the pod is never
 * lifted (a smaller one refuses, naming that cgroup). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit.h"
#include "cleanup.h"
#include "container.h"
#include "cpulist.h"
#include "hookenv.h"
#include "ledger.h"
#include "oci.h"
#include "policy.h"
#include "tenant.h"
#include "testlib.h"

static const char base_policy[] = "classes:\n"
				  "  latency:\n"
				  "    coreType: performance\n"
				  "  background:\n"
				  "    coreType: performance\n"
				  "    exclusive: false\n";

static struct cc_policy *parse(const char *yaml)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_parse(yaml, strlen(yaml), "p.yaml", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	return p;
}

static struct cc_request req_of(const char *cls, int cpus)
{
	struct cc_request r = { .cpus = cpus };

	snprintf(r.class_name, sizeof(r.class_name), "%s", cls);
	snprintf(r.annotation, sizeof(r.annotation), "%s", CC_ANNOTATION_KEY);
	return r;
}

/* A container with request `shares` (< 0: none) and limit quota/period. */
static struct cc_tenant tenant_res(const char *json_annotations, long long quota, long long period, long long shares)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant t;
	struct cc_tenant_cpu cpu = { quota, period, shares };
	json_error_t je;
	_cleanup_json_ json_t *a = json_loads(json_annotations, 0, &je);

	ck_assert_ptr_nonnull(a);
	ck_assert_msg(cc_tenant_read(a, &cpu, &t, &err) == 0, "%s", err.msg);
	return t;
}

/* The kubelet's shares for a request of `milli` (MilliCPUToShares). */
static long long shares_of(long long milli)
{
	return milli * 1024 / 1000 < 2 ? 2 : milli * 1024 / 1000;
}

/* A Guaranteed container: its request is its limit. */
static struct cc_tenant tenant_of(const char *json_annotations, long long quota, long long period)
{
	return tenant_res(json_annotations, quota, period,
			  quota > 0 ? shares_of(quota * 1000 / (period > 0 ? period : 100000)) : -1);
}

#define K8S(ns) "{\"" CC_K8S_CONTAINERD_TYPE "\": \"container\", \"" CC_K8S_CONTAINERD_NAMESPACE "\": \"" ns "\"}"
#define PODMAN "{}"

static int admit(const struct cc_policy *p, const char *cls, int cpus, const struct cc_tenant *t, struct cc_err *err)
{
	struct cc_request r = req_of(cls, cpus);

	cc_err_clear(err);
	return cc_admit_tenant(p, cc_policy_class(p, cls), &r, t, r.annotation, err);
}

/* Outside Kubernetes (podman, crun) the limit pays for whole CPUs,
 * rounded down; the refusal names the limit and both fixes. */
START_TEST(test_limit_pays)
{
	_cleanup_policy_ struct cc_policy *p = parse(base_policy);
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant t = tenant_of(PODMAN, 10000, 100000);

	ck_assert_int_eq(admit(p, "latency", 5, &t, &err), -1);
	ck_assert_int_eq(err.code, EPERM);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: cpus: 5 exclusive CPUs exceed the container's CPU "
				  "limit of 0.1 (cpu.max 10000 100000 pays for no whole CPU); raise the limit to 5 "
				  "(resources.limits.cpu: \"5\")");
	t = tenant_of(PODMAN, 350000, 100000);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "CPU limit of 3.5 (cpu.max 350000 100000 pays for 3 whole CPUs); raise the limit to "
				      "4 (resources.limits.cpu: \"4\") or ask for at most 3"),
		      "%s", err.msg);
	ck_assert_int_eq(admit(p, "latency", 3, &t, &err), 0);
	/* A period other than the default. */
	t = tenant_of(PODMAN, 100000, 50000);
	ck_assert_int_eq(admit(p, "latency", 2, &t, &err), 0);
	ck_assert_int_eq(admit(p, "latency", 3, &t, &err), -1);
	/* A request below the limit does not matter here: no scheduler
	 * booked it. */
	t = tenant_res(PODMAN, 200000, 100000, 102);
	ck_assert_int_eq(admit(p, "latency", 2, &t, &err), 0);
	/* A shared class carves nothing: its pool is everyone's. */
	t = tenant_of(K8S("prod"), 10000, 100000);
	ck_assert_int_eq(admit(p, "background", 4, &t, &err), 0);
}
END_TEST

/* Kubernetes: what the scheduler charged pays, and it charges the
 * request; exclusive CPUs only for Guaranteed containers with whole CPUs,
 * as the kubelet's static CPU manager gives them (issue #38, item 1). */
START_TEST(test_guaranteed)
{
	_cleanup_policy_ struct cc_policy *p = parse(base_policy);
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant t;

	/* The finding: requests.cpu 100m, limits.cpu 2, asking for 2. */
	t = tenant_res(K8S("prod"), 200000, 100000, shares_of(100));
	ck_assert_int_eq(admit(p, "latency", 2, &t, &err), -1);
	ck_assert_int_eq(err.code, EPERM);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: cpus: 2 exclusive CPUs of class \"latency\" are for "
				  "Guaranteed containers with whole CPUs, as the kubelet's CPU manager gives them: this one "
				  "requests 0.1 CPU (cpu.shares 102) and is limited to 2 (cpu.max 200000 100000), and the "
				  "scheduler charged it the request; set requests.cpu = limits.cpu = 2");
	/* requests 10m, limits 3: 3 cores for 10m. */
	t = tenant_res(K8S("prod"), 300000, 100000, shares_of(10));
	ck_assert_int_eq(admit(p, "latency", 3, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "requests 0.01 CPU (cpu.shares 10) and is limited to 3"), "%s", err.msg);
	/* One millicore below the limit is Burstable too. */
	t = tenant_res(K8S("prod"), 200000, 100000, shares_of(1999));
	ck_assert_int_eq(admit(p, "latency", 1, &t, &err), -1);
	/* Guaranteed, 2 whole CPUs: up to 2. */
	t = tenant_of(K8S("prod"), 200000, 100000);
	ck_assert_int_eq(t.cpu_shares, 2048);
	ck_assert_msg(admit(p, "latency", 2, &t, &err) == 0, "%s", err.msg);
	ck_assert_msg(admit(p, "latency", 1, &t, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(admit(p, "latency", 3, &t, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: cpus: 3 exclusive CPUs exceed the 2 the scheduler "
				  "charged this container for (requests.cpu = limits.cpu = 2); set both to 3, or ask for at "
				  "most 2");
	/* Another CFS period (the kubelet's cpuCFSQuotaPeriod). */
	t = tenant_of(K8S("prod"), 100000, 50000);
	ck_assert_msg(admit(p, "latency", 2, &t, &err) == 0, "%s", err.msg);
	/* Guaranteed but not whole: 1.5 = 1.5 gets no exclusive CPU. */
	t = tenant_of(K8S("prod"), 150000, 100000);
	ck_assert_int_eq(admit(p, "latency", 1, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "requests 1.5 CPU (cpu.shares 1536) and is limited to 1.5"), "%s", err.msg);
	/* A limit and no request said at all. */
	t = tenant_res(K8S("prod"), 200000, 100000, -1);
	ck_assert_int_eq(admit(p, "latency", 2, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "the runtime passed no CPU request (linux.resources.cpu.shares) beside the limit of "
				      "2; set requests.cpu = limits.cpu = 2"),
		      "%s", err.msg);
	ck_assert_int_eq(cc_tenant_guaranteed_cpus(&t, NULL, NULL), 0);
	/* A shared class carves nothing, whatever the QoS. */
	t = tenant_res(K8S("prod"), 200000, 100000, shares_of(100));
	ck_assert_int_eq(admit(p, "background", 2, &t, &err), 0);
}
END_TEST

/* No limit: a Kubernetes container pays for nothing (refused), others
 * (podman, crun: the node's admin's) may carve; the policy says
 * otherwise for either. */
START_TEST(test_without_limit)
{
	_cleanup_policy_ struct cc_policy *p = parse(base_policy);
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant k = tenant_of(K8S("prod"), -1, 0);
	struct cc_tenant o = tenant_of("{}", 0, 0);

	ck_assert(k.kubernetes);
	ck_assert(!o.kubernetes);
	ck_assert_int_eq(admit(p, "latency", 2, &k, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: cpus: 2 exclusive CPUs of class \"latency\" need a "
				  "CPU limit of at least 2: a Kubernetes container without one pays for none (policy "
				  "withoutCpuLimit.kubernetes: refuse); set its CPU limit to 2 (resources.limits.cpu: \"2\")");
	ck_assert_int_eq(admit(p, "latency", 2, &o, &err), 0);

	_cleanup_policy_ struct cc_policy *q = parse("withoutCpuLimit: {kubernetes: allow, others: refuse}\n"
						     "classes:\n  latency:\n    coreType: performance\n");

	ck_assert_int_eq(admit(q, "latency", 2, &k, &err), 0);
	ck_assert_int_eq(admit(q, "latency", 2, &o, &err), -1);
	ck_assert_msg(strstr(err.msg, "(policy withoutCpuLimit.others: refuse)"), "%s", err.msg);
}
END_TEST

/* Who may: a class's namespaces (names and globs) hold Kubernetes pods
 * to them; containers Kubernetes did not start are the admin's. */
START_TEST(test_namespaces)
{
	_cleanup_policy_ struct cc_policy *p = parse("classes:\n"
						     "  latency:\n"
						     "    coreType: performance\n"
						     "    namespaces: [trading, \"rt-*\"]\n");
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant t;

	t = tenant_of(K8S("trading"), 400000, 100000);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), 0);
	t = tenant_of(K8S("rt-audio"), 400000, 100000);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), 0);
	t = tenant_of(K8S("dev"), 400000, 100000);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: class: namespace \"dev\" may not use class "
				  "\"latency\" (policy classes.latency.namespaces: trading, rt-*); ask for another class, or "
				  "have the node's admin add the namespace there");
	/* CRI-O's keys: the kubelet's namespace label. */
	t = tenant_of("{\"" CC_K8S_CRIO_TYPE "\": \"container\", \"" CC_K8S_LABEL_NAMESPACE "\": \"rt-x\"}", 400000,
		      100000);
	ck_assert(t.kubernetes);
	ck_assert_str_eq(t.namespace_, "rt-x");
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), 0);
	/* Kubernetes, no namespace said: only classes open to every one. */
	t = tenant_of("{\"" CC_K8S_CONTAINERD_TYPE "\": \"container\"}", 400000, 100000);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "the runtime named no namespace"), "%s", err.msg);
	/* A namespace key alone does not make a Kubernetes container, and
	 * a podman or crun container may use the class. */
	t = tenant_of("{\"" CC_K8S_CONTAINERD_NAMESPACE "\": \"dev\"}", 400000, 100000);
	ck_assert(!t.kubernetes);
	ck_assert_int_eq(admit(p, "latency", 4, &t, &err), 0);
}
END_TEST

/* A container's annotations as CRI-O builds them
 * (internal/factory/container/container.go, SpecAddAnnotations): the
 * sandbox's (the pod's) annotations first, CRI-O's own keys, the
 * kubelet's container annotations, then the kubelet's labels, among them
 * the pod's namespace, last.  A later key overwrites an earlier one, as
 * in the Go map. */
static json_t *crio_spec(const char *pod_key, const char *pod_val, const char *ns)
{
	json_t *a = json_object();

	if (pod_key)
		json_object_set_new(a, pod_key, json_string(pod_val));
	json_object_set_new(a, CC_K8S_CRIO_TYPE, json_string("container"));
	json_object_set_new(a, "io.kubernetes.cri-o.SandboxID", json_string("0123abcd"));
	json_object_set_new(a, "io.kubernetes.container.hash", json_string("5a1b"));
	json_object_set_new(a, CC_K8S_LABEL_NAMESPACE, json_string(ns));
	json_object_set_new(a, "io.kubernetes.pod.name", json_string("p"));
	return a;
}

/* As containerd's CRI builds them (containerSpec: the pod's annotations
 * that pod_annotations lets through, then its own keys). */
static json_t *containerd_spec(const char *pod_key, const char *pod_val, const char *ns)
{
	json_t *a = json_object();

	if (pod_key)
		json_object_set_new(a, pod_key, json_string(pod_val));
	json_object_set_new(a, CC_K8S_CONTAINERD_TYPE, json_string("container"));
	json_object_set_new(a, "io.kubernetes.cri.sandbox-id", json_string("0123abcd"));
	json_object_set_new(a, CC_K8S_CONTAINERD_NAMESPACE, json_string(ns));
	return a;
}

static int read_tenant(const json_t *a, struct cc_tenant *t, struct cc_err *err)
{
	struct cc_tenant_cpu cpu = { 200000, 100000, 2048 };

	cc_err_clear(err);
	return cc_tenant_read(a, &cpu, t, err);
}

/* Only the key the runtime writes after the pod's counts (issue #38,
 * item 3): a pod in "dev" cannot name "trading" through either runtime's
 * keys; a spec with both runtimes' type keys is refused. */
START_TEST(test_tenant_forged)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_tenant t;
	json_t *a;

	/* CRI-O, honest: the label. */
	a = crio_spec(NULL, NULL, "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert(t.kubernetes);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	/* CRI-O, the pod wrote CRI-O's sandbox key: the finding carved a
	 * class limited to "trading" for a pod of "dev". */
	a = crio_spec(CC_K8S_CRIO_NAMESPACE, "trading", "dev");
	ck_assert_int_eq(read_tenant(a, &t, &err), -1);
	ck_assert_str_eq(err.msg, "annotation io.kubernetes.cri-o.Namespace: CRI-O writes it on a pod's sandbox only, so "
				  "on this container the pod wrote it; remove it from the pod's annotations");
	json_decref(a);
	/* CRI-O, the pod wrote containerd's namespace key: not read. */
	a = crio_spec(CC_K8S_CONTAINERD_NAMESPACE, "trading", "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	/* CRI-O, the pod wrote the label's key as an annotation: the
	 * kubelet's label comes last and wins. */
	a = crio_spec(CC_K8S_LABEL_NAMESPACE, "trading", "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	/* CRI-O, the pod wrote containerd's type key: both runtimes. */
	a = crio_spec(CC_K8S_CONTAINERD_TYPE, "container", "dev");
	ck_assert_int_eq(read_tenant(a, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "both runtimes' container-type keys are in the spec"), "%s", err.msg);
	json_decref(a);
	/* containerd: its own key, written after the pod's. */
	a = containerd_spec(CC_K8S_CONTAINERD_NAMESPACE, "trading", "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	/* containerd, the pod wrote CRI-O's namespace or the label: not
	 * read. */
	a = containerd_spec(CC_K8S_CRIO_NAMESPACE, "trading", "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	a = containerd_spec(CC_K8S_LABEL_NAMESPACE, "trading", "dev");
	ck_assert_msg(read_tenant(a, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.namespace_, "dev");
	json_decref(a);
	a = containerd_spec(CC_K8S_CRIO_TYPE, "container", "dev");
	ck_assert_int_eq(read_tenant(a, &t, &err), -1);
	json_decref(a);
	/* A namespace is a DNS label. */
	a = containerd_spec(NULL, NULL, "Trading\u202e");
	ck_assert_int_eq(read_tenant(a, &t, &err), -1);
	ck_assert_msg(strstr(err.msg, "is not a Kubernetes namespace name"), "%s", err.msg);
	json_decref(a);
	/* A quota of 0 or less is none; no period is the kernel's default;
	 * values the kernel never takes are refused. */
	struct cc_tenant_cpu none = { 0, 0, -1 }, q = { 250000, 0, -1 }, huge = { 1LL << 62, 100000, 2 };

	cc_err_clear(&err);
	ck_assert_int_eq(cc_tenant_read(NULL, &none, &t, &err), 0);
	ck_assert_int_eq(cc_tenant_paid_cpus(&t), -1);
	ck_assert_int_eq(t.cpu_shares, -1);
	ck_assert_int_eq(cc_tenant_read(NULL, &q, &t, &err), 0);
	ck_assert_int_eq(t.cpu_period, 100000);
	ck_assert_int_eq(cc_tenant_paid_cpus(&t), 2);
	ck_assert_int_eq(cc_tenant_read(NULL, &huge, &t, &err), -1);
	ck_assert_int_eq(err.code, ERANGE);
	ck_assert_int_eq(cc_tenant_read(NULL, NULL, &t, &err), 0);
	ck_assert_int_eq(t.cpu_quota, -1);
}
END_TEST

/* The caps, per pod and per class. */
START_TEST(test_caps)
{
	_cleanup_policy_ struct cc_policy *p = parse("classes:\n"
						     "  latency:\n"
						     "    coreType: performance\n"
						     "    maxCpusPerPod: 4\n"
						     "    maxCpus: 6\n");
	const struct cc_pclass *pc = cc_policy_class(p, "latency");
	struct cc_request r = req_of("latency", 3);
	struct cc_err err = CC_ERR_INIT;

	ck_assert(cc_admit_has_caps(pc));
	ck_assert_int_eq(cc_admit_caps(pc, &r, &(struct cc_admit_usage){ .class_cpus = 1, .pod_cpus = 1 }, "/kubepods/p",
				       r.annotation, &err),
			 0);
	ck_assert_int_eq(cc_admit_caps(pc, &r, &(struct cc_admit_usage){ .class_cpus = 2, .pod_cpus = 2 }, "/kubepods/p",
				       r.annotation, &err),
			 -1);
	ck_assert_str_eq(err.msg, "annotation corecarve.io/placement: cpus: 3 more CPUs of class \"latency\" would give pod "
				  "/kubepods/p 5, more than the 4 one pod may carve (policy classes.latency.maxCpusPerPod); "
				  "ask for at most 2");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_admit_caps(pc, &r, &(struct cc_admit_usage){ .class_cpus = 4, .pod_cpus = 0 }, "/kubepods/q",
				       r.annotation, &err),
			 -1);
	ck_assert_msg(strstr(err.msg, "would make 7 on this node, more than its 6 (policy classes.latency.maxCpus)"), "%s",
		      err.msg);
	_cleanup_policy_ struct cc_policy *q = parse(base_policy);
	ck_assert(!cc_admit_has_caps(cc_policy_class(q, "latency")));
}
END_TEST

/* The new keys parse strictly. */
static const struct {
	const char *yaml, *msg;
} bad_cases[] = {
	{ "minShared: \"120%\"\nclasses:\n  a:\n    coreType: performance\n",
	  "p.yaml:1:1: minShared: expected a count of CPUs or a share from \"0%\" to \"100%\", got \"120%\"" },
	{ "minShared: \"-5%\"\nclasses:\n  a:\n    coreType: performance\n",
	  "p.yaml:1:1: minShared: expected a count of CPUs or a share from \"0%\" to \"100%\", got \"-5%\"" },
	{ "withoutCpuLimit: {kubernetes: maybe}\nclasses:\n  a:\n    coreType: performance\n",
	  "p.yaml:1:19: withoutCpuLimit.kubernetes: expected refuse or allow, got \"maybe\"" },
	{ "withoutCpuLimit: {pods: allow}\nclasses:\n  a:\n    coreType: performance\n",
	  "p.yaml:1:19: withoutCpuLimit.pods: unknown key (expected one of kubernetes, others)" },
	{ "classes:\n  a:\n    coreType: performance\n    namespaces: [\"Prod\"]\n",
	  "p.yaml:4:18: classes.a.namespaces[0]: \"Prod\" is not a namespace name or glob (a-z, 0-9, '-' and '*', at most 63 "
	  "characters)" },
	{ "classes:\n  a:\n    coreType: performance\n    namespaces: []\n",
	  "p.yaml:4:5: classes.a.namespaces: expected a non-empty list of Kubernetes namespaces such as [trading, "
	  "\"rt-*\"], got a sequence (leave the key out to let every namespace use the class)" },
	{ "classes:\n  a:\n    coreType: performance\n    exclusive: false\n    maxCpus: 2\n",
	  "p.yaml:4:5: classes.a.exclusive: false: namespaces, maxCpusPerPod and maxCpus are for classes that carve "
	  "(exclusive: true)" },
	{ "classes:\n  a:\n    coreType: performance\n    maxCpusPerPod: 0\n",
	  "p.yaml:4:5: classes.a.maxCpusPerPod: expected an integer >= 1, got \"0\"" },
};

START_TEST(test_bad_keys)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_parse(bad_cases[_i].yaml, strlen(bad_cases[_i].yaml), "p.yaml", &err);

	ck_assert_ptr_null(p);
	ck_assert_str_eq(err.msg, bad_cases[_i].msg);
}
END_TEST

START_TEST(test_min_shared_share)
{
	_cleanup_policy_ struct cc_policy *p = parse("minShared: \"25%\"\nclasses:\n  a:\n    coreType: performance\n");
	_cleanup_policy_ struct cc_policy *q = parse(base_policy);

	ck_assert(p->min_shared_share);
	ck_assert_int_eq(cc_policy_min_shared(p, 32), 8);
	ck_assert_int_eq(cc_policy_min_shared(p, 30), 8); /* 7.5, rounded up */
	ck_assert_int_eq(cc_policy_min_shared(p, 2), 1);
	ck_assert_int_eq(cc_policy_min_shared(p, 0), 0);
	ck_assert_int_eq(cc_policy_min_shared(q, 32), 1);
}
END_TEST

/* ---- on the cgroup double: the hook's create path ---- */

#define SYNTH "pack:2 numa:1 core:4 pu:2"

static const char env_policy[] = "reserved: \"0-1,8-9\"\n"
				 "minShared: 0\n"
				 "classes:\n"
				 "  latency:\n"
				 "    coreType: performance\n"
				 "    smt: isolate\n"
				 "    irq: leave\n"
				 "    quota: drop\n";

/* createRuntime with the placement annotation `yaml`. */
static int create(struct hookenv *e, const char *id, int pid, const char *cgroup, const char *yaml, long long quota,
		  struct cc_err *err)
{
	char ann[512];

	snprintf(ann, sizeof(ann), "\"%s\": \"%s\"", CC_ANNOTATION_KEY, yaml);
	return hookenv_create(e, id, pid, cgroup, ann, quota, err);
}

static const enum fakecg_kernel kernels[] = { FAKECG_6_1, FAKECG_6_12, FAKECG_7 };

/* The finding: {class: latency, cpus: 5} at 0.1 CPU got 5 CPUs and 5
 * parked siblings, the quota lifted up the tree.  Refused now, with
 * nothing written; the same container limited to 2 CPUs carves 2. */
START_TEST(test_hook_refuses_unpaid)
{
	struct hookenv e;
	struct cc_err err = CC_ERR_INIT;
	int writes;

	hookenv_init(&e, kernels[_i], env_policy, SYNTH);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod1", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod1/a", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods/pod1/a", "cpu.max", "10000 100000"), 0);
	writes = fakecg_writes(e.f);
	ck_assert_int_eq(create(&e, "a", 4242, "/kubepods/pod1/a", "{class: latency, cpus: 5}", 10000, &err), -1);
	ck_assert_msg(strstr(err.msg, "container a: annotation corecarve.io/placement: cpus: 5 exclusive CPUs exceed the "
				      "container's CPU limit of 0.1"),
		      "%s", err.msg);
	ck_assert_int_eq(fakecg_writes(e.f), writes);
	ck_assert_int_eq(hookenv_ncarves(&e), 0);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod1/a", "cpu.max"), "10000 100000");
	/* Paid for: carved, its own quota dropped. */
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod1/b", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods/pod1/b", "cpu.max", "200000 100000"), 0);
	ck_assert_msg(create(&e, "b", 4243, "/kubepods/pod1/b", "{class: latency, cpus: 2}", 200000, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod1/b", "cpu.max"), "max 100000");
	hookenv_fini(&e);
}
END_TEST

/* The finding: a Burstable pod (requests.cpu 100m, limits.cpu 2) under
 * containerd was carved 2 CPUs the scheduler had booked 0.1 for.  Refused
 * now with both numbers and nothing written; the Guaranteed one carves. */
START_TEST(test_hook_refuses_burstable)
{
	struct hookenv e;
	struct cc_err err = CC_ERR_INIT;
	char ann[512];
	int writes;

	hookenv_init(&e, kernels[_i], env_policy, SYNTH);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/burstable", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/burstable/pod1", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/burstable/pod1/a", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods/burstable/pod1/a", "cpu.max", "200000 100000"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2/b", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods/pod2/b", "cpu.max", "200000 100000"), 0);
	snprintf(ann, sizeof(ann),
		 "\"%s\": \"{class: latency, cpus: 2}\", \"" CC_K8S_CONTAINERD_TYPE "\": \"container\", "
		 "\"" CC_K8S_CONTAINERD_NAMESPACE "\": \"trading\"",
		 CC_ANNOTATION_KEY);
	writes = fakecg_writes(e.f);
	ck_assert_int_eq(hookenv_create_res(&e, "a", 4242, "/kubepods/burstable/pod1/a", ann, 200000, 102, &err), -1);
	ck_assert_msg(strstr(err.msg, "container a: annotation corecarve.io/placement: cpus: 2 exclusive CPUs of class "
				      "\"latency\" are for Guaranteed containers with whole CPUs, as the kubelet's CPU "
				      "manager gives them: this one requests 0.1 CPU (cpu.shares 102) and is limited to 2 "
				      "(cpu.max 200000 100000), and the scheduler charged it the request; set requests.cpu "
				      "= limits.cpu = 2"),
		      "%s", err.msg);
	ck_assert_int_eq(fakecg_writes(e.f), writes);
	ck_assert_int_eq(hookenv_ncarves(&e), 0);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/burstable/pod1/a", "cpu.max"), "200000 100000");
	/* Guaranteed, 2 whole CPUs: carved. */
	ck_assert_msg(hookenv_create_res(&e, "b", 4243, "/kubepods/pod2/b", ann, 200000, 2048, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod2/b", "cpu.max"), "max 100000");
	hookenv_fini(&e);
}
END_TEST

/* A container that asks for nothing, started after a carve: on 6.1
 * (cpuset-only, no partition keeps it off) its new pod's cgroup,
 * inheriting the carve's CPUs, gives them up as the carve's peer, with
 * everything in it, and gets them back when the carve goes; beside a
 * partition it is left as it is. */
START_TEST(test_newcomer_narrowed)
{
	struct hookenv e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t carved = hwloc_bitmap_alloc(), eff = hwloc_bitmap_alloc();
	char ann[512];

	hookenv_init(&e, kernels[_i], env_policy, SYNTH);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2/b", true), 0);
	snprintf(ann, sizeof(ann), "\"%s\": \"{class: latency, cpus: 2}\", \"" CC_K8S_CONTAINERD_TYPE "\": \"container\"",
		 CC_ANNOTATION_KEY);
	ck_assert_msg(hookenv_create_res(&e, "b", 4243, "/kubepods/pod2/b", ann, 200000, 2048, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(cc_cpulist_parse(fakecg_get(e.f, "/kubepods/pod2/b", "cpuset.cpus.effective"), carved, "b",
					  &err),
			 0);
	/* A pod made after the carve, with a pause container no hook sees
	 * (containerd's sandbox) and a container: they inherit. */
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod3", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod3/pause", true), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod3/c", true), 0);
	ck_assert_msg(hookenv_create_res(&e, "c", 4250, "/kubepods/pod3/c",
					 "\"" CC_K8S_CONTAINERD_TYPE "\": \"container\"", 0, -1, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(cc_cpulist_parse(fakecg_get(e.f, "/kubepods/pod3/c", "cpuset.cpus.effective"), eff, "c", &err),
			 0);
	ck_assert_msg(!hwloc_bitmap_intersects(eff, carved), "kernel %d: the newcomer runs on %s, the carve's CPUs among them",
		      _i, fakecg_get(e.f, "/kubepods/pod3/c", "cpuset.cpus.effective"));
	ck_assert_int_eq(cc_cpulist_parse(fakecg_get(e.f, "/kubepods/pod3/pause", "cpuset.cpus.effective"), eff, "pause",
					  &err),
			 0);
	ck_assert_msg(!hwloc_bitmap_intersects(eff, carved), "kernel %d: its pod's pause runs on %s, the carve's CPUs among them",
		      _i, fakecg_get(e.f, "/kubepods/pod3/pause", "cpuset.cpus.effective"));
	if (kernels[_i] != FAKECG_6_1)
		ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod3/c", "cpuset.cpus"), "");
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	/* The carve goes: the newcomer has every CPU again. */
	fakecg_exit(e.f, "/kubepods/pod2/b");
	ck_assert_int_eq(fakecg_rmdir(e.f, "/kubepods/pod2/b"), 0);
	ck_assert_msg(hookenv_release(&e, "b", &err) == 0, "%s", err.msg);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod3/c", "cpuset.cpus.effective"), "0-15");
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod3/pause", "cpuset.cpus.effective"), "0-15");
	hookenv_fini(&e);
}
END_TEST

/* An admin's cap on /kubepods stays as it is while carves live below;
 * one that the carves below would exceed refuses the carve, naming it. */
START_TEST(test_quota_above_pod_kept)
{
	struct hookenv e;
	struct cc_err err = CC_ERR_INIT;

	hookenv_init(&e, kernels[_i], env_policy, SYNTH);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods", false), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods", "cpu.max", "300000 100000"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod1", false), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/kubepods/pod1", "cpu.max", "100000 100000"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod1/a", true), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2", false), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2/b", true), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/kubepods/pod2/c", true), 0);
	ck_assert_msg(create(&e, "a", 4242, "/kubepods/pod1/a", "{class: latency, cpus: 2}", 200000, &err) == 0, "%s",
		      err.msg);
	/* The pod's own quota is lifted (a pod holding a carve has none),
	 * the cap above it is not. */
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod1", "cpu.max"), "max 100000");
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods", "cpu.max"), "300000 100000");
	/* 2 carved below /kubepods already: one more fits its 3, two do not. */
	ck_assert_int_eq(create(&e, "b", 4243, "/kubepods/pod2/b", "{class: latency, cpus: 2}", 200000, &err), -1);
	ck_assert_msg(strstr(err.msg, "/kubepods has cpu.max \"300000 100000\" (3.00 CPUs), less than the 4 exclusive CPUs "
				      "carved below it with this carve: corecarve lifts the quota of a container and its pod "
				      "only, never above; raise the quota of /kubepods or ask for fewer CPUs"),
		      "%s", err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods", "cpu.max"), "300000 100000");
	ck_assert_msg(create(&e, "c", 4244, "/kubepods/pod2/c", "{class: latency, cpus: 1}", 100000, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods", "cpu.max"), "300000 100000");
	ck_assert_int_eq(hookenv_ncarves(&e), 2);
	hookenv_fini(&e);
}
END_TEST

/* corecarve policy quotas (#38): the ResourceQuotas that keep the
 * namespaces a class leaves out at 0 of its resource, for the default
 * policy (none: no class names namespaces) and the 2-socket example
 * (latency: trading and rt-*, isolated: trading); a repeated namespace
 * once; every object read back by a real YAML parser (PyYAML) as a
 * ResourceQuota of string "0"s; a bad name refused with nothing
 * written. */
static char *quotas_text(const struct cc_policy *p, char *const *ns, int n, int *rc, struct cc_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	*rc = cc_policy_quotas(p, ns, n, f, err);
	fclose(f);
	return buf;
}

START_TEST(test_quotas)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *def = cc_policy_default(&err);
	_cleanup_policy_ struct cc_policy *ex = NULL;
	char *some[] = { "dev", "trading", "rt-feed", "dev", "default" };
	char path[4096], file[] = "/tmp/cc-quotas-XXXXXX";
	_cleanup_free_ char *a = NULL, *b = NULL, *out = NULL;
	int rc, fd;

	ck_assert_ptr_nonnull(def);
	a = quotas_text(def, some, 5, &rc, &err);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(a, "# ResourceQuotas from corecarve policy embedded default (corecarve policy quotas).\n"
			    "# No exclusive class names namespaces: every namespace may use every class, and\n"
			    "# there is nothing to apply.\n");
	snprintf(path, sizeof(path), "%s/examples/policy-2socket-smt.yaml", CC_SOURCE_DIR);
	ex = cc_policy_load(path, &err);
	ck_assert_msg(ex != NULL, "%s", err.msg);
	b = quotas_text(ex, some, 5, &rc, &err);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(b, "# corecarve.io/latency-cores: only namespaces trading, rt-* (classes.latency.namespaces)\n"
				"# corecarve.io/isolated-cores: only namespaces trading (classes.isolated.namespaces)\n"),
		      "%s", b);
	ck_assert_msg(strstr(b, "---\n"
				"apiVersion: v1\n"
				"kind: ResourceQuota\n"
				"metadata:\n"
				"  name: corecarve-classes\n"
				"  namespace: dev\n"
				"  labels:\n"
				"    app.kubernetes.io/managed-by: corecarve\n"
				"spec:\n"
				"  hard:\n"
				"    requests.corecarve.io/latency-cores: \"0\"\n"
				"    requests.corecarve.io/isolated-cores: \"0\"\n"
				"---\n"),
		      "%s", b);
	ck_assert_msg(strstr(b, "  namespace: rt-feed\n  labels:\n    app.kubernetes.io/managed-by: corecarve\nspec:\n"
				"  hard:\n    requests.corecarve.io/isolated-cores: \"0\"\n---\n"),
		      "%s", b);
	/* trading is admitted everywhere: no quota; dev once. */
	ck_assert_ptr_null(strstr(b, "namespace: trading"));
	ck_assert_ptr_null(strstr(strstr(b, "namespace: dev") + 1, "namespace: dev"));
	/* A YAML parser reads what kubectl will: three ResourceQuotas. */
	fd = mkstemp(file);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, strlen(b)), (ssize_t)strlen(b));
	close(fd);
	rc = cc_test_sh(&out,
			"/usr/bin/python3 -c 'import sys, yaml\n"
			"for d in yaml.safe_load_all(open(sys.argv[1])):\n"
			"  assert d[\"apiVersion\"] == \"v1\" and d[\"kind\"] == \"ResourceQuota\", d\n"
			"  assert all(k.startswith(\"requests.corecarve.io/\") and v == \"0\" for k, v in d[\"spec\"][\"hard\"].items()), d\n"
			"  print(d[\"metadata\"][\"namespace\"], sorted(d[\"spec\"][\"hard\"]))' %s 2>&1",
			file);
	unlink(file);
	ck_assert_msg(rc == 0, "%s", out);
	ck_assert_str_eq(out, "dev ['requests.corecarve.io/isolated-cores', 'requests.corecarve.io/latency-cores']\n"
			      "rt-feed ['requests.corecarve.io/isolated-cores']\n"
			      "default ['requests.corecarve.io/isolated-cores', 'requests.corecarve.io/latency-cores']\n");
	/* Not a namespace name: refused, nothing written. */
	{
		char *bad[][2] = { { "dev", "Dev" }, { "dev", "-x" }, { "dev", "x/y" }, { "dev", "" },
				   { "dev", "a123456789b123456789c123456789d123456789e123456789f123456789g123" } };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			_cleanup_free_ char *c = NULL;

			cc_err_clear(&err);
			c = quotas_text(ex, bad[i], 2, &rc, &err);
			ck_assert_int_eq(rc, -1);
			ck_assert_int_eq(err.code, EINVAL);
			ck_assert_str_eq(c, "");
			ck_assert_msg(strstr(err.msg, "not a Kubernetes namespace name"), "%s", err.msg);
		}
	}
}
END_TEST

/* An exclusive class's resource must be a name the kubelet registers:
 * corecarve.io/<name>-cores, a qualified name of at most 63 characters
 * after the domain, starting with a letter or digit. */
START_TEST(test_resource_names)
{
	char yaml[512], name[80];
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p;

	memset(name, 'a', 57);
	name[57] = 0;
	snprintf(yaml, sizeof(yaml), "classes:\n  %s: {coreType: performance}\n", name);
	p = cc_policy_parse(yaml, strlen(yaml), "p.yaml", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	cc_policy_free(p);
	snprintf(yaml, sizeof(yaml), "classes:\n  %sa: {coreType: performance}\n", name);
	ck_assert_ptr_null(cc_policy_parse(yaml, strlen(yaml), "p.yaml", &err));
	ck_assert_msg(strstr(err.msg, "p.yaml:2:3: classes.") &&
			      strstr(err.msg, ": an exclusive class is published to Kubernetes as "
					      "corecarve.io/<name>-cores, so its name starts with a-z or 0-9 and has at "
					      "most 57 characters; rename the class"),
		      "%s", err.msg);
	/* A shared class is never published: its name may be longer. */
	snprintf(yaml, sizeof(yaml), "classes:\n  %sa: {coreType: performance, exclusive: false}\n", name);
	cc_err_clear(&err);
	p = cc_policy_parse(yaml, strlen(yaml), "p.yaml", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	cc_policy_free(p);
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_parse("classes:\n  -x: {coreType: performance}\n", 39, "p.yaml", &err));
	ck_assert_msg(strstr(err.msg, "starts with a-z or 0-9"), "%s", err.msg);
}
END_TEST

/* The command: names from standard input as kubectl prints them, and
 * each misuse a one-line error, exit 2, nothing on stdout. */
START_TEST(test_quotas_cli)
{
	const char *bin = cc_test_bin("policy quotas");
	_cleanup_free_ char *out = NULL;
	static const struct {
		const char *args, *in, *msg;
	} bad[] = {
		{ "quotas", "", "corecarve: policy quotas: name the namespaces" },
		{ "quotas -", "# none\n\n", "corecarve: policy quotas: name the namespaces" },
		{ "quotas dev Dev", "", "corecarve: policy quotas: namespace \"Dev\": not a Kubernetes namespace name" },
		{ "quotas -", "namespace/dev\nnamespace/x_y\n", "corecarve: policy quotas: namespace \"x_y\"" },
		{ "quotas --json dev", "", "corecarve: policy quotas: unexpected argument \"--json\"" },
		{ "quotas dev --policy /nonexistent/p.yaml", "", "corecarve: policy /nonexistent/p.yaml: No such file" },
		{ "quotes dev", "", "corecarve: policy: unknown subcommand \"quotes\" (expected quotas)" },
	};
	char cmd[512];
	int rc;

	if (!bin)
		return;
	rc = cc_test_sh(&out, "printf 'namespace/dev\\n\\n# a comment\\n  trading \\r\\nnamespaces/rt-a\\n' | '%s' policy quotas "
			      "--policy '%s/examples/policy-2socket-smt.yaml' - 2>&1", bin, CC_SOURCE_DIR);
	ck_assert_msg(rc == 0 && strstr(out, "  namespace: dev\n") && strstr(out, "  namespace: rt-a\n") &&
			      !strstr(out, "namespace: trading"),
		      "%d %s", rc, out);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_free_ char *o = NULL, *e = NULL;

		snprintf(cmd, sizeof(cmd), "printf '%s' | '%s' policy %s", bad[i].in, bin, bad[i].args);
		rc = cc_test_sh(&o, "%s 2>/dev/null", cmd);
		ck_assert_msg(rc == 2 && !*o, "%zu: %d stdout %s", i, rc, o);
		rc = cc_test_sh(&e, "%s 2>&1 >/dev/null", cmd);
		ck_assert_msg(!strncmp(e, bad[i].msg, strlen(bad[i].msg)) && strchr(e, '\n') == e + strlen(e) - 1,
			      "%zu: %s", i, e);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("admit");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_limit_pays);
	tcase_add_test(t, test_guaranteed);
	tcase_add_test(t, test_without_limit);
	tcase_add_test(t, test_namespaces);
	tcase_add_test(t, test_tenant_forged);
	tcase_add_test(t, test_caps);
	tcase_add_loop_test(t, test_bad_keys, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(t, test_min_shared_share);
	tcase_add_test(t, test_quotas);
	tcase_add_test(t, test_resource_names);
	tcase_add_test(t, test_quotas_cli);
	suite_add_tcase(s, t);
	t = tcase_create("hook");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_hook_refuses_unpaid, 0, 3);
	tcase_add_loop_test(t, test_hook_refuses_burstable, 0, 3);
	tcase_add_loop_test(t, test_quota_above_pod_kept, 0, 3);
	tcase_add_loop_test(t, test_newcomer_narrowed, 0, 3);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(suite)
