#!/bin/sh
# 48-podman-slice: the route docs/hook.md gives kernels before 6.7, on a
# podman host: corecarve.slice (the unit), `corecarve init-parent
# /corecarve.slice`, which on a systemd host first gives the slice
# AllowedCPUs= and AllowedMemoryNodes= for the boot (without them systemd
# 252 writes "" to the slice's cpuset.cpus when it starts a scope there, and
# the attach fails with ENOSPC; systemd 257 turns cpuset off above it once no
# unit needs it), then podman --cgroup-parent=corecarve.slice under systemd's
# cgroup manager: a local partition, and the slice still a partition root
# with its CPUs after `podman rm` and a daemon-reload.
# First in the node guest, a podman host's state: before the CRI scenarios
# make it a kubelet's node (init-parent refuses one).  Run after them on
# Linux 6.1, init-parent --force read "root invalid (Cpu list in cpuset.cpus
# not exclusive)": init.scope and system.slice then hold cpuset.cpus 0-15,
# which 6.1's cpuset-only repairs leave (an empty list cannot be written back
# to a populated cgroup there); 53-podman-systemd lists them, as INFO.
# e2e-guest: k8s
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
# shellcheck source-path=SCRIPTDIR/.. source=podmanlib.sh
. /e2e/podmanlib.sh

HOOKS=/usr/share/containers/oci/hooks.d
cleanup() {
	timeout 120 podman rm -f -a -t 0 >/dev/null 2>&1 || true
	rm -f $HOOKS/corecarve-*.json
}
trap cleanup EXIT

write_policy "$CC_HOOK_POLICY"
info "podman $(podman --version | sed 's/.* //'), $(crun --version | head -n 1), $(systemctl --version | head -n 1), suite ${CC_SUITE:-?}"
install_hooks $HOOKS
load_image || exit 0
ANN=$(podman_annotation 'corecarve.io/placement={class: latency, cpus: 2}')
root0=$(cg_read / cpuset.cpus.effective)

# --- corecarve.slice: a local partition below a prepared parent -------------
mkdir -p /etc/systemd/system
cp /e2e/systemd/corecarve.slice /etc/systemd/system/
systemctl daemon-reload
systemctl start corecarve.slice || fail slice-started "systemctl start corecarve.slice failed"
if out=$("$CC_BIN" init-parent /corecarve.slice 2>&1); then pass init-parent; else fail init-parent "$out"; fi
# init-parent's CPUs: every one CC_HOOK_POLICY does not reserve; systemd
# prints a CPU set with spaces.
check_eq slice-allowed-cpus "2-7,10-15" "$(systemctl show -p AllowedCPUs --value corecarve.slice | tr ' ' ',')"
check_eq slice-allowed-mems "0-1" "$(systemctl show -p AllowedMemoryNodes --value corecarve.slice | tr ' ' ',')"
check_eq slice-partition root "$(cg_read /corecarve.slice cpuset.cpus.partition)"
want=$(plan_field latency 2 cpus)
if run s1 --runtime crun --cgroup-parent=corecarve.slice --annotation "$ANN"; then pass slice-started; else fail slice-started "$out"; fi
cg=$(carve_field "$cid" cgroup)
check_match slice-scope "/corecarve.slice/libpod-$cid.scope" "$cg"
check_eq slice-mode local-partition "$(carve_field "$cid" mode)"
check_eq slice-partition-root root "$(cg_read "$cg" cpuset.cpus.partition)"
check_eq slice-effective "$want" "$(cg_read "$cg" cpuset.cpus.effective)"
check_eq slice-sees-carve "$want" "$(seen_cpus s1)"
carved=$cid
if out=$(timeout 180 podman rm -f -t 0 s1 2>&1); then pass slice-removed; else fail slice-removed "$out"; fi
wait_for 30 sh -c "! grep -q '\"$carved\"' $CC_LEDGER" || true
check_eq slice-released "" "$(carve_field "$carved" cpus)"
wait_for 30 sh -c "[ ! -d '$CGROOT$cg' ]" || true
# systemd re-applies every unit's cgroup settings on a reload: the slice
# keeps what init-parent asked for.
systemctl daemon-reload
check_eq slice-partition-kept root "$(cg_read /corecarve.slice cpuset.cpus.partition)"
check_eq slice-cpus-back "2-7,10-15" "$(cg_read /corecarve.slice cpuset.cpus.effective)"
cg_write /corecarve.slice cpuset.cpus.partition member || fail slice-member "$CG_ERR"
systemctl revert corecarve.slice >/dev/null 2>&1 || true
systemctl stop corecarve.slice || true
check_eq slice-gone no "$([ -d "$CGROOT/corecarve.slice" ] && echo yes || echo no)"
check_eq root-restored "$root0" "$(cg_read / cpuset.cpus.effective)"
check_eq ledger-empty "" "$(grep -o '"id": *"[^"]*"' "$CC_LEDGER" || true)"
