#!/bin/bash
# `make bench`: VT-d interrupt remapping, Rust against C on the same kernel (x86_64-bench):
# intel_ir=rust and intel_ir=c, BENCH_IR_BOOTS times each, alternately, on
# tests/qemu/x86_64-icount.args (xAPIC, intel-iommu with interrupt remapping, QEMU -icount
# shift=0,sleep=off), with QEMU's interrupt entry cache invalidations (vtd_inv_desc_iec) traced
# into the console log.
#
# tests/boot/init (irqrs.itsbench=1, the loops of the ITS benchmark; nokaslr, for the plugin to
# find irq_debug_write() at its System.map address), on CPU0 with CPU1 offline:
# BENCH_IR_ROUNDS rounds of loops of BENCH_IR_N writes to genirq's debugfs file of an interrupt,
# "nothing" (ignored) and "trigger" (a retrigger: the vector domain sends the vector to CPU0, and
# the interrupt runs its flow, handle_edge_irq(), and its chips, the remapping level's ack
# included), for virtio-rng's remapped MSI-X and for the serial's IO-APIC line. QEMU counts the
# instructions of all vCPUs between consecutive writes (tests/bench/qemu-insn-window.c): a boot's
# figure is the median iteration of the "trigger" loops less that of the "nothing" loops. Then 20
# affinity moves of the MSI-X between CPU1 and CPU0, each an IRTE rewrite: the interrupt entry
# cache invalidations per move.
#
# Prints a Markdown table (per way the median over the boots, the Rust / C ratio and the range of
# the per-boot ratios); fails if a way did not remap with the implementation asked for or an
# injection was lost. Logs build/out/TARGET/bench-ir-WAY-N.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_TARGET:-x86_64-bench}
export PATH="$top/tests/qemu/bin:$PATH"
n=${BENCH_IR_N:-100}
rounds=${BENCH_IR_ROUNDS:-20}
boots=${BENCH_IR_BOOTS:-3}
rc=0

rm -f "$out/$target"/bench-ir-*.log "$out/$target"/bench-ir-*.insns
plugin=$out/$target/qemu-insn-window.so
${HOSTCC:-clang-22} -O2 -shared -fPIC -fvisibility=hidden -o "$plugin" "$top/tests/bench/qemu-insn-window.c" ||
	{ echo "bench: cannot build the QEMU plugin"; exit 1; }
pc=$(awk '$3 == "irq_debug_write" { print $1 }' "$out/$target/System.map")
[ -n "$pc" ] || { echo "bench: no irq_debug_write in $out/$target/System.map"; exit 1; }
for i in $(seq "$boots"); do
	for way in rust c; do
		log=$out/$target/bench-ir-$way-$i.log
		echo "== bench intremap $way ($i of $boots)"
		MACHINE=x86_64-icount APPEND="nokaslr intel_ir=$way irqrs.itsbench=1 irqrs.itsbench_n=$n irqrs.itsbench_rounds=$rounds" \
			timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
			-trace vtd_inv_desc_iec -plugin "file=$plugin,pc=0x$pc,out=${log%.log}.insns" \
			</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, intel_ir=$way (log: $log)"; rc=1; }
	done
done

python3 - "$out/$target" "$boots" "$top/tests/bench" <<'PY' || rc=1
import re, statistics, sys
out, boots = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import insn_loops
ways = ("rust", "c")
fails = []

def parse(way, i):
    name = f"bench-ir-{way}-{i}.log"
    log = open(f"{out}/{name}", errors="replace").read()
    rust = "DMAR-IR: Rust interrupt remapping domain" in log
    if rust != (way == "rust") or "Enabled IRQ remapping in xapic mode" not in log:
        fails.append(f"intel_ir={way}: not remapped by {way} in xAPIC mode ({name})")
    d = insn_loops.per_injection(log, f"{out}/{name[:-4]}.insns", ("msi", "ioapic"),
                                 f"intel_ir={way}", name, fails)
    if not d:
        return d
    i0, i1 = log.find("@@@ itsbench moves begin"), log.find("@@@ itsbench moves end")
    d["iec"] = len(re.findall(r"vtd_inv_desc_iec\b", log[i0:i1])) / 20 if 0 <= i0 < i1 else -1
    if d["iec"] < 0:
        fails.append(f"intel_ir={way}: no moves ({name})")
    return d

d = {w: [parse(w, i) for i in range(1, boots + 1)] for w in ways}
if fails:
    print("\n".join("bench: " + f for f in fails))
    sys.exit(1)

def med(w, k):
    return insn_loops.med(d, w, k)

def ratios(k):
    return insn_loops.ratios(d, k)

print(f"VT-d interrupt remapping, Rust against C on the same kernel (xAPIC, QEMU -icount "
      f"shift=0), {boots} boots per way: guest instructions (all vCPUs) per interrupt retriggered "
      f"and handled, each boot's median iteration; the median of the boots and the range of the "
      f"per-boot Rust / C ratios:\n")
print("| | Rust (intel_ir=rust) | C (intel_ir=c) | Rust / C (range) |")
print("|---|---|---|---|")
for k, what in (("msi", "instructions per remapped MSI-X (virtio-rng) handled"),
                ("ioapic", "instructions per IO-APIC interrupt (ttyS0) handled")):
    print(f"| {what} | {med('rust', k):.0f} | {med('c', k):.0f} | {ratios(k)} |")
print(f"| interrupt entry cache invalidations per affinity move (20 moves) | "
      f"{med('rust', 'iec'):.2f} | {med('c', 'iec'):.2f} | "
      f"{med('rust', 'iec') / max(1e-9, med('c', 'iec')):.2f} |")
PY
exit $rc
