/* corecarve CLI: the crash-test switch, CORECARVE_FAULT=<step> (plugin/core/fault.h).
 *
 * Only a build for the tests reads it: `make` compiles this file a second
 * time with -DCC_FAULT_INJECTION into $(BUILD)/faults/corecarve, the binary
 * `make unit` and `make e2e` run.  The installed corecarve ignores the
 * variable, so nobody who can set a hook's environment can make it SIGKILL
 * itself between a cgroup write and the ledger commit. */
#include <stdlib.h>

#include "commands.h"

const char *cc_cli_fault(void)
{
#ifdef CC_FAULT_INJECTION
	const char *v = getenv("CORECARVE_FAULT");

	return v && *v ? v : NULL;
#else
	return NULL;
#endif
}

bool cc_cli_fault_built(void)
{
#ifdef CC_FAULT_INJECTION
	return true;
#else
	return false;
#endif
}
