#!/bin/sh
# Build the initramfs that boots the k8s guest: busybox, the modules the
# disk and containerd need, and this run's payload, which k8s/init copies
# into the disk image (mkimage.sh) before it hands over to systemd.
#
# Usage: mkinit.sh KERNEL_DIR OUT.cpio.gz
# Environment:
#   CORECARVE_BIN  the corecarve binary (default <repo>/corecarve)
#   E2E_SCENARIOS  shell pattern on scenario file names (default *): only
#                  the scenarios marked "# e2e-guest: k8s" are taken, those
#                  also marked "# e2e-only: bench" only with CC_BENCH=1
#   CC_EFFECT_PROBE  the static bench/effect-probe for "e2e-needs:
#                  effect-probe" (default <repo>/build/bench/effect-probe)
#
# Payload (/e2e in the guest): bin/busybox with its applet links (the
# scenarios run under busybox sh, as in the initramfs guest; Debian's tools
# come first on PATH), bin/corecarve (also installed as /usr/bin/corecarve),
# lib.sh, hooklib.sh, podmanlib.sh, cri/ (the kubelet stand-in), k8s/ (the runner and its
# unit), the repository's manifests/ and systemd/ units, and images: container images built
# here from local files (a pause image from cri/pause.c, busybox, and the
# DaemonSet's image: corecarve with its libraries, busybox as /bin/sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/.." && pwd)
repo=$(cd "$e2e/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 KERNEL_DIR OUT.cpio.gz" >&2; exit 2; }
kdir=$(cd "$1" && pwd)
out=$2
ccbin=${CORECARVE_BIN:-$repo/corecarve}
# The first stage (static: no libraries to copy).
firstbin=${CORECARVE_FIRST_STAGE_BIN:-$repo/corecarve-hook}
pattern=${E2E_SCENARIOS:-*}
die() {
	echo "mkinit(k8s): $*" >&2
	exit 1
}
[ -x "$ccbin" ] || die "no corecarve binary at $ccbin (make)"
[ -x "$firstbin" ] || die "no corecarve-hook at $firstbin (make)"
busybox=$(command -v busybox) || die "busybox not found (busybox-static)"
py=/usr/bin/python3
[ -x "$py" ] || die "$py not found: the image tarballs are made with Debian's python3"
command -v gcc >/dev/null || die "gcc not found (build-essential)"
# shellcheck source-path=SCRIPTDIR/.. source=kdir.sh
. "$e2e/kdir.sh"
kdir_find "$kdir" ||
	die "no kernel in $kdir: want boot/vmlinuz-<ver> with lib/modules/<ver>/ (6.x) or usr/lib/modules/<ver>/vmlinuz (7.x); run fetch-kernels.sh"
kver=$KVER
modbase=$KMODBASE
moddir=$modbase/lib/modules/$kver
# Without modules.builtin modprobe reports a built-in module as not found.
[ -s "$moddir/modules.builtin" ] ||
	die "$moddir/modules.builtin is missing: modprobe cannot tell a built-in module from a missing one (7.x: unpack linux-base-<abi> too; fetch-kernels.sh does)"

stage=$(mktemp -d "${TMPDIR:-/tmp}/cc-k8sinit.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/proc" "$stage/sys" \
	"$stage/dev" "$stage/lib/modules/e2e" "$stage/e2e/bin" "$stage/e2e/scenarios" "$stage/e2e/images" \
	"$stage/e2e/cri" "$stage/e2e/k8s"
cp "$busybox" "$stage/bin/busybox"
"$busybox" --list-full | while read -r a; do
	[ "$a" = bin/busybox ] || [ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
cp "$busybox" "$stage/e2e/bin/busybox"
"$busybox" --list | while read -r a; do
	[ "$a" = busybox ] || ln -s busybox "$stage/e2e/bin/$a"
done
cp "$ccbin" "$stage/e2e/bin/corecarve"
cp "$firstbin" "$stage/e2e/bin/corecarve-hook"

# Modules: the disk, the NIC (its IRQs), overlay (containerd's snapshotter).
# The 7.x tree is under usr/ (kdir.sh): $modbase is the base depmod and
# modprobe take.
[ -s "$moddir/modules.dep" ] || depmod -b "$modbase" "$kver"
: >"$stage/e2e/modules.order"
for m in virtio_pci virtio_net virtio_blk overlay; do
	modprobe -d "$modbase" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done >"$stage/kos" || die "modprobe cannot resolve the modules for $kver"
while read -r ko; do
	base=$(basename "$ko")
	name=${base%.xz}
	name=${name%.zst}
	grep -qx "$name" "$stage/e2e/modules.order" && continue
	case $base in
	*.xz) xz -dc "$ko" >"$stage/lib/modules/e2e/$name" ;;
	*.zst) zstd -qdc "$ko" >"$stage/lib/modules/e2e/$name" ;;
	*) cp "$ko" "$stage/lib/modules/e2e/$name" ;;
	esac
	echo "$name" >>"$stage/e2e/modules.order"
