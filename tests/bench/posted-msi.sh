#!/bin/bash
# `make bench`: the posted-MSI figures, Rust vs C notification handler, produced by the load
# generator sample (samples/rust/rust_posted_msi_load.rs, built into the x86_64 and x86_64-cmsi
# kernels) at boot with rust_posted_msi_load.run=1. Each kernel boots twice:
#
# - on tests/qemu/x86_64-icount.args (QEMU -icount shift=0,sleep=off: one guest instruction per
#   nanosecond of guest time), for the demux cost, which is then a deterministic instruction
#   count. The icount machine is xAPIC: x2APIC MSR reads abort icount ("Bad icount read").
# - on tests/qemu/x86_64.args (multi-threaded TCG, both vCPUs running at once), for the PMN/MSI
#   ratio of a load posted from the other vCPU. Guest time is host time there, so this ratio
#   depends on the host's speed; compare Rust and C from the same run.
#
# Prints Markdown tables; the console logs are build/out/TARGET/bench-{icount,smp}.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
# Sample parameters; the defaults of the module are documented in its source.
icount_args="rust_posted_msi_load.msis=2000 rust_posted_msi_load.reps=16"
smp_args="rust_posted_msi_load.msis=${BENCH_MSIS:-20000}"

for t in x86_64 x86_64-cmsi; do
	for m in icount smp; do
		log=$out/$t/bench-$m.log
		machine=x86_64
		args=$smp_args
		[ $m = smp ] || { machine=x86_64-icount; args=$icount_args; }
		MACHINE=$machine APPEND="rust_posted_msi_load.run=1 $args irqrs.poweroff=1" \
			timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$t" \
			</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed for $t ($m, log: $log)"; rc=1; }
		grep -q "rust_posted_msi_load: impl=[a-z]* done" "$log" ||
			{ echo "bench: the load generator did not finish for $t ($m, log: $log)"; rc=1; }
	done
done

python3 - "$out" <<'PY' || rc=1
import re, sys
out = sys.argv[1]

def parse(t, m):
    d = {"demux": {}, "load": {}, "impl": None}
    for line in open(f"{out}/{t}/bench-{m}.log", errors="replace"):
        g = re.search(r"rust_posted_msi_load: impl=(\w+) demux burst=(\d+) ns=(\d+)", line)
        if g:
            d["impl"] = g.group(1)
            d["demux"][int(g.group(2))] = int(g.group(3))
        g = re.search(r"rust_posted_msi_load: impl=(\w+) load gap_ns=(\d+) work_ns=(\d+) "
                      r"msis=(\d+) handler_runs=(\d+) notifications=(\d+) pmn=(\d+)", line)
        if g:
            d["load"][int(g.group(2))] = tuple(int(x) for x in g.groups()[2:])
    return d

r, c = parse("x86_64", "icount"), parse("x86_64-cmsi", "icount")
if r["impl"] != "rust" or c["impl"] != "c":
    sys.exit(f"bench: unexpected implementations {r['impl']} / {c['impl']}")
print("Demux cost (guest instructions from enabling interrupts to the notification handler's return, QEMU -icount shift=0):")
print()
print("| burst (vectors) | Rust | C | Rust: per vector above an empty notification | C: per vector above an empty notification | Rust / C |")
print("|---|---|---|---|---|---|")
for n in (0, 1, 4, 32):
    if n in r["demux"] and n in c["demux"]:
        rt, ct = r["demux"][n], c["demux"][n]
        r0, c0 = r["demux"].get(0, 0), c["demux"].get(0, 0)
        rv = f"{(rt - r0) / n:.1f}" if n else "-"
        cv = f"{(ct - c0) / n:.1f}" if n else "-"
        print(f"| {n} | {rt} | {ct} | {rv} | {cv} | {rt / ct:.3f} |")
print()
r, c = parse("x86_64", "smp"), parse("x86_64-cmsi", "smp")
print("Coalescing (MSIs posted from vCPU 0 to 32 vectors of vCPU 1, multi-threaded TCG):")
print()
print("| gap between MSIs (ns) | handler work (ns) | MSIs | Rust: PMN | Rust: PMN / MSI | C: PMN | C: PMN / MSI | Rust / C |")
print("|---|---|---|---|---|---|---|---|")
for gap in sorted(r["load"]):
    if gap not in c["load"]:
        continue
    work, msis, _, _, rp = r["load"][gap]
    _, cmsis, _, _, cp = c["load"][gap]
    ratio = f"{(rp / msis) / (cp / cmsis):.2f}" if cp else "-"
    print(f"| {gap} | {work} | {msis} | {rp} | {rp / msis:.3f} | {cp} | {cp / cmsis:.3f} | {ratio} |")
PY
exit $rc
