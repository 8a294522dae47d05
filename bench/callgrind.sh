#!/bin/sh
# Instructions per hook decision, counted by callgrind: a figure that does
# not move with the load of a shared machine, unlike wall time (it counts
# user-space instructions only: the system calls' kernel time, which the
# wall-time tables include, is not in it).  With strace installed, the
# system calls per decision too: (calls for N+1 invocations - calls for 1)
# / N, so what the setup does cancels out.
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
trap 'rm -rf "$out"' EXIT INT TERM

# Mega-instructions per decision, inside measured_decision() only (the
# cache is primed outside it).
count() {
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" --toggle-collect=measured_decision \
		"$decide" --callgrind --only "$1" --mode "$2" --n "$n" >"$out/log" 2>&1 || {
		sed 's/^/callgrind: /' "$out/log" | tail -n 5 >&2
		return 1
	}
	grep -q "misses=0" "$out/log" || { echo "callgrind: $1 $2: the cache was missed" >&2; return 1; }
	awk -v n="$n" '/^(summary|totals):/ { t = $2 } END { printf "%.2f", t / n / 1e6 }' "$out/cg"
}

# System calls per decision (strace -c), or "-".
syscalls() {
	command -v strace >/dev/null || { echo -; return 0; }
	for k in 1 $((n + 1)); do
		strace -f -c -o "$out/st.$k" "$decide" --callgrind --only "$1" --mode "$2" --n "$k" >/dev/null 2>&1 || {
			echo -
			return 0
		}
	done
	a=$(awk '$NF == "total" { print $4 }' "$out/st.1")
	b=$(awk '$NF == "total" { print $4 }' "$out/st.$((n + 1))")
	echo "$a $b" | awk -v n="$n" '{ printf "%.0f", ($2 - $1) / n }'
}

printf '%-9s %5s %10s %10s %10s %8s %12s %12s\n' host PUs "cold Mi" "warm Mi" "empty Mi" "cold/warm" "syscalls cold" "warm"
for h in "$@"; do
	pus=$("$decide" --callgrind --only "$h" --mode empty --n 1 2>/dev/null | sed -n 's/.* pus=\([0-9]*\).*/\1/p')
	if [ -z "$pus" ]; then
		echo "$h: skipped (fixture absent)"
		continue
	fi
	c=$(count "$h" cold) || continue
	w=$(count "$h" warm) || continue
	e=$(count "$h" empty) || continue
	sc=$(syscalls "$h" cold)
	sw=$(syscalls "$h" warm)
	printf '%-9s %5s %10s %10s %10s %7.1fx %12s %12s\n' "$h" "$pus" "$c" "$w" "$e" \
		"$(echo "$c $w" | awk '{ print $1 / $2 }')" "$sc" "$sw"
	echo "BENCH callgrind host=$h pus=$pus cold_mi=$c warm_mi=$w empty_mi=$e syscalls_cold=$sc syscalls_warm=$sw n=$n"
done
echo "(millions of instructions per decision, user space only; cold: hwloc discovery, warm: cached model,"
echo " both with the busy ledger of the decision table; empty: cached model, empty ledger; system calls"
echo " per decision from strace -c)"
