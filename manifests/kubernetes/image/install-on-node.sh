#!/bin/sh
# Install corecarve on the node this pod runs on (the DaemonSet's init
# container).  The hook runs on the host, started by the runtime, so it
# must not depend on this image: the binary goes to $PREFIX/libexec with
# every shared library ldd names (the host's loader among them) in
# $PREFIX/lib, and $PREFIX/bin/corecarve runs it through that loader.
# The node needs no packages and no library of its own is touched.
#
# Environment:
#   HOST    where the node's filesystem is mounted in this container (/host)
#   PREFIX  the install directory as the node sees it (/opt/corecarve)
#   BIN     the binary to install (/usr/bin/corecarve)
#   HOOK_BIN  the hook's first stage, static (/usr/bin/corecarve-hook):
#           containerd's base spec registers $PREFIX/bin/corecarve-hook,
#           which runs $PREFIX/bin/corecarve beside it when there is work
#   HOOKS   the hooks.d files (/usr/share/corecarve/hooks.d)
#   POLICY  the policy to install (/etc/corecarve-policy/policy.yaml: the
#           ConfigMap; absent: keep the node's, else the default)
# Each file is written beside its target and renamed, so a runtime starting
# a container meanwhile sees the old file or the new one, never half.
set -eu

HOST=${HOST:-/host}
PREFIX=${PREFIX:-/opt/corecarve}
BIN=${BIN:-/usr/bin/corecarve}
HOOK_BIN=${HOOK_BIN:-/usr/bin/corecarve-hook}
HOOKS=${HOOKS:-/usr/share/corecarve/hooks.d}
POLICY=${POLICY:-/etc/corecarve-policy/policy.yaml}
DEFAULT_POLICY=${DEFAULT_POLICY:-/usr/share/corecarve/policy-default.yaml}

die() {
	echo "install-on-node: $*" >&2
	exit 1
}

# put SRC DEST MODE: atomic copy.
put() {
	cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

[ -x "$BIN" ] || die "no corecarve binary at $BIN"
[ -x "$HOOK_BIN" ] || die "no corecarve-hook at $HOOK_BIN"
# The first stage runs on the node as it is: it must need no library.
ldd "$HOOK_BIN" 2>/dev/null | grep -q '=>' && die "$HOOK_BIN is linked dynamically; build it static (make with libc.a and libjansson.a)"
mkdir -p "$HOST$PREFIX/bin" "$HOST$PREFIX/libexec" "$HOST$PREFIX/lib" \
	"$HOST/etc/containers/oci/hooks.d" "$HOST/etc/corecarve"

loader=
for lib in $(ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }'); do
	put "$lib" "$HOST$PREFIX/lib/$(basename "$lib")" 0755
	case $(basename "$lib") in ld-linux*.so.* | ld64.so.*) loader=$(basename "$lib") ;; esac
done
[ -n "$loader" ] || die "ldd named no dynamic loader for $BIN"
# libsmartcols is dlopen()ed for tables (cli/table.h), so ldd does not list it.
for lib in $(ldconfig -p 2>/dev/null | awk '$1 == "libsmartcols.so.1" { print $NF; exit }'); do
	put "$lib" "$HOST$PREFIX/lib/libsmartcols.so.1" 0755
done
if ldd "$BIN" | grep -q 'not found'; then
	die "$BIN has missing libraries: $(ldd "$BIN" | grep 'not found' | tr '\n' ' ')"
fi
put "$BIN" "$HOST$PREFIX/libexec/corecarve" 0755

cat >"$HOST$PREFIX/bin/corecarve.tmp.$$" <<WRAP
#!/bin/sh
# Installed by corecarve's DaemonSet: run corecarve with its own libraries.
exec $PREFIX/lib/$loader --library-path $PREFIX/lib $PREFIX/libexec/corecarve "\$@"
WRAP
chmod 0755 "$HOST$PREFIX/bin/corecarve.tmp.$$"
mv -f "$HOST$PREFIX/bin/corecarve.tmp.$$" "$HOST$PREFIX/bin/corecarve"
put "$HOOK_BIN" "$HOST$PREFIX/bin/corecarve-hook" 0755
# What the wrapper will run, run here through the node's mount: the copied
# loader and libraries are complete.
"$HOST$PREFIX/lib/$loader" --library-path "$HOST$PREFIX/lib" "$HOST$PREFIX/libexec/corecarve" --version >/dev/null ||
	die "the installed $PREFIX/libexec/corecarve does not run with the copied libraries"

for h in "$HOOKS"/*.json; do
	[ -e "$h" ] || die "no hooks.d files in $HOOKS"
	sed "s|\"/usr/local/bin/corecarve\"|\"$PREFIX/bin/corecarve\"|" "$h" >"$HOST/etc/containers/oci/hooks.d/.$(basename "$h").tmp"
	chmod 0644 "$HOST/etc/containers/oci/hooks.d/.$(basename "$h").tmp"
	mv -f "$HOST/etc/containers/oci/hooks.d/.$(basename "$h").tmp" "$HOST/etc/containers/oci/hooks.d/$(basename "$h")"
done

if [ -r "$POLICY" ]; then
	# Load it with the binary that will read it, on this node's topology
	# (the pod sees the node's /sys), before it replaces anything: a bad
	# ConfigMap must not break every container start on the node.
	"$BIN" topology --policy "$POLICY" >/dev/null ||
		die "the policy $POLICY does not load (above); the node keeps its current one"
	put "$POLICY" "$HOST/etc/corecarve/policy.yaml" 0644
elif [ ! -e "$HOST/etc/corecarve/policy.yaml" ] && [ -r "$DEFAULT_POLICY" ]; then
	put "$DEFAULT_POLICY" "$HOST/etc/corecarve/policy.yaml" 0644
fi
echo "install-on-node: $PREFIX/bin/corecarve ($loader) and corecarve-hook, hooks in /etc/containers/oci/hooks.d, policy /etc/corecarve/policy.yaml"
