# shellcheck shell=sh
# Helpers for the crash-consistency scenarios (40-faults, 42-faults-apply,
# 43-faults-release):
# the hook is killed with SIGKILL at a named step (CORECARVE_FAULT,
# plugin/core/fault.h) under real crun, then the next hook must leave the node
# consistent.  Sourced after lib.sh and hooklib.sh; every carve of these
# scenarios lives in $POD beside one plain container, the peer.

B=${B:-/run/b-faults}
S=${S:-/run/s-faults}
POD=/kubepods/podf
SLEEPERS=
mkdir -p "$S"
t0=$(date +%s)
stamp() { info "t+$(($(date +%s) - t0))s: $*"; }

faults_cleanup() {
	ctr_cleanup_all
	for _sp in $SLEEPERS; do kill "$_sp" 2>/dev/null || true; done
}

# consistent TAG FILE: the node agrees with the carves in FILE: each
# carve's cgroup runs on exactly its CPUs, no CPU is in two carves, the
# peer has every other CPU (nothing leaked to nobody), ancestors'
# cpuset.cpus.exclusive and the parked partition hold exactly what the
# carves need.
consistent() {
	carves_hold "$1" "$2"
	check_eq "$1-peer-gets-the-rest" "$(minus "$ONLINE" "$(union "$2" all)")" "$(cg_read $POD/peer cpuset.cpus.effective)"
	if [ -e "$CGROOT/kubepods/cpuset.cpus.exclusive" ]; then
		_want=$(norm "$(union "$2" cpus remote-partition)")
		check_eq "$1-ancestors-exclusive" "$_want|$_want" \
			"$(cg_read /kubepods cpuset.cpus.exclusive)|$(cg_read $POD cpuset.cpus.exclusive)"
	fi
	if [ -d "$CGROOT/corecarve.parked" ]; then
		check_eq "$1-parked-partition" "$(norm "$(union "$2" parked 'remote-partition|local-partition')")" \
			"$(cg_read /corecarve.parked cpuset.cpus)"
	fi
}

# clean TAG: no carve left, and every IRQ affinity as at the start.
clean() {
	if ! carves $S/c; then fail "$1-ledger-valid" "$(cat $S/c.err)"; return 0; fi
	check_eq "$1-ledger-empty" "" "$(tr '\n' ' ' <$S/c)"
	consistent "$1" $S/c
	irq_snapshot >$S/irq.now
	if cmp -s $S/irq.orig $S/irq.now; then pass "$1-irqs-restored"; else
		fail "$1-irqs-restored" "$(diff $S/irq.orig $S/irq.now | grep '^[-+][^-+]' | head -n 4 | tr '\n' ' ')"
	fi
	check_eq "$1-no-irq-section" 0 "$(cat "$CC_LEDGER" 2>/dev/null | grep -c '"irq"' || true)"
	# The project's own audit agrees (docs/audit.md).
	if _out=$("$CC_BIN" audit --sample-ms 0 2>&1); then pass "$1-audit-clean"; else
		fail "$1-audit-clean" "$_out"
	fi
}

# hook_up ID: a cgroup in the pod with a process in it, carved by a direct
# createRuntime (what crun does, minus the container: a third of the time
# under TCG).  Status in $?, the hook's output in $S/hook.out.
hook_up() {
	cg_mkchain "${POD#/}/$1" || return 1
	sleep 600 >/dev/null 2>&1 &
	_hp=$!
	SLEEPERS="$SLEEPERS $_hp"
	echo "$_hp" >"$S/pid-$1"
	echo "$_hp" >"$CGROOT$POD/$1/cgroup.procs" || return 1
	printf '{"ociVersion":"1.0.2","id":"%s","pid":%s,"status":"created","bundle":"%s","annotations":{"corecarve.io/placement":"{class: latency, cpus: 1}"}}' \
		"$1" "$_hp" "$S/bundle" | "$CC_BIN" hook createRuntime >$S/hook.out 2>&1
}

_gone() { ! kill -0 "$1" 2>/dev/null; }

# hook_down ID: the process goes, the cgroup goes, then poststop gives
# back (unless NOPOST is set: a container that went without its poststop).
hook_down() {
	_hp=$(cat "$S/pid-$1")
	kill "$_hp" 2>/dev/null || true
	wait_for 10 _gone "$_hp" || true
	rmdir "$CGROOT$POD/$1" || return 1
	[ -z "${NOPOST:-}" ] || return 0
	printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","bundle":"%s"}' "$1" "$S/bundle" |
		"$CC_BIN" hook poststop >$S/hook.out 2>&1
}

