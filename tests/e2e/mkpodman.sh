# shellcheck shell=sh
# Podman in the e2e initramfs.  Sourced by mkinitramfs.sh (uses its $stage,
# $repo and copy_with_libs) when a selected scenario has the line
#   # e2e-needs: podman
# so the other boots stay small (podman alone is ~33 MB).  When the build
# host has no podman (scripts/deps.sh installs it) nothing is added and
# those scenarios report SKIP.
#
# What goes in: Debian's podman and conmon with their libraries (crun is
# there already), a containers configuration for a guest without systemd,
# networking or registries (vfs storage, cgroupfs manager, file events, no
# network namespace by default, accept-anything policy for `podman
# import`), corecarve's hooks.d files (path rewritten to /usr/bin/corecarve)
# in /e2e/hooks.d for --hooks-dir and in podman's default directory, a
# tarball of the busybox rootfs to import as an image, and
# examples/podman-run.sh.

if ! command -v podman >/dev/null 2>&1; then
	echo "mkinitramfs: podman not installed: scenarios needing it will skip (scripts/deps.sh)" >&2
else
	conmon=
	for c in /usr/libexec/podman/conmon /usr/bin/conmon /usr/sbin/conmon; do
		[ -x "$c" ] && conmon=$c && break
	done
	[ -n "$conmon" ] || die "podman is installed but conmon is not (apt-get install conmon)"
	copy_with_libs "$(command -v podman)" /usr/bin/podman
	copy_with_libs "$conmon" /usr/bin/conmon

	mkdir -p "$stage/etc/containers" "$stage/var/tmp" "$stage/var/lib/containers" \
		"$stage/usr/share/containers/oci/hooks.d" "$stage/e2e/hooks.d"
	cat >"$stage/etc/containers/storage.conf" <<'CONF'
[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
CONF
	cat >"$stage/etc/containers/containers.conf" <<'CONF'
[containers]
netns = "none"
utsns = "private"
cgroupns = "private"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "crun"
conmon_path = ["/usr/bin/conmon"]
CONF
	echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$stage/etc/containers/policy.json"
	echo 'unqualified-search-registries = []' >"$stage/etc/containers/registries.conf"
	for h in "$repo"/manifests/hooks.d/*.json; do
		sed 's|"/usr/local/bin/corecarve"|"/usr/bin/corecarve"|' "$h" >"$stage/e2e/hooks.d/$(basename "$h")"
		cp "$stage/e2e/hooks.d/$(basename "$h")" "$stage/usr/share/containers/oci/hooks.d/"
	done
	(cd "$stage/rootfs-template" && tar -cf "$stage/e2e/busybox-rootfs.tar" .)
	cp "$repo/examples/podman-run.sh" "$stage/e2e/podman-run.sh"
	echo "mkinitramfs: podman $(podman --version | cut -d' ' -f3), conmon $conmon" >&2
fi
