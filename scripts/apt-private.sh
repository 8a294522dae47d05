# shellcheck shell=sh
# Private apt configurations: reach a Debian suite the host's sources do not
# name (bookworm-backports, trixie-backports, sid) without changing /etc/apt
# or /var/lib/apt. Sourced by scripts/deps.sh and tests/e2e/fetch-kernels.sh.
#
#   apt_private_init DIR        DIR/{parts,lists,cache}; sets $APT_PRIV, the
#                               -o options that point apt-get/apt-cache there
#   apt_private_entry SUITE...  print a deb822 stanza for SUITEs on the mirror
#                               and with the keyring of the host's own entry
#                               for its release (VERSION_CODENAME)
#   apt_private_host_lists DIR  copy the host's own sources and package lists
#                               into DIR (for an install that needs both)
#
# apt takes every path it writes from Dir::* options, so a configuration in
# DIR leaves the host's untouched: Dir::Etc::SourceList/SourceParts (where the
# entries are read), Dir::State::Lists (the downloaded indexes) and
# Dir::Cache (pkgcache.bin and the downloaded .debs).

apt_private_init() {
	mkdir -p "$1/parts" "$1/lists/partial" "$1/cache/archives/partial"
	# apt takes a relative Dir::Etc::* path as relative to /etc/apt.
	_d=$(cd "$1" && pwd)
	[ -e "$_d/sources.list" ] || : >"$_d/sources.list"
	# shellcheck disable=SC2034 # for the caller
	APT_PRIV="-o Dir::Etc::SourceList=$_d/sources.list -o Dir::Etc::SourceParts=$_d/parts \
-o Dir::State::Lists=$_d/lists -o Dir::Cache=$_d/cache"
}

# apt_private_entry SUITE...: the host's entry for its own release gives the
# mirror (Repo-URI, as apt itself parsed it from either sources format) and
# the file and stanza (deb822) or line (one-line format) it came from, which
# give the keyring: a Signed-By field (a path, fingerprints or an inline key,
# copied verbatim) or a [signed-by=...] option. An entry with neither relies
# on the keyrings in /etc/apt/trusted.gpg.d, and so does the stanza printed.
apt_private_entry() {
	# shellcheck disable=SC1091 # the host's
	_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ -z "$_codename" ]; then
		echo "apt-private: /etc/os-release names no VERSION_CODENAME: cannot tell the host's Debian entry" >&2
		return 1
	fi
	# shellcheck disable=SC2016 # apt's $(FIELD) placeholders
	_t=$(apt-get indextargets --no-release-info \
		--format '$(TARGET_OF) $(RELEASE) $(REPO_URI) $(SOURCESENTRY)' 'Identifier: Packages' 2>/dev/null |
		awk -v c="$_codename" '$1 == "deb" && $2 == c { print $3, $4; exit }')
	if [ -z "$_t" ]; then
		echo "apt-private: no 'deb' entry for $_codename in the host's apt sources: add the Debian mirror for $_codename there" >&2
		return 1
	fi
	_uri=${_t%% *}
	_where=${_t#* }
	_file=${_where%:*}
	_n=${_where##*:}
	case $_file in
	*.sources)
		# The _n-th stanza; Signed-By with its continuation lines.
		_signed=$(awk -v n="$_n" '
			/^[ \t]*$/ { if (seen) { s++; seen = 0 }; on = 0; next }
			/^#/ { next }
			{ seen = 1 }
			s + 1 != n { next }
			/^[Ss]igned-[Bb]y:/ { on = 1; print; next }
			on && /^[ \t]/ { print; next }
			{ on = 0 }' "$_file")
		;;
	*)
		_signed=$(sed -n "${_n}p" "$_file" |
			sed -n 's/.*\[\([^]]*\)\].*/\1/p' | tr ' ' '\n' |
			sed -n 's/^signed-by=\(.*\)/Signed-By: \1/p')
		;;
	esac
	echo "Types: deb"
	echo "URIs: $_uri"
	echo "Suites: $*"
	echo "Components: main"
	[ -z "$_signed" ] || printf '%s\n' "$_signed"
}

# apt_private_host_lists DIR: the host's own sources (/etc/apt/sources.list as
# DIR/sources.list, sources.list.d's entries into DIR/parts) and its current
# package lists, so an `apt-get update` there only fetches what is added.
apt_private_host_lists() {
	_d=$1
	if [ -f /etc/apt/sources.list ]; then
		cp /etc/apt/sources.list "$_d/sources.list"
	fi
	for _f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$_f" ] && cp "$_f" "$_d/parts/"
	done
	for _f in /var/lib/apt/lists/*; do
		case ${_f##*/} in lock | partial | auxfiles) continue ;; esac
		[ -f "$_f" ] && cp -p "$_f" "$_d/lists/"
	done
	return 0
}
