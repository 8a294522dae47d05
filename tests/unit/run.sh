#!/bin/sh
# Run every Check suite binary given as an argument; print each failure,
# each skipped test case, and one closing line
#   unit: N passed, N failed, N skipped
# (N counted in test cases: a loop test's iterations count one each).
#
# A test skips through testlib's cc_test_skip, which prints
#   SKIPPED: <binary>:<test>:<iteration>: <reason>
# A test case that printed one or more such lines counts as skipped, once,
# and not as passed; one that skipped and then failed counts as failed.
# A line starting "SKIPPED" in any other form is a skip the runner cannot
# count: the suite counts as broken (failed).
#
# Exit status: non-zero when a test failed or a suite did not finish, and,
# with CI set (CI=true, as .ci/run does; anything but empty, 0 or false),
# when a test case was skipped: CI is where every test must run.
# A test case without a timeout of its own gets 30 s, not Check's 4: CI's
# machine is a loaded 2-core one, where a test that runs the binary a few
# times (under strace, on a fixture's topology) took longer than 4 s.
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-30}"
passed=0 failed=0 skipped=0 broken=0
# Each suite runs with hostguard.so preloaded (tests/unit/hostguard.c): a
# unit test whose code opens the host's /sys or /proc fails (issue #42;
# tests/unit/hostguard.known lists the debts, hostguard.py judges).
# CC_HOSTGUARD names the shim; empty or 0 runs the suites bare (the
# sanitizer build: ASan must come first in the preload list).  First the
# guard shows that it catches one: the CLI's status without --root reads
# the host's topology.
guard=${CC_HOSTGUARD:-}
case $guard in 0 | false | no) guard= ;; esac
guardlog=
if [ -n "$guard" ]; then
	guardlog=$(mktemp -d)/hostguard.log
	trap 'rm -rf "$(dirname "$guardlog")"' EXIT
	judge=$(dirname "$0")/hostguard.py
	if [ -n "${CORECARVE_RELEASE_BIN:-}" ]; then
		CC_HOSTGUARD_LOG=$guardlog LD_PRELOAD=$guard "$CORECARVE_RELEASE_BIN" status >/dev/null 2>&1
		g=$(python3 "$judge" corecarve "$guardlog")
		if [ $? -ne 3 ] || ! printf '%s\n' "$g" | grep -q '^hostguard: corecarve: .* read the host: /sys/'; then
			printf '%s\n' "$g" | tail -n 5
			echo "unit: hostguard did not catch \`corecarve status\` reading the host: the guard is broken"
			exit 1
		fi
		echo "unit: hostguard catches a host read ($(printf '%s\n' "$g" | grep -c ' read the host: ') paths by \`corecarve status\` without --root)"
		rm -f "$guardlog"
	fi
fi
# What each broken suite left, said again just before the closing line: a
# log's tail (all that CI's report keeps) then names the suite, its exit
# status and its last words, not only a count.
unfinished=
for t in "$@"; do
	name=$(basename "$t")
	if [ -n "$guard" ]; then
		out=$(CC_HOSTGUARD_LOG=$guardlog LD_PRELOAD=$guard "$t" 2>&1)
		rc=$?
		g=$(python3 "$judge" "$name" "$guardlog")
		if [ $? -ne 0 ]; then
			unfinished="$unfinished$(printf '\nunit: %s read the host (tests/unit/hostguard.c):\n%s' "$name" \
				"$(printf '%s\n' "$g" | grep ' read the host: ' | head -n 8 | sed 's/^/    /')")"
			broken=$((broken + 1))
		fi
		printf '%s\n' "$g" | grep -v ' read the host: ' || :
		rm -f "$guardlog"
	else
		out=$("$t" 2>&1)
		rc=$?
	fi
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
	if [ -z "$line" ]; then
		printf '%s\n' "$out"
		echo "unit: $name did not finish (exit $rc)"
		unfinished="$unfinished$(printf '\nunit: %s did not finish (exit %s); its last lines:\n%s' \
			"$name" "$rc" "$(printf '%s\n' "$out" | tail -n 8 | sed 's/^/    /')")"
		broken=$((broken + 1))
		continue
	fi
	checks=$(printf '%s' "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p')
	fails=$(printf '%s' "$line" | sed -n 's/.*Failures: \([0-9]*\).*/\1/p')
	errs=$(printf '%s' "$line" | sed -n 's/.*Errors: \([0-9]*\).*/\1/p')
	bad=$((fails + errs))
	# Failures (Check: file:line:F|E:tcase:test:iteration: message) are
	# shown; of the skip lines one per skipped test case; passes are not.
	# The last line of the awk output is "<skipped> <malformed>".
	res=$(printf '%s\n' "$out" | awk -v bin="$name" '
		/^[^:]+:[0-9]+:[FE]:[^:]*:[^:]+:[0-9]+: / {
			split($0, f, ":")
			failed[f[5] ":" f[6]] = 1
			print
			next
		}
		/^SKIPPED/ {
			if (match($0, /^SKIPPED: [^: ]+:[A-Za-z_][A-Za-z0-9_]*:[0-9]+: /) &&
			    split(substr($0, 10, RLENGTH - 11), f, ":") == 3 && f[1] == bin) {
				k = f[2] ":" f[3]
				if (!(k in seen)) {
					seen[k] = 1
					order[n++] = k
					first[k] = $0
				}
			} else {
				print "unit: " bin ": a skip not from cc_test_skip, so not countable: " $0
				malformed++
			}
			next
		}
		END {
			for (i = 0; i < n; i++)
				if (!(order[i] in failed)) {
					print first[order[i]]
					s++
				}
			print s + 0, malformed + 0
		}')
	printf '%s\n' "$res" | sed '$d'
	last=$(printf '%s\n' "$res" | tail -n 1)
	s=${last% *} malformed=${last#* }
	passed=$((passed + checks - bad - s))
	failed=$((failed + bad))
	skipped=$((skipped + s))
	if [ "$malformed" -gt 0 ]; then
		broken=$((broken + 1))
	fi
	printf '%-28s %s%s\n' "$name" "$line" "$([ "$s" -eq 0 ] || echo ", Skipped: $s")"
done
failed=$((failed + broken))
strict=0
case ${CI:-} in
'' | 0 | false) ;;
*) strict=1 ;;
esac
if [ "$strict" = 1 ] && [ "$skipped" -gt 0 ]; then
	echo "unit: CI=$CI and $skipped test case(s) skipped (SKIPPED lines above): in CI every test must run (make deps; fixtures in ../shared/fixtures or \$CC_SHARED_DIR/fixtures)"
fi
[ -z "$unfinished" ] || printf '%s\n' "$unfinished" | sed 1d
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
[ "$strict" = 0 ] || [ "$skipped" -eq 0 ] || exit 1
exit 0
