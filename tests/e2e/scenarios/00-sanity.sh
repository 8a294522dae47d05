#!/bin/sh
# 00-sanity: the guest is the machine the other scenarios assume (cgroup2
# with cpuset+cpu, 16 CPUs in 2 packages / 2 NUMA nodes with adjacent SMT
# siblings), crun runs a plain busybox container, and corecarve starts.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
trap ctr_cleanup_all EXIT

has_word() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

check_eq cgroup2-mounted cgroup2 "$(awk -v m="$CGROOT" '$2 == m { print $3 }' /proc/mounts)"
ctrls=$(cg_read / cgroup.controllers)
check cgroup2-has-cpuset has_word cpuset "$ctrls"
check cgroup2-has-cpu has_word cpu "$ctrls"
sub=$(cg_read / cgroup.subtree_control)
if has_word cpuset "$sub" && has_word cpu "$sub"; then
	pass root-subtree-cpuset-cpu
else
	fail root-subtree-cpuset-cpu "root cgroup.subtree_control is '$sub'"
fi
info "cgroup.controllers: $ctrls; subtree_control: $sub"

sysc=/sys/devices/system/cpu
check_eq cpus-online 0-15 "$(cat $sysc/online)"
check_eq nproc-16 16 "$(nproc)"
check_eq numa-nodes-online 0-1 "$(cat /sys/devices/system/node/online)"
check_eq numa-node0-cpus 0-7 "$(cat /sys/devices/system/node/node0/cpulist)"
check_eq numa-node1-cpus 8-15 "$(cat /sys/devices/system/node/node1/cpulist)"
check_eq smt-siblings-cpu0 0-1 "$(cat $sysc/cpu0/topology/thread_siblings_list)"
check_eq smt-siblings-cpu15 14-15 "$(cat $sysc/cpu15/topology/thread_siblings_list)"
check_eq package-cpu8 1 "$(cat $sysc/cpu8/topology/physical_package_id)"
check_eq smt-active 1 "$(cat $sysc/smt/active 2>/dev/null || echo missing)"

# A plain container, no hooks: crun, the rootfs template and cgroupsPath work.
id=sanity
b=/tmp/bundles/$id
if CC_HOOKS='' mk_bundle "$b" "$id" '' /kubepods/pod1/$id && ctr_run_detached "$id" "$b"; then
	pass crun-run-detached
	if ctr_wait_output "$id" '^Cpus_allowed_list:' 30; then
		out=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$b/ctr.out")
		check_eq container-cpus-allowed 0-15 "$out"
		info "container printed Cpus_allowed_list: $out"
	else
		fail container-cpus-allowed "no Cpus_allowed_list line: $(cat "$b/ctr.out" "$b/crun.err" 2>/dev/null)"
	fi
	check_eq container-status running "$(ctr_status "$id")"
	check_eq container-cgroup /kubepods/pod1/$id "$(ctr_cgroup "$id")"
	check container-delete ctr_kill_delete "$id"
	check container-cgroup-removed test ! -d "$CGROOT/kubepods/pod1/$id"
else
	fail crun-run-detached "$(cat "$b/crun.err" 2>/dev/null)"
fi

# The harness's hook plumbing, with a stand-in hook script (not corecarve):
# crun runs createRuntime and poststop with the state on stdin, the
# annotation reaches config.json, hook stderr lands in hooks.err, and a
# failing hook fails `crun run` with the reason in crun.err.
hook=/tmp/e2e-hook.sh
cat >"$hook" <<'HOOK'
#!/bin/sh
# argv: corecarve hook STAGE, as for the real binary
state=$(cat)
echo "$2 $state" >>/tmp/e2e-hook.log
echo "hook $2 says hello on stderr" >&2
[ -z "${E2E_HOOK_FAIL:-}" ] || { echo "hook $2 failing on purpose" >&2; exit 3; }
HOOK
chmod +x "$hook"
rm -f /tmp/e2e-hook.log
id=hooked
b=/tmp/bundles/$id
yaml='cpus: 2
class: "exclusive"'
if CC_BIN=$hook mk_bundle "$b" "$id" "$yaml" && ctr_run_detached "$id" "$b"; then
	pass hook-container-runs
	check hook-createRuntime-ran grep -q "^createRuntime .*\"id\": *\"$id\"" /tmp/e2e-hook.log
	check hook-stderr-captured grep -q 'hook createRuntime says hello' "$b/hooks.err"
	check hook-annotation-in-config grep -q '"corecarve.io/placement": "cpus: 2\\nclass: \\"exclusive\\""' "$b/config.json"
	ctr_kill_delete "$id" || fail hook-delete "$(cat "$b/delete.err")"
	check hook-poststop-ran grep -q "^poststop .*\"id\": *\"$id\"" /tmp/e2e-hook.log
else
	fail hook-container-runs "$(cat "$b/crun.err" 2>/dev/null)"
fi
id=hookfail
b=/tmp/bundles/$id
if CC_BIN=$hook CC_HOOK_ENV=E2E_HOOK_FAIL=1 mk_bundle "$b" "$id" "" && ctr_run_detached "$id" "$b" 2>/dev/null; then
	fail hook-failure-fails-run "crun run succeeded although createRuntime exited 3"
else
	pass hook-failure-fails-run
	check hook-failure-in-crun-err grep -qi 'hook' "$b/crun.err"
	check hook-failure-stderr-captured grep -q 'failing on purpose' "$b/hooks.err"
	info "crun on a failing hook: $(head -n 2 "$b/crun.err" | tr '\n' ' ')"
	check hook-failure-no-container sh -c "! crun state $id >/dev/null 2>&1 || crun delete -f $id"
fi
ctr_cleanup_all

# corecarve itself: the binary and its shared libraries load.
if out=$("$CC_BIN" --help 2>&1); then
	pass corecarve-help
	info "corecarve --help: $(printf '%s' "$out" | head -n 1)"
else
	fail corecarve-help "$CC_BIN --help exited $?: $(printf '%s' "$out" | head -n 3)"
fi
