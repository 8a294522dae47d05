/* corecarve: the hook's journal and syslog lines (journal.h). */
#define _GNU_SOURCE
#include "journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syslog.h>
#include <sys/un.h>
#include <unistd.h>

#include "text.h"

/* A datagram socket connected to `path`, or -1. */
static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void cc_journal_open(struct cc_journal *j, const char *native_path, const char *syslog_path)
{
	j->native = true;
	j->fd = dial(native_path ? native_path : CC_JOURNAL_SOCKET);
	if (j->fd >= 0)
		return;
	j->native = false;
	j->fd = dial(syslog_path ? syslog_path : CC_SYSLOG_SOCKET);
}

void cc_journal_close(struct cc_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

/* Append `s` escaped (text.h): one line of valid UTF-8 each, cut between
 * characters, and nothing an annotation carries can forge another field
 * or line, nor have journald store the field as a blob. */
static int put_clean(char *buf, int len, int off, const char *s)
{
	if (!s || off >= len - 1)
		return off;
	return off + (int)cc_text_escape(buf + off, (size_t)(len - off), s);
}

static int put(char *buf, int len, int off, const char *s)
{
	int n = (int)strlen(s);

	if (off + n >= len)
		n = len - 1 - off;
	if (n > 0) {
		memcpy(buf + off, s, (size_t)n);
		off += n;
	}
	return off;
}

int cc_journal_format(bool native, int priority, const char *msg, const struct cc_journal_field *fields, int n,
		      char *buf, int len)
{
	char head[64];
	int off = 0;

	if (len < 2)
		return 0;
	if (!native) {
		/* RFC 3164 without a timestamp: journald and rsyslog stamp it. */
		snprintf(head, sizeof(head), "<%d>" CC_JOURNAL_IDENT "[%ld]: ", LOG_DAEMON | (priority & LOG_PRIMASK),
			 (long)getpid());
		off = put(buf, len, off, head);
		off = put_clean(buf, len, off, msg);
		buf[off] = '\0';
		return off;
	}
	snprintf(head, sizeof(head), "PRIORITY=%d\nSYSLOG_FACILITY=%d\n", priority & LOG_PRIMASK, LOG_DAEMON >> 3);
	off = put(buf, len, off, head);
	off = put(buf, len, off, "SYSLOG_IDENTIFIER=" CC_JOURNAL_IDENT "\nMESSAGE=");
	off = put_clean(buf, len, off, msg);
	off = put(buf, len, off, "\n");
	for (int i = 0; i < n; i++) {
		if (!fields[i].value || !fields[i].value[0])
			continue;
		off = put(buf, len, off, fields[i].key);
		off = put(buf, len, off, "=");
		off = put_clean(buf, len, off, fields[i].value);
		off = put(buf, len, off, "\n");
	}
	buf[off] = '\0';
	return off;
}

int cc_journal_send(const struct cc_journal *j, int priority, const char *msg, const struct cc_journal_field *fields,
		    int n)
{
	char buf[4096];
	int len;

	if (!j || j->fd < 0)
		return -1;
	len = cc_journal_format(j->native, priority, msg, fields, n, buf, sizeof(buf));
	/* send(2) is sendto(2) on the connected socket: the one call the
	 * hook's sandbox allows, and only on this descriptor. */
	return send(j->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) == len ? 0 : -1;
}
