# shellcheck shell=sh
# Where an unpacked Debian kernel keeps its files. Sourced by fetch-kernels.sh,
# mkinitramfs.sh and run.sh (host side).
#
#   kdir_find KDIR   sets KVMLINUZ (the bzImage), KMODBASE (the directory
#                    depmod -b / modprobe -d take: KMODBASE/lib/modules/KVER)
#                    and KVER; returns 1 (all three empty) when KDIR holds
#                    no kernel
#
# Two layouts: up to 6.12 (bookworm's packages) `boot/vmlinuz-<ver>` and
# `lib/modules/<ver>/`; the 7.x packages (trixie and later, usrmerged) ship
# only `usr/lib/modules/<ver>/{vmlinuz,kernel/...}`: no boot/, no top-level
# lib/. bookworm's kmod looks for modules in <base>/lib/modules only, so for
# the second layout the base is KDIR/usr.
# shellcheck disable=SC2034 # KMODBASE is for the callers
kdir_find() {
	KVMLINUZ=''
	KMODBASE=''
	KVER=''
	for _m in "$1"/lib/modules/* "$1"/usr/lib/modules/*; do
		[ -d "$_m" ] || continue
		KVER=${_m##*/}
		KMODBASE=${_m%/lib/modules/*}
		if [ -f "$_m/vmlinuz" ]; then
			KVMLINUZ=$_m/vmlinuz
		elif [ -f "$1/boot/vmlinuz-$KVER" ]; then
			KVMLINUZ=$1/boot/vmlinuz-$KVER
		fi
		[ -n "$KVMLINUZ" ] && return 0
	done
	KVMLINUZ=''
	KMODBASE=''
	KVER=''
	return 1
}
