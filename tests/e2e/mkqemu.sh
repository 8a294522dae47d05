# shellcheck shell=sh disable=SC2154 # $stage is mkinitramfs.sh's
# QEMU in the e2e initramfs, for the VM pinning scenario: a real
# qemu-system-x86_64 started inside the 16-CPU guest (TCG in TCG, paused
# with -S: its vCPU threads exist and are named, nothing runs), so
# `corecarve vm reconcile` pins real threads of a real QEMU on a host with
# SMT siblings and two NUMA nodes.  Sourced by mkinitramfs.sh (uses its
# $stage and copy_with_libs) when a selected scenario has the line
#   # e2e-needs: qemu
# so the other boots stay small (QEMU and its libraries are ~60 MB).
#
# What goes in: the build host's qemu-system-x86_64 (the one the harness
# boots the guest with) and its libraries, and the two firmware files a
# paused `-nodefaults -display none` machine opens: SeaBIOS
# (bios-256k.bin) and kvmvapic.bin.  A missing file makes those scenarios
# SKIP rather than fail the build.

qemu_bin=$(command -v qemu-system-x86_64 || true)
if [ -z "$qemu_bin" ]; then
	echo "mkinitramfs: qemu-system-x86_64 not installed: scenarios needing it will skip" >&2
else
	copy_with_libs "$qemu_bin" /usr/bin/qemu-system-x86_64
	for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/kvmvapic.bin; do
		if [ -e "$f" ]; then
			mkdir -p "$stage$(dirname "$f")"
			cp -L "$f" "$stage$f"
		else
			echo "mkinitramfs: $f not found: the guest's QEMU may refuse to start" >&2
		fi
	done
	echo "mkinitramfs: qemu $("$qemu_bin" --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')" >&2
fi
