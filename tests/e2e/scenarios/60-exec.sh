#!/bin/sh
# 60-exec: `corecarve exec`, the class-aware taskset + numactl, on a real
# kernel.  Uncarved: affinity on whole cores of the class and a memory
# policy bound to their nodes; --lock-affinity makes sched_setaffinity fail
# with EPERM.  --carve: the same exclusive carve a container gets, in a
# transient cgroup through the same ledger, beside a carved container;
# released when the command exits (status passed through, leftovers
# killed), when corecarve is told to stop, and by gc after corecarve was
# killed.  Also the --svg picture of the node with both carves.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
trap ctr_cleanup_all EXIT

write_policy "$CC_HOOK_POLICY"
B=/run/b60
mkdir -p $B
if cg_has_exclusive; then want_mode=remote-partition; want_part=root; else want_mode=cpuset-only; want_part=member; fi
info "kernel $CC_KERNEL: expecting $want_mode for exec carves"

# mempolicy of the command: the policy word of its stack mapping in
# /proc/self/numa_maps ("bind:0-1", "interleave:0", "default").
show='grep Cpus_allowed_list: /proc/self/status | tr -d "\t"; grep -m1 stack /proc/self/numa_maps | cut -d" " -f2'

# --- uncarved: every free latency core, one thread each ---------------------
out=$("$CC_BIN" exec --class latency -- sh -c "$show" 2>&1) || fail uncarved-ran "$out"
check_eq uncarved-cpus "Cpus_allowed_list:2,4,6,10,12,14" "$(echo "$out" | sed -n 1p)"
check_eq uncarved-membind "bind:0-1" "$(echo "$out" | sed -n 2p)"
out=$("$CC_BIN" exec --class latency --cpus 2 -- sh -c "$show" 2>&1) || fail uncarved-2-ran "$out"
check_eq uncarved-2-cpus "Cpus_allowed_list:$(plan_field latency 2 cpus)" "$(echo "$out" | sed -n 1p)"
check_eq uncarved-2-membind "bind:0" "$(echo "$out" | sed -n 2p)"
# smt full: whole cores with both threads; memory any leaves the policy alone.
out=$("$CC_BIN" exec --class background -- sh -c "$show" 2>&1) || fail background-ran "$out"
check_eq background-cpus "Cpus_allowed_list:2-7,10-15" "$(echo "$out" | sed -n 1p)"
check_eq background-mempolicy "default" "$(echo "$out" | sed -n 2p)"
check_eq uncarved-records-nothing "" "$(grep -o '"kind": *"exec"' $CC_LEDGER 2>/dev/null || true)"

# --- --lock-affinity --------------------------------------------------------
out=$("$CC_BIN" exec --class latency --cpus 1 --lock-affinity -- sh -c 'taskset -p 8 $$; echo "rc=$?"' 2>&1) || true
check_match lock-affinity-eperm "*Operation not permitted*rc=1*" "$(echo "$out" | tr '\n' ' ')"
out=$("$CC_BIN" exec --class latency --cpus 1 -- sh -c 'taskset -p 8 $$ >/dev/null; echo "rc=$?"' 2>&1) || true
check_eq unlocked-can-repin "rc=0" "$out"

# --- --carve beside a carved container ----------------------------------------
mk_bundle $B/c1 c1 '{class: latency, cpus: 2}' /kubepods/pod1/c1
if ctr_run_detached c1 $B/c1; then pass c1-started; else fail c1-started "$CRUN_ERR"; fi
want=$(plan_field latency 2 cpus)
"$CC_BIN" exec --class latency --cpus 2 --carve --verbose -- sh -c '
	echo "pid=$$"
	grep Cpus_allowed_list: /proc/self/status | tr -d "\t"
	sed -n "s/^0:://p" /proc/self/cgroup
	cg=$(sed -n "s/^0:://p" /proc/self/cgroup)
	echo "partition=$(cat /sys/fs/cgroup$cg/cpuset.cpus.partition)"
	echo "effective=$(cat /sys/fs/cgroup$cg/cpuset.cpus.effective)"
	echo "mems=$(cat /sys/fs/cgroup$cg/cpuset.mems)"
	echo "ledger=$(/usr/bin/corecarve status --json | grep -c "\"id\": \"exec:$$\"")"
	/usr/bin/corecarve status --svg /run/b60/status.svg >/dev/null
	exit 3' >$B/exec.out 2>$B/exec.err && rc=0 || rc=$?
check_eq carve-status-passed-through 3 "$rc"
pid=$(sed -n 's/^pid=//p' $B/exec.out)
check_eq carve-cpus "Cpus_allowed_list:$want" "$(grep Cpus_allowed_list $B/exec.out)"
check_eq carve-cgroup "/corecarve.exec/exec-$pid" "$(sed -n 3p $B/exec.out)"
check_eq carve-partition "partition=$want_part" "$(grep '^partition=' $B/exec.out)"
check_eq carve-effective "effective=$want" "$(grep '^effective=' $B/exec.out)"
check_eq carve-mems "mems=$(node_of_cpus "$want")" "$(grep '^mems=' $B/exec.out)"
check_eq carve-in-ledger "ledger=1" "$(grep '^ledger=' $B/exec.out)"
check_match carve-verbose "*corecarve: exec:$pid: class latency on performance cpus $want parked * ($want_mode) in /corecarve.exec/exec-$pid*" \
	"$(cat $B/exec.err)"
