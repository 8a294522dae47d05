/* corecarve: the node policy (/etc/corecarve/policy.yaml) and the
 * per-container placement request (the corecarve.io/placement annotation).
 */
#ifndef CC_POLICY_H
#define CC_POLICY_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "paths.h"
#include "placement.h"
#include "policy_power.h"
#include "topo.h"

#define CC_ANNOTATION_KEY "corecarve.io/placement"
#define CC_ANNOTATION_MAX 4096 /* bytes of one annotation value */
#define CC_ANNOTATION_KEY_MAX 512 /* bytes of an annotation key, with its NUL (Kubernetes: 317) */
#define CC_POLICY_MAX (1u << 20)
#define CC_POLICY_NAMESPACES_MAX 32 /* classes.<name>.namespaces entries */
#define CC_POLICY_NAMESPACE_LEN 64  /* one entry with its NUL: a DNS label, or a glob of one */
#define CC_POLICY_DEFAULT_SOURCE "embedded default" /* cc_policy->source of the default */

/* The annotation keys a class may let an annotation set (`class` always
 * may): classes.<name>.annotationMaySet, a bit each. */
enum cc_req_key {
	CC_REQ_CPUS = 1u << 0,
	CC_REQ_MEMORY = 1u << 1,
	CC_REQ_IRQ = 1u << 2,
	CC_REQ_SMT = 1u << 3,
};
/* Without annotationMaySet: what only changes the container itself (see
 * policy.c, parse_may_set). */
#define CC_REQ_DEFAULT (CC_REQ_CPUS | CC_REQ_MEMORY)

/* A placement class of the policy (not a core class of the topology). */
struct cc_pclass {
	char name[64];
	/* Core class drawn from: "performance", "efficient", "mid", "low-power",
	 * an override class name, or "any". */
	char core_type[CC_NAME_MAX];
	/* Core class used when the host has none of core_type ("" = refuse);
	 * throughput falls back to performance on hosts without E-cores. */
	char fallback[CC_NAME_MAX];
	enum cc_smt smt;
	bool exclusive;
	enum cc_memory memory;
	enum cc_irq irq;
	enum cc_partition partition;
	enum cc_quota quota;
	enum cc_align align;
	bool strict_clusters;
	struct cc_power_spec power; /* `power:`; all empty when absent */
	unsigned annotation_may_set; /* CC_REQ_* bits; CC_REQ_DEFAULT when absent */
	/* Who may use the class (classes.<name>.namespaces): Kubernetes pods
	 * of these namespaces only, each a name or a glob ("team-*"); none
	 * listed: every namespace.  Containers Kubernetes did not start are
	 * the node's admin's and may use every class. */
	int nnamespaces;
	char namespaces[CC_POLICY_NAMESPACES_MAX][CC_POLICY_NAMESPACE_LEN];
	/* Caps (0: none): the CPUs one pod may carve in the class
	 * (maxCpusPerPod: its containers' carves together), and the CPUs the
	 * class may hold on the node (maxCpus). */
	int max_cpus_per_pod;
	int max_cpus;
};

/* What a container without a CPU limit may carve (withoutCpuLimit). */
enum cc_unlimited { CC_UNLIMITED_REFUSE, CC_UNLIMITED_ALLOW };

struct cc_policy {
	char source[256];            /* file path or "embedded default" */
	bool has_reserved;
	hwloc_bitmap_t reserved;     /* only when has_reserved */
	int nclasses;
	struct cc_pclass *classes;
	int noverrides;
	struct cc_class_override *overrides; /* coreClasses */
	/* CPUs that must stay in the shared pool of each core class (never
	 * carve the last ones); default 1.  With minShared: "N%",
	 * min_shared_share is set, min_shared_pct is N, and the floor of each
	 * pool is that share of its unreserved CPUs, rounded up
	 * (cc_policy_min_shared). */
	int min_shared;
	bool min_shared_share;
	int min_shared_pct;
	/* withoutCpuLimit: a container without a CPU limit pays for no CPU;
	 * whether it may carve all the same, for Kubernetes pods and for the
	 * rest (podman, crun: started by the node's own admin). */
	enum cc_unlimited unlimited_kubernetes;
	enum cc_unlimited unlimited_other;
};

/* The shared-pool floor of a pool of `unreserved` CPUs: min_shared, or
 * min_shared_pct of them rounded up. */
