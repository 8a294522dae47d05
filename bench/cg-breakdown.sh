#!/bin/sh
# Where a decision's (or a release's) instructions go: callgrind's inclusive
# counts of the hook's main steps, per invocation.  Exact and repeatable,
# unlike wall time on a shared machine.
#
# Usage: cg-breakdown.sh DECIDE HOST MODE N [decision|release]
#   (CG_NODE=DIR keeps the prepared node there, for the next call)
set -eu
decide=$1 host=$2 mode=$3 n=$4 what=${5:-decision}
out=$(mktemp -d "${TMPDIR:-/tmp}/corecarve-bench-cgb-XXXXXX")
node=${CG_NODE:-$out/node}
trap 'rm -rf "$out"' EXIT INT TERM
# The node natively first (callgrind.sh says why).
"$decide" --callgrind --only "$host" --mode empty --n 1 --node "$node" >/dev/null
valgrind --tool=callgrind --callgrind-out-file="$out/cg" --toggle-collect="measured_$what" \
	"$decide" --callgrind --only "$host" --mode "$mode" --n "$n" --node "$node" >"$out/log" 2>&1 || {
	tail -n 5 "$out/log" >&2
	exit 1
}
callgrind_annotate --inclusive=yes --threshold=100 "$out/cg" 2>/dev/null >"$out/ann"
total=$(awk '/^(summary|totals):/ { t = $2 } END { print t }' "$out/cg")
printf '%s %s %s: %.2f Mi per invocation\n' "$host" "$mode" "$what" "$(echo "$total $n" | awk '{ print $1 / $2 / 1e6 }')"
for f in cc_policy_load cc_topo_cache_load cc_ledger_open_index ledger_parse cc_fnv1a cc_ledger_gc \
	cc_ledger_lookup cc_ledger_load_all cc_allocate cc_effect_cgroup_plan cc_cg_plan_carve cc_noderecs_parse \
	cc_noderecs_json cc_ledger_commit ledger_serialize json_dumps cc_effects_apply cc_cg_apply_plan \
	cc_container_release cc_carve_release cc_effects_undo cc_cg_undo_carve cc_ledger_closep cc_topo_free \
	cc_policy_free; do
	awk -v f="$f" -v n="$n" '{ gsub(",", "", $1) } $NF ~ (":" f "$") {
		printf "  %-24s %8.3f Mi\n", f, $1 / n / 1e6; exit }' "$out/ann"
done
