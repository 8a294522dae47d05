/* The hook's allow-list.  Each syscall carries the reason the hook needs
 * it; anything not listed fails with EPERM (the caller sees an ordinary
 * error, never a signal, so a denied call inside a library is reported
 * as "operation not permitted" on one line like every other failure). */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

enum cond {
	ANY,          /* any arguments */
	READ_ONLY,    /* openat: arg 2 (flags) opens for reading only, creates and truncates nothing */
	NO_EXEC,      /* arg 2 (prot) without PROT_EXEC */
	SELF,         /* arg 0 (pid) is 0 or this process */
	SELF_FAULT,   /* kill(getpid(), SIGKILL or SIGSTOP) only */
	OWN_SOCKET,   /* arg 0 is a socket made before the filter: the log's, the systemctl helper's */
	OWN_CHILD,    /* arg 0 is the systemctl helper's pid; absent without one */
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
	{ "mkdirat", ANY },      /* the parked-siblings cgroup, beneath the cgroup mount's fd */
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
	{ "unlinkat", ANY },     /* temp files a killed writer left; a cgroup removed (AT_REMOVEDIR) */
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
	/* fault injection: SIGKILL (a crash) or SIGSTOP (a stuck writer) to
	 * itself, nobody else. */
	{ "kill", SELF_FAULT },
	/* The decision's line in the journal or syslog (journal.h), sent on
	 * the datagram socket connected before the filter; a slice's
	 * AllowedCPUs= asked of the systemctl helper forked before it
	 * (systemctl.h), and its answer.  On those descriptors only; no
	 * socket(2) or connect(2) is allowed, so nothing else can be reached. */
	{ "sendto", OWN_SOCKET },
	{ "recvfrom", OWN_SOCKET },
	/* That helper reaped at exit (it leaves when its socket closes), and
	 * no other process. */
	{ "wait4", OWN_CHILD },
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

static int add(scmp_filter_ctx ctx, int nr, enum cond cond, const int fds[2], pid_t child)
{
	switch (cond) {
	case OWN_CHILD:
		if (child <= 0)
			return 0;
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)child));
	case OWN_SOCKET:
		for (int i = 0; i < 2; i++) {
			int r = fds[i] < 0 ? 0 : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
								   SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fds[i]));

			if (r < 0)
				return r;
		}
		return 0;
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
	case SELF_FAULT: {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()),
					 SCMP_A1(SCMP_CMP_EQ, SIGKILL));

		return r < 0 ? r
			     : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()),
						SCMP_A1(SCMP_CMP_EQ, SIGSTOP));
	}
	}
	return -EINVAL;
}

/* Load LIST (N rules) with EPERM for everything else. */
static int load(const struct rule *list, int n, const int fds[2], pid_t child, struct cc_err *err)
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
		r = add(ctx, nr, list[i].cond, fds, child);
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

int cc_sandbox_hook(int log_fd, int helper_fd, pid_t helper_pid, struct cc_err *err)
{
	const int fds[2] = { log_fd, helper_fd };

	return load(allowed, NALLOWED, fds, helper_pid, err);
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
	static const int none[2] = { -1, -1 };

	return load(first_stage, (int)(sizeof(first_stage) / sizeof(first_stage[0])), none, 0, err);
}

/* ---- the tools' deny-list (sandbox.h says why a deny-list) ---------------- */

static const char *const tool_denied[] = {
	/* Running anything: the one exec a tool makes is the systemctl helper's,
	 * forked before the filter. */
	"execve", "execveat",
	/* Reaching into other processes.  A SANITIZE=1 build (tests only,
	 * never shipped) keeps ptrace: LeakSanitizer's scan at exit attaches
	 * to the process's threads, and refused it would fail every run. */
#if !defined(__SANITIZE_ADDRESS__)
	"ptrace",
#endif
	"process_vm_readv", "process_vm_writev",
	/* Changing what the node's filesystems are. */
	"mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
	"fspick", "mount_setattr", "chroot", "swapon", "swapoff", "acct",
	/* Escaping the view of files and namespaces. */
	"open_by_handle_at", "unshare", "setns",
	/* The kernel itself. */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf",
	"perf_event_open", "reboot", "iopl", "ioperm", "userfaultfd", "personality",
	/* io_uring runs file and socket operations seccomp never sees. */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	/* Keys and identities. */
	"keyctl", "add_key", "request_key", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setfsuid", "setfsgid", "setgroups",
};

