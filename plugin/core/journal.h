/* corecarve: one line per hook decision in the system log.
 *
 * A hook that ran and matched nothing, a carve, a release and a refusal
 * are otherwise visible only in the runtime's stderr (often discarded).
 * The hook tells systemd's journal through its native socket
 * (/run/systemd/journal/socket: the message and structured fields,
 * CORECARVE_EVENT, _CONTAINER, _CLASS, _CPUS, ..., what sd_journal_send()
 * sends, without libsystemd: one shared object less at each start), or, on
 * hosts without journald, any syslog daemon on /dev/log (RFC 3164,
 * "<PRI>corecarve[PID]: MESSAGE").
 *
 * The socket is connected before the hook's sandbox is loaded: afterwards
 * the hook may only send on that one descriptor (plugin/core/sandbox.c), never
 * open a socket or connect.  Sending never blocks (MSG_DONTWAIT) and never
 * fails the hook: a full or absent log loses the line, not the container.
 */
#ifndef CC_JOURNAL_H
#define CC_JOURNAL_H

#include <stdbool.h>

#define CC_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define CC_SYSLOG_SOCKET "/dev/log"
#define CC_JOURNAL_IDENT "corecarve"

struct cc_journal {
	int fd;      /* connected datagram socket, -1: nowhere to log */
	bool native; /* journald's native protocol; false: syslog */
};

/* Connect to `native_path` (NULL: CC_JOURNAL_SOCKET), else `syslog_path`
 * (NULL: CC_SYSLOG_SOCKET).  Never fails: j->fd is -1 when neither takes
 * datagrams. */
void cc_journal_open(struct cc_journal *j, const char *native_path, const char *syslog_path);
void cc_journal_close(struct cc_journal *j);

/* A structured field: KEY (upper case, digits, underscores) and value. */
struct cc_journal_field {
	const char *key;
	const char *value;
};

/* Send one line at syslog `priority` (LOG_INFO, ...): `msg` (newlines and
 * control characters become spaces) and `fields` (n of them; the native
 * protocol only; a NULL or empty value is left out).  0 sent, -1 not (no
 * socket, a full buffer): callers go on either way. */
int cc_journal_send(const struct cc_journal *j, int priority, const char *msg, const struct cc_journal_field *fields,
		    int n);

/* The datagram cc_journal_send() would send, into buf (tests); its length. */
int cc_journal_format(bool native, int priority, const char *msg, const struct cc_journal_field *fields, int n,
		      char *buf, int len);

#endif
