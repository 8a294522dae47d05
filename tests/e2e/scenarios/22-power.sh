#!/bin/sh
# 22-power: a class's power settings (plugin/effects/power.h) under real crun on a
# real kernel.  QEMU TCG exposes no cpufreq and no intel_uncore_frequency,
# so those settings take the probe-and-warn path: the container starts,
# the hook's stderr says what was left alone and why, nothing is recorded.
# The guest's cpuidle states are whatever its driver offers (logged): each
# state deeper than the class's bound that can be disabled is disabled on
# the carved CPU (not its parked sibling) and given back when the container
# goes.  A policy with power settings on a shared class is refused with one
# line and the ledger untouched; the audit finds nothing to report.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b22
POD=/kubepods/pods
CPUD=/sys/devices/system/cpu
trap ctr_cleanup_all EXIT
mkdir -p $B

# ---- what the guest exposes ---------------------------------------------------
states() { # states CPU: "name:latency:disable" of each idle state
	for s in "$CPUD/cpu$1"/cpuidle/state*; do
		[ -d "$s" ] || continue
		printf '%s:%s:%s ' "$(cat "$s/name")" "$(cat "$s/latency")" "$(cat "$s/disable" 2>/dev/null || echo -)"
	done
}
info "cpufreq: $(ls $CPUD/cpufreq 2>/dev/null | tr '\n' ' ')(none when empty)"
info "cpuidle driver: $(cat $CPUD/cpuidle/current_driver 2>/dev/null || echo absent); CPU 2: $(states 2)"
info "intel_uncore_frequency: $(ls $CPUD/intel_uncore_frequency 2>/dev/null | tr '\n' ' ')(none when empty)"

