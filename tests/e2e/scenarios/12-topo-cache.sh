#!/bin/sh
# 12-topo-cache: the hook keeps the discovered topology in
# /run/corecarve/topology.cache (plugin/topo/topo_cache.h).  On a real kernel: the
# cache is written by the first hook and used by the next, and a CPU taken
# offline (hotplug) or brought back is seen by the very next hook — the
# carve matches what a fresh discovery (`corecarve plan`) decides.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

CACHE=/run/corecarve/topology.cache
CPU=/sys/devices/system/cpu
B=/run/b12
restore() {
	ctr_cleanup_all
	[ ! -w $CPU/cpu2/online ] || echo 1 >$CPU/cpu2/online 2>/dev/null || true
}
trap restore EXIT

# The cache's stamp line, %XX-escaped: "online=0-15%20" in it.
stamp_has() { sed -n 2p $CACHE | grep -q "$1"; }

write_policy "$CC_HOOK_POLICY"
rm -f $CACHE

# --- first hook: discovery, cache written; second: same decision ---------------
mk_bundle $B/a a '{class: latency, cpus: 1}' /kubepods/podc/a
if ctr_run_detached a $B/a; then pass a-started; else fail a-started "$CRUN_ERR"; fi
check cache-written test -s $CACHE
check cache-private sh -c "[ \"\$(stat -c %a $CACHE)\" = 600 ]"
check stamp-online-all stamp_has 'online=0-15%20'
check_eq a-cpus 2 "$(carve_field a cpus)"
check a-deleted ctr_kill_delete a
before=$(md5sum $CACHE | cut -d' ' -f1)
mk_bundle $B/a2 a2 '{class: latency, cpus: 1}' /kubepods/podc/a2
if ctr_run_detached a2 $B/a2; then pass a2-started; else fail a2-started "$CRUN_ERR"; fi
check_eq a2-cpus 2 "$(carve_field a2 cpus)"
check_eq cache-reused "$before" "$(md5sum $CACHE | cut -d' ' -f1)"
check a2-deleted ctr_kill_delete a2

# --- CPU 2 goes offline: the next hook sees it ---------------------------------
if [ ! -w $CPU/cpu2/online ]; then
	skip hotplug "$CPU/cpu2/online is not writable on $CC_KERNEL"
	exit 0
fi
echo 0 >$CPU/cpu2/online
check_eq offline-online-list "0-1,3-15" "$(cat $CPU/online)"
want=$(plan_field latency 1 cpus)
check_eq plan-without-cpu2 3 "$want"
mk_bundle $B/b b '{class: latency, cpus: 1}' /kubepods/podc/b
if ctr_run_detached b $B/b; then pass b-started; else fail b-started "$CRUN_ERR"; fi
check_eq b-cpus-as-discovered "$want" "$(carve_field b cpus)"
check_eq b-parked-none "" "$(carve_field b parked)"
check_eq b-effective "$want" "$(cg_read /kubepods/podc/b cpuset.cpus.effective)"
check stamp-online-without-2 stamp_has 'online=0-1,3-15%20'
check b-deleted ctr_kill_delete b

# --- and comes back ----------------------------------------------------------------
echo 1 >$CPU/cpu2/online
check_eq online-again "0-15" "$(cat $CPU/online)"
mk_bundle $B/c c '{class: latency, cpus: 1}' /kubepods/podc/c
if ctr_run_detached c $B/c; then pass c-started; else fail c-started "$CRUN_ERR"; fi
check_eq c-cpus 2 "$(carve_field c cpus)"
check_eq c-parked 3 "$(carve_field c parked)"
check stamp-online-all-again stamp_has 'online=0-15%20'
check c-deleted ctr_kill_delete c
check_eq ledger-empty "" "$(carve_field c cpus)$(carve_field b cpus)$(carve_field a cpus)"
check_eq root-effective-restored "0-15" "$(cg_read / cpuset.cpus.effective)"
