# shellcheck shell=sh
# Helpers for e2e scenarios. Sourced by tests/e2e/scenarios/*.sh inside the
# guest (busybox sh), as /e2e/lib.sh:   . /e2e/lib.sh
#
# Result lines go to the console, each at the start of a line:
#   PASS <scenario>/<name>
#   FAIL <scenario>/<name>: <reason>
#   SKIP <scenario>/<name>: <reason>      (counted separately, never as a
#                                         pass; fails the run under CI=true)
#   INFO <scenario>: <text>               (facts for the log; never parsed)
#
# Environment set by /init: CC_SCENARIO (file name without .sh), CC_RESULTS
# (file the runner checks for "reported something"), CC_KERNEL ("6.1",
# "6.12", "7" for the newest 7.x: from cc.kernel= on the kernel command
# line; probe a feature rather than test the label where one can), CC_DEMO (1 with
# run.sh --demo).

CC_SCENARIO=${CC_SCENARIO:-$(basename "$0" .sh)}
CC_RESULTS=${CC_RESULTS:-/dev/null}
CC_DEMO=${CC_DEMO:-0}
# karg NAME: the value of NAME=VALUE on the guest kernel's command line
# (run.sh passes cc.kernel, cc.bench, cc.bench_pairs, ...), or nothing.
karg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline 2>/dev/null; }
if [ -z "${CC_KERNEL:-}" ]; then
	CC_KERNEL=$(karg 'cc\.kernel')
	[ -n "$CC_KERNEL" ] || CC_KERNEL=$(uname -r | cut -d. -f1,2)
fi
CC_BIN=${CC_BIN:-/usr/bin/corecarve}
# The hook's first stage, registered as the manifests register it for
# containerd (hooks/first_stage.c): it runs $CC_BIN's copy beside it,
# /usr/bin/corecarve, when there is work.  CC_FIRST_STAGE= registers
# `$CC_BIN hook` itself.
CC_FIRST_STAGE=${CC_FIRST_STAGE-/usr/bin/corecarve-hook}
CC_POLICY=${CC_POLICY:-/etc/corecarve/policy.yaml}
CGROOT=${CGROOT:-/sys/fs/cgroup}
CC_ROOTFS_TEMPLATE=${CC_ROOTFS_TEMPLATE:-/rootfs-template}
CC_CTR_DB=${CC_CTR_DB:-/run/e2e/ctr}
# The crun binary and its global options. /init switch_roots into a tmpfs, so
# crun's default pivot_root works; set CC_CRUN_RUN_OPTS=--no-pivot if a
# scenario ever has to run on the initramfs root itself.
CC_CRUN=${CC_CRUN:-crun}
CC_CRUN_RUN_OPTS=${CC_CRUN_RUN_OPTS:-}
export CC_KERNEL

# ---- results -------------------------------------------------------------

_cc_oneline() { printf '%s' "$*" | tr '\n\t' '  ' | cut -c1-400; }

pass() {
	printf 'PASS %s/%s\n' "$CC_SCENARIO" "$1"
	echo "PASS $1" >>"$CC_RESULTS"
}

# fail NAME REASON...
fail() {
	_n=$1
	shift
	printf 'FAIL %s/%s: %s\n' "$CC_SCENARIO" "$_n" "$(_cc_oneline "$*")"
	echo "FAIL $_n" >>"$CC_RESULTS"
	return 0
}

# skip NAME REASON...
skip() {
	_n=$1
	shift
	printf 'SKIP %s/%s: %s\n' "$CC_SCENARIO" "$_n" "$(_cc_oneline "$*")"
	echo "SKIP $_n" >>"$CC_RESULTS"
}

info() { printf 'INFO %s: %s\n' "$CC_SCENARIO" "$*"; }

# kwarn_expect FUNCTION WHY: this scenario provokes a kernel WARNING in
# FUNCTION on this kernel, for the reason WHY (a known kernel bug, with
# where it is documented).  The runner then accepts that warning and only
# it (kwarn.sh: kwarn_report); any other warning, or a taint beyond W,
# still fails the scenario.  Declare it only on the kernels a probe shows
# the bug on.
kwarn_expect() {
	[ -n "${CC_KWARN_EXPECT:-}" ] || return 0
	printf '%s %s\n' "$1" "$2" >>"$CC_KWARN_EXPECT"
	info "declared: this scenario makes the kernel warn in $1 ($2)"
}

# demo TEXT: only printed with run.sh --demo.
demo() { [ "$CC_DEMO" != 1 ] || printf 'DEMO %s: %s\n' "$CC_SCENARIO" "$*"; }

