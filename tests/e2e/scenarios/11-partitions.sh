#!/bin/sh
# 11-partitions: the three kernel modes and what each promises.
#  - local partition below a parent prepared by `corecarve init-parent`
#    (the way to get real partitions on kernels without
#    cpuset.cpus.exclusive, e.g. 6.1);
#  - soft exclusivity in cpuset-only mode: peers lose the carved CPUs and get
#    them back;
#  - a pod-level parent quota smaller than the carve is lifted, recorded and
#    restored.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
trap ctr_cleanup_all EXIT

write_policy "$CC_HOOK_POLICY"
B=/run/b11

# --- local partition under an init-parent ------------------------------------
# /kubepods (this suite's pods' cgroups, made here if no earlier scenario
# left it) is what a kubelet's node has: init-parent refuses it there
# (its pods would be squeezed onto the reserved CPUs) unless --force.
cg_mkchain kubepods
if out=$("$CC_BIN" init-parent /corecarve.slice 2>&1); then
	fail init-parent-refused-on-kubelet-node "made: $out"
else
	check_eq init-parent-refused-exit 1 "$?"
	check_match init-parent-refused-on-kubelet-node "*refused on a kubelet node (/sys/fs/cgroup/kubepods)*--force*" "$out"
fi
check_eq init-parent-refused-made-nothing "" "$(cg_read /corecarve.slice cpuset.cpus.partition 2>/dev/null)"
out=$("$CC_BIN" init-parent --force /corecarve.slice 2>&1) && pass init-parent || fail init-parent "$out"
check_eq parent-partition root "$(cg_read /corecarve.slice cpuset.cpus.partition)"
check_eq parent-cpus "2-7,10-15" "$(cg_read /corecarve.slice cpuset.cpus.effective)"
out=$("$CC_BIN" init-parent --force /corecarve.slice 2>&1) && pass init-parent-idempotent || fail init-parent-idempotent "$out"

mk_bundle $B/l1 l1 '{class: latency, cpus: 2}' /corecarve.slice/l1
if ctr_run_detached l1 $B/l1; then pass l1-started; else fail l1-started "$CRUN_ERR"; fi
mk_bundle $B/l0 l0 '' /corecarve.slice/l0
if ctr_run_detached l0 $B/l0; then pass l0-started; else fail l0-started "$CRUN_ERR"; fi
l1cpus=$(carve_field l1 cpus)
l1parked=$(carve_field l1 parked)
check_eq l1-mode local-partition "$(carve_field l1 mode)"
check_eq l1-partition root "$(cg_read /corecarve.slice/l1 cpuset.cpus.partition)"
check_eq l1-effective "$l1cpus" "$(cg_read /corecarve.slice/l1 cpuset.cpus.effective)"
check_eq l1-parked-partition isolated "$(cg_read /corecarve.slice/corecarve.parked cpuset.cpus.partition)"
check_eq l1-parked-cpus "$l1parked" "$(cg_read /corecarve.slice/corecarve.parked cpuset.cpus.effective)"
check l1-peer-excluded disjoint "$(cg_read /corecarve.slice/l0 cpuset.cpus.effective)" "$l1cpus,$l1parked"
check l1-deleted ctr_kill_delete l1
check_eq parent-restored "2-7,10-15" "$(cg_read /corecarve.slice cpuset.cpus.effective)"
check_eq parked-empty "" "$(cg_read /corecarve.slice/corecarve.parked cpuset.cpus.effective | sed 's/^2-7,10-15$//')"
check l0-deleted ctr_kill_delete l0

# --- a partition that is none of corecarve's, beside a carve ----------------
# Its CPUs count as taken: the carve goes elsewhere and runs on exactly what
# it recorded, on every kernel (6.12 would invalidate the other partition, 7.x
# would strip its CPUs from the carve and still read `root`: docs/design.md).
cg_mkchain corecarve.slice/foreign
cg_write /corecarve.slice/foreign cpuset.cpus "$l1cpus" || fail foreign-cpus "$CG_ERR"
cg_write /corecarve.slice/foreign cpuset.cpus.partition root || fail foreign-partition "$CG_ERR"
check_eq foreign-root root "$(cg_read /corecarve.slice/foreign cpuset.cpus.partition)"
mk_bundle $B/f1 f1 '{class: latency, cpus: 2}' /corecarve.slice/f1
if ctr_run_detached f1 $B/f1; then pass f1-started; else fail f1-started "$CRUN_ERR"; fi
f1cpus=$(carve_field f1 cpus)
check f1-avoids-foreign disjoint "$f1cpus,$(carve_field f1 parked)" "$l1cpus"
check_eq f1-effective "$f1cpus" "$(cg_read /corecarve.slice/f1 cpuset.cpus.effective)"
check_eq f1-foreign-still-root root "$(cg_read /corecarve.slice/foreign cpuset.cpus.partition)"
check_eq f1-foreign-cpus "$l1cpus" "$(cg_read /corecarve.slice/foreign cpuset.cpus.effective)"
check f1-deleted ctr_kill_delete f1
check_eq foreign-kept root "$(cg_read /corecarve.slice/foreign cpuset.cpus.partition)"
check_eq foreign-kept-cpus "$l1cpus" "$(cg_read /corecarve.slice/foreign cpuset.cpus.effective)"
check foreign-removed cg_rmtree /corecarve.slice/foreign
check_eq parent-restored-after-foreign "2-7,10-15" "$(cg_read /corecarve.slice cpuset.cpus.effective)"
check slice-removed cg_rmtree /corecarve.slice
check_eq root-back "0-15" "$(cg_read / cpuset.cpus.effective)"

