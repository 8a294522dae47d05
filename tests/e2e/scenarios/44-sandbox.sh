#!/bin/sh
# 44-sandbox: the hook runs confined (plugin/sandbox.h).  The real hook,
# started by crun, is caught waiting on the ledger lock (held here with
# util-linux flock) and its /proc status read: seccomp filter mode, one
# filter, no_new_privs; it then goes on and carves.  A control shows the
# kernel logs a denial of a filter with SECCOMP_FILTER_FLAG_LOG (the
# hook's has it), so "no denials of the hook" (checked here and by the
# fault scenarios) is a real observation.
# e2e-needs: flock
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b44
POD=/kubepods/pods
holder=
cleanup() {
	[ -z "$holder" ] || kill "$holder" 2>/dev/null || true
	ctr_cleanup_all
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"
mkdir -p $B

# ---- the hook runs confined ----------------------------------------------------
LOCK=/run/corecarve/lock
mkdir -p /run/corecarve
if ! command -v flock >/dev/null; then
	skip sandbox-status "no flock in the initramfs"
else
	# -o: the lock stays with flock itself, so killing it releases the lock.
	flock -o $LOCK sleep 60 &
	holder=$!
	wait_for 10 grep -q " FLOCK .* WRITE $holder " /proc/locks || true
	mk_bundle $B/sb sb '{class: latency, cpus: 1}' $POD/sb
	(if ctr_run_detached sb $B/sb >/dev/null 2>&1; then echo 0; else echo 1; fi >$B/sb.rc) &
	# A blocked flock shows as "N: -> FLOCK ADVISORY WRITE <pid> ...".
	if wait_for 60 grep -q -- '-> FLOCK' /proc/locks; then
		hp=$(awk '$2 == "->" && $3 == "FLOCK" { print $6; exit }' /proc/locks)
		check_match sandbox-waiter-is-the-hook "*corecarve*hook*createRuntime*" "$(tr '\0' ' ' </proc/"$hp"/cmdline)"
		check_eq sandbox-seccomp-filter 2 "$(awk '$1 == "Seccomp:" { print $2 }' /proc/"$hp"/status)"
		check_eq sandbox-one-filter 1 "$(awk '$1 == "Seccomp_filters:" { print $2 }' /proc/"$hp"/status)"
		check_eq sandbox-no-new-privs 1 "$(awk '$1 == "NoNewPrivs:" { print $2 }' /proc/"$hp"/status)"
	else
		fail sandbox-hook-waits "no hook waited on the ledger lock"
	fi
	child=$(cat /proc/"$holder"/task/"$holder"/children 2>/dev/null || true)
	# shellcheck disable=SC2086 # one pid or none
	kill "$holder" $child 2>/dev/null || true
	holder=
	wait_for 90 test -s $B/sb.rc || true
	check_eq sandbox-hook-went-on 0 "$(cat $B/sb.rc 2>/dev/null)"
	check_eq sandbox-carved "$(carve_field sb cpus)" "$(cg_read $POD/sb cpuset.cpus.effective)"
	check sandbox-deleted ctr_kill_delete sb
fi
# The kernel logs a denial of a filter with SECCOMP_FILTER_FLAG_LOG (the
# hook's has it): shown with crun's own seccomp on a container's mkdir, so
# "no denials" below is a real observation.
CC_HOOKS='' CC_CMD='mkdir /probe; echo "mkdir=$?"; exec sleep 1000'
mk_bundle $B/ctl ctl '' $POD/ctl
CC_HOOKS="createRuntime poststop" CC_CMD=
sed -i 's|"linux": {|"linux": { "seccomp": { "defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_LOG"], "syscalls": [ { "names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 } ] },|' $B/ctl/config.json
if ctr_run_detached ctl $B/ctl; then
	ctr_wait_output ctl '^mkdir=' || true
	check_eq control-mkdir-denied "mkdir=1" "$(grep '^mkdir=' $B/ctl/ctr.out)"
	check_match control-denial-logged "*type=1326*comm=\"mkdir\"*" "$(dmesg | grep 'type=1326' | grep 'comm="mkdir"' | head -n 1)"
	ctr_kill_delete ctl >/dev/null 2>&1 || true
else
	fail control-started "$CRUN_ERR"
fi

check_eq no-sandbox-denials "" "$(dmesg | grep 'type=1326' | grep 'comm="corecarve"' | head -n 3)"
