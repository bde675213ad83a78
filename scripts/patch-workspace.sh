#!/bin/bash
# Set up a small git workspace for editing the patches of patches/: its first commit holds the
# pristine upstream versions of every file the patches touch (plus any FILE given), and the
# patches are applied on top with `git am`. Edit, commit (or amend), then regenerate with
#   git -C DIR format-patch -o patches/ base..HEAD --zero-commit --no-signature --no-numbered
# Usage: scripts/patch-workspace.sh DIR [FILE...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${BUILD:-$top/build}/linux
dir=$1
shift
git -C "$tree" rev-parse -q --verify base >/dev/null || { echo "run 'make tree' first" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir"
files=$( (sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "$top"/patches/*.patch; printf '%s\n' "$@") | sort -u)
for f in $files; do
	mkdir -p "$dir/$(dirname "$f")"
	git -C "$tree" show "base:$f" >"$dir/$f"
done
git -C "$dir" init -q
git -C "$dir" config user.name "IRQ-RS Developers"
git -C "$dir" config user.email "irq-rs@localhost"
git -C "$dir" add -A
git -C "$dir" commit -q -m base
git -C "$dir" tag base
# One at a time: a patch with no diff (it only carries new overlay files) stops `git am`, which
# then records it as an empty commit with its message.
for p in "$top"/patches/0*.patch; do
	m=$(mktemp -d)
	git mailinfo "$m/msg" "$m/diff" <"$p" >/dev/null
	if [ -s "$m/diff" ]; then
		git -C "$dir" am -q "$p"
	else
		git -C "$dir" am -q "$p" >/dev/null 2>&1 || git -C "$dir" am -q --allow-empty
	fi
	rm -rf "$m"
done
git -C "$dir" log --oneline