# The default hook policy with every power setting on `latency`; a bound of
# 0 us makes every state but polling a candidate, so a guest with any idle
# state beyond POLL is changed for real.  The carves here set irq: leave
# (power without IRQ steering), which latency must grant an annotation.
POWER_POLICY=$(printf '%s\n' "$CC_HOOK_POLICY" | grant latency 'cpus, memory, irq' | awk '
	{ print }
	/^  latency:$/ { in_lat = 1 }
	in_lat && /^    quota: drop$/ {
		print "    power:"
		print "      governor: performance"
		print "      energyPerformancePreference: performance"
		print "      cstates: shallow"
		print "      cstateMaxLatencyUs: 0"
		print "      uncore: fixed"
		in_lat = 0
	}')
write_policy "$POWER_POLICY"
check_match policy-has-power "*cstateMaxLatencyUs: 0*" "$(cat "$CC_POLICY")"
check_match policy-grants-irq "*annotationMaySet: \[cpus, memory, irq\]*" "$(cat "$CC_POLICY")"

# ---- a carve with every setting ------------------------------------------------
mk_bundle $B/p1 p1 '{class: latency, cpus: 1, irq: leave}' $POD/p1
check p1-started ctr_run_detached p1 $B/p1
cpus=$(carve_field p1 cpus)
parked=$(carve_field p1 parked)
check_match p1-carved '[0-9]*' "$cpus"
err=$(cat $B/p1/hooks.err 2>/dev/null || true)
info "hook stderr: $(_cc_oneline "$err")"

if [ -z "$(ls $CPUD/cpufreq 2>/dev/null)" ]; then
	check_match cpufreq-warned "*warning: power: cpufreq is not exposed for CPUs *$cpus*governor, energyPerformancePreference left as they are*" "$err"
else
	check_eq governor-set performance "$(cat "$CPUD/cpu$cpus/cpufreq/scaling_governor")"
fi
if [ ! -d $CPUD/intel_uncore_frequency ]; then
	check_match uncore-warned "*warning: power.uncore: intel_uncore_frequency is not exposed*" "$err"
fi

# Idle states of the carved CPU deeper than 0 us that were enabled: now
# disabled; the parked sibling's are untouched.
want=0
for s in "$CPUD/cpu$cpus"/cpuidle/state*; do
	[ -f "$s/disable" ] || continue
	[ "$(cat "$s/latency")" -gt 0 ] || continue
	want=$((want + 1))
	check_eq "idle-${s##*/}-disabled" 1 "$(cat "$s/disable")"
done
if [ -d "$CPUD/cpu$cpus/cpuidle" ] && [ "$(ls -d "$CPUD/cpu$cpus"/cpuidle/state* 2>/dev/null | wc -l)" -gt 0 ]; then
	for s in "$CPUD/cpu$parked"/cpuidle/state*; do
		[ -f "$s/disable" ] || continue
		check_eq "idle-parked-${s##*/}-untouched" 0 "$(cat "$s/disable")"
	done
else
	check_match cstates-warned "*warning: power.cstates: no cpuidle states on CPUs $cpus*" "$err"
fi
if [ $want -gt 0 ]; then
	check_match ledger-records-power "*\"power\"*\"kind\": \"cstate\"*" "$(cat $CC_LEDGER)"
	# Node records (plugin/ledger/noderec.h): the carve owns them with no share.
	check_match ledger-power-owner "*\"owners\": {\"p1\": \"\"}, \"path\": \"$CPUD/cpu$cpus/cpuidle/*" "$(cat $CC_LEDGER)"
else
	check_eq ledger-no-power-section "" "$(grep -o '"power"' $CC_LEDGER || true)"
fi
info "idle states disabled on CPU $cpus: $want"

# The audit has nothing to say about power.
a=$("$CC_BIN" audit --sample-ms 0 2>&1 || true)
check_eq audit-no-power-findings "" "$(printf '%s\n' "$a" | grep 'POWER_' || true)"

# Drift: a state set back by hand is found and repaired (where there is one).
if [ $want -gt 0 ]; then
	first=$(for s in "$CPUD/cpu$cpus"/cpuidle/state*; do
		[ -f "$s/disable" ] && [ "$(cat "$s/latency")" -gt 0 ] && { echo "$s"; break; }
	done)
	echo 0 >"$first/disable"
	a=$("$CC_BIN" audit --sample-ms 0 2>&1 || true)
	check_match audit-power-drift "*POWER_DRIFT*$first/disable*" "$a"
	"$CC_BIN" audit --sample-ms 0 --fix >$B/fix.out 2>&1 || true
	check_eq drift-repaired 1 "$(cat "$first/disable")"
fi

check p1-deleted ctr_kill_delete p1
for s in "$CPUD/cpu$cpus"/cpuidle/state*; do
	[ -f "$s/disable" ] || continue
	check_eq "idle-${s##*/}-restored" 0 "$(cat "$s/disable")"
done
check_eq ledger-power-gone "" "$(grep -o '"power"' $CC_LEDGER || true)"
info "after release, CPU $cpus: $(states "$cpus")"

# ---- power on a shared class: refused, nothing changed ---------------------------
BAD=$(printf '%s\n' "$CC_HOOK_POLICY" | awk '
	{ print }
	/^  background:$/ { in_bg = 1 }
	in_bg && /^    quota: keep$/ { print "    power:"; print "      governor: performance"; in_bg = 0 }')
write_policy "$BAD"
before=$(ledger_sum)
mk_bundle $B/p2 p2 '{class: latency, cpus: 1}' $POD/p2
rc=0
ctr_run_detached p2 $B/p2 || rc=$?
check_match p2-refused '[1-9]*' "$rc"
check_match p2-one-line "*classes.background.power: power settings need exclusive: true*" \
	"$(cat $B/p2/hooks.err 2>/dev/null; echo "$CRUN_ERR")"
check_eq p2-ledger-unchanged "$before" "$(ledger_sum)"
"$CC_CRUN" delete -f p2 >/dev/null 2>&1 || true
write_policy "$CC_HOOK_POLICY"
