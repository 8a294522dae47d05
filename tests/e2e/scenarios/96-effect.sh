#!/bin/sh
# e2e-only: bench
# e2e-needs: effect-probe
# 96-effect: the isolation a carve buys (issue #20 §1, `make bench-effect`,
# docs/performance.md "The isolation a carve buys").  A probe container
# (bench/effect-probe.c: timer wakeup latency the cyclictest way, a CPU
# loop, a memory stream over a buffer larger than L2) runs four ways,
# interleaved, each round in its own shuffled order:
#   idle      the neighbours frozen (cgroup.freeze), the probe a plain
#             container with a 1-CPU limit (cpu.max 100000/100000): the
#             baseline
#   plain     the neighbours running, the same plain container: what a
#             user gets without corecarve
#   latency   the neighbours running, the probe carved {class: latency,
#             cpus: 1}: a remote partition, its SMT sibling parked, IRQs
#             steered away (the class defaults)
#   isolated  the same with {class: isolated, cpus: 1}: an isolated
#             partition (no load balancing onto it)
# The neighbours: a CPU hog pinned to every online CPU (the reserved ones
# too: an uncarved container runs on them as well, and a hog-free CPU would
# be a refuge only the plain arm had), so also to the carve's SMT sibling,
# which the carve parks, displacing that hog; and one memory streamer per
# NUMA node over that node's CPUs.  A carve takes its CPU from the pinned
# hogs (their cpuset falls back to their parent's).  They are
# plain containers with no hook, started once and frozen/thawed between
# arms, so the node is the same in every arm but for the probe.  Every
# container (neighbours and probe) starts with the neighbours frozen and
# waits for a file (/go in its rootfs) before it works: a crun start among
# 18 busy vCPUs took minutes under TCG.  A probe run: start it (the hook
# carves), read where the carve sits, thaw (not for idle), 1 s, let it go,
# freeze once it printed, then crun's teardown (the hook's release).
#
# Runs in the e2e guest (only with CC_BENCH=1: tests/e2e/run.sh puts
# cc.bench=1 on the command line) and natively (bench/effect.sh sets
# CC_EFFECT_NATIVE=1 and the paths below), root on a cgroup-v2 host.
# Prints "BENCH effect ..." lines that bench/effect.sh turns into a table;
# checks only that what it measured ran as said (the carve on its own CPU,
# the sibling parked): there is no timed assertion.
#
# Knobs: rounds from cc.bench_pairs= (guest) or CC_EFFECT_ROUNDS (native);
# CC_EFFECT_PROBE_ARGS, the probe's options (default 2000 wakeups 1 ms
# apart, a 1 s CPU loop, a 1 s stream over 32 MiB).
set -eu
# The probe binary and its /go file go into each container's own rootfs.
export CC_OWN_ROOTFS=1
CC_E2E_DIR=${CC_E2E_DIR:-/e2e}
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$CC_E2E_DIR/lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. "$CC_E2E_DIR/hooklib.sh"

