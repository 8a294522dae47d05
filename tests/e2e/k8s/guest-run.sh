#!/bin/sh
# The k8s guest's scenario runner, started by e2e.service under systemd:
# the same contract as the initramfs guest's /init (tests/e2e/init): each
# /e2e/scenarios/*.sh in order under a timeout, PASS/FAIL/SKIP lines at the
# start of a console line, E2E-BEGIN and E2E-DONE, then power off.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/e2e/bin
export HOME=/root

cmdline=$(cat /proc/cmdline)
arg() {
	for w in $cmdline; do
		case $w in "$1="*) echo "${w#*=}" && return 0 ;; esac
	done
	return 1
}
kernel=$(arg cc.kernel || uname -r)
budget=$(arg cc.timeout || echo 1200)
stimeout=$(arg cc.scenario_timeout || echo 400)
suite=$(arg cc.suite || sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
export CC_KERNEL="$kernel" CC_DEMO=0 CC_GUEST=k8s CC_SUITE="$suite"
echo 1 >/proc/sys/kernel/printk
mkdir -p /etc/corecarve /run/corecarve

(
	sleep "$budget"
	echo
	echo "FAIL e2e/watchdog: guest did not finish within ${budget}s"
	sync
	systemctl poweroff --force --force
) &

echo "E2E-BEGIN kernel=$kernel uname=$(uname -r) cpus=$(nproc) pid1=$(cat /proc/1/comm) guest=k8s suite=$suite boot=$(cut -d' ' -f1 /proc/uptime)s"
# Where the kernel's text starts (KASLR): run.sh gives a stalled vCPU's
# program counter as an offset from it.
echo "E2E-STEXT $(sed -n 's/ [Tt] _stext$//p' /proc/kallsyms | head -n 1)"
state=$(systemctl is-system-running 2>/dev/null)
[ "$state" = running ] || echo "INFO e2e: systemd is $state: $(systemctl --failed --no-legend --plain 2>/dev/null | tr '\n' ';')"

# shellcheck source=kwarn.sh
. /e2e/kwarn.sh
for s in /e2e/scenarios/*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	echo "== scenario $name"
	t0=$(cut -d. -f1 /proc/uptime)
	kmark=$(kwarn_mark)
	kexpect=/tmp/.kwarn-expect-$name
	rm -f "$kexpect"
	results=/tmp/.results-$name
	: >"$results"
	(cd /tmp && CC_SCENARIO=$name CC_RESULTS=$results CC_KWARN_EXPECT=$kexpect exec timeout -s KILL "$stimeout" /e2e/bin/busybox sh "$s")
	rc=$?
	if [ "$rc" = 137 ]; then
		echo "FAIL $name: timed out after ${stimeout}s"
	elif [ "$rc" != 0 ]; then
		echo "FAIL $name: scenario exited with status $rc"
	elif [ ! -s "$results" ]; then
		echo "FAIL $name: scenario reported no result"
	fi
	# Did the kernel warn (issue #45)?  A warning the scenario did not
	# declare (kwarn_expect) fails it, with the first lines of the trace.
	kwarn_report "$name" "$kmark" "$kexpect"
	# Seconds per scenario: run.sh lists the slowest of each guest, the
	# figures to look at when the whole run nears CI's time.
	echo "TIME $name $(($(cut -d. -f1 /proc/uptime) - t0))s"
done

dmesg -r | sed -n 's/^<[0-4]>/dmesg: /p' | tail -n 60
echo "E2E-DONE"
sync
systemctl poweroff --force --force
