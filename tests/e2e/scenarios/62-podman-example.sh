#!/bin/sh
# e2e-needs: podman
# 62-podman-example: examples/podman-run.sh as a user runs it: podman's
# default hooks directory (/usr/share/containers/oci/hooks.d, where `make
# install` puts corecarve's files), the annotation and nothing else; the
# container runs on its carve, `corecarve status` shows it, and the CPUs
# come back when the script removes the container (its own trap does).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh

if ! command -v podman >/dev/null 2>&1; then
	skip podman "podman was not installed on the host that built the initramfs (scripts/deps.sh installs it)"
	exit 0
fi

write_policy "$CC_HOOK_POLICY"
IMG=localhost/busybox:e2e
if ! podman image exists $IMG 2>/dev/null; then
	out=$(timeout 60 podman import /e2e/busybox-rootfs.tar $IMG 2>&1) || { fail image-imported "$out"; exit 0; }
fi
want=$(plan_field latency 2 cpus)
if out=$(timeout 120 sh /e2e/podman-run.sh $IMG 2>&1); then pass example-ran; else fail example-ran "$out"; fi
check_match example-sees-carve "*Cpus_allowed_list:*$want*" "$(echo "$out" | tr '\n' ' ')"
check_match example-status "*latency*performance*$want*" "$(echo "$out" | tr '\n' ' ')"
info "example output: $(echo "$out" | tr '\n' '|' | cut -c1-300)"
check_eq ledger-empty "" "$(grep -o '"id": *"[^"]*"' $CC_LEDGER 2>/dev/null || true)"
check_eq root-effective-restored "0-15" "$(cg_read / cpuset.cpus.effective)"
