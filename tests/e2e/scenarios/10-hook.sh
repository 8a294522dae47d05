#!/bin/sh
# 10-hook: the product's main job.  Real crun starts annotated containers
# with `corecarve hook` registered in config.json; each gets an exclusive,
# whole-core carve with aligned memory and no CFS quota, and gives it back.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
trap ctr_cleanup_all EXIT

write_policy "$CC_HOOK_POLICY"
B=/run/b S=/run/s10
mkdir -p $S
if cg_has_exclusive; then want_mode=remote-partition; want_part=root; else want_mode=cpuset-only; want_part=member; fi
info "kernel $CC_KERNEL: expecting $want_mode"

# Uncarved containers beside the carves ("CGROUP" per line in $S/peers):
# each must run on every CPU no carve takes from it, and get back exactly
# what it had once the carves are gone.
: >$S/peers
# peer_up ID CGROUP: start an uncarved container; remember its cpuset.cpus.
peer_up() {
	mk_bundle $B/$1 $1 '' "$2"
	if ctr_run_detached $1 $B/$1; then pass $1-started; else fail $1-started "$CRUN_ERR"; fi
	echo "$2" >>$S/peers
	# What the runtime gave it (the bundle asks no cpuset: it inherits),
	# not what it reads now: beside a cpuset-only carve the hook has
	# narrowed it already.
	echo "${CC_CPUSET_CPUS:-}" >$S/orig-$1
}
# peer_down ID: it is back as before the carves, then goes.
peer_down() {
	_cg=$(grep "/$1\$" $S/peers)
	peer_restored $1-end "$_cg" "$(cat $S/orig-$1)" "$(cg_read "$(dirname "$_cg")" cpuset.cpus.effective)"
	check $1-deleted ctr_gone $1
	grep -v "/$1\$" $S/peers >$S/peers.new || :
	mv $S/peers.new $S/peers
}
# node_ok TAG: from one status --json: every carve on exactly its CPUs and
# no CPU in two; every peer on what no carve takes (peer_want); on
# 6.12 /kubepods's exclusive set and the parked partition exactly the
# carves'.
node_ok() {
	if ! carves $S/c; then fail $1-ledger-valid "$(cat $S/c.err)"; return 0; fi
	carves_hold $1 $S/c
	while read -r _cg; do
		check_eq "$1-${_cg##*/}-effective" "$(peer_want "$ONLINE" $S/c)" \
			"$(cg_read "$_cg" cpuset.cpus.effective)"
	done <$S/peers
	if [ "$want_mode" = remote-partition ]; then
		check_eq $1-kubepods-exclusive "$(norm "$(union $S/c cpus remote-partition)")" "$(cg_read /kubepods cpuset.cpus.exclusive)"
		check_eq $1-parked "$(norm "$(union $S/c parked remote-partition)")" "$(cg_read /corecarve.parked cpuset.cpus)"
	fi
}

# --- two latency containers, an uncarved one beside the first ----------------
plan1=$(plan_field latency 2 cpus)
check_eq plan-first-latency "2,4" "$plan1"
peer_up s1 /kubepods/pod1/s1
# Each limit pays for its carve (issue #26): 2 CPUs, dropped once carved.
mk_bundle $B/c1 c1 '{class: latency, cpus: 2}' /kubepods/pod1/c1 200000
if ctr_run_detached c1 $B/c1; then pass c1-started; else fail c1-started "$CRUN_ERR"; fi
mk_bundle $B/c2 c2 '{class: latency, cpus: 2}' /kubepods/pod2/c2 250000
if ctr_run_detached c2 $B/c2; then pass c2-started; else fail c2-started "$CRUN_ERR"; fi

for c in c1 c2; do
	cg=$(ctr_cgroup $c)
	cpus=$(carve_field $c cpus)
	parked=$(carve_field $c parked)
	check_eq $c-cgroup "/kubepods/pod${c#c}/$c" "$cg"
	check_eq $c-mode "$want_mode" "$(carve_field $c mode)"
	check_eq $c-effective "$cpus" "$(cg_read "$cg" cpuset.cpus.effective)"
	check_eq $c-partition "$want_part" "$(cg_read "$cg" cpuset.cpus.partition)"
	check_eq $c-mems "$(node_of_cpus "$cpus")" "$(cg_read "$cg" cpuset.mems)"
	check_eq $c-mems-ledger "$(node_of_cpus "$cpus")" "$(carve_field $c mems)"
	check_eq $c-cpu-max "max 100000" "$(cg_read "$cg" cpu.max)"
	check $c-whole-cores whole_cores "$cpus" "$parked"
	check_eq $c-one-thread-per-core "$(expand "$cpus" | wc -l)" "$(expand "$parked" | wc -l)"
	check $c-not-reserved disjoint "$cpus,$parked" "0-1,8-9"
	ctr_wait_output $c '^Cpus_allowed_list:' || true
	check_eq $c-sees-carve "$cpus" "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$B/$c/ctr.out" | head -n 1)"
