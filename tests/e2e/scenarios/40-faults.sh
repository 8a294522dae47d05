#!/bin/sh
# 40-faults: createRuntime killed with SIGKILL (CORECARVE_FAULT) at each
# step of the cgroup and ledger work, under real crun.  After each crash
# the runtime refuses the container and removes its cgroup; the next hook
# must collect what the dead one left and leave the node consistent (see
# faultlib.sh): the ledger valid, no CPU owned twice, every carve's cgroup
# on exactly its CPUs, the dead carve's CPUs back with the peer, no CPU
# left in an ancestor's cpuset.cpus.exclusive or the parked partition, and
# with the last carve gone every IRQ as it was.  42-faults-late does the
# IRQ and poststop steps.
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
fault_create after-lock
# Something for gc to undo when the hook dies before writing the ledger: a
# carve whose container went without its poststop.
if hook_up stale && NOPOST=1 hook_down stale; then pass stale-left; else fail stale-left "$(cat $S/hook.out)"; fi
fault_create after-gc stale
fault_create before-ledger-rename
fault_create after-journal
fault_create mid-cgroup-write
fault_create after-cgroup-write
faults_end
