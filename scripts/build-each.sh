#!/bin/bash
# Build vmlinux at each commit of the assembled series, on each architecture, so that a commit
# that only builds with a later one is found. Each commit is checked out in a worktree of
# build/linux and built incrementally in one build directory per architecture
# (build/out/each-ARCH), from the configuration of that architecture's KUnit kernel
# (build/out/ARCH/.config: every option of the series, its KUnit suites and samples on), run
# through olddefconfig at each commit, so that options a commit does not have yet drop out.
#
# Usage: scripts/build-each.sh [N...]   (series positions, 1 = the first patch; default: all)
# Environment: ARCHES (default "x86_64 arm64"), KMAKE_VARS, JOBS.
# A commit fails on a build error, or on a compiler warning in a file the series changes.
# Prints one line per commit with its time; build/out/each-ARCH/summary.txt keeps them.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
wt=$build/each-wt
arches=${ARCHES:-x86_64 arm64}

mapfile -t commits < <(git -C "$tree" rev-list --reverse base..overlay)
[ $# -gt 0 ] || set -- $(seq 1 ${#commits[@]})
for n in "$@"; do
	[ -n "${commits[$((n - 1))]:-}" ] || { echo "build-each: no patch $n (1..${#commits[@]})" >&2; exit 2; }
done
for a in $arches; do
	[ -f "$build/out/$a/.config" ] || { echo "build-each: run 'make build ARCH=$a' first" >&2; exit 1; }
done
# The files the series changes: a warning in one of them fails the commit.
touched_list=$build/each-touched.txt
git -C "$tree" diff --name-only base overlay >"$touched_list"

# The warnings of a build log in files the series changes (scripts/series-warnings.py): prints
# them, then their count.
series_warnings() {
	python3 "$top/scripts/series-warnings.py" "$1" "$wt" "$touched_list"
}

git -C "$tree" worktree remove -f "$wt" 2>/dev/null || true
git -C "$tree" worktree prune
git -C "$tree" worktree add -q -f --detach "$wt" base
trap 'git -C "$tree" worktree remove -f "$wt" 2>/dev/null || true' EXIT
rc=0
for a in $arches; do
	out=$build/out/each-$a
	mkdir -p "$out"
	: >"$out/summary.txt"
	t_all=$SECONDS
	for n in "$@"; do
		c=${commits[$((n - 1))]}
		git -C "$wt" checkout -q --detach "$c"
		cp "$build/out/$a/.config" "$out/.config"
		t=$SECONDS
		log=$out/build-$n.log
		# shellcheck disable=SC2086
		if make -s -C "$wt" O="$out" ARCH=$a $KMAKE_VARS olddefconfig >"$log" 2>&1 &&
			make -s -C "$wt" O="$out" ARCH=$a $KMAKE_VARS -j"$JOBS" vmlinux >>"$log" 2>&1; then
			w=$(series_warnings "$log")
			if [ "$w" -eq 0 ]; then res=ok; else res="FAILED ($w warnings)"; rc=1; fi
		else
			res="FAILED: $log"
			rc=1
		fi
		line="$a $n $(git -C "$wt" log --format=%s -1): $res, $((SECONDS - t)) s"
		echo "$line" | tee -a "$out/summary.txt"
		case $res in FAILED*) grep -m5 -E 'error|warning:' "$log" | sed 's/^/    /' || true ;; esac
	done
	echo "$a: ${#@} commits in $((SECONDS - t_all)) s" | tee -a "$out/summary.txt"
done
exit $rc
