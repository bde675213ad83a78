#!/bin/bash
# `make bench`: interrupt balancing four ways on the same load and the same kernel (the x86_64
# test kernel: it has CONFIG_IRQ_TIME_ACCOUNTING), the in-kernel balancing experiment. The
# machine (tests/qemu/x86_64-smp6.args: three packages of one core with two SMT threads) boots
# TRIALS times per way, the ways interleaved. The balancers get CPUs 0-3 (two packages of one core
# with two threads); the third package is isolated (isolcpus=4-5) and CPU4 posts the load, standing
# in for the IOMMU: under TCG an interrupt handled on the posting vCPU runs at its nominal rate
# and elsewhere at a fraction of it, which made whichever interrupt landed there decide R*. Every
# boot runs the load of
# samples/rust/rust_irq_balance_load.rs (8 interrupts: 2 heavy, 2 medium, 4 light, busy-waiting
# handlers, at 1/BENCH_BALANCE_STRETCH (10) of the sample's default rates for that many times as
# long each; all on CPU0 at the start; heavy and light swapped halfway; BENCH_BALANCE_SECONDS,
# default 30) beside user space (BENCH_BALANCE_WAYS: a subset of the ways below;
# BENCH_BALANCE_RUST_ARGS: more kernel parameters for the Rust way, e.g. irqbalance.gain_pct=5),
# balanced by:
#
# - none: nobody;
# - oneshot: `irqbalance --oneshot` once, after the load's first second;
# - daemon: the irqbalance daemon (Debian's 1.9.2, in the initramfs), `--interval=1`, with a
#   policy script giving every interrupt `balance_level=core`;
# - rust: the Rust balancer, `irqbalance.rust=1`, every 1000 ms.
#
# Per boot, from the load's 1-second windows: R = highest over mean per-CPU handler time, against
# R* of the best assignment of the loads that ran; the steady R/R* (mean of the last 5 windows of each
# half); the time to converge (R within 10 % of R* for 5 windows) after the start and after the
# swap ("never" when not within the half, ranked last: +infinity in the medians); churn, the
# routing changes the load saw per minute (sampled once a second); the balancer's CPU time over
# the load's window, read by the guest when the load starts and when it ends (tests/boot/init:
# the daemon's threads' sum_exec_runtime, from /proc/PID/task/*/schedstat, or utime+stime in
# clock ticks without it; the Rust balancer's passes' CPU time, cpu_us of its debugfs state); and
# whether every interrupt was handled exactly once. A run whose balancer did not start (the
# daemon, the Rust balancer, a failed --oneshot) or whose CPU time is missing fails the bench.
# Prints a Markdown table of the medians and every run; logs are
# build/out/TARGET/bench-balance-WAY-N.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=${BENCH_TARGET:-x86_64}
export PATH="$top/tests/qemu/bin:$PATH"
rc=0
trials=${BENCH_TRIALS:-5}
seconds=${BENCH_BALANCE_SECONDS:-30}
ways=${BENCH_BALANCE_WAYS:-none oneshot daemon rust}
# tsc=reliable: TCG's vCPUs fail the TSC sync check, and an unstable TSC turns off interrupt time
# accounting, which both the daemon (/proc/stat) and the Rust balancer weigh loads by.
args="tsc=reliable irqrs.balancetest=1 rust_irq_balance_load.run=1 rust_irq_balance_load.background=1"
# The posting CPU and its sibling are nobody's target: the daemon is given them as banned
# (tests/boot/init), the Rust balancer leaves isolated CPUs out, the load's R and R* leave them out.
args="$args isolcpus=4-5 rust_irq_balance_load.agent_cpu=4"
# The same loads in a tenth of the interrupts, ten times longer each (BENCH_BALANCE_STRETCH): an
# interrupt's entry and exit cost tens of us under TCG, which both balancers count (they weigh
# the kernel's interrupt time) and the handlers' R and R* do not; at the nominal rates that cost
# outweighed the light interrupts' handlers several times over.
args="$args rust_irq_balance_load.stretch=${BENCH_BALANCE_STRETCH:-10}"
# The load starts once user space (and a daemon) runs.
args="$args rust_irq_balance_load.delay_ms=${BENCH_BALANCE_DELAY_MS:-8000}"
args="$args rust_irq_balance_load.seconds=$seconds"

