#!/bin/sh
# 20-irq: IRQ steering on a real kernel.  The guest's virtio-net IRQs are
# movable; virtio-blk's four queue IRQs are kernel-managed and refuse
# affinity writes (EIO on 6.1, EPERM on 6.12; see 02-irq-facts), like NVMe
# and multi-queue NIC queues on real hosts.
#  - a steer-away carve moves every movable IRQ and default_smp_affinity off
#    its CPUs (parked siblings included); managed ones are reported, the
#    container still starts;
#  - two overlapping carves: the originals are recorded once, releasing one
#    does not bring IRQs back onto the other's CPUs, releasing the last
#    gives every IRQ its original affinity back;
#  - irqbalance's environment file follows the union and comes back byte
#    for byte;
#  - `corecarve irq status` counts interrupts on carved CPUs over a sample
#    window, and `corecarve irq reconcile` catches an IRQ put back on a
#    carved CPU (as a driver that resets its vectors does);
#  - an annotation that sets irq on a class that does not grant it
#    (annotationMaySet) is refused with nothing moved;
#  - a movable IRQ that cannot be written refuses the container with
#    everything put back, and a hook killed half-way through the IRQ writes
#    is cleaned up by the next hook.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b20
S=/run/s20
IB=/etc/default/irqbalance
mkdir -p $S
cleanup() {
	ctr_cleanup_all
	[ -z "${BOUND:-}" ] || umount "$BOUND" 2>/dev/null || true
	rm -f $IB
	rmdir "$(dirname $IB)" 2>/dev/null || true
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"

# ---- helpers -----------------------------------------------------------------

# affinities: "IRQ LIST" for every IRQ (one grep: forks are slow under TCG).
affinities() {
	grep -H . /proc/irq/[0-9]*/smp_affinity_list | sed 's|^/proc/irq/\([0-9]*\)/smp_affinity_list:|\1 |' | sort -n
}
aff() { cat "/proc/irq/$1/smp_affinity_list"; }
# irq_of NAME: the IRQ whose handler is NAME.
irq_of() { awk -v n="$1" '$NF == n { sub(":", "", $1); print $1 }' /proc/interrupts; }
# ranges: numbers (one per line) as a cpu list.
ranges() {
	sort -n | awk 'NR == 1 { a = b = $1; next }
		$1 == b + 1 { b = $1; next }
		{ printf "%s%s", s, (a == b ? a : a "-" b); s = ","; a = b = $1 }
		END { if (NR) printf "%s%s", s, (a == b ? a : a "-" b); print "" }'
}
# minus A B: the CPUs of A not in B.
minus() { (expand "$1"; expand "$2"; expand "$2") | sort -n | uniq -u | ranges; }
# default_list: /proc/irq/default_smp_affinity (a hex mask) as a cpu list.
default_list() {
	_v=$((0x$(tr -d , </proc/irq/default_smp_affinity)))
	_i=0
	while [ $_i -lt 64 ]; do
		[ $(((_v >> _i) & 1)) = 0 ] || echo $_i
		_i=$((_i + 1))
	done | ranges
}
# snapshot FILE: every IRQ's affinity and the default, one per line.
snapshot() {
	{
		echo "default $(cat /proc/irq/default_smp_affinity)"
		affinities
	} >"$1"
}
# status_line IRQ: its line of the last `corecarve irq status` (movable_off
# takes one).
status_line() { awk -v i="$1" '$1 == i' $S/status; }
# on_carved IRQ MS: interrupts IRQ raised on carved CPUs during MS, while
# the guest sends ARP requests and pings to slirp's gateway (each reply is
# an RX interrupt of virtio-net).
on_carved() {
	(arping -c 40 -w 3 -I eth0 10.0.2.2 >/dev/null 2>&1 &)
	(ping -c 40 -i 0.05 -W 1 10.0.2.2 >/dev/null 2>&1 &)
	"$CC_BIN" irq status --json --sample-ms "$2" | awk -v i="$1" '
		/^      "irq": / { v = $2; gsub(/[^0-9]/, "", v); cur = v }
		/^      "carved_total": / && cur == i { v = $2; gsub(/[^0-9]/, "", v); print v }'
}
# movable_off LIST: every IRQ whose affinity meets LIST is one the kernel
# refused (status says "unmovable (E...)"); prints the offenders.
movable_off() {
	"$CC_BIN" irq status --sample-ms 0 >$S/status
	affinities | awk -v set="$1" -v st=$S/status '
		function mark(list, arr,   n, p, i, r, a, b) {
			n = split(list, p, ",")
			for (i = 1; i <= n; i++) {
				if (split(p[i], r, "-") == 2) { a = r[1] + 0; b = r[2] + 0 } else { a = b = p[i] + 0 }
				for (; a <= b; a++) arr[a] = 1
			}
		}
		BEGIN {
			mark(set, carve)
			while ((getline line < st) > 0)
				if (line ~ /unmovable \(E/) { split(line, f, " "); refused[f[1]] = 1 }
		}
		{
			split("", mine); mark($2, mine); hit = 0
			for (c in mine) if (c in carve) hit = 1
			if (hit && !($1 in refused)) printf "%s(%s) ", $1, $2
		}'
}
t0=$(date +%s)
stamp() { info "t+$(($(date +%s) - t0))s: $*"; }

net=$(basename "$(readlink -f /sys/class/net/eth0/device)")
blk=$(basename "$(readlink -f /sys/block/vda/device)")
NIN=$(irq_of "$net-input.0")
NOUT=$(irq_of "$net-output.0")
NCFG=$(irq_of "$net-config")
case $CC_KERNEL in 6.1) refusal=EIO ;; *) refusal=EPERM ;; esac
snapshot $S/orig
orig_in=$(aff "$NIN")
orig_default=$(default_list)
info "net $net: config $NCFG input $NIN output $NOUT; default $orig_default; blk $blk queues: $(for q in 0 1 2 3; do printf '%s=%s ' "$(irq_of "$blk-req.$q")" "$(aff "$(irq_of "$blk-req.$q")")"; done)"

