/* corecarve: moving nghttp2's bytes to and from a non-blocking socket, for
 * the server and the client alike (grpc_int.h). */
#include "grpc_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int grpc_flush(nghttp2_session *s, int fd, struct grpc_out *o, struct cc_err *err)
{
	while (o->len < GRPC_OUT_MAX) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(s, &data);
		uint8_t *b;

		if (n < 0)
			return cc_err_set(err, EPROTO, "http2: %s", nghttp2_strerror((int)n));
		if (!n)
			break;
		b = realloc(o->buf, o->len + (size_t)n);
		if (!b)
			return cc_err_sys(err, ENOMEM, "http2");
		memcpy(b + o->len, data, (size_t)n);
		o->buf = b;
		o->len += (size_t)n;
	}
	while (o->len) {
		ssize_t w = send(fd, o->buf, o->len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w < 0)
			return cc_err_sys(err, errno, "send");
		memmove(o->buf, o->buf + w, o->len - (size_t)w);
		o->len -= (size_t)w;
	}
	return 0;
}

int grpc_pull(nghttp2_session *s, int fd, struct cc_err *err)
{
	uint8_t buf[16384];
	ssize_t n, used;

	do
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 1;
	if (n < 0)
		return cc_err_sys(err, errno, "recv");
	if (!n)
		return 0;
	used = nghttp2_session_mem_recv(s, buf, (size_t)n);
	if (used == NGHTTP2_ERR_FLOODED)
		return cc_err_set(err, ENOBUFS, "http2: the peer floods (%s)", nghttp2_strerror((int)used));
	if (used < 0)
		return cc_err_set(err, EPROTO, "http2: %s", nghttp2_strerror((int)used));
	return 1;
}

int grpc_is_content_type(const uint8_t *v, size_t n)
{
	static const char ct[] = "application/grpc";
	size_t k = sizeof(ct) - 1;

	return n >= k && !memcmp(v, ct, k) && (n == k || v[k] == '+' || v[k] == ';');
}

void grpc_message_encode(char *out, size_t len, const char *msg)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t k = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		bool plain = *p >= 0x20 && *p <= 0x7e && *p != '%';

		if (k + (plain ? 1 : 3) >= len)
			break;
		if (plain) {
			out[k++] = (char)*p;
		} else {
			out[k++] = '%';
			out[k++] = hex[*p >> 4];
			out[k++] = hex[*p & 15];
		}
	}
	if (len)
		out[k] = 0;
}

static int hexval(uint8_t c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void grpc_message_decode(char *out, size_t len, const uint8_t *v, size_t n)
{
	size_t k = 0;

	if (!len)
		return;
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		int c = v[i];

		if (c == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
			c = hexval(v[i + 1]) * 16 + hexval(v[i + 2]);
			i += 2;
		}
		out[k++] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
	}
	out[k] = 0;
}

int grpc_status_parse(const uint8_t *v, size_t n, int *code)
{
	int c = 0;

	if (n < 1 || n > 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return 0;
		c = c * 10 + (v[i] - '0');
	}
	if ((n == 2 && v[0] == '0') || c > 16)
		return 0;
	*code = c;
	return 1;
}
