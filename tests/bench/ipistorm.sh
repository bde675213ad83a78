#!/bin/bash
# `make bench`: the IPI storm (samples/rust/rust_ipi_storm.rs, built into the x86_64 kernel), seed
# 002's yardstick. The same kernel boots on the multi-threaded TCG machine (tests/qemu/x86_64.args,
# both vCPUs running at once) with CPU1 idling by HLT (the default idle of QEMU's -cpu max) and
# with idle=poll, TRIALS times each, alternately; each boot runs the storm at boot: CPU0 calls an
# empty function on CPU1 and waits for it, 5 rounds of BENCH_IPI_CALLS calls, either back to back
# (ipistorm's default) or 50 us apart (CPU1 back in its idle loop for every call).
#
# The figure is the time per call, so it is host time: compare the two idle modes of one run, not
# runs on different hosts. Under -icount the two vCPUs run round-robin in one host thread and a
# cross-CPU call waits for the other vCPU's time slice, so no instruction count is given.
#
# Prints a Markdown table; the console logs are build/out/TARGET/bench-ipistorm-MODE-N.log
# (MODE: hlt, poll, hlt-b2b, poll-b2b).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_TARGET:-x86_64-bench}
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
trials=${BENCH_TRIALS:-5}
args="rust_ipi_storm.run=1 rust_ipi_storm.calls=${BENCH_IPI_CALLS:-10000} rust_ipi_storm.rounds=5"

# This run's logs are removed before its first boot: no earlier run's log is read as this one's.
for i in $(seq 1 "$trials"); do
	for mode in hlt poll hlt-b2b poll-b2b; do
		rm -f "$out/$target/bench-ipistorm-$mode-$i.log"
	done
done

for i in $(seq 1 "$trials"); do
	for mode in hlt poll hlt-b2b poll-b2b; do
		log=$out/$target/bench-ipistorm-$mode-$i.log
		extra=
		case $mode in poll*) extra=idle=poll;; esac
		case $mode in *-b2b) ;; *) extra="$extra rust_ipi_storm.delay_us=50";; esac
		MACHINE=x86_64 APPEND="$args $extra irqrs.poweroff=1" \
			timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
			</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, $mode (log: $log)"; rc=1; }
		grep -q "rust_ipi_storm: done: every call ran exactly once" "$log" ||
			{ echo "bench: the IPI storm did not finish, $mode (log: $log)"; rc=1; }
	done
done

python3 - "$out/$target" "$trials" <<'PY' || rc=1
import re, statistics, sys
out, trials = sys.argv[1], int(sys.argv[2])

def parse(mode, i):
    log = open(f"{out}/bench-ipistorm-{mode}-{i}.log", errors="replace").read()
    m = re.search(r"rust_ipi_storm: .* calls=(\d+) ns_per_call median=(\d+) min=(\d+) max=(\d+)", log)
    r = re.search(r"rust_ipi_storm: runs=(\d+) by_ipi=(\d+) without_ipi=(\d+) by_ipi_target_busy=(\d+)", log)
    if not m or not r:
        sys.exit(f"bench: no IPI storm figures in bench-ipistorm-{mode}-{i}.log")
    return (int(m.group(2)), int(m.group(3)), int(m.group(4)), int(r.group(1)), int(r.group(2)),
            int(r.group(4)))

modes = ("hlt", "poll", "hlt-b2b", "poll-b2b")
res = {mode: [parse(mode, i) for i in range(1, trials + 1)] for mode in modes}
med = {mode: statistics.median(r[0] for r in runs) for mode, runs in res.items()}
print(f"IPI storm (CPU0 calls an empty function on idle CPU1 and waits, smp_call_function_single(); "
      f"multi-threaded TCG; median of {trials} boots per row, each boot the median of 5 rounds):")
print()
print("| CPU1 idles by | calls | ns per call (median) | every boot: median [fastest-slowest round] | calls to the idle CPU1 by IPI | normalised runtime (to HLT) |")
print("|---|---|---|---|---|---|")
for mode in modes:
    name = "polling (idle=poll)" if mode.startswith("poll") else "HLT (default)"
    spacing = "back to back" if mode.endswith("-b2b") else "50 us apart"
    base = "hlt-b2b" if mode.endswith("-b2b") else "hlt"
    runs = res[mode]
    each = ", ".join(f"{r[0]} [{r[1]}-{r[2]}]" for r in runs)
    idle = sum(r[3] - r[5] for r in runs)
    ipi = sum(r[4] - r[5] for r in runs)
    print(f"| {name} | {spacing} | {med[mode]:g} | {each} | {100 * ipi / max(idle, 1):.2f} % | {med[mode] / med[base]:.2f} |")
PY
exit $rc