#define NTOOL_DENIED ((int)(sizeof(tool_denied) / sizeof(tool_denied[0])))

int cc_sandbox_tool_denied_count(void)
{
	return NTOOL_DENIED;
}

const char *cc_sandbox_tool_denied_name(int i)
{
	return i >= 0 && i < NTOOL_DENIED ? tool_denied[i] : NULL;
}

/* clone(2) with any of these flags makes a namespace, what unshare(2)
 * would.  (Its flags are argument 0 on x86_64 and arm64, the arches the
 * project ships.)  libseccomp compares (arg & mask) == value, so "any of
 * them" is one rule per flag. */
static const unsigned long ns_flags[] = { CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
					  CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP };

static int deny_if(scmp_filter_ctx ctx, int err_no, const char *name, unsigned n, struct scmp_arg_cmp cmp)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0;
	return n ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err_no), nr, 1, cmp)
		 : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err_no), nr, 0);
}

/* The rules beyond the plain list: namespaces through clone, clone3,
 * TIOCSTI, and sockets (none, or AF_UNIX only).  First failing libseccomp
 * return, or 0. */
static int tool_args(scmp_filter_ctx ctx, bool unix_sockets, const char **step)
{
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_EQ, 0);
	int r = 0;

	*step = "deny clone with CLONE_NEW*";
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]) && r == 0; i++)
		r = deny_if(ctx, EPERM, "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	if (r < 0)
		return r;
	/* clone3's flags are in memory the filter cannot read: ENOSYS makes
	 * glibc use clone, which the rules above check. */
	*step = "deny clone3";
	if ((r = deny_if(ctx, ENOSYS, "clone3", 0, none)) < 0)
		return r;
	*step = "deny TIOCSTI";
	if ((r = deny_if(ctx, EPERM, "ioctl", 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI))) < 0)
		return r;
	*step = "deny sockets";
	if (unix_sockets) {
		if ((r = deny_if(ctx, EPERM, "socket", 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX))) < 0)
			return r;
		return deny_if(ctx, EPERM, "socketpair", 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	}
	if ((r = deny_if(ctx, EPERM, "socket", 0, none)) < 0)
		return r;
	return deny_if(ctx, EPERM, "socketpair", 0, none);
}

static int load_tool(bool unix_sockets, struct cc_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	char step[64] = "log denials";
	const char *arg_step = NULL;
	int r;

	if (!ctx)
		return cc_err_set(err, ENOMEM, "seccomp: seccomp_init failed");
	/* As in the hook's filter: a denial reaches the kernel's audit log. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
	for (int i = 0; i < NTOOL_DENIED && r == 0; i++) {
		snprintf(step, sizeof(step), "deny %s", tool_denied[i]);
		r = deny_if(ctx, EPERM, tool_denied[i], 0, SCMP_A0(SCMP_CMP_EQ, 0));
	}
	if (r == 0) {
		r = tool_args(ctx, unix_sockets, &arg_step);
		snprintf(step, sizeof(step), "%s", arg_step);
	}
	if (r == 0) {
		snprintf(step, sizeof(step), "load");
		r = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	return r < 0 ? fail(err, r, step) : 0;
}

/* audit --fix re-pins threads, rewrites cgroup files and irqbalance's
 * file, and logs to journald over AF_UNIX; the read-only audit of the
 * host or of a --root tree gets the same filter (a tree is hostile). */
int cc_sandbox_audit(struct cc_err *err)
{
	return load_tool(true, err);
}

/* vm reconcile: the VM finder reads /proc, pins QEMU's threads, writes
 * cgroups, steers IRQs and tells irqbalance over its AF_UNIX socket. */
int cc_sandbox_vm_reconcile(struct cc_err *err)
{
	return load_tool(true, err);
}

/* irq reconcile: /proc/irq, irqbalance's file and socket. */
int cc_sandbox_irq_reconcile(struct cc_err *err)
{
	return load_tool(true, err);
}

/* device-plugin serves and calls on unix sockets, and starts its
 * outbound thread (devplugin_serve.c) after the filter. */
int cc_sandbox_device_plugin(struct cc_err *err)
{
	return load_tool(true, err);
}

/* capture reads a tree and writes files beneath its destination: no
 * socket of any kind. */
int cc_sandbox_capture(struct cc_err *err)
{
	return load_tool(false, err);
}
