/* The gRPC wire (plugin/grpc): the length-prefixed frame read in pieces,
 * streams that end inside a message, the size limit, HTTP/2 errors, and a
 * call from the client to the server over a unix socket. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "grpc.h"
#include "grpc_int.h"
#include "testlib.h"

START_TEST(test_frame_pieces)
{
	static const uint8_t msg[] = "hello, kubelet";
	struct cc_err err = CC_ERR_INIT;
	struct cc_grpc_reader r;
	_cleanup_free_ uint8_t *f = NULL;
	const uint8_t *got;
	size_t flen, glen;

	ck_assert_int_eq(cc_grpc_frame(msg, sizeof(msg), &f, &flen, &err), 0);
	ck_assert_uint_eq(flen, sizeof(msg) + 5);
	ck_assert_int_eq(f[0], 0);
	ck_assert_int_eq(f[4], sizeof(msg));
	cc_grpc_reader_init(&r, 0);
	/* One byte at a time, twice over: nothing until each frame is whole. */
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < flen; i++) {
			ck_assert_int_eq(cc_grpc_reader_next(&r, &got, &glen, &err), 0);
			ck_assert_int_eq(cc_grpc_reader_feed(&r, f + i, 1, &err), 0);
		}
		ck_assert_int_eq(cc_grpc_reader_next(&r, &got, &glen, &err), 1);
		ck_assert_uint_eq(glen, sizeof(msg));
		ck_assert_mem_eq(got, msg, sizeof(msg));
	}
	ck_assert_int_eq(cc_grpc_reader_next(&r, &got, &glen, &err), 0);
	ck_assert_int_eq(cc_grpc_reader_end(&r, &err), 0);
	cc_grpc_reader_fini(&r);
}
END_TEST

START_TEST(test_frame_cut)
{
	static const uint8_t head[] = { 0, 0, 0, 0, 10, 'a', 'b' };
	struct cc_err err = CC_ERR_INIT, err2 = CC_ERR_INIT;
	struct cc_grpc_reader r;

	cc_grpc_reader_init(&r, 0);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, head, 3, &err), 0);
	ck_assert_int_eq(cc_grpc_reader_end(&r, &err), -1);
	ck_assert_int_eq(err.code, EPROTO);
	ck_assert_str_eq(err.msg, "stream ended inside a message header (3 of 5 bytes)");
	ck_assert_int_eq(cc_grpc_reader_feed(&r, head + 3, 4, &err2), 0);
	ck_assert_int_eq(cc_grpc_reader_end(&r, &err2), -1);
	ck_assert_str_eq(err2.msg, "stream ended inside a message (2 of 10 bytes)");
	cc_grpc_reader_fini(&r);
}
END_TEST

START_TEST(test_frame_limit)
{
	static const uint8_t big[] = { 0, 0, 0, 0, 17 }, ok[] = { 0, 0, 0, 0, 16 };
	static const uint8_t zipped[] = { 1, 0, 0, 0, 1, 'x' }, odd[] = { 7, 0, 0, 0, 0 };
	struct cc_err err = CC_ERR_INIT;
	struct cc_grpc_reader r;
	uint8_t junk[64] = { 0 };
	_cleanup_free_ uint8_t *f = NULL;
	size_t flen;

	cc_grpc_reader_init(&r, 16);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, ok, sizeof(ok), &err), 0);
	cc_grpc_reader_fini(&r);
	cc_grpc_reader_init(&r, 16);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, big, sizeof(big), &err), -1);
	ck_assert_int_eq(err.code, E2BIG);
	ck_assert_str_eq(err.msg, "message of 17 bytes is over the limit of 16");
	cc_grpc_reader_fini(&r);
	/* Many small frames unanswered count against the limit too. */
	cc_grpc_reader_init(&r, 16);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, junk, sizeof(junk), &err), -1);
	ck_assert_int_eq(err.code, E2BIG);
	cc_grpc_reader_fini(&r);
	cc_grpc_reader_init(&r, 0);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, zipped, sizeof(zipped), &err), -1);
	ck_assert_str_eq(err.msg, "compressed message, but no grpc-encoding was offered");
	cc_grpc_reader_fini(&r);
	cc_grpc_reader_init(&r, 0);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_grpc_reader_feed(&r, odd, sizeof(odd), &err), -1);
	ck_assert_str_eq(err.msg, "frame flag 7: expected 0 or 1");
	cc_grpc_reader_fini(&r);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_grpc_frame(junk, CC_GRPC_MSG_MAX + 1u, &f, &flen, &err), -1);
	ck_assert_int_eq(err.code, E2BIG);
}
END_TEST

/* Echo: the request back, "fail" refused with EBUSY. */
static int echo(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	(void)arg;
	if (len == 4 && !memcmp(req, "fail", 4))
		return cc_err_set(err, EBUSY, "core cpu2 is taken (50%% of it)");
	*out = malloc(len ? len : 1);
	memcpy(*out, req, len);
	*outlen = len;
	return 0;
}

static const struct cc_grpc_method methods[] = { { "/t.T/Echo", false, echo } };

/* A server on `path` in a child, serving until killed. */
static pid_t serve(const char *path, size_t limit)
{
	pid_t pid = cc_test_fork();
	if (!pid) {
		struct cc_err err = CC_ERR_INIT;
		struct cc_grpc_server *s = cc_grpc_server_new(&err);

		cc_grpc_server_set_limit(s, limit);
		if (cc_grpc_server_listen(s, path, methods, 1, NULL, &err) < 0)
			_exit(3);
		for (int i = 0; i < 200; i++)
			cc_grpc_server_run(s, 50, &err);
		cc_grpc_server_free(s);
		_exit(0);
	}
	for (int i = 0; i < 200 && access(path, F_OK); i++)
		usleep(10000);
	return pid;
}

