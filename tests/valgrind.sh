#!/bin/sh
# valgrind memcheck over the corecarve commands on the real-machine fixtures
# (../shared/fixtures, or $CC_SHARED_DIR/fixtures) and synthetic hosts:
# every command that reads a topology, a policy, a ledger or an OCI state,
# on its success paths and its error paths.
#
# Usage: tests/valgrind.sh [BINARY]     (default ./corecarve; make valgrind)
# Prints one line per command and a last line
#   valgrind: N commands, N with errors
# A command fails when memcheck reports an error (invalid read or write,
# use of uninitialised memory, a definitely or indirectly lost block) or
# when its exit status is not the expected one.  "Still reachable" blocks
# (hwloc's and libyaml's process-wide caches) are not errors.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${1:-$repo/corecarve}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "valgrind.sh: no binary at $bin (make first)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not installed (scripts/deps.sh)" >&2; exit 2; }
fixtures=${CC_SHARED_DIR:-$repo/../shared}/fixtures

work=$(mktemp -d /tmp/cc-valgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
total=0 bad=0

# vg NAME STATUS ARGS... (stdin from $VG_STDIN, default /dev/null)
vg() {
	name=$1 want=$2
	shift 2
	total=$((total + 1))
	log=$work/$name.vg
	valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --track-origins=yes --log-file="$log" \
		"$bin" "$@" <"${VG_STDIN:-/dev/null}" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	# valgrind 3.19 does not know openat2 (437): it answers ENOSYS and
	# the root layer falls back to openat.  Its 5-line warning is no error.
	awk '/unhandled amd64-linux syscall: 437/ { skip = 5 } skip > 0 { skip--; next } { print }' \
		"$log" >"$log.errors"
	mv "$log.errors" "$log"
	if [ $rc -eq 99 ] || [ -s "$log" ]; then
		bad=$((bad + 1))
		echo "valgrind: $name: memcheck errors (exit $rc):"
		sed 's/^/    /' "$log" | head -n 40
	elif [ $rc -ne "$want" ]; then
		bad=$((bad + 1))
		echo "valgrind: $name: exit $rc, expected $want: $(head -c 300 "$work/$name.err")"
	else
		printf 'valgrind: %-28s clean (exit %d)\n' "$name" "$rc"
	fi
}

# tree DIR FILE TOP: a fixture's sysfs tree, extracted once; "" when absent.
tree() {
	[ -f "$fixtures/$1/$2" ] || { echo "SKIPPED: fixture $1/$2 not found under $fixtures" >&2; return 1; }
	mkdir -p "$work/$1"
	tar -xf "$fixtures/$1/$2" -C "$work/$1" 2>/dev/null || return 1
	echo "$work/$1/$3"
}

policy=$work/policy.yaml
cat >"$policy" <<'EOF'
reserved: "0-1"
minShared: 1
classes:
  latency:
    coreType: performance
    smt: isolate
    irq: steer-away
  batch:
    coreType: efficient
    fallback: performance
    smt: full
  shared:
    coreType: any
    exclusive: false
EOF
state=$work/state
mkdir -m 0700 "$state"
cat >"$state/ledger.json" <<'EOF'
{"version": 1, "carves": [{"id": "c1", "kind": "container", "cgroup": "/kubepods/c1",
 "class": "latency", "core_class": "performance", "mode": "remote-partition", "cpus": "2,4",
 "parked": "3,5", "mems": "0", "exclusive": true, "steer_irqs": true, "created": 1700000000,
 "changes": [{"type": "cpu.max", "cgroup": "/kubepods", "old": "50000 100000"}]}],
 "sections": {}}
EOF
chmod 0600 "$state/ledger.json"
syn="pack:2 numa:1 core:4 pu:2"

vg help 0 --help
vg version 0 --version
vg unknown-command 2 frobnicate
vg topology-synthetic 0 topology --synthetic "$syn"
vg topology-synthetic-json 0 topology --synthetic "$syn | performance=0-7 efficient=8-15" --json
vg topology-synthetic-svg 0 topology --synthetic "$syn" --svg "$work/t.svg"
vg topology-bad-synthetic 2 topology --synthetic "pack:2 core:"
vg plan-synthetic 0 plan --synthetic "$syn" --policy "$policy" --class latency --cpus 2 --state "$state"
vg plan-json 0 plan --synthetic "$syn" --policy "$policy" --class batch --cpus 2 --state "$state" --json
vg plan-refused 1 plan --synthetic "$syn" --policy "$policy" --class latency --cpus 7 --state "$state"
vg plan-unknown-class 2 plan --synthetic "$syn" --policy "$policy" --class warp --cpus 1 --state "$state"
vg status 0 status --synthetic "$syn" --state "$state"
vg status-json 0 status --synthetic "$syn" --state "$state" --json
printf 'version: 1\n' >"$work/bad-policy.yaml"
vg policy-unknown-key 2 plan --synthetic "$syn" --policy "$work/bad-policy.yaml" --class latency --cpus 1

if t=$(tree F03-intel-alderlake-p-4P8E test-data-sample1.tar.xz sample1); then
	vg topology-F03 0 topology --root "$t"
	vg topology-F03-json 0 topology --root "$t" --json --policy "$policy"
	vg plan-F03 0 plan --root "$t" --policy "$policy" --class batch --cpus 4 --state "$state"
	vg status-F03 0 status --root "$t" --state "$state" --json
	vg init-parent-F03 2 init-parent /corecarve.slice --root "$t"
	# The hook on a captured tree: every stage up to the first cgroup
	# write, which a tree that is not the host refuses.
	mkdir -p "$t/proc/4242" "$t/sys/fs/cgroup/kubepods/pod1/c9" "$t/sys/fs/cgroup/kubepods/c1"
	echo "0::/kubepods/pod1/c9" >"$t/proc/4242/cgroup"
	echo "cpuset cpu memory" >"$t/sys/fs/cgroup/cgroup.controllers"
	mkdir -p "$work/bundle"
	echo '{"linux": {"cgroupsPath": "/kubepods/pod1/c9"}}' >"$work/bundle/config.json"
	printf '{"id":"c9","pid":4242,"bundle":"%s","annotations":{"corecarve.io/placement":"{class: batch, cpus: 2}"}}' \
		"$work/bundle" >"$work/state-c9.json"
	VG_STDIN=$work/state-c9.json vg hook-F03-to-first-write 2 hook createRuntime --root "$t" --policy "$policy" --state "$state"
	grep -q 'only changed on the real host' "$work/hook-F03-to-first-write.err" ||
		{ bad=$((bad + 1)); echo "valgrind: hook-F03-to-first-write stopped early: $(cat "$work/hook-F03-to-first-write.err")"; }
	printf '{"id":"c9","pid":4242,"annotations":{"corecarve.io/placement":"{class: latency, cpus: zero}"}}' >"$work/state-bad.json"
	VG_STDIN=$work/state-bad.json vg hook-bad-annotation 2 hook createRuntime --root "$t" --policy "$policy" --state "$state"
	printf '{"id":"gone","status":"stopped"}' >"$work/state-gone.json"
	VG_STDIN=$work/state-gone.json vg hook-poststop-unknown 0 hook poststop --root "$t" --state "$state"
fi
if t=$(tree F06-amd-epyc-7451-2s x86_64-epyc_7451.tar.gz x86_64-epyc_7451); then
	vg topology-F06 0 topology --root "$t" --json
	vg plan-F06 0 plan --root "$t" --class latency --cpus 6 --policy "$policy" --state "$state"
fi
if t=$(tree F10-intel-xeon-silver-4108-2s 32intel64-2p8co2t+8ve.tar.bz2 32intel64-2p8co2t+8ve); then
	vg topology-F10 0 topology --root "$t"
fi
if t=$(tree F11-arm-X3-A715-A710-A510 arm-A510-A710-A715-X3.tar.gz arm-A510-A710-A715-X3); then
	vg topology-F11 0 topology --root "$t" --json
fi
if [ -f "$fixtures/F05-amd-zen5-strixpoint-ryzen-ai9-hx370/AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml" ]; then
	vg topology-F05-xml 0 topology --hwloc-xml \
		"$fixtures/F05-amd-zen5-strixpoint-ryzen-ai9-hx370/AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml"
else
	echo "SKIPPED: fixture F05 not found under $fixtures" >&2
fi

printf '{"id":' >"$work/state-truncated.json"
VG_STDIN=$work/state-truncated.json vg hook-truncated-state 2 hook createRuntime --root "$work" --state "$state"
vg irq-status-no-proc 2 irq status --root "$work" --state "$state" --sample-ms 0

echo "valgrind: $total commands, $bad with errors"
[ "$bad" -eq 0 ]