# BENCH_BALANCE_CHECK_ONLY=1: boot nothing, read the last run's logs again.
check_only=${BENCH_BALANCE_CHECK_ONLY:-0}

# This run's logs are removed before its first boot: no earlier run's log is read as this one's.
[ "$check_only" = 1 ] || for i in $(seq 1 "$trials"); do
	for way in $ways; do
		rm -f "$out/$target/bench-balance-$way-$i.log"
	done
done

for i in $(seq 1 "$trials"); do
	for way in $ways; do
		log=$out/$target/bench-balance-$way-$i.log
		if [ "$check_only" != 1 ]; then
			extra="irqrs.balancer=$way"
			[ "$way" = rust ] && extra="$extra irqbalance.rust=1 irqbalance.interval_ms=1000 ${BENCH_BALANCE_RUST_ARGS:-}"
			INITRAMFS_IRQBALANCE=1 MACHINE=x86_64-smp6 APPEND="$args $extra" \
				timeout "${BENCH_TIMEOUT:-900}" bash "$top/tests/boot/qemu.sh" "$target" \
				</dev/null >"$log" 2>&1 || { echo "bench: QEMU failed, $way (log: $log)"; rc=1; }
		fi
		grep -q "rust_irq_balance_load: done: every interrupt handled exactly once" "$log" ||
			{ echo "bench: the load did not finish cleanly, $way (log: $log)"; rc=1; }
		python3 "$top/tests/check-splats.py" "bench balance $way $i" "$log" >/dev/null ||
			{ echo "bench: kernel splat, $way (log: $log)"; rc=1; }
	done
done

python3 - "$out/$target" "$trials" "${BENCH_BALANCE_STRETCH:-10}" $ways <<'PY' || rc=1
import math, re, statistics, sys
out, trials, stretch, ways = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
NEVER = math.inf


class Failed(Exception):
    pass


def seconds(v):
    """A convergence time; -1 (not within the half) ranks last, as +infinity."""
    return NEVER if v < 0 else v


