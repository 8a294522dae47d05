/* corecarve: what the policy's files share, private to them.
 *
 *   policy.c        parsing and loading a policy, the reserved set
 *   policy_vms.c    the policy against a VM list (vmconfig.h)
 *   policy_power.c  a class's power: mapping (declared in policy_schema.h,
 *                   which the annotation reader shares)
 *   policy_default.c  the embedded default policy
 *   policy_trust.c  who pays and who may: withoutCpuLimit, minShared's
 *                   share, a class's namespaces and caps */
#ifndef CC_POLICY_INT_H
#define CC_POLICY_INT_H

#include "policy.h"
#include "yaml_tree.h"

/* The policy's own `vms:` section (node `n`): parsed as a VM list and
 * checked against the classes of `p` (cc_policy_check_vms), so that a
 * policy is refused whole, whichever part is wrong.  Nothing is kept. */
int policy_parse_vms(const struct cc_policy *p, const struct cc_ynode *n, struct cc_err *err);

/* The top level's withoutCpuLimit and minShared (a count or "N%"), into
 * `p` (defaults set by the caller). */
int policy_parse_trust_top(struct cc_policy *p, const struct cc_ynode *root, struct cc_err *err);
/* A class's namespaces, maxCpusPerPod and maxCpus (node `cls`). */
int policy_parse_class_trust(const struct cc_ynode *cls, struct cc_pclass *c, struct cc_err *err);

#endif
