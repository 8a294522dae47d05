#!/bin/sh
# 53-podman-systemd: podman on a systemd-booted node, the way a podman host
# runs it: the hooks.d files installed in /usr/share/containers/oci/hooks.d
# (docs/hook.md; podman reads it without --hooks-dir), systemd's cgroup
# manager (Debian's default under systemd), the node image's podman (4.3 on
# bookworm, 5 on trixie), and each OCI runtime the image has: crun and runc
# run the same hook.  Per runtime: an annotated container is carved (its
# scope in machine.slice: a remote partition where the kernel has
# cpuset.cpus.exclusive, cpuset-only before), sees its CPUs, has no quota,
# and gives everything back on `podman rm`; an unannotated one never runs
# the hook.  The annotation's quoting is checked both ways: podman before 5
# reads it as CSV, podman 5 literally (docs/hook.md).  The corecarve.slice
# route is 48-podman-slice's.
# e2e-guest: k8s
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh
# shellcheck source-path=SCRIPTDIR/.. source=hooklib.sh
. /e2e/hooklib.sh
# shellcheck source-path=SCRIPTDIR/.. source=podmanlib.sh
. /e2e/podmanlib.sh

left=1
trap '[ "$left" = 0 ] || timeout 120 podman rm -f -a -t 0 >/dev/null 2>&1 || true' EXIT

write_policy "$CC_HOOK_POLICY"
pv=$(podman --version | sed 's/.* //')
info "podman $pv, $(crun --version | head -n 1), $(runc --version | head -n 1), $(systemctl --version | head -n 1), suite ${CC_SUITE:-?}"
check_eq cgroup-manager systemd "$(podman info --format '{{.Host.CgroupManager}}' 2>/dev/null)"

load_image || exit 0

# The annotation in this podman's form, and in the other version's (WRONG:
# unquoted for podman 4, CSV-quoted for podman 5).
ANN=$(podman_annotation 'corecarve.io/placement={class: latency, cpus: 2}')
case $ANN in
'"'*) WRONG='corecarve.io/placement={class: latency, cpus: 2}' ;;
*) WRONG='"corecarve.io/placement={class: latency, cpus: 2}"' ;;
esac
if cg_has_exclusive; then want_part=root want_mode=remote-partition; else want_part=member want_mode=cpuset-only; fi
root0=$(cg_read / cpuset.cpus.effective)

# Which directory podman reads without --hooks-dir: /usr/share/containers/
# oci/hooks.d, where `make install` puts the files.  podman 5.4 reads only
# that one (its debug log: "reading hooks from /usr/share/containers/oci/
# hooks.d"), so files in /etc/containers/oci/hooks.d alone (where the
# DaemonSet's installer writes them, for CRI-O) do nothing under podman.
# The CRI scenarios before this one leave them there: they go first.
rm -f /etc/containers/oci/hooks.d/corecarve-*.json /usr/share/containers/oci/hooks.d/corecarve-*.json
install_hooks /etc/containers/oci/hooks.d
if run etc-only --annotation "$ANN"; then
	if [ -n "$(carve_field "$cid" cpus)" ]; then etc=yes; else etc=no; fi
	info "podman $pv reads /etc/containers/oci/hooks.d without --hooks-dir: $etc"
	check_eq hooks-etc-only-not-read no "$etc"
else
	fail hooks-etc-only-started "$out"
fi
timeout 120 podman rm -f -t 0 etc-only >/dev/null 2>&1 || true
rm -f /etc/containers/oci/hooks.d/corecarve-*.json
install_hooks /usr/share/containers/oci/hooks.d

