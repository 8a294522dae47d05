#!/bin/sh
# 01-kernel-facts: the cpuset partition behaviour corecarve relies on, per
# kernel. 6.1 has no cpuset.cpus.exclusive (local partitions only: a child of
# a partition root); 6.12 and 7.x have it, so a partition can sit deep in a
# hierarchy ("remote partition", e.g. kubepods/pod1/ctr1) with exclusive CPUs
# granted down the chain. 7.x differs from 6.x in who gives way when a
# sibling's cpuset.cpus claims a partition's CPUs, and in where kernel
# threads may run beside a `root` partition (docs/design.md, kernel quirks).
# Recorded in shared/notes/qemu-harness.md and kernel-7x.md.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh

# The whole kubepods chain goes: its cpuset.cpus.exclusive grants would
# otherwise stay and collide with the carves of the scenarios after this one.
cleanup() {
	cg_rmtree kubepods || true
	cg_rmtree e2e-claim || true
	cg_rmtree e2e-local || true
}
trap cleanup EXIT
cleanup

# Which partition-related files a non-root cpuset cgroup has.
cg_mkchain e2e-probe
cpuset_files() { for f in "$1"/cpuset.*; do printf '%s ' "${f##*/}"; done; }
info "root cpuset files: $(cpuset_files "$CGROOT")"
info "child cpuset files: $(cpuset_files "$CGROOT/e2e-probe")"
rmdir "$CGROOT/e2e-probe"

if cg_has_exclusive; then excl=present; else excl=absent; fi
info "kernel $CC_KERNEL ($(uname -r)): cpuset.cpus.exclusive $excl"
case $CC_KERNEL in
6.1) check_eq cpus-exclusive-absent absent "$excl" ;;
6.12 | 7) check_eq cpus-exclusive-present present "$excl" ;;
*) skip cpus-exclusive "no expectation for kernel $CC_KERNEL (present here: $excl)" ;;
esac

root_eff_before=$(cg_read / cpuset.cpus.effective)
check_eq root-effective-all 0-15 "$root_eff_before"

# --- Local partition: a direct child of the root (works on every kernel).
cg_mkchain e2e-local
if cg_write e2e-local cpuset.cpus 2-3; then pass local-set-cpus; else fail local-set-cpus "$CG_ERR"; fi
if cg_write e2e-local cpuset.cpus.partition root; then :; else fail local-partition-root "write: $CG_ERR"; fi
check_eq local-partition-root root "$(cg_read e2e-local cpuset.cpus.partition)"

# Kernel threads (kthreadd and what it forks: unbound kworkers, rcu_preempt,
# khugepaged) live in the root cgroup. On 6.1 and 6.12 they follow its
# effective CPUs, so a `root` partition keeps them off its CPUs; from 7.0 they
# follow the housekeeping CPUs instead, which an `isolated` partition takes
# CPUs out of and a `root` one does not.
kthreadd_cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/2/status; }
kthreadd_is() { [ "$(kthreadd_cpus)" = "$1" ]; }
case $CC_KERNEL in
6.1 | 6.12) want_kt=0-1,4-15 ;;
7) want_kt=0-15 ;;
*) want_kt= ;;
esac
wait_for 5 kthreadd_is "${want_kt:-none}" || true
info "local root partition 2-3: kthreadd may run on $(kthreadd_cpus)"
if [ -n "$want_kt" ]; then
	check_eq local-root-kthreads "$want_kt" "$(kthreadd_cpus)"
else
	skip local-root-kthreads "no expectation for kernel $CC_KERNEL (kthreadd on $(kthreadd_cpus))"
fi

# A sibling whose cpuset.cpus claims a CPU of the partition: 6.1 and 6.12
# accept the write and invalidate the partition, the sibling gets the CPU;
# from 7.0 the partition stays and the CPU is stripped from the sibling (its
# effective set falls back to the parent's). cg_conflict_strips, which the
# audit scenario branches on, must say the same.
cg_mkchain e2e-claim
if cg_write e2e-claim cpuset.cpus 2; then pass claim-write; else fail claim-write "$CG_ERR"; fi
claim_part=$(cg_read e2e-local cpuset.cpus.partition)
claim_eff=$(cg_read e2e-claim cpuset.cpus.effective)
info "sibling claims 2: partition '$claim_part', sibling effective $claim_eff"
case $CC_KERNEL in
6.1 | 6.12)
	check_match claim-invalidates 'root invalid*' "$claim_part"
	check_eq claim-sibling-gets-cpu 2 "$claim_eff"
	;;
7)
	check_eq claim-partition-kept root "$claim_part"
	check_eq claim-sibling-stripped 0-1,4-15 "$claim_eff"
	;;
