#!/bin/sh
# Boot Debian kernels under QEMU (TCG) and run the e2e scenarios in the guest.
#
# Usage: run.sh [--kernel 6.1|6.12|7|all] [--scenarios GLOB] [--demo]
#   --kernel     which kernel(s) to boot, each once (default: all = 6.1, 6.12,
#                then 7: the newest 7.x cloud kernel, see fetch-kernels.sh)
#   --scenarios  shell pattern on tests/e2e/scenarios/ file names, e.g. '01-*'
#                (default: all)
#   --demo       stream the guest console to the terminal while it runs and
#                pass cc.demo=1 so scenarios print their DEMO lines
# Environment:
#   CORECARVE_BIN  corecarve binary to test (default: <repo>/corecarve)
#   CORECARVE_FIRST_STAGE_BIN  the hook's first stage (default: <repo>/corecarve-hook)
#   E2E_CACHE      cache directory (default: <repo>/.cache/e2e)
#   E2E_TIMEOUT    seconds per boot, host side (default: 1500: a whole boot runs every scenario; CI has 2 cores)
#   E2E_SCENARIO_TIMEOUT  seconds per scenario in the guest (default: 400;
#                  E2E_K8S_SCENARIO_TIMEOUT, 900, in the k8s guest)
#   E2E_BOOT_TIMEOUT  seconds for the guest's /init to print E2E-BEGIN (default:
#                  180; the slowest boot seen, a node guest on a loaded
#                  2-core host, took 75 s); a boot that has not by then hung in the kernel or
#                  firmware under TCG, before any test ran: it is killed.
#                  A boot that hung, or whose QEMU died (TCG has asserted in
#                  iotlb_to_section here), before /init is booted again,
#                  E2E_BOOT_RETRIES times (default: 2); every retry is
#                  reported on stderr and in the summary
#   E2E_STALL_TIMEOUT  seconds of a silent console after which the guest is
#                  taken for stalled (default: its scenario timeout + 120: the
#                  guest's own timeout would have printed); it is killed, its
#                  vCPUs' state kept in log-<guest>.txt.stallN, and booted again
#                  from the start E2E_STALL_RETRIES times (default: 1)
#   E2E_EXTRA_SCENARIOS   a directory of extra scenarios to run too
#   CC_BENCH=1     select the scenarios marked "# e2e-only: bench" (95-bench,
#                  the timings of make bench-qemu; 97-effect-native in the
#                  node guest) and pass cc.bench=1 (and
#                  cc.bench_pairs=$CC_BENCH_PAIRS); without it they are not
#                  in the initramfs at all
#   CI             when set (CI=true; anything but empty, 0 or false), a
#                  SKIP fails the run: in CI every scenario must run
#   QEMU           qemu-system-x86_64 to use
#   E2E_QEMU_CPU   the emulated CPU model (default Skylake-Client-v4: L2 per
#                  core, L3 per socket, as hwloc and the tests expect)
#   E2E_KERNEL_ARGS  the guest kernel's own arguments (default
#                  mitigations=off, see below; empty: none)
#   E2E_K8S_NODES  the node image the k8s guest of each kernel boots, as
#                  KERNEL=SUITE words (default "6.1=bookworm 7=trixie":
#                  Debian 12's stack (containerd 1.6, runc 1.1, podman 4.3,
#                  crun 1.8, systemd 252) on 6.1, without remote partitions,
#                  Debian 13's (podman 5, crun 1.2x, systemd 257) with sid's
#                  containerd 2 and runc 1.3 on 7.x, with them; 6.12 runs
#                  every other scenario, and its node guests run under make
#                  e2e-matrix, to keep make check within CI's time); a kernel
#                  with no suite boots no node guest, one named twice boots
#                  once per suite.  Scenarios marked "# e2e-guest: k8s"
#                  run there, as <kernel>-k8s (bookworm) or <kernel>-<suite>
#   K8S_PACKAGES   the packages of every node image instead of its suite's
#                  (node_packages below; mkimage.sh builds and caches them)
#   E2E_K8S_KERNELS  the kernels that boot the k8s guest (default: every
#                  selected one; e.g. "6.1 6.12" to leave 7 to the
#                  initramfs guest, "none" for no k8s guest): about 8 to 9
#                  minutes per kernel on a 2-core host
#
# Output: the console log of each boot in $E2E_CACHE/log-<kernel>.txt (with a
# "TIME scenario Ns" line after each scenario); every FAIL and SKIP line;
# per-guest tallies with the three slowest scenarios; and last a line exactly
#   e2e: N passed, N failed, N skipped
# Exit status: 0 only when nothing failed, every boot reached E2E-DONE and,
# with CI set, nothing was skipped.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${E2E_CACHE:-$repo/.cache/e2e}
timeout_s=${E2E_TIMEOUT:-1500}
scenario_timeout=${E2E_SCENARIO_TIMEOUT:-400}
# A k8s-guest scenario drives dozens of pods through containerd under TCG.
k8s_scenario_timeout=${E2E_K8S_SCENARIO_TIMEOUT:-900}
boot_timeout=${E2E_BOOT_TIMEOUT:-180}
boot_retries=${E2E_BOOT_RETRIES:-2}
qemu=${QEMU:-qemu-system-x86_64}
k8s_nodes=${E2E_K8S_NODES:-6.1=bookworm 7=trixie}
k8s_kernels=${E2E_K8S_KERNELS:-all}
# The guest kernel's own arguments.  mitigations=off makes a guest 35-40%
# faster (the emulated Skylake reports Meltdown, so the kernel isolates its
# page tables: a CR3 switch on every syscall, which TCG turns into a flush
# of its software TLB; 6.12's whole run on 2026-12-07, back to back on this
# 2-core host: 677 s with the mitigations, 414 s without, 1363 passed
# each).  Nothing corecarve reads or writes depends on them.  One full run
# with it once hung in 60-exec; a run without it stalled the same way in
# CI (01-kernel-facts): a TCG stall, which the stall watch below catches.
kargs=${E2E_KERNEL_ARGS-mitigations=off}

