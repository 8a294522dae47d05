#!/bin/sh
# 42-faults-apply: createRuntime killed while it applies a journaled carve
# (see 40-faults and faultlib.sh): half-way through the cgroup writes (the
# ancestors' exclusive sets widened or the peers narrowed, the container's
# partition not made), after the cgroup writes, right after the journal
# (the IRQs it moves among its records, nothing written: one journal for
# every effect), and after its first IRQ write.  The next hook must undo all of
# it: the CPUs back with the peer, the IRQs back where they were.  Last, a
# crash repaired by `corecarve audit --fix` instead of a next hook: the
# audit names the dead carve (STALE_RECORD), --fix gives it back.
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
fault_create after-journal yes
fault_create mid-irq-write yes

# ---- corecarve audit --fix instead of a next hook -------------------------------
CC_HOOK_ENV="CORECARVE_FAULT=after-cgroup-write" CC_HOOKS=createRuntime
mk_bundle $B/fx fx '{class: latency, cpus: 1}' $POD/fx
CC_HOOK_ENV='' CC_HOOKS="createRuntime poststop"
if ctr_run_detached fx $B/fx; then fail fx-killed "crun run succeeded"; else pass fx-killed; fi
"$CC_CRUN" delete -f fx >/dev/null 2>&1 || true
after_crash fx fx yes
out=$("$CC_BIN" audit --sample-ms 0 2>&1) && rc=0 || rc=$?
check_eq fx-audit-finds 1 "$rc"
check_match fx-audit-stale-record "*STALE_RECORD*fx*" "$out"
out=$("$CC_BIN" audit --fix --sample-ms 0 2>&1) && rc=0 || rc=$?
check_eq fx-audit-fixed 0 "$rc"
[ "$rc" = 0 ] || info "audit --fix: $(_cc_oneline "$out")"
clean fx-fixed
stamp audit-fix
faults_end