*) skip claim "no expectation for kernel $CC_KERNEL: partition '$claim_part', sibling effective $claim_eff" ;;
esac
cg_rmtree e2e-claim || fail claim-rmdir "cannot remove e2e-claim"
# Re-arm (6.x leaves it invalid after the conflict goes, see docs/audit.md).
cg_write e2e-local cpuset.cpus.partition member || fail claim-rearm-member "$CG_ERR"
cg_write e2e-local cpuset.cpus.partition root || fail claim-rearm-root "$CG_ERR"
check_eq claim-rearmed root "$(cg_read e2e-local cpuset.cpus.partition)"
if cg_conflict_strips 6-7 6; then probe=strips; else probe=$?; fi
case $CC_KERNEL:$probe in
6.1:1 | 6.12:1 | 7:strips) pass conflict-probe-agrees ;;
*) fail conflict-probe-agrees "cg_conflict_strips says $probe (0/strips: partition kept, 1: invalidated, 2: unknown) on kernel $CC_KERNEL" ;;
esac
if cg_write e2e-local cpuset.cpus.partition isolated; then :; else fail local-partition-isolated "write: $CG_ERR"; fi
check_eq local-partition-isolated isolated "$(cg_read e2e-local cpuset.cpus.partition)"
check_eq local-effective 2-3 "$(cg_read e2e-local cpuset.cpus.effective)"
wait_for 5 kthreadd_is 0-1,4-15 || true
check_eq local-isolated-kthreads-off 0-1,4-15 "$(kthreadd_cpus)"
check_eq local-root-effective 0-1,4-15 "$(cg_read / cpuset.cpus.effective)"
[ ! -e "$CGROOT/cpuset.cpus.isolated" ] ||
	check_eq local-root-cpus-isolated 2-3 "$(cg_read / cpuset.cpus.isolated)"
info "local: /sys/devices/system/cpu/isolated='$(cat /sys/devices/system/cpu/isolated)' root cpuset.cpus.isolated='$(cg_read / cpuset.cpus.isolated)'"
# A task inside sees only the partition's CPUs.
allowed=$(sh -c "echo \$\$ >$CGROOT/e2e-local/cgroup.procs && sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status")
check_eq local-task-cpus 2-3 "$allowed"
cg_write e2e-local cpuset.cpus.partition member || fail local-back-to-member "$CG_ERR"
check_eq local-member-restores-root 0-15 "$(cg_read / cpuset.cpus.effective)"
cg_rmtree e2e-local || fail local-rmdir "cannot remove e2e-local"

# --- Deep partition kubepods/pod1/ctr1, exactly as in the notes.
cg_mkchain kubepods/pod1/ctr1
if [ "$excl" = present ]; then
	for c in kubepods kubepods/pod1 kubepods/pod1/ctr1; do
		cg_write "$c" cpuset.cpus.exclusive 2-3 || fail "remote-exclusive-$(basename "$c")" "$CG_ERR"
	done
	cg_write kubepods/pod1/ctr1 cpuset.cpus.partition isolated || fail remote-partition-write "$CG_ERR"
	check_eq remote-partition-isolated isolated "$(cg_read kubepods/pod1/ctr1 cpuset.cpus.partition)"
	check_eq remote-effective 2-3 "$(cg_read kubepods/pod1/ctr1 cpuset.cpus.effective)"
	check_eq remote-exclusive-effective 2-3 "$(cg_read kubepods/pod1/ctr1 cpuset.cpus.exclusive.effective)"
	check_eq remote-root-effective 0-1,4-15 "$(cg_read / cpuset.cpus.effective)"
	check_eq remote-root-cpus-isolated 2-3 "$(cg_read / cpuset.cpus.isolated)"
	info "remote: kubepods partition='$(cg_read kubepods cpuset.cpus.partition)' effective='$(cg_read kubepods cpuset.cpus.effective)'; pod1 effective='$(cg_read kubepods/pod1 cpuset.cpus.effective)'"
	allowed=$(sh -c "echo \$\$ >$CGROOT/kubepods/pod1/ctr1/cgroup.procs && sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status")
	check_eq remote-task-cpus 2-3 "$allowed"
	cg_write kubepods/pod1/ctr1 cpuset.cpus.partition member || fail remote-back-to-member "$CG_ERR"
	check_eq remote-member-restores-root 0-15 "$(cg_read / cpuset.cpus.effective)"
else
	if cg_write kubepods cpuset.cpus.exclusive 2-3; then
		fail exclusive-write-fails "writing cpuset.cpus.exclusive succeeded on $CC_KERNEL"
	else
		pass exclusive-write-fails
		info "6.1 write cpuset.cpus.exclusive: $CG_ERR"
	fi
	# Without cpuset.cpus the deep cgroup cannot become a valid partition.
	cg_write kubepods/pod1/ctr1 cpuset.cpus.partition isolated || info "isolated write on ctr1: $CG_ERR"
	p=$(cg_read kubepods/pod1/ctr1 cpuset.cpus.partition)
	info "6.1 deep isolated without cpuset.cpus reads back: $p"
	check_match deep-partition-invalid 'isolated invalid*' "$p"
	cg_write kubepods/pod1/ctr1 cpuset.cpus.partition member || true
	check_eq deep-invalid-keeps-root 0-15 "$(cg_read / cpuset.cpus.effective)"
fi
cg_rmtree kubepods/pod1/ctr1 || fail remote-rmdir "cannot remove kubepods/pod1/ctr1"
cg_rmtree kubepods || fail remote-chain-rmdir "cannot remove the kubepods chain"
check_eq root-whole-again 0-15 "$(cg_read / cpuset.cpus.effective)"
