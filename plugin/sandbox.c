/* The hook's allow-list.  Each syscall carries the reason the hook needs
 * it; anything not listed fails with EPERM (the caller sees an ordinary
 * error, never a signal, so a denied call inside a library is reported
 * as "operation not permitted" on one line like every other failure). */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum cond {
	ANY,          /* any arguments */
	NO_EXEC,      /* arg 2 (prot) without PROT_EXEC */
	SELF_SIGKILL, /* kill(getpid(), SIGKILL) only */
};

static const struct {
	const char *name;
	enum cond cond;
} allowed[] = {
	/* Reading inputs: policy, config.json, sysfs and /proc (hwloc and the
	 * root layer), cgroup control files, /proc/irq, the ledger. */
	{ "read", ANY },
	{ "pread64", ANY },      /* hwloc reads some sysfs attributes at an offset */
	{ "openat", ANY },       /* glibc's open() and fopen() (libcgroup, hwloc) */
	{ "openat2", ANY },      /* the root layer: RESOLVE_IN_ROOT opens */
	{ "open", ANY },         /* architectures and libcs that still use it */
	{ "close", ANY },
	{ "lseek", ANY },        /* stdio repositions a stream it closes early */
	{ "newfstatat", ANY },   /* fstat()/stat(): regular-file and size checks */
	{ "fstat", ANY },        /* the same on libcs that call it directly */
	{ "statx", ANY },        /* the same on newer libcs */
	{ "getdents64", ANY },   /* readdir: sysfs, cgroup peers, ledger temp files */
	{ "fcntl", ANY },        /* fdopendir() checks the descriptor's flags */
	{ "readlink", ANY },     /* realpath() of the root; hwloc's sysfs links */
	{ "readlinkat", ANY },
	{ "statfs", ANY },       /* libcgroup and hwloc check filesystem types */
	{ "fstatfs", ANY },
	{ "access", ANY },       /* probes for optional files */
	{ "faccessat", ANY },
	{ "faccessat2", ANY },
	/* Writing: cgroup control files (cpuset.*, cpu.max, cgroup.*),
	 * /proc/irq/N/smp_affinity, the ledger, the one error line. */
	{ "write", ANY },
	{ "writev", ANY },       /* stdio may gather a line into one writev */
	{ "mkdir", ANY },        /* the state directory */
	{ "mkdirat", ANY },      /* the parked-siblings cgroup */
	{ "fchmod", ANY },       /* ledger files 0600, the directory 0700 */
	{ "flock", ANY },        /* the ledger lock: one hook decides at a time */
	{ "fsync", ANY },        /* ledger temp file and directory before and after rename */
	{ "rename", ANY },       /* the atomic ledger replace */
	{ "renameat", ANY },
	{ "renameat2", ANY },
	{ "unlinkat", ANY },     /* temp files left by a killed writer */
	{ "unlink", ANY },
	/* Memory.  No executable mapping: nothing may be loaded or made
	 * executable after the inputs are read. */
	{ "brk", ANY },
	{ "mmap", NO_EXEC },
	{ "mprotect", NO_EXEC },
	{ "munmap", ANY },
	{ "mremap", ANY },
	{ "madvise", ANY },      /* free() returning large blocks */
	/* Process and time. */
	{ "getpid", ANY },       /* temp file names, the fault switch */
	{ "gettid", ANY },
	{ "getuid", ANY },
	{ "geteuid", ANY },      /* the ledger directory must be ours */
	{ "getgid", ANY },
	{ "getegid", ANY },
	{ "uname", ANY },        /* hwloc records the OS release */
	{ "sched_getaffinity", ANY }, /* hwloc: the CPUs this process may use */
	{ "get_mempolicy", ANY }, /* hwloc/libnuma: the memory policy in force */
	{ "getrandom", ANY },    /* jansson's hash seed, malloc */
	{ "clock_gettime", ANY }, /* time() and clocks when the vDSO is absent */
	{ "gettimeofday", ANY },
	{ "time", ANY },
	{ "futex", ANY },        /* libc locks (stdio, malloc) */
	{ "rt_sigreturn", ANY },
	{ "rt_sigprocmask", ANY }, /* abort() blocks signals before it raises */
	{ "kill", SELF_SIGKILL }, /* fault injection: SIGKILL to itself, nobody else */
	{ "exit", ANY },
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

static int add(scmp_filter_ctx ctx, int nr, enum cond cond)
{
	switch (cond) {
	case ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case NO_EXEC:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	case SELF_SIGKILL:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
					SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()),
					SCMP_A1(SCMP_CMP_EQ, SIGKILL));
	}
	return -EINVAL;
}

int cc_sandbox_hook(struct cc_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = 0;

	if (!ctx)
		return cc_err_set(err, ENOMEM, "seccomp: seccomp_init failed");
	for (int i = 0; i < NALLOWED && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i].name);

		/* Not a syscall of this architecture (open on arm64, ...). */
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = add(ctx, nr, allowed[i].cond);
		if (r < 0) {
			char step[64];

			snprintf(step, sizeof(step), "allow %s", allowed[i].name);
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