done
check_eq c1-cpus "2,4" "$(carve_field c1 cpus)"
check_eq c1-parked "3,5" "$(carve_field c1 parked)"
check_eq c2-cpus "10,12" "$(carve_field c2 cpus)"
check c1-c2-disjoint disjoint "$(carve_field c1 cpus),$(carve_field c1 parked)" \
	"$(carve_field c2 cpus),$(carve_field c2 parked)"
# The pod-level parent had no quota of its own: nothing to change there.
check_eq pod1-cpu-max "max 100000" "$(cg_read /kubepods/pod1 cpu.max)"

root_eff=$(cg_read / cpuset.cpus.effective)
if [ "$want_mode" = remote-partition ]; then
	check root-excludes-c1 disjoint "$root_eff" "$(carve_field c1 cpus),$(carve_field c1 parked)"
	check root-excludes-c2 disjoint "$root_eff" "$(carve_field c2 cpus),$(carve_field c2 parked)"
	check_eq parked-partition isolated "$(cg_read /corecarve.parked cpuset.cpus.partition)"
	check_eq parked-cpus "3,5,11,13" "$(cg_read /corecarve.parked cpuset.cpus.effective)"
	check_eq kubepods-exclusive "2,4,10,12" "$(cg_read /kubepods cpuset.cpus.exclusive)"
else
	info "root effective on $CC_KERNEL: $root_eff (cpuset-only: soft exclusivity)"
fi
node_ok two

# --- refusals: nothing applied, ledger unchanged --------------------------
before=$(ledger_sum)
mk_bundle $B/big big '{class: latency, cpus: 8}' /kubepods/pod3/big
if ctr_run_detached big $B/big; then
	fail over-capacity-refused "crun run succeeded"
else
	check_match over-capacity-message "*corecarve:*refused*" "$(cat $B/big/hooks.err $B/big/crun.err 2>/dev/null)"
fi
check_eq over-capacity-ledger-unchanged "$before" "$(ledger_sum)"
check_eq over-capacity-no-carve "" "$(carve_field big cpus)"

mk_bundle $B/bad bad '{class: latency, cpus: zero}' /kubepods/pod3/bad
if ctr_run_detached bad $B/bad; then
	fail malformed-refused "crun run succeeded"
else
	check_match malformed-message "*corecarve:*cpus*" "$(cat $B/bad/hooks.err $B/bad/crun.err 2>/dev/null)"
fi
check_eq malformed-ledger-unchanged "$before" "$(ledger_sum)"

mk_bundle $B/unk unk '{class: warp, cpus: 1}' /kubepods/pod3/unk
if ctr_run_detached unk $B/unk; then
	fail unknown-class-refused "crun run succeeded"
else
	check_match unknown-class-message "*corecarve:*warp*" "$(cat $B/unk/hooks.err $B/unk/crun.err 2>/dev/null)"
fi
check_eq unknown-class-ledger-unchanged "$before" "$(ledger_sum)"

# A container without the annotation gets no carve; started beside
# cpuset-only carves it gives up their CPUs (peer_want).
peer_up plain /kubepods/pod4/plain
check_eq plain-no-carve "" "$(carve_field plain cpus)"
# Beside cpuset-only carves its new pod gave up their CPUs (the branch
# that holds no carve): that peer record is all the ledger gains (node_ok
# below checks where it runs).
if [ "$want_mode" = remote-partition ]; then
	check_eq plain-ledger-unchanged "$before" "$(ledger_sum)"
else
	check_eq plain-pod-peer-record 1 "$(grep -c '"/kubepods/pod4/cpuset.cpus"' "$CC_LEDGER" || :)"
fi

# --- release and reuse: after each release the others are intact ---------
c1cpus=$(carve_field c1 cpus)
check c1-deleted ctr_gone c1
check_eq c1-released "" "$(carve_field c1 cpus)"
[ -z "$(carve_field c1 cpus)" ] || info "poststop of c1 said: $(cat $B/c1/hooks.err 2>/dev/null)"
node_ok c1-gone
mk_bundle $B/c3 c3 '{class: latency, cpus: 2}' /kubepods/pod1/c3
if ctr_run_detached c3 $B/c3; then pass c3-started; else fail c3-started "$CRUN_ERR"; fi
check_eq c3-reuses-c1-cpus "$c1cpus" "$(carve_field c3 cpus)"
node_ok c3-up
check c2-deleted ctr_gone c2
node_ok c2-gone
check c3-deleted ctr_gone c3
check_eq c3-poststop-quiet "" "$(cat $B/c3/hooks.err 2>/dev/null)"
node_ok c3-gone
check_eq ledger-empty "" "$(tr '\n' ' ' <$S/c)"
peer_down s1
peer_down plain
if [ "$want_mode" = remote-partition ]; then
	check_eq root-effective-restored "$ONLINE" "$(cg_read / cpuset.cpus.effective)"
	check_eq kubepods-exclusive-released "" "$(cg_read /kubepods cpuset.cpus.exclusive)"
