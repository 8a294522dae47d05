#!/bin/sh
# 40-faults: createRuntime killed with SIGKILL (CORECARVE_FAULT) under real
# crun, at each step up to the journal: after taking the ledger lock, after
# gc undid a stale carve in the kernel but before the ledger said so,
# before the ledger rename, and right after the write-ahead journal.  After
# each crash the runtime refuses the container and removes its cgroup; the
# next hook must collect what the dead one left and leave the node
# consistent (faultlib.sh): the ledger valid, no CPU owned twice, every
# carve's cgroup on exactly its CPUs, the dead carve's CPUs back with the
# peer, no CPU left in an ancestor's cpuset.cpus.exclusive or the parked
# partition, and with the last carve gone every IRQ as it was.
# 42-faults-apply and 43-faults-release take the later steps (one scenario
# would not fit the 150 s a scenario has under TCG).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
B=/run/b40 S=/run/s40
# shellcheck source-path=SCRIPTDIR/.. source=faultlib.sh
. /e2e/faultlib.sh
trap faults_cleanup EXIT

faults_setup
fault_create after-lock no
# Something for gc to undo when the hook dies before writing the ledger: a
# carve whose container went without its poststop.
if hook_up stale && NOPOST=1 hook_down stale; then pass stale-left; else fail stale-left "$(cat $S/hook.out)"; fi
fault_create after-gc no stale
fault_create before-ledger-rename no
fault_create after-journal yes
faults_end
