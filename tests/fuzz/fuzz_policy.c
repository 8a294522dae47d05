/* /etc/corecarve/policy.yaml: the whole strict loader (libyaml events,
 * tree limits, schema, cpu-lists, coreClasses). */
#include "fuzz.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_parse((const char *)data, size, "policy.yaml", &err);

	CC_FUZZ_CHECK_ERR(p == NULL, &err);
	if (p) {
		/* Every class the loader accepted can be found by its name. */
		for (int i = 0; i < p->nclasses; i++)
			if (cc_policy_class(p, p->classes[i].name) != &p->classes[i])
				abort();
		cc_policy_free(p);
	}
	return 0;
}
