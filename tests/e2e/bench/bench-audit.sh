#!/bin/sh
# bench-audit: how long `corecarve audit` takes as the cgroup tree grows
# (`make bench`; not part of `make e2e`).  A kubelet-like tree under /bench:
# pods of 4 containers, cpuset and cpu enabled everywhere, every other
# container with a CFS quota and some with a sleeping task; two containers
# carved by the real hook.  The audit must stay clean at every size; its
# time should grow linearly: one pass over the tree, O(carves + cgroups).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	ctr_cleanup_all
	cg_rmtree bench || true
}
trap cleanup EXIT

write_policy "$CC_HOOK_POLICY"
B=/run/bbench
cg_mkchain bench/carve1/c0
cg_rmtree bench/carve1/c0
mk_bundle $B/c1 c1 '{class: latency, cpus: 2}' /bench/carve1/c1 50000
ctr_run_detached c1 $B/c1 || fail c1-started "$CRUN_ERR"
mk_bundle $B/c2 c2 '{class: latency, cpus: 1}' /bench/carve2/c2
ctr_run_detached c2 $B/c2 || fail c2-started "$CRUN_ERR"

made=0
pod=0
# grow TOTAL: add pods of 4 containers until /bench holds TOTAL cgroups.
grow() {
	while [ "$made" -lt "$1" ]; do
		pod=$((pod + 1))
		d=$CGROOT/bench/pod$pod
		mkdir "$d"
		echo "+cpuset +cpu" >"$d/cgroup.subtree_control"
		for c in 1 2 3 4; do
			mkdir "$d/c$c"
			if [ $((c % 2)) = 0 ]; then echo "50000 100000" >"$d/c$c/cpu.max"; fi
		done
		# One task in every tenth pod, under the quota of its c2.
		if [ $((pod % 10)) = 0 ]; then
			sh -c "echo \$\$ >$d/c2/cgroup.procs; exec sleep 1000" &
			pids="$pids $!"
		fi
		made=$((made + 5))
	done
}

uptime_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }

field() { printf '%s\n' "$1" | sed -n "s/^  \"$2\": \\([0-9.]*\\),*$/\\1/p"; }

for total in 100 500 1000 2000; do
	grow "$total"
	n=$(find $CGROOT -type d | wc -l)
	best=
	for i in 1 2 3; do
		t0=$(uptime_cs)
		out=$("$CC_BIN" audit --json --sample-ms 0 2>&1) && rc=0 || rc=$?
		t1=$(uptime_cs)
		wall=$(((t1 - t0) * 10))
		rd=$(field "$out" read_ms)
		ck=$(field "$out" check_ms)
		if [ -z "$best" ] || [ "$wall" -lt "$best" ]; then best=$wall; brd=$rd; bck=$ck; fi
	done
	check_eq "clean-$total" 0 "$rc"
	[ "$rc" = 0 ] || info "audit at $total: $(printf '%s' "$out" | head -c 600 | tr '\n' ' ')"
	cgs=$(field "$out" cgroups)
	tasks=$(field "$out" tasks)
	info "BENCH audit of $cgs cgroups ($n on the node, $tasks tasks read): wall ${best} ms (best of 3), read ${brd} ms, checks ${bck} ms"
	eval "wall_$total=$best"
done
# The cost of one more cgroup, from the two ends of the series.  Like the
# other benchmarks (mk/bench.mk) nothing asserts a time: under TCG on a
# shared host the wall time moves with the host's load.
info "BENCH audit: $(((wall_2000 - wall_100) * 1000 / 1900)) us per cgroup (2000 vs 100 cgroups), 1000 cgroups in $wall_1000 ms"
