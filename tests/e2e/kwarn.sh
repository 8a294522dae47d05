# kwarn.sh: did a scenario make the kernel warn?  Sourced by a guest's
# scenario runner around each scenario (issue #45: a WARN taints the
# kernel, and on a host booted with panic_on_warn=1 the write that reached
# it takes the node down), and by the unit test test_kwarn against
# recorded console text.  POSIX sh and awk only: busybox runs it.

# The taint flags, bit by bit (Documentation/admin-guide/tainted-kernels.rst).
KWARN_FLAGS=PFSRMBUDAWCIOELKXTNJ

# kwarn_mark: where the kernel stands now, "SECONDS TAINT": the timestamp
# of the last kernel log line (0 for none) and /proc/sys/kernel/tainted.
# A timestamp, not a line count: the ring buffer may wrap meanwhile.
kwarn_mark() {
	_kw_ts=$(dmesg 2>/dev/null | sed -n '$s/^\[ *\([0-9.]*\)\].*/\1/p')
	echo "${_kw_ts:-0} $(cat /proc/sys/kernel/tainted)"
}

# kwarn_taint_names MASK: the letters of the flags set in MASK ("W C").
kwarn_taint_names() {
	_kw_m=$1 _kw_i=0 _kw_out=
	while [ "$_kw_m" -gt 0 ] && [ $_kw_i -lt ${#KWARN_FLAGS} ]; do
		if [ $((_kw_m & 1)) = 1 ]; then
			_kw_out="$_kw_out${_kw_out:+ }$(printf '%s' "$KWARN_FLAGS" | cut -c$((_kw_i + 1)))"
		fi
		_kw_m=$((_kw_m >> 1)) _kw_i=$((_kw_i + 1))
	done
	echo "$_kw_out"
}

# kwarn_scan SINCE TAINT_BEFORE TAINT_AFTER < LOG: the kernel log (dmesg's
# "[ seconds] text" lines) read for what came after SINCE: prints a line
# naming each WARNING, BUG, Oops or panic (the first 4) with up to 8 frames
# of its call trace, and one naming the taint flags newly set; status 1
# when there is either, 0 when the kernel stayed quiet.
kwarn_scan() {
	_kw_new=$(($3 & ~$2))
	awk -v since="$1" '
		function ts(line) { sub(/^<[0-9]+>/, "", line); if (line !~ /^\[ *[0-9.]+\]/) return -1
			sub(/^\[ */, "", line); sub(/\].*/, "", line); return line + 0 }
		function text(line) { sub(/^<[0-9]+>/, "", line); sub(/^\[ *[0-9.]+\] ?/, "", line); return line }
		ts($0) > since + 0 {
			t = text($0)
			if (t ~ /^(WARNING:|BUG:|kernel BUG at|Oops|general protection fault|Kernel panic|UBSAN:|KASAN:|list_(add|del) corruption)/) {
				found++; left = 0
				if (found <= 4) { left = 8; printf "kernel: %s\n", t }
				next
			}
			# The call trace, not the registers: where the write came from.
			if (found && left > 0 && t ~ /^ *[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+\/0x[0-9a-f]+/) {
				left--; printf "  %s\n", t
			}
		}
		END { exit found ? 1 : 0 }'
	_kw_rc=$?
	if [ "$_kw_new" != 0 ]; then
		echo "kernel: tainted $3 (was $2): new flags $(kwarn_taint_names "$_kw_new")"
		_kw_rc=1
	fi
	return $_kw_rc
}

# kwarn_since MARK: kwarn_scan of this kernel's log against a kwarn_mark.
kwarn_since() {
	# shellcheck disable=SC2086 # "SECONDS TAINT"
	set -- $1
	dmesg 2>/dev/null | kwarn_scan "$1" "$2" "$(cat /proc/sys/kernel/tainted)"
}

# kwarn_judge EXPECT < SCAN: whether what kwarn_scan printed is only what a
# scenario declared it provokes: every headline a WARNING in a function
# EXPECT lists ("FUNCTION WHY" lines, kwarn_expect in lib.sh) and no new
# taint flag but W.  Prints the WHYs of the warnings it matched and exits
# 0; exits 1 when anything is undeclared (no EXPECT file: everything is).
kwarn_judge() {
	awk -v expect="${1:-/dev/null}" '
		BEGIN { while ((getline l < expect) > 0) { f = l; sub(/ .*/, "", f); w = l; sub(/^[^ ]* ?/, "", w); if (f != "") why[f] = w } }
		/^kernel: tainted / { if ($0 !~ /new flags W$/) bad = 1; next }
		/^kernel: / {
			h = $0; sub(/^kernel: /, "", h)
			if (h !~ /^WARNING:/) { bad = 1; next }
			fn = h; sub(/\+0x[0-9a-f]+\/0x[0-9a-f]+$/, "", fn); sub(/.* /, "", fn)
			if (!(fn in why)) { bad = 1; next }
			if (!(fn in said)) { said[fn] = 1; out = out (out == "" ? "" : "; ") fn ": " why[fn] }
		}
		END { if (bad || out == "") exit 1; print out }'
}

# kwarn_report NAME MARK EXPECT: the verdict on scenario NAME against its
# kwarn_mark: "PASS NAME/kernel-quiet" when the kernel stayed quiet; INFO
# lines when it warned only as the scenario declared (EXPECT, kwarn_judge);
# else "FAIL NAME/kernel-quiet: <the first line>" and INFO lines with the
# trace.  The runners of both guests call it after each scenario.
kwarn_report() {
	if _kw_out=$(kwarn_since "$2"); then
		echo "PASS $1/kernel-quiet"
		return 0
	fi
	if _kw_why=$(printf '%s\n' "$_kw_out" | kwarn_judge "$3"); then
		echo "INFO $1: the kernel warned as the scenario declared it would ($_kw_why):"
	else
		echo "FAIL $1/kernel-quiet: $(printf '%s\n' "$_kw_out" | sed -n '1s/^kernel: //p')"
	fi
	printf '%s\n' "$_kw_out" | while IFS= read -r _kw_l; do echo "INFO $1: kernel warned: $_kw_l"; done
}
