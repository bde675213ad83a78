#!/bin/bash
# make soak: the posted-MSI soak (x86_posted_msi.pmsi_soak) at full size on the x86_64 test
# kernel: SOAK_POSTS (default 1,000,000) MSIs over 32 interrupts, SOAK_CYCLES (default 10) CPU1
# offline/online cycles with affinity moves, once per implementation (rust, c), exact counts.
# Prints the case's figures; fails on a failed case or a kernel splat.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${BUILD:-$top/build}/linux
out=${BUILD:-$top/build}/out/x86_64
export PATH="$top/tests/qemu/bin:$PATH"
posts=${SOAK_POSTS:-1000000}
cycles=${SOAK_CYCLES:-10}
json=$out/soak.json
# This run's result and logs: none of an earlier run may be read as this one's.
rm -f "$json" "$out/test.log" "$out/soak.log" "$out/soak-kunit.out"
(cd "$tree" && python3 tools/testing/kunit/kunit.py exec --arch=x86_64 --build_dir="$out" \
	--qemu_config="$top/tests/qemu/x86_64.py" --timeout="${KUNIT_TIMEOUT:-3600}" \
	--json="$json" \
	--kernel_args="posted_msi_test.soak_posts=$posts" \
	--kernel_args="posted_msi_test.soak_cycles=$cycles" 'x86_posted_msi.pmsi_soak') >"$out/soak-kunit.out" 2>&1
r=$?
cp "$out/test.log" "$out/soak.log" 2>/dev/null
grep -h "pmsi_soak: soak:" "$out/soak.log" 2>/dev/null | sed 's/^ *# //'
rc=0
[ $r -eq 0 ] || { echo "soak: kunit.py exited $r (see $out/soak-kunit.out)"; rc=1; }
python3 "$top/tests/check-splats.py" "soak" "$out/soak.log" || rc=1
n=$(grep -c "pmsi_soak: soak:" "$out/soak.log" 2>/dev/null)
[ "${n:-0}" -eq 2 ] || { echo "soak: expected 2 runs (rust, c), found ${n:-0}"; rc=1; }
[ $rc -eq 0 ] && echo "soak: PASS ($posts posts, $cycles cycles, per implementation)"
exit $rc