kernels=all
scenarios='*'
demo=0
usage() {
	sed -n '2,/^set -eu/{/^#/s/^# \{0,1\}//p}' "$0" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kernels=$2; shift 2 ;;
	--kernel=*) kernels=${1#*=}; shift ;;
	--scenarios) [ $# -ge 2 ] || usage; scenarios=$2; shift 2 ;;
	--scenarios=*) scenarios=${1#*=}; shift ;;
	--demo) demo=1; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument '$1'" >&2; usage ;;
	esac
done
case $kernels in
all) kernels="6.1 6.12 7" ;;
6.1 | 6.12 | 7) ;;
*) echo "run.sh: --kernel must be 6.1, 6.12, 7 (the newest 7.x) or all" >&2; exit 2 ;;
esac
# shellcheck source=kdir.sh
. "$here/kdir.sh"

# The console carries terminal control sequences. When a 7.x kernel starts
# the console shows ESC c, ESC [?7l and ESC [2J (reset, no autowrap, clear
# screen: what SeaBIOS's serial console also prints first, most likely its
# rendering of the kernel's video mode switch; 6.1 and 6.12 show it once),
# and with `quiet` nothing else comes before /init's E2E-BEGIN, so the marker
# follows them on the same line, sometimes after SeaBIOS's last line with its
# line end lost ("Booting from ROM..<ESC>c...E2E-BEGIN"): a test of the line's
# start missed it and the boot was taken for one that never reached /init.
# strip_ctl turns a reset or a clear screen into a line break, then removes
# the other CSI sequences (ESC [ parameters intermediates final) and escape
# sequences (ESC intermediates final: ESC ( B). began LOG: /init has printed
# E2E-BEGIN.
esc=$(printf '\033')
strip_ctl() {
	LC_ALL=C sed "s|${esc}c|\n|g; s|${esc}\[2J|\n|g; s|${esc}\[[0-?]*[ -/]*[@-~]||g; s|${esc}[ -/]*[0-~]||g"
}
# (The log appears once QEMU's first output reaches it: not yet is not begun.)
began() { [ -f "$1" ] && strip_ctl <"$1" 2>/dev/null | grep -q '^E2E-BEGIN'; }
# host_cpu: "busy idle steal" jiffies of the host so far (/proc/stat): a
# guest's summary says what share of the host's CPU time went elsewhere
# while it ran (another process, or a hypervisor's steal), so a boot that
# ran out of time on a starved host says so.
host_cpu() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8, $5 + $6, $9; exit }' /proc/stat; }
# host_share BEFORE AFTER QEMU_JIFFIES: "qemu N%, other N%, steal N%".
host_share() {
	echo "$1 $2 $3" | awk '{ t = ($4 - $1) + ($5 - $2) + ($6 - $3); if (t <= 0) t = 1;
		o = ($4 - $1) - $7; if (o < 0) o = 0;
		printf "host: qemu %d%%, other %d%%, idle %d%%, steal %d%%", 100 * $7 / t, 100 * o / t, 100 * ($5 - $2) / t, 100 * ($6 - $3) / t }'
}

