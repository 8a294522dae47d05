/* corecarve: asking systemd, the host's init, through systemctl.
 *
 * Two callers today: the irqbalance hand-off restarts irqbalance.service
 * so it re-reads its environment file (from the filtered tools through
 * the helper below), and init-parent gives a slice the CPUs it makes a
 * partition root of (cli/cmd_init_parent.c says why).
 * systemctl rather than sd-bus: one exec on paths that run once per
 * boot or per steering change, and the command an operator would type.
 */
#ifndef CC_SYSTEMCTL_H
#define CC_SYSTEMCTL_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "root.h"

/* The host runs systemd as its init (sd_booted(3): /run/systemd/system is
 * a directory).  False on a captured --root tree, whose systemd is not the
 * one systemctl would reach. */
bool cc_systemd_booted(const struct cc_root *root);

/* The slice unit a cgroup path names under systemd's naming: its last
 * component when every component ends in ".slice" ("/corecarve.slice" ->
 * "corecarve.slice", "/a.slice/a-b.slice" -> "a-b.slice"); NULL for any
 * other path. */
const char *cc_slice_unit(const char *cgroup);

/* How long systemctl may take: a hung manager (or a D-Bus that does not
 * answer) must not hold a hook, and the ledger lock, past the runtime's
 * hook timeout. */
#define CC_SYSTEMCTL_TIMEOUT_MS 5000

/* Arguments systemctl is given at most, "systemctl" and "--" included. */
#define CC_SYSTEMCTL_ARGS_MAX 16

/* Run `systemctl OPTS... -- UNITS...` (both NULL-terminated, either NULL;
 * no "--" without units): after "--" no unit name or property is ever
 * read as an option.  stdin and stdout on /dev/null, and an environment of
 * its own (PATH=/usr/sbin:/usr/bin:/sbin:/bin and LANG=C, nothing of the
 * caller's: SYSTEMD_* variables would change what it talks to and runs).
 * Killed after CC_SYSTEMCTL_TIMEOUT_MS (ETIMEDOUT, the error naming the
 * command).  0 when it exited 0; otherwise -1 with the command and the
 * first line systemctl printed on stderr in ERR. */
int cc_systemctl(const char *const opts[], const char *const units[], struct cc_err *err);

/* The same with the program at PATH and a deadline of TIMEOUT_MS (the
 * tests run a stand-in). */
int cc_systemctl_at(const char *path, const char *const opts[], const char *const units[], unsigned timeout_ms,
		    struct cc_err *err);

/* A helper for a process about to load a tool filter (sandbox.h), which
 * denies execve and is inherited by every child: fork now, before the
 * filter, a process that runs exactly `systemctl OPTS -- UNITS` (these
 * arrays, fixed here; PATH the program, NULL: found as cc_systemctl()
 * finds it, the tests name a stand-in) each time it is asked and answers with the result.
 * From then on cc_systemctl() with these same arrays asks the helper;
 * any other command is spawned as before (and refused by the filter).
 * OPTS NULL: no such command (the hook's helper).  The helper takes no
 * input but "run it once more" and a slice's CPUs and quota
 * (cc_systemd_set), so a confined process that is taken over can do no
 * more through it than restart that unit and give a slice what it could
 * write to the slice's files itself.  It exits when
 * this process closes its end (exit included).  Once per process; 0, or
 * -1 with err. */
int cc_systemctl_helper_start(const char *path, const char *const opts[], const char *const units[],
			      struct cc_err *err);

/* The longest CPU list, the most properties, the longest request of
 * cc_systemd_set. */
#define CC_SYSTEMD_CPUS_MAX 4096
#define CC_SYSTEMD_PROPS_MAX 3
#define CC_SYSTEMD_REQ_MAX (CC_SYSTEMD_CPUS_MAX + 512)

/* Give slice UNIT (a name cc_slice_unit gives) PROPS (NULL-ended) for
 * this boot: `systemctl set-property --runtime -- UNIT PROPS...`, where a
 * property is AllowedCPUs=LIST, CPUQuota= (none) or CPUQuota=N[.NN]%, or
 * CPUQuotaPeriodSec=Nus, and nothing else.  systemd writes a slice's
 * cpuset.cpus and cpu.max back to those whenever it applies the unit again
 * (a property set through it, as the kubelet's QoS update does every
 * minute; a daemon-reload), so a value written to the file alone does not
 * last (cgroup/host.c).  Through this process's helper when it has one
 * (the helper checks the unit and the properties again: a confined
 * process taken over can do no more through it than this, which writes
 * what it could write to the slice's files itself), spawned otherwise.
 * 0, or -1 with err. */
int cc_systemd_set(const char *unit, const char *const props[], struct cc_err *err);

/* The helper's socket, -1 without one: the hook's filter lets it send and
 * receive there (sandbox.h). */
int cc_systemctl_helper_fd(void);
/* Its pid, 0 without one: the filter lets the hook reap it at exit. */
pid_t cc_systemctl_helper_pid(void);

#endif
