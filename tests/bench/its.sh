#!/bin/bash
# `make bench`: the GICv3 ITS, Rust against C on the same kernel (arm64-bench, the Rust GICv3
# root): irqchip.gicv3_its=rust and irqchip.gicv3_its=c, once each on tests/qemu/arm64-icount.args
# (QEMU -icount shift=0,sleep=off: a guest nanosecond is an instruction), with the ITS's commands
# traced by QEMU (gicv3_its_cmd_*) into the console log. tests/boot/init (irqrs.itsbench=1), five
# rounds: writes BENCH_ITS_N times to /dev/null (the loop alone), injects virtio-rng's LPI through
# debugfs as many times on CPU0 (an INT command each, irq_set_irqchip_state(PENDING)), and the
# uart's SPI (a distributor write); the fastest round of each counts. Then it moves the LPI between
# CPU1 and CPU0 20 times.
#
# Per way: guest instructions per LPI and per SPI injected and handled (the loop's own cost
# subtracted), the ITS commands per injection and per move (between the init's markers), and the
# commands from the ITS's probe to user space per MSI-X vector (device set-up: MAPD, MAPTI, INV,
# SYNC...). Fails if a way did not run the ITS asked for, an injection was lost, or a move was
# not exactly one MOVI. Prints a Markdown table; logs build/out/TARGET/bench-its-WAY.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_GIC_TARGET:-arm64-bench}
export PATH="$top/tests/qemu/bin:$PATH"
n=${BENCH_ITS_N:-200}
ways="rust c"
rc=0
cmds="int clear discard sync mapd mapc mapi mapti inv invall movall movi"

for way in $ways; do
	rm -f "$out/$target/bench-its-$way.log"
done
for way in $ways; do
	log=$out/$target/bench-its-$way.log
	targs=()
	for c in $cmds; do targs+=(-trace "gicv3_its_cmd_$c"); done
	echo "== bench its $way"
	MACHINE=arm64-icount APPEND="irqchip.gicv3=rust irqchip.gicv3_its=$way irqrs.itsbench=1 irqrs.itsbench_n=$n" \
		timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" "${targs[@]}" \
		</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, its=$way (log: $log)"; rc=1; }
done

python3 - "$out/$target" "$n" <<'PY' || rc=1
import re, sys
out, n = sys.argv[1], int(sys.argv[2])
ways = ("rust", "c")
names = {"rust": "Rust ITS", "c": "C ITS"}
fails = []

def parse(way):
    log = open(f"{out}/bench-its-{way}.log", errors="replace").read()
    d = {"log": log}
    # Per loop: (triggers, handled, ns) of its fastest round; every round must be handled whole.
    for m in re.finditer(r"@@@ itsbench (\w+) irq (\S+) triggers (\d+) handled (-?\d+) ns (\d+)", log):
        k, t, h, ns = m.group(1), int(m.group(3)), int(m.group(4)), int(m.group(5))
        if k != "null" and h != t:
            d.setdefault("lost", []).append(f"{k}: {h} of {t}")
        if k not in d or ns < d[k][2]:
            d[k] = (t, h if k == "null" else t, ns)
    m = re.search(r"@@@ itsbench vectors (\d+)", log)
    d["vectors"] = int(m.group(1)) if m else 0
    # The commands of each phase: the probe to user space (device set-up), the injections, the
    # moves.
    def between(a, b):
        i, j = log.find(a), log.find(b)
        return log[i:j] if 0 <= i < j else ""
    def count(text):
        c = {}
        for m in re.finditer(r"gicv3_its_cmd_(\w+)", text):
            c[m.group(1)] = c.get(m.group(1), 0) + 1
        return c
    d["setup"] = count(between("Booting Linux", "@@@ userspace reached"))
    d["inject"] = count(between("@@@ userspace reached", "@@@ itsbench lpi irq"))
    d["moves"] = count(between("@@@ itsbench moves begin", "@@@ itsbench moves end"))
    want = "GICv3 (Rust): ITS @" if way == "rust" else "ITS@"
    if want not in log or ("Rust ITS," in log) != (way == "rust"):
        fails.append(f"its={way}: not the {names[way]} (log: bench-its-{way}.log)")
    return d

d = {w: parse(w) for w in ways}
for w in ways:
    for k in ("null", "lpi", "spi"):
        if k not in d[w]:
            fails.append(f"its={w}: no {k} line")
    for lost in d[w].get("lost", []):
        fails.append(f"its={w}: injections lost, {lost} handled")
    if d[w]["moves"].get("movi", 0) != 20:
        fails.append(f"its={w}: {d[w]['moves'].get('movi', 0)} MOVI for 20 moves")
if fails:
    print("\n".join("bench: " + f for f in fails))
    sys.exit(1)

def per(w, k):
    t, _, ns = d[w][k]
    return (ns - d[w]["null"][2]) / t

def fmt(c, div):
    return ", ".join(f"{k.upper()} {v / div:.2f}" for k, v in sorted(c.items()))

print(f"GICv3 ITS, Rust against C on the same kernel (Rust root; QEMU -icount shift=0: guest "
      f"instructions), the fastest of 5 rounds of {n} injections each, the loop alone "
      f"subtracted:\n")
print("| | Rust ITS | C ITS | Rust / C |")
print("|---|---|---|---|")
for k, what in (("lpi", "instructions per LPI injected (INT) and handled"),
                ("spi", "instructions per SPI injected and handled (reference)")):
    r, c = per("rust", k), per("c", k)
    print(f"| {what} | {r:.0f} | {c:.0f} | {r / c:.3f} |")
print(f"| LPI against the SPI of the same boot | {per('rust', 'lpi') / per('rust', 'spi'):.3f} | "
      f"{per('c', 'lpi') / per('c', 'spi'):.3f} | "
      f"{(per('rust', 'lpi') / per('rust', 'spi')) / (per('c', 'lpi') / per('c', 'spi')):.3f} |")
for k, what, div in (("inject", "ITS commands per LPI injection", n),
                     ("moves", "ITS commands per affinity move", 20)):
    print(f"| {what} | {fmt(d['rust'][k], div)} | {fmt(d['c'][k], div)} | "
          f"{sum(d['rust'][k].values()) / max(1, sum(d['c'][k].values())):.2f} |")
v = {w: max(1, d[w]["vectors"]) for w in ways}
print(f"| ITS commands to user space per MSI-X vector ({v['rust']} / {v['c']} vectors) | "
      f"{fmt(d['rust']['setup'], v['rust'])} | {fmt(d['c']['setup'], v['c'])} | "
      f"{(sum(d['rust']['setup'].values()) / v['rust']) / (sum(d['c']['setup'].values()) / v['c']):.2f} |")
PY
exit $rc
