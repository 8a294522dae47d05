/* corecarve: the ledger lock — an flock on <dir>/lock taken with a bounded
 * wait, the line its exclusive holder writes there, and naming the holder
 * when a waiter gives up (ledger.h, struct cc_ledger_lock).
 *
 * The wait tries flock(LOCK_NB) and sleeps between tries rather than
 * blocking in flock(): a blocking flock can only be cut short by a signal,
 * and a timer signal would have to be installed, unblocked and restored in
 * every process that opens the ledger, and in the hook's sandbox
 * (rt_sigaction, rt_sigprocmask, setitimer, rt_sigreturn) — for a wait
 * that sleeps is two syscalls (flock, clock_nanosleep).  The kernel does
 * not queue flock waiters either (a release wakes them all and they race),
 * so trying in turn is no less fair than blocking. */
#define _GNU_SOURCE
#include "ledger_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

#define LOCK_FILE "lock"
#define LOCK_PATH_MAX (PATH_MAX + 8)
/* The holder's line: "pid=... since=... cmd=" and at most 255 bytes of
 * its command. */
#define HOLDER_MAX 256
#define LINE_MAX_ 320
/* Between tries: from 1 ms, doubling, to 20 ms.  A short hold (a hook on
 * hardware takes a few ms) costs a waiter about a millisecond more than a
 * blocking flock would; a long queue (32 hooks at once under emulation,
 * each holding for a few hundred ms) wakes each waiter 50 times a second,
 * a cost lost in the hooks' own. */
#define NAP_MIN_NS 1000000L
#define NAP_MAX_NS 20000000L
/* Holders named in a message: the first, and how many others. */
#define HOLDERS_MAX 16

static long long clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Printable ASCII from text anybody may have written, '?' for the rest,
 * up to the first newline or NUL (`one_line`: a newline is a '?' too). */
static void copy_printable(char *out, size_t cap, const char *in, size_t len, bool one_line)
{
	size_t n = 0;

	for (size_t i = 0; i < len && in[i] && (one_line || in[i] != '\n') && n + 1 < cap; i++)
		out[n++] = (in[i] >= 0x20 && in[i] < 0x7f) ? in[i] : '?';
	out[n] = '\0';
}

/* ---- the holder's line -------------------------------------------------- */

/* Written whole at offset 0, then cut to its length: while the lock is
 * held the file is never empty, only this line or, for an instant after a
 * holder that was killed, this line followed by the tail of its longer one
 * (a reader stops at the first newline).  Failure to write it is ignored:
 * the line only serves a waiter's message, and a full /run fails the
 * ledger's own write with its reason. */
static void write_holder(int fd, const char *holder)
{
	char line[LINE_MAX_];
	struct timespec now;
	int n;

	clock_gettime(CLOCK_REALTIME, &now);
	n = snprintf(line, sizeof(line), "pid=%ld since=%lld.%03ld cmd=", (long)getpid(), (long long)now.tv_sec,
		     now.tv_nsec / 1000000);
	if (holder)
		copy_printable(line + n, HOLDER_MAX, holder, strlen(holder), true);
	n += (int)strlen(line + n);
	line[n++] = '\n';
	if (pwrite(fd, line, (size_t)n, 0) == n && ftruncate(fd, n) < 0) {
		/* The line is there; a longer stale tail after it is cut at the newline. */
	}
}

struct holder_line {
	long pid;
	long long since_ms; /* unix time */
	char cmd[HOLDER_MAX];
};

/* The line in the lock file, if there is one in the format above. */
static bool read_holder(int fd, struct holder_line *h)
{
	char buf[LINE_MAX_ + 1];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long long s;
	int ms, off = 0;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "pid=%ld since=%lld.%3d cmd=%n", &h->pid, &s, &ms, &off) != 3 || !off || h->pid <= 0 ||
	    ms < 0 || ms > 999)
		return false;
	h->since_ms = s * 1000 + ms;
	copy_printable(h->cmd, sizeof(h->cmd), buf + off, (size_t)(n - off), false);
	return true;
}

/* ---- who holds it, from /proc -------------------------------------------- */

/* The pids /proc/locks says hold an flock on the lock file (waiters
 * blocked in flock, "->", left out), up to `max`; the count of them all,
 * or -1 when /proc/locks cannot be read.  Matched by device and inode as
 * the kernel prints them (major:minor:inode of the file's superblock). */