# check NAME CMD [ARGS...]: PASS if CMD exits 0, else FAIL with its status
# and the head of its output.
check() {
	_n=$1
	shift
	if _out=$("$@" 2>&1); then
		pass "$_n"
	else
		_rc=$?
		fail "$_n" "\`$*\` exited $_rc: $(printf '%s' "$_out" | head -n 3)"
	fi
}

# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected '$2', got '$3'"
	fi
}

# check_match NAME GLOB ACTUAL: shell pattern match (case).
check_match() {
	# shellcheck disable=SC2254 # the pattern is meant to be a pattern
	case $3 in
	$2) pass "$1" ;;
	*) fail "$1" "expected something matching '$2', got '$3'" ;;
	esac
}

# wait_for TIMEOUT_S CMD [ARGS...]: poll (10 Hz) until CMD succeeds.
wait_for() {
	_t=$(($1 * 10))
	shift
	while [ "$_t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		usleep 100000
		_t=$((_t - 1))
	done
	return 1
}

# ---- kernel / cgroup facts -------------------------------------------------

# kernel_ge MAJOR.MINOR: the running kernel is at least that version. Prefer
# probing files (cg_has_exclusive) for features; this is for reporting.
kernel_ge() {
	_want=$1
	_have=$(uname -r | cut -d- -f1)
	[ "$(printf '%s\n%s\n' "$_want" "$_have" | sort -t. -k1,1n -k2,2n | head -n 1)" = "$_want" ]
}

# cg_has_exclusive: the kernel has cpuset.cpus.exclusive (remote partitions).
# The probe's files exist only with cpuset enabled below the root, which
# corecarve does on its first carve; under systemd (the k8s guest) it may be
# off until then (systemd enables a controller only while a unit needs it),
# so the probe enables it as the hook would.
cg_has_exclusive() {
	[ -e "$CGROOT/cgroup.subtree_control" ] || return 1
	grep -qw cpuset "$CGROOT/cgroup.subtree_control" ||
		echo +cpuset >"$CGROOT/cgroup.subtree_control" 2>/dev/null || true
	_probe=$CGROOT/.e2e-probe-$$
	mkdir -p "$_probe" 2>/dev/null || return 1
	[ -e "$_probe/cpuset.cpus.exclusive" ]
	_r=$?
	rmdir "$_probe" 2>/dev/null
	return $_r
}

# cg_conflict_strips [CPUS [CPU]]: how this kernel meets a member cgroup whose
# cpuset.cpus claims a CPU of a valid sibling partition, probed with two
# scratch first-level cgroups (a partition on CPUS, default 14-15; a sibling
# then claiming CPU, default 14): status 0 when the partition stays valid
# (the claimed CPUs are stripped from the sibling instead: Linux 7.0's
# "cgroup/cpuset: Don't invalidate sibling partitions on cpuset.cpus
# conflict"), 1 when it turns "root invalid" (6.1, 6.12), 2 when the probe
# could not tell (no partition to start from). Run it with CPUS uncarved.
cg_conflict_strips() {
	_a=$CGROOT/.e2e-conflict-a-$$
	_b=$CGROOT/.e2e-conflict-b-$$
	mkdir "$_a" "$_b" 2>/dev/null || {
		rmdir "$_a" "$_b" 2>/dev/null
		return 2
	}
	_r=2
	if printf '%s\n' "${1:-14-15}" >"$_a/cpuset.cpus" 2>/dev/null &&
		echo root >"$_a/cpuset.cpus.partition" 2>/dev/null &&
		[ "$(cat "$_a/cpuset.cpus.partition")" = root ] &&
		printf '%s\n' "${2:-14}" >"$_b/cpuset.cpus" 2>/dev/null; then
		case $(cat "$_a/cpuset.cpus.partition") in
		root) _r=0 ;;
		"root invalid"*) _r=1 ;;
		esac
	fi
	echo member >"$_a/cpuset.cpus.partition" 2>/dev/null
	rmdir "$_b" "$_a" 2>/dev/null
	return $_r
}

