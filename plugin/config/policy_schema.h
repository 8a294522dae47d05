/* corecarve: what the policy and the annotation readers share (internal to
 * policy.c and annotation.c): the value tables of the enums, and the shape
 * of a class name. */
#ifndef CC_POLICY_SCHEMA_H
#define CC_POLICY_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "yaml_tree.h"

extern const struct cc_yenum cc_smt_values[];
extern const struct cc_yenum cc_memory_values[];
extern const struct cc_yenum cc_irq_values[];
extern const struct cc_yenum cc_partition_values[];
extern const struct cc_yenum cc_quota_values[];
extern const struct cc_yenum cc_align_values[];
/* The annotation keys a class's annotationMaySet may list, CC_REQ_* bits. */
extern const struct cc_yenum cc_req_key_values[];

/* [a-z0-9-]{1,max}: names that are safe in paths, logs and JSON keys. */
bool cc_policy_name_ok(const char *s, size_t max);

/* A class's `power:` mapping (policy_power.c).  Zeroed when absent. */
extern const char *const cc_policy_power_keys[]; /* NULL-terminated */
struct cc_power_spec;
int cc_policy_parse_power(const struct cc_ynode *n, struct cc_power_spec *out, struct cc_err *err);

#endif
