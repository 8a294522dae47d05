# shellcheck shell=sh
# Helpers for the podman scenarios: the node guest's (48-podman-slice,
# 53-podman-systemd: podman under systemd's cgroup manager with the hooks.d
# files installed) and the initramfs guest's 61-podman (run, seen_cpus).
# Sourced after lib.sh and hooklib.sh.

# install_hooks DIR: the hooks.d files in DIR, the binary where this guest
# has it.
install_hooks() {
	mkdir -p "$1"
	for h in /e2e/manifests/hooks.d/*.json; do
		sed 's|"/usr/local/bin/corecarve"|"/usr/bin/corecarve"|' "$h" >"$1/$(basename "$h")"
	done
}

# load_image: the busybox image as $IMG; 1 (after a FAIL line) when podman
# could not load it.
IMG=localhost/e2e/busybox:1
load_image() {
	if out=$(timeout 300 podman load -i /e2e/images/busybox.tar 2>&1); then
		pass image-loaded
		return 0
	fi
	fail image-loaded "$out"
	return 1
}

# run NAME OPTIONS...: podman run -d of a container that prints its CPUs and
# sleeps; its id and pid in $cid and $cpid, podman's output in $out.
run() {
	_n=$1
	shift
	cid='' cpid=''
	# shellcheck disable=SC2086 # options
	if out=$(timeout 180 podman run -d --name "$_n" --network none "$@" $IMG \
		sh -c 'grep Cpus_allowed_list /proc/self/status; exec sleep 1000' 2>&1); then
		# shellcheck disable=SC2046 # two words
		set -- $(podman inspect --format '{{.Id}} {{.State.Pid}}' "$_n" 2>/dev/null) "" ""
		cid=$1 cpid=$2
		return 0
	fi
	return 1
}

# seen_cpus NAME: the CPUs the container printed for itself.
seen_cpus() {
	wait_for 30 sh -c "podman logs $1 2>/dev/null | grep -q Cpus_allowed_list" || true
	podman logs "$1" 2>/dev/null | sed -n 's/^Cpus_allowed_list:[[:space:]]*//p'
}
