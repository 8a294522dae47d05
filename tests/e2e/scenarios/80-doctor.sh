#!/bin/sh
# 80-doctor: `corecarve doctor` on a real kernel.  Partition support is
# read from the files a non-root cpuset cgroup has: remote on 6.12
# (cpuset.cpus.exclusive), local on 6.1.  Under TCG there is no cpufreq, so
# the governor and power lines are the probe path.  The exit code is the worst
# line's status (unknowns are counted, not graded), the verdict gives the
# counts, every class of the policy can carve here, and doctor changes
# nothing (the ledger stays as it was).  `corecarve capture` of the guest,
# read back with --root, gives the same doctor statuses and the same audit.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

cleanup() { cg_rmtree e2e-doctor || true; }
trap cleanup EXIT
cleanup

write_policy "$CC_HOOK_POLICY"
# A first-level cgroup with cpuset files, as systemd's slices are on a host.
cg_mkchain e2e-doctor

before=$(ledger_sum)
rc=0
out=$("$CC_BIN" doctor 2>&1) || rc=$?
info "doctor (rc $rc):"
printf '%s\n' "$out" | grep -v '^ ' | while read -r l; do info "  $l"; done

line() { printf '%s\n' "$out" | grep -E "^[a-z]+ +$1 " | head -n 1 | sed -E 's/ +/ /g'; }

case $CC_KERNEL in
6.12 | 7) check_match partition-remote 'ok partition remote: cpuset.cpus.exclusive present*' "$(line partition)" ;;
# 6.1: local partitions only; "local: ...", or "local partitions only on a
# kubelet node" when an earlier scenario left /kubepods (what the kubelet
# makes, and what doctor reads as one).
6.1) check_match partition-local 'warn partition local*' "$(line partition)" ;;
*) skip partition "no expectation for kernel $CC_KERNEL: $(line partition)" ;;
esac
check_match cgroup 'ok cgroup cgroup v2 with cpuset and cpu*' "$(line cgroup)"
check_match topology 'ok topology 2 packages, 2 NUMA nodes, 8 cores, 16 CPUs online (0-15)*' "$(line topology)"
check_match policy "ok policy $CC_POLICY: 4 classes, reserved 0-1,8-9 (the policy's reserved*" "$(line policy)"
check_match capacity 'ok capacity every class fits its smallest request; on an empty node: latency up to *' "$(line capacity)"
check_match governor-probed 'ok governor cpufreq not exposed*' "$(line governor)"
# TCG has no uncore or EPP files; the idle states are whatever the guest's
# cpuidle driver offers (logged above).
check_match power-probed 'ok power idle states (driver *uncore frequency: 0 dies (not exposed); EPP: not exposed' "$(line power)"
check_match ledger 'ok ledger /run/corecarve readable: 0 carves*' "$(line ledger)"
check_eq sixteen-checks 16 "$(printf '%s\n' "$out" | grep -cE '^(ok|warn|fail|unknown) ')"
check_eq header 'STATUS CHECK FOUND' "$(printf '%s\n' "$out" | head -n 1 | sed -E 's/ +/ /g')"

# The exit code is the worst status shown.
if printf '%s\n' "$out" | grep -q '^fail '; then want=2
elif printf '%s\n' "$out" | grep -q '^warn '; then want=1
else want=0; fi
check_eq exit-is-worst "$want" "$rc"
nwarn=$(printf '%s\n' "$out" | grep -c '^warn ' || true)
nok=$(printf '%s\n' "$out" | grep -c '^ok ' || true)
check_match verdict-line "doctor: $(case $want in 0) echo ready ;; 1) echo 'ready, with warnings' ;; *) echo 'not usable' ;; esac): * fail, $nwarn warn, $nok ok, * unknown" \
	"$(printf '%s\n' "$out" | grep '^doctor: ')"
# --problems: the same checks less the ok ones.
prob=$("$CC_BIN" doctor --problems 2>&1) || true
check_eq problems-no-ok "" "$(printf '%s\n' "$prob" | grep '^ok ' || true)"
check_eq problems-warn-same "$nwarn" "$(printf '%s\n' "$prob" | grep -c '^warn ' || true)"
check_match usable '[01]' "$rc"

jrc=0
json=$("$CC_BIN" doctor --json 2>&1) || jrc=$?
check_eq json-exit-same "$rc" "$jrc"
check_eq json-checks 16 "$(printf '%s\n' "$json" | grep -c '"id": ')"
check_match json-counts "*\"counts\": {*\"warn\": $nwarn,*" "$json"
check_match json-exit-field "*\"exit\": $rc*" "$json"

brc=0
berr=$("$CC_BIN" doctor --bogus 2>&1) || brc=$?
check_eq bad-arg-exit 2 "$brc"
check_eq bad-arg-message 'corecarve: doctor: unexpected argument "--bogus" (see corecarve doctor --help)' "$berr"

# --- capture: the guest as a --root tree, read back -----------------------------
# The partition line without the cgroup it was seen on: the first
# first-level cgroup with cpuset files, in readdir order, which a copied
# tree need not share with cgroupfs.
part_line() { line partition | sed -E 's/ \(seen on [^)]*\)//'; }
live_part=$(part_line)
C=/run/cap80
rm -rf $C
out=$("$CC_BIN" capture $C 2>&1) && pass capture || fail capture "$out"
check_match capture-manifest "*kernel     $(cat /proc/sys/kernel/osrelease)*" "$(cat $C/corecarve-capture.txt 2>/dev/null)"
live=$("$CC_BIN" doctor --json 2>/dev/null | grep '"status"' || true)
tree=$("$CC_BIN" doctor --root $C --json 2>/dev/null | grep '"status"' || true)
check_eq capture-doctor-same "$live" "$tree"
check_eq capture-partition-same "$live_part" \
	"$(out=$("$CC_BIN" doctor --root $C 2>&1 || true); part_line)"
lrc=0 trc=0
"$CC_BIN" audit --sample-ms 0 --json >/run/a80.live 2>&1 || lrc=$?
"$CC_BIN" audit --root $C --sample-ms 0 --json >/run/a80.tree 2>&1 || trc=$?
check_eq capture-audit-exit "$lrc" "$trc"
# read_ms and check_ms are times, not what was found
check_eq capture-audit-same "$(grep -v '_ms"' /run/a80.live)" "$(grep -v '_ms"' /run/a80.tree)"
rm -rf $C /run/a80.live /run/a80.tree

check_eq ledger-untouched "$before" "$(ledger_sum)"
