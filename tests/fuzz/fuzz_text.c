/* Text that quotes hostile input (text.h) and the errors made of it: for
 * any bytes and any buffer size, the escape is valid UTF-8 with no control
 * character (escaping it again changes nothing), fits its buffer, and a
 * smaller buffer cuts it between characters: a prefix of the larger one. */
#include <errno.h>

#include "error.h"
#include "fuzz.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t lens[] = { 1, 2, 5, 17, 64, CC_ERR_MSG_MAX };
	char *s = cc_fuzz_str(data, size);
	char full[4 * CC_ERR_MSG_MAX], cut[CC_ERR_MSG_MAX], again[4 * CC_ERR_MSG_MAX];
	struct cc_err err = CC_ERR_INIT;
	size_t n;

	if (!s)
		abort();
	n = cc_text_escape(full, sizeof(full), s);
	if (n != strlen(full) || n >= sizeof(full))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)full[i] < 0x20 || full[i] == 0x7f)
			abort();
	if (cc_text_escape(again, sizeof(again), full) != n || strcmp(again, full))
		abort();
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t m = cc_text_escape(cut, lens[k], s);

		if (m >= lens[k] || m != strlen(cut) || strncmp(cut, full, m))
			abort();
	}
	/* An error quoting it: the same guarantees in its fixed buffer. */
	cc_err_set(&err, EINVAL, "field: \"%s\"", s);
	if (cc_text_escape(again, sizeof(again), err.msg) != strlen(err.msg) || strcmp(again, err.msg))
		abort();
	free(s);
	return 0;
}
