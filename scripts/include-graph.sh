#!/bin/sh
# corecarve: the walls between module families, checked from the sources
# alone (no build).  `make lint-includes`; `make check` runs it first.
#
#   scripts/include-graph.sh [DIR]     DIR: the tree to check (default: this one)
#
# A family is what a file belongs to: in plugin/<folder>/ its name up to
# the first "_" or "." (ledger.c, ledger_recs.c and ledger_int.h are
# family "ledger"; topo_cache.c is "topo"); in cgroup/, hooks/ and cli/
# the folder.  plugin/'s folders group the families by role (core/,
# topo/, config/, alloc/, effects/, ledger/, flows/, report/: README.md,
# "Layout"); the folder is not part of a family's name.  It fails:
#   - when a .c or .h lies directly in plugin/ or deeper than
#     plugin/<folder>/: every plugin file is in exactly one role folder;
#   - when a family's files are in two folders of plugin/: a family is
#     one module, and a newcomer finds all of it with one `ls`;
#   - when the graph of families, built from every #include "..." of
#     plugin/ cgroup/ hooks/ cli/ (an edge from the includer's family to
#     the included header's), has a cycle: it names the families around
#     it and, for each step, one include that makes it;
#   - when a file includes a family's private header (<family>_int.h)
#     from outside that family.
# Includes within a family are its own business and never a cycle.  The
# tests (tests/) are not checked: white-box tests include private headers.
set -eu

dir=${1:-$(dirname "$0")/..}
cd "$dir"
bad=0
# Every file in a folder: none in plugin/ itself, none a level too deep.
for f in plugin/*.c plugin/*.h plugin/*/*/*.c plugin/*/*/*.h; do
	[ -f "$f" ] || continue
	fam=${f##*/}
	fam=${fam%%[_.]*}
	home=
	for g in plugin/*/"$fam".* plugin/*/"$fam"_*; do
		[ -f "$g" ] && [ "$g" != "$f" ] && home=${g%/*}/ && break
	done
	if [ -n "$home" ]; then
		echo "include-graph: $f: not in a role folder: git mv it to $home, with the rest of the $fam family" >&2
	else
		echo "include-graph: $f: not in a role folder: every plugin file is in plugin/<folder>/; git mv it to the one its role names (README.md, \"Layout\")" >&2
	fi
	bad=1
done
files=
for d in plugin/*/ cgroup hooks cli; do
	d=${d%/}
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] && files="$files $f"
	done
done
if [ -z "$files" ]; then
	echo "include-graph: $dir: no plugin/*/ cgroup/ hooks/ cli/ sources" >&2
	exit 2
fi

# shellcheck disable=SC2086 # one word per file, none with a space
exec awk -v bad="$bad" '
function base(p) { sub(/.*\//, "", p); return p }
function folder(p) { sub(/\/[^\/]*$/, "", p); return p }
function family(p,   b) {
	if (p !~ /^plugin\//) {
		sub(/\/.*/, "", p)
		return p
	}
	b = base(p); sub(/[_.].*/, "", b)
	return b
}
FNR == 1 { nfiles++; fam[FILENAME] = family(FILENAME); have[base(FILENAME)] = FILENAME
	   order[nfiles] = FILENAME
	   f = fam[FILENAME]; d = folder(FILENAME); dirs[d] = 1
	   if (!((f, d) in nin)) {
		   nd[f]++; fdir[f, nd[f]] = d
	   }
	   nin[f, d]++; which[f, d] = which[f, d] " " FILENAME }
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	n++; from[n] = FILENAME; to[n] = inc; line[n] = FNR
}
END {
	# A family split over folders: the folder with most of its files is
	# its home (the first in file order on a tie); the others are named.
	for (i = 1; i <= nfiles; i++) {
		f = fam[order[i]]
		if (nd[f] < 2 || (f in told))
			continue
		told[f] = 1; h = fdir[f, 1]
		for (j = 2; j <= nd[f]; j++)
			if (nin[f, fdir[f, j]] > nin[f, h])
				h = fdir[f, j]
		out = ""
		for (j = 1; j <= nd[f]; j++)
			if (fdir[f, j] != h)
				out = out which[f, fdir[f, j]]
		printf "include-graph: family %s is in %d folders: %d of its files in %s/, outside it%s: a family lives in one folder; git mv these to %s/\n",
		       f, nd[f], nin[f, h], h, out, h > "/dev/stderr"
		bad = 1
	}
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
		for (d in dirs)
			ndirs++
		printf "include-graph: %d files, %d families in %d folders: every file in a folder, every family in one; no include cycle; every _int.h stays in its family\n", nfiles, nfam, ndirs
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
