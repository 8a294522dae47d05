#!/bin/sh
# 45-busy-node: a busy node, not a quiet one (issue #40).  Three pods, each
# with a CFS quota of its own and an uncarved sidecar.  In each of three
# rounds ten containers start at once with real crun, spread over the pods:
# four exclusive carves (three latency, one isolated: 4 of the 6 free
# performance cores, minShared kept), two background (shared) containers, one without the
# annotation, and three that must be refused (too big, malformed, an
# unknown class).  Then the seven that started go at once, in a shuffled
# order.  While they live:
#   - exactly the seven start, and each refusal says why;
#   - every carve runs on exactly its CPUs, no CPU in two;
#   - no cgroup that is no carve runs on a carve's CPUs or parked siblings
#     (the sidecars, the background and the unannotated containers): the
#     kernel's partitions keep them off on 6.12 and 7.x, corecarve's
#     cpusets on 6.1 (a carve narrows what is beside it and its ancestors,
#     the hook narrows a container started beside a live carve);
#   - a pod holding a carve has no quota;
#   - `corecarve audit` is clean.
# After each round every file corecarve may have written reads as before
# the round (on 6.1 an inheriting cpuset.cpus of a cgroup with tasks may
# read its parent's CPUs: the kernel refuses the empty write there).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b45 S=/run/s45
mkdir -p $S
PODS="kubepods/bpa kubepods/bpb kubepods/bpc"
cleanup() {
	ctr_cleanup_all
	for _p in $PODS; do cg_rmtree "$_p" || true; done
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"
t0=$(date +%s)
stamp() { info "t+$(($(date +%s) - t0))s: $*"; }
# Ten hooks queue for the ledger lock at once (41-concurrent says why 30 s).
CC_HOOK_ENV=CORECARVE_LOCK_TIMEOUT=30
if cg_has_exclusive; then MODE=partitions; else MODE=cpuset-only; fi
info "kernel $CC_KERNEL: $MODE"

# node_state: every cgroup corecarve may write, as it reads now: the root's
# children, /kubepods's, and the pods' containers (path, cpuset.cpus,
# cpu.max, partition, exclusive set), sorted by path.
node_state() {
	for _d in "$CGROOT"/ "$CGROOT"/*/ "$CGROOT"/kubepods/*/ "$CGROOT"/kubepods/*/*/; do
		[ -d "$_d" ] || continue
		_c=${_d#"$CGROOT"}
		_c=/${_c#/}
		_c=${_c%/}
		printf '%s|%s|%s|%s|%s\n' "${_c:-/}" "$(cg_read "$_c" cpuset.cpus)" "$(cg_read "$_c" cpu.max)" \
			"$(cg_read "$_c" cpuset.cpus.partition)" "$(cg_read "$_c" cpuset.cpus.exclusive)"
	done | sort
}

# as_before TAG BEFORE: the node reads as BEFORE (node_state's lines); on
# cpuset-only, an empty cpuset.cpus that now reads its parent's effective
# CPUs passes (6.1 refuses the empty write on a cgroup with tasks).
as_before() {
	node_state >$S/now
	_why=
	while IFS='|' read -r _c _cpus _max _part _excl; do
		_now=$(grep "^$_c|" $S/now || :)
		if [ -z "$_now" ]; then
			_why="$_why $_c: gone;"
			continue
		fi
		[ "$_now" = "$_c|$_cpus|$_max|$_part|$_excl" ] && continue
		_ncpus=$(printf '%s\n' "$_now" | cut -d'|' -f2)
		if [ "$MODE" = cpuset-only ] && [ -z "$_cpus" ] &&
			[ "$_now" = "$_c|$_ncpus|$_max|$_part|$_excl" ] &&
			[ "$_ncpus" = "$(cg_read "$(dirname "$_c")" cpuset.cpus.effective)" ]; then
			info "$1: $_c cpuset.cpus reads '$_ncpus', its parent's (6.1: the empty write refused with tasks)"
			continue
		fi
		_why="$_why $_c: was '$_cpus|$_max|$_part|$_excl', now '${_now#*|}';"
	done <"$2"
	_new=$(cut -d'|' -f1 $S/now | grep -vxF -f "$(cut -d'|' -f1 "$2" >$S/paths; echo $S/paths)" || :)
	[ -z "$_new" ] || _why="$_why new: $(echo "$_new" | tr '\n' ' ');"
	check_eq "$1-node-as-before" "" "$_why"
}

# off_carves TAG FILE: every cgroup with tasks that is no carve and holds
# none runs on none of the carves' CPUs or parked siblings (FILE: carves).
off_carves() {
	_taken=$(union "$2" all)
	_why=
	for _f in $(find "$CGROOT" -name cgroup.procs); do
		_d=${_f%/cgroup.procs}
		_c=/${_d#"$CGROOT"}
		_c=/${_c#/}
		[ -s "$_f" ] || continue
		[ "$_c" = / ] && continue
		case "$_c" in /corecarve.parked*) continue ;; esac
		# A carve's cgroup, or one that holds one, is not "beside".
		awk -v c="$_c" '$4 == c || index($4, c "/") == 1 { f = 1 } END { exit !f }' "$2" && continue
		_eff=$(cg_read "$_c" cpuset.cpus.effective)
		[ -n "$_eff" ] || continue
		disjoint "$_eff" "$_taken" || _why="$_why $_c runs on '$_eff';"
	done
	check_eq "$1-nothing-else-on-the-carves" "" "$_why"
}

# ---- the pods --------------------------------------------------------------------
for p in $PODS; do
	cg_mkchain "$p" || fail "$p-made" "cannot make /$p"
	cg_write "/$p" cpu.max "300000 100000" || fail "$p-quota" "$CG_ERR"
	mk_bundle "$B/side-${p#kubepods/}" "side-${p#kubepods/}" '' "/$p/side"
	if ctr_run_detached "side-${p#kubepods/}" "$B/side-${p#kubepods/}"; then pass "${p#kubepods/}-sidecar-started"; else
		fail "${p#kubepods/}-sidecar-started" "$CRUN_ERR"
	fi
done

# ---- three rounds ------------------------------------------------------------------
# The ten of a round: ID ANNOTATION POD WANT (started or refused).
cat >$S/ten <<'EOF'
e1|{class: latency, cpus: 1}|bpa|started
e2|{class: latency, cpus: 1}|bpb|started
e3|{class: latency, cpus: 1}|bpc|started
e4|{class: isolated, cpus: 1}|bpa|started
g1|{class: background, cpus: 1}|bpb|started
g2|{class: background, cpus: 1}|bpc|started
u1||bpc|started
x1|{class: latency, cpus: 8}|bpb|refused
x2|{class: latency, cpus: zero}|bpa|refused
x3|{class: warp, cpus: 1}|bpc|refused
EOF
for r in 1 2 3; do
	R=r$r
	node_state >$S/before-$R
	while IFS='|' read -r id ann pod want; do
		mk_bundle "$B/$R-$id" "$R-$id" "$ann" "/kubepods/$pod/$R-$id"
	done <$S/ten
	stamp "$R: bundles"
	while IFS='|' read -r id ann pod want; do
		(if ctr_run_detached "$R-$id" "$B/$R-$id" >/dev/null 2>&1; then echo started; else echo refused; fi \
			>"$B/$R-$id/rc") &
	done <$S/ten
	wait
	stamp "$R: started"
	why=
	while IFS='|' read -r id ann pod want; do
		got=$(cat "$B/$R-$id/rc")
		[ "$got" = "$want" ] || why="$why $id $got ($(cat "$B/$R-$id/hooks.err" "$B/$R-$id/crun.err" 2>/dev/null | head -n 2 | tr '\n' ' '));"
		if [ "$got" = refused ]; then
			grep -qs 'corecarve:' "$B/$R-$id/hooks.err" || why="$why $id refused without corecarve's word;"
			rm -f "$CC_CTR_DB/$R-$id"
		fi
	done <$S/ten
	check_eq "$R-seven-started-three-refused" "" "$why"
	if carves $S/c; then
		check_eq "$R-four-carves" 4 "$(grep -c . $S/c || :)"
		carves_hold "$R" $S/c
		off_carves "$R" $S/c
		for p in bpa bpb bpc; do
			check_eq "$R-$p-no-quota-while-carved" "max 100000" "$(cg_read /kubepods/$p cpu.max)"
		done
	else
		fail "$R-ledger-valid" "$(cat $S/c.err)"
	fi
	if out=$("$CC_BIN" audit --sample-ms 0 2>&1); then pass "$R-audit-clean"; else fail "$R-audit-clean" "$out"; fi
	# All at once, shuffled.
	grep '|started$' $S/ten | cut -d'|' -f1 | shuf >$S/order
	info "$R: deleting in the order $(tr '\n' ' ' <$S/order)"
	while read -r id; do
		(ctr_gone "$R-$id" >/dev/null 2>&1 || echo "$id: $(cat "$B/$R-$id/delete.err" 2>/dev/null)" >"$B/$R-$id/delete.fail") &
	done <$S/order
	wait
	stamp "$R: deleted"
	check_eq "$R-deleted" "" "$(cat "$B/$R"-*/delete.fail 2>/dev/null)"
	if carves $S/c; then
		check_eq "$R-ledger-empty" "" "$(tr '\n' ' ' <$S/c)"
		# A carve left: what its poststop said.
		while read -r id _; do
			info "$R: $id left; its hooks said: $(cat "$B/$id/hooks.err" 2>/dev/null | tr '\n' ' ')"
		done <$S/c
	else
		fail "$R-ledger-valid-after" "$(cat $S/c.err)"
	fi
	as_before "$R" $S/before-$R
	if out=$("$CC_BIN" audit --sample-ms 0 2>&1); then pass "$R-audit-clean-after"; else fail "$R-audit-clean-after" "$out"; fi
done
for p in bpa bpb bpc; do
	check "$p-sidecar-deleted" ctr_gone "side-$p"
done
