/* corecarve: the words a placement is said in — a policy class's rules
 * and a request's overrides (policy.h), a VM's memory (vmconfig.h), a
 * carved command's (exec.h).  Their names are policy.h's
 * (cc_smt_name ...), which parses them.  A header of its own so that the
 * VM list does not include the policy for one enum. */
#ifndef CC_PLACEMENT_H
#define CC_PLACEMENT_H

enum cc_smt { CC_SMT_ISOLATE, CC_SMT_FULL };
enum cc_memory { CC_MEM_LOCAL, CC_MEM_SPREAD, CC_MEM_ANY };
enum cc_irq { CC_IRQ_STEER_AWAY, CC_IRQ_LEAVE };
enum cc_partition { CC_PART_ROOT, CC_PART_ISOLATED };
enum cc_quota { CC_QUOTA_DROP, CC_QUOTA_KEEP };
enum cc_align { CC_ALIGN_NONE, CC_ALIGN_L2 };

#endif
