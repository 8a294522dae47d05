/* corecarve: what the effect family's files share: effect.c (the table and
 * the loops) and one file per effect.  Private to plugin/effects/effect*. */
#ifndef CC_EFFECT_INT_H
#define CC_EFFECT_INT_H

#include "effect.h"

/* "corecarve: <carve id>: <line>" on the context's log, when it has one. */
void effect_log(const struct cc_effect_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The run's carve, looked up by id; ENOENT when gone. */
struct cc_carve *effect_carve_of(const struct cc_effect_run *run, struct cc_err *err);

#endif
