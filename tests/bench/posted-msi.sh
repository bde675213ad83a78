#!/bin/bash
# `make bench`: the posted-MSI figures, Rust vs C notification handler, produced by the load
# generator sample (samples/rust/rust_posted_msi_load.rs, built into the x86_64 kernel) at boot
# with rust_posted_msi_load.run=1. The same kernel boots with posted_msi=rust and with
# posted_msi=c, each on two machines:
#
# - on tests/qemu/x86_64-icount.args (QEMU -icount shift=0,sleep=off: one guest instruction per
#   nanosecond of guest time), for the demux cost, which is then a deterministic instruction
#   count. The icount machine is xAPIC: x2APIC MSR reads abort icount ("Bad icount read").
# - on tests/qemu/x86_64.args (multi-threaded TCG, both vCPUs running at once), for the PMN/MSI
#   ratio of a load posted from the other vCPU. Guest time is host time there, so this ratio
#   depends on the host's speed; compare Rust and C from the same run.
#
# Prints Markdown tables; the console logs are build/out/TARGET/bench-IMPL-icount.log and
# bench-IMPL-smp-N.log (IMPL: rust, c).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_TARGET:-x86_64-bench}	# the kernel booted: the test kernel without debug options
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
# Sample parameters; the defaults of the module are documented in its source.
icount_args="rust_posted_msi_load.msis=2000 rust_posted_msi_load.reps=16"
smp_args="rust_posted_msi_load.msis=${BENCH_MSIS:-10000} rust_posted_msi_load.work_ns=10000 rust_posted_msi_load.gap_ns=10000"
trials=${BENCH_TRIALS:-5}

boot() { # IMPL MACHINE LOG ARGS
	MACHINE=$2 APPEND="posted_msi=$1 rust_posted_msi_load.run=1 $4 irqrs.poweroff=1" \
		timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
		</dev/null >"$3" 2>&1 || { echo "bench: QEMU failed for posted_msi=$1 (log: $3)"; rc=1; }
	grep -q "rust_posted_msi_load: impl=$1 done" "$3" ||
		{ echo "bench: the load generator did not finish for posted_msi=$1 (log: $3)"; rc=1; }
}

# This run's logs are removed before its first boot: no earlier run's log is read as this one's.
for impl in rust c; do
	rm -f "$out/$target/bench-$impl-icount.log"
	for i in $(seq 1 "$trials"); do rm -f "$out/$target/bench-$impl-smp-$i.log"; done
done

for impl in rust c; do
	boot $impl x86_64-icount "$out/$target/bench-$impl-icount.log" "$icount_args"
done
# The SMP figures vary from run to run: boot the two implementations alternately, TRIALS times
# each; the tables give the median.
for i in $(seq 1 "$trials"); do
	for impl in rust c; do
		boot $impl x86_64 "$out/$target/bench-$impl-smp-$i.log" "$smp_args"
	done
done

python3 - "$out/$target" "$trials" <<'PY' || rc=1
import re, statistics, sys
out, trials = sys.argv[1], int(sys.argv[2])

def parse(t, m):
    d = {"demux": {}, "load": {}, "impl": None}
    for line in open(f"{out}/bench-{t}-{m}.log", errors="replace"):
        g = re.search(r"rust_posted_msi_load: impl=(\w+) demux burst=(\d+) ns=(\d+)", line)
        if g:
            d["impl"] = g.group(1)
            d["demux"][int(g.group(2))] = int(g.group(3))
        g = re.search(r"rust_posted_msi_load: impl=(\w+) load gap_ns=(\d+) work_ns=(\d+) "
                      r"msis=(\d+) handler_runs=(\d+) notifications=(\d+) pmn=(\d+)", line)
        if g:
            d["load"][int(g.group(2))] = tuple(int(x) for x in g.groups()[2:])
    return d

r, c = parse("rust", "icount"), parse("c", "icount")
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
def median_pmn(t):
    runs = [parse(t, f"smp-{i}")["load"] for i in range(1, trials + 1)]
    gaps = set.intersection(*(set(r) for r in runs))
    return {g: (runs[0][g][0], runs[0][g][1],
                statistics.median(r[g][4] for r in runs), [r[g][4] for r in runs])
            for g in gaps}

r, c = median_pmn("rust"), median_pmn("c")
print(f"Coalescing (MSIs posted from vCPU 0 to 32 vectors of vCPU 1, multi-threaded TCG; median of {trials} boots with each implementation):")
print()
print("| mean gap between MSIs (ns) | handler work (ns) | MSIs | Rust: PMN (runs) | Rust: PMN / MSI | C: PMN (runs) | C: PMN / MSI | Rust / C |")
print("|---|---|---|---|---|---|---|---|")
for gap in sorted(set(r) & set(c)):
    work, msis, rp, rruns = r[gap]
    _, cmsis, cp, cruns = c[gap]
    # Below 100 notifications the counts are run-to-run noise: no ratio.
    ratio = f"{(rp / msis) / (cp / cmsis):.2f}" if min(rp, cp) >= 100 else "-"
    rr = ", ".join(map(str, rruns))
    cr = ", ".join(map(str, cruns))
    print(f"| {gap} | {work} | {msis} | {rp:g} ({rr}) | {rp / msis:.3f} | {cp:g} ({cr}) | {cp / cmsis:.3f} | {ratio} |")
PY
exit $rc