fi
poststop_again=$(echo '{"ociVersion":"1.0","id":"c1","status":"stopped","bundle":"/run/b/c1"}' |
	"$CC_BIN" hook poststop 2>&1) && pass poststop-idempotent || fail poststop-idempotent "$poststop_again"

# --- four at once beside a peer: no overlap, each release leaves the rest ---
peer_up pp /kubepods/podp/pp
for i in 1 2 3 4; do
	mk_bundle $B/p$i p$i '{class: latency, cpus: 1}' /kubepods/podp/p$i
done
for i in 1 2 3 4; do
	(if ctr_run_detached p$i $B/p$i >/dev/null 2>&1; then echo 0; else echo "$? $(cat $B/p$i/hooks.err $B/p$i/crun.err 2>/dev/null)"; fi >$B/p$i/rc) &
done
wait
all=
for i in 1 2 3 4; do
	check_eq p$i-started 0 "$(cat $B/p$i/rc)"
	set="$(carve_field p$i cpus),$(carve_field p$i parked)"
	if [ -n "$all" ]; then check p$i-disjoint disjoint "$all" "$set"; fi
	all="${all:+$all,}$set"
	check_eq p$i-effective "$(carve_field p$i cpus)" "$(cg_read /kubepods/podp/p$i cpuset.cpus.effective)"
done
node_ok four
for i in 1 2 3 4; do
	check p$i-deleted ctr_gone p$i
	node_ok p$i-gone
done
check_eq four-released "" "$(tr '\n' ' ' <$S/c)"
peer_down pp
if [ "$want_mode" = remote-partition ]; then
	check_eq four-root-effective-restored "$ONLINE" "$(cg_read / cpuset.cpus.effective)"
fi

# --- a parent restricting cpuset.mems (issue #41): `memory: local` is refused,
# not silently turned into the parent's (remote) nodes, and nothing stays --
# An empty node's first fit is on node 0 (plan-first-latency); the pod
# allows node 1 alone.  The kernel would run the carve's memory on node 1.
check mems-pod-made cg_mkchain kubepods/podm/x
rmdir "$CGROOT/kubepods/podm/x"
if cg_write /kubepods/podm cpuset.mems 1; then pass mems-pod-node1; else fail mems-pod-node1 "$CG_ERR"; fi
podm_max=$(cg_read /kubepods/podm cpu.max)
mk_bundle $B/m1 m1 '{class: latency, cpus: 2, memory: local}' /kubepods/podm/m1 200000
if ctr_run_detached m1 $B/m1; then
	fail mems-local-refused "crun run succeeded: $(cg_read /kubepods/podm/m1 cpuset.mems.effective)"
else
	check_match mems-local-message \
		"*corecarve:*podm/m1/cpuset.mems.effective reads \"1\", not the carve's memory nodes \"0\"*refused*allow those nodes*" \
		"$(cat $B/m1/hooks.err $B/m1/crun.err 2>/dev/null)"
fi
check_eq mems-local-no-carve "" "$(carve_field m1 cpus)"
check_eq mems-local-no-record 0 "$(grep -c '/kubepods/podm' "$CC_LEDGER" || :)"
check_eq mems-local-pod-cpu-max "$podm_max" "$(cg_read /kubepods/podm cpu.max)"
check_eq mems-local-pod-mems 1 "$(cg_read /kubepods/podm cpuset.mems)"
node_ok mems-refused
if [ "$want_mode" = remote-partition ]; then
	check_eq mems-refused-root-effective "$ONLINE" "$(cg_read / cpuset.cpus.effective)"
	check_eq mems-refused-no-parked "" "$(cg_read /corecarve.parked cpuset.cpus)"
fi
# The message's fix: the pod allows both nodes; the same carve then runs
# its memory on its own node, and gives everything back.
if cg_write /kubepods/podm cpuset.mems 0-1; then pass mems-pod-both; else fail mems-pod-both "$CG_ERR"; fi
mk_bundle $B/m2 m2 '{class: latency, cpus: 2, memory: local}' /kubepods/podm/m2 200000
if ctr_run_detached m2 $B/m2; then pass m2-started; else fail m2-started "$CRUN_ERR"; fi
m2cpus=$(carve_field m2 cpus)
check_eq m2-mems "$(node_of_cpus "$m2cpus")" "$(cg_read /kubepods/podm/m2 cpuset.mems.effective)"
check_eq m2-mems-node0 0 "$(node_of_cpus "$m2cpus")"
check m2-deleted ctr_gone m2
check_eq m2-released "" "$(carve_field m2 cpus)"
check_eq m2-pod-cpu-max "$podm_max" "$(cg_read /kubepods/podm cpu.max)"
node_ok mems-gone
check mems-pod-removed cg_rmtree /kubepods/podm
