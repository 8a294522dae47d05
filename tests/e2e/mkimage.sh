#!/bin/sh
# Build a Debian root filesystem image for the e2e guests that boot from a
# disk (systemd as PID 1, a real container runtime): mmdebstrap from
# Debian's archive into a directory, then mkfs.ext4 -d into a raw image.
# Nothing is installed on the build host and its apt sources are not
# touched: mmdebstrap runs apt with options of its own.
#
# Usage: mkimage.sh --suite SUITE [--also SUITE...] --name NAME --packages "PKG ..." [--size MiB] [CACHE]
#   SUITE     a Debian suite (bookworm, trixie): the image's release
#   --also    more suites in the image's apt sources (e.g. sid), below SUITE
#             (APT::Default-Release): a package comes from one of them only
#             when PACKAGES names it so, PKG/SUITE (containerd/sid)
#   NAME      the image's name: CACHE/images/NAME.raw
#   PACKAGES  what goes in on top of the minbase variant
#   --size    the filesystem size in MiB (default: what the tree needs
#             plus 768 MiB for images, containers and logs)
#   CACHE     default <repo>/.cache/e2e
# Environment:
#   E2E_MIRROR   a Debian mirror URL for mmdebstrap (default: mmdebstrap's)
#
# The image is cached: CACHE/images/NAME.key holds a digest of this script,
# the suite, the packages and the mirror, and a matching image is reused.
# The guest's first boot writes nothing to it (run.sh boots it with
# -snapshot), so one build serves every run on that cache.
#
# What the tree gets beyond the packages (customize hook below): no
# services that start on their own (containerd is disabled: the scenarios
# start it with the configuration each needs; apt's timers, gettys and the
# like are masked), no documentation, an empty machine-id, hostname e2e.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

suite='' also='' name='' packages='' size=''
while [ $# -gt 0 ]; do
	case $1 in
	--suite) suite=$2; shift 2 ;;
	--also) also="$also $2"; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--packages) packages=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	-*) echo "mkimage: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
cache=${1:-$repo/.cache/e2e}
if [ -z "$suite" ] || [ -z "$name" ]; then
	echo "usage: $0 --suite SUITE [--also SUITE...] --name NAME --packages \"PKG ...\" [--size MiB] [CACHE]" >&2
	exit 2
fi
die() {
	echo "mkimage: $*" >&2
	exit 1
}
for t in mmdebstrap mkfs.ext4; do
	command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs mmdebstrap and e2fsprogs)"
done
[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap's root mode, device nodes in the tree)"

mkdir -p "$cache/images"
img=$cache/images/$name.raw
key=$( (cat "$0"; echo "$suite|$also|$packages|$size|${E2E_MIRROR:-}") | sha256sum | cut -c1-16)
if [ -s "$img" ] && [ "$(cat "$cache/images/$name.key" 2>/dev/null)" = "$key" ]; then
	echo "mkimage: $name present ($img, key $key)"
	exit 0
fi

start=$(date +%s)
work=$(mktemp -d "$cache/images/.build-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# shellcheck disable=SC2086 # the package list is words
incl=$(echo $packages | tr ' ' ',')

# The customize hook runs on the host with the tree as $1.
# shellcheck disable=SC2016 # $1 is mmdebstrap's, expanded in the hook
hook='set -e
systemctl --root="$1" disable containerd.service >/dev/null 2>&1 || true
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	fstrim.timer dpkg-db-backup.timer getty@tty1.service serial-getty@ttyS0.service \
	systemd-timesyncd.service systemd-networkd-wait-online.service; do
	systemctl --root="$1" mask "$u" >/dev/null 2>&1 || true
done
: >"$1/etc/machine-id"
echo e2e >"$1/etc/hostname"
printf "127.0.0.1 localhost e2e\n" >"$1/etc/hosts"
rm -rf "$1/var/cache/apt/"*.bin "$1/var/lib/apt/lists/"* "$1/var/log/"*'

# The sources: mmdebstrap's default mirror line for the suite alone; with
# --also, one line per suite on the same mirror and the image's own release
# the default (a package from another suite is named PKG/SUITE).
set --
release=
if [ -n "$also" ]; then
	mirror=${E2E_MIRROR:-http://deb.debian.org/debian}
	set -- "deb $mirror $suite main"
	for a in $also; do set -- "$@" "deb $mirror $a main"; done
	# shellcheck disable=SC2089 # apt's own quotes, literally
	release="APT::Default-Release \"$suite\""
elif [ -n "${E2E_MIRROR:-}" ]; then
	set -- "$E2E_MIRROR"
fi
# mmdebstrap reads none of the host's apt configuration.  A host whose apt
# accepts a Release file past its Valid-Until (a mirror that serves a
# snapshot of the archive: sid's InRelease is valid for a week) gets the
# same in the image's build; elsewhere apt checks it as usual.
valid=
eval "$(apt-config shell valid Acquire::Check-Valid-Until 2>/dev/null)" || valid=
case $valid in false | no | 0) valid='Acquire::Check-Valid-Until "false"' ;; *) valid= ;; esac
# shellcheck disable=SC2090 # see above
if ! timeout 1800 mmdebstrap --mode=root --variant=minbase --include="$incl" \
	--aptopt='Acquire::Retries "3"' ${release:+"--aptopt=$release"} ${valid:+"--aptopt=$valid"} \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
	--customize-hook="$hook" \
	"$suite" "$work/root" "$@" >"$work/mmdebstrap.log" 2>&1; then
	tail -n 30 "$work/mmdebstrap.log" >&2
	die "mmdebstrap $suite failed (above)"
fi
used=$(du -sm "$work/root" | cut -f1)
[ -n "$size" ] || size=$((used * 5 / 4 + 768))
rm -f "$img.tmp"
mkfs.ext4 -q -F -L e2e-root -E root_owner=0:0 -d "$work/root" "$img.tmp" "${size}M" ||
	die "mkfs.ext4 -d failed"
mv -f "$img.tmp" "$img"
echo "$key" >"$cache/images/$name.key"
{
	echo "suite=$suite${also:+ (also:$also)}"
	echo "packages=$packages"
	# shellcheck disable=SC2016,SC2046 # dpkg-query's format; the package words, less /SUITE
	chroot "$work/root" dpkg-query -W -f '${Package}=${Version}\n' $(echo "$packages" | sed 's|/[^ ]*||g') 2>/dev/null || true
} >"$cache/images/$name.manifest"
echo "mkimage: $name built in $(($(date +%s) - start))s: ${used} MiB tree, ${size} MiB image ($img)"
