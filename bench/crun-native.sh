#!/bin/bash
# What registering the hook costs a container start natively, on this
# host: `crun run` of a container that runs `true`, three arms, interleaved
# and shuffled per round, ROUNDS rounds:
#   plain       no hook
#   hook        `corecarve hook` registered for createRuntime and
#               poststop, the container not annotated
#   first-stage corecarve-hook (the static first stage beside CORECARVE)
#               registered the same way: what every container pays with
#               the registration the manifests use
#   hook-floor  static busybox `dd of=/dev/null` registered the same way:
#               the least any hook binary costs.  It reads its stdin as
#               every hook must: crun writes the state to the hook's stdin,
#               and a `true` that exits first makes crun fail the start
#               ("writing to pipe: Broken pipe", hook exit code -33)
# Needs root, crun and busybox (static).  A host whose cgroups are hybrid
# (v1 controllers, as on the machine this was written on) makes crun
# refuse; the runs therefore happen in a private mount namespace with a
# plain cgroup2 mount and crun's cgroup manager disabled: no cgroup is
# made, which the unannotated hook does not need.  Times come from bash's
# $EPOCHREALTIME (no process started to read the clock).
#
# Usage: crun-native.sh CORECARVE [ROUNDS]
set -eu

bin=$1
rounds=${2:-100}
if [ "$(id -u)" != 0 ] || ! command -v crun >/dev/null || ! command -v busybox >/dev/null ||
	! command -v unshare >/dev/null; then
	echo "crun-native: needs root, crun, busybox and unshare; skipped"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/corecarve-bench-crun-XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
busybox=$(command -v busybox)
mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev"
cp "$busybox" "$dir/rootfs/bin/busybox"
ln -s busybox "$dir/rootfs/bin/true"

# bundle ARM HOOKS_JSON
bundle() {
	mkdir -p "$dir/$1"
	ln -s "$dir/rootfs" "$dir/$1/rootfs"
	cat >"$dir/$1/config.json" <<JSON
{
  "ociVersion": "1.0.2",
  "process": { "terminal": false, "user": { "uid": 0, "gid": 0 }, "args": ["/bin/true"],
               "env": ["PATH=/bin"], "cwd": "/", "noNewPrivileges": true },
  "root": { "path": "rootfs", "readonly": false },
  "hostname": "bench",
  "mounts": [ { "destination": "/proc", "type": "proc", "source": "proc" } ],
  "hooks": { $2 },
  "linux": { "namespaces": [ { "type": "pid" }, { "type": "mount" }, { "type": "ipc" }, { "type": "uts" } ] }
}
JSON
}
hook() { printf '"createRuntime": [ { "path": "%s", "args": ["%s", %s] } ], "poststop": [ { "path": "%s", "args": ["%s", %s] } ]' \
	"$1" "$2" "$3" "$1" "$2" "$4"; }
bundle plain ''
bundle hook "$(hook "$bin" corecarve '"hook", "createRuntime"' '"hook", "poststop"')"
bundle first-stage "$(hook "$(dirname "$bin")/corecarve-hook" corecarve-hook '"createRuntime"' '"poststop"')"
bundle hook-floor "$(hook "$dir/rootfs/bin/busybox" dd '"of=/dev/null", "status=none"' '"of=/dev/null", "status=none"')"

cat >"$dir/run.sh" <<'EOF'
set -eu
dir=$1 rounds=$2
umount -l /sys/fs/cgroup 2>/dev/null || true
mount -t cgroup2 none /sys/fs/cgroup
for ((i = 0; i < rounds; i++)); do
	for a in $(printf '%s\n' plain hook first-stage hook-floor | shuf --random-source=<(yes "$i")); do
		t0=$EPOCHREALTIME
		crun --cgroup-manager=disabled run --bundle "$dir/$a" "cc-bench-$a-$i" </dev/null >/dev/null
		t1=$EPOCHREALTIME
		echo "$a $i ${t0/./} ${t1/./}"
	done
done
EOF
CORECARVE_STATE_DIR="$dir/state" unshare -m bash "$dir/run.sh" "$dir" "$rounds" >"$dir/times"

awk -v rounds="$rounds" '
	{ d = ($4 - $3) / 1000; t[$1, $2] = d; v[$1] = v[$1] " " d }
	function median(s,   a, n, i, j, x) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		p = median(v["plain"])
		printf "crun run natively (this host, cgroup manager disabled), %d rounds, ms:\n", rounds
		n = split("plain hook first-stage hook-floor", arms, " ")
		for (k = 1; k <= n; k++) {
			a = arms[k]; r = ""
			for (i = 0; i < rounds; i++) if (t["plain", i] > 0) r = r " " t[a, i] / t["plain", i]
			m = median(v[a]); pr = median(r)
			printf "  %-11s median %7.2f  ratio of medians %.3f  median of per-round ratios %.3f\n", a, m, m / p, pr
			printf "BENCH crun-native arm=%s median_ms=%.3f ratio_of_medians=%.3f median_pair_ratio=%.3f n=%d\n", a, m, m / p, pr, rounds > "/dev/stderr"
		}
	}' "$dir/times" 2>&1
