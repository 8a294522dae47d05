#!/bin/sh
# 21-irqbalance: a running irqbalance (Debian 12's 1.9.2, unpacked from its
# .deb by mkirqbalance.sh) learns the CPUs of steer-away carves and gives
# them back.  The sandboxed hook rewrites /etc/default/irqbalance and sees
# the daemon it may not talk to; `corecarve irq notify` (what
# corecarve-irqbalance.path runs) tells it over its control socket; the
# daemon's own debug log says what it bans, and it keeps the carve's CPUs
# free of the IRQs it balances.  With /etc read-only the file cannot be
# rewritten: the carve still happens, IRQs steered, and the hook warns.
# e2e-needs: irqbalance
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

B=/run/b21
IB=/etc/default/irqbalance
LOG=/run/irqbalance.log
ibpid=
ETC=$(dirname $IB)
ro_etc=
cleanup() {
	ctr_cleanup_all
	[ -z "$ibpid" ] || kill "$ibpid" 2>/dev/null || true
	[ -z "$ro_etc" ] || umount "$ETC" 2>/dev/null || true
	rm -f $IB
	rmdir "$(dirname $IB)" 2>/dev/null || true
}
trap cleanup EXIT
write_policy "$CC_HOOK_POLICY"

if [ ! -x /usr/sbin/irqbalance ]; then
	skip irqbalance "irqbalance is not in the initramfs (mkirqbalance.sh could not fetch Debian's package)"
	exit 0
fi
mkdir -p "$(dirname $IB)" /run/irqbalance $B
printf '#IRQBALANCE_BANNED_CPUS=\n#IRQBALANCE_BANNED_CPULIST=\n' >$IB
cp $IB $B/irqbalance.orig

# A rescan every second; --debug logs "Banned CPUs: <mask>" at each one.
/usr/sbin/irqbalance --foreground --debug --interval=1 >$LOG 2>&1 &
ibpid=$!
wait_for 10 sh -c "ls /run/irqbalance/irqbalance$ibpid.sock" || true
check irqbalance-socket test -S /run/irqbalance/irqbalance$ibpid.sock
info "$(/usr/sbin/irqbalance --version 2>&1 | head -n 1)"

# banned_mask: the last "Banned CPUs:" irqbalance logged, its low word.
banned_mask() { sed -n 's/.*Banned CPUs: //p' $LOG | tail -n 1 | tr -d ' ' | awk -F, '{ print $NF }'; }
banned_is() { [ "$(banned_mask)" = "$1" ]; }
# movable_on SET: the IRQs with CPUs of SET in their affinity that the
# kernel did not refuse to move ("IRQ(LIST) ...").
movable_on() {
	grep -H . /proc/irq/[0-9]*/smp_affinity_list | sed 's|^/proc/irq/\([0-9]*\)/smp_affinity_list:|\1 |' |
		while read -r irq aff; do
			disjoint "$aff" "$1" && continue
			"$CC_BIN" irq status --sample-ms 0 | awk -v i="$irq" '$1 == i' | grep -q 'unmovable (E' ||
				printf '%s(%s) ' "$irq" "$aff"
		done
}
# carve_set ID: the CPUs and parked siblings of carve ID, one list.
carve_set() {
	for l in $(carve_field "$1" cpus | tr ',' ' ') $(carve_field "$1" parked | tr ',' ' '); do expand "$l"; done |
		sort -n | tr '\n' ',' | sed 's/,$//'
}

mk_bundle $B/c1 c1 '{class: latency, cpus: 2}' /kubepods/pod1/c1
if ctr_run_detached c1 $B/c1; then pass c1-started; else fail c1-started "$CRUN_ERR"; fi
c1set=$(carve_set c1)
[ -n "$c1set" ] || { fail c1-carved "no carve for c1"; exit 1; }
check_eq file-banned-list 2-5 "$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' $IB)"
# The hook's sandbox allows no socket: it finds the daemon and says who
# must tell it.
check_match hook-sees-daemon "*irqbalance (pid $ibpid) still bans its old CPUs*corecarve irq notify*" \
	"$(cat $B/c1/hooks.err 2>/dev/null)"

out=$("$CC_BIN" irq notify 2>&1) && pass notify-ran || fail notify-ran "$out"
check_match notify-told-daemon "*told irqbalance (pid $ibpid): settings cpus 2-5*" "$out"
wait_for 10 banned_is 0000003c || true
check_eq daemon-bans-carve 0000003c "$(banned_mask)"

# Several of irqbalance's rescans later, the movable IRQs it balances are
# still off the carve.
sleep 3
check_eq daemon-keeps-irqs-off-carve "" "$(movable_on "$c1set")"

check c1-deleted ctr_kill_delete c1
check_eq file-restored "$(cat $B/irqbalance.orig)" "$(cat $IB)"
out=$("$CC_BIN" irq notify 2>&1) && pass notify-after-release || fail notify-after-release "$out"
check_match notify-drops-override "*settings cpus NULL*" "$out"
wait_for 10 banned_is 00000000 || true
check_eq daemon-bans-nothing 00000000 "$(banned_mask)"
check_eq ledger-empty 0 "$(grep -c '"irq"\|"id"' "$CC_LEDGER" || true)"

# ---- a read-only /etc (Fedora CoreOS-style hosts, Talos, Bottlerocket) ---------
# The file cannot be rewritten: that is a warning, not a refusal.  The
# container starts, its IRQs are steered, the file stays byte for byte, and
# irq status says what irqbalance was not told.  The daemon goes first:
# nothing tells it of this carve, and it would move IRQs back onto it.
kill "$ibpid" 2>/dev/null || true
wait "$ibpid" 2>/dev/null || true
ibpid=
mount --bind "$ETC" "$ETC" && mount -o remount,bind,ro "$ETC" && ro_etc=1
check ro-etc-refuses-root sh -c "! touch \"$ETC/probe\" 2>/dev/null"
mk_bundle $B/c2 c2 '{class: latency, cpus: 2}' /kubepods/pod2/c2
if ctr_run_detached c2 $B/c2; then pass c2-started-read-only-etc; else fail c2-started-read-only-etc "$CRUN_ERR"; fi
c2set=$(carve_set c2)
err=$(cat $B/c2/hooks.err 2>/dev/null || true)
info "hook stderr: $(_cc_oneline "$err")"
check_match hook-warns-read-only "*c2: $IB is on a read-only file system: not rewritten, so irqbalance is not told to ban CPUs *; the IRQs are steered*" "$err"
check_eq file-untouched-read-only "$(cat $B/irqbalance.orig)" "$(cat $IB)"
check_eq irqs-off-carve-read-only "" "$(movable_on "$c2set")"
check_match status-warns-read-only "*irqbalance: warning: $IB is on a read-only file system*" \
	"$("$CC_BIN" irq status --sample-ms 0 2>&1)"
check c2-deleted ctr_kill_delete c2
check_eq file-untouched-after-release "$(cat $B/irqbalance.orig)" "$(cat $IB)"
umount "$ETC" && ro_etc=
check_eq ledger-empty-after-read-only 0 "$(grep -c '"irq"\|"id"' "$CC_LEDGER" || true)"