static int lock_holders(const struct cc_root *host, const struct stat *st, long *pids, int max)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *text = cc_root_read(host, "/proc/locks", 0, &e);
	char *save = NULL, *line;
	int n = 0;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[16], mode[16], arrow[4];
		unsigned maj, min;
		unsigned long ino;
		long pid;

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF" */
		if (sscanf(line, "%*d: %3s", arrow) == 1 && !strcmp(arrow, "->"))
			continue;
		if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%lu", kind, mode, &pid, &maj, &min, &ino) != 6)
			continue;
		if (strcmp(kind, "FLOCK") || maj != major(st->st_dev) || min != minor(st->st_dev) ||
		    ino != (unsigned long)st->st_ino || pid <= 0)
			continue;
		if (n < max)
			pids[n] = pid;
		n++;
	}
	return n;
}

/* "pid N (its command line)", or "pid N" when /proc has none to give. */
static void name_pid(const struct cc_root *host, long pid, char *out, size_t cap)
{
	struct cc_err e = CC_ERR_INIT;
	char path[64], buf[HOLDER_MAX], cmd[HOLDER_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	fd = cc_root_openat(host, path, O_RDONLY, 0, &e);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0)
			n = 0;
	}
	/* The arguments are NUL-separated and end with one. */
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	copy_printable(cmd, sizeof(cmd), buf, (size_t)n, true);
	if (cmd[0])
		snprintf(out, cap, "pid %ld (%s)", pid, cmd);
	else
		snprintf(out, cap, "pid %ld", pid);
}

/* ---- giving up ----------------------------------------------------------- */

static void fmt_seconds(char *out, size_t cap, unsigned ms)
{
	if (ms % 1000 == 0)
		snprintf(out, cap, "%u", ms / 1000);
	else if (ms % 100 == 0)
		snprintf(out, cap, "%u.%u", ms / 1000, ms % 1000 / 100);
	else if (ms % 10 == 0)
		snprintf(out, cap, "%u.%02u", ms / 1000, ms % 1000 / 10);
	else
		snprintf(out, cap, "%u.%03u", ms / 1000, ms % 1000);
}

/* Who holds the lock, for the message of a waiter that gave up.  `shared`:
 * readers hold it (a writer's waiter found out), otherwise a writer does.
 * The line in the file is trusted only when its pid is one /proc/locks
 * names as a holder, or, when that cannot be told, one that still runs: a
 * holder killed before it could empty the file leaves its line behind. */
static void describe(int fd, bool shared, char *out, size_t cap)
{
	struct cc_err e = CC_ERR_INIT;
	/* The lock, the ledger and their holders are this host's whatever
	 * --root a command was given: /proc is the host's. */
	_cleanup_root_ struct cc_root *host = cc_root_open("/", &e);
	struct holder_line h;
	bool have_line = !shared && read_holder(fd, &h);
	long pids[HOLDERS_MAX];
	char first[HOLDER_MAX + 32];
	struct stat st = { 0 };
	int n = -1;

	if (host && fstat(fd, &st) == 0)
		n = lock_holders(host, &st, pids, HOLDERS_MAX);
	if (have_line) {
		bool holds = false;
		char path[64];

		if (n > 0) {
			for (int i = 0; i < n && i < HOLDERS_MAX; i++)
				holds |= pids[i] == h.pid;
		} else {
			snprintf(path, sizeof(path), "/proc/%ld", h.pid);
			holds = !host || cc_root_exists(host, path);
		}
		if (holds) {
			long long age = clock_ms(CLOCK_REALTIME) - h.since_ms;

			if (age < 0)
				age = 0;
			snprintf(out, cap, "held by pid %ld%s%s%s for %lld.%lld s", h.pid, h.cmd[0] ? " (" : "", h.cmd,
				 h.cmd[0] ? ")" : "", age / 1000, age % 1000 / 100);
			return;
		}
	}
	if (n > 0) {
		char more[32] = "";

		name_pid(host, pids[0], first, sizeof(first));
		if (n > 1)
			snprintf(more, sizeof(more), " and %d other%s", n - 1, n > 2 ? "s" : "");
		snprintf(out, cap, "held %sby %s%s%s", shared ? "shared " : "", first, more,
			 shared ? "" : ", which did not record itself");
	} else {
		snprintf(out, cap, "held %s (look for inode %lu in /proc/locks)",
			 shared ? "shared by a reader" : "by a process that did not record itself",
			 (unsigned long)st.st_ino);
	}
	if (have_line) {
		size_t len = strlen(out);
		char path[64];

		snprintf(path, sizeof(path), "/proc/%ld", h.pid);
		snprintf(out + len, cap - len, "; the last recorded holder, pid %ld%s%s%s, %s", h.pid,
			 h.cmd[0] ? " (" : "", h.cmd, h.cmd[0] ? ")" : "",
			 host && !cc_root_exists(host, path) ? "no longer exists" : "does not hold it");
	}
}

