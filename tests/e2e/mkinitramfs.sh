#!/bin/sh
# Build the e2e initramfs for one unpacked Debian kernel.
#
# Usage: mkinitramfs.sh KERNEL_DIR OUT.cpio.gz
#   KERNEL_DIR  a directory fetch-kernels.sh unpacked (boot/ + lib/modules/<ver>/,
#               or usr/lib/modules/<ver>/ with vmlinuz in it: kdir.sh)
# Environment:
#   CORECARVE_BIN   the corecarve binary to install as /usr/bin/corecarve
#                   (default: <repo>/corecarve)
#   E2E_SCENARIOS   shell pattern on scenario file names (default: *)
#   CC_BENCH=1      also the scenarios marked "# e2e-only: bench" (95-bench:
#                   make bench-qemu); without it they are left out, so a
#                   normal run neither runs nor skips them
#   CC_EFFECT_PROBE the static bench/effect-probe for a scenario with
#                   "# e2e-needs: effect-probe" (96-effect; default
#                   <repo>/build/bench/effect-probe)
#   E2E_EXTRA_SCENARIOS  a directory of more *.sh scenarios (ad-hoc debugging;
#                   same name as one in scenarios/ replaces it)
#
# Contents: static busybox + applet links, crun and corecarve with the shared
# libraries ldd names, the virtio modules (virtio_pci, virtio_net,
# virtio_blk and their dependencies, decompressed, in load order in
# /e2e/modules.order), a busybox container rootfs at /rootfs-template,
# /e2e/lib.sh, /e2e/scenarios/*.sh, tests/e2e/overlay/ if present, and /init.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ $# -ne 2 ]; then
	echo "usage: $0 KERNEL_DIR OUT.cpio.gz" >&2
	exit 2
fi
kdir=$(cd "$1" && pwd)
out=$2
ccbin=${CORECARVE_BIN:-$repo/corecarve}
# The first stage (static: no libraries to copy), beside corecarve.
firstbin=${CORECARVE_FIRST_STAGE_BIN:-$repo/corecarve-hook}
pattern=${E2E_SCENARIOS:-*}

die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

[ -x "$ccbin" ] || die "no corecarve binary at $ccbin: build corecarve first (make)"
busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
	die "$busybox is not static (install busybox-static)"
crun=$(command -v crun) || die "crun not found (scripts/deps.sh)"
# shellcheck source=kdir.sh
. "$here/kdir.sh"
kdir_find "$kdir" ||
	die "no kernel in $kdir: want boot/vmlinuz-<ver> with lib/modules/<ver>/ (6.x) or usr/lib/modules/<ver>/vmlinuz (7.x); run fetch-kernels.sh"
kver=$KVER
modbase=$KMODBASE
moddir=$modbase/lib/modules/$kver
# Without modules.builtin modprobe reports a built-in module (virtio_pci is
# one from 6.12 on) as not found; 7.x ships it in linux-base-<abi>.
[ -s "$moddir/modules.builtin" ] ||
	die "$moddir/modules.builtin is missing: modprobe cannot tell a built-in module from a missing one (7.x: unpack linux-base-<abi> too; fetch-kernels.sh does)"
for t in depmod modprobe xz; do
	command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs kmod and xz-utils)"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/cc-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM

mkdir -p "$stage"/bin "$stage"/sbin "$stage"/usr/bin "$stage"/usr/sbin "$stage"/etc \
	"$stage"/proc "$stage"/sys "$stage"/dev "$stage"/run "$stage"/tmp "$stage"/root \
	"$stage"/newroot "$stage"/var/lib "$stage"/lib/modules/e2e "$stage"/e2e/scenarios

# busybox and its applets (relative paths from --list-full, e.g. usr/bin/awk)
install_busybox() {
	root=$1
	mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin"
	cp "$busybox" "$root/bin/busybox"
	"$busybox" --list-full | while read -r a; do
		[ "$a" = bin/busybox ] && continue
		[ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
	done
}
install_busybox "$stage"

# copy_with_libs SRC DEST: install an executable and everything ldd lists.
copy_with_libs() {
	mkdir -p "$stage$(dirname "$2")"
	cp -L "$1" "$stage$2"
	chmod 0755 "$stage$2"
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			[ -e "$stage$lib" ] && continue
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
	if ldd "$1" | grep -q 'not found'; then
		die "$1 has missing libraries: $(ldd "$1" | grep 'not found' | tr '\n' ' ')"
	fi
}
copy_with_libs "$crun" /usr/bin/crun
copy_with_libs "$ccbin" /usr/bin/corecarve
[ -x "$firstbin" ] || die "no corecarve-hook at $firstbin (make)"
cp "$firstbin" "$stage/usr/bin/corecarve-hook"
# corecarve dlopen()s libsmartcols for its tables (cli/table.h): ldd does
# not name it.
smartcols=$(ldconfig -p 2>/dev/null | awk '$1 == "libsmartcols.so.1" { print $NF; exit }')
[ -n "$smartcols" ] || die "libsmartcols.so.1 not found (apt-get install libsmartcols1)"
mkdir -p "$stage$(dirname "$smartcols")"
cp -L "$smartcols" "$stage$smartcols"

# Kernel modules. The Debian packages ship no modules.dep (depmod runs at
# install time), so run depmod on the unpacked tree, then let modprobe print
# the load order. The modules of 6.12 and 7.x are .ko.xz: decompress here, so
# busybox insmod needs no xz support. Built-in ones (6.12 and 7.x have
# virtio_pci=y) print "builtin" and are skipped. The 7.x tree is under usr/
# (kdir.sh): $modbase is the base depmod and modprobe take.
[ -s "$moddir/modules.dep" ] || depmod -b "$modbase" "$kver"
: >"$stage/e2e/modules.order"
for m in virtio_pci virtio_net virtio_blk; do
	modprobe -d "$modbase" -S "$kver" --show-depends "$m" >"$stage/deps" ||
		die "modprobe cannot resolve $m for $kver"
	awk '$1 == "insmod" { print $2 }' "$stage/deps"
done >"$stage/kos"
rm -f "$stage/deps"
while read -r ko; do
	base=$(basename "$ko")
	case $base in
	*.ko.xz) name=${base%.xz} ;;
	*.ko.zst) name=${base%.zst} ;;
	*.ko.gz) name=${base%.gz} ;;
	*) name=$base ;;
	esac
	grep -qx "$name" "$stage/e2e/modules.order" && continue
	case $base in
	*.xz) xz -dc "$ko" >"$stage/lib/modules/e2e/$name" ;;
	*.zst) zstd -qdc "$ko" >"$stage/lib/modules/e2e/$name" ;;
	*.gz) gzip -dc "$ko" >"$stage/lib/modules/e2e/$name" ;;
	*) cp "$ko" "$stage/lib/modules/e2e/$name" ;;
	esac
	echo "$name" >>"$stage/e2e/modules.order"
