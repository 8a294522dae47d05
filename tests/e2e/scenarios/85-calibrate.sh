#!/bin/sh
# 85-calibrate: `corecarve calibrate` on the emulated 2-socket SMT NUMA host
# (16 CPUs, adjacent siblings, NUMA 0-7 / 8-15).  It measures for real here,
# briefly (2 rounds of 50 ms), and the JSON's pairs must be the guest's
# relations: SMT siblings 0,1, two packages 0,8, no NUMA pair inside a
# package, one core class; an L3 pair where the guest's sysfs shows an L3
# shared by cores with separate L2s.  The ratios are not checked: under TCG
# the vCPUs are host threads and their timing says nothing of caches.
# (The JSON is flattened, spaces and all, before matching.)  Then doctor finds the baseline and re-measures against it; the baseline
# is removed again so later scenarios see the node without one.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh

BL=/var/lib/corecarve/baseline.json
cleanup() { rm -f $BL; }
trap cleanup EXIT
cleanup

# What the guest's caches say, for the L3 expectation.
c0=/sys/devices/system/cpu/cpu0/cache
l2=$(cat $c0/index2/shared_cpu_list 2>/dev/null || echo none)
l3=$(cat $c0/index3/shared_cpu_list 2>/dev/null || echo none)
info "cpu0 caches: L2 shared by $l2, L3 shared by $l3"

dry=$("$CC_BIN" calibrate --dry-run 2>&1) || true
printf '%s\n' "$dry" | while read -r l; do info "  $l"; done
check_match dry-run-smt '*smt      CPUs 0 and 1: SMT siblings of core 0*' "$dry"
check_match dry-run-package '*package  CPUs 0 and 8: packages 0 and 1*' "$dry"
check_match dry-run-nothing '*nothing was measured (--dry-run)*' "$dry"
check dry-run-wrote-nothing test ! -e $BL

rc=0
t0=$(date +%s)
out=$("$CC_BIN" calibrate --rounds 2 --ms 50 --json 2>/tmp/calib.err) || rc=$?
t1=$(date +%s)
info "calibrate: rc $rc in $((t1 - t0)) s; $(tr '\n' ' ' </tmp/calib.err)"
check_eq calibrate-exit 0 "$rc"
check baseline-written test -s $BL
flat=$(printf '%s' "$out" | tr -d ' \n\t')
# A fixed string in the flattened JSON (its brackets are no glob).
has() { printf '%s' "$flat" | grep -qF "$1"; }
check_match json-schema '*"schema_version":1,*' "$flat"
check_match json-method '*"method":{"rounds":2,"ms":50,*' "$flat"
check json-smt has '{"relation":"smt","cpus":[0,1],'
check json-package has '{"relation":"package","cpus":[0,8],'
check_match json-numa-skipped '*{"relation":"numa","reason":"nopackageholdstwoNUMAnodeswithusablecores"}*' "$flat"
check_match json-class-skipped '*{"relation":"class","reason":"onecoreclass"}*' "$flat"
if [ "$l3" != none ] && [ "$l3" != "$l2" ]; then
	check json-l3 has '{"relation":"l3","cpus":[0,2],'
else
	check_match json-l3-skipped '*{"relation":"l3","reason":*' "$flat"
fi
check_eq json-seven-relations 7 "$(printf '%s\n' "$out" | grep -c '"relation": ')"
check_match facts-smt-on '*"smt":"1",*' "$flat"
check_match facts-online '*"online":"0-15",*' "$flat"
check_eq same-as-file "$flat" "$(tr -d ' \n\t' <$BL)"

# doctor re-measures the baseline's pairs on the same CPUs.
drc=0
doc=$("$CC_BIN" doctor 2>&1) || drc=$?
bline=$(printf '%s\n' "$doc" | grep -E '^[a-z]+ +baseline ' | sed -E 's/ +/ /g')
info "doctor (rc $drc): $bline"
check_match doctor-baseline-line '* baseline *' "$bline"
check_match doctor-baseline-names-file "*$BL*" "$bline"

# A baseline from a node with SMT off: doctor says SMT is back on.
sed 's/"smt": "1"/"smt": "0"/' $BL >$BL.new && mv $BL.new $BL
doc=$("$CC_BIN" doctor 2>&1) || true
check_match doctor-smt-back-on '*warn *baseline*SMT was off at calibration and is on now*' \
	"$(printf '%s\n' "$doc" | grep -E '^[a-z]+ +baseline ')"
