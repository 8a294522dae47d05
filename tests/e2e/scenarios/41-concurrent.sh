#!/bin/sh
# 41-concurrent: 32 containers started at once with real crun, each asking
# for one latency core, against one ledger.  Exactly as many start as fit
# (counted here from sysfs and the policy, not from corecarve), the others
# are refused for capacity, and no CPU is in two carves or two partitions.
# First, the hook is caught waiting on the ledger lock (held here) to show
# it runs confined: seccomp filter mode, no_new_privs (plugin/sandbox.h).
# e2e-needs: flock
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b41 S=/run/s41
# shellcheck source-path=SCRIPTDIR/.. source=faultlib.sh
. /e2e/faultlib.sh
POD=/kubepods/podc
N=32
holder=
cleanup() {
	[ -z "$holder" ] || kill "$holder" 2>/dev/null || true
	ctr_cleanup_all
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"

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
stamp sandbox

# ---- what fits, from sysfs and the policy ------------------------------------------
reserved=$(printf '%s\n' "$CC_HOOK_POLICY" | sed -n 's/^reserved: "\(.*\)"$/\1/p')
min_shared=$(printf '%s\n' "$CC_HOOK_POLICY" | sed -n 's/^minShared: //p')
free=$( (expand "$ONLINE"; expand "$reserved"; expand "$reserved") | sort -n | uniq -u | wc -l)
tpc=$(expand "$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)" | wc -l)
# smt: isolate: a carve of 1 costs a whole core; the pool keeps minShared.
fit=$(((free - min_shared) / tpc))
info "online $ONLINE, reserved $reserved, $free free CPUs, $tpc threads per core, minShared $min_shared: $fit carves fit"

# ---- 32 at once ----------------------------------------------------------------
# One bundle made by mk_bundle; the others share its rootfs (32 copies of
# busybox cost more than the race itself under TCG).
mk_bundle $B/c1 c1 '{class: latency, cpus: 1}' $POD/c1
i=2
while [ $i -le $N ]; do
	mkdir -p $B/c$i
	sed -e "s|/c1/|/c$i/|g" -e "s|/c1\"|/c$i\"|g" -e "s|\"c1\"|\"c$i\"|g" -e "s|CTR_ID=c1|CTR_ID=c$i|" \
		-e "s|\"path\": \"rootfs\"|\"path\": \"$B/c1/rootfs\"|" $B/c1/config.json >$B/c$i/config.json
	i=$((i + 1))
done
check_eq bundles-differ-by-id "$POD/c32" "$(sed -n 's/.*"cgroupsPath": "\(.*\)".*/\1/p' $B/c32/config.json)"
stamp bundles
i=1
while [ $i -le $N ]; do
	(if ctr_run_detached c$i $B/c$i >/dev/null 2>&1; then echo 0; else echo 1; fi >$B/c$i/rc) &
	i=$((i + 1))
done
wait
stamp started
placed=0 refused=0 other=''
i=1
while [ $i -le $N ]; do
	if [ "$(cat $B/c$i/rc)" = 0 ]; then
		placed=$((placed + 1))
	elif grep -q 'refused' $B/c$i/hooks.err 2>/dev/null; then
		refused=$((refused + 1))
		rm -f "$CC_CTR_DB/c$i"
	else
		other="$other c$i: $(cat $B/c$i/hooks.err $B/c$i/crun.err 2>/dev/null | head -n 2 | tr '\n' ' ')"
	fi
	i=$((i + 1))
done
check_eq started-exactly-what-fits "$fit" "$placed"
check_eq refused-for-capacity "$((N - fit))" "$refused"
check_eq no-other-failure "" "$other"

# No CPU in two carves, every carve in its container's partition and its
# task, no two partitions sharing a CPU; a carve for every started one.
all='' why='' n=0
carves $S/c || fail ledger-valid "$(cat $S/c.err)"
while read -r id cpus parked cg mode; do
	n=$((n + 1))
	set="$cpus,$parked"
	if [ -n "$all" ] && ! disjoint "$all" "$set"; then why="$why $id overlaps;"; fi
	all="${all:+$all,}$set"
	[ "$(cat $B/$id/rc 2>/dev/null)" = 0 ] || why="$why $id has a carve but did not start;"
	eff=$(cg_read "$cg" cpuset.cpus.effective)
	[ "$eff" = "$cpus" ] || why="$why $id runs on '$eff' ($mode);"
	[ "$(ctr_cpus "$id")" = "$eff" ] || why="$why $id's task is allowed '$(ctr_cpus "$id")';"
done <$S/c
check_eq carves-disjoint-and-applied "" "$why"
check_eq ledger-carves "$fit" "$n"
check whole-cores-not-reserved disjoint "$all" "$reserved"
# Remote partitions (6.12) take their CPUs out of the root's.
if cg_has_exclusive; then
	check not-in-the-root-partition disjoint "$(cg_read / cpuset.cpus.effective)" "$all"
fi

# ---- all gone ----------------------------------------------------------------------
i=1
while [ $i -le $N ]; do
	if [ "$(cat $B/c$i/rc)" = 0 ]; then
		(ctr_kill_delete c$i >/dev/null 2>&1 || echo "c$i: $(cat $B/c$i/delete.err)" >$B/c$i/delete.fail) &
	fi
	i=$((i + 1))
done
wait
stamp deleted
check_eq deleted "" "$(cat $B/c*/delete.fail 2>/dev/null)"
carves $S/c || fail ledger-valid-at-end "$(cat $S/c.err)"
check_eq ledger-empty "" "$(tr '\n' ' ' <$S/c)"
check_eq root-effective-restored "$ONLINE" "$(cg_read / cpuset.cpus.effective)"
if [ -e "$CGROOT/kubepods/cpuset.cpus.exclusive" ]; then
	check_eq kubepods-exclusive-released "" "$(cg_read /kubepods cpuset.cpus.exclusive)"
fi
check_eq no-sandbox-denials "" "$(dmesg | grep 'type=1326' | grep 'comm="corecarve"' | head -n 3)"
