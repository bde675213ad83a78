#!/bin/bash
# `make bench`: the GICv3 figures, produced by the benchmark sample
# (samples/rust/rust_gic_bench.rs, built into the arm64 kernels) at boot with
# rust_gic_bench.run=1, three ways on the same kernel: the C driver with the C flows
# (irqchip.gicv3=c), the Rust driver with the Rust fasteoi flow (irqchip.gicv3_flow=fasteoi) and
# the Rust driver with the strict flow (the default).
#
# - On tests/qemu/arm64-icount.args (QEMU -icount shift=0,sleep=off: one guest instruction per
#   nanosecond of guest time), once per way, the sample's ns per interrupt are deterministic
#   instruction counts of the whole path: an SGI (reschedule IPI to self), an injected SPI, and
#   seed 000's threaded benchmark (a ONESHOT threaded SPI on CPU1, injected and awaited). QEMU's
#   GICv3 trace events (only gicv3_dist_write, gicv3_dist_read, gicv3_redist_write,
#   gicv3_icc_eoir_write, gicv3_icc_dir_write, gicv3_icc_iar1_read) give the register traffic.
# - On tests/qemu/arm64.args (multi-threaded TCG), BENCH_TRIALS (default 5) boots per way,
#   alternately, of the threaded benchmark alone: interrupts per second, host-speed dependent
#   (compare the ways of one run).
#
# Prints Markdown tables; the logs are build/out/TARGET/bench-gic-WAY.log and .trace, and
# bench-gic-WAY-smp-N.log (WAY: c, rust-fasteoi, rust-strict).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_GIC_TARGET:-arm64-bench}	# the arm64 test kernel without debug options
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
iters=${BENCH_GIC_ITERS:-200}
reps=${BENCH_GIC_REPS:-16}
spi=200
tspi=240
trials=${BENCH_TRIALS:-5}
events="gicv3_dist_write gicv3_dist_read gicv3_redist_write gicv3_icc_eoir_write gicv3_icc_dir_write gicv3_icc_iar1_read"
ways="rust-strict rust-fasteoi c"

cmdline() { # WAY
	case $1 in
	c) echo "irqchip.gicv3=c" ;;
	rust-fasteoi) echo "irqchip.gicv3=rust irqchip.gicv3_flow=fasteoi" ;;
	rust-strict) echo "irqchip.gicv3=rust irqchip.gicv3_flow=strict" ;;
	esac
}

check_boot() { # WAY LOG
	grep -q "rust_gic_bench: threaded done: every interrupt handled once" "$2" ||
		{ echo "bench: the GICv3 sample did not finish, $1 (log: $2)"; rc=1; }
	grep -q "Root IRQ handler: $([ "$1" = c ] && echo gic_handle_irq || echo gic_v3_rust_handle_irq)" "$2" ||
		{ echo "bench: $1 did not install its root handler (log: $2)"; rc=1; }
	if [ "$1" = rust-strict ]; then
		grep -q "strict flow: ONESHOT interrupts masked by their active state" "$2" ||
			{ echo "bench: $1 did not run the strict flow (log: $2)"; rc=1; }
	fi
}

# This run's logs are removed before its first boot: no earlier run's log is read as this one's.
for way in $ways; do
	rm -f "$out/$target/bench-gic-$way.log" "$out/$target/bench-gic-$way.trace"
	for i in $(seq 1 "$trials"); do rm -f "$out/$target/bench-gic-$way-smp-$i.log"; done
done

for way in $ways; do
	log=$out/$target/bench-gic-$way.log
	trace=$out/$target/bench-gic-$way.trace
	targs=()
	for e in $events; do targs+=(-trace "$e"); done
	rm -f "$trace"
	MACHINE=arm64-icount \
		APPEND="$(cmdline $way) rust_gic_bench.run=1 rust_gic_bench.iters=$iters rust_gic_bench.reps=$reps rust_gic_bench.spi=$spi rust_gic_bench.threaded_spi=$tspi rust_gic_bench.threaded_ms=${BENCH_GIC_THREADED_ICOUNT_MS:-20} irqrs.poweroff=1" \
		timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
		"${targs[@]}" -D "$trace" </dev/null >"$log" 2>&1 ||
		{ echo "bench: QEMU failed, $way (log: $log)"; rc=1; }
	check_boot $way "$log"
