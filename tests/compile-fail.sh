#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile-fail tests: tiny out-of-tree Rust modules (tests/compile-fail/CASE/, each a Kbuild file
# `obj-m := NAME.o` and NAME.rs) built against a kernel output directory, as loadable modules
# (kbuild passes them `--cfg MODULE`). A case with an `expected-errors` file must fail to build,
# with rustc errors that all match its patterns (extended regular expressions, `#` comments), the
# first pattern matching at least one: an unrelated failure (a typo in the case, a missing file,
# a toolchain problem) does not count as a pass. A case without one is a control and must build:
# if the harness cannot build a module at all, it fails instead of passing vacuously.
#
# Usage: tests/compile-fail.sh KERNEL_OUTPUT_DIR [ARCH]   (ARCH defaults to x86_64)
# KMAKE: the make command with the kernel's tool variables (`make compile-fail` passes the top
# Makefile's KMAKE_VARS, CC and HOSTCC); by default `make LLVM=1`.
#
# With CONFIG_MODULES=y the cases build with `make M=CASE modules` (modpost and the .ko too);
# without it (kbuild refuses `modules` for external modules then), with the single-object target
# `make M=CASE NAME.o`, which compiles NAME.rs as part of a module all the same: `--cfg MODULE`
# follows from `obj-m`, not from CONFIG_MODULES.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cases=$top/tests/compile-fail
out=${1:?usage: $0 KERNEL_OUTPUT_DIR [ARCH]}
out=$(cd "$out" 2>/dev/null && pwd) || { echo "compile-fail: no directory $1" >&2; exit 1; }
arch=${2:-x86_64}
kmake=${KMAKE:-make LLVM=1}

if [ ! -f "$out/.config" ] || [ ! -f "$out/rust/libkernel.rmeta" ]; then
	echo "compile-fail: $out is not a built kernel with Rust (make build ARCH=$arch)" >&2
	exit 1
fi
if grep -q '^CONFIG_MODULES=y$' "$out/.config"; then
	mode=modules
else
	mode=object
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail=0 failing=0 controls=0
for dir in "$cases"/*/; do
	case=$(basename "$dir")
	[ -f "$dir/Kbuild" ] || { echo "compile-fail: $case: no Kbuild" >&2; fail=1; continue; }
	name=$(sed -n 's/^obj-m[[:space:]]*:*=[[:space:]]*\([A-Za-z0-9_]*\)\.o[[:space:]]*$/\1/p' \
		"$dir/Kbuild" | head -n 1)
	if [ -z "$name" ] || [ ! -f "$dir/$name.rs" ]; then
		echo "compile-fail: $case: Kbuild names no obj-m object with a .rs source" >&2
		fail=1
		continue
	fi
	# Built in a copy: kbuild writes its objects next to the sources of an external module.
	cp -r "$dir" "$tmp/$case"
	log=$tmp/$case.log
	if [ "$mode" = modules ]; then target=modules; else target=$name.o; fi
	$kmake -C "$out" ARCH="$arch" M="$tmp/$case" "$target" >"$log" 2>&1
	rc=$?
	# rustc's errors, without its summary line.
	grep -E '^error(\[E[0-9]+\])?: ' "$log" | grep -vE '^error: aborting due to ' >"$tmp/$case.errors"

	if [ ! -f "$dir/expected-errors" ]; then
		controls=$((controls + 1))
		built=$tmp/$case/$name.o
		[ "$mode" = modules ] && built=$tmp/$case/$name.ko
		if [ $rc -eq 0 ] && [ -s "$built" ]; then
			echo "compile-fail: ok   $case (control: builds)"
		else
			echo "compile-fail: FAIL $case (control): does not build (rc=$rc); the harness is broken"
			tail -n 40 "$log"
			fail=1
		fi
		continue
	fi

	failing=$((failing + 1))
	grep -vE '^[[:space:]]*(#|$)' "$dir/expected-errors" >"$tmp/$case.patterns"
	first=$(head -n 1 "$tmp/$case.patterns")
	if [ -z "$first" ]; then
		echo "compile-fail: FAIL $case: expected-errors has no pattern"
		fail=1
	elif [ $rc -eq 0 ]; then
		echo "compile-fail: FAIL $case: builds, but must not"
		fail=1
	elif ! grep -qE "$first" "$tmp/$case.errors"; then
		echo "compile-fail: FAIL $case: build fails (rc=$rc), but without the expected error:"
		echo "    $first"
		tail -n 40 "$log"
		fail=1
	elif grep -vqEf "$tmp/$case.patterns" "$tmp/$case.errors"; then
		echo "compile-fail: FAIL $case: unexpected errors besides the expected one:"
		grep -vEf "$tmp/$case.patterns" "$tmp/$case.errors" | sed 's/^/    /'
		tail -n 40 "$log"
		fail=1
	else
		echo "compile-fail: ok   $case (fails: $(head -n 1 "$tmp/$case.errors" | cut -c1-90))"
	fi
done

if [ $controls -eq 0 ] || [ $failing -eq 0 ]; then
	echo "compile-fail: FAIL: $controls control(s), $failing failing case(s); need both" >&2
	fail=1
fi
echo "== compile-fail: $failing must-fail case(s), $controls control(s), mode $mode: rc=$fail"
exit $fail
