#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

/* Every message may quote hostile input: it is kept as valid UTF-8 on
 * one line (text.h), cut between characters when it is too long. */
static void vset(struct cc_err *err, int code, const char *fmt, va_list ap)
{
	char raw[2 * CC_ERR_MSG_MAX];

	err->code = code ? code : EINVAL;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	cc_text_escape(err->msg, sizeof(err->msg), raw);
}

int cc_err_set(struct cc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || cc_err_isset(err))
		return -1;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	return -1;
}

int cc_err_sys(struct cc_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err || cc_err_isset(err))
		return -1;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(code));
	return -1;
}

int cc_err_prefix(struct cc_err *err, const char *fmt, ...)
{
	char head[CC_ERR_MSG_MAX], tmp[2 * CC_ERR_MSG_MAX + 2];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	snprintf(tmp, sizeof(tmp), "%s: %s", head, err->msg);
	cc_text_escape(err->msg, sizeof(err->msg), tmp);
	if (!err->code)
		err->code = EINVAL;
	return -1;
}

void cc_err_clear(struct cc_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
