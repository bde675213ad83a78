#!/bin/bash
# Download Debian packages (.debs) with a project-local apt state (scripts/apt-local.sh), failing
# loudly: the one place where the build and the tests fetch packages without installing them.
#
# Usage: scripts/debs.sh [-a DEB_ARCH] [-o APT_OPTION]... STATE_DIR "SUITES" DEST_DIR PKG[=VERSION]...
#   -a DEB_ARCH   the packages' Debian architecture (amd64, arm64, ...; default: the host's)
#   -o APT_OPTION a further apt option (NAME=VALUE), passed on to apt-get
#   STATE_DIR     the apt state, as scripts/apt-local.sh (lists, cache, sources.list)
#   SUITES        space-separated Debian suites, as scripts/apt-local.sh
#   DEST_DIR      where the .debs go (created if missing)
#   PKG[=VERSION] a package, at its candidate version in SUITES or at exactly VERSION
#
# Prints the path of each package's .deb in DEST_DIR, one a line, in the order of the arguments,
# and nothing else on success (the boot scripts run it with their output in a console log).
# - `apt-get update` runs for STATE_DIR only when the lists of one of SUITES are missing;
# - a .deb already in DEST_DIR with the size and hash that the lists give is not fetched again;
# - when a package cannot be resolved or fetched and the lists were not refreshed by this call,
#   they are refreshed once and the fetch tried again (Debian drops superseded versions);
# - then, if a package is still missing, it exits 1 with one line per package naming it, the
#   architecture and the suites, followed by apt-get's own messages. Exit 2: bad usage.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
me=debs

usage() {
	echo "usage: scripts/debs.sh [-a DEB_ARCH] [-o APT_OPTION]... STATE_DIR \"SUITES\" DEST_DIR PKG[=VERSION]..." >&2
	exit 2
}

opts=() arch=
while [ $# -gt 0 ]; do
	case $1 in
	-a) [ $# -ge 2 ] || usage; arch=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || usage; opts+=(-o "$2"); shift 2 ;;
	-h | --help) usage ;;
	-*) echo "$me: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 4 ] || usage
state=$1 suites=$2 dest=$3
shift 3
pkgs=("$@")
[ -n "${suites// /}" ] || { echo "$me: no suite given" >&2; usage; }
[ -n "$arch" ] || arch=$(dpkg --print-architecture)
opts=(-o APT::Architecture="$arch" -o APT::Architectures::="$arch" "${opts[@]}")
what="($arch, Debian suites: $suites)"

mkdir -p "$dest" || { echo "$me: cannot create $dest" >&2; exit 1; }
dest=$(cd "$dest" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

apt_local() { "$top/scripts/apt-local.sh" "$state" "$suites" "${opts[@]}" "$@"; }
# apt-get's messages without the notice of a root download ("Download is performed unsandboxed
# as root ..."), which says nothing about the outcome.
messages() { grep -v unsandboxed "$1" | sed 's/^/  /' >&2; }

updated=0
update() {
	if ! apt_local -qq update >"$tmp/update.log" 2>&1; then
		echo "$me: apt-get update failed for $state $what:" >&2
		messages "$tmp/update.log"
		exit 1
	fi
	updated=1
}

# The lists of every suite (file names as apt writes them: ..._dists_SUITE_..._Packages...).
for s in $suites; do
	compgen -G "$state/lists/*_dists_${s//\//_}_*Packages*" >/dev/null || { update; break; }
done

# The package name of an argument: PKG, PKG=VERSION or PKG/RELEASE.
name() { local n=${1%%=*}; echo "${n%%/*}"; }

# File name, size and hash of each package's .deb, from the lists (no download):
# sets file[NAME], size[NAME], hash[NAME]; fails with the list of unresolved arguments in bad.
declare -A file size hash
bad=()
resolve() {
	local p n line
	file=() size=() hash=() bad=()
	apt_local -qq download --print-uris "${pkgs[@]}" >"$tmp/uris" 2>"$tmp/resolve.log"
	# One line per .deb: 'URI' FILE SIZE HASH; FILE is NAME_VERSION_ARCH.deb.
	while read -r _ f sz h; do
		[ -n "$f" ] || continue
		n=${f%%_*}
		file[$n]=$f size[$n]=$sz hash[$n]=$h
	done <"$tmp/uris"
	for p in "${pkgs[@]}"; do
		n=$(name "$p")
		if [ -z "${file[$n]:-}" ]; then
			bad+=("$p")
			# apt-get's reason for this one (it names the package).
			line=$(grep -F -e "'$n'" -e "package $n" "$tmp/resolve.log")
			echo "${line:-E: $p: not resolved}" >>"$tmp/why"
		fi
	done
	[ ${#bad[@]} -eq 0 ]
}

# Is DEST_DIR's copy of package NAME the one the lists name?
present() {
	local n=$1 f=$dest/${file[$1]} sum
	[ -f "$f" ] && [ "$(stat -c %s "$f")" = "${size[$n]}" ] || return 1
	case ${hash[$n]} in
	SHA256:*) sum=$(sha256sum "$f") ;;
	SHA512:*) sum=$(sha512sum "$f") ;;
	*) return 0 ;; # no hash of a kind we check: the size matched
	esac
	[ "${sum%% *}" = "${hash[$n]#*:}" ]
}

fetch() {
	local p n want=()
	: >"$tmp/why"
	resolve || return 1
	for p in "${pkgs[@]}"; do
		n=$(name "$p")
		# (A copy of another size or hash is replaced.)
		present "$n" || { rm -f "$dest/${file[$n]}"; want+=("$p"); }
	done
	[ ${#want[@]} -gt 0 ] || return 0
	(cd "$dest" && apt_local -qq download "${want[@]}") >"$tmp/download.log" 2>&1
	for p in "${want[@]}"; do
		present "$(name "$p")" || bad+=("$p")
	done
	[ ${#bad[@]} -eq 0 ] || { cat "$tmp/download.log" >>"$tmp/why"; return 1; }
}

if ! fetch && [ $updated = 0 ]; then
	# Stale lists: a version they name may be gone from Debian. Refresh once, try again.
	update
	fetch
fi
if [ ${#bad[@]} -gt 0 ]; then
	for p in "${bad[@]}"; do
		echo "$me: cannot fetch $p $what into $dest" >&2
	done
	echo "$me: apt-get said:" >&2
	messages "$tmp/why"
	exit 1
fi
for p in "${pkgs[@]}"; do
	echo "$dest/${file[$(name "$p")]}"
done