done <"$stage/kos"
rm -f "$stage/kos"

n=0
held=
for s in "$e2e"/scenarios/*.sh ${E2E_EXTRA_SCENARIOS:+"$E2E_EXTRA_SCENARIOS"/*.sh}; do
	[ -e "$s" ] || continue
	b=$(basename "$s")
	# shellcheck disable=SC2254 # a pattern
	case $b in $pattern | ${pattern}.sh) ;; *) continue ;; esac
	grep -qs '^# e2e-guest: k8s' "$s" || continue
	# Benchmarks only in the run that asks for them (as mkinitramfs.sh).
	if [ "${CC_BENCH:-0}" != 1 ] && grep -qs '^# e2e-only: bench' "$s"; then
		held="$held $b"
		continue
	fi
	cp "$s" "$stage/e2e/scenarios/$b"
	n=$((n + 1))
done
if [ "$n" -eq 0 ]; then
	[ -z "$held" ] || die "'$pattern' matches only$held, which runs only with CC_BENCH=1"
	die "no k8s-guest scenario matches '$pattern'"
fi
cp "$e2e/lib.sh" "$e2e/hooklib.sh" "$e2e/podmanlib.sh" "$e2e/kwarn.sh" "$stage/e2e/"
cp "$e2e"/cri/*.py "$stage/e2e/cri/"
cp "$here/guest-run.sh" "$here/e2e.service" "$stage/e2e/k8s/"
cp -a "$repo/manifests" "$stage/e2e/manifests"
cp -a "$repo/systemd" "$stage/e2e/systemd"
mkdir -p "$stage/e2e/examples"
cp "$repo/examples/kubernetes-pod.yaml" "$stage/e2e/examples/"

# Images.  The DaemonSet's: corecarve and what ldd names, busybox as the
# shell its audit loop runs in.
gcc -static -Os -o "$stage/pause" "$e2e/cri/pause.c"
"$py" "$e2e/cri/mkoci.py" "$stage/e2e/images/pause.tar" localhost/e2e/pause:1 \
	--entrypoint '["/pause"]' --file "$stage/pause=/pause" 2>/dev/null
rm -f "$stage/pause"
links=$("$busybox" --list | grep -v '^busybox$' | sed 's|.*|--link=/bin/&=busybox|')
# shellcheck disable=SC2086 # one option per applet
"$py" "$e2e/cri/mkoci.py" "$stage/e2e/images/busybox.tar" localhost/e2e/busybox:1 \
	--file "$busybox=/bin/busybox" $links --dir /tmp --dir /proc --dir /sys --dir /dev --dir /etc \
	--cmd '["/bin/sh"]' 2>/dev/null
libs=$(ldd "$ccbin" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' |
	while read -r l; do printf -- '--file=%s=%s ' "$(readlink -f "$l")" "$l"; done)
# corecarve dlopen()s libsmartcols for its tables (cli/table.c), which ldd
# does not name: without it the DaemonSet's audit cannot print its table.
smartcols=$(ldconfig -p 2>/dev/null | awk '$1 == "libsmartcols.so.1" { print $NF; exit }')
[ -n "$smartcols" ] || die "libsmartcols.so.1 not found (apt-get install libsmartcols1)"
libs="$libs --file=$(readlink -f "$smartcols")=$smartcols"
# What the DaemonSet's init container runs besides (install-on-node.sh, as
# the Containerfile's Debian image has them): glibc's ldd (a bash script)
# with bash and its libraries, ldconfig (static), the hooks.d files and the
# default policy.
bash_bin=$(command -v bash) && ldd_bin=$(command -v ldd) && ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
[ -x "$ldconfig_bin" ] || die "ldconfig not found (libc-bin)"
for l in $(ldd "$bash_bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }'); do
	case " $libs " in *"=$l "*) ;; *) libs="$libs --file=$(readlink -f "$l")=$l" ;; esac
done
installer="--file $(readlink -f "$bash_bin")=/bin/bash --file $ldd_bin=/usr/bin/ldd --file $(readlink -f "$ldconfig_bin")=/sbin/ldconfig"
for h in "$repo"/manifests/hooks.d/*.json; do
	installer="$installer --file $h=/usr/share/corecarve/hooks.d/$(basename "$h")"
done
installer="$installer --file $repo/examples/policy-default.yaml=/usr/share/corecarve/policy-default.yaml"
links=$(printf '%s\n' $links | grep -v -e '^--link=/bin/bash=' -e '^--link=/sbin/ldconfig=' -e '^--link=/usr/bin/ldd=')
# shellcheck disable=SC2086 # option lists
"$py" "$e2e/cri/mkoci.py" "$stage/e2e/images/corecarve.tar" ghcr.io/corecarve/corecarve:0.1.0 \
	--file "$ccbin=/usr/bin/corecarve" --file "$firstbin=/usr/bin/corecarve-hook" $libs --file "$busybox=/bin/busybox" $links \
	$installer \
	--file "$repo/manifests/kubernetes/image/install-on-node.sh=/usr/libexec/corecarve/install-on-node.sh" \
	--dir /tmp --dir /proc --dir /sys --dir /dev --dir /etc --entrypoint '["/usr/bin/corecarve"]' 2>/dev/null

# The static bench/effect-probe (CC_EFFECT_PROBE, as mkinitramfs.sh), and
# for "e2e-needs: bench-effect" (97-effect-native) a built checkout's files
# as make bench-effect finds them, under /e2e/repo: bench/effect.sh, the e2e
# helpers and 96-effect.sh it runs, corecarve and corecarve-hook at the top,
# build/bench/effect-probe.
if grep -qsE '^# e2e-needs:.*\<effect-probe\>' "$stage"/e2e/scenarios/*.sh; then
	probe=${CC_EFFECT_PROBE:-$repo/build/bench/effect-probe}
	[ -x "$probe" ] || die "no effect-probe at $probe: build it with make bench-build"
	ldd "$probe" 2>&1 | grep -q 'not a dynamic executable' ||
		die "$probe is not static: the container rootfs has no libc; build it with make bench-build"
	cp "$probe" "$stage/e2e/bin/effect-probe"
	if grep -qsE '^# e2e-needs:.*\<bench-effect\>' "$stage"/e2e/scenarios/*.sh; then
		r=$stage/e2e/repo
		mkdir -p "$r/bench" "$r/tests/e2e/scenarios" "$r/build/bench"
		cp "$repo/bench/effect.sh" "$r/bench/"
		cp "$e2e/lib.sh" "$e2e/hooklib.sh" "$r/tests/e2e/"
		cp "$e2e/scenarios/96-effect.sh" "$r/tests/e2e/scenarios/"
		cp "$ccbin" "$r/corecarve"
		cp "$firstbin" "$r/corecarve-hook"
		cp "$probe" "$r/build/bench/effect-probe"
	fi
fi

# The real kubelet for "e2e-needs: kubelet" (55-kubelet): $KUBELET_BIN,
# else mkkubelet.sh's (built from its Go module once, then cached).
if grep -qsE '^# e2e-needs:.*\<kubelet\>' "$stage"/e2e/scenarios/*.sh; then
	kubelet=${KUBELET_BIN:-}
	[ -n "$kubelet" ] || kubelet=$(sh "$here/mkkubelet.sh" | tail -n 1) || die "mkkubelet.sh failed (above)"
	[ -x "$kubelet" ] || die "no kubelet at $kubelet"
	cp "$kubelet" "$stage/e2e/bin/kubelet"
fi

cp "$here/init" "$stage/init"
chmod 0755 "$stage/init"
[ "$(id -u)" != 0 ] || mknod -m 600 "$stage/dev/console" c 5 1
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinit(k8s): $out ($(du -k "$out" | cut -f1) KiB, kernel $kver, $n scenario(s), modules: $(tr '\n' ' ' <"$stage/e2e/modules.order"))"
