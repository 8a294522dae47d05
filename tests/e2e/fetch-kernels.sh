#!/bin/sh
# Fetch the two Debian cloud kernels the e2e harness boots, without installing
# them: `apt-get download` + `dpkg -x` into the cache, nothing into /boot.
#
#   6.1  : bookworm's linux-image-cloud-amd64 dependency  (no cpuset.cpus.exclusive)
#   6.12 : the same metapackage from bookworm-backports     (remote partitions)
#
# Usage: fetch-kernels.sh [CACHE_DIR]      (default: <repo>/.cache/e2e)
# Result: CACHE_DIR/kernels/<label>/{boot/vmlinuz-*,lib/modules/*,PACKAGE}
# Idempotent: a kernel whose vmlinuz is already unpacked is not fetched again.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${1:-$repo/.cache/e2e}
mkdir -p "$cache/kernels" "$cache/debs"

# resolve [APT-OPTIONS...]: print the concrete linux-image-* package the
# cloud metapackage depends on for that suite.
resolve() {
	apt-cache depends "$@" linux-image-cloud-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-cloud-amd64\)$/\1/p' | head -n 1
}

# find_deb PACKAGE: the cached .deb of PACKAGE, if any.
find_deb() {
	for f in "$cache/debs/${1}_"*.deb; do
		[ -e "$f" ] && echo "$f" && return 0
	done
	return 0
}

updated=
fetch() {
	label=$1
	shift
	dest=$cache/kernels/$label
	if ls "$dest"/boot/vmlinuz-* >/dev/null 2>&1 && [ -d "$dest/lib/modules" ]; then
		echo "fetch-kernels: $label present ($(cat "$dest/PACKAGE" 2>/dev/null || echo '?'))"
		return 0
	fi
	pkg=$(resolve "$@")
	if [ -z "$pkg" ] && [ -z "$updated" ]; then
		echo "fetch-kernels: apt-cache does not know the $label kernel; running apt-get update" >&2
		apt-get update -qq
		updated=1
		pkg=$(resolve "$@")
	fi
	if [ -z "$pkg" ]; then
		echo "fetch-kernels: cannot resolve linux-image-cloud-amd64 for $label (apt options: $*)." >&2
		echo "fetch-kernels: is bookworm-backports in the apt sources? (scripts/deps.sh adds it)" >&2
		return 1
	fi
	echo "fetch-kernels: $label -> $pkg"
	deb=$(find_deb "$pkg")
	if [ -z "$deb" ]; then
		# The cache is root-owned: download as root rather than as _apt.
		(cd "$cache/debs" && timeout 600 apt-get download -q -o APT::Sandbox::User=root "$@" "$pkg")
		deb=$(find_deb "$pkg")
		[ -n "$deb" ] || { echo "fetch-kernels: apt-get download $pkg left no .deb" >&2; return 1; }
	fi
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	dpkg -x "$deb" "$dest.tmp"
	echo "$pkg" >"$dest.tmp/PACKAGE"
	# The .deb has no modules.dep (depmod runs at install); mkinitramfs.sh
	# asks modprobe for virtio module dependencies, so make one here.
	for d in "$dest.tmp"/lib/modules/*; do
		depmod -b "$dest.tmp" "$(basename "$d")"
	done
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	echo "fetch-kernels: $label unpacked into $dest"
}

fetch 6.1
fetch 6.12 -t bookworm-backports
