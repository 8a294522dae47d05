#!/bin/sh
# corecarve: the walls between module families, checked from the sources
# alone (no build).  `make lint-includes`; `make check` runs it first.
#
#   scripts/include-graph.sh [DIR]     DIR: the tree to check (default: this one)
#
# A family is what a file belongs to: in plugin/ its name up to the first
# "_" or "." (ledger.c, ledger_recs.c and ledger_int.h are family
# "ledger"; topo_cache.c is "topo"); in cgroup/, hooks/ and cli/ the
# folder.  From every #include "..." of plugin/ cgroup/ hooks/ cli/ it
# builds the graph of families (an edge from the includer's family to the
# included header's) and fails:
#   - when the graph has a cycle: it names the families around it and, for
#     each step, one include that makes it;
#   - when a file includes a family's private header (<family>_int.h)
#     from outside that family.
# Includes within a family are its own business and never a cycle.  The
# tests (tests/) are not checked: white-box tests include private headers.
set -eu

dir=${1:-$(dirname "$0")/..}
cd "$dir"
files=
for d in plugin cgroup hooks cli; do
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] && files="$files $f"
	done
done
if [ -z "$files" ]; then
	echo "include-graph: $dir: no plugin/ cgroup/ hooks/ cli/ sources" >&2
	exit 2
fi

# shellcheck disable=SC2086 # one word per file, none with a space
exec awk '
function base(p) { sub(/.*\//, "", p); return p }
function family(p,   d, b) {
	d = p; sub(/\/[^\/]*$/, "", d); sub(/.*\//, "", d)
	if (d != "plugin")
		return d
	b = base(p); sub(/[_.].*/, "", b)
	return b
}
FNR == 1 { nfiles++; fam[FILENAME] = family(FILENAME); have[base(FILENAME)] = FILENAME
	   order[nfiles] = FILENAME }
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	n++; from[n] = FILENAME; to[n] = inc; line[n] = FNR
}
END {
	bad = 0
	for (i = 1; i <= n; i++) {
		if (!(to[i] in have))
			continue  # a system or generated header: not a family of ours
		a = fam[from[i]]; b = fam[have[to[i]]]
		if (to[i] ~ /_int\.h$/) {
			owner = base(to[i]); sub(/_int\.h$/, "", owner)
			if (a != owner) {
				printf "include-graph: %s:%d includes %s, private to the %s family (%s*.c): use %s.h\n",
				       from[i], line[i], to[i], owner, owner, owner > "/dev/stderr"
				bad = 1
			}
		}
		if (a == b || ((a, b) in edge))
			continue
		edge[a, b] = from[i] ":" line[i] " includes " to[i]
		adj[a] = adj[a] " " b
	}
	# Depth-first over the families in file order, so the cycle named is
	# the same on every run.
	for (i = 1; i <= nfiles; i++) {
		v = fam[order[i]]
		if (!color[v] && dfs(v)) {
			bad = 1
			break
		}
	}
	if (!bad) {
		for (v in color)
			nfam++
		printf "include-graph: %d files, %d families: no include cycle; every _int.h stays in its family\n", nfiles, nfam
	}
	exit bad
}
function dfs(v,   k, nb, w, i, j, path) {
	color[v] = 1; stack[++sp] = v
	k = split(adj[v], nb, " ")
	for (i = 1; i <= k; i++) {
		w = nb[i]
		if (color[w] == 1) {
			for (j = 1; stack[j] != w; j++)
				;
			path = ""
			for (; j <= sp; j++)
				path = path stack[j] " -> "
			printf "include-graph: include cycle between families: %s%s\n", path, w > "/dev/stderr"
			for (j = 1; stack[j] != w; j++)
				;
			for (; j <= sp; j++)
				printf "  %s -> %s: %s\n", stack[j], (j < sp ? stack[j + 1] : w),
				       edge[stack[j], (j < sp ? stack[j + 1] : w)] > "/dev/stderr"
			print "  (forward-declare the struct, or move the shared type or function to the family that owns it)" > "/dev/stderr"
			return 1
		}
		if (!color[w] && dfs(w))
			return 1
	}
	color[v] = 2; sp--
	return 0
}
' $files