for rt in crun runc; do
	want=$(plan_field latency 2 cpus)
	n=c-$rt
	if run "$n" --runtime "$rt" --annotation "$ANN"; then pass "$rt-started"; else
		fail "$rt-started" "$out"
		continue
	fi
	check_eq "$rt-runtime" "$rt" "$(podman inspect --format '{{.OCIRuntime}}' "$n" 2>/dev/null)"
	check_eq "$rt-annotation" "{class: latency, cpus: 2}" \
		"$(podman inspect --format '{{index .Config.Annotations "corecarve.io/placement"}}' "$n" 2>/dev/null)"
	cg=$(carve_field "$cid" cgroup)
	pcg=$(pid_cgroup "$cpid" || true)
	info "$rt: task cgroup $pcg, carve $cg ($(carve_field "$cid" mode))"
	# crun nests the task in a "container" leaf of the scope when systemd
	# delegates it; the scope is what gets carved (docs/hook.md).
	check_match "$rt-scope" "/machine.slice/libpod-$cid.scope" "$cg"
	case $pcg in "$cg" | "$cg/container") pass "$rt-task-in-carve" ;; *) fail "$rt-task-in-carve" "task in $pcg, carve $cg" ;; esac
	check_eq "$rt-cpus" "$want" "$(carve_field "$cid" cpus)"
	check_eq "$rt-mode" "$want_mode" "$(carve_field "$cid" mode)"
	check_eq "$rt-sees-carve" "$want" "$(seen_cpus "$n")"
	check_eq "$rt-partition" "$want_part" "$(cg_read "$cg" cpuset.cpus.partition)"
	check_eq "$rt-effective" "$want" "$(cg_read "$cg" cpuset.cpus.effective)"
	check_eq "$rt-mems" "$(node_of_cpus "$want")" "$(cg_read "$cg" cpuset.mems)"
	check_eq "$rt-no-quota" "max 100000" "$(cg_read "$cg" cpu.max)"

	# Unannotated, beside it: hooks.d's "when" does not match, the hook
	# never runs, the ledger is as it was.
	carved=$cid
	mid=$(ledger_sum)
	if run "p-$rt" --runtime "$rt" --cpus 0.5; then pass "$rt-plain-started"; else fail "$rt-plain-started" "$out"; fi
	check_eq "$rt-plain-ledger-unchanged" "$mid" "$(ledger_sum)"
	check_eq "$rt-plain-not-carved" "" "$(carve_field "$cid" cpus)"
	# The quota is the runtime's: on the scope (runc, crun 1.21) or on the
	# "container" leaf the task is in (crun 1.8.1).
	ppcg=$(pid_cgroup "$cpid" || true)
	q=$(cg_read "${ppcg%/container}" cpu.max)
	[ "$q" != "max 100000" ] || q=$(cg_read "$ppcg" cpu.max)
	check_eq "$rt-plain-quota-kept" "50000 100000" "$q"
	if [ "$want_part" = root ]; then
		check "$rt-plain-avoids-carve" disjoint "$(seen_cpus "p-$rt")" "$want"
	fi

	if out=$(timeout 180 podman rm -f -t 0 "$n" "p-$rt" 2>&1); then pass "$rt-removed"; else fail "$rt-removed" "$out"; fi
	wait_for 30 sh -c "! grep -q '\"$carved\"' $CC_LEDGER" || true
	check_eq "$rt-released" "" "$(carve_field "$carved" cpus)"
	# systemd stops the scope once its last task is gone, a moment later.
	wait_for 30 sh -c "[ ! -d '$CGROOT$cg' ]" || true
	check_eq "$rt-scope-gone" no "$([ -d "$CGROOT$cg" ] && echo yes || echo no)"
	check_eq "$rt-root-restored" "$root0" "$(cg_read / cpuset.cpus.effective)"
done
left=0

# The other quoting: podman 4 splits the unquoted value at its comma (two
# broken annotations: the hook refuses the start); podman 5 keeps the quotes
# of the CSV form, and the key no longer matches hooks.d's "when" (not
# carved).  Either way no carve is left behind.
if run wrong --annotation "$WRONG"; then
	info "podman $pv with --annotation $WRONG: started, annotations $(podman inspect --format '{{json .Config.Annotations}}' wrong 2>/dev/null | cut -c1-200)"
	check_eq quoting-other-form-not-carved "" "$(carve_field "$cid" cpus)"
else
	info "podman $pv with --annotation $WRONG: refused: $(printf '%s' "$out" | tail -n 1 | cut -c1-200)"
	case $pv in [0-4].*) pass quoting-other-form-refused ;; *) fail quoting-other-form-refused "podman 5 refused: $out" ;; esac
fi
timeout 120 podman rm -f -t 0 wrong >/dev/null 2>&1 || true
check_eq quoting-ledger-empty "" "$(grep -o '"id": *"[^"]*"' "$CC_LEDGER" || true)"

# What the node guest's scenarios leave below the root: a first-level
# cgroup with an explicit cpuset.cpus blocks a partition root beside it on
# Linux 6.1 (48-podman-slice says why that runs first).
held='' probe_cpu=''
for d in "$CGROOT"/*/; do
	n=${d#"$CGROOT"}
	n=${n%/}
	c=$(cg_read "$n" cpuset.cpus)
	[ -n "$c" ] || continue
	info "left below the root: ${n#/} cpuset.cpus $c"
	[ -n "$held" ] || probe_cpu=$(printf '%s\n' "$c" | tr ',-' '  ' | awk '{ print $NF }')
	held="$held $n"
done
# Where such a cgroup blocks a partition root (no cpuset.cpus.exclusive:
# 6.1), init-parent's refusal names it; the kernel's reason does not.
if [ -n "$held" ] && ! cg_has_exclusive; then
	# --force: past the check for a kubelet's cgroups, to the kernel.
	if out=$("$CC_BIN" init-parent /e2e-probe --cpus "$probe_cpu" --force 2>&1); then
		fail init-parent-names-sibling "init-parent succeeded beside$held"
	else
		first=${held# }
		first=${first%% *}
		check_match init-parent-names-sibling "*siblings whose own cpuset.cpus holds some of its CPUs: *$first (cpuset.cpus *" "$out"
		info "init-parent beside$held: $out"
	fi
	rmdir "$CGROOT/e2e-probe" 2>/dev/null || true
	check_eq init-parent-probe-gone no "$([ -d "$CGROOT/e2e-probe" ] && echo yes || echo no)"
fi
check_eq root-restored "$root0" "$(cg_read / cpuset.cpus.effective)"
check_eq ledger-empty "" "$(grep -o '"id": *"[^"]*"' "$CC_LEDGER" || true)"
