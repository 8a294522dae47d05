#!/bin/sh
# mkkubelet.sh [VERSION]: the real kubelet, built from its published Go
# module (k8s.io/kubernetes VERSION, default below) through the Go module
# proxy, for the node guests (issue #43).  A test-time tool, like QEMU and
# the Debian images: nothing of it ships in corecarve.
#
# k8s.io/kubernetes replaces its staging modules (k8s.io/api, client-go,
# ...) with directories of its own repository, which a module that
# requires it cannot see; so the small main module made here pins each to
# the matching published release (v1.37.2 -> v0.37.2), as the Kubernetes
# project's own guidance for importing k8s.io/kubernetes says.  Static
# (CGO_ENABLED=0), stripped, its version stamped where `kubelet --version`
# reads it.
#
# Cached by version outside the clone ($CORECARVE_TOOL_CACHE, else
# ~/.cache/corecarve/kubelet/VERSION/kubelet), beside Go's own module and
# build caches, which are the machine's: a fresh clone on the same machine
# finds it built.  Prints the binary's path last.
set -eu

ver=${1:-${KUBELET_VERSION:-v1.37.2}}
case $ver in
v1.[0-9]*.[0-9]*) ;;
*)
	echo "mkkubelet: version: expected v1.MINOR.PATCH, got \"$ver\"" >&2
	exit 2
	;;
esac
staging=v0.${ver#v1.}
root=${CORECARVE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/corecarve}/kubelet/$ver
out=$root/kubelet

if [ -x "$out" ] && "$out" --version 2>/dev/null | grep -qx "Kubernetes $ver"; then
	echo "mkkubelet: $ver present ($out)" >&2
	echo "$out"
	exit 0
fi
command -v go >/dev/null || {
	echo "mkkubelet: no go command on PATH: the kubelet $ver needs Go 1.26 or newer (Debian's golang is older; the project's machines have it in /usr/local/go/bin)" >&2
	exit 2
}

src=$root/src
mkdir -p "$src"
# The staging modules k8s.io/kubernetes replaces, from its own go.mod.
mod=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[ -r "$mod" ] || {
	echo "mkkubelet: k8s.io/kubernetes@$ver: the module proxy gave no go.mod" >&2
	exit 2
}
goline=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$mod")
{
	echo "// Made by tests/e2e/k8s/mkkubelet.sh: builds the kubelet $ver; not corecarve's."
	echo "module corecarve.test/kubelet"
	echo
	echo "go $goline"
	echo
	echo "require k8s.io/kubernetes $ver"
	echo
	echo "replace ("
	sed -n 's|^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$|\t\1 => \1 '"$staging"'|p' "$mod"
	echo ")"
} >"$src/go.mod"
rm -f "$src/go.sum"

t0=$(date +%s)
echo "mkkubelet: building the kubelet $ver (staging modules $staging) in $src" >&2
(
	cd "$src"
	export CGO_ENABLED=0 GOFLAGS=-mod=mod
	go get "k8s.io/kubernetes/cmd/kubelet@$ver"
	go build -trimpath -o "$out.tmp" \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$ver -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$ver" | cut -d. -f2)" \
		k8s.io/kubernetes/cmd/kubelet
)
mv "$out.tmp" "$out"
got=$("$out" --version)
[ "$got" = "Kubernetes $ver" ] || {
	echo "mkkubelet: $out --version says \"$got\", expected \"Kubernetes $ver\"" >&2
	exit 1
}
echo "mkkubelet: built $got in $(($(date +%s) - t0)) s ($(du -k "$out" | cut -f1) KiB)" >&2
echo "$out"