START_TEST(test_call)
{
	char tmpl[] = "/tmp/cc-grpc-XXXXXX", path[128];
	struct cc_err err = CC_ERR_INIT;
	struct cc_grpc_reply rep;
	uint8_t big[200];
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/s.sock", tmpl);
	pid = serve(path, 100);
	ck_assert_int_eq(cc_grpc_call(path, "/t.T/Echo", (const uint8_t *)"abc", 3, 2000, &rep, &err), 0);
	ck_assert_int_eq(rep.code, CC_GRPC_OK);
	ck_assert_uint_eq(rep.len, 3);
	ck_assert_mem_eq(rep.msg, "abc", 3);
	cc_grpc_reply_fini(&rep);
	ck_assert_int_eq(cc_grpc_call(path, "/t.T/Echo", NULL, 0, 2000, &rep, &err), 0);
	ck_assert_int_eq(rep.code, CC_GRPC_OK);
	ck_assert_uint_eq(rep.len, 0);
	cc_grpc_reply_fini(&rep);
	ck_assert_int_eq(cc_grpc_call(path, "/t.T/Nope", NULL, 0, 2000, &rep, &err), 0);
	ck_assert_int_eq(rep.code, CC_GRPC_UNIMPLEMENTED);
	ck_assert_str_eq(rep.message, "unknown method /t.T/Nope");
	ck_assert_int_eq(cc_grpc_call(path, "/t.T/Echo", (const uint8_t *)"fail", 4, 2000, &rep, &err), 0);
	ck_assert_int_eq(rep.code, CC_GRPC_FAILED_PRECONDITION);
	/* Percent-encoded on the wire, read back as sent. */
	ck_assert_str_eq(rep.message, "core cpu2 is taken (50% of it)");
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(cc_grpc_call(path, "/t.T/Echo", big, sizeof(big), 2000, &rep, &err), 0);
	ck_assert_int_eq(rep.code, CC_GRPC_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(rep.message, "message of 200 bytes is over the limit of 100");
	ck_assert_ptr_null(rep.msg);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	rmdir(tmpl);
}
END_TEST

/* A peer that speaks HTTP/1.1 (no client preface) gets a GOAWAY with
 * PROTOCOL_ERROR and the connection closed; the server goes on. */
START_TEST(test_http2_error)
{
	static const char bad[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct cc_err err = CC_ERR_INIT;
	struct cc_grpc_server *s = cc_grpc_server_new(&err);
	uint8_t buf[4096];
	size_t got = 0;
	bool goaway = false;
	int sv[2];

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(cc_grpc_server_adopt(s, sv[0], 0, &err), 0);
	ck_assert_int_eq(write(sv[1], bad, sizeof(bad) - 1), (ssize_t)sizeof(bad) - 1);
	for (int i = 0; i < 20 && cc_grpc_server_nconns(s); i++)
		ck_assert_int_eq(cc_grpc_server_run(s, 20, &err), 0);
	ck_assert_int_eq(cc_grpc_server_nconns(s), 0);
	for (ssize_t n; (n = read(sv[1], buf + got, sizeof(buf) - got)) > 0;)
		got += (size_t)n;
	/* Frames: 9-byte headers, type at offset 3; GOAWAY is 0x7, its error
	 * code the last 4 bytes of its 8-byte payload (PROTOCOL_ERROR = 1). */
	for (size_t off = 0; off + 9 <= got;) {
		size_t len = (size_t)buf[off] << 16 | (size_t)buf[off + 1] << 8 | buf[off + 2];

		if (buf[off + 3] == 7 && off + 9 + len <= got && len >= 8)
			goaway = buf[off + 9 + 7] == 1;
		off += 9 + len;
	}
	ck_assert_msg(goaway, "no GOAWAY(PROTOCOL_ERROR) in %zu bytes", got);
	close(sv[1]);
	cc_grpc_server_free(s);
}
END_TEST


/* grpc-message percent-encoded both ways, grpc-status read strictly. */
START_TEST(test_wire_text)
{
	char out[64];
	int code = -1;

	grpc_message_encode(out, sizeof(out), "50% of 2\ncores é");
	ck_assert_str_eq(out, "50%25 of 2%0Acores %C3%A9");
	grpc_message_decode(out, sizeof(out), (const uint8_t *)"50%25 of 2%0Acores %C3%A9", 25);
	ck_assert_str_eq(out, "50% of 2?cores ??");
	/* A '%' without two hex digits is kept as it is. */
	grpc_message_decode(out, sizeof(out), (const uint8_t *)"100% %zz %4", 11);
	ck_assert_str_eq(out, "100% %zz %4");
	/* Cut between escapes, never inside one. */
	grpc_message_encode(out, 6, "ab%cd");
	ck_assert_str_eq(out, "ab%25");
	grpc_message_encode(out, 5, "ab%cd");
	ck_assert_str_eq(out, "ab");
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"0", 1, &code), 1);
	ck_assert_int_eq(code, 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"16", 2, &code), 1);
	ck_assert_int_eq(code, 16);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"17", 2, &code), 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"0x", 2, &code), 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"05", 2, &code), 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"", 0, &code), 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"-1", 2, &code), 0);
	ck_assert_int_eq(grpc_status_parse((const uint8_t *)"abc", 3, &code), 0);
}
END_TEST

static Suite *grpc_suite(void)
{
	Suite *s = suite_create("grpc");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, test_frame_pieces);
	tcase_add_test(tc, test_wire_text);
	tcase_add_test(tc, test_frame_cut);
	tcase_add_test(tc, test_frame_limit);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_http2_error);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(grpc_suite)
