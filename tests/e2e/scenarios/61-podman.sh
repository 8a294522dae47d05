#!/bin/sh
# e2e-needs: podman
# 61-podman: the hooks.d files with their real consumer.  Debian's podman
# (rootful, vfs storage, no network, cgroupfs manager; crun) starts a
# container annotated corecarve.io/placement through --hooks-dir with
# manifests/hooks.d: it gets its carve, and gives it back on `podman rm`;
# a container without the annotation is untouched (the hook is not even
# run: hooks.d's "when" does not match).  62-podman-example runs
# examples/podman-run.sh (each scenario has its own time budget: podman
# under TCG takes seconds per command).
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
# shellcheck source-path=SCRIPTDIR/.. source=podmanlib.sh
. /e2e/podmanlib.sh

if ! command -v podman >/dev/null 2>&1; then
	skip podman "podman was not installed on the host that built the initramfs (scripts/deps.sh installs it)"
	exit 0
fi
# Each podman command takes seconds under TCG: clean up on the way out only
# when the scenario did not get to remove its containers itself.
left=1
trap '[ "$left" = 0 ] || timeout 60 podman rm -f -a -t 0 >/dev/null 2>&1 || true' EXIT

write_policy "$CC_HOOK_POLICY"
if cg_has_exclusive; then want_part=root; else want_part=member; fi
IMG=localhost/busybox:e2e
info "$(podman --version)"

if out=$(timeout 60 podman import /e2e/busybox-rootfs.tar $IMG 2>&1); then pass image-imported; else
	fail image-imported "$out"
	exit 0
fi

# The annotation in this podman's form (CSV-quoted before podman 5: without
# the quotes "{class: latency, cpus: 2}" arrives as two broken annotations).
ANN=$(podman_annotation 'corecarve.io/placement={class: latency, cpus: 2}')
if out=$(timeout 60 podman run -d --name pcomma --network none --hooks-dir /e2e/hooks.d \
	--annotation 'corecarve.io/placement={class: latency, cpus: 2}' $IMG true 2>&1); then
	info "podman $(podman --version | cut -d' ' -f3) keeps commas in --annotation"
	podman rm -f -t 0 pcomma >/dev/null 2>&1 || true
else
	info "podman splits --annotation at commas: $out"
fi

# --- annotated: carved through hooks.d ------------------------------------------
want=$(plan_field latency 2 cpus)
# crun writes the hooks' stdout and stderr where these annotations say.
HOOKLOG="--annotation run.oci.hooks.stderr=/run/pc1.hooks.err --annotation run.oci.hooks.stdout=/run/pc1.hooks.out"
# shellcheck disable=SC2086 # $HOOKLOG is two options
if run pc1 --hooks-dir /e2e/hooks.d --annotation "$ANN" $HOOKLOG; then
	pass annotated-started
else
	fail annotated-started "$out"
	info "hook stderr: $(cat /run/pc1.hooks.err 2>/dev/null)"
fi
id=$cid
pid=$cpid
check_eq annotated-sees-carve "$want" "$(seen_cpus pc1)"
check_eq annotated-annotation "{class: latency, cpus: 2}" \
	"$(podman inspect --format '{{index .Config.Annotations "corecarve.io/placement"}}' pc1 2>/dev/null)"
check_eq annotated-in-ledger "$want" "$(carve_field "$id" cpus)"
cg=$(pid_cgroup "$pid" || true)
info "podman container cgroup: $cg; carve cgroup: $(carve_field "$id" cgroup)"
check_eq annotated-carve-cgroup "$cg" "$(carve_field "$id" cgroup)"
check_eq annotated-partition "$want_part" "$(cg_read "$cg" cpuset.cpus.partition)"
check_eq annotated-effective "$want" "$(cg_read "$cg" cpuset.cpus.effective)"
check_eq annotated-mems "$(node_of_cpus "$want")" "$(cg_read "$cg" cpuset.mems)"
check_eq annotated-cpu-max "max 100000" "$(cg_read "$cg" cpu.max)"

# --- no annotation: untouched ---------------------------------------------------------
mid=$(ledger_sum)
if run pp --hooks-dir /e2e/hooks.d --cpus 0.5; then
	pass plain-started
else
	fail plain-started "$out"
fi
pcg=$(pid_cgroup "$cpid" || true)
check_eq plain-ledger-unchanged "$mid" "$(ledger_sum)"
check_eq plain-no-carve "" "$(carve_field "$cid" cpus)"
check_eq plain-cpuset-untouched "" "$(cg_read "$pcg" cpuset.cpus)"
check_eq plain-partition-member member "$(cg_read "$pcg" cpuset.cpus.partition)"
check_eq plain-quota-kept "50000 100000" "$(cg_read "$pcg" cpu.max)"
pcpus=$(seen_cpus pp)
if [ "$want_part" = root ]; then
	# The carve is exclusive: the plain container cannot run there.
	check plain-avoids-carve disjoint "$pcpus" "$want,$(carve_field "$id" parked)"
else
	info "plain container runs on $pcpus (cpuset-only on $CC_KERNEL: soft exclusivity)"
fi

# --- release ------------------------------------------------------------------------
if out=$(timeout 90 podman rm -f -t 0 pc1 pp 2>&1); then
	pass annotated-removed
	left=0
else
	fail annotated-removed "$out"
fi
wait_for 20 sh -c "! grep -q '\"$id\"' $CC_LEDGER" || true
check_eq annotated-released "" "$(carve_field "$id" cpus)"
check_eq annotated-ledger-empty "" "$(grep -o '"id": *"[^"]*"' $CC_LEDGER || true)"
check_eq root-effective-restored "0-15" "$(cg_read / cpuset.cpus.effective)"
