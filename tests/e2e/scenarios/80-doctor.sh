#!/bin/sh
# 80-doctor: `corecarve doctor` on a real kernel.  Partition support is
# read from the files a non-root cpuset cgroup has: remote on 6.12
# (cpuset.cpus.exclusive), local on 6.1.  Under TCG there is no cpufreq, so
# the governor and power lines are the probe path.  The exit code is the worst
# line's status, and doctor changes nothing (the ledger stays as it was).
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
6.1) check_match partition-local 'warn partition local: *' "$(line partition)" ;;
*) skip partition "no expectation for kernel $CC_KERNEL: $(line partition)" ;;
esac
check_match cgroup 'ok cgroup cgroup v2 with cpuset and cpu*' "$(line cgroup)"
check_match topology 'ok topology 2 packages, 2 NUMA nodes, 8 cores, 16 CPUs online (0-15)*' "$(line topology)"
check_match policy "ok policy $CC_POLICY: 4 classes, reserved 0-1,8-9" "$(line policy)"
check_match governor-probed 'ok governor cpufreq not exposed*' "$(line governor)"
# TCG has no uncore or EPP files; the idle states are whatever the guest's
# cpuidle driver offers (logged above).
check_match power-probed 'ok power idle states (driver *uncore frequency: 0 dies (not exposed); EPP: not exposed' "$(line power)"
check_match ledger 'ok ledger /run/corecarve readable: 0 carves*' "$(line ledger)"
check_eq fifteen-lines 15 "$(printf '%s\n' "$out" | grep -cE '^(ok|warn|fail) ')"

# The exit code is the worst status shown.
if printf '%s\n' "$out" | grep -q '^fail '; then want=2
elif printf '%s\n' "$out" | grep -q '^warn '; then want=1
else want=0; fi
check_eq exit-is-worst "$want" "$rc"
check_eq verdict-line "doctor: $(case $want in 0) echo ready ;; 1) echo 'ready, with warnings' ;; *) echo 'not usable' ;; esac)" \
	"$(printf '%s\n' "$out" | tail -n 1)"
check_match usable '[01]' "$rc"

jrc=0
json=$("$CC_BIN" doctor --json 2>&1) || jrc=$?
check_eq json-exit-same "$rc" "$jrc"
check_eq json-checks 15 "$(printf '%s\n' "$json" | grep -c '"id": ')"
check_match json-exit-field "*\"exit\": $rc*" "$json"

brc=0
berr=$("$CC_BIN" doctor --bogus 2>&1) || brc=$?
check_eq bad-arg-exit 2 "$brc"
check_eq bad-arg-message 'corecarve: doctor: unexpected argument "--bogus" (see corecarve doctor --help)' "$berr"

check_eq ledger-untouched "$before" "$(ledger_sum)"