done
for i in $(seq 1 "$trials"); do
	for way in $ways; do
		log=$out/$target/bench-gic-$way-smp-$i.log
		MACHINE=arm64 \
			APPEND="$(cmdline $way) rust_gic_bench.run=1 rust_gic_bench.iters=10 rust_gic_bench.reps=5 rust_gic_bench.spi=$spi rust_gic_bench.threaded_spi=$tspi rust_gic_bench.threaded_ms=${BENCH_GIC_THREADED_MS:-200} irqrs.poweroff=1" \
			timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
			</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, $way (log: $log)"; rc=1; }
		check_boot $way "$log"
	done
done

python3 - "$out/$target" "$iters" "$reps" "$spi" "$tspi" "$trials" <<'PY' || rc=1
import math, re, statistics, sys
out, iters, reps, spi, tspi, trials = sys.argv[1], *map(int, sys.argv[2:])
ways = ("c", "rust-fasteoi", "rust-strict")
names = {"c": "C driver, C fasteoi", "rust-fasteoi": "Rust driver, Rust fasteoi",
         "rust-strict": "Rust driver, strict flow"}
n = iters * reps
# The distributor banks of a 32-interrupt word: set/clear enable, pending, active.
banks = {0x100: "ISENABLER", 0x180: "ICENABLER", 0x200: "ISPENDR", 0x280: "ICPENDR",
         0x300: "ISACTIVER", 0x380: "ICACTIVER"}

def sample(path):
    d = {}
    for line in open(path, errors="replace"):
        m = re.search(r"rust_gic_bench: sgi ns=(-?\d+) spi ns=(-?\d+)", line)
        if m:
            d["sgi"], d["spi"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"rust_gic_bench: threaded irqs_per_s median=(\d+) min=(\d+) max=(\d+) "
                      r"ns_per_irq=(\d+) interrupts=(\d+)", line)
        if m:
            d["thr"] = tuple(int(x) for x in m.groups())
    return d

