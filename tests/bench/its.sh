#!/bin/bash
# `make bench`: the GICv3 ITS, Rust against C on the same kernel (arm64-bench, the Rust GICv3
# root): irqchip.gicv3_its=rust and irqchip.gicv3_its=c, BENCH_ITS_BOOTS times each, alternately,
# on tests/qemu/arm64-icount.args (QEMU -icount shift=0,sleep=off: a guest nanosecond is an
# instruction), with the ITS's commands traced by QEMU (gicv3_its_cmd_*) into the console log.
#
# tests/boot/init (irqrs.itsbench=1), on CPU0 (the shell pinned there): BENCH_ITS_ROUNDS rounds
# of four loops of BENCH_ITS_N writes each to genirq's debugfs file of an interrupt, one open per
# loop: "nothing" (ignored) and "trigger" (irq_set_irqchip_state(PENDING): an INT command for
# virtio-rng's LPI, a GICD_ISPENDR write for the uart's SPI; the interrupt is taken before the
# write returns) for the LPI, then for the SPI, with CPU1 offline. QEMU counts the instructions
# all vCPUs execute between consecutive writes (tests/bench/qemu-insn-window.c, a TCG plugin
# built here with $HOSTCC, clang-22 unless set): a boot's figure for an interrupt is the median iteration of its
# "trigger" loops less the median iteration of its "nothing" loops: the injection and its
# handling, to the instruction (guest time under -icount also advances while a vCPU waits).
# Then 20 affinity moves of the LPI between CPU1 and CPU0 (each must be one MOVI), and five
# rounds of unbinding and binding again the virtio console, a device with 64 MSI-X vectors
# through the ITS: the fastest bind (set-up) in guest instructions, and the ITS commands per
# vector of each set-up and each teardown.
#
# Prints a Markdown table: per way the median over the boots, the Rust / C ratio of the medians
# and the range of the per-boot ratios (boot i of Rust against boot i of C). Fails if a way did
# not run the ITS asked for, an injection was lost, a move was not exactly one MOVI, or a
# set-up did not bring all vectors back. Logs build/out/TARGET/bench-its-WAY-N.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_GIC_TARGET:-arm64-bench}
export PATH="$top/tests/qemu/bin:$PATH"
n=${BENCH_ITS_N:-100}
rounds=${BENCH_ITS_ROUNDS:-30}
boots=${BENCH_ITS_BOOTS:-3}
ways="rust c"
rc=0
cmds="int clear discard sync mapd mapc mapi mapti inv invall movall movi"

rm -f "$out/$target"/bench-its-*.log "$out/$target"/bench-its-*.insns
# The instruction counter (tests/bench/qemu-insn-window.c): all vCPUs' instructions between
# consecutive entries of irq_debug_write(), the debugfs write of each loop iteration.
plugin=$out/$target/qemu-insn-window.so
${HOSTCC:-clang-22} -O2 -shared -fPIC -fvisibility=hidden -o "$plugin" "$top/tests/bench/qemu-insn-window.c" ||
	{ echo "bench: cannot build the QEMU plugin"; exit 1; }
pc=$(awk '$3 == "irq_debug_write" { print $1 }' "$out/$target/System.map")
[ -n "$pc" ] || { echo "bench: no irq_debug_write in $out/$target/System.map"; exit 1; }
targs=()
for c in $cmds; do targs+=(-trace "gicv3_its_cmd_$c"); done
for i in $(seq "$boots"); do
	for way in $ways; do
		log=$out/$target/bench-its-$way-$i.log
		echo "== bench its $way ($i of $boots)"
		MACHINE=arm64-icount APPEND="irqchip.gicv3=rust irqchip.gicv3_its=$way irqrs.itsbench=1 irqrs.itsbench_n=$n irqrs.itsbench_rounds=$rounds" \
			timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" "${targs[@]}" \
			-plugin "file=$plugin,pc=0x$pc,out=${log%.log}.insns" \
			</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, its=$way (log: $log)"; rc=1; }
	done
done

python3 - "$out/$target" "$boots" "$top/tests/bench" <<'PY' || rc=1
import re, statistics, sys
out, boots = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import insn_loops
ways = ("rust", "c")
names = {"rust": "Rust ITS", "c": "C ITS"}
fails = []

def count(text):
    c = {}
    for m in re.finditer(r"gicv3_its_cmd_(\w+)", text):
        c[m.group(1)] = c.get(m.group(1), 0) + 1
    return c

