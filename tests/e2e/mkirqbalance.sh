# shellcheck shell=sh
# irqbalance in the e2e initramfs.  Sourced by mkinitramfs.sh (uses its
# $stage, $repo and copy_with_libs) when a selected scenario has the line
#   # e2e-needs: irqbalance
# Debian's package is downloaded into the cache and unpacked there, never
# installed: installing it would start the daemon on the build host and
# move the host's own IRQs.  Its libraries (glib, libnuma, libcap-ng,
# libsystemd) come from the build host, like crun's.  Without it those
# scenarios report SKIP.
ib_cache=${E2E_CACHE:-$repo/.cache/e2e}/irqbalance
ib_bin=$ib_cache/usr/sbin/irqbalance
if [ ! -x "$ib_bin" ] && command -v apt-get >/dev/null 2>&1; then
	ib_tmp=$(mktemp -d "${TMPDIR:-/tmp}/cc-irqbalance.XXXXXX")
	if (cd "$ib_tmp" && apt-get download irqbalance >/dev/null 2>&1) &&
		dpkg-deb -x "$ib_tmp"/irqbalance_*.deb "$ib_tmp/x"; then
		rm -rf "$ib_cache"
		mkdir -p "$(dirname "$ib_cache")"
		mv "$ib_tmp/x" "$ib_cache"
		dpkg-deb -f "$ib_tmp"/irqbalance_*.deb Version >"$ib_cache/VERSION"
	fi
	rm -rf "$ib_tmp"
fi
if [ -x "$ib_bin" ] && ! ldd "$ib_bin" 2>&1 | grep -q 'not found'; then
	copy_with_libs "$ib_bin" /usr/sbin/irqbalance
	echo "mkinitramfs: irqbalance $(cat "$ib_cache/VERSION" 2>/dev/null)" >&2
else
	echo "mkinitramfs: irqbalance not available (apt-get download irqbalance): scenarios needing it will skip" >&2
fi
