#!/bin/sh
# Instructions per hook decision and per release, counted by callgrind: a
# figure that does not move with the load of a shared machine, unlike wall
# time (it counts user-space instructions only: the system calls' kernel
# time, which the wall-time tables include, is not in it).  With strace
# installed, the system calls per decision and release too: (calls for N+1
# invocations - calls for 1) / N, so what the setup does cancels out.
#
# The busy node is prepared once, natively (decide --node DIR): its prefill
# is hundreds of hook runs, which valgrind would take minutes over.
#
# Usage: callgrind.sh DECIDE N HOST...
#   DECIDE  build/bench/decide;  N  invocations per host and mode
set -eu

decide=$1
n=$2
shift 2
command -v valgrind >/dev/null || {
	echo "callgrind: valgrind not installed (apt-get install valgrind); skipped"
	exit 0
}
out=$(mktemp -d "${TMPDIR:-/tmp}/corecarve-bench-cg-XXXXXX")
nodes=$(mktemp -d "/dev/shm/corecarve-bench-cgnode-XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$out" "$nodes"' EXIT INT TERM

# Mega-instructions per invocation, inside measured_$3() only (the node
# and the cache are prepared outside it).
count() {
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" --toggle-collect="measured_$3" \
		"$decide" --callgrind --only "$1" --mode "$2" --n "$n" --node "$nodes/$1" >"$out/log" 2>&1 || {
		sed 's/^/callgrind: /' "$out/log" | tail -n 5 >&2
		return 1
	}
	grep -q "misses=0" "$out/log" || { echo "callgrind: $1 $2: the cache was missed" >&2; return 1; }
	awk -v n="$n" '/^(summary|totals):/ { t = $2 } END { printf "%.2f", t / n / 1e6 }' "$out/cg"
}

# System calls per decision and release together (strace -c), or "-".
syscalls() {
	command -v strace >/dev/null || { echo -; return 0; }
	for k in 1 $((n + 1)); do
		strace -f -c -o "$out/st.$k" "$decide" --callgrind --only "$1" --mode "$2" --n "$k" --node "$nodes/$1" \
			>/dev/null 2>&1 || {
			echo -
			return 0
		}
	done
	a=$(awk '$NF == "total" { print $4 }' "$out/st.1")
	b=$(awk '$NF == "total" { print $4 }' "$out/st.$((n + 1))")
	echo "$a $b" | awk -v n="$n" '{ printf "%.0f", ($2 - $1) / n }'
}

printf '%-9s %5s %6s %6s %9s %9s %9s %9s %10s %12s\n' host PUs carves recs "cold Mi" "warm Mi" "empty Mi" \
	"rel Mi" "syscalls" "(warm pair)"
for h in "$@"; do
	info=$("$decide" --callgrind --only "$h" --mode empty --n 1 --node "$nodes/$h" 2>/dev/null) || true
	pus=$(echo "$info" | sed -n 's/.* pus=\([0-9]*\).*/\1/p')
	if [ -z "$pus" ]; then
		echo "$h: skipped (fixture absent)"
		continue
	fi
	carves=$(echo "$info" | sed -n 's/.* carves=\([0-9]*\).*/\1/p')
	recs=$(echo "$info" | sed -n 's/.* records=\([0-9]*\).*/\1/p')
	c=$(count "$h" cold decision) || continue
	w=$(count "$h" warm decision) || continue
	e=$(count "$h" empty decision) || continue
	r=$(count "$h" warm release) || continue
	sw=$(syscalls "$h" warm)
	printf '%-9s %5s %6s %6s %9s %9s %9s %9s %10s\n' "$h" "$pus" "$carves" "$recs" "$c" "$w" "$e" "$r" "$sw"
	echo "BENCH callgrind host=$h pus=$pus carves=$carves records=$recs cold_mi=$c warm_mi=$w empty_mi=$e release_mi=$r syscalls_warm_pair=$sw n=$n"
done
echo "(millions of instructions per invocation, user space only; cold: no topology cache, warm: the cache,"
echo " both with the busy ledger of the decision table; empty: the cache, no carves; rel: the warm decision's"
echo " release (poststop); syscalls: per warm decision and its release together, from strace -c)"
