#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the console log of the balancer's boot test (tests/boot/boot-test.sh, x86_64 on
6 CPUs: three packages of one core with two SMT threads each, the third isolated).

The Rust balancer (irqbalance.rust=1) ran while the load of samples/rust/rust_irq_balance_load.rs
(8 interrupts, 2 heavy, 2 medium, 4 light, all on CPU0 at the start, heavy and light swapped
halfway) ran during boot; the guest printed the balancer's debugfs table and /proc/interrupts.

Usage: check-balance.py LABEL LOG [notiming]

"notiming" (the KASAN kernels, several times slower) keeps every check but the spread at the end
of each half: the moves, what is never moved, the topology, exact delivery, no splat.

Every table it reads must have rows: a check over parsed data fails when nothing was parsed.
"""
import importlib.util
import os
import re
import sys

_spec = importlib.util.spec_from_file_location(
    "check_splats", os.path.join(os.path.dirname(__file__), "..", "check-splats.py"))
_splats = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_splats)
SPLAT = _splats.SPLAT


def state_table(log):
    """The balancer's debugfs state: header fields, CPU rows, interrupt rows; None if it is
    missing, empty or malformed."""
    m = re.search(r"@@@ irqbalance state begin\r?\n(.*?)@@@ irqbalance state end", log, re.S)
    if not m:
        return None
    lines = [l.rstrip("\r") for l in m.group(1).splitlines() if l.strip()]
    if not lines or not lines[0].startswith("passes "):
        return None
    head = dict(zip(lines[0].split()[0::2], lines[0].split()[1::2]))
    cpus, irqs, section = [], [], None
    try:
        for l in lines[1:]:
            f = l.split()
            if f[0] == "cpu":
                section = "cpu"
            elif f[0] == "irq":
                section = "irq"
            elif f[0] == "last":
                section = None
            elif section == "cpu":
                if len(f) != 7:
                    return None
                cpus.append([int(x) for x in f])
            elif section == "irq":
                if len(f) != 5:
                    return None
                irqs.append((int(f[0]), int(f[1]), int(f[2]), f[3], int(f[4])))
    except ValueError:
        return None
    return head, cpus, irqs


def main():
    argv = sys.argv[1:]
    if (not 2 <= len(argv) <= 3 or argv[0] in ("-h", "--help")
            or (len(argv) == 3 and argv[2] != "notiming")):
        print("usage: check-balance.py LABEL LOG [notiming]", file=sys.stderr)
        return 2
    label, path = argv[0], argv[1]
    timing = not (len(argv) > 2 and argv[2] == "notiming")
    try:
        with open(path, errors="replace") as f:
            log = f.read()
    except OSError as e:
        # No console log: the boot did not run (a failure of the test, not a usage error).
        print(f"boot-test {label}: FAIL: no console log: {e}")
        return 1
    ok_all = []

    def check(what, ok, detail=""):
        ok_all.append(ok)
        print(f"boot-test {label}: {'PASS' if ok else 'FAIL'}: {what}"
              f"{' (' + detail + ')' if detail else ''}")

    check("userspace reached", "@@@ userspace reached" in log)
    m = re.search(r"@@@ cpus online ([0-9][0-9,-]*)", log)  # printk may follow on the line
    check("six CPUs online", bool(m) and m.group(1) == "0-5", m.group(1) if m else "no line")
    # The third package (CPUs 4 and 5) is isolated (isolcpus=4-5): the housekeeping checks run,
    # the balancer may not use them, and CPU4 posts the load.
    check("CPUs 4-5 isolated", "@@@ cpus isolated 4-5" in log)
    check("balance test finished", "@@@ balance test done" in log)
    check("no kernel oops, BUG, WARNING, lockdep, KASAN or UBSAN report", not SPLAT.search(log))
    check("the Rust balancer started", "irqbalance: Rust balancer every" in log)
    check("every interrupt of the load handled exactly once",
          "done: every interrupt handled exactly once" in log)
    st = state_table(log)
    check("the balancer's debugfs table read", st is not None)
    if st is None:
        return 1
    head, cpus, irqs = st
    # Nothing below may pass on an empty table.
    check("the debugfs table has CPU rows", len(cpus) > 0, f"{len(cpus)} rows")
    check("the debugfs table has interrupt rows", len(irqs) > 0, f"{len(irqs)} rows")
    if not cpus or not irqs:
        return 1
    passes = int(head.get("passes", 0))
    check("the balancer ran passes", passes > 0, f"passes {passes}")
    # The CPU time of its passes is accounted (the bench compares it with the daemon's).
    cpu_us = head.get("cpu_us", "")
    check("the balancer's CPU time accounted", cpu_us.isdigit() and int(cpu_us) > 0,
          f"cpu_us {cpu_us or 'no field'}")
    hold = head.get("hotplug_hold_max_us", "")
    check("the longest CPU hotplug hold reported", hold.isdigit(), hold or "no field")
    # Topology as QEMU built it: CPUs 0+1, 2+3 and 4+5 are SMT siblings, each pair a package;
    # 4 and 5 not usable (isolated).
    topo = [(c[0], c[1], c[3], c[5]) for c in cpus]
    check("topology seen: three packages of two SMT siblings, the third isolated",
          topo == [(0, 0, 0, 1), (1, 0, 0, 1), (2, 2, 2, 1), (3, 2, 2, 1), (4, 4, 4, 0),
                   (5, 4, 4, 0)], str(topo))
    check("interrupt time accounted", head.get("irq_time") == "1")
    moves, failed = int(head.get("moves", 0)), int(head.get("failed", -1))
    check("the balancer moved interrupts, none failed", moves > 0 and failed == 0,
          f"moves {moves} failed {failed}")
    fixed = [i for i in irqs if i[3] in ("percpu", "managed", "nobalancing", "fixed") and i[4]]
    check("no per-CPU, managed, NOBALANCING or fixed interrupt moved", not fixed, str(fixed))
    windows = [(int(w), int(p), int(r), int(s)) for w, p, r, s in re.findall(
        r"window (\d+) phase (\d) busy_us \[[^\]]*\] R_permille (\d+) Rstar_permille (\d+)", log)]
    s = re.search(r"summary windows (\d+) converge_s (-?\d+) reconverge_s (-?\d+) "
                  r"final_R_permille (\d+) final_Rstar_permille (\d+) moves (\d+) posted (\d+) "
                  r"handled (\d+)", log)
    check("load summary printed", bool(s) and len(windows) >= 8, f"{len(windows)} windows")
    if not s:
        return 1
    conv, reconv = int(s.group(2)), int(s.group(3))
    # Never onto an isolated CPU, in any window (every window line must show its routing).
    at = re.findall(r"window \d+ phase \d .* cpus \[([^\]]*)\]", log)
    routed = {c.strip() for w in at for c in w.split(",")}
    check("no load interrupt routed to the isolated CPUs 4-5",
          len(at) == len(windows) and not routed & {"4", "5"},
          f"{len(at)} of {len(windows)} windows, CPUs {sorted(routed)}")
    check("no interrupt of the load taken for user-set", int(head.get("user_set", -1)) == 0,
          head.get("user_set", "no field"))
    if not timing:
        print(f"boot-test {label}: balance: converge {conv} s, reconverge {reconv} s, "
              f"moves {moves}, CPU {cpu_us} us, longest hotplug hold {hold} us "
              f"(timing not checked)")
        return 0 if all(ok_all) else 1
    # Spread, not speed or evenness (convergence time and R against R* are make bench's
    # figures, not a test's): at the end of each half the load's interrupts, all on CPU0 at the
    # start, sit on at least three CPUs.
    for phase in (0, 1):
        last = [w for w in windows if w[1] == phase][-1:]
        seen = re.findall(rf"window \d+ phase {phase} busy_us \[[^\]]*\] R_permille (\d+) "
                          r"Rstar_permille \d+ cpus \[([^\]]*)\]", log)
        if not last or not seen:
            check(f"phase {phase}: windows reported", False)
            continue
        r, where = int(seen[-1][0]), {c.strip() for c in seen[-1][1].split(",")}
        check(f"phase {phase}: the load spread over at least 3 CPUs", len(where) >= 3,
              f"CPUs {sorted(where)}, R {r / 1000:.2f}")
    print(f"boot-test {label}: balance (not checked): converge {conv} s, reconverge {reconv} s, "
          f"moves {moves}, load moves seen {s.group(6)}, posted {s.group(7)}, "
          f"passes {passes}, busy {head.get('busy_us')} us, CPU {cpu_us} us, "
          f"longest hotplug hold {hold} us")
    return 0 if all(ok_all) else 1


if __name__ == "__main__":
    sys.exit(main())
