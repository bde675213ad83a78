#!/bin/bash
# `make bench`: the GICv3 figures, Rust vs C driver, produced by the benchmark sample
# (samples/rust/rust_gic_bench.rs, built into the arm64 kernels) at boot with
# rust_gic_bench.run=1. The same kernel boots with irqchip.gicv3=rust and irqchip.gicv3=c on
# tests/qemu/arm64-icount.args (QEMU -icount shift=0,sleep=off: one guest instruction per
# nanosecond of guest time), so the sample's ns per interrupt are deterministic instruction
# counts of the whole path (send or injection, exception entry, root handler, flow, handler,
# EOI), and with QEMU's GICv3 trace events (only gicv3_dist_write, gicv3_dist_read,
# gicv3_redist_write, gicv3_icc_eoir_write, gicv3_icc_dir_write, gicv3_icc_iar1_read) for the
# register traffic of the injected SPI.
#
# Prints Markdown tables; the logs are build/out/TARGET/bench-gic-IMPL.log and .trace.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_GIC_TARGET:-arm64-bench}	# the arm64 test kernel without debug options
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
iters=${BENCH_GIC_ITERS:-200}
reps=${BENCH_GIC_REPS:-16}
spi=200
events="gicv3_dist_write gicv3_dist_read gicv3_redist_write gicv3_icc_eoir_write gicv3_icc_dir_write gicv3_icc_iar1_read"

for impl in rust c; do
	log=$out/$target/bench-gic-$impl.log
	trace=$out/$target/bench-gic-$impl.trace
	targs=()
	for e in $events; do targs+=(-trace "$e"); done
	rm -f "$trace"
	MACHINE=arm64-icount \
		APPEND="irqchip.gicv3=$impl rust_gic_bench.run=1 rust_gic_bench.iters=$iters rust_gic_bench.reps=$reps rust_gic_bench.spi=$spi irqrs.poweroff=1" \
		timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
		"${targs[@]}" -D "$trace" </dev/null >"$log" 2>&1 ||
		{ echo "bench: QEMU failed for irqchip.gicv3=$impl (log: $log)"; rc=1; }
	grep -q "rust_gic_bench: done: nothing lost" "$log" ||
		{ echo "bench: the GICv3 sample did not finish for irqchip.gicv3=$impl (log: $log)"; rc=1; }
	grep -q "Root IRQ handler: $([ $impl = rust ] && echo gic_v3_rust_handle_irq || echo gic_handle_irq)" "$log" ||
		{ echo "bench: irqchip.gicv3=$impl did not install its root handler (log: $log)"; rc=1; }
done

python3 - "$out/$target" "$iters" "$reps" "$spi" <<'PY' || rc=1
import re, sys
out, iters, reps, spi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
intid = spi + 32
n = iters * reps
word = intid // 32
# The distributor banks of the SPI's 32-interrupt word: set/clear enable, pending, active.
banks = {0x100: "ISENABLER", 0x180: "ICENABLER", 0x200: "ISPENDR", 0x280: "ICPENDR",
         0x300: "ISACTIVER", 0x380: "ICACTIVER"}
offsets = {b + 4 * word: name for b, name in banks.items()}

def parse(impl):
    d = {}
    for line in open(f"{out}/bench-gic-{impl}.log", errors="replace"):
        m = re.search(r"rust_gic_bench: sgi ns=(-?\d+) spi ns=(-?\d+)", line)
        if m:
            d["sgi"], d["spi"] = int(m.group(1)), int(m.group(2))
    t = {"iar": 0, "eoir": 0, "dir": 0, "dist_w": 0, "dist_r": 0, "redist_w": 0, "bank": {}}
    for line in open(f"{out}/bench-gic-{impl}.trace", errors="replace"):
        m = re.match(r"gicv3_icc_(iar1_read|eoir_write|dir_write) .* value 0x([0-9a-f]+)", line)
        if m:
            if int(m.group(2), 16) == intid:
                t[{"iar1_read": "iar", "eoir_write": "eoir", "dir_write": "dir"}[m.group(1)]] += 1
            continue
        m = re.match(r"gicv3_dist_(write|read) .* offset 0x([0-9a-f]+)", line)
        if m:
            t["dist_w" if m.group(1) == "write" else "dist_r"] += 1
            off = int(m.group(2), 16)
            if m.group(1) == "write" and off in offsets:
                t["bank"][offsets[off]] = t["bank"].get(offsets[off], 0) + 1
            continue
        if line.startswith("gicv3_redist_write"):
            t["redist_w"] += 1
    d["trace"] = t
    return d

r, c = parse("rust"), parse("c")
if not all(k in x for x in (r, c) for k in ("sgi", "spi")):
    print("bench: missing sample output")
    sys.exit(1)
print(f"GICv3 per-interrupt cost, guest instructions (QEMU -icount shift=0), fastest of {reps} "
      f"rounds of {iters}, same kernel, irqchip.gicv3=rust|c:\n")
print("| interrupt | Rust driver | C driver | Rust / C |")
print("|---|---|---|---|")
for k, what in (("sgi", "SGI (reschedule IPI to self: send + entry + root handler + percpu_devid flow)"),
                ("spi", "SPI (injected: irq_set_irqchip_state + entry + root handler + fasteoi + handler)")):
    print(f"| {what} | {r[k]} | {c[k]} | {r[k] / c[k]:.3f} |")
print(f"\nGICv3 register traffic for the injected SPI (INTID {intid}), QEMU trace events over the "
      f"whole boot, per injected interrupt ({n} injected; setup writes of request_irq included):\n")
print("| event | Rust driver | C driver |")
print("|---|---|---|")
for k, what in (("iar", "ICC_IAR1_EL1 read"), ("eoir", "ICC_EOIR1_EL1 write (priority drop)"),
                ("dir", "ICC_DIR_EL1 write (deactivate)")):
    print(f"| {what} | {r['trace'][k] / n:.3f} | {c['trace'][k] / n:.3f} |")
for name in sorted(set(r["trace"]["bank"]) | set(c["trace"]["bank"])):
    print(f"| GICD_{name} write (its word) | {r['trace']['bank'].get(name, 0) / n:.3f} | "
          f"{c['trace']['bank'].get(name, 0) / n:.3f} |")
print(f"\nWhole-boot totals (the same workload on both): distributor writes {r['trace']['dist_w']} "
      f"(Rust) vs {c['trace']['dist_w']} (C), distributor reads {r['trace']['dist_r']} vs "
      f"{c['trace']['dist_r']}, redistributor writes {r['trace']['redist_w']} vs "
      f"{c['trace']['redist_w']}.")
PY
exit $rc