# cg_read CGROUP FILE: print a cgroup file ("" if missing). CGROUP is relative
# to the cgroup2 root ("" or "/" for the root itself).
# With the shell's read alone: a scenario reads hundreds of them, and cat
# costs an exec (some 40 ms under TCG) each.
cg_read() {
	_f=$CGROOT/${1#/}/$2
	[ -r "$_f" ] || return 0
	{ while IFS= read -r _l || [ -n "$_l" ]; do printf '%s\n' "$_l"; done; } 2>/dev/null <"$_f" || true
}

# cg_write CGROUP FILE VALUE: write, returning the write's status; on failure
# the error text is left in $CG_ERR.
cg_write() {
	# shellcheck disable=SC2034 # read by the caller
	CG_ERR=$( (printf '%s\n' "$3" >"$CGROOT/${1#/}/$2") 2>&1) && return 0
	return 1
}

# cg_mkchain PATH: create every cgroup on PATH (e.g. kubepods/pod1/ctr1) and
# enable +cpuset +cpu in each parent's subtree_control.
cg_mkchain() {
	_p=
	for _c in $(echo "${1#/}" | tr / ' '); do
		printf '+cpuset +cpu\n' >"$CGROOT/${_p:+$_p/}cgroup.subtree_control" || return 1
		_p=${_p:+$_p/}$_c
		mkdir -p "$CGROOT/$_p" || return 1
	done
}

# cg_rmtree PATH: remove a cgroup subtree (children first). Partitions are
# reset to member first so the CPUs go back to the parent.
cg_rmtree() {
	_d=$CGROOT/${1#/}
	[ -d "$_d" ] || return 0
	find "$_d" -depth -type d | while read -r _x; do
		[ -w "$_x/cpuset.cpus.partition" ] && echo member >"$_x/cpuset.cpus.partition" 2>/dev/null
		rmdir "$_x" 2>/dev/null || true
	done
	[ ! -d "$_d" ]
}

# ---- policy --------------------------------------------------------------

# write_policy YAML: install the corecarve policy the hooks read.
write_policy() {
	mkdir -p "$(dirname "$CC_POLICY")"
	printf '%s\n' "$1" >"$CC_POLICY"
}

# ---- OCI bundles and containers -------------------------------------------

# json_str STRING: STRING as a JSON string literal (with quotes). Handles
# backslash, double quote, tab, CR and newlines (other control characters are
# not expected in test input).
# A string with none of those is printed as it is, by the shell alone: a
# bundle takes some twenty of them, and sed and awk for each cost about 2 s
# a container under TCG.
_CC_TAB=$(printf '\t')
_CC_CR=$(printf '\r')
_CC_NL='
'
json_str() {
	case $1 in
	*[\\\"$_CC_TAB$_CC_CR]* | *"$_CC_NL"*) ;;
	*)
		printf '"%s"' "$1"
		return 0
		;;
	esac
	printf '"'
	printf '%s\n' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$_CC_TAB/\\\\t/g" -e "s/$_CC_CR/\\\\r/g" |
		awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }'
	printf '"'
}

# json_list WORD...: ["WORD", ...]
json_list() {
	printf '['
	_sep=
	for _w in "$@"; do
		printf '%s%s' "$_sep" "$(json_str "$_w")"
		_sep=', '
	done
	printf ']'
}

# mk_bundle DIR ID ANNOTATION_YAML [CGROUPS_PATH] [QUOTA] [PERIOD]
#
# Creates DIR/config.json, an OCI 1.0 spec for crun:
#   - root: /rootfs-template itself (static busybox), read-only: every
#     container shares it, as podman's containers share an image's layers
#     (a copy of its 400 applet links took 1 to 3 s a container under TCG,
#     a quarter of a scenario's time); with CC_OWN_ROOTFS=1 a read-write
#     copy in DIR/rootfs, for a scenario that puts files in it
#   - process: sh -c "$CC_CMD" (default: print Cpus_allowed_list, then sleep)
#   - namespaces pid, mount, ipc, uts; mounts /proc, /dev (tmpfs), /dev/pts,
#     /dev/shm
#   - linux.cgroupsPath CGROUPS_PATH (default /kubepods/pod1/ID)
#   - linux.resources.cpu.quota/period when QUOTA is given (PERIOD default
#     100000); linux.resources.cpu.cpus when CC_CPUSET_CPUS is set
#   - annotations: corecarve.io/placement = ANNOTATION_YAML (omitted when
#     empty), plus CC_ANNOTATIONS (newline-separated key=value lines)
#   - hooks: for each stage in CC_HOOKS (default "createRuntime poststop";
#     set CC_HOOKS= for none) run `$CC_FIRST_STAGE <stage>` (when CC_BIN is
#     the corecarve beside it), else `$CC_BIN hook <stage>`, with env
#     CORECARVE_POLICY=$CC_POLICY and CC_HOOK_ENV (space-separated K=V)
#   - crun's run.oci.hooks.stdout/stderr annotations send hook output to
#     DIR/hooks.out and DIR/hooks.err.
mk_bundle() {
	_dir=$1
	_id=$2
	_yaml=$3
	_cgpath=${4:-/kubepods/pod1/$_id}
	_quota=${5:-}
	_period=${6:-100000}
	_cmd=${CC_CMD:-grep Cpus_allowed_list /proc/self/status; exec sleep 1000}
	_hooks=${CC_HOOKS-createRuntime poststop}

	rm -rf "$_dir"
	mkdir -p "$_dir"
	if [ "${CC_OWN_ROOTFS:-0}" = 1 ]; then
		cp -a "$CC_ROOTFS_TEMPLATE" "$_dir/rootfs" || return 1
		_root='"path": "rootfs", "readonly": false'
	else
		_root="\"path\": $(json_str "$CC_ROOTFS_TEMPLATE"), \"readonly\": true"
	fi

	_res=
	if [ -n "$_quota" ] || [ -n "${CC_CPUSET_CPUS:-}" ]; then
		_cpu=
		if [ -n "$_quota" ]; then
			_cpu="\"quota\": $_quota, \"period\": $_period"
		fi
		if [ -n "${CC_CPUSET_CPUS:-}" ]; then
			_cpu="${_cpu:+$_cpu, }\"cpus\": $(json_str "$CC_CPUSET_CPUS")"
		fi
		_res=",
		\"resources\": { \"cpu\": { $_cpu } }"
	fi

	_ann="\"run.oci.hooks.stdout\": $(json_str "$_dir/hooks.out"),
		\"run.oci.hooks.stderr\": $(json_str "$_dir/hooks.err")"
	if [ -n "$_yaml" ]; then
		_ann="$_ann,
		\"corecarve.io/placement\": $(json_str "$_yaml")"
	fi
	if [ -n "${CC_ANNOTATIONS:-}" ]; then
		_extra=$(printf '%s\n' "$CC_ANNOTATIONS" | while IFS= read -r _kv; do
			[ -n "$_kv" ] || continue
			printf ',\n\t\t%s: %s' "$(json_str "${_kv%%=*}")" "$(json_str "${_kv#*=}")"
		done)
		_ann="$_ann$_extra"
	fi

	_hookjson=
	# shellcheck disable=SC2086 # word lists on purpose
	for _st in $_hooks; do
		if [ -n "$CC_FIRST_STAGE" ] && [ "$CC_BIN" = "${CC_FIRST_STAGE%/*}/corecarve" ] && [ -x "$CC_FIRST_STAGE" ]; then
			_path=$CC_FIRST_STAGE _args=$(json_list corecarve-hook "$_st")
		else
			_path=$CC_BIN _args=$(json_list corecarve hook "$_st")
		fi
		_h="{ \"path\": $(json_str "$_path"), \"args\": $_args, \"env\": $(json_list "CORECARVE_POLICY=$CC_POLICY" "PATH=/usr/sbin:/usr/bin:/sbin:/bin" ${CC_HOOK_ENV:-}), \"timeout\": 60 }"
		_hookjson="${_hookjson:+$_hookjson,
		}$(json_str "$_st"): [ $_h ]"
	done

	cat >"$_dir/config.json" <<JSON
{
	"ociVersion": "1.0.2",
	"process": {
		"terminal": false,
		"user": { "uid": 0, "gid": 0 },
		"args": $(json_list sh -c "$_cmd"),
		"env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "CTR_ID=$_id"],
		"cwd": "/",
		"noNewPrivileges": true
	},
	"root": { $_root },
	"hostname": $(json_str "$_id"),
	"mounts": [
		{ "destination": "/proc", "type": "proc", "source": "proc" },
		{ "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
		  "options": ["nosuid", "strictatime", "mode=755", "size=65536k"] },
		{ "destination": "/dev/pts", "type": "devpts", "source": "devpts",
		  "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"] },
		{ "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
		  "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"] }
	],
	"hooks": { $_hookjson },
	"annotations": {
		$_ann
	},
	"linux": {
		"cgroupsPath": $(json_str "$_cgpath"),
		"namespaces": [
			{ "type": "pid" }, { "type": "mount" }, { "type": "ipc" }, { "type": "uts" }
		]$_res
	}
}
JSON
}