# recover TAG DEAD...: the next hook collects every DEAD carve; the node is
# consistent while that hook's carve lives and after it goes.
recover() {
	_rt=$1
	shift
	if hook_up "n-$_rt"; then pass "$_rt-next-hook"; else fail "$_rt-next-hook" "$(cat $S/hook.out)"; fi
	if ! carves $S/c; then fail "$_rt-ledger-valid" "$(cat $S/c.err)"; return 0; fi
	for _d in "$@"; do
		check_eq "$_rt-collected-$_d" "" "$(held "$_d" $S/c)"
	done
	check_match "$_rt-next-carved" "?*" "$(held "n-$_rt" $S/c)"
	consistent "$_rt-next" $S/c
	if hook_down "n-$_rt"; then pass "$_rt-next-released"; else fail "$_rt-next-released" "$(cat $S/hook.out)"; fi
	clean "$_rt-end"
}

# faults_setup: the policy, the peer, the IRQ snapshot.
faults_setup() {
	write_policy "$CC_HOOK_POLICY"
	mkdir -p "$S/bundle"
	echo '{}' >"$S/bundle/config.json"
	mk_bundle "$B/peer" peer '' $POD/peer
	if ctr_run_detached peer "$B/peer"; then pass peer-started; else fail peer-started "$CRUN_ERR"; fi
	irq_snapshot >$S/irq.orig
	clean start
	stamp start
}

# after_crash STEP ID JOURNALED: what the dead hook left, before anyone
# recovers: its carve is in the ledger exactly when it died after the
# journal (JOURNALED yes/no); the kernel side goes to the log.
after_crash() {
	if ! carves $S/c; then fail "$1-ledger-valid-after-crash" "$(cat $S/c.err)"; return 0; fi
	if [ "$3" = yes ]; then
		check_match "$1-journaled" "?*" "$(held "$2" $S/c)"
	else
		check_eq "$1-not-journaled" "" "$(held "$2" $S/c)"
	fi
	info "$1: after the crash: ledger $(awk '{ printf "%s(%s+%s) ", $1, $2, $3 }' $S/c); /kubepods exclusive '$(cg_read /kubepods cpuset.cpus.exclusive)'; parked '$(cg_read /corecarve.parked cpuset.cpus)'; peer '$(cg_read $POD/peer cpuset.cpus.effective)'"
}

# fault_create STEP JOURNALED [STALE]: crun starts a container whose
# createRuntime hook is killed at STEP; the runtime refuses it and removes
# its cgroup; the next hook collects what it left (and STALE, a carve left
# before).  (Not _st: mk_bundle's loop uses it.)
fault_create() {
	_fs=$1
	_fid=f-$_fs
	CC_HOOK_ENV="CORECARVE_FAULT=$_fs"
	CC_HOOKS=createRuntime
	mk_bundle "$B/$_fid" "$_fid" '{class: latency, cpus: 1}' "$POD/$_fid"
	# shellcheck disable=SC2034 # read by mk_bundle (lib.sh)
	CC_HOOK_ENV='' CC_HOOKS="createRuntime poststop"
	if ctr_run_detached "$_fid" "$B/$_fid"; then
		fail "$_fs-refused" "crun run succeeded: the hook was not killed"
	else
		check_match "$_fs-refused-killed" "*exit code: 137*" "$CRUN_ERR"
	fi
	check_eq "$_fs-killed-without-a-word" "" "$(cat "$B/$_fid/hooks.err" 2>/dev/null)"
	"$CC_CRUN" delete -f "$_fid" >/dev/null 2>&1 || true
	rm -f "$CC_CTR_DB/$_fid"
	check_eq "$_fs-runtime-removed-cgroup" "" "$(ls -d "$CGROOT$POD/$_fid" 2>/dev/null)"
	after_crash "$_fs" "$_fid" "$2"
	recover "$_fs" "$_fid" ${3:+"$3"}
	stamp "$_fs"
}

# fault_release STEP: the container starts; its poststop hook is killed at
# STEP; the runtime still removes it; the next hook gives back what the
# dead poststop did not.
fault_release() {
	_fs=$1
	_fid=r-$_fs
	CC_HOOK_ENV="CORECARVE_FAULT=$_fs"
	mk_bundle "$B/$_fid" "$_fid" '{class: latency, cpus: 1}' "$POD/$_fid"
	# shellcheck disable=SC2034 # read by mk_bundle (lib.sh)
	CC_HOOK_ENV=
	if ctr_run_detached "$_fid" "$B/$_fid"; then pass "$_fs-started"; else fail "$_fs-started" "$CRUN_ERR"; fi
	ctr_kill_delete "$_fid" >/dev/null 2>&1 || true
	check_eq "$_fs-runtime-removed-cgroup" "" "$(ls -d "$CGROOT$POD/$_fid" 2>/dev/null)"
	after_crash "$_fs" "$_fid" yes
	recover "$_fs" "$_fid"
	stamp "$_fs"
}

# faults_end: the peer goes; the hook's sandbox denied nothing all along
# (denials are in the kernel log, plugin/core/sandbox.h).
faults_end() {
	check peer-deleted ctr_kill_delete peer
	check_eq no-sandbox-denials "" "$(dmesg | grep 'type=1326' | grep 'comm="corecarve"' | head -n 3)"
}
