#!/bin/sh
# 14-journal: the hook leaves one line per decision in the system log.
# The guest has no journald, so the hook falls back to syslog's /dev/log:
# a busybox syslogd listens there, as rsyslog or journald's /dev/log would
# on a node.  Real crun starts an unannotated container (with `corecarve
# hook` registered, and with the first stage, which leaves no line), a carved one and a
# refused one; each decision is one line with the container id (and the
# class, CPUs and mode of a carve), the release too, and the sandbox lets
# the hook send on its log socket without a single seccomp denial.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

LOG=/run/syslog.14
stop_syslogd() { [ -z "${SYSLOGD:-}" ] || kill "$SYSLOGD" 2>/dev/null || true; }
trap 'ctr_cleanup_all; stop_syslogd' EXIT

write_policy "$CC_HOOK_POLICY"
B=/run/b14
rm -f "$LOG"
busybox syslogd -n -O "$LOG" -l 8 &
SYSLOGD=$!
check syslogd-listening wait_for 10 test -S /dev/log
if cg_has_exclusive; then want_mode=remote-partition; else want_mode=cpuset-only; fi

# line PATTERN: the lines of the log matching PATTERN (grep -E).
line() { grep -E "$1" "$LOG" 2>/dev/null || true; }
# one TAG PATTERN: exactly one line matches.
one() { check_eq "$1" 1 "$(line "$2" | wc -l)"; }

# --- no annotation: the hook ran, matched nothing, and says so --------------
# `corecarve hook` registered itself (the hooks.d way), not the first stage.
CC_FIRST_STAGE='' mk_bundle $B/plain plain '' /kubepods/pod14/plain
if ctr_run_detached plain $B/plain; then pass plain-started; else fail plain-started "$CRUN_ERR"; fi
check plain-gone ctr_gone plain
wait_for 5 grep -q 'poststop plain' "$LOG" || true
one plain-create-line 'daemon\.debug corecarve\[[0-9]+\]: createRuntime plain: no corecarve\.io/placement annotation'
one plain-poststop-line 'daemon\.debug corecarve\[[0-9]+\]: poststop plain: no carve recorded, nothing to give back'
# Through the first stage (corecarve-hook, as containerd's base spec
# registers it) the same container never reaches the full hook: no line at
# all, at either stage, while the carves below do get theirs through it.
mk_bundle $B/plainfs plainfs '' /kubepods/pod14/plainfs
check_match plainfs-registers-first-stage '*"/usr/bin/corecarve-hook"*' "$(cat $B/plainfs/config.json)"
if ctr_run_detached plainfs $B/plainfs; then pass plainfs-started; else fail plainfs-started "$CRUN_ERR"; fi
check plainfs-gone ctr_gone plainfs

# --- a carve and its release ------------------------------------------------
mk_bundle $B/c14 c14 '{class: latency, cpus: 1}' /kubepods/pod14/c14
if ctr_run_detached c14 $B/c14; then pass c14-started; else fail c14-started "$CRUN_ERR"; fi
cpus=$(carve_field c14 cpus)
check_match c14-carved "[0-9]*" "$cpus"
wait_for 5 grep -q 'carve c14' "$LOG" || true
one c14-carve-line "daemon\.info corecarve\[[0-9]+\]: carve c14: class latency on performance cpus $cpus parked [0-9,-]+ mems [0-9,-]+ \($want_mode\) in /kubepods/pod14/c14\$"
check c14-gone ctr_gone c14
wait_for 5 grep -q 'release c14' "$LOG" || true
one c14-release-line "daemon\.info corecarve\[[0-9]+\]: release c14: class latency, cpus $cpus \($want_mode\) given back\$"

# --- a refusal: the reason, with the classes the policy has -----------------
mk_bundle $B/r14 r14 '{class: warp, cpus: 1}' /kubepods/pod14/r14
if ctr_run_detached r14 $B/r14; then
	fail r14-refused "crun run succeeded"
else
	pass r14-refused
fi
wait_for 5 grep -q 'refuse r14' "$LOG" || true
one r14-refuse-line 'daemon\.warn corecarve\[[0-9]+\]: refuse r14 at createRuntime: annotation corecarve\.io/placement: class: unknown placement class "warp" \(known: latency'
ctr_kill_delete r14 >/dev/null 2>&1 || true

# (Checked last: by now any line the full hook had sent for it is written.)
check_eq plainfs-no-line 0 "$(line ' plainfs' | wc -l)"
# Control characters an annotation carries never start a log line of their own.
check_eq no-forged-lines "" "$(grep -v -E '^[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [^ ]+ [a-z]+\.[a-z]+ ' "$LOG" || true)"
# Sending is what the sandbox allows on the log socket: no denial.
check_eq no-sandbox-denials "" "$(dmesg | grep 'type=1326' | grep 'comm="corecarve"' | head -n 3)"
demo "$(cat "$LOG")"
