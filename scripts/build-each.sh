#!/bin/bash
# Build the rust/ directory of the x86_64 KUnit kernel (the `kernel` crate, its C helpers and
# its doctests) at each commit of the assembled series, so that a commit that only builds with
# a later one is found. Each commit is checked out in a worktree of build/linux and built in a
# build directory of its own (build/out/each), from the configuration of build/out/x86_64.
# Usage: scripts/build-each.sh N...   (series positions, 1 = the first patch)
# Needs `make build ARCH=x86_64` first (for the configuration). Environment: KMAKE_VARS, JOBS.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
out=$top/build/out/each
wt=$top/build/each-wt
config=$top/build/out/x86_64/.config
[ -f "$config" ] || { echo "build-each: run 'make build ARCH=x86_64' first" >&2; exit 1; }

mapfile -t commits < <(git -C "$tree" rev-list --reverse base..overlay)
git -C "$tree" worktree remove -f "$wt" 2>/dev/null || true
git -C "$tree" worktree prune
git -C "$tree" worktree add -q -f --detach "$wt" base
mkdir -p "$out"
rc=0
for n in "$@"; do
	c=${commits[$((n - 1))]:-}
	[ -n "$c" ] || { echo "build-each: no patch $n" >&2; exit 1; }
	git -C "$wt" checkout -q --detach "$c"
	cp "$config" "$out/.config"
	echo "== $n $(git -C "$wt" log --format=%s -1)"
	# shellcheck disable=SC2086
	make -s -C "$wt" O="$out" $KMAKE_VARS olddefconfig >/dev/null
	# shellcheck disable=SC2086
	if make -s -C "$wt" O="$out" $KMAKE_VARS -j"$JOBS" rust/ >"$out/build-$n.log" 2>&1; then
		w=$(grep -c 'warning' "$out/build-$n.log" || true)
		echo "   ok ($w warnings)"
		[ "$w" -eq 0 ] || { grep -m5 'warning' "$out/build-$n.log"; rc=1; }
	else
		echo "   FAILED: $out/build-$n.log"
		grep -m5 'error' "$out/build-$n.log" || true
		rc=1
	fi
done
git -C "$tree" worktree remove -f "$wt"
exit $rc