CORECARVE_BIN=${CORECARVE_BIN:-$repo/corecarve}
case $CORECARVE_BIN in /*) ;; *) CORECARVE_BIN=$(pwd)/$CORECARVE_BIN ;; esac
if [ ! -x "$CORECARVE_BIN" ]; then
	echo "run.sh: $CORECARVE_BIN does not exist: build corecarve first (make)" >&2
	exit 2
fi
export CORECARVE_BIN
# The registered first stage (hooks/first_stage.c), beside corecarve in
# the guests.
CORECARVE_FIRST_STAGE_BIN=${CORECARVE_FIRST_STAGE_BIN:-$repo/corecarve-hook}
case $CORECARVE_FIRST_STAGE_BIN in /*) ;; *) CORECARVE_FIRST_STAGE_BIN=$(pwd)/$CORECARVE_FIRST_STAGE_BIN ;; esac
if [ ! -x "$CORECARVE_FIRST_STAGE_BIN" ]; then
	echo "run.sh: $CORECARVE_FIRST_STAGE_BIN does not exist: build it first (make)" >&2
	exit 2
fi
export CORECARVE_FIRST_STAGE_BIN
command -v "$qemu" >/dev/null || {
	echo "run.sh: $qemu not found (scripts/deps.sh installs qemu-system-x86 from bookworm-backports)" >&2
	exit 2
}
qv=$("$qemu" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "${qv:-0}" -lt 10 ]; then
	echo "run.sh: warning: $qemu is version ${qv:-?}; QEMU 7.2 crashes 6.12 under TCG (use bookworm-backports' 10.x)" >&2
fi

# One run per cache at a time (initramfs and logs are per kernel, not per run).
mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -w 900 9; then
	echo "run.sh: another run.sh held $cache/.lock for 15 minutes" >&2
	exit 2
fi

if ! "$here/fetch-kernels.sh" "$cache" >&2; then
	echo "FAIL e2e/fetch: fetch-kernels.sh failed (see above)"
	echo "e2e: 0 passed, 1 failed, 0 skipped"
	exit 1
fi

disk=$cache/disk.raw
[ -s "$disk" ] || truncate -s 16M "$disk"

total_pass=0
total_fail=0
total_skip=0
summary=
retried=
stalls=
stall_retries=${E2E_STALL_RETRIES:-1}
# stall_note LOG MONITOR SECS: why a guest is taken for stalled, as its
# first line, then what QEMU's monitor says of its vCPUs: halted or running,
# and where, as an offset from the kernel's _stext (the guest prints where
# KASLR put it: E2E-STEXT; Debian's System.map is a stub, the one in
# linux-image-<version>-dbg names the function). Seen under TCG (CI,
# 2026-12-07, 6.12): 01-kernel-facts, 2 s on every other run, took 156 s,
# then the console fell silent with QEMU near idle, and neither the
# guest's scenario timeout nor its watchdog ever printed: its timers no
# longer fired.
stall_note() {
	scen=$(strip_ctl <"$1" | sed -n 's/^== scenario //p' | tail -n 1 | tr -d '\r')
	stext=$(strip_ctl <"$1" | sed -n 's/^E2E-STEXT \([0-9a-f]*\).*/\1/p' | head -n 1)
	echo "console silent ${3}s in scenario ${scen:-none}, past the guest's own scenario timeout"
	perl -MIO::Socket::UNIX -e '
		my ($sock, $stext) = @ARGV;
		my $s = IO::Socket::UNIX->new(Peer => $sock) or exit 1;
		$s->autoflush(1);
		print $s "info registers -a\n";
		my ($out, $t) = ("", time);
		$s->blocking(0);
		while (time - $t < 5) {
			my $n = sysread($s, my $b, 65536);
			if ($n) { $out .= $b; last if $out =~ /\(qemu\) .*\(qemu\) /s; }
			else { select(undef, undef, undef, 0.2); }
		}
		my $cpu = "?";
		for my $l (split /\r?\n/, $out) {
			$cpu = $1 if $l =~ /^CPU#(\d+)/;
			next unless $l =~ /^RIP=([0-9a-f]+) .*CPL=(\d).*HLT=(\d)/;
			my ($rip, $cpl, $hlt) = (hex $1, $2, $3);
			my $where = $cpl == 0 && $stext && $rip >= hex $stext
				? sprintf(" (_stext+0x%x)", $rip - hex $stext) : $cpl == 0 ? "" : " (user)";
			printf "qemu: CPU %s: %s rip=%x%s\n", $cpu, $hlt ? "halted" : "running", $rip, $where;
		}' "$2" "$stext" 2>/dev/null || echo "qemu: its monitor did not answer"
}
# boot_guest G: boot the guest G (the kernel $k with $initrd, the disk
# $gdisk, $gappend on the command line), log to $log, add its tallies.
boot_guest() {
	g=$1
	guest_budget=$((timeout_s - 60))
	[ "$guest_budget" -ge 60 ] || guest_budget=60
	append="console=ttyS0 quiet panic=-1 $kargs ${gappend}cc.kernel=$k cc.timeout=$guest_budget cc.scenario_timeout=${gstimeout:-$scenario_timeout}"
	[ "$demo" = 0 ] || append="$append cc.demo=1"
	[ "${CC_BENCH:-0}" != 1 ] || append="$append cc.bench=1${CC_BENCH_PAIRS:+ cc.bench_pairs=$CC_BENCH_PAIRS}"

	echo "e2e: booting $g ($(basename "$vmlinuz")), timeout ${timeout_s}s, log $log" >&2
	start=$(date +%s)
	cpu0=$(host_cpu)
	qemu_jiffies=0
	rcfile=$cache/.qemu-rc-$g
	pidfile=$cache/.qemu-pid-$g
	monsock=$cache/.qemu-mon-$g
	stall_s=${E2E_STALL_TIMEOUT:-$((${gstimeout:-$scenario_timeout} + 120))}
	attempt=1
	stall_attempt=1
	while :; do
		rm -f "$rcfile" "$pidfile" "$log" "$monsock"
		# -netdev user,restrict=on: the guest NIC exists (virtio-net IRQs) but
		# reaches nothing. virtio-blk with 4 queues gives managed multi-queue IRQs.
		{
			set +e
			timeout -k 10 "$timeout_s" "$qemu" \
				-accel tcg,thread=multi -cpu "${E2E_QEMU_CPU:-Skylake-Client-v4}" -m 2G \
				-smp 16,sockets=2,cores=4,threads=2 \
				-object memory-backend-ram,id=m0,size=1G \
				-object memory-backend-ram,id=m1,size=1G \
				-numa node,nodeid=0,cpus=0-7,memdev=m0 \
				-numa node,nodeid=1,cpus=8-15,memdev=m1 \
				-kernel "$vmlinuz" -initrd "$initrd" \
				-append "$append" \
				-nographic -no-reboot -pidfile "$pidfile" \
				-monitor "unix:$monsock,server=on,wait=off" \
				-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
				-drive file="$gdisk",if=none,id=d0,format=raw$gsnap \
				-device virtio-blk-pci,drive=d0,num-queues=4 \
				</dev/null 2>&1
			echo $? >"$rcfile"
		} | if [ "$demo" = 1 ]; then tee "$log"; else cat >"$log"; fi &
		bootpid=$!
		qemu_pid=
		# Boot watchdog: /init prints E2E-BEGIN within seconds of the
		# kernel starting; a boot that has not after $boot_timeout s hung
		# before any test ran (seen under TCG with Linux 6.1: the console
		# stopped after the early mitigation messages, QEMU idle).
		waited=0
		hung=0
		while kill -0 "$bootpid" 2>/dev/null; do
			[ -n "$qemu_pid" ] || qemu_pid=$(cat "$pidfile" 2>/dev/null || true)
			began "$log" && break
			if [ "$waited" -ge "$boot_timeout" ]; then
				hung=1
				kill -KILL "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || true
				break
			fi
			sleep 5
			waited=$((waited + 5))
		done
		# QEMU's own CPU time (utime + stime), read while it runs; and
		# the stall watch: a console silent past the guest's own
		# scenario timeout means the guest's timers no longer fire.
		stalled=0
		if [ -n "$qemu_pid" ] || qemu_pid=$(cat "$pidfile" 2>/dev/null); then
			quiet_since=$(date +%s)
			last_size=-1
			while kill -0 "$bootpid" 2>/dev/null; do
				qj=$(awk '{ print $14 + $15 }' "/proc/$qemu_pid/stat" 2>/dev/null) && qj_last=$qj
				size=$(wc -c <"$log" 2>/dev/null || echo 0)
				now=$(date +%s)
				if [ "$size" != "$last_size" ]; then
					last_size=$size
					quiet_since=$now
				elif [ $((now - quiet_since)) -ge "$stall_s" ] && [ "$hung" = 0 ]; then
					stalled=1
					stall_note "$log" "$monsock" "$((now - quiet_since))" >"$log.stall$stall_attempt"
					kill -KILL "$qemu_pid" 2>/dev/null || true
					break
				fi
				sleep 2
			done
			qemu_jiffies=$((qemu_jiffies + ${qj_last:-0}))
			qj_last=
		fi
		wait "$bootpid" || true
		[ "$stalled" = 0 ] || strip_ctl <"$log" | tr -d '\r' >>"$log.stall$stall_attempt"
		# A stalled guest is booted again from the start, once (the
		# stall's console and vCPUs kept, the retry in the summary): its
		# timers had stopped, so what it ran last says nothing either way.
		if [ "$stalled" = 1 ] && [ "$stall_attempt" -le "$stall_retries" ]; then
			echo "e2e: [$g] INFO the guest stalled: $(head -n 1 "$log.stall$stall_attempt"); console and vCPUs kept in $log.stall$stall_attempt; booting again" >&2
			stalls="$stalls $g ($(sed -n '1s/.* in scenario \([^ ,;]*\).*/\1/p' "$log.stall$stall_attempt"))"
			stall_attempt=$((stall_attempt + 1))
			continue
		fi
		# Only a boot that never reached /init is tried again: nothing of
		# corecarve ran in it.
		if began "$log" || [ "$attempt" -gt "$boot_retries" ]; then
			break
		fi
		if [ "$hung" = 1 ]; then
			how="hung: no E2E-BEGIN after ${boot_timeout}s"
		else
			how="ended before /init: qemu exited with status $(cat "$rcfile" 2>/dev/null || echo '?')"
		fi
		echo "e2e: [$g] INFO boot attempt $attempt $how (last console line: $(strip_ctl <"$log" | tr -d '\r' | grep -v '^qemu-system-x86_64: warning\|^Killed\|^[[:space:]]*$' | tail -n 1 | cut -c1-160)); console kept in $log.attempt$attempt; booting again" >&2
		mv "$log" "$log.attempt$attempt"
		retried="$retried $g"
		attempt=$((attempt + 1))
	done
	rc=$(cat "$rcfile" 2>/dev/null || echo '?')
	rm -f "$rcfile"
	secs=$(($(date +%s) - start))
	# The serial console ends lines with CR LF and may put control sequences
	# in front of a line (strip_ctl). QEMU repeats its TCG CPUID warnings once
	# per vCPU: keep one of each.
	strip_ctl <"$log" | sed 's/\r$//' |
		awk '!/^qemu-system-x86_64: warning: TCG doesn.t support/ || !seen[$0]++' >"$log.tmp" &&
		mv "$log.tmp" "$log"

	p=$(grep -c '^PASS ' "$log" || true)
	f=$(grep -c '^FAIL ' "$log" || true)
	s=$(grep -c '^SKIP ' "$log" || true)
	grep '^FAIL ' "$log" | sed "s/^/[$g] /" || true
	grep '^SKIP ' "$log" | sed "s/^/[$g] /" || true
	if ! grep -q '^E2E-DONE' "$log"; then
		if [ "$hung" = 1 ]; then
			why="the boot hung: no E2E-BEGIN after ${boot_timeout}s, $attempt attempts"
		elif [ "$stalled" = 1 ]; then
			why="the guest stalled twice: $(head -n 1 "$log.stall$stall_attempt")"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			why="killed after ${timeout_s}s (host timeout)"
		else
			why="qemu exited with status $rc"
		fi
		began "$log" || [ "$hung" = 1 ] || why="$why; /init never started"
		if grep -q 'Kernel panic' "$log"; then
			why="$why; $(grep -m1 'Kernel panic' "$log")"
		fi
		echo "[$g] last console lines:"
		grep -v '^qemu-system-x86_64: warning: TCG' "$log" | tail -n 25 | sed "s/^/[$g]   /"
		# The guest watchdog's FAIL line already counts this boot.
		if grep -q '^FAIL e2e/watchdog' "$log"; then
			echo "[$g] ($g/boot: did not reach E2E-DONE: $why; counted by e2e/watchdog)"
		else
			echo "[$g] FAIL $g/boot: did not reach E2E-DONE: $why"
			f=$((f + 1))
		fi
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	# The three slowest scenarios (the guests' TIME lines), for the summary.
	slow=$(sed -n 's/^TIME \([^ ]*\) \([0-9]*\)s$/\2 \1/p' "$log" | sort -rn | head -n 3 |
		awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')
	summary="$summary
e2e[$g]: $p passed, $f failed, $s skipped in ${secs}s ($(sed -n 's/^E2E-BEGIN //p' "$log" | head -n 1))${slow:+; slowest: $slow}; $(host_share "$cpu0" "$(host_cpu)" "$qemu_jiffies")"
}

# Which guests the selected scenarios need: "# e2e-guest: k8s" marks the
# scenarios of the k8s guest (systemd, containerd and the kubelet stand-in
# on a Debian disk image, tests/e2e/k8s/); the others run in the initramfs.
want_initramfs=0
want_k8s=0
for s in "$here"/scenarios/*.sh ${E2E_EXTRA_SCENARIOS:+"$E2E_EXTRA_SCENARIOS"/*.sh}; do
	[ -e "$s" ] || continue
	b=$(basename "$s")
	# shellcheck disable=SC2254 # a pattern
	case $b in $scenarios | ${scenarios}.sh) ;; *) continue ;; esac
	# A benchmark (either guest's) only with CC_BENCH=1.
	if [ "${CC_BENCH:-0}" != 1 ] && grep -qs '^# e2e-only: bench' "$s"; then
		continue
	elif grep -qs '^# e2e-guest: k8s' "$s"; then
		want_k8s=1
	else
		want_initramfs=1
	fi
done
[ "$want_initramfs" = 1 ] || [ "$want_k8s" = 1 ] || want_initramfs=1 # mkinitramfs.sh says why nothing matches
# node_packages SUITE: what a node image of SUITE holds ("PKG/SUITE2" comes
# from another suite) and, after "|", the suites it takes packages from
# beside its own.  Both have crun and runc (the hook runs under each, podman
# picks with --runtime) and podman (hooks.d, systemd's cgroup manager).
node_packages() {
	base="systemd dbus crun podman python3-grpcio python3-protobuf python3-yaml"
	case $1 in
	# trixie has containerd 1.7 and runc 1.1; sid has 2.x and 1.3.
	trixie) echo "${K8S_PACKAGES:-$base containerd/sid runc/sid}|sid" ;;
	*) echo "${K8S_PACKAGES:-$base containerd runc}|" ;;
	esac
}
# node_image SUITE: build or reuse the node image of SUITE (once per run),
# its path in $NODE_IMAGE; 1 when mkimage.sh failed.
built_images=
node_image() {
	NODE_IMAGE=$cache/images/k8s-$1.raw
	case " $built_images " in *" $1=ok "*) return 0 ;; *" $1=failed "*) return 1 ;; esac
	ns=$1
	np=$(node_packages "$ns")
	set -- --packages "${np%%|*}"
	for a in ${np#*|}; do set -- "$@" --also "$a"; done
	if "$here/mkimage.sh" --suite "$ns" --name "k8s-$ns" "$@" "$cache" >&2; then
		built_images="$built_images $ns=ok"
		return 0
	fi
	built_images="$built_images $ns=failed"
	return 1
}

for k in $kernels; do
	kdir=$cache/kernels/$k
	vmlinuz=
	if kdir_find "$kdir"; then vmlinuz=$KVMLINUZ; fi
	if [ -z "$vmlinuz" ]; then
		echo "[$k] FAIL $k/boot: no vmlinuz in $kdir"
		total_fail=$((total_fail + 1))
		continue
	fi
	# The initramfs guest: every selected scenario that needs no other.
	if [ "$want_initramfs" = 1 ]; then
		initrd=$cache/initramfs-$k.cpio.gz
		log=$cache/log-$k.txt
		rm -f "$log" "$log".attempt* "$log".stall*
		if ! E2E_SCENARIOS=$scenarios "$here/mkinitramfs.sh" "$kdir" "$initrd" >&2; then
			echo "[$k] FAIL $k/initramfs: mkinitramfs.sh failed (see above)"
			total_fail=$((total_fail + 1))
		else
			gdisk=$disk gsnap='' gappend='' gstimeout=''
			boot_guest "$k"
		fi
	fi
	# The k8s guests: systemd, containerd and podman on a Debian disk image,
	# one per suite E2E_K8S_NODES gives this kernel.
	k8s_here=1
	case " $k8s_kernels " in " all " | *" $k "*) ;; *) k8s_here=0 ;; esac
	if [ "$want_k8s" = 1 ] && [ "$k8s_here" = 0 ]; then
		echo "e2e: [$k-k8s] not booted: E2E_K8S_KERNELS=$k8s_kernels" >&2
	fi
	if [ "$want_k8s" != 1 ] || [ "$k8s_here" != 1 ]; then continue; fi
	suites=$(for n in $k8s_nodes; do [ "${n%%=*}" != "$k" ] || echo "${n#*=}"; done)
	if [ -z "$suites" ]; then
		echo "e2e: [$k-k8s] not booted: E2E_K8S_NODES=\"$k8s_nodes\" names no suite for $k" >&2
		continue
	fi
	# One initramfs per kernel: the suite reaches the guest on its command
	# line (cc.suite), the image is the disk.
	node_initrd=
	for suite in $suites; do
		if [ "$suite" = bookworm ]; then g=$k-k8s; else g=$k-$suite; fi
		initrd=${node_initrd:-$cache/initramfs-$g.cpio.gz}
		log=$cache/log-$g.txt
		rm -f "$log" "$log".attempt* "$log".stall*
		if ! node_image "$suite"; then
			echo "[$g] FAIL $g/image: mkimage.sh failed for $suite (see above)"
			total_fail=$((total_fail + 1))
		elif [ -z "$node_initrd" ] && ! E2E_SCENARIOS=$scenarios "$here/k8s/mkinit.sh" "$kdir" "$initrd" >&2; then
			echo "[$g] FAIL $g/initramfs: k8s/mkinit.sh failed (see above)"
			total_fail=$((total_fail + 1))
		else
			# -snapshot: the guest writes to a temporary overlay, the
			# cached image stays as mkimage.sh made it.
			node_initrd=$initrd
			gdisk=$NODE_IMAGE gsnap=,snapshot=on gappend="systemd.show_status=0 rd.udev.log_level=3 cc.suite=$suite "
			gstimeout=$k8s_scenario_timeout
			boot_guest "$g"
			gstimeout=
		fi
	done
done

printf '%s\n' "$summary" | sed '/^$/d'
[ -z "$retried" ] || echo "e2e: booted again after a boot that never reached /init:$retried"
[ -z "$stalls" ] || echo "e2e: booted again after the guest stalled (its log.stallN keeps why):$stalls"
strict=0
case ${CI:-} in
'' | 0 | false) ;;
*) strict=1 ;;
esac
if [ "$strict" = 1 ] && [ "$total_skip" -gt 0 ]; then
	echo "e2e: CI=$CI and $total_skip skipped (SKIP lines above): in CI every scenario must run (make deps installs podman, irqbalance and QEMU)"
fi
echo "e2e: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ] || exit 1
[ "$strict" = 0 ] || [ "$total_skip" -eq 0 ] || exit 1
exit 0
