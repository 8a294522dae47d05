/* corecarve: what the gRPC wire's files share (grpc_io.c), private to them. */
#ifndef CC_GRPC_INT_H
#define CC_GRPC_INT_H

#include <nghttp2/nghttp2.h>

#include "grpc.h"

#define GRPC_NV(n, v) \
	{ (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* Bytes nghttp2 produced that the socket did not take yet: at most about
 * GRPC_OUT_MAX.  Past it, frames stay in nghttp2's own queue, where its
 * flood limit applies (a peer that sends PINGs and never reads their
 * acknowledgements is cut off: NGHTTP2_ERR_FLOODED), instead of in an
 * unbounded buffer of ours. */
#define GRPC_OUT_MAX (64u << 10)
struct grpc_out {
	uint8_t *buf;
	size_t len;
};

/* Move what `s` has to send into `o` and write as much of it as `fd`
 * takes now (non-blocking).  -1 (err) when the socket failed. */
int grpc_flush(nghttp2_session *s, int fd, struct grpc_out *o, struct cc_err *err);

/* Read what is there and hand it to `s`: 1 read, 0 the peer closed, -1
 * (err) a socket error, bytes that break HTTP/2 (EPROTO), or a peer
 * nghttp2 found flooding it (ENOBUFS: close it, it does not read). */
int grpc_pull(nghttp2_session *s, int fd, struct cc_err *err);

/* grpc-message's wire form (gRPC's PROTOCOL-HTTP2.md): bytes outside
 * printable ASCII, and '%', as %XX.  `out` is cut between escapes at
 * `len`. */
void grpc_message_encode(char *out, size_t len, const char *msg);
/* Its reading: %XX back to the byte; a '%' not followed by two hex digits
 * is kept as it is (the spec asks receivers to be lenient); bytes that
 * are not printable ASCII become '?', so the text is one safe line. */
void grpc_message_decode(char *out, size_t len, const uint8_t *v, size_t n);
/* grpc-status: 1 with *code for "0".."16", 0 for anything else. */
int grpc_status_parse(const uint8_t *v, size_t n, int *code);

/* "application/grpc" or "application/grpc+<codec>" / ";<params>". */
int grpc_is_content_type(const uint8_t *v, size_t n);

#endif
