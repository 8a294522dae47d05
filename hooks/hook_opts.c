/* corecarve: the hook's options, declared once: `corecarve hook` parses
 * them and so does its first stage, which reads those marked
 * CC_OPT_FIRST_STAGE itself and hands any other to the full hook (an
 * option it does not read could change the answer). */
#include "hook_opts.h"

const struct cc_opt cc_opts_hook[] = {
	{ "--state", NULL, "DIR", CC_HOOK_OPT_STATE, CC_OPT_FIRST_STAGE, NULL },
	/* The first stage reads no policy: its answer rests on annotations
	 * and the ledger alone, whichever policy the full hook would load. */
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, CC_OPT_FIRST_STAGE, NULL },
	{ "--verbose", NULL, NULL, CC_HOOK_OPT_VERBOSE, CC_OPT_FIRST_STAGE, NULL },
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, NULL },
	{ "--hwloc-xml", NULL, "FILE", CC_CLI_OPT_XML, CC_CLI_REFUSED, NULL },
	{ "--synthetic", NULL, "DESC", CC_CLI_OPT_SYNTHETIC, CC_CLI_REFUSED, NULL },
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};
