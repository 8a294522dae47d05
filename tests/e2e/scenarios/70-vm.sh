#!/bin/sh
# 70-vm: VM vCPU pinning with real QEMUs.  qemu-system-x86_64 runs inside
# the 16-CPU guest (TCG, paused with -S: its vCPU threads exist and carry
# QEMU's names, nothing executes), and `corecarve vm reconcile` reserves
# whole cores in the ledger the hook uses, pins each vCPU thread to one CPU
# with sched_setaffinity, the emulator threads to the uncarved CPUs, and
# libvirt-style per-vCPU cgroups to the same CPUs.  Checked on the kernel's
# own view (/proc/<pid>/task/<tid>/status Cpus_allowed_list, cpuset files):
# idempotence, drift put back on the same CPU, a container carved beside,
# refusal, a VM that exits, a malformed vms.yaml.
# e2e-needs: qemu
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

VMS=/etc/corecarve/vms.yaml
LV=machine.slice/machine-qemu-1-lv.scope/libvirt
QPIDS=
cleanup() {
	for p in $QPIDS; do kill -9 "$p" 2>/dev/null || true; done
	ctr_cleanup_all
	rm -f "$VMS"
	cg_rmtree machine.slice >/dev/null 2>&1 || true
}
trap cleanup EXIT

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	skip qemu "qemu-system-x86_64 is not in the initramfs (tests/e2e/mkqemu.sh)"
	exit 0
fi
# latency with a power setting: VM carves take their class's power
# settings too (TCG has no idle states: the warning path, see 22-power).
write_policy "$(printf '%s\n' "$CC_HOOK_POLICY" | awk '{ print } /^  latency:$/ { print "    power:"; print "      cstates: shallow" }')"
B=/run/b70
mkdir -p $B /run/libvirt/qemu

# vm_start NAME SMP NAME-ARG PIDFILE: a paused QEMU; daemonized, so it has
# written PIDFILE when this returns.
vm_start() {
	# shellcheck disable=SC2086
	if ! qemu-system-x86_64 -accel tcg,tb-size=16 -S -smp "$2" -m 32 -name "$3" -nodefaults -display none \
		-daemonize -pidfile "$4" >"$B/qemu-$1.err" 2>&1; then
		info "qemu $1: $(_cc_oneline "$(cat "$B/qemu-$1.err")")"
		return 1
	fi
	QPIDS="$QPIDS $(cat "$4")"
}

# vm_stop PIDFILE: end that QEMU and wait until it is gone (or a zombie:
# daemonized, its parent is the guest's init, which may reap it late).
_gone() { ! [ -e "/proc/$1/stat" ] || grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat"; }
vm_stop() {
	_p=$(cat "$1")
	kill "$_p"
	wait_for 20 _gone "$_p"
}

# vcpus PID: "N TID" for each vCPU thread, by vCPU; emus PID: the other tids.
vcpus() {
	for _t in /proc/"$1"/task/*; do
		_c=$(cat "$_t/comm" 2>/dev/null) || continue
		case $_c in "CPU "*/TCG | "CPU "*/KVM) _n=${_c#CPU }; echo "${_n%%/*} ${_t##*/}" ;; esac
	done | sort -n
}
emus() {
	for _t in /proc/"$1"/task/*; do
		_c=$(cat "$_t/comm" 2>/dev/null) || continue
		case $_c in "CPU "*/TCG | "CPU "*/KVM) ;; *) echo "${_t##*/}" ;; esac
	done
}
tcpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/$2/status"; }

# The ledger's vCPU -> CPU map and emulator set, as `vm xml` prints them.
xml_map() { "$CC_BIN" vm xml "$1" 2>/dev/null | sed -n "s/.*<vcpupin vcpu='\([0-9]*\)' cpuset='\([0-9]*\)'.*/\1 \2/p"; }
xml_emu() { "$CC_BIN" vm xml "$1" 2>/dev/null | sed -n "s/.*<emulatorpin cpuset='\([^']*\)'.*/\1/p"; }

# pins_match NAME PID: every vCPU thread's Cpus_allowed_list is exactly its
# CPU in the ledger, and every vCPU has one.
pins_match() {
	_map=$(xml_map "$1")
	[ -n "$_map" ] || { echo "no map for $1"; return 1; }
	[ "$(echo "$_map" | wc -l)" = "$(vcpus "$2" | wc -l)" ] || { echo "map: $_map; threads: $(vcpus "$2")"; return 1; }
	vcpus "$2" | while read -r _n _tid; do
		_want=$(echo "$_map" | awk -v n="$_n" '$1 == n { print $2 }')
		_got=$(tcpus "$2" "$_tid")
		[ "$_got" = "$_want" ] || { echo "vCPU $_n (tid $_tid): Cpus_allowed_list $_got, ledger $_want"; return 1; }
	done
}

