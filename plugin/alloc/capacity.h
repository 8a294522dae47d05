/* corecarve: what each placement class can still carve on this node — the
 * allocatable/allocated view `kubectl describe node` gives for resources.
 *
 * For every class of the policy: the CPUs of the core class it draws from
 * (total), how many of them are reserved, carved (run), parked and free,
 * and the largest request the allocator accepts now and on an empty node.
 * The largest requests are asked of cc_allocate itself (a pure function),
 * so they obey every rule a real request does: whole cores, SMT, minShared,
 * L2 clusters, the reserved set.  `status`, the Prometheus file and
 * `doctor` print it.
 */
#ifndef CC_CAPACITY_H
#define CC_CAPACITY_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "ledger.h"
#include "policy.h"
#include "topo.h"

struct cc_capacity {
	char name[64];                /* the placement class */
	char core_class[CC_NAME_MAX]; /* drawn from ("any": every class); "" when the host has none */
	bool fell_back;               /* core_class is the class's fallback */
	bool exclusive;               /* false: a shared class, nothing is carved */
	/* CPUs of core_class (online): total = reserved + carved + parked + free. */
	int total, reserved, carved, parked, free;
	int carves;                   /* carves of this placement class in the ledger */
	/* The smallest request the class can express (cpus: 1; a multiple of
	 * the threads per core under smt: full; whole clusters under
	 * strictClusters); 0 when none can be expressed on this host. */
	int smallest;
	/* The largest cpus request the allocator accepts: now (with the
	 * ledger's carves) and on an empty node.  0: none.  For a shared class
	 * the size of the pool it would run on. */
	int largest, largest_empty;
	/* Why the smallest request is refused on the empty node, and what to
	 * change in the policy; "" when it fits.  A class with a reason here
	 * can never carve on this node. */
	char never[CC_ERR_MSG_MAX];
	char fix[256];
};

/* Every class of `p` on `t`, with the carves of `l` (NULL: an empty node).
 * *out (caller frees) receives p->nclasses entries, in the policy's
 * order.  -1 with err only for out of memory. */
int cc_capacity_compute(const struct cc_topo *t, const struct cc_policy *p, const struct cc_ledger *l,
			struct cc_capacity **out, int *n, struct cc_err *err);

/* The states of corecarve_class_cpus{state=}, in the order the fields are
 * above: total, reserved, carved, parked, free. */
#define CC_CAPACITY_NSTATES 5
extern const char *const cc_capacity_states[CC_CAPACITY_NSTATES];
int cc_capacity_state(const struct cc_capacity *c, int state);

/* The entries as JSON (status --json's "capacity"); NULL on ENOMEM. */
json_t *cc_capacity_json(const struct cc_capacity *c, int n);

#endif