def trace(way):
    t = {}
    for intid in (spi + 32, tspi + 32):
        t[intid] = {"iar": 0, "eoir": 0, "dir": 0, "bank": {}}
    t["dist_w"] = t["dist_r"] = t["redist_w"] = 0
    words = {(spi + 32) // 32: spi + 32, (tspi + 32) // 32: tspi + 32}
    for line in open(f"{out}/bench-gic-{way}.trace", errors="replace"):
        m = re.match(r"gicv3_icc_(iar1_read|eoir_write|dir_write) .* value 0x([0-9a-f]+)", line)
        if m:
            v = int(m.group(2), 16)
            if v in t:
                t[v][{"iar1_read": "iar", "eoir_write": "eoir", "dir_write": "dir"}[m.group(1)]] += 1
            continue
        m = re.match(r"gicv3_dist_(write|read) .* offset 0x([0-9a-f]+)", line)
        if m:
            t["dist_w" if m.group(1) == "write" else "dist_r"] += 1
            off = int(m.group(2), 16)
            b, w = off & ~0x7f, (off & 0x7f) // 4
            if m.group(1) == "write" and b in banks and w in words:
                bk = t[words[w]]["bank"]
                bk[banks[b]] = bk.get(banks[b], 0) + 1
            continue
        if line.startswith("gicv3_redist_write"):
            t["redist_w"] += 1
    return t

ic = {w: sample(f"{out}/bench-gic-{w}.log") for w in ways}
tr = {w: trace(w) for w in ways}
if not all(k in ic[w] for w in ways for k in ("sgi", "spi", "thr")):
    sys.exit("bench: missing sample output")
print(f"GICv3 per-interrupt cost, guest instructions (QEMU -icount shift=0), same kernel three ways "
      f"(SGI and SPI: fastest of {reps} rounds of {iters}; threaded: median round):\n")
print("| interrupt | " + " | ".join(names[w] for w in ways) + " | Rust fasteoi / C | strict / C |")
print("|---|---|---|---|---|---|")
for k, what in (("sgi", "SGI (reschedule IPI to self: send + entry + root handler + percpu_devid flow)"),
                ("spi", "SPI (injected: irq_set_irqchip_state + entry + root handler + fasteoi + handler)"),
                ("thr", "threaded ONESHOT SPI on CPU1 (inject, flow, thread wake-up and run, wait)")):
    v = {w: (ic[w][k][3] if k == "thr" else ic[w][k]) for w in ways}
    print(f"| {what} | " + " | ".join(str(v[w]) for w in ways) +
          f" | {v['rust-fasteoi'] / v['c']:.3f} | {v['rust-strict'] / v['c']:.3f} |")

print(f"\nGICv3 register traffic per interrupt, QEMU trace events over the whole boot (setup "
      f"included): the injected SPI (INTID {spi + 32}, {n} interrupts) and the threaded ONESHOT "
      f"SPI (INTID {tspi + 32}):\n")
print("| event | " + " | ".join(f"{names[w]}: SPI" for w in ways) + " | " +
      " | ".join(f"{names[w]}: threaded" for w in ways) + " |")
print("|---|" + "---|" * 6)
rows = [("iar", "ICC_IAR1_EL1 read"), ("eoir", "ICC_EOIR1_EL1 write (priority drop)"),
        ("dir", "ICC_DIR_EL1 write (deactivate)")]
bank_names = sorted({b for w in ways for i in (spi + 32, tspi + 32) for b in tr[w][i]["bank"]})
def per(w, intid, key, bank=False):
    cnt = ic[w]["thr"][4] if intid == tspi + 32 else n
    v = tr[w][intid]["bank"].get(key, 0) if bank else tr[w][intid][key]
    return f"{v / cnt:.3f}"
for k, what in rows:
    print(f"| {what} | " + " | ".join(per(w, spi + 32, k) for w in ways) + " | " +
          " | ".join(per(w, tspi + 32, k) for w in ways) + " |")
for b in bank_names:
    print(f"| GICD_{b} write (its word) | " + " | ".join(per(w, spi + 32, b, True) for w in ways) +
          " | " + " | ".join(per(w, tspi + 32, b, True) for w in ways) + " |")
thr_n = {w: ic[w]["thr"][4] for w in ways}
print("| distributor writes, all (per threaded interrupt) | - | - | - | " +
      " | ".join(f"{tr[w]['dist_w'] / thr_n[w]:.3f}" for w in ways) + " |")
print("| distributor reads, all: RWP polls (per threaded interrupt) | - | - | - | " +
      " | ".join(f"{tr[w]['dist_r'] / thr_n[w]:.3f}" for w in ways) + " |")
print("\nWhole-boot totals: distributor writes " +
      ", ".join(f"{tr[w]['dist_w']} ({w})" for w in ways) + "; distributor reads " +
      ", ".join(f"{tr[w]['dist_r']} ({w})" for w in ways) + "; redistributor writes " +
      ", ".join(f"{tr[w]['redist_w']} ({w})" for w in ways) + ".")

smp = {w: [sample(f"{out}/bench-gic-{w}-smp-{i}.log") for i in range(1, trials + 1)] for w in ways}
if not all("thr" in d for w in ways for d in smp[w]):
    sys.exit("bench: missing threaded figures in an SMP boot")
med = {w: statistics.median(d["thr"][0] for d in smp[w]) for w in ways}
print(f"\nSeed 000's threaded benchmark on the multi-threaded TCG machine: interrupts per second, "
      f"median of {trials} boots per way (each boot the median of 5 rounds of 200 ms), every boot "
      f"listed as median [slowest-fastest round]:\n")
# Multi-threaded TCG throughput swings by +-25 % between boots and runs on a slow machine: a
# direction is claimed only when the 95 % confidence interval of the ratio to C (Welch's t on the
# logarithms of the per-boot medians; the boots of the ways alternate) excludes 1.00.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
        2.056, 2.052, 2.048, 2.045, 2.042]
def ratio_ci(xs, ys):
    lx, ly = [math.log(v) for v in xs], [math.log(v) for v in ys]
    d = statistics.mean(lx) - statistics.mean(ly)
    if len(lx) < 2 or len(ly) < 2:
        return math.exp(d), None, None
    vx, vy = statistics.variance(lx) / len(lx), statistics.variance(ly) / len(ly)
    se = math.sqrt(vx + vy)
    if se == 0:
        return math.exp(d), math.exp(d), math.exp(d)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(lx) - 1) + vy ** 2 / (len(ly) - 1))
    t = T975[min(max(int(df), 1), len(T975)) - 1]
    return math.exp(d), math.exp(d - t * se), math.exp(d + t * se)
print("| way | interrupts/s | / C (geometric means) | 95 % CI of / C | direction | every boot |")
print("|---|---|---|---|---|---|")
for w in ways:
    each = ", ".join(f"{d['thr'][0]} [{d['thr'][1]}-{d['thr'][2]}]" for d in smp[w])
    r, lo, hi = ratio_ci([d["thr"][0] for d in smp[w]], [d["thr"][0] for d in smp["c"]])
    if w == "c":
        ci, direction = "-", "-"
    elif lo is None:
        ci, direction = "n/a", "none claimed (too few boots)"
    else:
        ci = f"{lo:.3f}-{hi:.3f}"
        direction = ("faster" if lo > 1 else "slower" if hi < 1 else
                     "none claimed (the interval includes 1.00)")
    print(f"| {names[w]} | {med[w]:g} | {r:.3f} | {ci} | {direction} | {each} |")
PY
exit $rc
