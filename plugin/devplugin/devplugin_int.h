/* corecarve: what the device plugin's files share, private to them. */
#ifndef CC_DEVPLUGIN_INT_H
#define CC_DEVPLUGIN_INT_H

#include <protobuf-c/protobuf-c.h>
#include <sys/stat.h>

#include "devplugin.h"
#include "grpc.h"

/* One resource's socket: what its methods are called with. */
struct dp_endpoint {
	struct cc_devplugin *dp;
	const struct cc_dp_resource *r;
	FILE *log;
	/* The last ListAndWatch answer and the ledger file it was made from
	 * (its identity: each commit renames a new file in): a tick that
	 * finds the same file sends the same bytes without reading it. */
	struct stat seen;
	uint8_t *answer;
	size_t answer_len;
	int reuses;
};

#define DP_NMETHODS 5
/* The DevicePlugin service (devplugin_rpc.c). */
extern const struct cc_grpc_method dp_methods[DP_NMETHODS];

/* `m` packed into a new buffer. */
int dp_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len, struct cc_err *err);

#endif
