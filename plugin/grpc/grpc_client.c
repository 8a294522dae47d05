/* corecarve: one unary gRPC call over a unix socket (grpc.h), on an
 * nghttp2 client session: Registration.Register on the kubelet's socket. */
#define _GNU_SOURCE
#include "grpc_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

struct call {
	uint8_t *req;
	size_t reqlen, reqoff;
	struct cc_grpc_reader in;
	int status;       /* :status, 0 until seen */
	int code;         /* grpc-status, -1 until seen, -2 malformed */
	char message[512];
	bool closed;
	struct cc_err err;
};

static ssize_t read_req(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			nghttp2_data_source *src, void *user)
{
	struct call *c = src->ptr;
	size_t n = c->reqlen - c->reqoff;

	(void)s;
	(void)id;
	(void)user;
	if (n > length)
		n = length;
	memcpy(buf, c->req + c->reqoff, n);
	c->reqoff += n;
	if (c->reqoff == c->reqlen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct call *c = user;

	(void)s;
	(void)f;
	(void)flags;
	if (nlen == 7 && !memcmp(name, ":status", 7))
		c->status = vlen == 3 && !memcmp(value, "200", 3) ? 200 : -1;
	else if (nlen == 11 && !memcmp(name, "grpc-status", 11)) {
		int v;

		c->code = grpc_status_parse(value, vlen, &v) ? v : -2;
	} else if (nlen == 12 && !memcmp(name, "grpc-message", 12))
		grpc_message_decode(c->message, sizeof(c->message), value, vlen);
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
	struct call *c = user;

	(void)s;
	(void)flags;
	(void)id;
	if (!c->err.code)
		cc_grpc_reader_feed(&c->in, data, len, &c->err);
	return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
	struct call *c = user;

	(void)s;
	(void)id;
	if (code != NGHTTP2_NO_ERROR && !c->err.code)
		cc_err_set(&c->err, EPROTO, "stream reset (http2 error %u)", code);
	c->closed = true;
	return 0;
}

static int dial(const char *path, struct cc_err *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return cc_err_set(err, ENAMETOOLONG, "%s: a unix socket path is at most %zu bytes", path,
				  sizeof(a.sun_path) - 1);
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cc_err_sys(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(fd);
		return cc_err_sys(err, e, "%s", path);
	}
	return fd;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Exchange bytes until the stream closes or the time is up. */
static int pump(nghttp2_session *s, int fd, struct call *c, int timeout_ms, struct cc_err *err)
{
	struct grpc_out o = { NULL, 0 };
	long long end = now_ms() + timeout_ms;
	int rc = 0;

	while (!c->closed && !rc) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = end - now_ms();

		if (grpc_flush(s, fd, &o, err) < 0) {
			rc = -1;
			break;
		}
		if (o.len)
			p.events |= POLLOUT;
		if (left <= 0) {
			rc = cc_err_set(err, ETIMEDOUT, "no answer within %d ms", timeout_ms);
			break;
		}
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			rc = cc_err_sys(err, errno, "poll");
		else if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = grpc_pull(s, fd, err);

			if (r < 0)
				rc = -1;
			else if (!r && !c->closed)
				rc = cc_err_set(err, ECONNRESET, "connection closed before the answer");
		}
	}
	free(o.buf);
	return rc;
}

/* The answer, checked: an HTTP status, a grpc-status, one whole message. */
static int finish(struct call *c, struct cc_grpc_reply *reply, struct cc_err *err)
{
	const uint8_t *msg;
	size_t len;

	if (c->err.code)
		return cc_err_set(err, c->err.code, "%s", c->err.msg);
	if (c->status != 200)
		return cc_err_set(err, EPROTO, "HTTP status %s, expected 200", c->status ? "not 200" : "missing");
	if (c->code == -2)
		return cc_err_set(err, EPROTO, "grpc-status is not a status code (0 to 16)");
	if (c->code < 0)
		return cc_err_set(err, EPROTO, "answer without grpc-status");
	reply->code = (enum cc_grpc_code)c->code;
	snprintf(reply->message, sizeof(reply->message), "%s", c->message);
	if (cc_grpc_reader_next(&c->in, &msg, &len, err) == 1) {
		reply->msg = malloc(len ? len : 1);
		if (!reply->msg)
			return cc_err_sys(err, ENOMEM, "grpc reply");
		memcpy(reply->msg, msg, len);
		reply->len = len;
	}
	return cc_grpc_reader_end(&c->in, err);
}

static int call_on(int fd, const char *method, const uint8_t *req, size_t len, int timeout_ms,
		   struct cc_grpc_reply *reply, struct cc_err *err)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_session *s = NULL;
	struct call c = { .code = -1 };
	nghttp2_nv nv[] = { GRPC_NV(":method", "POST"), GRPC_NV(":scheme", "http"), GRPC_NV(":path", method),
			    GRPC_NV(":authority", "localhost"), GRPC_NV("content-type", "application/grpc"),
			    GRPC_NV("te", "trailers") };
	nghttp2_data_provider prd = { .source.ptr = &c, .read_callback = read_req };
	int rc = -1;

	cc_grpc_reader_init(&c.in, 0);
	if (cc_grpc_frame(req, len, &c.req, &c.reqlen, err) < 0)
		goto out;
	if (nghttp2_session_callbacks_new(&cb) != 0) {
		cc_err_sys(err, ENOMEM, "grpc");
		goto out;
	}
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	if (nghttp2_session_client_new(&s, cb, &c) != 0 || nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0) != 0 ||
	    nghttp2_submit_request(s, NULL, nv, sizeof(nv) / sizeof(nv[0]), &prd, NULL) < 0) {
		cc_err_sys(err, ENOMEM, "grpc: http2 session");
		goto out;
	}
	if (pump(s, fd, &c, timeout_ms, err) == 0)
		rc = finish(&c, reply, err);
out:
	nghttp2_session_del(s);
	nghttp2_session_callbacks_del(cb);
	cc_grpc_reader_fini(&c.in);
	free(c.req);
	return rc;
}

int cc_grpc_call(const char *path, const char *method, const uint8_t *req, size_t len, int timeout_ms,
		 struct cc_grpc_reply *reply, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;

	memset(reply, 0, sizeof(*reply));
	fd = dial(path, err);
	if (fd < 0)
		return -1;
	if (call_on(fd, method, req, len, timeout_ms, reply, err) < 0) {
		cc_grpc_reply_fini(reply);
		return cc_err_prefix(err, "%s %s", path, method);
	}
	return 0;
}

void cc_grpc_reply_fini(struct cc_grpc_reply *r)
{
	free(r->msg);
	r->msg = NULL;
	r->len = 0;
}
