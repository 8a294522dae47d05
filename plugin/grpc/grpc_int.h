/* corecarve: what the gRPC wire's files share (grpc_io.c), private to them. */
#ifndef CC_GRPC_INT_H
#define CC_GRPC_INT_H

#include <nghttp2/nghttp2.h>

#include "grpc.h"

#define GRPC_NV(n, v) \
	{ (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* Bytes nghttp2 produced that the socket did not take yet. */
struct grpc_out {
	uint8_t *buf;
	size_t len;
};

/* Move what `s` has to send into `o` and write as much of it as `fd`
 * takes now (non-blocking).  -1 (err) when the socket failed. */
int grpc_flush(nghttp2_session *s, int fd, struct grpc_out *o, struct cc_err *err);

/* Read what is there and hand it to `s`: 1 read, 0 the peer closed, -1
 * (err) a socket error or bytes that break HTTP/2 (EPROTO). */
int grpc_pull(nghttp2_session *s, int fd, struct cc_err *err);

/* "application/grpc" or "application/grpc+<codec>" / ";<params>". */
int grpc_is_content_type(const uint8_t *v, size_t n);

#endif
