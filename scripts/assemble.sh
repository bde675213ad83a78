#!/bin/bash
# Assemble build/linux: a git tree whose first commit (tag `base`) is the pristine Debian
# linux-source-7.3 import and whose later commits are the patches of patches/series, applied as
# `git am` would (branch `overlay`).
#
#   scripts/assemble.sh           build the tree from patches/ (make tree)
#   scripts/assemble.sh --export  write build/linux's commits back to patches/ (make patches)
#
# patches/ holds the series as a reviewer reads it: one `git format-patch` file per commit,
# diffstat and new files included, listed in order in patches/series. The files the series adds
# are also kept at their kernel paths in this repository (arch/, drivers/, kernel/, rust/,
# samples/, Documentation/), where they are read, grepped and edited. Both must agree:
# - an edited overlay file is folded into the last patch of the series that touches it, and the
#   patches/ it changes are written again (`make tree` says which);
# - anything else (a change to an earlier patch, to an upstream file, a new file, a new commit,
#   a commit message) is made as commits in build/linux (`git commit --fixup`, `git rebase -i
#   base`) and written back with `make patches`, which also updates the overlay files.
# The commits are built with git plumbing in a private index, then the work tree is moved to the
# new head with `git reset --hard`, which rewrites only the files whose content changed. An edit
# to one .rs file therefore touches one file, and kbuild rebuilds only what depends on it.
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

# The patches of patches/series, in order.
series_patches() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series" | awk '{print $1}'; }

# build_series [OVERRIDES]: commit the series on `base` with plumbing and print the last commit.
# OVERRIDES lines "N PATH": after patch N, PATH takes this repository's content.
build_series() {
	local overrides=${1:-/dev/null} idx=$build/assemble.index.$$ head n=0 patch msg diff f blob
	rm -f "$idx"
	head=$(git -C "$tree" rev-parse base)
	GIT_INDEX_FILE=$idx git -C "$tree" read-tree "$head"
	for patch in $(series_patches); do
		n=$((n + 1))
		[ -f "$top/patches/$patch" ] || { echo "assemble: missing patches/$patch" >&2; exit 1; }
		msg=$(mktemp) diff=$(mktemp)
		git mailinfo "$msg" "$diff" <"$top/patches/$patch" >"$msg.info"
		if [ -s "$diff" ]; then
			GIT_INDEX_FILE=$idx git -C "$tree" apply --cached "$diff" ||
				{ echo "assemble: $patch does not apply" >&2; exit 1; }
		fi
		for f in $(awk -v n="$n" '$1 == n {print $2}' "$overrides"); do
			blob=$(git -C "$tree" hash-object -w "$top/$f")
			GIT_INDEX_FILE=$idx git -C "$tree" update-index --add --cacheinfo "100644,$blob,$f"
		done
		{ sed -n 's/^Subject: //p' "$msg.info"; echo; cat "$msg"; } >"$msg.full"
		# Author and date come from the patch, so the commits (and their ids) are reproducible.
		head=$(GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$msg.info") \
			GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$msg.info") \
			GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$msg.info") \
			GIT_COMMITTER_NAME="irq-rs assemble" GIT_COMMITTER_EMAIL="nobody@localhost" \
			GIT_COMMITTER_DATE=$(sed -n 's/^Date: //p' "$msg.info") \
			git -C "$tree" commit-tree "$(GIT_INDEX_FILE=$idx git -C "$tree" write-tree)" \
			-p "$head" -F "$msg.full")
		rm -f "$msg" "$msg.info" "$msg.full" "$diff"
	done
	rm -f "$idx"
	echo "$head"
}

# The files the series adds (base..REV), and the overlay files of this repository.
added_files() { git -C "$tree" diff --name-only --no-renames --diff-filter=A base "$1" | sort; }
overlay_files() { (cd "$top" && git ls-files --cached --others --exclude-standard -- $overlay_dirs) | sort; }

# write_patches REV: patches/ and patches/series from base..REV, as `git format-patch` writes
# them; options pinned, so that an unchanged commit gives the same bytes.
write_patches() {
	local rev=$1 tmp
	tmp=$(mktemp -d)
	git -C "$tree" -c core.abbrev=12 -c diff.algorithm=myers -c diff.noprefix=false \
		-c diff.mnemonicPrefix=false -c format.signature= -c format.coverLetter=false \
		format-patch -q -o "$tmp" --zero-commit --no-signature --no-numbered --no-renames \
		--no-cover-letter --no-thread base.."$rev"
	rm -f "$top"/patches/[0-9][0-9][0-9][0-9]-*.patch
	{
		sed -n '/^#/p' "$series"
		(cd "$tmp" && ls)
	} >"$series.new"
	mv "$tmp"/[0-9][0-9][0-9][0-9]-*.patch "$top/patches/"
	mv "$series.new" "$series"
	rm -rf "$tmp"
}

