/* corecarve: a grant as a container names it.  corecarve device-plugin's
 * Allocate records a grant (a ledger carve of kind "grant": whole cores the
 * kubelet gave a pod of corecarve.io/<class>-cores) and answers the
 * container annotation CC_GRANT_KEY, "grant:<class>:<cpus>:<token>": the
 * grant's id, then a secret drawn for it that only the ledger (root's) and
 * the kubelet hold.  The hook carves exactly the granted cores for a
 * container whose annotation names a grant the ledger has with that token
 * (docs/device-plugin.md, "The hook carves a grant").  Parsing is strict:
 * the value comes from the container's annotations, which a pod's author
 * may be able to write. */
#ifndef CC_GRANT_H
#define CC_GRANT_H

#include <hwloc.h>
#include <jansson.h>

#include "error.h"
#include "ledger.h" /* CC_GRANT_ID_MAX, CC_GRANT_TOKEN_*: the ledger's record of a grant */

#define CC_GRANT_KEY "corecarve.io/grant"

struct cc_grant_ref {
	char id[CC_GRANT_ID_MAX]; /* grant:<class>:<cpus> */
	char class_name[64];
	char token[CC_GRANT_TOKEN_MAX];
	hwloc_bitmap_t cpus; /* the CPUs the id names */
};

/* The annotation CC_GRANT_KEY among `annotations` (an OCI object): 1 with
 * *out filled (the caller runs cc_grant_ref_fini), 0 when there is none,
 * -1 with err "annotation corecarve.io/grant: <what is wrong>; <fix>". */
int cc_grant_ref_lookup(const json_t *annotations, struct cc_grant_ref *out, struct cc_err *err);

/* The same for one value. */
int cc_grant_ref_parse(const char *value, size_t len, struct cc_grant_ref *out, struct cc_err *err);

void cc_grant_ref_fini(struct cc_grant_ref *g);

#endif
