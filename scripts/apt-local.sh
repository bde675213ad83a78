#!/bin/bash
# Run apt-get against a project-local apt state, leaving the host's apt sources untouched.
#
# Usage: scripts/apt-local.sh STATE_DIR "SUITES" APT-GET-ARGS...
#   STATE_DIR  directory that holds the sources list, the package lists and the cache
#   SUITES     space-separated Debian suites to list (e.g. "bookworm bookworm-backports")
set -euo pipefail

state=$(realpath -m "$1")
suites=$2
shift 2

mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/etc"
# One line per suite: apt wants "deb URI SUITE COMPONENT".
: >"$state/etc/sources.list"
for s in $suites; do
	case $s in
	*-security) uri=http://deb.debian.org/debian-security ;;
	*) uri=http://deb.debian.org/debian ;;
	esac
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $s main" >>"$state/etc/sources.list"
done

exec apt-get \
	-o Dir::Etc::SourceList="$state/etc/sources.list" \
	-o Dir::Etc::SourceParts=/dev/null \
	-o Dir::State::Lists="$state/lists" \
	-o Dir::Cache="$state/cache" \
	-o APT::Get::List-Cleanup=0 \
	"$@"
