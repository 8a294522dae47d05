#!/bin/bash
# make bench-effect: the isolation a carve buys (issue #20 §1).  The work is
# tests/e2e/scenarios/96-effect.sh (see there: a probe container idle,
# among noisy neighbours uncarved, and carved latency / isolated); this
# runs it where it can and prints its BENCH lines and a table.
#
#   native  when this host can carve: root, / a cgroup-v2 mount with the
#           cpuset controller, >= 4 online CPUs, crun and a static busybox.
#           The scenario runs here with the e2e helpers (tests/e2e/lib.sh,
#           hooklib.sh) and the real hook, registered as an installed node
#           registers it: the first stage corecarve-hook beside CORECARVE
#           (CORECARVE_FIRST_STAGE_BIN, as mk/bench.mk passes; without one
#           `CORECARVE hook`); it carves real CPUs, steers this host's IRQs
#           and gives them back, as a container start would.  Proven end to
#           end on a systemd-managed cgroup-v2 root: the e2e node guest runs
#           this script so (tests/e2e/scenarios/97-effect-native.sh).
#   guest   otherwise, in the e2e QEMU guest (tests/e2e/run.sh, CC_BENCH=1,
#           scenario 96-* only), kernel KERNEL.
#   BENCH_EFFECT_MODE=native|guest forces one (native refuses a host that
#   cannot).
#
# Usage: effect.sh CORECARVE PROBE ROUNDS KERNEL OUTDIR
set -euo pipefail

bin=$1 probe=$2 rounds=$3 kernel=$4 out=$5
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mkdir -p "$out"

why_not_native() {
	[ "$(id -u)" = 0 ] || { echo "not root"; return; }
	[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
		{ echo "/sys/fs/cgroup is not a cgroup-v2 mount (hybrid or v1 host)"; return; }
	grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
		{ echo "the cgroup-v2 root has no cpuset controller"; return; }
	n=$(getconf _NPROCESSORS_ONLN)
	[ "$n" -ge 4 ] || { echo "only $n online CPUs (want >= 4)"; return; }
	command -v crun >/dev/null || { echo "no crun"; return; }
	bb=$(command -v busybox) || { echo "no busybox"; return; }
	# ldd exits 1 for a static binary: under pipefail `ldd | grep -q`
	# would call every static busybox dynamic.
	case $(ldd "$bb" 2>&1) in
	*'not a dynamic executable'* | *'statically linked'*) ;;
	*) echo "busybox ($bb) is not static (busybox-static)"; return ;;
	esac
}

mode=${BENCH_EFFECT_MODE:-}
reason=$(why_not_native)
if [ -z "$mode" ]; then
	if [ -z "$reason" ]; then mode=native; else mode=guest; fi
fi
if [ "$mode" = native ] && [ -n "$reason" ]; then
	echo "bench-effect: BENCH_EFFECT_MODE=native, but this host cannot carve: $reason" >&2
	exit 1
fi

raw=$out/effect-$mode.out
if [ "$mode" = native ]; then
	echo "== bench-effect natively on $(hostname) ($(getconf _NPROCESSORS_ONLN) CPUs, Linux $(uname -r)), $rounds rounds"
	dir=$(mktemp -d "${TMPDIR:-/tmp}/corecarve-effect-XXXXXX")
	trap 'rm -rf "$dir"' EXIT INT TERM
	# The container rootfs: static busybox and its applets, as the
	# guest's /rootfs-template (mkinitramfs.sh).
	bb=$(command -v busybox)
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs"/{proc,dev,sys,tmp,etc,root}
	cp "$bb" "$dir/rootfs/bin/busybox"
	for a in $("$bb" --list); do [ -e "$dir/rootfs/bin/$a" ] || ln -s busybox "$dir/rootfs/bin/$a"; done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$dir/rootfs/etc/passwd"
	# The scenario runs under busybox sh with busybox's applets first in
	# PATH, the tools it has in the guest (lib.sh's wait_for needs
	# usleep, which Debian's userland no longer has).
	mkdir -p "$dir/bbin"
	for a in $("$bb" --list); do ln -s "$bb" "$dir/bbin/$a"; done
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control && grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control ||
		echo "+cpuset +cpu" >/sys/fs/cgroup/cgroup.subtree_control
	# The bundles register the hook's first stage beside the binary, as
	# an installed node does (mk/bench.mk names it; lib.sh's mk_bundle
	# takes it only when $bin is the corecarve beside it), else $bin hook.
	first=${CORECARVE_FIRST_STAGE_BIN:-$(dirname "$bin")/corecarve-hook}
	[ -x "$first" ] || first=
	# Its BENCH lines are printed once, below, with the table.  Under
	# set -e and pipefail a failing scenario would end this script here,
	# before the table and the verdict: its status is taken instead.
	set +e
	CC_EFFECT_NATIVE=1 CC_EFFECT_ROUNDS=$rounds CC_EFFECT_PROBE=$probe CC_EFFECT_DIR=$dir/b \
		CC_E2E_DIR=$repo/tests/e2e CC_BIN=$bin CC_FIRST_STAGE=$first CC_POLICY=$dir/policy.yaml \
		CC_ROOTFS_TEMPLATE=$dir/rootfs CC_CTR_DB=$dir/ctr CC_KERNEL=$(uname -r | cut -d. -f1,2) \
		CC_SCENARIO=96-effect CC_RESULTS=/dev/null PATH="$dir/bbin:$PATH" \
		"$bb" sh "$repo/tests/e2e/scenarios/96-effect.sh" 2>&1 | tee "$raw" | sed '/^BENCH /d'
	rc=${PIPESTATUS[0]}
	set -e
