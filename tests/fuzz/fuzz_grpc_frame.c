/* gRPC's length-prefixed frame as corecarve device-plugin reassembles it
 * from a stream's DATA (plugin/grpc/grpc_frame.c): the kubelet's requests
 * and PodResources answers arrive in pieces of any size.  The first byte
 * chooses where the rest is cut; every message handed out lies inside
 * what was fed and within the limit, and a failure has a message. */
#include "fuzz.h"
#include "grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_grpc_reader r;
	struct cc_err err = CC_ERR_INIT;
	size_t step, off = 1, fed = 0, limit = 4096;
	int rc = 0;

	if (size < 1)
		return 0;
	step = 1 + data[0] % 17;
	cc_grpc_reader_init(&r, limit);
	while (off < size && rc == 0) {
		size_t n = size - off < step ? size - off : step;
		const uint8_t *msg;
		size_t len;

		rc = cc_grpc_reader_feed(&r, data + off, n, &err);
		CC_FUZZ_CHECK_ERR(rc < 0, &err);
		off += n;
		fed += n;
		while (rc == 0 && (rc = cc_grpc_reader_next(&r, &msg, &len, &err)) == 1) {
			/* A message is a part of what came in, never more. */
			if (len > limit || len + 5 > fed)
				abort();
			/* Its last byte is read: the sanitizer sees a message
			 * that reaches past the buffer. */
			if (len) {
				volatile uint8_t last = msg[len - 1];

				(void)last;
			}
			rc = 0;
		}
		if (rc < 0)
			CC_FUZZ_CHECK_ERR(true, &err);
	}
	if (rc == 0) {
		cc_err_clear(&err);
		rc = cc_grpc_reader_end(&r, &err);
		CC_FUZZ_CHECK_ERR(rc < 0, &err);
	}
	cc_grpc_reader_fini(&r);
	return 0;
}