int cc_policy_min_shared(const struct cc_policy *p, int unreserved);
const char *cc_unlimited_name(enum cc_unlimited v);
/* The extended resource an exclusive class is published as to Kubernetes
 * (corecarve device-plugin, corecarve policy quotas):
 * "corecarve.io/<class>-cores".  Its name part is a Kubernetes qualified
 * name (at most 63 characters, starting with a letter or digit), which
 * the policy's parser holds an exclusive class's name to. */
#define CC_RESOURCE_DOMAIN "corecarve.io/"
#define CC_RESOURCE_SUFFIX "-cores"
#define CC_RESOURCE_NAME_MAX 63
void cc_policy_resource_name(const struct cc_pclass *c, char *buf, size_t len);
/* The ResourceQuota objects (YAML, on `out`) that keep each namespace of
 * `ns` (n names; a repeated one once) at requests.<resource>: "0" of
 * every exclusive class whose `namespaces` leave it out, so that the API
 * server refuses the pods the hook would refuse (corecarve policy
 * quotas).  A namespace every class admits gets none.  -1 (EINVAL) with
 * nothing written for a name that is not a namespace name. */
#define CC_QUOTA_NAME "corecarve-classes"
int cc_policy_quotas(const struct cc_policy *p, char *const *ns, int n, FILE *out, struct cc_err *err);
/* Whether class `c` lets a Kubernetes pod of namespace `ns` use it ("" = not
 * known: only a class without namespaces). */
bool cc_policy_namespace_allowed(const struct cc_pclass *c, const char *ns);

/* Load from `path`; when path is NULL: $CORECARVE_POLICY is NOT read here
 * (entry points read the environment) — the caller passes the resolved path,
 * or NULL for CC_POLICY_PATH falling back to the embedded default when that
 * file is absent.  A given path that does not exist is an error; so is a
 * file that is not regular or is larger than CC_POLICY_MAX.  Errors read
 * "<path>:<line>:<col>: <dotted.key>: <reason>". */
struct cc_policy *cc_policy_load(const char *path, struct cc_err *err);
/* The same with a root: a NULL path under a captured tree is the tree's
 * CC_POLICY_PATH, opened beneath the root (a link in the tree never
 * leads to this host's files; one that leads nowhere in it is refused),
 * else the embedded default.  A given path, or the host root, is
 * cc_policy_load's. */
struct cc_root;
struct cc_policy *cc_policy_load_in(const struct cc_root *root, const char *path, struct cc_err *err);
/* Parse policy text; `name` is the source used in errors and p->source. */
struct cc_policy *cc_policy_parse(const char *text, size_t len, const char *name,
				  struct cc_err *err);
/* The embedded default (source CC_POLICY_DEFAULT_SOURCE); the same text is
 * examples/policy-default.yaml. */
struct cc_policy *cc_policy_default(struct cc_err *err);
extern const char cc_policy_default_yaml[];
void cc_policy_free(struct cc_policy *p);
void cc_policy_freep(struct cc_policy **p);
#define _cleanup_policy_ __attribute__((cleanup(cc_policy_freep)))

const struct cc_pclass *cc_policy_class(const struct cc_policy *p, const char *name);

/* Every class a VM list (vmconfig.h) names exists in the policy; an error
 * names the key: "vms.yaml:3:12: vms.web.class: unknown placement class
 * \"x\" (known: ...)".  The policy's own `vms:` section is checked so by
 * cc_policy_parse. */
struct cc_vmconfig;
int cc_policy_check_vms(const struct cc_policy *p, const struct cc_vmconfig *cfg, struct cc_err *err);

/* Effective reserved set on a topology: the policy's `reserved` (a copy, as
 * written), or the default rule: for each package, its lowest-id core (with
 * online PUs) of the package's most plentiful core class (most cores; of
 * equal counts the less performant), else its lowest-id core, with all its
 * online PUs.  Caller frees; NULL only when out of memory. */
hwloc_bitmap_t cc_policy_reserved(const struct cc_policy *p, const struct cc_topo *t);
/* Where that set comes from, in a sentence for `plan` and `doctor`. */
void cc_policy_reserved_why(const struct cc_policy *p, const struct cc_topo *t, char *buf, size_t len);