# irqbalance's environment file as Debian ships it (every variable
# commented out), plus one setting of the operator's own.
mkdir -p "$(dirname $IB)"
cat >$IB <<'EOF'
# irqbalance is a daemon process that distributes interrupts across
# CPUs on SMP systems.
#IRQBALANCE_ONESHOT=
#IRQBALANCE_BANNED_CPUS=
#IRQBALANCE_BANNED_CPULIST=
IRQBALANCE_ARGS="--journal"
EOF
cp $IB $S/irqbalance.orig

stamp start
# ---- a pod may not ask for what its class does not grant -----------------------
# throughput leaves IRQs alone and, like every class of the hook policy,
# lets an annotation set only cpus and memory (annotationMaySet's
# default): irq: steer-away from a pod is refused before anything moves.
mk_bundle $B/c0 c0 '{class: throughput, cpus: 2, irq: steer-away}' /kubepods/pod0/c0
if ctr_run_detached c0 $B/c0; then
	fail c0-refused "crun run succeeded"
else
	check_match c0-refusal-message '*annotation corecarve.io/placement: irq: class "throughput" does not let an annotation set irq (policy classes.throughput.annotationMaySet); remove irq from the annotation or add it there*' \
		"$(cat $B/c0/hooks.err $B/c0/crun.err 2>/dev/null)"
fi
snapshot $S/after-c0
check_eq c0-no-irq-moved "$(cat $S/orig)" "$(cat $S/after-c0)"
check_eq c0-irqbalance-untouched "$(cat $S/irqbalance.orig)" "$(cat $IB)"
check_eq c0-no-carve "" "$(carve_field c0 cpus)"
ctr_kill_delete c0 >/dev/null 2>&1 || true

# ---- one steer-away carve ------------------------------------------------------
mk_bundle $B/c1 c1 '{class: latency, cpus: 2}' /kubepods/pod1/c1
if ctr_run_detached c1 $B/c1; then pass c1-started-despite-managed-irqs; else fail c1-started-despite-managed-irqs "$CRUN_ERR"; fi
c1set="$(carve_field c1 cpus),$(carve_field c1 parked)"
c1set=$(echo "$c1set" | tr ',' '\n' | while read -r l; do expand "$l"; done | ranges)
info "c1 carve: $c1set"
# Everything below compares against the carves: without them it would
# check nothing.
[ -n "$c1set" ] || { fail c1-carved "no carve for c1"; exit 1; }
check_eq c1-movable-irqs-off-carve "" "$(movable_off "$c1set")"
check c1-net-input-off disjoint "$(aff "$NIN")" "$c1set"
check c1-net-output-off disjoint "$(aff "$NOUT")" "$c1set"
check c1-net-config-off disjoint "$(aff "$NCFG")" "$c1set"
check_eq c1-net-input-is-orig-minus-carve "$(minus "$orig_in" "$c1set")" "$(aff "$NIN")"
check_eq c1-default-off "$(minus "$orig_default" "$c1set")" "$(default_list)"
check_match c1-input-recorded "*steered (was $orig_in)*" "$(status_line "$NIN")"
# The blk queues whose kernel-spread affinity meets the carve are refused,
# recorded and reported.
managed=0
for q in 0 1 2 3; do
	i=$(irq_of "$blk-req.$q")
	disjoint "$(aff "$i")" "$c1set" && continue
	managed=$((managed + 1))
	check_match c1-blk-req$q-reported "*unmovable ($refusal)*" "$(status_line "$i")"
