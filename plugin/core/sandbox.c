/* The hook's allow-list.  Each syscall carries the reason the hook needs
 * it; anything not listed fails with EPERM (the caller sees an ordinary
 * error, never a signal, so a denied call inside a library is reported
 * as "operation not permitted" on one line like every other failure). */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum cond {
	ANY,          /* any arguments */
	READ_ONLY,    /* openat: arg 2 (flags) opens for reading only, creates and truncates nothing */
	NO_EXEC,      /* arg 2 (prot) without PROT_EXEC */
	SELF,         /* arg 0 (pid) is 0 or this process */
	SELF_SIGKILL, /* kill(getpid(), SIGKILL) only */
	LOG_FD,       /* arg 0 is the log socket connected before the filter; absent without one */
};

struct rule {
	const char *name;
	enum cond cond;
};

static const struct rule allowed[] = {
	/* Reading inputs: policy, config.json, sysfs and /proc (hwloc and the
	 * root layer), cgroup control files, /proc/irq, the ledger. */
	{ "read", ANY },
	{ "openat", ANY },       /* glibc's open() and fopen() (libcgroup, hwloc) */
	{ "openat2", ANY },      /* the root layer: RESOLVE_IN_ROOT opens */
	{ "close", ANY },
	/* fstat()/stat(): regular-file and size checks.  Which call glibc
	 * makes depends on its version, and the hook runs on the node's libc:
	 * 2.36 (Debian 12) makes newfstatat for both, 2.41 (Debian 13) fstat
	 * for fstat(), and one built for statx uses that.  All of them read
	 * metadata only; without the one this libc uses every start fails
	 * with EPERM on config.json (seen on Debian 13). */
	{ "newfstatat", ANY },
	{ "fstat", ANY },
	{ "stat", ANY },
	{ "lstat", ANY },
	{ "statx", ANY },
	{ "fstatfs", ANY },      /* fstatvfs(): irqbalance's file on a read-only /etc is left alone, not a refusal */
	{ "getdents64", ANY },   /* readdir: sysfs, cgroup peers, /proc/irq, ledger temp files */
	{ "fcntl", ANY },        /* fdopendir() checks the descriptor's flags */
	{ "faccessat2", ANY },   /* hwloc probes optional sysfs files */
	{ "faccessat", ANY },    /* glibc's fallback where faccessat2 is missing (< 5.8) */
	/* Writing: cgroup control files (cpuset.*, cpu.max, cgroup.*),
	 * /proc/irq/N/smp_affinity, the ledger, the one error line. */
	{ "write", ANY },
	{ "mkdir", ANY },        /* the state directory */
	{ "mkdirat", ANY },      /* the parked-siblings cgroup */
	{ "rmdir", ANY },        /* that cgroup with its last owner; a stale exec carve's cgroup */
	{ "fchmod", ANY },       /* ledger files 0600, the directory 0700 */
	{ "fchown", ANY },       /* the replaced irqbalance environment file keeps its owner */
	{ "flock", ANY },        /* the ledger lock: one hook decides at a time */
	/* The lock's holder writes its line at offset 0 and cuts the file to
	 * it, and empties it as it lets go; a waiter that gives up reads it
	 * (plugin/ledger/ledger_lock.c). */
	{ "pwrite64", ANY },
	{ "pread64", ANY },
	{ "ftruncate", ANY },
	{ "fsync", ANY },        /* ledger temp file and directory around the rename */
	{ "renameat", ANY },     /* the atomic ledger replace */
	{ "unlinkat", ANY },     /* temp files a killed writer left */
	/* Memory.  No executable mapping: nothing may be loaded or made
	 * executable after the inputs are read. */
	{ "brk", ANY },
	{ "mmap", NO_EXEC },
	{ "munmap", ANY },
	{ "mremap", ANY },       /* realloc() of large buffers (/proc/interrupts on big hosts) */
	/* Process and time. */
	{ "getpid", ANY },       /* temp file names, the fault switch */
	{ "geteuid", ANY },      /* the ledger directory must be ours */
	{ "uname", ANY },        /* hwloc records the OS release */
	{ "sched_getaffinity", ANY }, /* hwloc: the CPUs this process may use */
	/* hwloc's x86 backend binds the hook to each CPU in turn to read its
	 * CPUID (core kinds of hybrid CPUs): without it the hook would see
	 * other core classes than `corecarve plan`.  Only its own affinity. */
	{ "sched_setaffinity", SELF },
	{ "clock_gettime", ANY }, /* time() where the clocksource has no vDSO mode; the lock's deadline */
	/* The ledger lock is waited for in naps between tries, never in a
	 * blocking flock (plugin/ledger/ledger_lock.c says why). */
	{ "clock_nanosleep", ANY },
	/* A nap interrupted by a stop (SIGSTOP, then SIGCONT) is resumed by
	 * the kernel through restart_syscall: refused, it would fail the wait. */
	{ "restart_syscall", ANY },
	{ "gettimeofday", ANY },
	{ "time", ANY },
	{ "kill", SELF_SIGKILL }, /* fault injection: SIGKILL to itself, nobody else */
	/* The decision's line in the journal or syslog (journal.h): sent on
	 * the datagram socket connected before the filter, and on no other
	 * descriptor; no socket(2) or connect(2) is allowed, so nothing else
	 * can be reached. */
	{ "sendto", LOG_FD },
	/* Only its own signal stack; the sanitizer runtimes (SANITIZE=1)
	 * read it before every noreturn call, exit() included. */
	{ "sigaltstack", ANY },
	{ "exit_group", ANY },
};

