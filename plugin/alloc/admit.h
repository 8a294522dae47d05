/* corecarve: admission — whether a container may carve what it asks, before
 * the allocator chooses CPUs: who may use the class (the policy's
 * namespaces), what pays for the carve (the container's CPU limit), and the
 * policy's caps (per pod, per class).  Pure functions of the policy, the
 * request, the tenant (tenant.h) and what the ledger already holds:
 * unit-tested without root (tests/unit/test_admit.c).  docs/security.md says
 * why each rule exists, docs/policy.md how to set it. */
#ifndef CC_ADMIT_H
#define CC_ADMIT_H

#include "error.h"
#include "policy.h"
#include "tenant.h"

/* What the class's live carves hold already (their CPUs, parked siblings
 * not counted: they are the class's price, not the pod's), node-wide and
 * of the pod (the carves whose cgroup has the container's parent). */
struct cc_admit_usage {
	int class_cpus;
	int pod_cpus;
};

/* Who may and what pays: 0, or -1 with err naming the annotation key,
 * the rule, the policy key and the fix.  `key` is the annotation the
 * request came from (for the message). */
int cc_admit_tenant(const struct cc_policy *p, const struct cc_pclass *pc, const struct cc_request *req,
		    const struct cc_tenant *t, const char *key, struct cc_err *err);

/* The caps: 0, or -1 with err.  `pod` is the pod's cgroup, for the
 * message. */
int cc_admit_caps(const struct cc_pclass *pc, const struct cc_request *req, const struct cc_admit_usage *u,
		  const char *pod, const char *key, struct cc_err *err);

/* Whether the class has caps (the flow then reads the ledger's carves). */
bool cc_admit_has_caps(const struct cc_pclass *pc);

#endif
