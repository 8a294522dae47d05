/* corecarve: gRPC's length-prefixed message frame (grpc.h) and the status
 * codes. */
#include "grpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum cc_grpc_code cc_grpc_code_of(int err)
{
	switch (err) {
	case 0:
		return CC_GRPC_OK;
	case EINVAL:
		return CC_GRPC_INVALID_ARGUMENT;
	case ENOENT:
		return CC_GRPC_NOT_FOUND;
	case EEXIST:
		return CC_GRPC_ALREADY_EXISTS;
	case ENOSPC:
	case E2BIG:
		return CC_GRPC_RESOURCE_EXHAUSTED;
	case EBUSY:
		return CC_GRPC_FAILED_PRECONDITION;
	case ENOSYS:
		return CC_GRPC_UNIMPLEMENTED;
	default:
		return CC_GRPC_INTERNAL;
	}
}

int cc_grpc_frame(const uint8_t *msg, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	uint8_t *b;

	if (len > CC_GRPC_MSG_MAX)
		return cc_err_set(err, E2BIG, "message of %zu bytes is over the limit of %u", len, CC_GRPC_MSG_MAX);
	b = malloc(len + 5);
	if (!b)
		return cc_err_sys(err, ENOMEM, "grpc frame");
	b[0] = 0;
	b[1] = (uint8_t)(len >> 24);
	b[2] = (uint8_t)(len >> 16);
	b[3] = (uint8_t)(len >> 8);
	b[4] = (uint8_t)len;
	if (len)
		memcpy(b + 5, msg, len);
	*out = b;
	*outlen = len + 5;
	return 0;
}

void cc_grpc_reader_init(struct cc_grpc_reader *r, size_t limit)
{
	memset(r, 0, sizeof(*r));
	r->limit = limit ? limit : CC_GRPC_MSG_MAX;
}

void cc_grpc_reader_fini(struct cc_grpc_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static size_t declared(const uint8_t *h)
{
	return (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
}

/* The header at the front, once its five bytes are in. */
static int check_head(const struct cc_grpc_reader *r, struct cc_err *err)
{
	if (r->len < 5)
		return 0;
	if (r->buf[0] == 1)
		return cc_err_set(err, EINVAL, "compressed message, but no grpc-encoding was offered");
	if (r->buf[0] != 0)
		return cc_err_set(err, EINVAL, "frame flag %u: expected 0 or 1", r->buf[0]);
	if (declared(r->buf) > r->limit)
		return cc_err_set(err, E2BIG, "message of %zu bytes is over the limit of %zu", declared(r->buf),
				  r->limit);
	return 0;
}

/* Drop the message handed out by the last cc_grpc_reader_next. */
static void drop_taken(struct cc_grpc_reader *r)
{
	if (!r->taken)
		return;
	memmove(r->buf, r->buf + r->taken, r->len - r->taken);
	r->len -= r->taken;
	r->taken = 0;
}

int cc_grpc_reader_feed(struct cc_grpc_reader *r, const uint8_t *data, size_t n, struct cc_err *err)
{
	drop_taken(r);
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 256;
		uint8_t *b;

		while (cap < r->len + n)
			cap *= 2;
		b = realloc(r->buf, cap);
		if (!b)
			return cc_err_sys(err, ENOMEM, "grpc message");
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	if (check_head(r, err) < 0)
		return -1;
	/* More than a whole message and the next one's header buffered: the
	 * peer sends faster than it is answered; the limit holds for that too. */
	if (r->len > r->limit + 10)
		return cc_err_set(err, E2BIG, "%zu bytes of messages buffered, over the limit of %zu", r->len,
				  r->limit);
	return 0;
}

int cc_grpc_reader_next(struct cc_grpc_reader *r, const uint8_t **msg, size_t *len, struct cc_err *err)
{
	drop_taken(r);
	/* A header that came in behind the last message is checked now. */
	if (check_head(r, err) < 0)
		return -1;
	if (r->len < 5 || r->len < 5 + declared(r->buf))
		return 0;
	*len = declared(r->buf);
	*msg = r->buf + 5;
	r->taken = 5 + *len;
	return 1;
}

int cc_grpc_reader_end(const struct cc_grpc_reader *r, struct cc_err *err)
{
	size_t left = r->len - r->taken;

	if (!left)
		return 0;
	if (left < 5)
		return cc_err_set(err, EPROTO, "stream ended inside a message header (%zu of 5 bytes)", left);
	return cc_err_set(err, EPROTO, "stream ended inside a message (%zu of %zu bytes)", left - 5,
			  declared(r->buf + r->taken));
}