# ctr_run_detached ID BUNDLE: `crun run -d`. The container's stdout/stderr
# go to BUNDLE/ctr.out / ctr.err, crun's own to BUNDLE/crun.err (crun prints
# a failing hook there), hook output to BUNDLE/hooks.{out,err}. Returns crun's
# status; on failure the crun error is printed as INFO and left in $CRUN_ERR.
ctr_run_detached() {
	mkdir -p "$CC_CTR_DB"
	echo "$2" >"$CC_CTR_DB/$1"
	# shellcheck disable=SC2086 # option list
	timeout -s KILL 90 "$CC_CRUN" run -d $CC_CRUN_RUN_OPTS --bundle "$2" "$1" \
		</dev/null >"$2/ctr.out" 2>"$2/crun.err"
	_rc=$?
	# crun run -d hands the container its own stdout/stderr: the same files.
	CRUN_ERR=$(cat "$2/crun.err" 2>/dev/null)
	if [ $_rc != 0 ]; then
		info "crun run $1 exited $_rc: $(_cc_oneline "$CRUN_ERR")"
		[ ! -s "$2/hooks.err" ] || info "hooks.err of $1: $(_cc_oneline "$(cat "$2/hooks.err")")"
	fi
	return $_rc
}

# ctr_bundle ID: the bundle directory ctr_run_detached recorded.
ctr_bundle() { cat "$CC_CTR_DB/$1" 2>/dev/null; }

