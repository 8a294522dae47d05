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

# carve_field ID FIELD: a field of carve ID from `corecarve status --json`
# ("" when there is no such carve).
carve_field() {
	"$CC_BIN" status --json 2>/dev/null | awk -v want="$1" -v f="$2" '
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
