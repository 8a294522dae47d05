#!/bin/sh
# Install the Debian packages corecarve needs to build, test and run its
# end-to-end harness. Idempotent: packages already present are skipped, and
# apt is only touched when something is missing.
set -eu

# libudev-dev: the static libhwloc links libudev, which Debian ships shared only.
BUILD_PKGS="build-essential pkg-config libhwloc-dev hwloc-nox libcgroup-dev libyaml-dev \
libnuma-dev libseccomp-dev check libjansson-dev libudev-dev"
# The e2e harness boots real Debian kernels under QEMU and runs real crun.
# The k8s guest (tests/e2e/k8s/) boots a Debian disk image made with
# mmdebstrap and mkfs.ext4 -d (containerd, runc, systemd and Python's grpc
# go into the image, not onto this host); its container images are made
# with Debian's python3.
E2E_PKGS="crun busybox-static cpio xz-utils zstd kmod mmdebstrap e2fsprogs python3"
# Unit tests of the pictures (xmllint, rsvg-convert) and man pages (groff);
# podman + conmon for the hooks.d scenario in the guest (tests/e2e/mkpodman.sh).
TEST_PKGS="libxml2-utils librsvg2-bin groff-base podman conmon"
# Hardening (issue 9): libFuzzer targets (clang + its runtime), valgrind
# memcheck over the CLI, util-linux's flock copied into the e2e guest.
HARDEN_PKGS="clang libclang-rt-14-dev valgrind util-linux"
# QEMU 10 comes from bookworm-backports: bookworm's 7.2 crashes 6.12 under TCG.
BPO_PKGS="qemu-system-x86"

if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root to install packages" >&2
	exit 1
fi

. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}
bpo_list=/etc/apt/sources.list.d/corecarve-backports.sources
if [ "$codename" = bookworm ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat > "$bpo_list" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	updated=
else
	updated=1
fi

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

if [ -z "$need" ] && [ -n "$qemu_ok" ] && [ -z "${updated:-}" ] ; then
	:
fi
if [ -n "$need" ] || [ -z "$qemu_ok" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	if [ -n "$need" ]; then
		apt-get install -y -qq --no-install-recommends $need
	fi
	if [ -z "$qemu_ok" ]; then
		apt-get install -y -qq --no-install-recommends -t bookworm-backports $BPO_PKGS
	fi
fi
echo "deps: all packages present"
