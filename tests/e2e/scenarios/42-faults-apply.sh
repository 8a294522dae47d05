#!/bin/sh
# 42-faults-apply: createRuntime killed while it applies a journaled carve
# (see 40-faults and faultlib.sh): half-way through the cgroup writes (the
# ancestors' exclusive sets widened or the peers narrowed, the container's
# partition not made), after the cgroup writes, after journaling the IRQs
# it moves, and after its first IRQ write.  The next hook must undo all of
# it: the CPUs back with the peer, the IRQs back where they were.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
B=/run/b42 S=/run/s42
# shellcheck source-path=SCRIPTDIR/.. source=faultlib.sh
. /e2e/faultlib.sh
trap faults_cleanup EXIT

faults_setup
fault_create mid-cgroup-write yes
fault_create after-cgroup-write yes
fault_create after-irq-journal yes
fault_create mid-irq-write yes
faults_end
