#!/bin/sh
# Fetch the Debian cloud kernels the e2e harness boots, without installing
# them: `apt-get download` + `dpkg -x` into the cache, nothing into /boot.
#
#   6.1  : bookworm's linux-image-cloud-amd64 (the host's own apt sources;
#          no cpuset.cpus.exclusive)
#   6.12 : the same metapackage from bookworm-backports (remote partitions)
#   7    : the newest 7.x of trixie-backports and sid (7.0 changed how a
#          conflicting cpuset.cpus write meets a sibling partition)
#
# bookworm-backports, trixie-backports and sid are reached through a private
# apt configuration in CACHE_DIR/apt (scripts/apt-private.sh: the mirror and
# keyring of the host's own bookworm entry), never by editing /etc/apt.
#
# Usage: fetch-kernels.sh [CACHE_DIR]      (default: <repo>/.cache/e2e)
# Result: CACHE_DIR/kernels/<label>/ with the packages unpacked (6.1, 6.12:
# boot/vmlinuz-*, lib/modules/<ver>/; 7.x: usr/lib/modules/<ver>/vmlinuz and
# its modules, see kdir.sh), a modules.dep made by depmod, and PACKAGE (the
# image package, its version, and every .deb unpacked).
# Idempotent: a kernel whose vmlinuz is already unpacked is not fetched again.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${1:-$repo/.cache/e2e}
mkdir -p "$cache/kernels" "$cache/debs"
cache=$(cd "$cache" && pwd)
# shellcheck source=../../scripts/apt-private.sh
. "$repo/scripts/apt-private.sh"
# shellcheck source=kdir.sh
. "$here/kdir.sh"

priv_dir=$cache/apt
priv_ready=
# priv_setup: the private configuration with its lists fresh (a kernel is
# only fetched when one is missing, and an old index names .debs the mirror
# has dropped): once per run.
priv_setup() {
	[ -z "$priv_ready" ] || return 0
	apt_private_init "$priv_dir"
	apt_private_entry bookworm-backports trixie-backports sid >"$priv_dir/parts/corecarve-kernels.sources"
	echo "fetch-kernels: apt-get update of the private sources in $priv_dir ($(sed -n 's/^Suites: //p' "$priv_dir/parts/corecarve-kernels.sources"))" >&2
	# shellcheck disable=SC2086 # APT_PRIV is a list of options
	timeout 600 apt-get -qq $APT_PRIV update
	priv_ready=1
}

# newest GLOB [APT-OPTIONS...]: the highest version of linux-image-cloud-amd64
# that matches GLOB (e.g. '7.*') and the suite it comes from ("VERSION SUITE").
newest() {
	glob=$1
	shift
	apt-cache "$@" madison linux-image-cloud-amd64 2>/dev/null |
		awk -F' *[|] *' '{ split($3, a, " "); sub("/.*", "", a[2]); print $2, a[2] }' | {
		best=
		while read -r v s; do
			# shellcheck disable=SC2254 # GLOB is a pattern
			case $v in $glob) ;; *) continue ;; esac
			if [ -z "$best" ] || dpkg --compare-versions "$v" gt "${best% *}"; then
				best="$v $s"
			fi
		done
		echo "$best"
	}
}

