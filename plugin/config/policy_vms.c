/* corecarve: the policy against a VM list (vmconfig.h): every class a VM
 * names must be one of the policy's, whether the list is vms.yaml or the
 * policy's own `vms:` section (policy_int.h). */
#define _GNU_SOURCE
#include "policy_int.h"

#include <errno.h>
#include <stdio.h>

#include "vmconfig.h"

int cc_policy_check_vms(const struct cc_policy *p, const struct cc_vmconfig *cfg, struct cc_err *err)
{
	for (int i = 0; i < cfg->n; i++) {
		char known[512];
		size_t len = 0;

		if (cc_policy_class(p, cfg->vms[i].class_name))
			continue;
		known[0] = '\0';
		for (int k = 0; k < p->nclasses && len < sizeof(known); k++)
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "",
						p->classes[k].name);
		return cc_err_set(err, EINVAL, "%s: unknown placement class \"%s\" (known: %s)", cfg->vms[i].class_where,
				  cfg->vms[i].class_name, known);
	}
	return 0;
}

int policy_parse_vms(const struct cc_policy *p, const struct cc_ynode *n, struct cc_err *err)
{
	struct cc_vmconfig vms;
	int r;

	if (cc_vmconfig_parse_node(n, &vms, err) < 0)
		return -1;
	r = cc_policy_check_vms(p, &vms, err);
	cc_vmconfig_fini(&vms);
	return r;
}
