#!/bin/sh
# Install the Debian packages corecarve needs to build, test and run its
# end-to-end harness. Idempotent: packages already present are skipped, and
# apt is only touched when something is missing.
set -eu

# libudev-dev: the static libhwloc links libudev, which Debian ships shared only.
# libnghttp2-dev, libprotobuf-c-dev, protobuf-c-compiler: the device
# plugin's gRPC wire (HTTP/2, protobuf, protoc-c at build time:
# docs/device-plugin.md).
# libsmartcols-dev: the tables' header (the CLI loads libsmartcols.so.1 with
# dlopen; Debian ships no libsmartcols.a).
BUILD_PKGS="build-essential pkg-config libhwloc-dev hwloc-nox libcgroup-dev libyaml-dev \
libnuma-dev libseccomp-dev check libjansson-dev libudev-dev libsmartcols-dev \
libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler"
# The e2e harness boots real Debian kernels under QEMU and runs real crun.
# The k8s guest (tests/e2e/k8s/) boots a Debian disk image made with
# mmdebstrap and mkfs.ext4 -d (containerd, runc, systemd and Python's grpc
# go into the image, not onto this host); its container images are made
# with Debian's python3.
E2E_PKGS="crun busybox-static cpio xz-utils zstd kmod mmdebstrap e2fsprogs python3"
# Unit tests of the pictures (xmllint, rsvg-convert) and man pages (groff);
# podman + conmon for the hooks.d scenario in the guest (tests/e2e/mkpodman.sh).
# python3-grpcio + python3-protobuf: the kubelet's side of the device plugin
# interop test (tests/unit/devplugin_peer.py, run by /usr/bin/python3).
# strace: test_seccomp sees each tool load its filter (issue 26).
TEST_PKGS="libxml2-utils librsvg2-bin groff-base podman conmon python3-grpcio python3-protobuf strace"
# Hardening (issue 9): libFuzzer targets (clang + its runtime), valgrind
# memcheck over the CLI, util-linux's flock copied into the e2e guest.
HARDEN_PKGS="clang libclang-rt-14-dev valgrind util-linux"
# QEMU 10 comes from bookworm-backports: bookworm's 7.2 crashes 6.12 under TCG.
# It is installed through a private apt configuration (scripts/apt-private.sh):
# the host's own sources plus a bookworm-backports entry, in a temporary
# directory with its own lists and cache, so /etc/apt, /var/lib/apt/lists and
# /var/cache/apt are as they were afterwards. Only the installed packages stay
# (dpkg's own record of them).
BPO_PKGS="qemu-system-x86"

if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root to install packages" >&2
	exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=apt-private.sh
. "$here/apt-private.sh"

# Earlier versions of this script added bookworm-backports to the host's apt
# sources for good, under this name; nothing needs it there any more.
old_bpo=/etc/apt/sources.list.d/corecarve-backports.sources
if [ -f "$old_bpo" ] && grep -qx 'Suites: bookworm-backports' "$old_bpo"; then
	rm -f "$old_bpo"
	echo "deps: removed $old_bpo (bookworm-backports is now reached through a private apt configuration)"
fi

. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}

missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"
	done
}

need=$(missing $BUILD_PKGS $E2E_PKGS $TEST_PKGS $HARDEN_PKGS)
qemu_ok=
if command -v qemu-system-x86_64 >/dev/null 2>&1; then
	v=$(qemu-system-x86_64 --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	[ "${v:-0}" -ge 10 ] && qemu_ok=1
fi

export DEBIAN_FRONTEND=noninteractive
if [ -n "$need" ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $need
fi
if [ -z "$qemu_ok" ]; then
	if [ "$codename" != bookworm ]; then
		# Later releases carry QEMU 10 or newer themselves.
		[ -n "$need" ] || apt-get update -qq
		apt-get install -y -qq --no-install-recommends $BPO_PKGS
	else
		priv=$(mktemp -d "${TMPDIR:-/tmp}/corecarve-apt.XXXXXX")
		trap 'rm -rf "$priv"' EXIT
		trap 'exit 130' INT TERM
		# apt downloads as _apt into lists/partial and cache/archives/partial.
		chmod 0755 "$priv"
		apt_private_init "$priv"
		apt_private_host_lists "$priv"
		# shellcheck disable=SC2086,SC2016 # APT_PRIV is a list of options; apt's $(FIELD)s
		if ! apt-get $APT_PRIV indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE)' 'Identifier: Packages' |
			grep -qx 'deb bookworm-backports'; then
			apt_private_entry bookworm-backports >"$priv/parts/corecarve-backports.sources"
		fi
		# shellcheck disable=SC2086
		apt-get $APT_PRIV update -qq
		# shellcheck disable=SC2086
		apt-get $APT_PRIV install -y -qq --no-install-recommends -t bookworm-backports $BPO_PKGS
	fi
fi
echo "deps: all packages present"
