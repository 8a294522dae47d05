/* corecarve: the one error convention.
 *
 * A caller owns a `struct cc_err` and passes it as the last argument.  A
 * function that fails sets it once, where the failure happens, and returns
 * -1 (or NULL).  Callers may prefix context with cc_err_prefix() but never
 * both print and return.  Only entry points print, once, as
 * "corecarve: <message>".
 */
#ifndef CC_ERROR_H
#define CC_ERROR_H

#include <stdbool.h>

#define CC_ERR_MSG_MAX 1024

struct cc_err {
	int code;  /* errno-style; 0 when no error has been set */
	char msg[CC_ERR_MSG_MAX];
};

#define CC_ERR_INIT { 0, { 0 } }

/* Set the error (replacing nothing: the first failure wins).  Returns -1 so
 * callers can write `return cc_err_set(err, EINVAL, "...")`. */
int cc_err_set(struct cc_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like cc_err_set() with ": strerror(code)" appended. */
int cc_err_sys(struct cc_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend "context: " to an error already set.  Returns -1. */
int cc_err_prefix(struct cc_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void cc_err_clear(struct cc_err *err);

static inline bool cc_err_isset(const struct cc_err *err)
{
	return err && err->msg[0] != '\0';
}

#endif