#define NALLOWED ((int)(sizeof(allowed) / sizeof(allowed[0])))

int cc_sandbox_hook_count(void)
{
	return NALLOWED;
}

const char *cc_sandbox_hook_name(int i)
{
	return i >= 0 && i < NALLOWED ? allowed[i].name : NULL;
}

/* libseccomp returns negative errno values. */
static int fail(struct cc_err *err, int r, const char *step)
{
	return cc_err_set(err, -r, "seccomp: %s: %s", step, strerror(-r));
}

static int add(scmp_filter_ctx ctx, int nr, enum cond cond, int log_fd)
{
	switch (cond) {
	case LOG_FD:
		if (log_fd < 0)
			return 0;
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)log_fd));
	case ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case READ_ONLY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, 0));
	case NO_EXEC:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	case SELF: {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, 0));

		return r < 0 ? r : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
						    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	}
	case SELF_SIGKILL:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
					SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()),
					SCMP_A1(SCMP_CMP_EQ, SIGKILL));
	}
	return -EINVAL;
}

/* Load LIST (N rules) with EPERM for everything else. */
static int load(const struct rule *list, int n, int log_fd, struct cc_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = 0;

	if (!ctx)
		return cc_err_set(err, ENOMEM, "seccomp: seccomp_init failed");
	/* Denials reach the kernel's audit log (dmesg without auditd): a call
	 * this list lacks shows up there instead of failing silently inside
	 * a library; the e2e tests check there is none. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
	if (r < 0)
		fail(err, r, "log denials");
	for (int i = 0; i < n && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(list[i].name);

		/* Not a syscall of this architecture (open on arm64, ...). */
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = add(ctx, nr, list[i].cond, log_fd);
		if (r < 0) {
			char step[64];

			snprintf(step, sizeof(step), "allow %s", list[i].name);
			fail(err, r, step);
		}
	}
	if (r == 0) {
		r = seccomp_load(ctx);
		if (r < 0)
			fail(err, r, "load");
	}
	seccomp_release(ctx);
	return r < 0 ? -1 : 0;
}

int cc_sandbox_hook(int log_fd, struct cc_err *err)
{
	return load(allowed, NALLOWED, log_fd, err);
}

/* The first stage's decision (hooks/first_stage.c): parse the state and
 * config.json, read the ledger, exit with the answer.  Nothing is written
 * (files are opened for reading only; the stage writes nothing), nothing
 * is executed, no socket; the process that loads it is a child that only
 * exits, so the full hook the parent executes never inherits it. */
static const struct rule first_stage[] = {
	{ "read", ANY },
	{ "openat", READ_ONLY },   /* bundle directory (O_PATH), config.json, the state directory, the ledger */
	{ "close", ANY },
	{ "newfstatat", ANY },     /* regular-file and size checks, the state directory's owner and mode */
	{ "fstat", ANY },
	{ "stat", ANY },
	{ "lstat", ANY },
	{ "statx", ANY },
	{ "geteuid", ANY },        /* the state directory must be ours (or root's) */
	{ "brk", ANY },
	{ "mmap", NO_EXEC },
	{ "munmap", ANY },
	{ "mremap", ANY },
	{ "exit_group", ANY },
	{ "exit", ANY },
};

int cc_sandbox_first_stage(struct cc_err *err)
{
	return load(first_stage, (int)(sizeof(first_stage) / sizeof(first_stage[0])), -1, err);
}
