#!/bin/bash
# `make bench`: the posted-MSI benchmarks of the x86_posted_msi_bench KUnit suite, for the Rust
# (build/out/x86_64) and the C (build/out/x86_64-cmsi) notification handler, both under
# QEMU -icount shift=0,sleep=off (tests/qemu/x86_64-icount.py): guest time advances one nanosecond
# per instruction, so the TSC deltas the suite reports are deterministic instruction counts.
# Prints Markdown tables.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tree=${BUILD:-$top/build}/linux
out=${BUILD:-$top/build}/out
export PATH="$top/tests/qemu/bin:$PATH"
rc=0

for t in x86_64 x86_64-cmsi; do
	log=$out/$t/bench.log
	(cd "$tree" && python3 tools/testing/kunit/kunit.py exec --arch=x86_64 --build_dir="$out/$t" \
		--qemu_config="$top/tests/qemu/x86_64-icount.py" \
		--timeout=1800 --raw_output=all 'x86_posted_msi_bench') >"$log" 2>&1 || rc=1
	grep -q "ok .* x86_posted_msi_bench" "$log" && ! grep -q "not ok .* x86_posted_msi_bench" "$log" ||
		{ echo "bench: x86_posted_msi_bench did not pass for $t (log: $log)"; rc=1; }
done

python3 - "$out/x86_64/bench.log" "$out/x86_64-cmsi/bench.log" <<'PY'
import re, sys
def parse(path):
    d = {}
    for line in open(path, errors="replace"):
        m = re.search(r"bench demux burst=(\d+) notification_insns=(\d+)", line)
        if m:
            d[("demux", int(m.group(1)))] = int(m.group(2))
        m = re.search(r"bench coalescing posts=(\d+) new_bits=(\d+) notifications=(\d+) pmn=(\d+)", line)
        if m:
            d["coalescing"] = tuple(int(x) for x in m.groups())
    return d
r, c = parse(sys.argv[1]), parse(sys.argv[2])
print("| burst (vectors) | Rust: insns per notification | C: insns per notification | Rust: per vector above an empty notification | C: per vector above an empty notification | Rust / C |")
print("|---|---|---|---|---|---|")
for n in (0, 1, 4, 32):
    if ("demux", n) in r and ("demux", n) in c:
        rt, ct = r[("demux", n)], c[("demux", n)]
        r0, c0 = r.get(("demux", 0), 0), c.get(("demux", 0), 0)
        rv = f"{(rt - r0) / n:.1f}" if n else "-"
        cv = f"{(ct - c0) / n:.1f}" if n else "-"
        print(f"| {n} | {rt} | {ct} | {rv} | {cv} | {rt / ct:.3f} |")
print()
print("| handler | MSIs posted | new PIR bits | notifications (PMN) | PMN / MSI |")
print("|---|---|---|---|---|")
for name, d in (("Rust", r), ("C", c)):
    if "coalescing" in d:
        posts, bits, sent, pmn = d["coalescing"]
        print(f"| {name} | {posts} | {bits} | {pmn} | {pmn / posts:.3f} |")
PY
exit $rc
