/* corecarve: the hook's sandbox, a syscall allow-list (libseccomp).
 * (Named sandbox, not seccomp: a plugin/seccomp.h would hide libseccomp's
 * <seccomp.h> from every file built with -Iplugin.)
 *
 * The hook runs as root on every container start with input that whoever
 * may create pods controls (annotations).  Once it has read what the
 * runtime hands it (the state on stdin, read but not yet parsed) and
 * applied its Landlock ruleset (landlock.h: where it may write), it
 * confines itself, before it parses anything: from then on it may only
 * read and write files (policy,
 * config.json, sysfs, /proc, cgroupfs, /proc/irq, the ledger), lock and
 * rename the ledger, send its log line on the one socket it connected
 * before (journal.h), allocate memory and exit.  Everything else — execve,
 * new sockets, connect, ptrace, process_vm_*, clone, mount, bpf, ... —
 * fails with EPERM,
 * so a parser bug cannot be turned into a shell or a network connection.
 * Executable mappings are refused too (no code can be loaded or made
 * writable-then-executable), kill(2) only reaches the hook itself with
 * SIGKILL (fault injection, fault.h) and sched_setaffinity only its own
 * affinity.  Denials are logged by the kernel's audit (dmesg without
 * auditd): the e2e tests check the hook caused none.
 *
 * The list was taken from the hook itself: a build whose default action
 * was SCMP_ACT_LOG ran the e2e hook scenarios and the audit lines named
 * what it called; sandbox.c gives each one's reason.  The e2e crash and
 * concurrency scenarios check that the kernel logged no denial.
 *
 * The filter is inherited by nothing (the hook never forks) and applies
 * only to the host: with --root the hook reads a captured tree and writes
 * nothing, and entry points call this only when the root is "/".
 */
#ifndef CC_SANDBOX_H
#define CC_SANDBOX_H

#include <sys/types.h>

#include "error.h"

/* Load the hook's allow-list into this process (sets no_new_privs).
 * `log_fd` is the journal socket sendto(2) may use, `helper_fd` the
 * systemctl helper's (systemctl.h), which sendto(2) and recvfrom(2) may
 * use (-1: none), `helper_pid` that helper, which wait4(2) may reap at
 * exit (0: none).  Returns 0, or -1 with err naming the libseccomp step
 * that failed. */
int cc_sandbox_hook(int log_fd, int helper_fd, pid_t helper_pid, struct cc_err *err);

/* The first stage's filter (hooks/first_stage.c), for the child that
 * parses the state and config.json and reads the ledger: reading files
 * (openat only without O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND),
 * their metadata, memory without executable mappings, exit; EPERM for
 * everything else, execve and socket included.  Seccomp filters survive
 * execve, so the process that executes the full hook must never load it:
 * the first stage forks, and only the child, which answers by its exit
 * status, is confined.  0, or -1 with err naming the step. */
int cc_sandbox_first_stage(struct cc_err *err);

/* The number of syscalls the allow-list names, for tests and docs. */
int cc_sandbox_hook_count(void);

/* Name of the i-th allowed syscall (0 <= i < count), NULL otherwise. */
const char *cc_sandbox_hook_name(int i);

/* The tools' filters: a deny-list, unlike the hook's allow-list.  The
 * hook's few calls were measured on every path it takes; the tools (audit
 * --fix, vm and irq reconcile, capture) run hwloc, libcgroup, the audit's
 * samplers and the VM finder over whatever the node holds, and an
 * allow-list that missed one call would break a repair on a real node.
 * So everything is allowed except what none of them ever needs and what
 * turns a memory-safety bug into more than a wrong file: execve and
 * execveat, ptrace and process_vm_*, the mount family, namespaces
 * (unshare, setns, clone with CLONE_NEW*, clone3 answered ENOSYS so libc
 * falls back to clone, whose flags the filter can read), modules, kexec,
 * bpf, perf_event_open, keyrings, the set*id family, personality, reboot,
 * swap, acct, chroot, iopl/ioperm, userfaultfd, io_uring (whose
 * operations seccomp never sees), open_by_handle_at, TIOCSTI, and sockets
 * of any family but AF_UNIX (journald's socket, irqbalance's; capture
 * gets no socket at all).  Denied calls fail with EPERM, as in the hook's
 * filter: a refused call inside a library is one ordinary error line, and
 * the kernel's audit log names it.  Each sets no_new_privs.
 *
 * Seccomp filters are inherited across fork and execve: the one thing a
 * tool still executes, `systemctl try-restart irqbalance.service` after
 * rewriting irqbalance's file, is run by a helper forked before the
 * filter (cc_irqbalance_restart_helper, irqbalance.h).
 * 0, or -1 with err naming the libseccomp step that failed. */
int cc_sandbox_audit(struct cc_err *err);
int cc_sandbox_vm_reconcile(struct cc_err *err);
int cc_sandbox_irq_reconcile(struct cc_err *err);
int cc_sandbox_capture(struct cc_err *err);
/* device-plugin: parses HTTP/2 and protobuf from its sockets for as long
 * as it runs; unix sockets only (its own, the kubelet's), and threads
 * (clone without CLONE_NEW*). */
int cc_sandbox_device_plugin(struct cc_err *err);

/* The number of syscalls the tools' deny-list names, and the i-th. */
int cc_sandbox_tool_denied_count(void);
const char *cc_sandbox_tool_denied_name(int i);

#endif
