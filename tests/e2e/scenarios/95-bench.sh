#!/bin/sh
# e2e-only: bench
# 95-bench: the timings of docs/performance.md that need a real kernel and
# real crun.  In the initramfs only with CC_BENCH=1 (mkinitramfs.sh; `make
# bench-qemu` sets it), which also puts cc.bench=1 on the kernel command
# line: a normal e2e run neither runs nor skips it.  It prints "BENCH ..."
# lines that mk/bench.mk collects and checks only that what it timed
# worked: there is no timed assertion.
#
# Timestamps are marks written to /dev/kmsg (a shell builtin write, no
# process started) and read back from the kernel log, microseconds apart.
#
#   crun:  `crun run` of a container that runs `true`, in six arms,
#          interleaved, CC_BENCH_PAIRS rounds (cc.bench_pairs, default 20),
#          each round in a shuffled order, a pause before every run:
#            plain       no hook registered
#            hook        corecarve registered (createRuntime + poststop), no
#                        annotation: what every container on the node pays
#            hook-floor  static busybox `true` registered the same way: the
#                        least any hook binary can cost in this harness
#            carve       {class: latency, cpus: 1, irq: leave}: carve (remote
#                        partition or cpuset), released by poststop; the
#                        topology from the cache
#            carve-cold  the same with the topology cache removed first
#                        (the first container after a boot or hotplug)
#            carve-irq   {class: latency, cpus: 1}: the class default, IRQs
#                        steered away from the carve and given back
#  start:  process starts, interleaved: busybox `true` (static), `crun
#          --version`, `corecarve --version` (what each hook stage pays
#          before any work: exec and dynamic linking, emulated under TCG),
#          and `corecarve plan --class latency --cpus 1` (a whole decision
#          with discovery, no cgroup write)
#  irq:    `corecarve irq reconcile` with two steer-away carves in place
#  audit:  `corecarve audit --sample-ms 0` with those carves and 10, 100 and
#          1000 more cgroups in the tree (when the command exists)
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
cleanup() {
	ctr_cleanup_all
	cg_rmtree bench-audit >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [ "$(karg cc.bench)" != 1 ]; then
	fail bench "in the initramfs without cc.bench=1 on the kernel command line: run it with CC_BENCH=1 tests/e2e/run.sh (make bench-qemu)"
	exit 0
fi
pairs=$(karg cc.bench_pairs)
pairs=${pairs:-20}
# The carve arms set irq: leave, which latency must grant an annotation.
write_policy "$(printf '%s\n' "$CC_HOOK_POLICY" | grant latency 'cpus, memory, irq')"
B=/run/b95
CACHE=/run/corecarve/topology.cache

echo Y >/sys/module/printk/parameters/time 2>/dev/null || true
mark() { echo "<6>ccbench $*" >/dev/kmsg; }
# durations ARM: one line per run, milliseconds, from the marks.
durations() {
	dmesg | awk -v arm="$1" '
		{ gsub(/^\[ */, ""); sub(/\]/, "") }
		$2 == "ccbench" && $3 == arm && $5 == "begin" { b[$4] = $1 }
		$2 == "ccbench" && $3 == arm && $5 == "end" && ($4 in b) { printf "%.3f\n", ($1 - b[$4]) * 1000 }'
}
# median: of the numbers on stdin.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# --- crun with and without the hook -----------------------------------------------
arms="plain hook hook-floor carve carve-cold carve-irq"
CC_CMD=true
for a in $arms; do
	ann='{class: latency, cpus: 1, irq: leave}'
	CC_HOOKS='createRuntime poststop'
	case $a in
	plain) ann='' CC_HOOKS='' ;;
	hook | hook-floor) ann='' ;;
	carve-irq) ann='{class: latency, cpus: 1}' ;;
	esac
	mk_bundle "$B/$a" "$a" "$ann" "/kubepods/podb/$a"
	if [ "$a" = hook-floor ]; then
		# The same two stages, but the hook is busybox's `true` (argv[0]
		# picks the applet; the other arguments are ignored).
		sed -i -e "s|\"path\": \"$CC_BIN\"|\"path\": \"$(command -v busybox)\"|g" \
			-e 's|"args": \["corecarve", |"args": ["true", |g' "$B/$a/config.json"
		check_match hook-floor-bundle "*\"args\": \[\"true\", \"hook\"*" "$(cat "$B/$a/config.json")"
	fi
done
unset CC_CMD CC_HOOKS
# Each round in its own order (a shuffle seeded by the round), and a pause
# after every run: a carve's release leaves the kernel work to finish after
# crun returns (the scheduling domains of a partition are rebuilt by a
# workqueue, IRQ affinities settle), which a fixed rotation charged to
# whichever arm always came next — `plain`, behind `carve-irq`, measured
# 20% slower than a hook that runs busybox `true` twice.
SETTLE=${CC_BENCH_SETTLE:-1}
info "$pairs rounds of $arms, shuffled per round, ${SETTLE}s pause after each run"
fails=0
i=0
while [ $i -lt "$pairs" ]; do
	# shellcheck disable=SC2086 # a word list
	set -- $(printf '%s\n' $arms | awk -v seed="$i" 'BEGIN { srand(seed + 1) } { print rand(), $0 }' | sort -n | cut -d' ' -f2)
	for a in "$@"; do
		[ "$a" != carve-cold ] || rm -f $CACHE
		sleep "$SETTLE"
		mark "$a $i begin"
		if ! timeout -s KILL 60 crun run --bundle "$B/$a" "b-$a-$i" </dev/null >/dev/null 2>"$B/$a/run.err"; then
			fails=$((fails + 1))
			info "crun run $a round $i failed: $(_cc_oneline "$(cat "$B/$a/run.err" "$B/$a/hooks.err" 2>/dev/null)")"
		fi
		mark "$a $i end"
	done
	i=$((i + 1))