else
	echo "== bench-effect in the QEMU guest (tests/e2e/scenarios/96-effect.sh, Linux $kernel, $rounds rounds; native not possible here: $reason)"
	e2e=$out/e2e
	mkdir -p "$e2e" "$repo/.cache/e2e/kernels" "$repo/.cache/e2e/debs"
	ln -sfn "$repo/.cache/e2e/kernels" "$e2e/kernels"
	ln -sfn "$repo/.cache/e2e/debs" "$e2e/debs"
	rc=0
	CC_BENCH=1 CC_BENCH_PAIRS=$rounds CC_EFFECT_PROBE=$probe CORECARVE_BIN=$bin E2E_CACHE=$e2e \
		E2E_SCENARIO_TIMEOUT=${BENCH_EFFECT_TIMEOUT:-1200} E2E_TIMEOUT=$((${BENCH_EFFECT_TIMEOUT:-1200} + 240)) \
		"$repo/tests/e2e/run.sh" --kernel "$kernel" --scenarios '96-*' >"$out/qemu.out" 2>&1 || rc=$?
	grep -E '^e2e' "$out/qemu.out" || true
	cp "$e2e/log-$kernel.txt" "$raw" 2>/dev/null || : >"$raw"
	grep -E '^(FAIL|SKIP|INFO) ' "$raw" || true
fi

echo
grep -E '^BENCH effect' "$raw" || true
# The table: medians over rounds, each metric also as the median of its
# per-round ratio to the idle arm (latency: > 1 is worse; throughput: < 1).
echo
awk '
	$1 == "BENCH" && $2 == "effect" {
		for (f = 3; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = substr($f, length(kv[1]) + 2) }
		if (!hdr++) {
			print "| arm | p50 us | p99 us | p99.9 us | max us | CPU loop Mips | stream MB/s | p50/idle | p99/idle | p99.9/idle | max/idle | CPU/idle | stream/idle | CPUs |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
		}
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v["arm"],
			v["p50_us"], v["p99_us"], v["p999_us"], v["max_us"], v["cpu_mips"], v["stream_mbs"],
			v["r_p50"], v["r_p99"], v["r_p999"], v["r_max"], v["r_cpu"], v["r_stream"], v["cpus"]
	}
	$1 == "BENCH" && $2 == "effect-p99" {
		for (f = 3; f <= NF; f++) { split($f, kv, "="); p[kv[1]] = kv[2] }
		printf "\np99 against idle: uncarved (b)/(a) %s | carved latency (c)/(a) %s | carved isolated %s (%s rounds, %s neighbours, %s, kernel %s)\n",
			p["plain_over_idle"], p["latency_over_idle"], p["isolated_over_idle"], p["rounds"], p["neighbours"], p["mode"], p["kernel"]
	}' "$raw"
if grep -q '^FAIL ' "$raw"; then echo "bench-effect: a check failed (FAIL lines above)" >&2; [ "$rc" != 0 ] || rc=1; fi
grep -q '^BENCH effect-p99' "$raw" || { echo "bench-effect: no figures (see $raw${out:+ and $out/qemu.out})" >&2; [ "$rc" != 0 ] || rc=1; }
exit "$rc"