/* The wait ran out.  A writer's waiter first tells whether readers hold
 * it (a shared lock is granted beside them) and takes the lock should it
 * be free by now; a reader's waiter can only be facing a writer. */
static int gave_up(int fd, const char *path, bool exclusive, unsigned wait_ms, struct cc_err *err)
{
	char who[3 * HOLDER_MAX + 128], secs[32];
	bool shared = false;

	if (exclusive && flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* A conversion that fails leaves no lock (flock(2)). */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		flock(fd, LOCK_UN);
		shared = true;
	}
	describe(fd, shared, who, sizeof(who));
	fmt_seconds(secs, sizeof(secs), wait_ms);
	return cc_err_set(err, ETIMEDOUT, "%s: %s; gave up after %s s", path, who, secs);
}

/* 0 taken, 1 not within wait_ms, -1 with errno set and *step naming the
 * call that failed. */
static int try_for(int fd, bool exclusive, unsigned wait_ms, const char **step)
{
	long long deadline = clock_ms(CLOCK_MONOTONIC) + wait_ms;
	long nap = NAP_MIN_NS;

	for (;;) {
		struct timespec ts;
		long long left;
		int r;

		if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			*step = "flock";
			return -1;
		}
		left = deadline - clock_ms(CLOCK_MONOTONIC);
		if (left <= 0)
			return 1;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1000000 < nap ? (long)(left * 1000000) : nap;
		/* Interrupted or not, the deadline decides. */
		r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		if (r && r != EINTR) {
			errno = r;
			*step = "waiting for the lock";
			return -1;
		}
		if (nap < NAP_MAX_NS)
			nap = nap * 2 < NAP_MAX_NS ? nap * 2 : NAP_MAX_NS;
	}
}

int ledger_lock(struct cc_ledger *l, bool exclusive, const struct cc_ledger_lock *lock, struct cc_err *err)
{
	unsigned wait_ms = lock ? lock->wait_ms : CC_LEDGER_WAIT_MS;
	char path[LOCK_PATH_MAX];
	const char *step = NULL;
	/* l->lockfd only once it is held: closing a ledger empties the
	 * holder's line, which must not be another's. */
	_cleanup_close_ int fd = -1;
	struct stat st;
	int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, r;

	if (lock && lock->refused)
		return cc_err_set(err, EINVAL, "%s", lock->refused);
	snprintf(path, sizeof(path), "%s/" LOCK_FILE, l->dir);
	/* A reader creates nothing; with no lock file no writer has run yet,
	 * and a later one can only replace ledger.json atomically. */
	flags |= exclusive ? O_RDWR | O_CREAT : O_RDONLY;
	fd = openat(l->dirfd, LOCK_FILE, flags, 0600);
	if (fd < 0) {
		if (!exclusive && errno == ENOENT)
			return 0;
		return cc_err_sys(err, errno, "%s", path);
	}
	if (fstat(fd, &st) < 0)
		return cc_err_sys(err, errno, "%s: stat", path);
	if (!S_ISREG(st.st_mode))
		return cc_err_set(err, EINVAL, "%s: not a regular file", path);
	/* O_CREAT's mode went through the umask. */
	if (exclusive && (st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
		return cc_err_sys(err, errno, "%s: chmod 0600", path);
	r = try_for(fd, exclusive, wait_ms, &step);
	if (r < 0)
		return cc_err_sys(err, errno, "%s: %s", path, step);
	if (r > 0 && gave_up(fd, path, exclusive, wait_ms, err) < 0)
		return -1;
	if (exclusive)
		write_holder(fd, lock ? lock->holder : NULL);
	l->lockfd = cc_steal_fd(fd);
	return 0;
}

void ledger_unlock(struct cc_ledger *l)
{
	if (l->lockfd < 0)
		return;
	/* A line left after the release would name a process that no longer
	 * holds the lock. */
	if (!l->readonly && ftruncate(l->lockfd, 0) < 0) {
		/* Only a waiter's message reads it, and checks it. */
	}
	/* Explicitly: a fork that did not exec would otherwise keep it. */
	flock(l->lockfd, LOCK_UN);
	close(l->lockfd);
	l->lockfd = -1;
}
