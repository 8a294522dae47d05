/* corecarve: FNV-1a, 64 bits: the checksum of the files corecarve writes
 * for itself (the topology cache, the ledger's index).  It catches a file
 * cut short, damaged or edited; it is no defence against whoever can
 * write the state directory, who can hand out CPUs anyway. */
#ifndef CC_DIGEST_H
#define CC_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define CC_FNV1A_INIT 14695981039346656037ull

/* Continue `h` over n bytes. */
static inline uint64_t cc_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ull;
	}
	return h;
}

#endif
