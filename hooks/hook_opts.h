/* corecarve: the hook's options (hook_opts.c), which the full hook
 * (hook.c) and its first stage (first_stage.c) both parse with. */
#ifndef CC_HOOK_OPTS_H
#define CC_HOOK_OPTS_H

#include "commands.h"

enum {
	CC_HOOK_OPT_STATE = 1,
	CC_HOOK_OPT_VERBOSE,
};

#endif
