/* corecarve: safe text (text.h). */
#include "text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at `s` (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF) and its code point, or
 * 0 when `s` does not start one. */
static size_t utf8_seq(const unsigned char *s, unsigned *cp)
{
	size_t n;
	unsigned c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL */
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Characters that print as nothing or reorder the text around them. */
static bool invisible(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

size_t cc_text_escape(char *dst, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t off = 0;

	if (len == 0)
		return 0;
	while (*s) {
		char esc[8];
		const char *piece = esc;
		unsigned cp = 0;
		size_t n = utf8_seq(s, &cp), plen;

		if (n == 0)
			snprintf(esc, sizeof(esc), "\\x%02x", *s), n = 1;
		else if (cp == '\n' || cp == '\t' || cp == '\r')
			snprintf(esc, sizeof(esc), "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
		else if (cp < 0x20 || cp == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", cp);
		else if (invisible(cp))
			snprintf(esc, sizeof(esc), "\\u%04x", cp);
		else
			piece = (const char *)s;
		plen = piece == esc ? strlen(esc) : n;
		if (off + plen >= len)
			break;
		memcpy(dst + off, piece, plen);
		off += plen;
		s += n;
	}
	dst[off] = '\0';
	return off;
}
