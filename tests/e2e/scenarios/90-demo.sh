#!/bin/sh
# 90-demo: the main job on the embedded default policy (no policy file):
# annotated containers started by crun on the emulated 2-socket SMT NUMA
# host, shown the way an operator would look at them.  `make demo` runs this
# scenario alone with --demo so the DEMO lines reach the terminal; in
# `make check` it runs as a test like the others.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
trap ctr_cleanup_all EXIT

# The embedded default: no policy file at all, no CORECARVE_POLICY.
rm -f /etc/corecarve/policy.yaml
unset CORECARVE_POLICY
CC_POLICY=
B=/run/b90

show_cmd() {
	_t=$1
	shift
	demo "---- $_t"
	"$@" 2>&1 | while IFS= read -r l; do demo "  $l"; done
}

show_cmd "corecarve topology (kernel $(uname -r))" "$CC_BIN" topology

mk_bundle $B/db db '{class: latency, cpus: 2}' /kubepods/pod-db/db 200000
mk_bundle $B/batch batch '{class: throughput, cpus: 4}' /kubepods/pod-batch/batch
mk_bundle $B/bg bg '{class: background, cpus: 2}' /kubepods/pod-bg/bg 20000
for c in db batch bg; do
	if ctr_run_detached $c $B/$c; then pass $c-started; else fail $c-started "$CRUN_ERR"; fi
done
check_eq db-class-latency latency "$(carve_field db class)"
check_eq batch-fell-back performance "$(carve_field batch core_class)"
check_eq bg-not-carved "" "$(carve_field bg cpus)"

show_cmd "corecarve status: who owns which CPU" "$CC_BIN" status
for c in db batch bg; do
	cg=$(ctr_cgroup $c)
	ctr_wait_output $c '^Cpus_allowed_list:' || true
	demo "---- container $c ($(sed -n 's/.*"corecarve.io\/placement": "\(.*\)".*/\1/p' $B/$c/config.json)) in $cg"
	for f in cpuset.cpus.effective cpuset.cpus.partition cpuset.mems.effective cpu.max; do
		demo "  $f = $(cg_read "$cg" $f)"
	done
	demo "  inside: $(grep Cpus_allowed_list $B/$c/ctr.out | head -n 1)"
	check_eq $c-sees-cgroup "$(cg_read "$cg" cpuset.cpus.effective)" \
		"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $B/$c/ctr.out | head -n 1)"
done
if "$CC_BIN" audit --help >/dev/null 2>&1; then
	show_cmd "corecarve audit" "$CC_BIN" audit
	codes=$("$CC_BIN" audit --sample-ms 0 2>&1 | awk 'NR > 1 && /^[A-Z_]+ / { print $1 }' | sort -u | tr '\n' ' ')
	if cg_has_exclusive; then
		check_eq audit-clean "" "$codes"
	else
		# cpuset-only mode (no cpuset.cpus.exclusive, no init-parent): the
		# carved and parked CPUs are exclusive only among the peers and
		# the shared containers corecarve narrows (bg is one); the audit
		# may say so of a cgroup it did not narrow, and that is all it may
		# say.
		info "audit on $CC_KERNEL (cpuset-only): $codes"
		check_eq audit-only-soft-exclusivity "" "$(echo "$codes" | tr ' ' '\n' | grep -vx 'SOFT_EXCLUSIVITY_LEAK\|SPLIT_CORE\|')"
	fi
fi
for c in db batch bg; do check $c-deleted ctr_kill_delete $c; done
show_cmd "after the containers are gone" "$CC_BIN" status
check_eq all-released "0-15" "$(cg_read / cpuset.cpus.effective)"
