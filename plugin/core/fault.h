/* corecarve: fault injection for crash-consistency tests.
 *
 * The entry point reads one step name from CORECARVE_FAULT and hands it to
 * the library (cc_ctx.fault, cc_cg.fault, cc_ledger_set_fault); each module
 * marks its named steps with cc_fault().  When the armed step is reached
 * the process kills itself with SIGKILL: no cleanup handler, atexit or
 * destructor runs, exactly like the OOM killer or a runtime's hook timeout.
 * tests/e2e/scenarios/40-faults.sh, 42-faults-apply.sh and
 * 43-faults-release.sh crash the hook at every step and check that the
 * next hook brings the node back to a consistent state.
 *
 * Steps (in the order the hook reaches them):
 *   after-lock            create: ledger locked, nothing decided
 *   after-gc              create: stale carves released in the kernel, ledger not yet written
 *   before-ledger-rename  any commit: temp file written and fsynced, not renamed
 *   after-journal         create: the carve and every effect's records (cgroup, IRQs, power)
 *                         with their pending writes committed, nothing written
 *   mid-cgroup-write      create: ancestors/parked/peers changed, container partition not yet
 *   after-cgroup-write    create: every effect applied (cgroup, IRQs, power), the final commit
 *                         not made
 *   after-irq-journal     an IRQ reconcile on its own (a release, irq reconcile, audit --fix,
 *                         a VM): records with pending writes committed, no IRQ written
 *   mid-irq-write         any IRQ reconcile: the first IRQ (or default_smp_affinity) written
 *   after-power-journal   a VM's power settings: records with pending writes committed, nothing
 *                         written
 *   mid-power-write       create or a VM: the first power setting written
 *   before-release        poststop: ledger locked, nothing undone
 *   before-release-commit poststop (any release): kernel undone, ledger still holds the carve
 *
 * "<step>:STOP" stops the process there instead (SIGSTOP), holding what
 * it holds (the ledger's lock after after-lock): a writer that takes its
 * time, for the tests of the hooks' bounded wait; SIGCONT lets it go on.
 *
 * The same variable can instead make a step fail, as a full or read-only
 * disk would, and the process go on: "<point>:<ERRNO>[@<n>]", ERRNO one
 * of ENOSPC, EROFS, EIO, EDQUOT; with @n only the n-th time the point is
 * reached in this process's ledger (its n-th commit), otherwise every
 * time.  The points are each step of a ledger commit (fileio.c's replace):
 *   ledger-write          the temp file's write (and its fsync)
 *   ledger-rename         the rename over ledger.json: the old file stays
 *   ledger-dirsync        the directory's fsync: the new file is in place,
 *                         the commit fails
 * test_restore's test_commit_fails fails each of them at every commit of
 * a carve and of a release, and checks the node and the retry.  One more
 * point is an effect's, after the cgroup effect applied:
 *   irq-write             the n-th /proc/irq write of one IRQ apply (@n
 *                         counts the apply's writes from 1)
 * test_restore's test_irq_write_fails checks that a carve whose IRQ write
 * fails leaves the node as it was: cgroups, IRQs and the ledger.
 */
#ifndef CC_FAULT_H
#define CC_FAULT_H

/* SIGKILL this process when `armed` (may be NULL) names `step`. */
void cc_fault(const char *armed, const char *step);

/* The errno `armed` (may be NULL) injects at `point` reached for the
 * `nth` time (from 1), 0 when none. */
int cc_fault_errno(const char *armed, const char *point, int nth);

#endif
