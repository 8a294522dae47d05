/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built by
 * mk/fuzz.mk with clang -fsanitize=fuzzer,address,undefined against the
 * project's own sources).  Each target feeds one parser the bytes as they
 * would arrive: with a length where the parser takes one, else as a
 * NUL-terminated copy (cut at the first NUL, as a C reader of a file
 * would see it). */
#ifndef CC_FUZZ_H
#define CC_FUZZ_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy; NULL only when out of memory. */
static inline char *cc_fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/* A parser must fail with a message or succeed without one: an error
 * without text (or text without an error) is a bug the entry point would
 * print as "unknown error".  Messages may quote input with newlines in
 * it; the entry point (cc_cli_fail) escapes them into one line. */
#define CC_FUZZ_CHECK_ERR(rc_failed, err)                                      \
	do {                                                                   \
		if ((rc_failed) != ((err)->msg[0] != '\0'))                    \
			abort();                                               \
	} while (0)

#endif