# emus_on PID LIST: every emulator thread may run exactly on LIST.
emus_on() {
	for _tid in $(emus "$1"); do
		_got=$(tcpus "$1" "$_tid" 2>/dev/null) || continue
		[ "$_got" = "$2" ] || { echo "emulator thread $_tid on $_got, want $2"; return 1; }
	done
}

# map_cpus NAME: the CPUs of the map as a list ("2,3,4,5").
map_cpus() { xml_map "$1" | awk '{ print $2 }' | sort -n | tr '\n' ',' | sed 's/,$//'; }

# siblings_paired NAME: vCPUs 2k and 2k+1 are the two threads of one core.
siblings_paired() {
	xml_map "$1" | awk '{ print $2 }' | while read -r a && read -r b; do
		[ "$(cat "/sys/devices/system/cpu/cpu$a/topology/thread_siblings_list")" = "$a-$b" ] ||
			{ echo "CPUs $a and $b are not siblings"; return 1; }
	done
}

reconcile() { "$CC_BIN" vm reconcile "$@" >"$B/out" 2>"$B/err"; }

# --- a malformed VM list: one line naming the field, nothing changed ----------
printf 'vms:\n  t:\n    class: latency\n    threads: 3\n' >"$VMS"
before=$(ledger_sum)
rc=0
reconcile || rc=$?
check_eq malformed-exit 2 "$rc"
check_eq malformed-message "corecarve: $VMS:4:5: vms.t.threads: expected 1 or 2, got \"3\"" "$(cat "$B/err")"
check_eq malformed-ledger-unchanged "$before" "$(ledger_sum)"

# --- VM t: -smp 4 as two SMT pairs -------------------------------------------
cat >"$VMS" <<'EOF'
vms:
  t:
    class: latency
    threads: 2
  lv:
    class: latency
    libvirt: lv