# --- soft exclusivity: peers lose the carved CPUs ---------------------------
mk_bundle $B/q0 q0 '' /kubepods/podq/q0
if ctr_run_detached q0 $B/q0; then pass q0-started; else fail q0-started "$CRUN_ERR"; fi
mk_bundle $B/q1 q1 '{class: latency, cpus: 2}' /kubepods/podq/q1
if ctr_run_detached q1 $B/q1; then pass q1-started; else fail q1-started "$CRUN_ERR"; fi
q1set="$(carve_field q1 cpus),$(carve_field q1 parked)"
check q0-excludes-q1 disjoint "$(cg_read /kubepods/podq/q0 cpuset.cpus.effective)" "$q1set"
check q0-task-excludes-q1 disjoint "$(ctr_cpus q0)" "$q1set"
if [ "$(carve_field q1 mode)" = cpuset-only ]; then
	check_match q1-peer-recorded '*"/kubepods/podq/q0/cpuset.cpus" {"owners": {"q1": "*"}, "kind": "peer", "orig": ""*' \
		"$(cat "$CC_LEDGER")"
fi
check q1-deleted ctr_kill_delete q1
check_eq q1-poststop-quiet "" "$(cat $B/q1/hooks.err $B/q1/delete.err 2>/dev/null)"
check_eq q0-restored "0-15" "$(cg_read /kubepods/podq/q0 cpuset.cpus.effective)"
check q0-deleted ctr_kill_delete q0

# --- what pays for a carve (issue #26) ---------------------------------------
# A container limited to 0.1 CPU asking for 5: refused by its own limit,
# nothing carved, nothing lifted.
cg_mkchain kubepods/podu
mk_bundle $B/u1 u1 '{class: latency, cpus: 5}' /kubepods/podu/u1 10000
if ctr_run_detached u1 $B/u1 2>/dev/null; then
	fail u1-refused "started"
else
	check_match u1-refused "*cpus: 5 exclusive CPUs exceed the container's CPU limit of 0.1*" "$(cat $B/u1/hooks.err 2>/dev/null) $CRUN_ERR"
fi
check_eq u1-not-carved "" "$(carve_field u1 cpus)"
ctr_kill_delete u1 2>/dev/null || true
# An admin's cap on /kubepods is never lifted: too small for a carve, it
# refuses the carve, naming it; wide enough, it stays as written while the
# carve lives below it.
cg_write /kubepods cpu.max "100000 100000" || fail kubepods-cap "$CG_ERR"
mk_bundle $B/u2 u2 '{class: latency, cpus: 2}' /kubepods/podu/u2 200000
if ctr_run_detached u2 $B/u2 2>/dev/null; then
	fail u2-refused-by-cap "started"
else
	check_match u2-refused-by-cap "*/kubepods has cpu.max \"100000 100000\"*never above*" "$(cat $B/u2/hooks.err 2>/dev/null) $CRUN_ERR"
fi
ctr_kill_delete u2 2>/dev/null || true
check_eq kubepods-cap-kept "100000 100000" "$(cg_read /kubepods cpu.max)"
cg_write /kubepods cpu.max "400000 100000" || fail kubepods-cap "$CG_ERR"
mk_bundle $B/u3 u3 '{class: latency, cpus: 2}' /kubepods/podu/u3 200000
if ctr_run_detached u3 $B/u3; then pass u3-started; else fail u3-started "$CRUN_ERR"; fi
check_eq u3-carved 2 "$(expand "$(carve_field u3 cpus)" | wc -l)"
check_eq u3-cpu-max "max 100000" "$(cg_read /kubepods/podu/u3 cpu.max)"
check_eq kubepods-cap-kept-while-carved "400000 100000" "$(cg_read /kubepods cpu.max)"
check u3-deleted ctr_kill_delete u3
check_eq kubepods-cap-kept-after "400000 100000" "$(cg_read /kubepods cpu.max)"
cg_write /kubepods cpu.max "max 100000" || fail kubepods-uncap "$CG_ERR"

# --- a pod-level quota smaller than the carve -------------------------------
cg_mkchain kubepods/podz
cg_write /kubepods/podz cpu.max "50000 100000" || fail podz-quota "$CG_ERR"
mk_bundle $B/z1 z1 '{class: latency, cpus: 2}' /kubepods/podz/z1 200000
if ctr_run_detached z1 $B/z1; then pass z1-started; else fail z1-started "$CRUN_ERR"; fi
check_eq z1-cpu-max "max 100000" "$(cg_read /kubepods/podz/z1 cpu.max)"
check_eq podz-lifted "max 100000" "$(cg_read /kubepods/podz cpu.max)"
# A node record of the ledger's "cgroup" section, its line keyed by the
# file: the carve that needs it, the original, what was written
# (docs/design.md, docs/reference.md).
check_match podz-recorded '*"/kubepods/podz/cpu.max" {"owners": {"z1": "2"}, "kind": "quota", "orig": "50000 100000", "set": "max 100000"*' \
	"$(cat "$CC_LEDGER")"
# The ancestors' exclusive sets hold the remote carves' CPUs, not a list of them.
if [ "$(carve_field z1 mode)" = remote-partition ]; then
	check_match podz-held "*\"/kubepods/podz/cpuset.cpus.exclusive\" {\"owners\": {}, \"kind\": \"exclusive\", *\"held\": \"$(carve_field z1 cpus)\"*" \
		"$(cat "$CC_LEDGER")"
fi
check z1-deleted ctr_kill_delete z1
check_eq podz-restored "50000 100000" "$(cg_read /kubepods/podz cpu.max)"
check_eq ledger-empty-at-end "" "$(carve_field z1 cpus)$(carve_field q1 cpus)$(carve_field l1 cpus)$(carve_field f1 cpus)"