def parse(way, i):
    name = f"bench-balance-{way}-{i}.log"
    log = open(f"{out}/{name}", errors="replace").read()
    win = [(int(p), int(r), int(s)) for p, r, s in re.findall(
        r"window \d+ phase (\d) busy_us \[[^\]]*\] R_permille (\d+) Rstar_permille (\d+)", log)]
    s = re.search(r"summary windows (\d+) converge_s (-?\d+) reconverge_s (-?\d+) .* moves (\d+) "
                  r"posted (\d+) handled (\d+)", log)
    if not s or not win:
        raise Failed(f"no balance figures in {name}")
    # A log of this bench's machine and load (not an older run's, read with CHECK_ONLY).
    head = f"posted from CPU4, balanced over CPUs [0, 1, 2, 3], stretch {stretch}"
    if head not in log:
        raise Failed(f"not a run of this bench ({name}: no '{head}')")
    # R and R* count the targets' handler time only: an interrupt routed to the isolated package
    # would leave R too low, so such a run fails; every window must show its routing.
    ats = re.findall(r"window \d+ phase \d .* cpus \[([^\]]*)\]", log)
    if len(ats) != len(win):
        raise Failed(f"{len(ats)} of {len(win)} windows show their routing ({name})")
    for at in ats:
        if any(c.strip() in ("4", "5") for c in at.split(",")):
            raise Failed(f"a load interrupt was routed to the isolated CPU4-5 ({name}): [{at}]")
    steady = []
    for phase in (0, 1):
        tail = [w for w in win if w[0] == phase][-5:]
        if not tail:
            raise Failed(f"no window of phase {phase} in {name}")
        steady.append(sum(w[1] for w in tail) / sum(w[2] for w in tail))
    churn = int(s.group(4)) * 60 / len(win)
    # The balancer ran, and its CPU time over the load's window (from the load's first line
    # to its summary, read by the guest at both ends; tests/boot/init): the daemon's threads'
    # sum_exec_runtime, the Rust balancer's passes' CPU time. Missing: the run fails.
    if way == "daemon" and "@@@ irqbalance daemon running" not in log:
        raise Failed(f"the irqbalance daemon did not start ({name})")
    if way == "rust" and "irqbalance: Rust balancer every" not in log:
        raise Failed(f"the Rust balancer did not start ({name})")
    if way == "oneshot":
        m = re.search(r"@@@ irqbalance oneshot rc (\d+)", log)
        if not m or m.group(1) != "0":
            raise Failed(f"irqbalance --oneshot did not run or failed ({name})")
    cpu_ms = None
    if way == "none":
        cpu_ms = 0.0
    elif way in ("daemon", "rust"):
        ends = [re.search(rf"@@@ balancer_cpu_ns {e} (\S+)", log) for e in ("start", "end")]
        if not all(ends) or any(not m.group(1).isdigit() for m in ends):
            got = [m.group(1) if m else "no line" for m in ends]
            raise Failed(f"{way}: no balancer CPU time over the load, start {got[0]}, end {got[1]} "
                         f"(the daemon not running?) ({name})")
        cpu_ms = (int(ends[1].group(1)) - int(ends[0].group(1))) / 1e6
        if cpu_ms < 0:
            raise Failed(f"{way}: balancer CPU time went backwards ({name})")
    exact = s.group(5) == s.group(6) and "handled exactly once" in log
    return (steady[0], steady[1], seconds(int(s.group(2))), seconds(int(s.group(3))), churn,
            cpu_ms, exact)


rows, failed = {}, []
for w in ways:
    rows[w] = []
    for i in range(1, trials + 1):
        try:
            rows[w].append(parse(w, i))
        except (Failed, OSError) as e:
            failed.append(str(e))
            print(f"bench: {e}", file=sys.stderr)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def sec(x):
    return "never" if x == NEVER else f"{x:g}"


def ms(x):
    return "(not measured)" if x is None else f"{x:.1f}"


print(f"\n### Interrupt balancing over 4 CPUs (2 packages x 1 core x 2 SMT threads; the load posted from an isolated third package), median of {trials} boots\n")
print("Converge: \"never\" (not within the half) ranks last, as +infinity. Balancer CPU: its CPU "
      "time over the load's window (the daemon's threads' sum_exec_runtime, the Rust balancer's "
      "passes'); `--oneshot` ran once and is not measured.\n")
print("| balancer | steady R/R\\* (first half) | steady R/R\\* (after swap) | converge (s) "
      "| re-converge after swap (s) | churn (moves/min) | balancer CPU over the load (ms) "
      "| lost or duplicated |")
print("|---|---|---|---|---|---|---|---|")
for w in ways:
    r = rows[w]
    if not r:
        print(f"| {w} | failed | | | | | | |")
        continue
    print(f"| {w} | {med([x[0] for x in r]):.2f} | {med([x[1] for x in r]):.2f} "
          f"| {sec(med([x[2] for x in r]))} | {sec(med([x[3] for x in r]))} "
          f"| {med([x[4] for x in r]):.1f} | {ms(med([x[5] for x in r]))} "
          f"| {sum(not x[6] for x in r)} |")
print("\nEvery run (R/R\\* first half, after swap, converge s, re-converge s, churn/min, CPU ms):\n")
for w in ways:
    runs = "; ".join(f"{x[0]:.2f} {x[1]:.2f} {sec(x[2])} {sec(x[3])} {x[4]:.1f} {ms(x[5])}"
                     for x in rows[w])
    print(f"- {w}: {runs}" + (f" ({trials - len(rows[w])} failed)" if len(rows[w]) < trials else ""))
if failed:
    print("\nFailed runs:\n" + "\n".join(f"- {f}" for f in failed))
    sys.exit(1)
PY
exit $rc