def add(a, b):
    for k, v in b.items():
        a[k] = a.get(k, 0) + v

def parse(way, i):
    name = f"bench-its-{way}-{i}.log"
    log = open(f"{out}/{name}", errors="replace").read()
    want = "GICv3 (Rust): ITS @" if way == "rust" else "ITS@"
    if want not in log or ("Rust ITS," in log) != (way == "rust"):
        fails.append(f"its={way}: not the {names[way]} ({name})")
    d = insn_loops.per_injection(log, f"{out}/{name[:-4]}.insns", ("lpi", "spi"),
                                 f"its={way}", name, fails)
    if not d:
        return d
    i0, i1 = log.find("@@@ itsbench moves begin"), log.find("@@@ itsbench moves end")
    moves = count(log[i0:i1]) if 0 <= i0 < i1 else {}
    if moves.get("movi", 0) != 20:
        fails.append(f"its={way}: {moves.get('movi', 0)} MOVI for 20 moves ({name})")
    d["moves"] = moves
    # Set-up (bind) and teardown (unbind) of the 64-vector device: the commands between the
    # markers, and the fastest bind.
    setup, teardown, binds, vecs = {}, {}, [], 0
    marks = [(m.start(), m.group(0)) for m in
             re.finditer(r"@@@ itsbench setup (begin|end vectors (\d+) ns (\d+))", log)]
    prev_end = log.find("@@@ itsbench vectors")
    for pos, text in marks:
        if text.endswith("begin"):
            if prev_end >= 0:
                add(teardown, count(log[prev_end:pos]))
            begin = pos
        else:
            m = re.match(r"@@@ itsbench setup end vectors (\d+) ns (\d+)", text)
            v, ns = int(m.group(1)), int(m.group(2))
            if v < 64:
                fails.append(f"its={way}: a bind brought back {v} ITS vectors, not 64 ({name})")
            add(setup, count(log[begin:pos]))
            binds.append(ns)
            vecs += v
            prev_end = pos
    if not binds:
        fails.append(f"its={way}: no device set-up ({name})")
    d["setup"] = {k: v / max(1, vecs) for k, v in setup.items()}
    d["teardown"] = {k: v / max(1, vecs) for k, v in teardown.items()}
    d["bind"] = min(binds) if binds else 0
    d["vectors"] = vecs // max(1, len(binds))
    return d

d = {w: [parse(w, i) for i in range(1, boots + 1)] for w in ways}
if fails:
    print("\n".join("bench: " + f for f in fails))
    sys.exit(1)

def med(w, k):
    return insn_loops.med(d, w, k)

def ratios(k):
    return insn_loops.ratios(d, k)

def fmt(c):
    return ", ".join(f"{k.upper()} {v:.2f}" for k, v in sorted(c.items()))

print(f"GICv3 ITS, Rust against C on the same kernel (Rust root; QEMU -icount shift=0), "
      f"{boots} boots per way: guest instructions (all vCPUs) per injection, each boot's median "
      f"iteration; guest time (ns) per bind, each boot's fastest; the median of the boots, and "
      f"the range of the per-boot Rust / C ratios:\n")
print("| | Rust ITS | C ITS | Rust / C (range) |")
print("|---|---|---|---|")
for k, what in (("lpi", "instructions per LPI injected (INT) and handled"),
                ("spi", "instructions per SPI injected and handled (reference: the same code)")):
    print(f"| {what} | {med('rust', k):.0f} | {med('c', k):.0f} | {ratios(k)} |")
v = d["rust"][0]["vectors"]
print(f"| guest ns to bind a device with {v} MSI-X vectors (set-up) | "
      f"{med('rust', 'bind'):.0f} | {med('c', 'bind'):.0f} | {ratios('bind')} |")
for k, what in (("moves", "ITS commands per affinity move (20 moves)"),
                ("setup", "ITS commands per vector, set-up (bind)"),
                ("teardown", "ITS commands per vector, teardown (unbind)")):
    r, c = d["rust"][0][k], d["c"][0][k]
    div = 20 if k == "moves" else 1
    r = {a: b / div for a, b in r.items()}
    c = {a: b / div for a, b in c.items()}
    print(f"| {what} | {fmt(r)} | {fmt(c)} | {sum(r.values()) / max(1e-9, sum(c.values())):.2f} |")
PY
exit $rc
