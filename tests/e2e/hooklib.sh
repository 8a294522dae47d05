# shellcheck shell=sh
# Helpers for the scenarios that drive the real corecarve hook.  Sourced
# after lib.sh.

# The policy every hook scenario uses: the embedded default's classes with
# an explicit reserved set (core 0 of each package: CPUs 0-1 and 8-9).
CC_HOOK_POLICY='reserved: "0-1,8-9"
minShared: 1
classes:
  latency:
    coreType: performance
    smt: isolate
    exclusive: true
    memory: local
    irq: steer-away
    partition: root
    quota: drop
  isolated:
    coreType: performance
    smt: isolate
    partition: isolated
    irq: steer-away
  throughput:
    coreType: efficient
    fallback: performance
    smt: full
    align: l2
    memory: local
    quota: drop
  background:
    coreType: efficient
    fallback: performance
    exclusive: false
    smt: full
    memory: any
    quota: keep'

# grant CLASS KEYS: the policy on stdin with `annotationMaySet: [KEYS]` on
# class CLASS.  CC_HOOK_POLICY's classes take only cpus and memory from an
# annotation, as the embedded default's do; a scenario whose annotations set
# irq or smt grants it here.
grant() {
	awk -v cls="  $1:" -v keys="$2" '{ print } $0 == cls { print "    annotationMaySet: [" keys "]" }'
}

export CORECARVE_POLICY="$CC_POLICY"
CC_LEDGER=/run/corecarve/ledger.json

# podman_annotation KEY=VALUE: the --annotation argument that reaches the
# spec as KEY=VALUE under this podman.  podman before 5.0 reads
# --annotation as CSV (a string-slice flag): a comma splits the value and a
# newline ends it, so a CSV field in double quotes keeps its commas; podman
# 5 takes the value as is (docs/hook.md).
podman_annotation() {
	case $(podman --version | sed 's/.* //') in
	[0-4].*) printf '"%s"\n' "$1" ;;
	*) printf '%s\n' "$1" ;;
	esac
}

# status_json: what `corecarve status --json` prints, its stderr in
# $CC_STATUS_ERR (a file); non-zero when status failed.  The carves in it
# are the ledger's, so while the ledger reads the same bytes as at the last
# successful run, that run's output is printed again instead (each run
# costs about half a second under TCG, and a scenario asks dozens of times
# between two changes).
CC_STATUS_CACHE=/tmp/.cc-status-json
CC_STATUS_ERR=/tmp/.cc-status-err
status_json() {
	# shellcheck disable=SC2046 # md5sum prints "SUM  FILE"
	set -- $(md5sum "$CC_LEDGER" 2>/dev/null) ''
	_sum=$1
	_head=
	[ ! -s "$CC_STATUS_CACHE" ] || read -r _head <"$CC_STATUS_CACHE"
	if [ -n "$_sum" ] && [ "$_head" = "$_sum" ]; then
		: >"$CC_STATUS_ERR"
		tail -n +2 "$CC_STATUS_CACHE"
		return 0
	fi
	rm -f "$CC_STATUS_CACHE"
	"$CC_BIN" status --json >"$CC_STATUS_CACHE.new" 2>"$CC_STATUS_ERR" || {
		rm -f "$CC_STATUS_CACHE.new"
		return 1
	}
	[ -z "$_sum" ] || { echo "$_sum"; cat "$CC_STATUS_CACHE.new"; } >"$CC_STATUS_CACHE"
	cat "$CC_STATUS_CACHE.new"
	rm -f "$CC_STATUS_CACHE.new"
}