done <"$stage/kos"
rm -f "$stage/kos"

# Container rootfs template: static busybox and its applet links.
install_busybox "$stage/rootfs-template"
mkdir -p "$stage"/rootfs-template/proc "$stage"/rootfs-template/dev "$stage"/rootfs-template/sys \
	"$stage"/rootfs-template/tmp "$stage"/rootfs-template/etc "$stage"/rootfs-template/root
echo 'root:x:0:0:root:/root:/bin/sh' >"$stage/rootfs-template/etc/passwd"
echo 'root:x:0:' >"$stage/rootfs-template/etc/group"

echo 'root:x:0:0:root:/root:/bin/sh' >"$stage/etc/passwd"
echo 'root:x:0:' >"$stage/etc/group"

# Scenarios, lib, init.
cp "$here/lib.sh" "$here/hooklib.sh" "$here/faultlib.sh" "$here/podmanlib.sh" "$here/kwarn.sh" "$stage/e2e/"
n=0
held=
for s in "$here"/scenarios/*.sh ${E2E_EXTRA_SCENARIOS:+"$E2E_EXTRA_SCENARIOS"/*.sh}; do
	[ -e "$s" ] || continue
	b=$(basename "$s")
	# shellcheck disable=SC2254 # E2E_SCENARIOS is a pattern
	case $b in
	$pattern | ${pattern}.sh) ;;
	*) continue ;;
	esac
	# The k8s guest's scenarios boot a disk of their own (k8s/mkinit.sh).
	grep -qs '^# e2e-guest: k8s' "$s" && continue
	# Benchmarks are not tests: only the run that asks for them has them.
	if [ "${CC_BENCH:-0}" != 1 ] && grep -qs '^# e2e-only: bench' "$s"; then
		held="$held $b"
		continue
	fi
	cp "$s" "$stage/e2e/scenarios/$b"
	n=$((n + 1))
done
if [ "$n" -eq 0 ]; then
	[ -z "$held" ] || die "'$pattern' matches only$held, which runs only with CC_BENCH=1 (make bench-qemu)"
	die "no scenario matches '$pattern' in $here/scenarios"
fi
# Podman only for the scenarios that need it (see mkpodman.sh).
if grep -qs '^# e2e-needs: podman' "$stage"/e2e/scenarios/*.sh; then
	# shellcheck source=mkpodman.sh
	. "$here/mkpodman.sh"
fi
# QEMU only for the scenarios that need it (see mkqemu.sh).
if grep -qs '^# e2e-needs: qemu' "$stage"/e2e/scenarios/*.sh; then
	# shellcheck source=mkqemu.sh
	. "$here/mkqemu.sh"
fi
# irqbalance only for the scenarios that need it (see mkirqbalance.sh).
if grep -qs '^# e2e-needs: irqbalance' "$stage"/e2e/scenarios/*.sh; then
	# shellcheck source=mkirqbalance.sh
	. "$here/mkirqbalance.sh"
fi
# util-linux flock (busybox has none) for the scenarios that hold the
# ledger lock to catch a hook waiting on it.
if grep -qs '^# e2e-needs: flock' "$stage"/e2e/scenarios/*.sh; then
	copy_with_libs "$(command -v flock)" /usr/bin/flock
fi
# bench/effect-probe.c (static) for 96-effect, the workload of make
# bench-effect, which builds it and names it in CC_EFFECT_PROBE.
if grep -qs '^# e2e-needs: effect-probe' "$stage"/e2e/scenarios/*.sh; then
	probe=${CC_EFFECT_PROBE:-$repo/build/bench/effect-probe}
	[ -x "$probe" ] || die "no effect-probe at $probe: build it with make bench-build (or run make bench-effect)"
	ldd "$probe" 2>&1 | grep -q 'not a dynamic executable' ||
		die "$probe is not static: the container rootfs has no libc; build it with make bench-build"
	mkdir -p "$stage/e2e/bin"
	cp "$probe" "$stage/e2e/bin/effect-probe"
fi
cp "$here/init" "$stage/init"
chmod 0755 "$stage/init"
if [ -d "$here/overlay" ]; then
	cp -a "$here/overlay/." "$stage/"
fi

# /dev/console for the kernel to open before /init runs (the kernel's
# built-in initramfs has one too; this does not depend on it).
if [ "$(id -u)" = 0 ]; then
	mknod -m 600 "$stage/dev/console" c 5 1
fi

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(du -k "$out" | cut -f1) KiB, kernel $kver, $n scenario(s), modules: $(tr '\n' ' ' <"$stage/e2e/modules.order"))"