done
check_match c1-some-blk-queue-meets-carve '[1-9]*' "$managed"
check_match c1-ledger-irq-section '*"irq"*' "$(cat "$CC_LEDGER")"
check_eq c1-irqbalance-list "$c1set" "$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' $IB)"
check_match c1-irqbalance-mask '0000*' "$(sed -n 's/^IRQBALANCE_BANNED_CPUS=//p' $IB)"
check c1-irqbalance-comments-kept grep -qx '#IRQBALANCE_BANNED_CPULIST=' $IB

stamp c1
# ---- a second, overlapping in time ------------------------------------------------
mk_bundle $B/c2 c2 '{class: latency, cpus: 2}' /kubepods/pod2/c2
if ctr_run_detached c2 $B/c2; then pass c2-started; else fail c2-started "$CRUN_ERR"; fi
c2set=$(for l in $(carve_field c2 cpus | tr ',' ' ') $(carve_field c2 parked | tr ',' ' '); do expand "$l"; done | ranges)
both=$( (expand "$c1set"; expand "$c2set") | ranges)
info "c2 carve: $c2set; union $both"
[ -n "$c2set" ] || { fail c2-carved "no carve for c2"; exit 1; }
check_eq c2-movable-irqs-off-union "" "$(movable_off "$both")"
check_eq c2-net-input-is-orig-minus-union "$(minus "$orig_in" "$both")" "$(aff "$NIN")"
check_eq c2-default-off-union "$(minus "$orig_default" "$both")" "$(default_list)"
check_match c2-original-recorded-once "*steered (was $orig_in)*" "$(status_line "$NIN")"
check_eq c2-irqbalance-union "$both" "$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' $IB)"

stamp c2
# ---- measured: interrupts on carved CPUs, and reconcile ---------------------------
ip link set eth0 up 2>/dev/null || true
ip addr add 10.0.2.15/24 dev eth0 2>/dev/null || true
# A driver resetting its vectors (or an operator) puts the RX IRQ back on
# a carved CPU: what status shows, what reconcile fixes.
hot=$(expand "$c1set" | head -n 1)
echo "$hot" >"/proc/irq/$NIN/smp_affinity_list"
n=$(on_carved "$NIN" 1500)
info "RX IRQ $NIN on CPU $hot: $n interrupt(s) on carved CPUs in 1.5 s"
check_match status-counts-interrupts-on-carved-cpu '[1-9]*' "$n"
out=$("$CC_BIN" irq reconcile 2>&1) && pass reconcile-ran || fail reconcile-ran "$out"
info "reconcile: $(echo "$out" | tr '\n' ' ')"
check_match reconcile-moved-one "irq: 1 moved*" "$out"
check reconcile-input-off-union disjoint "$(aff "$NIN")" "$both"
n=$(on_carved "$NIN" 1500)
check_eq no-rx-interrupts-on-carved-cpus 0 "$n"
out=$("$CC_BIN" irq reconcile 2>&1)
check_match reconcile-idempotent "irq: 0 moved*" "$out"

stamp measured
# ---- release the first: nothing comes back onto the second ------------------------
check c1-deleted ctr_kill_delete c1
check_eq c1-poststop-quiet "" "$(cat $B/c1/hooks.err 2>/dev/null)"
check_eq c1-gone-movable-off-c2 "" "$(movable_off "$c2set")"
check_eq c1-gone-net-input-orig-minus-c2 "$(minus "$orig_in" "$c2set")" "$(aff "$NIN")"
check_eq c1-gone-default-orig-minus-c2 "$(minus "$orig_default" "$c2set")" "$(default_list)"
check_eq c1-gone-irqbalance-c2-only "$c2set" "$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' $IB)"