# ctr_pid ID: the container's init pid (from `crun state`).
ctr_pid() {
	"$CC_CRUN" state "$1" 2>/dev/null | sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p' | head -n 1
}

# ctr_status ID: created / running / stopped (empty if unknown).
ctr_status() {
	"$CC_CRUN" state "$1" 2>/dev/null | sed -n 's/^ *"status": *"\([a-z]*\)".*/\1/p' | head -n 1
}

# pid_cgroup PID: the process's cgroup-v2 path, relative to the cgroup2 root.
pid_cgroup() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

# ctr_cgroup ID: the container's cgroup, relative to the cgroup2 root.
ctr_cgroup() {
	_pid=$(ctr_pid "$1")
	[ -n "$_pid" ] && pid_cgroup "$_pid"
}

# ctr_cpus ID: Cpus_allowed_list of the container's init process.
ctr_cpus() {
	_pid=$(ctr_pid "$1")
	[ -n "$_pid" ] && sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$_pid/status"
}

# ctr_output ID: what the container printed so far.
ctr_output() { cat "$(ctr_bundle "$1")/ctr.out" 2>/dev/null; }

# ctr_wait_output ID PATTERN [TIMEOUT_S]: wait until the container's output
# has a line matching the grep -E PATTERN.
ctr_wait_output() {
	_b=$(ctr_bundle "$1")
	wait_for "${3:-20}" grep -qE "$2" "$_b/ctr.out"
}

_ctr_not_running() { [ "$(ctr_status "$1")" != running ]; }

# ctr_kill_delete ID: SIGKILL the container, wait for it to stop, delete it
# (which runs the poststop hooks). crun's stderr goes to BUNDLE/delete.err.
# Returns the delete's status.
ctr_kill_delete() {
	_b=$(ctr_bundle "$1")
	[ -n "$_b" ] || _b=/tmp
	timeout -s KILL 30 "$CC_CRUN" kill "$1" KILL 2>"$_b/kill.err" || true
	wait_for 20 _ctr_not_running "$1" || true
	timeout -s KILL 60 "$CC_CRUN" delete -f "$1" 2>"$_b/delete.err"
	_rc=$?
	if [ $_rc != 0 ]; then
		info "crun delete $1 exited $_rc: $(_cc_oneline "$(cat "$_b/delete.err")")"
	fi
	rm -f "$CC_CTR_DB/$1"
	return $_rc
}

# ctr_gone ID: ctr_kill_delete, and no poststop hook failed: crun only warns
# about a failing poststop (on its stderr, BUNDLE/delete.err), its delete
# still exits 0.  Prints crun's stderr when one did.
ctr_gone() {
	_gb=$(ctr_bundle "$1")
	[ -n "$_gb" ] || _gb=/tmp
	ctr_kill_delete "$1" || return 1
	if grep -q 'error executing hook' "$_gb/delete.err" 2>/dev/null; then
		cat "$_gb/delete.err"
		return 1
	fi
}

# ctr_cleanup_all: force-delete every container this scenario started.
ctr_cleanup_all() {
	for _f in "$CC_CTR_DB"/*; do
		[ -e "$_f" ] || continue
		ctr_kill_delete "$(basename "$_f")" >/dev/null 2>&1 || true
	done
}