EOF
if vm_start t 4 t,debug-threads=on $B/t.pid; then pass t-started; else fail t-started "qemu did not start"; exit 0; fi
T=$(cat $B/t.pid)
check_eq t-vcpu-threads 4 "$(vcpus "$T" | wc -l)"
info "t: pid $T, threads: $(for x in /proc/"$T"/task/*; do printf '%s=%s ' "${x##*/}" "$(cat "$x/comm")"; done)"
aff_before=$(vcpus "$T" | while read -r _n _tid; do tcpus "$T" "$_tid"; done | sort -u)
info "t: vCPU threads start on $aff_before"

rc=0
reconcile --dry-run || rc=$?
check_eq dry-run-exit 0 "$rc"
check_match dry-run-says "*nothing was changed (dry run)*" "$(cat "$B/out")"
check_eq dry-run-ledger-unchanged "$before" "$(ledger_sum)"
check_eq dry-run-threads-untouched "$aff_before" "$(vcpus "$T" | while read -r _n _tid; do tcpus "$T" "$_tid"; done | sort -u)"

rc=0
reconcile || rc=$?
check_eq t-reconcile-exit 0 "$rc"
info "reconcile: $(_cc_oneline "$(cat "$B/out")")"
check_match t-power-probed "*warning   power.cstates: no cpuidle states on CPUs 2-5 (cpuidle driver: none)*" "$(cat "$B/out")"
check_eq t-kind vm "$(carve_field vm:t kind)"
check_eq t-mode affinity "$(carve_field vm:t mode)"
check_eq t-cpus "2-5" "$(carve_field vm:t cpus)"
check_eq t-map-is-carve "2,3,4,5" "$(map_cpus t)"
check t-pinned pins_match t "$T"
check t-pairs-are-siblings siblings_paired t
check t-not-reserved disjoint "$(carve_field vm:t cpus)" "0-1,8-9"
check_eq t-mems "0" "$(carve_field vm:t mems)"
check_eq t-emulator-set "0-1,6-15" "$(xml_emu t)"
check t-emulator-pinned emus_on "$T" "0-1,6-15"
check_match lv-not-running "*VM lv: not running (no pid file /run/libvirt/qemu/lv.pid)*" "$(cat "$B/out")"

# --- idempotence -----------------------------------------------------------
sum=$(ledger_sum)
rc=0
reconcile || rc=$?
check_eq again-exit 0 "$rc"
check_eq again-nothing-to-do "nothing to do" "$(tail -n 1 "$B/out")"
check_eq again-ledger-unchanged "$sum" "$(ledger_sum)"
rc=0
"$CC_BIN" vm status >"$B/status" 2>&1 || rc=$?
check_eq status-clean "0 no findings" "$rc $(tail -n 1 "$B/status")"

# --- drift: vCPU 1 moved by someone else goes back to the same CPU ------------
tid1=$(vcpus "$T" | awk '$1 == 1 { print $2 }')
cpu1=$(tcpus "$T" "$tid1")
taskset -p -c 0-15 "$tid1" >/dev/null
check_eq drift-made "0-15" "$(tcpus "$T" "$tid1")"
rc=0
"$CC_BIN" vm status >"$B/status" 2>&1 || rc=$?
check_eq drift-status-exit 1 "$rc"
check_match drift-finding "*VM_DRIFT*vCPU 1 (tid $tid1) may run on 0-15; the ledger pins it to $cpu1*" "$(cat "$B/status")"
# The node audit reports the same drift and repairs it with a vm reconcile.
rc=0
"$CC_BIN" audit --sample-ms 0 >"$B/audit" 2>&1 || rc=$?
info "audit: $(tr '\n' ' ' <"$B/audit" | cut -c1-600)"
check_eq drift-audit-exit 1 "$rc"
check_match drift-audit-finding "*VM_DRIFT*vm:t*" "$(cat "$B/audit")"
rc=0
"$CC_BIN" audit --fix --sample-ms 0 >"$B/out" 2>&1 || rc=$?
info "audit --fix: $(tr '\n' ' ' <"$B/out" | cut -c1-600)"
check_match drift-fix-one-change "*vm reconcile: 1 change made*" "$(cat "$B/out")"
check_eq drift-same-cpu "$cpu1" "$(tcpus "$T" "$tid1")"
rc=0
"$CC_BIN" audit --sample-ms 0 >"$B/audit" 2>&1 || rc=$?
check_eq drift-audit-clean-after "" "$(grep -o 'VM_[A-Z_]*' "$B/audit")"
check t-still-pinned pins_match t "$T"

# --- a container beside the VM: one ledger, no overlap ------------------------
mk_bundle $B/c1 c1 '{class: latency, cpus: 1}' /kubepods/pod1/c1
if ctr_run_detached c1 $B/c1; then pass c1-started; else fail c1-started "$CRUN_ERR"; fi
c1cpus=$(carve_field c1 cpus),$(carve_field c1 parked)
check c1-disjoint-from-t disjoint "$c1cpus" "$(carve_field vm:t cpus)"
check t-pins-survive-container pins_match t "$T"
rc=0
reconcile || rc=$?
check_eq after-container-exit 0 "$rc"
emu=$(xml_emu t)
check emulator-avoids-c1 disjoint "$emu" "$c1cpus"
check t-emulator-follows emus_on "$T" "$emu"

# --- VM lv: found through libvirt's pid file, libvirt's per-vCPU cgroups ------
if vm_start lv 2 guest=lv,debug-threads=on /run/libvirt/qemu/lv.pid; then pass lv-started; else fail lv-started "qemu did not start"; fi
L=$(cat /run/libvirt/qemu/lv.pid)
# What libvirt builds: a threaded subtree with one cgroup per vCPU and one
# for the emulator threads.
lv_cgroups() {
	cg_mkchain "$LV" || return 1
	for c in emulator vcpu0 vcpu1; do
		mkdir -p "$CGROOT/$LV/$c" && echo threaded >"$CGROOT/$LV/$c/cgroup.type" || return 1
	done
	echo +cpuset >"$CGROOT/$LV/cgroup.subtree_control" || return 1
	echo "$L" >"$CGROOT/$LV/cgroup.procs" || return 1
	for tid in $(emus "$L"); do echo "$tid" >"$CGROOT/$LV/emulator/cgroup.threads" || return 1; done
	vcpus "$L" | while read -r n tid; do echo "$tid" >"$CGROOT/$LV/vcpu$n/cgroup.threads" || return 1; done
}
if out=$(lv_cgroups 2>&1); then pass lv-cgroups-made; else fail lv-cgroups-made "$out"; fi
rc=0
reconcile || rc=$?
check_eq lv-reconcile-exit 0 "$rc"
info "lv: $(_cc_oneline "$(cat "$B/out")")"
check lv-pinned pins_match lv "$L"
check lv-disjoint-from-t disjoint "$(carve_field vm:lv cpus),$(carve_field vm:lv parked)" "$(carve_field vm:t cpus)"
check lv-disjoint-from-c1 disjoint "$(carve_field vm:lv cpus),$(carve_field vm:lv parked)" "$c1cpus"
xml_map lv >"$B/lvmap"
while read -r n cpu; do
	check_eq "lv-vcpu$n-cgroup-cpus" "$cpu" "$(cg_read "$LV/vcpu$n" cpuset.cpus)"
	check_eq "lv-vcpu$n-cgroup-mems" "$(node_of_cpus "$cpu")" "$(cg_read "$LV/vcpu$n" cpuset.mems)"
done <"$B/lvmap"
check_eq lv-emulator-cgroup "$(xml_emu lv)" "$(cg_read $LV/emulator cpuset.cpus)"
# libvirt (or an operator) widens a vCPU cgroup again: reconcile puts it back.
wide=$(cg_read $LV cpuset.cpus.effective)
if cg_write $LV/vcpu1 cpuset.cpus "$wide"; then pass lv-cgroup-widened; else fail lv-cgroup-widened "$CG_ERR"; fi
check_eq lv-cgroup-widened-reads "$wide" "$(cg_read $LV/vcpu1 cpuset.cpus)"
# A kernel fact for docs/vm.md: does the thread keep the affinity it was
# given when its cpuset widens (6.2+ keeps the user-requested mask)?
tidv1=$(vcpus "$L" | awk '$1 == 1 { print $2 }')
info "kernel $CC_KERNEL: after vcpu1's cpuset widened to $wide its thread may run on $(tcpus "$L" "$tidv1")"
rc=0
reconcile || rc=$?
check_eq lv-cgroup-rewrite-exit 0 "$rc"
check_match lv-cgroup-rewrite-says "*vcpu1 cpuset.cpus: \"$wide\" -> *" "$(cat "$B/out")"
check_eq lv-cgroup-restored "$(awk '$1 == 1 { print $2 }' "$B/lvmap")" "$(cg_read $LV/vcpu1 cpuset.cpus)"
check lv-still-pinned pins_match lv "$L"
"$CC_BIN" vm xml lv >"$B/lv.xml" 2>&1 || true
check_match lv-xml "*<vcpupin vcpu='1' cpuset='*'/>*<emulatorpin cpuset='*'/>*<memory mode='strict' nodeset='*'/>*" \
	"$(tr '\n' ' ' <"$B/lv.xml")"

# --- refusal: more cores than are free ---------------------------------------
printf '  big:\n    class: latency\n' >>"$VMS"
if vm_start big 8 big,debug-threads=on $B/big.pid; then
	G=$(cat $B/big.pid)
	gaff=$(vcpus "$G" | while read -r _n _tid; do tcpus "$G" "$_tid"; done | sort -u)
	sum=$(ledger_sum)
	rc=0
	reconcile || rc=$?
	check_eq big-refused-exit 1 "$rc"
	check_match big-refused-message "corecarve: VM big (8 vCPUs, threads: 1): class latency: *refused*" "$(cat "$B/err")"
	check_eq big-no-carve "" "$(carve_field vm:big cpus)"
	check_eq big-ledger-unchanged "$sum" "$(ledger_sum)"
	check_eq big-threads-untouched "$gaff" "$(vcpus "$G" | while read -r _n _tid; do tcpus "$G" "$_tid"; done | sort -u)"
	vm_stop $B/big.pid || true
else
	fail big-started "qemu did not start"
fi

# --- VMs that exit: their reservations are released ----------------------------
tcpus_was=$(carve_field vm:t cpus)
check t-stopped vm_stop $B/t.pid
rc=0
"$CC_BIN" vm status >"$B/status" 2>&1 || rc=$?
check_match gone-finding "*VM_GONE*VM t: process $T of carve vm:t is gone*" "$(cat "$B/status")"
rc=0
reconcile || rc=$?
check_eq gone-exit 0 "$rc"
check_match gone-released "*VM t: release carve vm:t, CPUs $tcpus_was*process $T is gone*" "$(cat "$B/out")"
check_eq gone-no-carve "" "$(carve_field vm:t cpus)"
check_eq gone-cpus-free-again "2,4" "$(plan_field latency 2 cpus)"
check lv-stopped vm_stop /run/libvirt/qemu/lv.pid
check c1-deleted ctr_kill_delete c1
rc=0
reconcile || rc=$?
check_eq all-gone-exit 0 "$rc"
check_eq ledger-empty "" "$(grep -o '"id": *"[^"]*"' "$CC_LEDGER" 2>/dev/null || true)"
rc=0
reconcile || rc=$?
check_eq finally-nothing-to-do "nothing to do" "$(tail -n 1 "$B/out")"
