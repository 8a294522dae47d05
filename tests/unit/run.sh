#!/bin/sh
# Run every Check suite binary given as an argument; print each failure and
# one closing line "unit: N passed, N failed" (N counted in test cases).
passed=0 failed=0 broken=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
	if [ -z "$line" ]; then
		printf '%s\n' "$out"
		echo "unit: $(basename "$t") did not finish (exit $rc)"
		broken=$((broken + 1))
		continue
	fi
	checks=$(printf '%s' "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p')
	fails=$(printf '%s' "$line" | sed -n 's/.*Failures: \([0-9]*\).*/\1/p')
	errs=$(printf '%s' "$line" | sed -n 's/.*Errors: \([0-9]*\).*/\1/p')
	bad=$((fails + errs))
	passed=$((passed + checks - bad))
	failed=$((failed + bad))
	# Loud skips (fixtures absent) and failures are shown; passes are not.
	printf '%s\n' "$out" | grep -E ':(F|E):|SKIPPED' || true
	printf '%-28s %s\n' "$(basename "$t")" "$line"
done
failed=$((failed + broken))
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