# debs_of VERSION [APT-OPTIONS...]: "PACKAGE=VERSION" of the concrete image
# package the metapackage at VERSION depends on, and of what that one depends
# on under the same kernel ABI name. Up to 6.12 that is the image alone; from
# 7.x the image is a metapackage over linux-binary-<abi> (vmlinuz),
# linux-modules-<abi> and linux-base-<abi> (modules.builtin, modules.order,
# config: without them depmod warns and modprobe cannot tell a built-in
# module from a missing one).
debs_of() {
	ver=$1
	shift
	img=$(apt-cache "$@" depends "linux-image-cloud-amd64=$ver" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-cloud-amd64\)$/\1/p' | head -n 1)
	[ -n "$img" ] || return 0
	abi=${img#linux-image-}
	echo "$img=$ver"
	apt-cache "$@" show "$img=$ver" 2>/dev/null | sed -n 's/^Depends: //p' | head -n 1 |
		tr ',' '\n' | sed -n "s/^ *\(linux-[a-z]*-$abi\) (= \([^)]*\))\$/\1=\2/p" | sort -u
}

# find_deb PACKAGE VERSION: the cached .deb, if any (apt writes ':' of an
# epoch as %3a).
find_deb() {
	v=$(echo "$2" | sed 's/:/%3a/')
	for f in "$cache/debs/${1}_${v}_"*.deb; do
		[ -e "$f" ] && echo "$f" && return 0
	done
	return 0
}

host_updated=
# fetch LABEL GLOB private|host: the newest GLOB version in that apt
# configuration, downloaded and unpacked into kernels/LABEL.
fetch() {
	label=$1 glob=$2 where=$3
	dest=$cache/kernels/$label
	if kdir_find "$dest"; then
		echo "fetch-kernels: $label present ($(head -n 1 "$dest/PACKAGE" 2>/dev/null || echo "$KVER"))"
		return 0
	fi
	if [ "$where" = private ]; then
		priv_setup || {
			echo "fetch-kernels: the private apt sources in $priv_dir could not be updated (see above)" >&2
			return 1
		}
		set -- $APT_PRIV
	else
		set --
	fi
	best=$(newest "$glob" "$@")
	if [ -z "$best" ] && [ "$where" = host ] && [ -z "$host_updated" ]; then
		echo "fetch-kernels: apt-cache does not know the $label kernel; running apt-get update" >&2
		apt-get update -qq
		host_updated=1
		best=$(newest "$glob" "$@")
	fi
	if [ -z "$best" ]; then
		echo "fetch-kernels: no linux-image-cloud-amd64 $glob in the $where apt sources for $label:" >&2
		apt-cache "$@" madison linux-image-cloud-amd64 >&2 || true
		return 1
	fi
	ver=${best% *}
	debs=$(debs_of "$ver" "$@")
	if [ -z "$debs" ]; then
		echo "fetch-kernels: linux-image-cloud-amd64 $ver ($label) depends on no linux-image-<abi>-cloud-amd64" >&2
		return 1
	fi
	echo "fetch-kernels: $label -> linux-image-cloud-amd64 $ver from ${best#* }: $(echo $debs | sed 's/=[^ ]*//g')"
	files=
	for pv in $debs; do
		pkg=${pv%%=*}
		deb=$(find_deb "$pkg" "${pv#*=}")
		[ -z "$deb" ] || { files="$files $deb"; continue; }
		# The cache is root-owned: download as root rather than as _apt.
		(cd "$cache/debs" && timeout 600 apt-get download -q -o APT::Sandbox::User=root "$@" "$pv")
		deb=$(find_deb "$pkg" "${pv#*=}")
		[ -n "$deb" ] || { echo "fetch-kernels: apt-get download $pv left no .deb" >&2; return 1; }
		files="$files $deb"
	done
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	for deb in $files; do
		dpkg -x "$deb" "$dest.tmp"
	done
	{
		echo "${debs%%=*} $ver (${best#* })"
		for deb in $files; do basename "$deb"; done
	} >"$dest.tmp/PACKAGE"
	if ! kdir_find "$dest.tmp"; then
		echo "fetch-kernels: $label: no vmlinuz with a modules directory in$files" >&2
		return 1
	fi
	# The .debs have no modules.dep (depmod runs at install); mkinitramfs.sh
	# asks modprobe for virtio module dependencies, so make one here.
	depmod -b "$KMODBASE" "$KVER"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	echo "fetch-kernels: $label ($KVER) unpacked into $dest"
}

fetch 6.1 '6.1.*' host
fetch 6.12 '6.12.*' private
fetch 7 '7.*' private