NATIVE=${CC_EFFECT_NATIVE:-0}
B=${CC_EFFECT_DIR:-/run/b96}
NB=kubepods/podn96
cleanup() {
	[ ! -e "$CGROOT/$NB/cgroup.freeze" ] || echo 0 >"$CGROOT/$NB/cgroup.freeze" 2>/dev/null || true
	ctr_cleanup_all
	cg_rmtree "$NB" >/dev/null 2>&1 || true
	cg_rmtree kubepods/podp96 >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [ "$NATIVE" = 1 ]; then
	rounds=${CC_EFFECT_ROUNDS:-5}
	mode=native
else
	if [ "$(karg cc.bench)" != 1 ]; then
		fail bench "in the initramfs without cc.bench=1 on the kernel command line: run it with CC_BENCH=1 tests/e2e/run.sh (make bench-effect)"
		exit 0
	fi
	rounds=$(karg cc.bench_pairs)
	rounds=${rounds:-5}
	mode=guest
fi
PROBE=${CC_EFFECT_PROBE:-$CC_E2E_DIR/bin/effect-probe}
[ -x "$PROBE" ] || {
	fail probe "no effect-probe at $PROBE: build it (make bench-build) and run through make bench-effect"
	exit 0
}
PROBE_ARGS=${CC_EFFECT_PROBE_ARGS:---wakeups 2000 --interval-us 1000 --cpu-ms 1000 --stream-ms 1000 --buf-mb 32}

# cpu list helpers: expand/norm/minus come from hooklib.sh.
ncpu_list() { expand "$1" | wc -l; }
online=$(norm "$(cat /sys/devices/system/cpu/online)")
if [ "$NATIVE" = 1 ]; then
	# Reserve core 0 (all its threads) for the system, as the guest's
	# policy reserves core 0 of each package.
	reserved=$(norm "$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)")
	policy=$(printf '%s\n' "$CC_HOOK_POLICY" | sed "s/^reserved: .*/reserved: \"$reserved\"/")
else
	reserved=$(printf '%s\n' "$CC_HOOK_POLICY" | sed -n 's/^reserved: "\(.*\)"/\1/p')
	policy=$CC_HOOK_POLICY
fi
write_policy "$policy"
shared=$(minus "$online" "$reserved")
if [ "$(ncpu_list "$shared")" -lt 3 ]; then
	fail shape "only '$shared' outside the reserved '$reserved' of online '$online': the bench needs at least 3 (a carve, its sibling, a neighbour): run it on a host with >= 4 CPUs"
	exit 0
fi
smt=$(cat /sys/devices/system/cpu/smt/active 2>/dev/null || echo 0)
info "mode $mode, kernel $(uname -r), online $online, reserved $reserved, shared $shared, smt active $smt, $rounds rounds, probe $PROBE_ARGS"

# --- the neighbours ------------------------------------------------------------
mkdir -p "$B"
start_neighbour() { # ID CPUS MODE
	CC_HOOKS='' CC_CPUSET_CPUS=$2 CC_CMD="exec /bin/effect-probe $3 --wait-file /go" mk_bundle "$B/$1" "$1" '' "/$NB/$1"
	cp "$PROBE" "$B/$1/rootfs/bin/effect-probe"
	ctr_run_detached "$1" "$B/$1" || fail "neighbour-$1" "$CRUN_ERR"
}
nh=0
for c in $(expand "$online"); do
	start_neighbour "hog$c" "$c" hog
	nh=$((nh + 1))
done
ns=0
for n in /sys/devices/system/node/node[0-9]*; do
	[ -e "$n/cpulist" ] || continue
	cpus=$(norm "$(cat "$n/cpulist")")
	start_neighbour "stream${n##*node}" "$cpus" "stream --buf-mb 64"
	ns=$((ns + 1))
done
freeze() { # 1 or 0
	echo "$1" >"$CGROOT/$NB/cgroup.freeze"
	wait_for 20 grep -qx "frozen $1" "$CGROOT/$NB/cgroup.events"
}
running=0
for f in "$CC_CTR_DB"/*; do [ "$(ctr_status "$(basename "$f")")" != running ] || running=$((running + 1)); done
check_eq neighbours-running "$((nh + ns))" "$running"
# They were started waiting (--wait-file): let them go, then hold them
# frozen until an arm wants them.
for f in "$CC_CTR_DB"/*; do touch "$(ctr_bundle "$(basename "$f")")/rootfs/go"; done
freeze 1 || fail freeze "$(cat "$CGROOT/$NB/cgroup.events")"
info "$nh CPU hogs (one pinned to each online CPU) and $ns memory streamers (64 MiB, one per NUMA node) in /$NB"


# --- the probe arms ------------------------------------------------------------
arms="idle plain latency isolated"
for a in $arms; do
	ann=
	hooks=
	case $a in
	latency) ann='{class: latency, cpus: 1}' hooks='createRuntime poststop' ;;
	isolated) ann='{class: isolated, cpus: 1}' hooks='createRuntime poststop' ;;
	esac
	# shellcheck disable=SC2086 # PROBE_ARGS is a word list
	CC_HOOKS=$hooks CC_CMD="exec /bin/effect-probe probe $PROBE_ARGS --wait-file /go" \
		mk_bundle "$B/$a" "$a" "$ann" "/kubepods/podp96/$a" 100000 100000
	cp "$PROBE" "$B/$a/rootfs/bin/effect-probe"
done
SETTLE=${CC_EFFECT_SETTLE:-1}
: >"$B/results"
: >"$B/carves"
fails=0
i=0
while [ $i -lt "$rounds" ]; do
	# shellcheck disable=SC2046,SC2086 # a word list
	set -- $(printf '%s\n' $arms | awk -v seed="$i" 'BEGIN { srand(seed + 7) } { print rand(), $0 }' | sort -n | cut -d' ' -f2)
	for a in "$@"; do
		out=$B/$a/out.$i
		rm -f "$B/$a/rootfs/go"
		timeout -s KILL 600 crun run --bundle "$B/$a" "e-$a-$i" </dev/null >"$out" 2>"$B/$a/run.err" &
		cpid=$!
		# The probe waits for /go in its rootfs: crun and the hook start it
		# with the neighbours frozen (under TCG a start among them takes
		# minutes), and it measures only once they run.
		cg=kubepods/podp96/$a
		# The probe says WAITING once it runs: past crun's start and the
		# createRuntime hook, so the carve is in place.
		wait_for 120 grep -q '^WAITING' "$out" || info "probe $a round $i: not started after 120 s"
		case $a in
		latency | isolated)
			# Where the carve is, what is parked, and where the hog
			# pinned to the carve's sibling now runs.
			mine=$(cg_read "$cg" cpuset.cpus.effective)
			sib=
			[ -z "$mine" ] || sib=$(minus "$(norm "$(cat "/sys/devices/system/cpu/cpu${mine%%[-,]*}/topology/thread_siblings_list")")" "$mine")
			where=
			[ -z "$sib" ] || where=$(cg_read "$NB/hog$sib" cpuset.cpus.effective 2>/dev/null || true)
			parked=$(cg_read corecarve.parked cpuset.cpus.effective 2>/dev/null || true)
			echo "$a $i carve=$mine partition=$(cg_read "$cg" cpuset.cpus.partition | tr ' ' _) sibling=${sib:-none} parked=${parked:-none} sibling_hog_on=${where:-none}" >>"$B/carves"
			;;
		esac
		[ "$a" = idle ] || freeze 0 || fail "thaw-$i" "$(cat "$CGROOT/$NB/cgroup.events")"
		sleep "$SETTLE"
		touch "$B/$a/rootfs/go"
		# Polled once a second (a process start each), in every arm alike.
		w=0
		while [ $w -lt 300 ] && ! grep -q '^PROBE ' "$out" && kill -0 $cpid 2>/dev/null; do
			sleep 1
			w=$((w + 1))
		done
		freeze 1 || fail "freeze-$i" "$(cat "$CGROOT/$NB/cgroup.events")"
		if ! wait $cpid; then
			fails=$((fails + 1))
			info "crun run $a round $i failed: $(_cc_oneline "$(cat "$B/$a/run.err" "$B/$a/hooks.err" 2>/dev/null)")"
		fi
		line=$(grep '^PROBE ' "$out" || true)
		if [ -z "$line" ]; then
			fails=$((fails + 1))
			info "probe $a round $i printed no PROBE line: $(_cc_oneline "$(cat "$out" "$B/$a/run.err" 2>/dev/null)")"
		else
			echo "$a $i $line" >>"$B/results"
		fi
	done
	i=$((i + 1))
done
check_eq probe-runs-ok 0 "$fails"
if [ -s "$B/carves" ]; then
	while IFS= read -r l; do info "during the run: $l"; done <"$B/carves"
fi
# Each carved run sat on one CPU of its own: not reserved, its sibling
# parked (where the host has SMT), and the hog pinned to that sibling
# moved off it.
bad=
have_excl=0
! cg_has_exclusive || have_excl=1
while read -r a r c _p s pk h; do
	carve=${c#carve=} sib=${s#sibling=} park=${pk#parked=} hog=${h#sibling_hog_on=}
	case $carve in
	'' | *[!0-9]*) bad="$bad $a/$r: carve on '$carve', not one CPU;"; continue ;;
	esac
	! expand "$reserved" | grep -qx "$carve" || bad="$bad $a/$r: carve on reserved CPU $carve;"
	[ "$smt" = 1 ] || continue
	if [ "$sib" = none ]; then bad="$bad $a/$r: no SMT sibling of $carve;"; continue; fi
	if [ "$have_excl" = 1 ] && ! { [ "$park" != none ] && expand "$park" | grep -qx "$sib"; }; then
		bad="$bad $a/$r: sibling $sib not in the parked partition ($park);"
	fi
	[ "$hog" = none ] || ! expand "$hog" | grep -qx "$sib" || bad="$bad $a/$r: the hog pinned to $sib still runs there;"
done <"$B/carves"
check_eq carves-own-core "" "$bad"
check_eq carves-seen "$((2 * rounds))" "$(wc -l <"$B/carves")"
check_eq ledger-empty-at-end 0 "$(if [ -e "$CC_LEDGER" ]; then grep -c '"id":' "$CC_LEDGER" || true; else echo 0; fi)"

# --- figures -------------------------------------------------------------------
# field NAME: the value of NAME=... on a results line ($0).
# median over rounds of each metric per arm, and the median over rounds
# of each metric divided by the idle arm's of the same round.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # ARM METRIC: the values, one per round, as "round value"
	awk -v arm="$1" -v m="$2" '$1 == arm { for (f = 3; f <= NF; f++) if (index($f, m "=") == 1) print $2, substr($f, length(m) + 2) }' "$B/results"
}
metrics="p50_us p99_us p999_us max_us cpu_mips stream_mbs"
for a in $arms; do
	vals=
	ratios=
	for m in $metrics; do
		vals="$vals $m=$(col "$a" "$m" | cut -d' ' -f2 | median)"
		r=$( (col idle "$m"; echo; col "$a" "$m") | awk '
			/^$/ { second = 1; next }
			!second { base[$1] = $2; next }
			($1 in base) && base[$1] > 0 { printf "%.3f\n", $2 / base[$1] }' | median)
		ratios="$ratios r_${m%_*}=$r"
	done
	n=$(col "$a" p50_us | wc -l)
	cpus=$(awk -v arm="$a" '$1 == arm { for (f = 3; f <= NF; f++) if (index($f, "cpus=") == 1) print substr($f, 6) }' "$B/results" | sort | uniq -c | awk '{ printf "%s%s(x%s)", sep, $2, $1; sep = "," }')
	echo "BENCH effect arm=$a$vals$ratios n=$n cpus=$cpus mode=$mode kernel=$CC_KERNEL"
done
p99r() { (col idle p99_us; echo; col "$1" p99_us) | awk '/^$/ { s = 1; next } !s { b[$1] = $2; next } ($1 in b) && b[$1] > 0 { printf "%.3f\n", $2 / b[$1] }' | median; }
echo "BENCH effect-p99 plain_over_idle=$(p99r plain) latency_over_idle=$(p99r latency) isolated_over_idle=$(p99r isolated) rounds=$rounds neighbours=$((nh + ns)) mode=$mode kernel=$CC_KERNEL"
# The raw lines, for the record.
while IFS= read -r l; do info "raw: $l"; done <"$B/results"
