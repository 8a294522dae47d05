#!/bin/sh
# 43-faults-release: the crash points around a carve's end (see 40-faults
# and faultlib.sh).
#  - a dead container's id coming back: the runtime makes a new cgroup at
#    the same path before the hook runs, and the dead carve, journaled
#    under that id, must not pass for the new container's;
#  - poststop killed before it undoes anything, and after it undid the
#    kernel side but before the ledger: the next hook finishes the job.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
B=/run/b43 S=/run/s43
# shellcheck source-path=SCRIPTDIR/.. source=faultlib.sh
. /e2e/faultlib.sh
trap faults_cleanup EXIT

faults_setup
CC_HOOK_ENV="CORECARVE_FAULT=after-cgroup-write" CC_HOOKS=createRuntime
mk_bundle $B/again again '{class: latency, cpus: 1}' $POD/again
CC_HOOK_ENV='' CC_HOOKS="createRuntime poststop"
if ctr_run_detached again $B/again; then fail again-first-killed "crun run succeeded"; else pass again-first-killed; fi
"$CC_CRUN" delete -f again >/dev/null 2>&1 || true
after_crash again again yes
mk_bundle $B/again again '{class: latency, cpus: 1}' $POD/again
if ctr_run_detached again $B/again; then pass again-started; else fail again-started "$CRUN_ERR"; fi
if carves $S/c; then
	check_match again-carved "?*" "$(held again $S/c)"
	check_eq again-partition-is-its-own "$(held again $S/c)" "$(cg_read $POD/again cpuset.cpus.effective)"
	consistent again $S/c
fi
check again-deleted ctr_kill_delete again
clean again-end
stamp again

fault_release before-release
fault_release before-release-commit

faults_end
