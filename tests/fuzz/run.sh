#!/bin/sh
# Run libFuzzer targets: run.sh SECONDS BINARY...
#
# For each target: replay every checked-in seed and saved crash
# (tests/fuzz/corpus/<name>/, a regression test each), then fuzz for
# SECONDS with the seeds and what earlier runs found (build-fuzz/corpus/
# <name>/, where new inputs go).  A crash is saved as
# build-fuzz/crash/<name>-<hash>; copy it into tests/fuzz/corpus/<name>/
# once fixed.  Prints one line per target and a last line
#   fuzz: N targets, N failed, N runs
# Exit status 0 only when no target crashed, leaked or timed out.
set -u
secs=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
out=build-fuzz
mkdir -p "$out/crash" "$out/logs"
failed=0 total=0 runs=0
for bin in "$@"; do
	name=$(basename "$bin")
	seeds=$here/corpus/$name
	work=$out/corpus/$name
	log=$out/logs/$name.log
	mkdir -p "$work"
	total=$((total + 1))
	dict=
	[ -f "$here/$name.dict" ] && dict=-dict=$here/$name.dict
	# 1. Seeds one by one: each is a regression test, run without mutation.
	# A target without seeds would replay nothing (here nor in make unit's
	# tests/unit/test_fuzz_corpus.c): that is a failure, not a pass.
	if [ ! -d "$seeds" ]; then
		echo "fuzz: $name: no tests/fuzz/corpus/$name/: add at least one seed input there"
		failed=$((failed + 1))
		continue
	fi
	if ! "$bin" -runs=0 "$seeds" >"$log" 2>&1; then
		echo "fuzz: $name: a seed in tests/fuzz/corpus/$name fails (see $log)"
		tail -n 20 "$log"
		failed=$((failed + 1))
		continue
	fi
	# 2. Fuzz: -timeout per input, RSS bound, crashes into build-fuzz/crash.
	# shellcheck disable=SC2086 # $dict is one optional word
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$out/crash/$name-" $dict \
		"$work" "$seeds" >"$log" 2>&1
	rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -aE '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	runs=$((runs + ${n:-0}))
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		echo "fuzz: $name: FAILED (exit $rc) after ${n:-?} runs; input in $out/crash/, log $log"
		grep -aE 'ERROR|SUMMARY|==[0-9]+==|Test unit written' "$log" | head -n 8
	else
		printf 'fuzz: %-20s %8s runs in %ss, coverage %s, corpus %s files\n' "$name" "${n:-?}" "$secs" \
			"${cov:-?}" "$(ls "$work" | wc -l)"
	fi
done
echo "fuzz: $total targets, $failed failed, $runs runs"
[ "$failed" -eq 0 ]