check carve-disjoint-from-c1 disjoint "$want" "$(carve_field c1 cpus),$(carve_field c1 parked)"
check_eq carve-released "" "$(carve_field "exec:$pid" cpus)"
check_eq carve-cgroup-removed "" "$(ls /sys/fs/cgroup/corecarve.exec/ | grep exec- || true)"
# The picture drawn while both carves ran: 2 + 2 running CPUs, 2 + 2 parked,
# the reserved 0-1,8-9, and real interrupt counts from the guest.
if xml=$(cat $B/status.svg 2>/dev/null); then
	check_eq svg-runs 4 "$(printf '%s' "$xml" | grep -c 'class="cpu runs"')"
	check_eq svg-parked 4 "$(printf '%s' "$xml" | grep -c 'class="cpu parked"')"
	check_eq svg-reserved 4 "$(printf '%s' "$xml" | grep -c 'class="cpu reserved"')"
	check_match svg-irq-load "*red bar: device interrupts served since boot*" "$xml"
	check_match svg-closed "*</svg>" "$xml"
else
	fail svg-written "no $B/status.svg"
fi

# --- leftovers die with the carve; a killed command's status is 128+N ------------
start=$(date +%s)
"$CC_BIN" exec --class latency --cpus 1 --carve -- sh -c 'sleep 1000 & echo $! > /run/b60/bg; exit 0' && rc=0 || rc=$?
check_eq leftover-exit 0 "$rc"
check leftover-killed wait_for 5 sh -c "! kill -0 $(cat $B/bg) 2>/dev/null"
check leftover-quick test $(($(date +%s) - start)) -lt 30
"$CC_BIN" exec --class latency --cpus 1 --carve -- sh -c 'kill -9 $$' && rc=0 || rc=$?
check_eq killed-command-137 137 "$rc"

# running_sleep: the carved command has exec'd (its cgroup runs `sleep`).
running_sleep() {
	for p in $(cat /sys/fs/cgroup/corecarve.exec/exec-*/cgroup.procs 2>/dev/null); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && return 0
	done
	return 1
}

# --- SIGTERM to corecarve reaches the command and the carve is released ----------
"$CC_BIN" exec --class latency --cpus 1 --carve -- sleep 100 &
cc=$!
wait_for 10 running_sleep || fail sigterm-command-started "no sleep in /corecarve.exec"
kill -TERM $cc
wait $cc && rc=0 || rc=$?
check_eq sigterm-forwarded 143 "$rc"
check_eq sigterm-released "" "$(grep -o '"exec:[0-9]*"' $CC_LEDGER || true)"

# --- refused: nothing left behind -------------------------------------------------
before=$(ledger_sum)
out=$("$CC_BIN" exec --class latency --cpus 8 --carve -- true 2>&1) && rc=0 || rc=$?
check_eq refused-125 125 "$rc"
check_match refused-message "corecarve: exec: class latency: 8 whole performance cores requested*" "$out"
check_eq refused-ledger-unchanged "$before" "$(ledger_sum)"
check_eq refused-no-cgroup "" "$(ls /sys/fs/cgroup/corecarve.exec/ | grep exec- || true)"

# --- corecarve killed: gc reclaims the carve once its command has ended -----------
"$CC_BIN" exec --class latency --cpus 1 --carve -- sleep 3 &
cc=$!
wait_for 10 running_sleep || fail orphan-command-started "no sleep in /corecarve.exec"
orphan=$(grep -o '"exec:[0-9]*"' $CC_LEDGER | tr -d '"' | head -n 1)
kill -KILL $cc
wait $cc 2>/dev/null || true
check_match orphan-recorded "exec:*" "$orphan"
sleep 1
check_eq orphan-kept-while-running 1 "$(grep -c "\"id\": \"$orphan\"" $CC_LEDGER)"
wait_for 10 sh -c "grep -q 'populated 0' /sys/fs/cgroup/corecarve.exec/exec-${orphan#exec:}/cgroup.events" || true
# The next carve (here an exec; a container hook does the same) collects it.
out=$("$CC_BIN" exec --class latency --cpus 1 --carve -- true 2>&1) && pass next-carve || fail next-carve "$out"
check_eq orphan-collected "" "$(grep -o "\"$orphan\"" $CC_LEDGER || true)"
check_eq orphan-cgroup-removed "" "$(ls /sys/fs/cgroup/corecarve.exec/ | grep exec- || true)"

check c1-deleted ctr_kill_delete c1

# --- how long a carve takes, alone and five at once (the ledger lock
# serialises them): what the hook's timeout in hooks.d has to cover.  TCG
# is several times slower than hardware, so these are upper bounds.
uptime_cs() { tr -d . </proc/uptime | cut -d' ' -f1; }
t0=$(uptime_cs)
for i in 1 2 3 4 5; do "$CC_BIN" exec --class latency --cpus 1 --carve -- true; done
t1=$(uptime_cs)
for i in 1 2 3 4 5; do
	("$CC_BIN" exec --class latency --cpus 1 --carve -- sleep 1 >$B/par$i.out 2>&1; echo $? >$B/par$i.rc) &
done
wait
t2=$(uptime_cs)
for i in 1 2 3 4 5; do
	if [ "$(cat $B/par$i.rc)" = 0 ]; then pass parallel-$i-ok; else fail parallel-$i-ok "$(cat $B/par$i.out)"; fi
done
info "timing: one carve+release $(((t1 - t0) / 5))0 ms on average (TCG); five at once (each running 1 s) done in $(((t2 - t1)))0 ms"
check_eq ledger-empty "" "$(grep -o '"id": *"[^"]*"' $CC_LEDGER || true)"
check_eq root-effective-restored "0-15" "$(cg_read / cpuset.cpus.effective)"
