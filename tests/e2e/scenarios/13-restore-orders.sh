#!/bin/sh
# 13-restore-orders: when a container goes, everything its carve changed
# comes back, whatever the order the carves go in (issue #16).  Each case is
# one pod with a CFS quota of its own (cpu.max) and, in most, an uncarved
# sidecar whose cgroup inherits its CPUs (empty cpuset.cpus); latency carves
# (smt: isolate, so each has parked siblings; quota: drop) start and go with
# real crun in a given order.  After every single start and release:
#   - each live carve's cgroup runs on exactly the CPUs the ledger gives it,
#     and no CPU (carved or parked) is in two carves;
#   - the pod's cpu.max reads `max <period>` exactly while the live carves
#     below it need more CPUs than its quota gives (sum of their CPUs times
#     the period above the quota), and its own value otherwise;
#   - the sidecar, and any cgroup beside the carves that is no live carve,
#     runs on the pod's CPUs minus the live carves' (run and parked):
#     corecarve takes them out in cpuset-only mode (6.1), the partitions'
#     kernel does on 6.12;
#   - on 6.12 the ancestors' cpuset.cpus.exclusive and corecarve.parked hold
#     exactly the live carves' CPUs.
# At the end of a case every file holds its value from before the case
# (the sidecar's cpuset.cpus may read the pod's CPUs on 6.1: an empty write
# is refused there on a populated cgroup), or the value someone else wrote
# meanwhile: a kubelet-style resize of the pod's cpu.max while carved is
# the value restored after the last carve (until then the pod has no quota,
# as the kubelet since 1.33), and the poststop says so once.
#
# Cases: fifo, lifo (two 2-CPU carves under a 0.5-CPU pod quota); mixed
# (2+1+2 CPUs under a 3-CPU quota, released middle, first, last); early (a
# cgroup made before the first carve, carved after it: a live carve is
# never a peer); up and down (the pod's quota resized while carved);
# shared (background containers beside and away from the carves regain
# every CPU a carve gives back).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b13 S=/run/s13
mkdir -p $S
PODS=
cleanup() {
	ctr_cleanup_all
	for _p in $PODS; do cg_rmtree "$_p" || true; done
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"
t0=$(date +%s)
if cg_has_exclusive; then REMOTE=1; else REMOTE=0; fi
info "kernel $CC_KERNEL: carves are $([ $REMOTE = 1 ] && echo remote-partition || echo cpuset-only)"

# ---- one case -----------------------------------------------------------------
# CASE the case's name (every container and check is prefixed with it),
# POD its pod cgroup, $S/live "ID CPUS" per live carve of the case, PEERS
# the cgroups (leaf names) beside the carves that are no live carve,
# SIDECARS the uncarved containers, OUTSIDE the pod's cpu.max as someone
# else wrote it ("" while nobody did).

# begin CASE QUOTA SIDECAR...: a fresh pod with cpu.max QUOTA ("" for none)
# and a running uncarved container per SIDECAR; what every file read before.
begin() {
	CASE=$1 POD=/kubepods/pod-$1 OUTSIDE='' PEERS='' SIDECARS=''
	_q=$2
	shift 2
	PODS="$PODS ${POD#/}"
	: >$S/live
	cg_mkchain "${POD#/}" || fail "$CASE-pod" "cannot make $POD"
	if [ -n "$_q" ] && ! cg_write "$POD" cpu.max "$_q"; then fail "$CASE-pod-quota" "$CG_ERR"; fi
	ORIG_MAX=$(cg_read "$POD" cpu.max)
	for _x in "$@"; do
		mk_bundle "$B/$CASE-$_x" "$CASE-$_x" '' "$POD/$_x"
		if ctr_run_detached "$CASE-$_x" "$B/$CASE-$_x"; then pass "$CASE-$_x-started"; else fail "$CASE-$_x-started" "$CRUN_ERR"; fi
		cg_read "$POD/$_x" cpuset.cpus >"$S/orig-$_x"
		PEERS="$PEERS $_x" SIDECARS="$SIDECARS $_x"
	done
	POD_EFF0=$(cg_read "$POD" cpuset.cpus.effective)
	ORIG_EXCL="$(cg_read /kubepods cpuset.cpus.exclusive)|$(cg_read "$POD" cpuset.cpus.exclusive)"
	ORIG_PARKED=$(cg_read /corecarve.parked cpuset.cpus)
	irq_snapshot >$S/irq.orig
	info "$CASE: pod $POD cpu.max '$ORIG_MAX' effective '$POD_EFF0'; sidecars:$(for _x in $SIDECARS; do printf " %s cpuset.cpus '%s'" "$_x" "$(cat "$S/orig-$_x")"; done); exclusive '$ORIG_EXCL'; parked '$ORIG_PARKED'"
}

# premake ID: the cgroup of a later carve, made now, empty (a runtime that
# creates cgroups ahead of the hooks, or two pods' containers starting at
# once): a cgroup beside the carves until its own carve.
premake() {
	cg_mkchain "${POD#/}/$1" || fail "$CASE-$1-premade" "cannot make $POD/$1"
	PEERS="$PEERS $1"
	echo "" >"$S/orig-$1"
}

# want_max: the pod's cpu.max as it must read now.
want_max() {
	_sum=$(awk '{ s += $2 } END { print s + 0 }' $S/live)
	# A pod holding a carve has no quota (issue #38 item 2, as the
	# kubelet since 1.33); after the last, its own or someone else's.
	# shellcheck disable=SC2086 # "QUOTA PERIOD"
	set -- ${OUTSIDE:-$ORIG_MAX}
	if [ "$1" != max ] && [ "$_sum" -gt 0 ]; then echo "max $2"; else echo "$*"; fi
}

# settle STEP: the checks of the header, against one status --json.
settle() {
	_t=$CASE-$1
	if ! carves $S/all; then
		fail "$_t-ledger-valid" "$(cat $S/all.err)"
		return 0
	fi
	awk -v p="$POD/" 'index($4, p) == 1' $S/all >$S/pod
	check_eq "$_t-ledger-live" "$(cut -d' ' -f1 $S/live | sort | tr '\n' ' ')" "$(cut -d' ' -f1 $S/pod | sort | tr '\n' ' ')"
	carves_hold "$_t" $S/all
	check_eq "$_t-pod-cpu-max" "$(want_max)" "$(cg_read "$POD" cpu.max)"
	_facts=
	for _x in $PEERS; do
		check_eq "$_t-$_x-effective" "$(peer_want "$POD_EFF0" $S/all)" "$(cg_read "$POD/$_x" cpuset.cpus.effective)"
		_facts="$_facts; $_x cpus '$(cg_read "$POD/$_x" cpuset.cpus)' effective '$(cg_read "$POD/$_x" cpuset.cpus.effective)'"
	done
	if [ $REMOTE = 1 ]; then
		check_eq "$_t-ancestors-exclusive" \
			"$(norm "$(union $S/all cpus remote-partition)")|$(norm "$(union $S/pod cpus remote-partition)")" \
			"$(cg_read /kubepods cpuset.cpus.exclusive)|$(cg_read "$POD" cpuset.cpus.exclusive)"
		check_eq "$_t-parked-partition" "$(norm "$(union $S/all parked remote-partition)")" \
			"$(cg_read /corecarve.parked cpuset.cpus)"
		_facts="$_facts; exclusive '$(cg_read /kubepods cpuset.cpus.exclusive)|$(cg_read "$POD" cpuset.cpus.exclusive)'; parked '$(cg_read /corecarve.parked cpuset.cpus)' $(cg_read /corecarve.parked cpuset.cpus.partition)"
	fi
	info "$_t: pod cpu.max '$(cg_read "$POD" cpu.max)' effective '$(cg_read "$POD" cpuset.cpus.effective)'$_facts; carves$(awk '{ printf " %s(%s+%s)", $1, $2, $3 }' $S/pod)$(while read -r _id _c _p _cg _m; do printf ' %s:%s' "${_cg##*/}" "$(cg_read "$_cg" cpuset.cpus.effective)"; done <$S/pod)"
}

# up ID CPUS: crun starts a latency container of CPUS in the pod.
up() {
	mk_bundle "$B/$CASE-$1" "$CASE-$1" "{class: latency, cpus: $2}" "$POD/$1" $(($2 * 100000))
	if ! ctr_run_detached "$CASE-$1" "$B/$CASE-$1"; then
		fail "$CASE-$1-started" "$CRUN_ERR"
		return 0
	fi
	pass "$CASE-$1-started"
	echo "$CASE-$1 $2" >>$S/live
	PEERS=$(for _x in $PEERS; do [ "$_x" = "$1" ] || printf ' %s' "$_x"; done)
	settle "carved-$1"
}

# down ID: the container goes; what its poststop printed is kept in
# BUNDLE/poststop.err (hooks.err has the createRuntime's output before it).
down() {
	_b=$B/$CASE-$1
	_off=$(wc -c <"$_b/hooks.err" 2>/dev/null || echo 0)
	check "$CASE-$1-released" ctr_gone "$CASE-$1"
	tail -c +$((_off + 1)) "$_b/hooks.err" >"$_b/poststop.err" 2>/dev/null || :
	[ ! -s "$_b/poststop.err" ] || info "$CASE-$1 poststop said: $(_cc_oneline "$(cat "$_b/poststop.err")")"
	awk -v id="$CASE-$1" '$1 != id' $S/live >$S/live.new && mv $S/live.new $S/live
	settle "released-$1"
}

# resize QUOTA: the orchestrator writes the pod's cpu.max while carved.
resize() {
	if cg_write "$POD" cpu.max "$1"; then pass "$CASE-resized"; else fail "$CASE-resized" "$CG_ERR"; fi
	OUTSIDE=$(cg_read "$POD" cpu.max)
	check_eq "$CASE-resize-reads" "$1" "$OUTSIDE"
}

# said_once ID...: the poststops of these carves said, in one line and once
# in all, that the pod's cpu.max was someone else's and kept: a line that
# names cpu.max and the pod's cgroup (not a cgroup below it).
said_once() {
	_lines=$(for _id in "$@"; do cat "$B/$CASE-$_id/poststop.err" 2>/dev/null || :; done |
		grep -F cpu.max | grep -E "$POD(/cpu\.max|[^/[:alnum:]_.-]|\$)" || :)
	check_eq "$CASE-poststop-says-kept-once" 1 "$(printf '%s' "$_lines" | grep -c . || :)"
	[ -z "$_lines" ] || info "$CASE: poststop: $(_cc_oneline "$_lines")"
}

# finish: every carve of the case gone; every file as before the case (or
# as someone else wrote it); the sidecars go too.
finish() {
	settle end
	check_eq "$CASE-end-pod-effective" "$POD_EFF0" "$(cg_read "$POD" cpuset.cpus.effective)"
	for _x in $SIDECARS; do
		peer_restored "$CASE-end-$_x" "$POD/$_x" "$(cat "$S/orig-$_x")" "$(cg_read "$POD" cpuset.cpus.effective)"
	done
	if [ $REMOTE = 1 ]; then
		check_eq "$CASE-end-exclusive-as-before" "$ORIG_EXCL" \
			"$(cg_read /kubepods cpuset.cpus.exclusive)|$(cg_read "$POD" cpuset.cpus.exclusive)"
		check_eq "$CASE-end-parked-as-before" "$ORIG_PARKED" "$(cg_read /corecarve.parked cpuset.cpus)"
	fi
	irq_snapshot >$S/irq.now
	if cmp -s $S/irq.orig $S/irq.now; then pass "$CASE-end-irqs-as-before"; else
		fail "$CASE-end-irqs-as-before" "$(diff $S/irq.orig $S/irq.now | grep '^[-+][^-+]' | head -n 4 | tr '\n' ' ')"
	fi
	for _x in $SIDECARS; do check "$CASE-$_x-deleted" ctr_gone "$CASE-$_x"; done
	if cg_rmtree "${POD#/}"; then pass "$CASE-pod-removed"; else fail "$CASE-pod-removed" "$POD is still there"; fi
	info "$CASE done at t+$(($(date +%s) - t0))s"
}

# ---- FIFO and LIFO: the first carve lifts the pod's quota, the last restores it ----
begin fifo "50000 100000" x
up a 2
up b 2
down a
down b
finish

begin lifo "50000 100000" x
up a 2
up b 2
down b
down a
finish

# ---- interleaved, 2+1+2 CPUs under a 3-CPU quota: lifted only while 5 and 4 ----
begin mixed "300000 100000" x
up a 2
up b 1
up c 2
down b
down a
down c
finish

# ---- a cgroup made before the first carve, carved after it ----------------------
begin early "" x
premake d
up c 2
up d 2
down c
down d
finish

# ---- a kubelet resize up while carved: theirs is restored after the last --------
begin up "50000 100000"
up r1 2
up r2 2
resize "300000 100000"
down r2
down r1
said_once r1 r2
finish

# ---- a resize down while carved: the audit reports it, theirs comes back ------
begin down "150000 100000"
up r1 2
resize "50000 100000"
audit=$("$CC_BIN" audit --json --sample-ms 0 2>$S/audit.err) || :
check_match "$CASE-audit-quota-on-carve" '*"code": "QUOTA_ON_CARVE"*' "$audit"
down r1
said_once r1
finish

# ---- shared-pool containers: narrowed by every carve, every CPU given back -------
# Issue #31: a `background` container runs on its pool (every unreserved
# CPU) without the live carves' CPUs and parked siblings, wherever the
# carves are: one in a pod of its own, one beside the carves (on 6.12 its
# list must not make the next carve's partition invalid); a released carve
# gives its CPUs back to both.
SHARED_POOL=2-7,10-15
# shared_check TAG CGROUP: the shared container's cpuset.cpus and
# effective set are the pool without every live carve.
shared_check() {
	if ! carves $S/all; then
		fail "$1-ledger-valid" "$(cat $S/all.err)"
		return 0
	fi
	_w=$(norm "$(minus "$SHARED_POOL" "$(union $S/all both)")")
	check_eq "$1-cpus" "$_w" "$(norm "$(cg_read "$2" cpuset.cpus)")"
	check_eq "$1-effective" "$_w" "$(norm "$(cg_read "$2" cpuset.cpus.effective)")"
}
shared_up() {
	mk_bundle "$B/$1" "$1" '{class: background, cpus: 1}' "$2"
	if ctr_run_detached "$1" "$B/$1"; then pass "$1-started"; else fail "$1-started" "$CRUN_ERR"; fi
}
begin shared "" x
cg_mkchain kubepods/pod-shared-bg || fail shared-bg-pod "cannot make /kubepods/pod-shared-bg"
PODS="$PODS kubepods/pod-shared-bg"
shared_up shared-bg /kubepods/pod-shared-bg/bg
up a 2
shared_check shared-bg-a-up /kubepods/pod-shared-bg/bg
shared_up shared-s2 "$POD/s2"
shared_check shared-s2-a-up "$POD/s2"
up b 1
shared_check shared-bg-b-up /kubepods/pod-shared-bg/bg
shared_check shared-s2-b-up "$POD/s2"
down a
shared_check shared-bg-a-down /kubepods/pod-shared-bg/bg
shared_check shared-s2-a-down "$POD/s2"
codes=$("$CC_BIN" audit --sample-ms 0 2>&1 | awk 'NR > 1 && /^[A-Z_]+ / { print $1 }' | sort -u | tr '\n' ' ')
check_eq shared-audit-not-narrow "" "$(echo "$codes" | tr ' ' '\n' | grep -x 'SHARED_NARROW\|RECORD_DRIFT\|RECORD_ORPHAN' || :)"
down b
shared_check shared-bg-b-down /kubepods/pod-shared-bg/bg
shared_check shared-s2-b-down "$POD/s2"
check_eq shared-bg-whole-pool "$SHARED_POOL" "$(norm "$(cg_read /kubepods/pod-shared-bg/bg cpuset.cpus)")"
check shared-s2-deleted ctr_gone shared-s2
check shared-bg-deleted ctr_gone shared-bg
finish

if carves $S/all; then check_eq ledger-empty "" "$(tr '\n' ' ' <$S/all)"; else fail ledger-valid-at-end "$(cat $S/all.err)"; fi
check_eq no-sandbox-denials "" "$(dmesg | grep 'type=1326' | grep 'comm="corecarve"' | head -n 3)"
