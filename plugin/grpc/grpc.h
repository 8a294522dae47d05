/* corecarve: the gRPC wire the kubelet speaks to device plugins — HTTP/2
 * without TLS ("prior knowledge" h2c) on unix sockets, on nghttp2, each
 * message a protobuf-c message in gRPC's length-prefixed frame (1-byte
 * compressed flag, 4-byte big-endian length), `content-type:
 * application/grpc`, the outcome in the trailers `grpc-status` and
 * `grpc-message` (docs/device-plugin.md says why not libgrpc).
 *
 * A server listens on one or more sockets, each with its methods' table
 * and argument; a unary method answers once, a server-streaming one
 * (ListAndWatch) is asked again at each cc_grpc_server_run tick and sends
 * its message again whenever its bytes change.  A client makes one unary
 * call (Registration.Register, PodResources List). */
#ifndef CC_GRPC_H
#define CC_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* A message larger than this, either way, is refused (RESOURCE_EXHAUSTED),
 * as gRPC's own default receive limit does: a peer cannot make the plugin
 * buffer more. */
#define CC_GRPC_MSG_MAX (4u << 20)

/* gRPC status codes (grpc/status.h), those corecarve sends. */
enum cc_grpc_code {
	CC_GRPC_OK = 0,
	CC_GRPC_INVALID_ARGUMENT = 3,
	CC_GRPC_NOT_FOUND = 5,
	CC_GRPC_ALREADY_EXISTS = 6,
	CC_GRPC_RESOURCE_EXHAUSTED = 8,
	CC_GRPC_FAILED_PRECONDITION = 9,
	CC_GRPC_UNIMPLEMENTED = 12,
	CC_GRPC_INTERNAL = 13,
	CC_GRPC_UNAVAILABLE = 14,
};

/* The status for an errno a handler set: EINVAL invalid argument, ENOENT
 * not found, EEXIST already exists, ENOSPC/E2BIG resource exhausted,
 * EBUSY failed precondition, ENOSYS unimplemented, anything else internal. */
enum cc_grpc_code cc_grpc_code_of(int err);

/* ---- the length-prefixed frame ---- */

/* `msg` framed into a new buffer (*out, *outlen; caller frees). */
int cc_grpc_frame(const uint8_t *msg, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err);

/* Reassembles messages from a stream's DATA as it arrives, in pieces of
 * any size.  `limit` 0: CC_GRPC_MSG_MAX. */
struct cc_grpc_reader {
	uint8_t *buf;
	size_t len, cap, limit;
	size_t taken; /* the message cc_grpc_reader_next handed out last */
};
void cc_grpc_reader_init(struct cc_grpc_reader *r, size_t limit);
void cc_grpc_reader_fini(struct cc_grpc_reader *r);
/* Append bytes.  -1 (err: E2BIG) as soon as a frame's header declares a
 * message over the limit, EINVAL for a compressed message (corecarve
 * offers no grpc-encoding, so a peer may not send one) or a flag byte that
 * is neither 0 nor 1. */
int cc_grpc_reader_feed(struct cc_grpc_reader *r, const uint8_t *data, size_t n, struct cc_err *err);
/* The next whole message: 1 with *msg (borrowed until the next call) and
 * *len, 0 when none is whole yet, -1 as for feed when the header behind
 * the last message is refused. */
int cc_grpc_reader_next(struct cc_grpc_reader *r, const uint8_t **msg, size_t *len, struct cc_err *err);
/* The stream ended: -1 (EPROTO) when a message was cut short. */
int cc_grpc_reader_end(const struct cc_grpc_reader *r, struct cc_err *err);

/* ---- server ---- */

/* A method's answer, into *out (malloc'd; NULL/0 for an empty message).
 * -1 with err: the call ends with cc_grpc_code_of(err->code) and err->msg
 * as grpc-message.  A streaming method is called again at each tick with
 * the same request. */
typedef int (*cc_grpc_handler)(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen,
			       struct cc_err *err);

struct cc_grpc_method {
	const char *path;   /* "/v1beta1.DevicePlugin/Allocate" */
	bool streaming;     /* server-streaming */
	cc_grpc_handler call;
	/* A unary call that may wait (a lock another process holds): it runs
	 * on the server's worker thread, one such call at a time, while the
	 * poll loop goes on serving every other call; its answer is sent
	 * when it is ready.  Its handler must be safe beside the others. */
	bool slow;
};

struct cc_grpc_server;

struct cc_grpc_server *cc_grpc_server_new(struct cc_err *err);
/* Listen on unix socket `path` (an old socket file there is replaced,
 * mode 0600) for `methods` (n of them), each called with `arg`.  Returns
 * the listener's index. */
int cc_grpc_server_listen(struct cc_grpc_server *s, const char *path, const struct cc_grpc_method *methods, int n,
			  void *arg, struct cc_err *err);
/* Refuse requests over `bytes` (0: CC_GRPC_MSG_MAX, the default). */
void cc_grpc_server_set_limit(struct cc_grpc_server *s, size_t bytes);
/* Serve a connection already made (tests: one end of a socketpair). */
int cc_grpc_server_adopt(struct cc_grpc_server *s, int fd, int listener, struct cc_err *err);
/* Whether listener i's socket file is still the one it made (a restarted
 * kubelet empties the directory). */
bool cc_grpc_server_listening(const struct cc_grpc_server *s, int i);
/* Make listener i's socket again (after it was removed). */
int cc_grpc_server_relisten(struct cc_grpc_server *s, int i, struct cc_err *err);
/* Serve for at most `ms` milliseconds: accept, read, answer, send the
 * streams whose message changed.  A connection that breaks HTTP/2 gets a
 * GOAWAY and is closed; that is not an error of the server. */
int cc_grpc_server_run(struct cc_grpc_server *s, int ms, struct cc_err *err);
int cc_grpc_server_nconns(const struct cc_grpc_server *s);
/* Close every connection and listener and remove the socket files. */
void cc_grpc_server_free(struct cc_grpc_server *s);

/* ---- client ---- */

struct cc_grpc_reply {
	enum cc_grpc_code code;
	char message[512];  /* grpc-message */
	uint8_t *msg;       /* the reply message, malloc'd; NULL when none */
	size_t len;
};
void cc_grpc_reply_fini(struct cc_grpc_reply *r);

/* One unary call to `method` on unix socket `path`, waiting at most
 * `timeout_ms`.  0 with *reply filled (its code may be an error the peer
 * sent), -1 with err when the call could not be made or the answer broke
 * the protocol. */
int cc_grpc_call(const char *path, const char *method, const uint8_t *req, size_t len, int timeout_ms,
		 struct cc_grpc_reply *reply, struct cc_err *err);

#endif