/* The parsed annotation. */
struct cc_request {
	char class_name[64];
	int cpus;
	bool has_memory, has_irq, has_smt;
	enum cc_memory memory;
	enum cc_irq irq;
	enum cc_smt smt;
	/* The annotation key it was read from ("" when an operator wrote the
	 * request: corecarve exec, the vms list).  When set, cc_allocate holds
	 * the request to its class's annotationMaySet (cc_request_permitted). */
	char annotation[CC_ANNOTATION_KEY_MAX];
	/* NULL: the allocator may choose any core of the class; else only
	 * cores wholly inside (a grant's: the hook carves exactly those).
	 * Borrowed; never parsed from an annotation. */
	hwloc_const_bitmap_t within;
};

/* Parse one annotation value (YAML mapping). Strict: unknown keys, wrong
 * types, duplicates, aliases, > CC_ANNOTATION_MAX bytes are errors naming
 * the key. Does not check the class exists in the policy, nor that the
 * class lets an annotation set these keys (cc_allocate and the hook do);
 * out->annotation is set to the key (CC_ANNOTATION_KEY here).
 * Errors read "annotation corecarve.io/placement: cpus: expected an integer
 * >= 1, got \"0\""; *out is written only on success. */
int cc_request_parse(const char *yaml, size_t len, struct cc_request *out,
		     struct cc_err *err);
/* The same, naming annotation `key` in errors (e.g. the per-container key
 * cc_request_select returned). */
int cc_request_parse_key(const char *key, const char *yaml, size_t len,
			 struct cc_request *out, struct cc_err *err);

/* Whether class `pc` lets an annotation set what `r` sets: 0, or -1 with
 * err "irq: class \"latency\" does not let an annotation set irq (policy
 * classes.latency.annotationMaySet); remove irq from the annotation or add
 * it there" naming every key refused (the caller prefixes "annotation
 * <key>: ").  A class without cpus in its list takes no annotation at all. */
int cc_request_permitted(const struct cc_request *r, const struct cc_pclass *pc, struct cc_err *err);

/* "cpus, memory" for the CC_REQ_* bits `set` ("" for none), into buf. */
void cc_req_keys_format(unsigned set, char *buf, size_t size);

/* Choose the annotation that applies: "corecarve.io/placement.<name>" when
 * `container_name` is given and present, else "corecarve.io/placement".
 * Returns 1 and sets *value and *key (both borrowed from `annotations`)
 * when found, 0 when none.  OCI annotations are strings; a key whose value
 * is not a JSON string counts as absent here (cc_request_lookup reports it
 * as an error).  `annotations` may be NULL or a non-object: 0. */
struct json_t;
int cc_request_select(const struct json_t *annotations, const char *container_name,
		      const char **value, const char **key);

/* Select and parse in one step, strictly: returns 1 with *out filled (and
 * *key, borrowed, when key is not NULL), 0 when no annotation applies, -1
 * with err set when the applicable value is not a JSON string, does not
 * parse, or `annotations` is not a JSON object.  Errors are prefixed
 * "annotation <key>: ".  This is what the hook should call. */
int cc_request_lookup(const struct json_t *annotations, const char *container_name,
		      struct cc_request *out, const char **key, struct cc_err *err);

/* cc_request_lookup on an OCI spec's annotations as the runtimes write
 * them (docs/hook.md): the container's name within its pod from the key
 * its runtime uses (containerd's CRI: io.kubernetes.cri.container-name;
 * CRI-O: io.kubernetes.container.name, the kubelet's label it copies), and
 * a pod's sandbox (pause) container never takes an annotation: the pod's
 * annotations reach its spec too (containerd's pod_annotations, CRI-O's
 * copy of all of them), but it holds the pod's namespaces and runs
 * nothing.  Returns what cc_request_lookup returns. */
int cc_request_lookup_oci(const struct json_t *annotations, struct cc_request *out, const char **key,
			  struct cc_err *err);
/* The pod-sandbox test of cc_request_lookup_oci. */
bool cc_oci_is_sandbox(const struct json_t *annotations);

/* Names of the enums, for output. */
const char *cc_smt_name(enum cc_smt v);
const char *cc_memory_name(enum cc_memory v);
const char *cc_irq_name(enum cc_irq v);
const char *cc_partition_name(enum cc_partition v);
const char *cc_quota_name(enum cc_quota v);
const char *cc_align_name(enum cc_align v);

#endif
