#!/bin/bash
# Assemble build/linux: a git tree whose first commit is the pristine Debian linux-source-7.3
# import and whose later commits are the project's overlay and patches, one commit per entry of
# patches/series.
#
# The commits are built with git plumbing in a private index, then the work tree is moved to the
# new head with `git reset --hard`, which rewrites only the files whose content changed. An edit
# to one .rs file therefore touches one file, and kbuild rebuilds only what depends on it.
#
# patches/series: one entry per line, "PATCH [OVERLAY-PATH...]".
#   PATCH         a `git format-patch`-style file in patches/ (From/Subject header, changelog,
#                 and an optional diff against upstream files);
#   OVERLAY-PATH  files or directories of this repo, at their kernel paths, that the commit adds.
# Every file of the overlay must be named by exactly one entry.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
deb_dir=$build/dl
series=$top/patches/series
overlay_dirs="arch drivers kernel rust samples Documentation"

# The base, pinned: Debian's linux-source-7.3 at exactly this version (trixie-backports or sid),
# and the SHA-256 of its .deb. Debian serves one version of a package per suite and drops the
# old one when it moves on: the fetch then fails here, saying so, rather than building the
# series on a base nobody tested. Moving the pin: set both, then `make tree` (the series must
# still apply) and `make test`.
base_version=7.3.4-1~bpo13+1
base_sha256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3

fetch_base() {
	local deb=$deb_dir/linux-source-7.3_${base_version}_all.deb
	if [ ! -f "$deb" ]; then
		echo "assemble: fetching linux-source-7.3 $base_version (project-local apt state)" >&2
		# (scripts/debs.sh says on stderr why it could not; the lines below say what to do.)
		"$top/scripts/debs.sh" "$build/apt/base" "trixie-backports sid" "$deb_dir" \
			"linux-source-7.3=$base_version" >/dev/null || true
		if [ ! -f "$deb" ]; then
			echo "assemble: Debian no longer serves linux-source-7.3 $base_version, the pinned base" >&2
			echo "assemble: (trixie-backports and sid were asked). Move the pin in scripts/assemble.sh" >&2
			echo "assemble: (base_version, base_sha256) to a version they serve, then make tree and" >&2
			echo "assemble: make test; or put the .deb of $base_version in $deb_dir/." >&2
			exit 1
		fi
	fi
	if [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$base_sha256" ]; then
		echo "assemble: $deb is not the pinned base (SHA-256 differs from $base_sha256)" >&2
		exit 1
	fi
	echo "$deb"
}

import_base() {
	local deb=$1 ver tmp
	ver=$(dpkg-deb -f "$deb" Version)
	echo "assemble: importing linux-source-7.3 $ver into $tree"
	tmp=$build/import.tmp
	rm -rf "$tmp" "$tree"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/src/linux-source-7.3.tar.xz
	tar -xf "$tmp/usr/src/linux-source-7.3.tar.xz" -C "$tmp"
	mv "$tmp/linux-source-7.3" "$tree"
	rm -rf "$tmp"
	git -C "$tree" init -q -b main
	git -C "$tree" config user.name "linux-source-7.3 import"
	git -C "$tree" config user.email "nobody@localhost"
	git -C "$tree" config core.autocrlf false
	git -C "$tree" add -A -f .
	git -C "$tree" commit -q -m "Linux $(make -s -C "$tree" kernelversion) (Debian linux-source-7.3 $ver)" \
		-m "Pristine import of Debian's linux-source-7.3 package, version $ver."
	git -C "$tree" tag -f base >/dev/null
}

build_series() {
	local idx=$build/assemble.index head line patch paths msg diff subject blob f listed
	rm -f "$idx"
	head=$(git -C "$tree" rev-parse base)
	GIT_INDEX_FILE=$idx git -C "$tree" read-tree "$head"
	listed=$build/assemble.listed
	: >"$listed"

	while read -r line; do
		case "$line" in '' | '#'*) continue ;; esac
		read -r patch paths <<<"$line"
		[ -f "$top/patches/$patch" ] || { echo "assemble: missing patches/$patch" >&2; exit 1; }
		msg=$(mktemp) diff=$(mktemp)
		git mailinfo "$msg" "$diff" <"$top/patches/$patch" >"$msg.info"
		subject=$(sed -n 's/^Subject: //p' "$msg.info")
		if [ -s "$diff" ]; then
			GIT_INDEX_FILE=$idx git -C "$tree" apply --cached "$diff" ||
				{ echo "assemble: $patch does not apply" >&2; exit 1; }
		fi
		for p in $paths; do
			[ -e "$top/$p" ] || { echo "assemble: $patch names missing $p" >&2; exit 1; }
			(cd "$top" && git ls-files --cached --others --exclude-standard -- "$p") | while read -r f; do
				[ -f "$top/$f" ] || continue
				echo "$f" >>"$listed"
				blob=$(git -C "$tree" hash-object -w "$top/$f")
				GIT_INDEX_FILE=$idx git -C "$tree" update-index --add --cacheinfo "100644,$blob,$f"
			done
		done
		{ echo "$subject"; echo; cat "$msg"; } >"$msg.full"
		# Author and date come from the patch, so the commits (and their ids) are reproducible.
		head=$(GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$msg.info") \
			GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$msg.info") \
			GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$msg.info") \
			GIT_COMMITTER_NAME="irq-rs assemble" GIT_COMMITTER_EMAIL="nobody@localhost" \
			GIT_COMMITTER_DATE=$(sed -n 's/^Date: //p' "$msg.info") \
			git -C "$tree" commit-tree "$(GIT_INDEX_FILE=$idx git -C "$tree" write-tree)" \
			-p "$head" -F "$msg.full")
		rm -f "$msg" "$msg.info" "$msg.full" "$diff"
	done <"$series"

	# Every overlay file must belong to exactly one commit.
	local all
	all=$(cd "$top" && git ls-files --cached --others --exclude-standard -- $overlay_dirs | sort)
	if [ "$all" != "$(sort "$listed")" ]; then
		echo "assemble: overlay files not named exactly once in patches/series:" >&2
		diff <(echo "$all") <(sort "$listed") >&2 || true
		exit 1
	fi
	rm -f "$idx"
	echo "$head"
}

# Edits made in build/linux itself are neither built silently nor discarded: they must go back
# to the overlay or patches/ first (scripts/patch-workspace.sh), or be dropped by hand.
if [ -d "$tree/.git" ] && [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ]; then
	echo "assemble: $tree has uncommitted edits; refusing to build or replace them:" >&2
	git -C "$tree" status --short --untracked-files=no | head -n 20 >&2
	echo "assemble: carry them into the overlay or patches/ (scripts/patch-workspace.sh), or drop" >&2
	echo "assemble: them (git -C $tree checkout -- .), then run again." >&2
	exit 1
fi

deb=$(fetch_base)
if ! git -C "$tree" rev-parse -q --verify base >/dev/null 2>&1; then
	import_base "$deb"
elif ! git -C "$tree" log -1 --format=%s base | grep -qF "linux-source-7.3 $base_version)"; then
	echo "assemble: $tree was imported from another base than $base_version: importing again"
	import_base "$deb"
fi
new=$(build_series)
if [ "$(git -C "$tree" rev-parse HEAD)" != "$new" ]; then
	git -C "$tree" reset -q --hard "$new"
	echo "assemble: $tree at $(git -C "$tree" log --oneline -1)"
fi
git -C "$tree" branch -f overlay "$new" >/dev/null 2>&1 || true