done
check_eq crun-runs-ok 0 "$fails"
ncarves() { if [ -e "$CC_LEDGER" ]; then grep -c '"id":' "$CC_LEDGER" || true; else echo 0; fi; }
check_eq crun-ledger-empty 0 "$(ncarves)"
check_eq crun-root-effective "0-15" "$(cg_read / cpuset.cpus.effective)"

plain=$(durations plain | median)
for a in $arms; do
	m=$(durations "$a" | median)
	n=$(durations "$a" | wc -l)
	# The median over rounds of this arm's run divided by the plain run
	# of the same round.
	pr=$( (durations plain; echo; durations "$a") | awk '
		/^$/ { second = 1; k = 0; next }
		!second { p[++k] = $1; next }
		{ ++k; if (p[k] > 0) print $1 / p[k] }' | median)
	echo "BENCH crun arm=$a median_ms=$m ratio_of_medians=$(echo "$m $plain" | awk '{ printf "%.3f", $1 / $2 }') median_pair_ratio=$pr n=$n kernel=$CC_KERNEL"
done

# --- process starts ----------------------------------------------------------------
i=0
while [ $i -lt "$pairs" ]; do
	mark "start-static $i begin"
	true
	/bin/busybox true
	mark "start-static $i end"
	mark "start-crun $i begin"
	crun --version >/dev/null
	mark "start-crun $i end"
	mark "start-corecarve $i begin"
	"$CC_BIN" --version >/dev/null
	mark "start-corecarve $i end"
	mark "plan $i begin"
	"$CC_BIN" plan --class latency --cpus 1 >/dev/null
	mark "plan $i end"
	i=$((i + 1))
done
for a in start-static start-crun start-corecarve plan; do
	echo "BENCH process arm=$a median_ms=$(durations $a | median) n=$(durations $a | wc -l) kernel=$CC_KERNEL"
done

# --- IRQ reconcile with two steer-away carves -----------------------------------
for c in i1 i2; do
	mk_bundle "$B/$c" "$c" '{class: latency, cpus: 1}' "/kubepods/podi/$c"
	ctr_run_detached "$c" "$B/$c" || fail "irq-$c-started" "$CRUN_ERR"
done
nirq=0
for d in /proc/irq/[0-9]*; do [ ! -d "$d" ] || nirq=$((nirq + 1)); done
i=0
rfail=0
while [ $i -lt "$pairs" ]; do
	mark "irq $i begin"
	"$CC_BIN" irq reconcile >/dev/null 2>$B/irq.err || rfail=$((rfail + 1))
	mark "irq $i end"
	i=$((i + 1))
done
check_eq irq-reconcile-ok 0 "$rfail"
[ "$rfail" = 0 ] || info "irq reconcile: $(_cc_oneline "$(cat $B/irq.err)")"
echo "BENCH irq_reconcile median_ms=$(durations irq | median) irqs=$nirq carves=2 n=$(durations irq | wc -l) kernel=$CC_KERNEL"

# --- audit, the two steer-away carves still in place -------------------------------
# `corecarve audit` reads every cgroup of the tree once (O(carves + cgroups),
# docs/audit.md).  A 16-CPU guest holds a handful of carves at most (each
# owns whole cores), so what grows here is the tree: N more cgroups with
# the cpuset and cpu controllers, as N containers would add.  --sample-ms 0:
# the interrupt sample is a sleep, not work.
A=/sys/fs/cgroup/bench-audit
if "$CC_BIN" audit --help >/dev/null 2>&1; then
	mkdir -p $A
	echo "+cpuset +cpu" >$A/cgroup.subtree_control
	have=0
	# A 1000-cgroup audit takes seconds under TCG: at most 10 rounds.
	if [ "$pairs" -gt 10 ]; then arounds=10; else arounds=$pairs; fi
	for want in 10 100 1000; do
		while [ $have -lt $want ]; do
			mkdir $A/c$have
			have=$((have + 1))
		done
		ncg=$(find /sys/fs/cgroup -type d | wc -l)
		i=0
		afail=0
		while [ $i -lt "$arounds" ]; do
			mark "audit-$want $i begin"
			rc=0
			"$CC_BIN" audit --sample-ms 0 >$B/audit.out 2>$B/audit.err || rc=$?
			mark "audit-$want $i end"
			[ $rc -le 1 ] || afail=$((afail + 1))
			i=$((i + 1))
		done
		check_eq "audit-$want-ran" 0 "$afail"
		# The audit's own account of its last run: "read ... in X ms, checked in Y ms".
		own=$(tail -n 1 $B/audit.out)
		info "audit with $want more cgroups: $own"
		read_ms=$(echo "$own" | sed -n 's/.* in \([0-9.]*\) ms, checked in .*/\1/p')
		check_ms=$(echo "$own" | sed -n 's/.*checked in \([0-9.]*\) ms.*/\1/p')
		echo "BENCH audit cgroups=$ncg added=$want carves=2 median_ms=$(durations "audit-$want" | median) read_ms=$read_ms check_ms=$check_ms n=$(durations "audit-$want" | wc -l) kernel=$CC_KERNEL"
	done
	while [ $have -gt 0 ]; do
		have=$((have - 1))
		rmdir $A/c$have
	done
	rmdir $A
	check audit-cgroups-removed test ! -d $A
else
	info "corecarve audit does not exist in this build: audit time not measurable yet"
	echo "BENCH audit status=not-measurable reason=no-audit-command kernel=$CC_KERNEL"
fi
for c in i1 i2; do check "irq-$c-deleted" ctr_kill_delete "$c"; done
check_eq ledger-empty-at-end 0 "$(ncarves)"
