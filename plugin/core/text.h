/* corecarve: text that quotes hostile input, made safe to print and log.
 *
 * An error or a journal line may quote an annotation, a container id, a
 * cgroup name or a file from a captured tree.  Before it leaves corecarve
 * it is valid UTF-8 on one line: journald stores a MESSAGE that is not
 * valid UTF-8 as a blob, a newline or an escape sequence would forge a
 * line or drive a terminal, and a bidi control reorders what a person
 * reads.  And it is cut, when it must be, between characters, never
 * inside one. */
#ifndef CC_TEXT_H
#define CC_TEXT_H

#include <stddef.h>

/* Copy `src` (NUL-terminated) into `dst` (`len` bytes, NUL-terminated
 * when len > 0) with every control character escaped (`\n`, `\t`, `\r`,
 * else `\xNN`), every byte that is not part of a valid UTF-8 sequence as
 * `\xNN`, and the C1 controls and the invisible format and bidi
 * characters (U+061C, U+200B-U+200F, U+202A-U+202E, U+2060-U+2069,
 * U+FEFF) as `\uNNNN`.  Stops before the first character (or escape) that
 * does not fit whole.  Idempotent: escaping its own output changes
 * nothing.  Returns the bytes written, without the NUL. */
size_t cc_text_escape(char *dst, size_t len, const char *src);

#endif