stamp c1-released
# ---- a movable IRQ that cannot be written: refused, everything put back ------------
# A real kernel refusal: /sys/devices/system/cpu/online (read only, it
# reads "0-15") bound over one IRQ's smp_affinity_list.  Its write fails
# with EACCES, which is not a managed-IRQ refusal.
snapshot $S/before-c3
cp "$CC_LEDGER" $S/ledger-before-c3
ibsum=$(md5sum $IB | cut -d' ' -f1)
root_eff=$(cg_read / cpuset.cpus.effective)
BOUND=/proc/irq/$NOUT/smp_affinity_list
mount --bind /sys/devices/system/cpu/online "$BOUND"
mk_bundle $B/c3 c3 '{class: latency, cpus: 2}' /kubepods/pod3/c3
if ctr_run_detached c3 $B/c3; then
	fail c3-refused "crun run succeeded"
else
	msg=$(cat $B/c3/hooks.err $B/c3/crun.err 2>/dev/null)
	check_match c3-refused-message "*corecarve: *steering IRQs off CPUs*IRQ $NOUT*" "$msg"
fi
umount "$BOUND"
BOUND=
snapshot $S/after-c3
check_eq c3-irqs-put-back "$(cat $S/before-c3)" "$(cat $S/after-c3)"
# The same ledger, but for the header's record counter (`next` hands out
# each record's sequence number and never goes back: the refused start's
# records had theirs) and the digest that covers it.
ledger_sans_counter() {
	sed -e '1s/"next": [0-9]*/"next": N/g' -e '1s/"digest": "[^"]*"/"digest": D/' "$1"
}
ledger_sans_counter $S/ledger-before-c3 >$S/ledger-before-c3.n
ledger_sans_counter "$CC_LEDGER" >$S/ledger-after-c3.n
if cmp -s $S/ledger-before-c3.n $S/ledger-after-c3.n; then
	pass c3-ledger-unchanged
else
	fail c3-ledger-unchanged "$(diff $S/ledger-before-c3.n $S/ledger-after-c3.n | cut -c1-600 | head -n 12)"
fi
check_eq c3-no-carve "" "$(carve_field c3 cpus)"
check_eq c3-irqbalance-unchanged "$ibsum" "$(md5sum $IB | cut -d' ' -f1)"
check_eq c3-cgroup-released "$root_eff" "$(cg_read / cpuset.cpus.effective)"

stamp c3
# ---- a hook killed after its first IRQ write ---------------------------------------
CC_HOOK_ENV="CORECARVE_FAULT=mid-irq-write"
mk_bundle $B/c4 c4 '{class: latency, cpus: 2}' /kubepods/pod4/c4
CC_HOOK_ENV=
if ctr_run_detached c4 $B/c4; then fail c4-killed-hook-refused "crun run succeeded"; else pass c4-killed-hook-refused; fi
info "after the killed hook: default $(default_list), carves: $(sed -n 's/.*"id": "\(.*\)".*/\1/p' "$CC_LEDGER" | tr '\n' ' ')"
# The next hook's gc releases the dead carve: its IRQ journal says what
# was being written.
mk_bundle $B/c5 c5 '{class: latency, cpus: 2}' /kubepods/pod5/c5
if ctr_run_detached c5 $B/c5; then pass c5-started; else fail c5-started "$CRUN_ERR"; fi
check_eq c4-collected "" "$(carve_field c4 cpus)"
c5set=$(for l in $(carve_field c5 cpus | tr ',' ' ') $(carve_field c5 parked | tr ',' ' '); do expand "$l"; done | ranges)
[ -n "$c5set" ] || { fail c5-carved "no carve for c5"; exit 1; }
both=$( (expand "$c5set"; expand "$c2set") | ranges)
check_eq c5-movable-irqs-off-union "" "$(movable_off "$both")"
check_match c5-original-still-recorded "*steered (was $orig_in)*" "$(status_line "$NIN")"

stamp c5
# ---- the last carves go: everything as it was ---------------------------------------
check c5-deleted ctr_kill_delete c5
check c2-deleted ctr_kill_delete c2
snapshot $S/end
check_eq irqs-restored "$(cat $S/orig)" "$(cat $S/end)"
check_eq irqbalance-file-restored "$(cat $S/irqbalance.orig)" "$(cat $IB)"
check_eq ledger-no-carves "" "$(carve_field c2 cpus)$(carve_field c5 cpus)"
check_eq ledger-no-irq-section 0 "$(grep -c '"irq"' "$CC_LEDGER" || true)"
check_match status-clean "*steer-away CPUs: none*" "$("$CC_BIN" irq status --sample-ms 0 | head -n 1)"
stamp end
