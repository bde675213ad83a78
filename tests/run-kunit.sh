#!/bin/bash
# Run the KUnit kernels built by `make build` in QEMU with kunit.py, then check that every
# expected suite ran to completion and passed. Exits non-zero on any failed, crashed, skipped or
# missing suite.
#
# Usage: tests/run-kunit.sh TARGET... (an ARCH, or ARCH-VARIANT built in build/out/ARCH-VARIANT)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${BUILD:-$top/build}/linux
out=${BUILD:-$top/build}/out
rc=0
export PATH="$top/tests/qemu/bin:$PATH"

for target in "$@"; do
	arch=${target%%-*}
	echo "== kunit $target"
	json=$out/$target/kunit.json
	rm -f "$json"
	(cd "$tree" && python3 tools/testing/kunit/kunit.py exec --arch="$arch" \
		--build_dir="$out/$target" --qemu_config="$top/tests/qemu/$arch.py" \
		--timeout="${KUNIT_TIMEOUT:-1500}" --json="$json")
	r=$?
	[ $r -eq 0 ] || { echo "kunit.py exited $r for $target"; rc=1; }
	python3 "$top/tests/check-kunit.py" "$json" "$top/tests/kunit/$target.suites" || rc=1
done
exit $rc