# carve_field ID FIELD: a field of carve ID from `corecarve status --json`
# ("" when there is no such carve).
carve_field() {
	status_json 2>/dev/null | awk -v want="$1" -v f="$2" '
		/"carves": \[/ { in_c = 1; next }
		in_c && /^  \]/ { in_c = 0 }
		in_c && /^    \{/ { id = ""; val = ""; next }
		in_c && /^    \}/ { if (id == want) { print val; exit } next }
		in_c {
			line = $0
			sub(/^ */, "", line)
			k = line; sub(/:.*/, "", k); gsub(/"/, "", k)
			v = line; sub(/^[^:]*: */, "", v); sub(/,$/, "", v); gsub(/"/, "", v)
			if (k == "id") id = v
			if (k == f) val = v
		}'
}

# plan_field CLASS N FIELD: what `corecarve plan` says right now.
plan_field() {
	"$CC_BIN" plan --class "$1" --cpus "$2" --json 2>/dev/null | awk -v f="$3" '
		{ k = $0; sub(/^ */, "", k); v = k; sub(/:.*/, "", k); gsub(/"/, "", k)
		  sub(/^[^:]*: */, "", v); sub(/,$/, "", v); gsub(/"/, "", v)
		  if (k == f) { print v; exit } }'
}

# expand LIST: a cpu list as one number per line.
expand() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 1 && $1 != "" { print $1 } NF == 2 { for (i = $1; i <= $2; i++) print i }'
}

# disjoint LIST LIST: no CPU in both.
disjoint() {
	[ -z "$( (expand "$1"; expand "$2") | sort -n | uniq -d)" ]
}

# whole_cores RUN PARKED: every core touched is entirely in RUN+PARKED.
whole_cores() {
	for c in $(expand "$1") $(expand "$2"); do
		for s in $(expand "$(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"); do
			(expand "$1"; expand "$2") | grep -qx "$s" || return 1
		done
	done
}

# node_of_cpus LIST: the NUMA nodes of the CPUs, as a cpu-list-like string.
node_of_cpus() {
	for c in $(expand "$1"); do
		for n in /sys/devices/system/node/node*; do
			expand "$(cat "$n/cpulist")" | grep -qx "$c" && echo "${n##*node}"
		done
	done | sort -un | tr '\n' ',' | sed 's/,$//'
}

ledger_sum() { md5sum "$CC_LEDGER" 2>/dev/null | cut -d' ' -f1; }

# ---- the node as the carves should leave it --------------------------------

ONLINE=$(cat /sys/devices/system/cpu/online)

# ranges: numbers (one per line) as a canonical cpu list.
ranges() {
	sort -n | awk 'NR == 1 { a = b = $1; next }
		$1 == b + 1 { b = $1; next }
		{ printf "%s%s", s, (a == b ? a : a "-" b); s = ","; a = b = $1 }
		END { if (NR) printf "%s%s", s, (a == b ? a : a "-" b); print "" }'
}
norm() { expand "$1" | ranges; }
minus() { (expand "$1"; expand "$2"; expand "$2") | sort -n | uniq -u | ranges; }

irq_snapshot() {
	echo "default $(cat /proc/irq/default_smp_affinity)"
	grep -H . /proc/irq/[0-9]*/smp_affinity_list | sort
}

# carves FILE: "ID CPUS PARKED CGROUP MODE" per carve ("-" for an empty
# field), from one status --json (status_json).
carves() {
	_rc=0
	status_json >"$1.json" || _rc=1
	cp "$CC_STATUS_ERR" "$1.err"
	[ "$_rc" = 0 ] || return 1
	awk '
		/"carves": \[\]/ { exit }
		/"carves": \[/ { in_c = 1; next }
		in_c && /^  \]/ { exit }
		in_c && /^    \{/ { id = cpus = parked = cg = mode = "-"; next }
		in_c && /^    \}/ { print id, cpus, parked, cg, mode; next }
		in_c {
			line = $0; sub(/^ */, "", line)
			k = line; sub(/:.*/, "", k); gsub(/"/, "", k)
			v = line; sub(/^[^:]*: */, "", v); sub(/,$/, "", v); gsub(/"/, "", v)
			if (v == "") v = "-"
			if (k == "id") id = v
			if (k == "cpus") cpus = v
			if (k == "parked") parked = v
			if (k == "cgroup") cg = v
			if (k == "mode") mode = v
		}' "$1.json" >"$1"
}

# held ID FILE: the CPUs of carve ID in a carves FILE ("" when none).
held() { awk -v id="$1" '$1 == id { print $2 }' "$2"; }

# union FILE WHAT [MODES]: the CPUs of the carves in a carves FILE as one
# list (not canonical): WHAT is cpus, parked or all (both); MODES an
# extended regex on the mode (default: every carve).
union() {
	awk -v what="$2" -v modes="${3:-.}" '
		$5 ~ modes {
			if (what != "parked") s = s "," $2
			if (what != "cpus" && $3 != "-") s = s "," $3
		}
		END { sub(/^,/, "", s); print s }' "$1"
}

# carves_hold TAG FILE: every carve of a carves FILE runs on exactly the
# CPUs the ledger gives it (its cgroup's cpuset.cpus.effective), and no
# CPU, carved or parked, is in two carves.
carves_hold() {
	_all='' _why=''
	while read -r _id _cpus _pk _cg _mode; do
		[ "$_pk" != - ] || _pk=
		_set="$_cpus${_pk:+,$_pk}"
		if [ -n "$_all" ] && ! disjoint "$_all" "$_set"; then _why="$_why $_id overlaps another carve;"; fi
		_all="${_all:+$_all,}$_set"
		_eff=$(cg_read "$_cg" cpuset.cpus.effective)
		[ "$_eff" = "$_cpus" ] || _why="$_why $_id: $_cg effective '$_eff', carve '$_cpus' ($_mode);"
	done <"$2"
	if [ -z "$_why" ]; then pass "$1-carves-hold-their-cpus"; else fail "$1-carves-hold-their-cpus" "$_why"; fi
}

# peer_want BASE FILE: the cpuset.cpus.effective a cgroup that is no live
# carve and holds none must have, BASE being what it has with no carve at
# all: the CPUs, carved and parked, of every carve in FILE taken out.  A
# partition's CPUs (remote or local, and the parked partition's) the
# kernel takes out of every cgroup outside it; a cpuset-only carve's
# corecarve takes out of every cgroup beside it or beside one of its
# ancestors when it is made, and out of a container started later (the
# hook: plugin/flows/container.c, beside_carves).
peer_want() {
	_take=$(awk '{ s = s "," $2; if ($3 != "-") s = s "," $3 }
		END { sub(/^,/, "", s); print s }' "$2")
	minus "$1" "$_take"
}

# peer_restored TAG CGROUP ORIG BASE: a cgroup beside carves that all went
# is back as it was: cpuset.cpus is ORIG, and it runs on BASE.  Linux 6.1
# refuses an empty cpuset.cpus ("inherit") on a cgroup with tasks (ENOSPC),
# so there, in cpuset-only mode, an ORIG of "" may read as the parent's
# effective CPUs written out; nothing else passes.
peer_restored() {
	_now=$(cg_read "$2" cpuset.cpus)
	_pe=$(cg_read "$(dirname "$2")" cpuset.cpus.effective)
	if [ "$_now" = "$3" ]; then
		pass "$1-cpus-as-before"
	elif [ -z "$3" ] && ! cg_has_exclusive && [ "$_now" = "$_pe" ]; then
		pass "$1-cpus-as-before"
		info "$1: $2 cpuset.cpus reads '$_now' (was inherited: 6.1 refuses the empty write on a populated cgroup)"
	else
		fail "$1-cpus-as-before" "$2 cpuset.cpus: expected '$3'${3:-" (inherit)"}$([ -n "$3" ] || cg_has_exclusive || echo " or the parent's '$_pe'"), got '$_now'"
	fi
	check_eq "$1-effective-as-before" "$4" "$(cg_read "$2" cpuset.cpus.effective)"
}
