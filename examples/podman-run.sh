#!/bin/sh
# Start a podman container on two whole performance cores of its own and
# show what corecarve did.  As root, with corecarve installed (make
# install: the hooks.d files are in /usr/share/containers/oci/hooks.d,
# which podman reads by default).
#
#   examples/podman-run.sh [IMAGE]        default: docker.io/library/busybox
#
# The annotation is all a container needs; the hook runs because
# hooks.d's "when" matches it, and gives the CPUs back when it stops.
set -eu
image=${1:-docker.io/library/busybox}
name=corecarve-demo-$$

# podman before 5.0 (Debian 12 has 4.3) parses --annotation as CSV: a comma
# splits the value.  Double quotes around the whole KEY=VALUE keep it whole
# there; podman 5 takes the value literally (and would keep the quotes).
ann='corecarve.io/placement={class: latency, cpus: 2}'
case $(podman --version | sed 's/.* //') in
[0-4].*) ann="\"$ann\"" ;;
esac
podman run -d --name "$name" --annotation "$ann" \
	"$image" sh -c 'grep Cpus_allowed_list /proc/self/status; exec sleep 600'
trap 'podman rm -f "$name" >/dev/null' EXIT

sleep 1
podman logs "$name"
corecarve status
cg=$(podman inspect --format '{{.State.CgroupPath}}' "$name" 2>/dev/null || true)
if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/cpuset.cpus.partition" ]; then
	echo "cgroup $cg: partition $(cat "/sys/fs/cgroup$cg/cpuset.cpus.partition"), cpus $(cat "/sys/fs/cgroup$cg/cpuset.cpus.effective"), cpu.max $(cat "/sys/fs/cgroup$cg/cpu.max")"
fi