# Edits made in build/linux itself are neither built silently nor discarded.
check_tree_clean() {
	[ -d "$tree/.git" ] || return 0
	if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ]; then
		echo "assemble: $tree has uncommitted edits; refusing to build or replace them:" >&2
		git -C "$tree" status --short --untracked-files=no | head -n 20 >&2
		echo "assemble: commit them there (git commit --fixup=COMMIT; git rebase -i --autosquash base)" >&2
		echo "assemble: and run make patches, or drop them (git -C $tree checkout -- .)." >&2
		exit 1
	fi
}

if [ "${1:-}" = --export ]; then
	# make patches: build/linux's commits become patches/, and its added files the overlay.
	[ -d "$tree/.git" ] || { echo "assemble: no $tree; run make tree first" >&2; exit 1; }
	check_tree_clean
	git -C "$tree" merge-base --is-ancestor base HEAD ||
		{ echo "assemble: $tree's HEAD does not descend from base" >&2; exit 1; }
	# Overlay files edited here since the last make tree would be overwritten: fold them first.
	for f in $(overlay_files); do
		if ! git -C "$tree" cat-file -e "overlay:$f" 2>/dev/null ||
			[ "$(git -C "$tree" hash-object "$top/$f")" != "$(git -C "$tree" rev-parse "overlay:$f")" ]; then
			echo "assemble: $f has edits that make tree has not folded into the series yet;" >&2
			echo "assemble: refusing to overwrite it (run make tree first, then commit in $tree)." >&2
			exit 1
		fi
	done
	write_patches HEAD
	added=$(added_files HEAD)
	for f in $added; do
		mkdir -p "$top/$(dirname "$f")"
		git -C "$tree" show "HEAD:$f" >"$top/$f"
	done
	comm -23 <(overlay_files) <(echo "$added") | while read -r f; do
		echo "assemble: $f is no longer added by the series: removed"
		rm -f "$top/$f"
	done
	git -C "$tree" branch -f overlay HEAD >/dev/null
	echo "assemble: patches/ and the overlay files written from $(git -C "$tree" log --oneline -1)"
	(cd "$top" && git status --short -- patches $overlay_dirs)
	exit 0
fi

check_tree_clean
if [ -d "$tree/.git" ] && git -C "$tree" rev-parse -q --verify overlay >/dev/null &&
	[ "$(git -C "$tree" rev-parse HEAD)" != "$(git -C "$tree" rev-parse overlay)" ]; then
	echo "assemble: $tree has commits that are not in patches/ (HEAD is not the branch overlay):" >&2
	git -C "$tree" log --oneline -5 HEAD >&2
	echo "assemble: write them back with make patches, or drop them (git -C $tree reset --hard overlay)." >&2
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

# The overlay files must be what the series adds; an edited one is folded into the last patch
# that touches it.
added=$(added_files "$new")
overlay=$(overlay_files)
if [ "$added" != "$overlay" ]; then
	echo "assemble: the overlay files are not the files the series adds:" >&2
	diff <(echo "$added" | sed 's/^/series: /') <(echo "$overlay" | sed 's/^/overlay: /') >&2 || true
	echo "assemble: add or remove a file with a commit in build/linux, then make patches." >&2
	exit 1
fi
overrides=$build/assemble.overrides
: >"$overrides"
mapfile -t commits < <(git -C "$tree" rev-list --reverse "base..$new")
for f in $overlay; do
	[ "$(git -C "$tree" hash-object "$top/$f")" != "$(git -C "$tree" rev-parse "$new:$f")" ] || continue
	last=$(git -C "$tree" log -1 --format=%H "base..$new" -- "$f")
	for i in "${!commits[@]}"; do
		[ "${commits[$i]}" != "$last" ] || echo "$((i + 1)) $f" >>"$overrides"
	done
done
if [ -s "$overrides" ]; then
	new=$(build_series "$overrides")
	while read -r n f; do
		echo "assemble: $f folded into patch $n, $(sed -n "$n{p;q}" <(series_patches))"
	done <"$overrides"
	write_patches "$new"
fi
rm -f "$overrides"

if [ "$(git -C "$tree" rev-parse HEAD)" != "$new" ]; then
	git -C "$tree" reset -q --hard "$new"
	echo "assemble: $tree at $(git -C "$tree" log --oneline -1)"
fi
git -C "$tree" branch -f overlay "$new" >/dev/null
