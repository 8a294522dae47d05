#!/bin/sh
# corecarve: small files and short functions, checked from the sources
# alone (no build).  `make lint-includes` runs it after the include graph.
#
#   scripts/size-lint.sh [DIR]     DIR: the tree to check (default: this one)
#
# Over the limits: a .c of plugin/ cgroup/ hooks/ cli/ longer than
# MAX_FILE lines, a function whose body is longer than MAX_FUNC lines
# (the body: between the "{" and the "}" that open and close it at column
# 0, the style of every file here).  Each one is reported.  One named in
# scripts/size-lint.known with its size then is a debt being paid off: it
# is reported and passes while it does not grow; anything else over a
# limit, or a known one grown, fails.  The known ones are counted.  A known one back under its limit
# is reported too, so its line leaves the file.
set -eu

MAX_FILE=800
MAX_FUNC=80
dir=${1:-$(dirname "$0")/..}
cd "$dir"
files=$(find plugin cgroup hooks cli -name '*.c' | sort)
{
	for f in $files; do
		printf 'file %s %s\n' "$f" "$(wc -l < "$f")"
	done
	# The body of a function: "{" alone at column 0 to "}" at column 0;
	# its name is the last word before "(" on the line that began the
	# signature.
	awk '
	/^[A-Za-z_].*\(/ && !body { sig = $0 }
	/^\{$/ { body = FNR; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
	/^\}/ && body { printf "func %s:%s %d\n", FILENAME, name, FNR - body - 1; body = 0 }
	' $files
} | awk -v maxfile=$MAX_FILE -v maxfunc=$MAX_FUNC -v known=scripts/size-lint.known '
BEGIN {
	while ((getline line < known) > 0) {
		if (line ~ /^#/ || line ~ /^[ \t]*$/)
			continue
		split(line, k, " ")
		debt[k[1] " " k[2]] = k[3]
	}
}
{
	what = $1 " " $2; n = $3
	limit = $1 == "file" ? maxfile : maxfunc
	unit = $1 == "file" ? "the file" : "the function"
	if (what in debt) {
		seen[what] = 1
		if (n > debt[what]) {
			printf "size-lint: %s %s: %d lines, grew from %d (limit %d): split it, do not grow it\n", $1, $2, n, debt[what], limit > "/dev/stderr"
			bad = 1
		} else if (n <= limit) {
			printf "size-lint: %s %s: %d lines, under the limit now: drop its line from %s\n", $1, $2, n, known
		} else {
			owed++
		}
	} else if (n > limit) {
		printf "size-lint: %s %s: %d lines, over the limit of %d: split %s by role\n", $1, $2, n, limit, unit > "/dev/stderr"
		bad = 1
	}
}
END {
	if (owed)
		printf "size-lint: %d known debts over the limits (%s)\n", owed, known
	for (w in debt)
		if (!(w in seen))
			printf "size-lint: %s: gone: drop its line from %s\n", w, known
	exit bad
}'
