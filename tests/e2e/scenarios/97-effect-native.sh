#!/bin/sh
# e2e-guest: k8s
# e2e-only: bench
# e2e-needs: effect-probe bench-effect
# 97-effect-native: `make bench-effect`'s native path (bench/effect.sh with
# BENCH_EFFECT_MODE=native, issue #20 §1) run end to end on a host that is
# not the initramfs harness: the node guest, Debian with systemd as PID 1
# managing a cgroup-v2 root, 16 vCPUs in 2 NUMA nodes with SMT.
#
# k8s/mkinit.sh puts a built repository's files under /e2e/repo as
# `make bench-effect` finds them in a checkout (bench/effect.sh,
# tests/e2e/{lib.sh,hooklib.sh,scenarios/96-effect.sh}, corecarve and
# corecarve-hook at the top, build/bench/effect-probe); this runs the
# recipe's command line (mk/bench.mk) as root with the environment a login
# shell has (env -i: nothing of the harness's, CC_RESULTS or CC_SCENARIO,
# reaches it) and Debian's own PATH, plus a directory with only a static
# busybox in it, as busybox-static installs it.  Its check lines come back
# as this scenario's (native/NAME), its BENCH lines and the table as
# printed; then: it exited 0, printed a BENCH effect line per arm, the
# effect-p99 line and the table, and said it ran natively.  The figures are
# TCG's, not a machine's.
#
# Rounds from cc.bench_pairs= (CC_BENCH_PAIRS=N run.sh), default 2.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh

if [ "$(karg cc.bench)" != 1 ]; then
	fail bench "without cc.bench=1 on the kernel command line: run it with CC_BENCH=1 tests/e2e/run.sh"
	exit 0
fi
rounds=$(karg cc.bench_pairs)
rounds=${rounds:-2}
R=/e2e/repo
for f in bench/effect.sh tests/e2e/lib.sh tests/e2e/hooklib.sh tests/e2e/scenarios/96-effect.sh \
	corecarve corecarve-hook build/bench/effect-probe; do
	[ -e "$R/$f" ] || {
		fail payload "no $R/$f: k8s/mkinit.sh stages it for a scenario marked e2e-needs: bench-effect"
		exit 0
	}
done
# busybox-static's place on a Debian host: a directory of its own here, so
# nothing else of /e2e/bin (the applet links) is on the PATH.
mkdir -p /run/e2e97/bin
ln -sf /e2e/bin/busybox /run/e2e97/bin/busybox
out=/run/e2e97/out
# Less than the runner's limit, so a hang still reports what it printed.
st=$(karg cc.scenario_timeout)
lim=$((${st:-900} - 60))
info "bash bench/effect.sh natively, $rounds rounds, limit ${lim}s; $(crun --version | head -n 1), $(systemctl --version | head -n 1), /sys/fs/cgroup $(/usr/bin/stat -fc %T /sys/fs/cgroup)"
rc=0
(cd "$R" && timeout -s KILL "$lim" env -i HOME=/root LOGNAME=root USER=root TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/run/e2e97/bin \
	CORECARVE_FIRST_STAGE_BIN="$R/corecarve-hook" BENCH_EFFECT_MODE=native \
	bash bench/effect.sh "$R/corecarve" "$R/build/bench/effect-probe" "$rounds" "$CC_KERNEL" "$R/build/bench/effect") \
	>"$out" 2>&1 </dev/null || rc=$?

# Its lines: results as this scenario's, the rest as printed.
while IFS= read -r l; do
	case $l in
	"PASS 96-effect/"*) pass "native/${l#PASS 96-effect/}" ;;
	"FAIL 96-effect/"*)
		r=${l#FAIL 96-effect/}
		fail "native/${r%%: *}" "${r#*: }"
		;;
	"SKIP 96-effect/"*)
		r=${l#SKIP 96-effect/}
		skip "native/${r%%: *}" "${r#*: }"
		;;
	"INFO 96-effect: "*) info "native: ${l#INFO 96-effect: }" ;;
	BENCH* | "|"* | "p99 against idle"*) printf '%s\n' "$l" ;;
	'') ;;
	*) info "effect.sh: $l" ;;
	esac
done <"$out"

check_eq effect-sh-exit 0 "$rc"
check effect-sh-native grep -q '^== bench-effect natively on ' "$out"
for a in idle plain latency isolated; do
	check "bench-line-$a" grep -Eq "^BENCH effect arm=$a p50_us=[0-9.]+ .* mode=native " "$out"
done
check bench-line-p99 grep -Eq '^BENCH effect-p99 plain_over_idle=[0-9.]+ .*rounds='"$rounds"' .*mode=native' "$out"
check table-header grep -q '^| arm | p50 us |' "$out"
check_eq table-rows 4 "$(grep -Ec '^\| (idle|plain|latency|isolated) \| [0-9.]+ \|' "$out")"
# Everything it carved was given back.
check_eq no-carve-left 0 "$(if [ -e /run/corecarve/ledger.json ]; then grep -c '"id":' /run/corecarve/ledger.json || true; else echo 0; fi)"
