#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the console log of a boot test (tests/boot/boot-test.sh)."""
import importlib.util
import json
import os
import re
import sys

# The splat patterns of tests/check-splats.py, which checks the KUnit console logs.
_spec = importlib.util.spec_from_file_location(
    "check_splats", os.path.join(os.path.dirname(__file__), "..", "check-splats.py"))
_splats = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_splats)
SPLAT = _splats.SPLAT


def snapshot(log, n):
    m = re.search(rf"@@@ interrupts {n} begin\r?\n(.*?)@@@ interrupts {n} end", log, re.S)
    if not m:
        return None
    lines = [l.rstrip("\r") for l in m.group(1).splitlines() if l.strip()]
    ncpu = len(lines[0].split())
    table = {}
    for line in lines[1:]:
        name, _, rest = line.partition(":")
        fields = rest.split()
        counts = []
        for f in fields[:ncpu]:
            if not f.isdigit():
                break
            counts.append(int(f))
        desc = " ".join(fields[len(counts):])
        table[name.strip()] = (sum(counts), desc, counts)
    return table


def status(log):
    """The report of scripts/irq-rs-status that tests/boot/init prints: {component: (verdict,
    line)} and the tool's exit code, or (None, None) without the report."""
    m = re.search(r"@@@ status begin\r?\n(.*?)@@@ status end", log, re.S)
    if not m:
        return None, None
    report = {}
    for line in m.group(1).splitlines():
        c = re.match(r"([a-z0-9-]+): (\S+)", line.rstrip("\r"))
        if c:
            report[c.group(1)] = (c.group(2), line.rstrip("\r"))
    rc = re.search(r"@@@ status rc (\d+)", log)
    return report, int(rc.group(1)) if rc else None


def status_json(log):
    """The report of scripts/irq-rs-status --json that tests/boot/init prints: the parsed
    object (None without the report, or if it does not parse) and the tool's exit code."""
    m = re.search(r"@@@ status json begin\r?\n(.*?)@@@ status json end", log, re.S)
    rc = re.search(r"@@@ status json rc (\d+)", log)
    rc = int(rc.group(1)) if rc else None
    if not m:
        return None, rc
    lines = [l.rstrip("\r") for l in m.group(1).splitlines()]
    try:
        return json.loads("".join(lines)), rc
    except ValueError:
        pass
    # The report is one line; a kernel message printed to the console meanwhile may have
    # landed in it, ending at a line break ("...}clocksource: Watchdog ... timed out\n,..."):
    # drop, at the end of one line, a tail that reads as a kernel message (an optional printk
    # timestamp, "subsystem: text", no quote or brace in it) and parse again. The cut is said.
    msg = re.compile(r"(\[\s*\d+\.\d+\] )?[a-z][\w.-]*: [^\"{}]*")
    for i, line in enumerate(lines[:-1]):
        for k in range(len(line)):
            if not msg.fullmatch(line, k):
                continue
            try:
                j = json.loads("".join(lines[:i] + [line[:k]] + lines[i + 1:]))
            except ValueError:
                continue
            print(f"note: a kernel message cut out of the status JSON: {line[k:]!r}")
            return j, rc
    return None, rc


def check_status(check, log, component, want):
    """The status tool's verdict on component is want, and it exited 0."""
    report, rc = status(log)
    got = report.get(component) if report else None
    check(f"status tool (irq-rs-status): {component} {want}", got is not None and
          got[0] == want and rc == 0,
          (got[1].split(" -- ")[0] if got else "no status report" if report is None
           else f"no {component} line") + f", exit {rc}")


def check_status_impl(check, log, component, want):
    """The status tool's JSON report names want as component's implementation ("impl"), its
    verdict that implementation if it is in use ("in_use") and "off" if not, and it exited 0."""
    j, rc = status_json(log)
    comp = j.get("components", {}).get(component) if isinstance(j, dict) else None
    if comp is None:
        check(f"status tool (irq-rs-status --json): {component} impl={want}", False,
              ("no JSON status report" if j is None else f"no {component} component") +
              f", exit {rc}")
        return
    verdict = want if comp.get("in_use") == "yes" else "off"
    check(f"status tool (irq-rs-status --json): {component} impl={want}, verdict {verdict}",
          comp.get("impl") == want and comp.get("verdict") == verdict and rc == 0,
          f"impl={comp.get('impl')} verdict {comp.get('verdict')} ({comp.get('state')}), "
          f"in_use {comp.get('in_use')}, exit {rc}")


def check_status_its(check, log, has_its, its_impl="c"):
    """The status tool reports the ITS `its_impl` ran (the Rust one on ITS-RS-* chips, the C
    one on ITS-* chips) live on a machine with the ITS, none without it (its=off,
    irqchip.gicv3_nolpi), and it exited 0."""
    report, rc = status(log)
    got = report.get("its") if report else None
    if has_its and its_impl == "rust":
        what = "its rust, live on ITS-RS-* chips"
        ok = got is not None and got[0] == "rust" and bool(re.match(
            r"its: rust \(live\) -- Rust ITS: ITS-RS-", got[1]))
    elif has_its:
        what = "its c, live on ITS-* chips"
        ok = got is not None and got[0] == "c" and bool(re.match(
            r"its: c \(live\) -- C ITS\b.*: ITS-(?!RS-)", got[1]))
    else:
        what = "its none"
        ok = got is not None and got[0] == "none"
    check(f"status tool (irq-rs-status): {what}", ok and rc == 0,
          (got[1] if got else "no status report" if report is None else "no its line") +
          f", exit {rc}")


def rng_virtio(log):
    """The virtio device name of virtio-rng ("virtioN"), as the init printed it: its interrupt
    lines are the ones device I/O (reads of /dev/hwrng) raises. Other virtio devices (the
    console of the arm64 machines) may come first."""
    m = re.search(r"@@@ virtio rng (virtio\d+)", log)
    return m.group(1) if m else "virtio0"


def is_dev(desc, name):
    """Whether the /proc/interrupts description `desc` is device `name`'s: its one line (INTx,
    "virtio0") or one of its vectors ("virtio0-input", "virtio0-config")."""
    return bool(re.search(rf"(^|\s){name}(-\S*)?$", desc))


def counts_of(line, ncpu):
    """The per-CPU counts and the rest of a /proc/interrupts line without its "N:"."""
    fields = line.split()
    counts = []
    for f in fields[:ncpu]:
        if not f.isdigit():
            break
        counts.append(int(f))
    return counts, " ".join(fields[len(counts):])


# The GICv3 driver-selection boots (boot-test.sh's gic_select_boots(), each asking for the Rust
# driver, tests/boot/init's "irqrs.gicselect=1" part): which driver took the GIC, the line saying
# why, and interrupts flowing on it.
GIC_FALLBACK = (r"GICv3: Rust driver: probe error (-?\d+) before programming the GIC; "
                r"using the C driver")


def check_gic_select(target, log, variant):
    label = f"{target} irqchip.gicv3=rust {variant}"
    checks = []

    def check(what, ok, detail=""):
        checks.append(ok)
        print(f"boot-test {label}: {'PASS' if ok else 'FAIL'}: {what}"
              f"{' (' + detail + ')' if detail else ''}")

    handler = re.search(r"Root IRQ handler: (\S+)", log)
    handler = handler.group(1) if handler else "none"
    fallback = re.search(GIC_FALLBACK, log)
    # The Rust probe set a CPU up only after it committed (created its domain, programmed the GIC).
    rust_committed = "GICv3 (Rust): CPU0: found redistributor" in log

    def fell_back(errno, why):
        check(f"the Rust probe's error: {why!r}", why in log)
        check(f"the shim's line: probe error {errno} before programming the GIC, C driver",
              bool(fallback) and fallback.group(1) == str(errno),
              fallback.group(0) if fallback else "no line")
        check("the Rust probe did not program the GIC", not rust_committed)

    if variant == "gic-badgicd":
        fell_back(-19, "GICv3 (Rust): no distributor detected, giving up")
        c = re.search(r"GICv3: \S+: no distributor detected, giving up", log)
        check("then the C driver's probe ran (and found no distributor either)",
              bool(c) and bool(fallback) and c.start() > fallback.start(),
              "" if c else "no C probe line")
        check("no root IRQ handler installed", handler == "none", handler)
        # The boot is stopped once the C probe failed; what comes after (no timer) is not tested.
        upto = log[:c.end()] if c else log
        check("no kernel oops, BUG, WARNING, lockdep, KASAN or UBSAN report up to there",
              not SPLAT.search(upto))
        return 0 if all(checks) else 1

    if variant == "gic-pppart":
        m = re.search(r"GICv3: Rust driver: PPI partitions in (\S+); using the C driver", log)
        check("the shim's line: PPI partitions, C driver", bool(m))
        check("the Rust probe not started", "GICv3 (Rust):" not in log)
        # C's gic_populate_ppi_partitions(): the partition of both CPUs.
        check("the C driver's PPI partition of CPU0 and CPU1",
              bool(re.search(r"PPI partition interrupt-partition-0\[0\] \{ /cpus/cpu@0\[0\] "
                             r"/cpus/cpu@1\[1\] \}", log)))
        g = re.search(r"@@@ gic node (\S+) interrupt-cells (\d+) ppi-partitions (\w+)", log)
        check("booted on 4-cell specifiers and a ppi-partitions node",
              bool(g) and g.group(2) == "4" and g.group(3) == "yes",
              g.group(0)[4:] if g else "no line")
        t = re.search(r"@@@ timer interrupts (\d+) bytes", log)
        check("the timer's 5 PPIs in 4-cell specifiers (naming the partition)",
              bool(t) and t.group(1) == "80", f"{t.group(1)} bytes" if t else "no line")
    elif variant == "gic-smallgicr":
        fell_back(-22, "GICv3 (Rust): redistributor region 0: the redistributor at 0x20000 ends "
                  "beyond its 0x38000 bytes")
        check("the C driver found both redistributors",
              all(re.search(rf"GICv3: CPU{n}: found redistributor {n} region", log)
                  for n in (0, 1)))
    elif variant == "gic-nolpi":
        check("the Rust driver's line: LPIs disabled by irqchip.gicv3_nolpi",
              "GICv3 (Rust): LPIs disabled by irqchip.gicv3_nolpi" in log)
        check("no ITS started", not re.search(r"ITS \[mem|ITS@", log))
    want = "gic_v3_rust_handle_irq" if variant == "gic-nolpi" else "gic_handle_irq"
    check(f"root IRQ handler {want}", handler == want, handler)
    if variant != "gic-smallgicr":
        check("no probe-error line", not fallback, fallback.group(0) if fallback else "")
    # The status tool (scripts/irq-rs-status, run by tests/boot/init after the load): the
    # driver that took the GIC, the Rust one asked for in each (the C one where the Rust probe
    # declined or fell back), and the C ITS, absent with irqchip.gicv3_nolpi.
    check_status(check, log, "gicv3-root", "rust" if variant == "gic-nolpi" else "c")
    check_status_its(check, log, variant != "gic-nolpi")

    check("userspace reached", "@@@ userspace reached" in log)
    rng = rng_virtio(log)
    m = re.search(r"@@@ cpus online ([0-9][0-9,-]*)", log)
    check("both CPUs online", bool(m) and m.group(1) == "0-1", m.group(1) if m else "no line")
    check("test finished", "@@@ gic select test done" in log)
    check("no kernel oops, BUG, WARNING, lockdep, KASAN or UBSAN report", not SPLAT.search(log))
    a, b = snapshot(log, 1), snapshot(log, 2)
    check("/proc/interrupts read twice", a is not None and b is not None)
    if a is None or b is None:
        return 1
    timer = [k for k, (_, d, _) in b.items() if "arch_timer" in d]
    if not timer:
        check("arch timer: line present", False)
    else:
        k = timer[0]
        check(f"arch timer ({k}: {b[k][1]}) on every CPU and rising",
              len(b[k][2]) == 2 and all(c > 0 for c in b[k][2]) and b[k][0] > a[k][0],
              f"{a[k][2]} -> {b[k][2]}")
    ipis = [k for k in b if k.startswith("IPI") and k in a]
    before, after = sum(a[k][0] for k in ipis), sum(b[k][0] for k in ipis)
    check("IPIs rising", bool(ipis) and after > before, f"{before} -> {after}")
    virtio = [k for k, (_, d, _) in b.items() if is_dev(d, rng) and "config" not in d and k in a]
    if variant == "gic-nolpi":
        # No ITS, no MSI: virtio-rng's legacy INTx, on a GIC SPI.
        virtio = [k for k in virtio if b[k][1].split()[0] == "GICv3"]
        what = "virtio INTx on a GIC SPI"
        its = sorted({d.split()[0] for _, d, _ in b.values() if d.startswith("ITS")})
        check("no ITS interrupt chip", not its, ", ".join(its))
    else:
        virtio = [k for k in virtio if b[k][1].startswith("ITS-PCI-MSIX")]
        what = "virtio MSI-X through the ITS"
    check(f"{what} rising", bool(virtio) and b[virtio[0]][0] > a[virtio[0]][0],
          f"{a[virtio[0]][0]} -> {b[virtio[0]][0]}" if virtio else "no line")
    m = re.search(r"@@@ hwrng read (\d+) bytes", log)
    check("virtio-rng: 256 bytes read from /dev/hwrng", bool(m) and m.group(1) == "256",
          f"{m.group(1)} bytes" if m else "no line")
    return 0 if all(checks) else 1


USAGE = """usage: check-boot.py TARGET LOG [IMPL [VARIANT]]
  TARGET   ARCH or ARCH-VARIANT (x86_64, arm64-kasan, ...)
  LOG      the boot's console log
  IMPL     rust (default) or c: posted_msi= on x86_64, irqchip.gicv3= on arm64; - for rust
  VARIANT  - (default), itsoff, acpi, gicv4, idlepoll, or gic-NAME (the GICv3 driver choice)"""
VARIANTS = ("-", "itsoff", "itsc", "acpi", "gicv4", "idlepoll")


def usage(msg=None):
    if msg:
        print(f"check-boot: {msg}", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return 2


def main():
    argv = sys.argv[1:]
    if not 2 <= len(argv) <= 4 or argv[0] in ("-h", "--help"):
        return usage()
    variant = argv[3] if len(argv) > 3 else "-"
    if len(argv) > 2 and argv[2] not in ("rust", "c", "-"):
        return usage(f"unknown IMPL {argv[2]!r}")
    if variant not in VARIANTS and not (variant.startswith("gic-") and len(variant) > 4):
        return usage(f"unknown VARIANT {variant!r}")
    arch, path = argv[0].split("-")[0], argv[1]
    # The implementation booted: x86_64, the posted-MSI one (posted_msi=rust or c); arm64, the
    # GICv3 driver (irqchip.gicv3=rust or c).
    impl = argv[2] if len(argv) > 2 and argv[2] != "-" else "rust"
    # The machine variant: "itsoff" is arm64's virt machine without the GIC's ITS (its=off).
    its_off = variant == "itsoff"
    # "acpi": the virt machine booted by UEFI with acpi=force, the GIC from the MADT.
    acpi = variant == "acpi"
    # "gicv4": QEMU's gic-version=4, a GICv4.0 (vLPIs, the C ITS driver's vPEs).
    gicv4 = variant == "gicv4"
    # "itsc": the virt machine with its ITS, booted with irqchip.gicv3_its=c.
    its_c = variant == "itsc"
    # The ITS driver that runs: the Rust one on the Rust root unless told otherwise; C's on the
    # C root and on a GICv4 (vLPIs).
    its_impl = "rust" if impl == "rust" and not (its_c or gicv4) else "c"
    # QEMU traces the ITS's MOVI commands into the console log on machines with an ITS
    # (boot-test.sh: -trace gicv3_its_cmd_movi).
    its_trace = not its_off
    # x86_64's "idlepoll": booted with idle=poll.
    idle_poll = variant == "idlepoll"
    try:
        with open(path, errors="replace") as f:
            log = f.read()
    except OSError as e:
        # No console log: the boot did not run (a failure of the test, not a usage error).
        print(f"boot-test {argv[0]} {impl} {variant}: FAIL: no console log: {e}")
        return 1
    if variant.startswith("gic-"):
        return check_gic_select(argv[0], log, variant)
    checks = []
    if arch == "x86_64":
        label = f"{arch} posted_msi={impl}{' idle=poll' if idle_poll else ''}"
    elif arch == "arm64":
        label = (f"{arch} irqchip.gicv3={impl}{' its=off' if its_off else ''}"
                 f"{' irqchip.gicv3_its=c' if its_c else ''}"
                 f"{' GICv4' if gicv4 else ''}"
                 f"{' ACPI' if acpi else ''}")
    else:
        label = arch

    def check(what, ok, detail=""):
        checks.append(ok)
        print(f"boot-test {label}: {'PASS' if ok else 'FAIL'}: {what}{' (' + detail + ')' if detail else ''}")

    check("userspace reached", "@@@ userspace reached" in log)
    rng = rng_virtio(log)
    m = re.search(r"@@@ cpus online ([0-9][0-9,-]*)", log)
    check("both CPUs online", bool(m) and m.group(1) == "0-1", m.group(1) if m else "no line")
    check("boot test finished", "@@@ boot test done" in log)
    check("no kernel oops, BUG, WARNING, lockdep, KASAN or UBSAN report",
          not SPLAT.search(log))
    a, b = snapshot(log, 1), snapshot(log, 2)
    check("/proc/interrupts read twice", a is not None and b is not None)
    if a is None or b is None:
        return 1

    def rising(what, keys):
        ks = [k for k in keys if k in a and k in b]
        if not ks:
            check(f"{what}: line present", False, "none of " + ", ".join(keys))
            return
        k = ks[0]
        before, after = a[k][0], b[k][0]
        check(f"{what} ({k}: {b[k][1]}) non-zero and rising", before > 0 and after > before,
              f"{before} -> {after}")

    def after_hotplug(what, keys, cpu=None):
        # Counts from snapshot 2 (before CPU1 went offline twice) to 3 (after it came back).
        ks = [k for k in keys if k in b and k in c]
        if not ks:
            check(f"after CPU hotplug: {what}: line present", False, "none of " + ", ".join(keys))
            return
        k = ks[0]
        if cpu is None:
            before, after = b[k][0], c[k][0]
        else:
            before, after = b[k][2][cpu], c[k][2][cpu]
        where = "" if cpu is None else f" on CPU{cpu}"
        check(f"after CPU hotplug: {what} ({k}){where} rising", after > before,
              f"{before} -> {after}")

    def check_moves(moves, movi_trace=False):
        """Each (tag, kind, name) interrupt moved to CPU1, then CPU0 (tests/boot/init's
        irq_move): smp_affinity and effective_affinity follow, and the interrupts raised after
        each move (five debugfs injections, or the device's own with "io") are counted on the
        target CPU and on no other; an LPI's move is one MOVI when movi_trace."""
        ncpu = max(len(v[2]) for v in b.values())
        for tag, kind, name in moves:
            m = re.search(rf"@@@ {tag} irq (\d+) smp_affinity (\S+) effective_affinity (\S+)", log)
            if not m:
                check(f"{kind} affinity: {name} interrupt found", False,
                      f"no {name} line" if f"@@@ {tag} none" in log else "no line")
                continue
            n = m.group(1)
            what = f"{kind} {n} ({name})"
            prev = m
            for cpu in (1, 0):
                want = 1 << cpu
                s_ = re.search(rf"@@@ {tag} cpu{cpu} set (\w+) smp_affinity (\S+) "
                               rf"effective_affinity (\S+)", log)
                check(f"{what}: smp_affinity set to CPU{cpu}, effective_affinity follows",
                      bool(s_) and s_.group(1) == "ok" and int(s_.group(2), 16) == want and
                      int(s_.group(3), 16) == want,
                      " ".join(s_.groups()) if s_ else "no line")
                if tag == "lpi" and s_ and movi_trace:
                    between = log[prev.end():s_.start()]
                    movis = len(re.findall(r"gicv3_its_cmd_movi\b", between))
                    check(f"{what}: the move to CPU{cpu} is one MOVI (QEMU trace)", movis == 1,
                          f"{movis} MOVI commands")
                bl = re.search(rf"@@@ {tag} cpu{cpu} before\s+{n}:(.*)", log)
                al = re.search(rf"@@@ {tag} cpu{cpu} after (trigger|io) (\w+)\s+{n}:(.*)", log)
                if not bl or not al:
                    check(f"{what}: injected on CPU{cpu}: counts printed", False, "no line")
                    continue
                prev = al
                how, res = al.group(1), al.group(2)
                before, _ = counts_of(bl.group(1), ncpu)
                after, _ = counts_of(al.group(3), ncpu)
                delta = [x - y for x, y in zip(after, before)]
                least = 5 if how == "trigger" else 1
                ok = (res == "ok" and len(delta) == ncpu and delta[cpu] >= least and
                      all(d == 0 for i, d in enumerate(delta) if i != cpu))
                check(f"{what}: " + ("5 injections through debugfs" if how == "trigger" else
                                     "its device's interrupts (hwrng reads)") +
                      f" counted on CPU{cpu} only", ok,
                      f"{how} {res}, per-CPU {before} -> {after}")
            r = re.search(rf"@@@ {tag} restore (\w+) smp_affinity (\S+) effective_affinity (\S+)",
                          log)
            check(f"{what}: smp_affinity restored to {m.group(2)}",
                  bool(r) and r.group(1) == "ok" and r.group(2) == m.group(2),
                  " ".join(r.groups()) if r else "no line")

    m = re.search(r"@@@ hotplug (\w+) cpus online ([0-9][0-9,-]*)", log)
    check("CPU1 offline and online twice through sysfs", bool(m) and m.groups() == ("ok", "0-1"),
          m.group(0)[4:] if m else "no line")
    c = snapshot(log, 3)
    check("/proc/interrupts read after the hotplug", c is not None)
    if c is None:
        return 1

    if arch == "x86_64":
        rising("local APIC timer", ["LOC"])
        serial = [k for k, (_, d, _) in b.items() if "ttyS0" in d]
        rising("serial through the IO-APIC", serial or ["<ttyS0 line>"])
        # With idle=poll an idle CPU is woken without a reschedule IPI (set_nr_and_not_polling()):
        # the RES count need not rise there.
        if not idle_poll:
            rising("rescheduling IPIs", ["RES"])
        rising("function-call IPIs", ["CAL"])
        # The virtqueue vector(s), not the configuration-change one, which never fires here; in
        # the idle=poll boot (pci=nomsi) virtio-rng's INTx, a level-triggered IO-APIC line.
        intx = idle_poll
        if intx:
            msix = [k for k, (_, d, _) in b.items()
                    if "IO-APIC" in d and "fasteoi" in d and is_dev(d, rng)]
        else:
            msix = [k for k, (_, d, _) in b.items()
                    if "MSI" in d and is_dev(d, rng) and "config" not in d]
        devname = "virtio INTx (level, IO-APIC)" if intx else "virtio MSI-X"
        rising(devname, msix or [f"<{devname} line>"])
        after_hotplug("local APIC timer", ["LOC"], cpu=1)
        if not idle_poll:
            after_hotplug("rescheduling IPIs", ["RES"], cpu=1)
        after_hotplug(devname, msix or [f"<{devname} line>"])
        # The idle=poll boot runs on the xAPIC machine (tests/qemu/x86_64-xapic.args).
        x2 = not idle_poll
        mode = "x2apic" if x2 else "xapic"
        check(f"{'x2APIC' if x2 else 'xAPIC'} in use",
              bool(re.search(r"Switched APIC routing to:.*x2apic", log)) == x2)
        check(f"interrupt remapping in {'x2APIC' if x2 else 'xAPIC'} mode",
              f"Enabled IRQ remapping in {mode} mode" in log)
        if idle_poll:
            check("booted with threadirqs and pci=nomsi", all(
                w in log.split("Kernel command line:")[-1].splitlines()[0].split()
                for w in ("threadirqs", "pci=nomsi")))
        # VT-d interrupt remapping: the Rust domain (intel_ir=rust, with posted_msi=rust) or
        # C's. The Rust domain's PCI/MSI chips are IR-RS-*, C's IR-*; genirq's debugfs shows
        # the remapping level's chip, INTEL-IR-RS or INTEL-IR.
        ir_rust = impl == "rust"
        ir_chip = "INTEL-IR-RS" if ir_rust else "INTEL-IR"
        rust_domain = f"DMAR-IR: Rust interrupt remapping domain, {mode} mode" in log
        check(f"VT-d interrupt remapping domain: {'Rust' if ir_rust else 'C'} (intel_ir={impl})",
              rust_domain == ir_rust and "Rust interrupt remapping domain: error" not in log)
        prefix = "IR-IO-APIC" if intx else "IR-RS-PCI-MSIX" if ir_rust else "IR-PCI-MSIX"
        check(f"{devname} on {prefix}* chips",
              bool(msix) and all(b[k][1].startswith(prefix) for k in msix),
              ", ".join(b[k][1].split()[0] for k in msix) or "no line")
        dbg = dict(re.findall(r"@@@ irqdebug (\S+) begin\r?\n(.*?)@@@ irqdebug \S+ end", log, re.S))
        for tag, what in (("ioapic", "serial's IO-APIC line"), ("dev", devname)):
            chips = re.findall(r"chip:\s+(\S+)", dbg.get(tag, ""))
            check(f"{what} remapped by {ir_chip} (genirq debugfs)", ir_chip in chips,
                  " > ".join(chips) or "no debugfs dump")
        # The Rust domain's PCI/MSI interrupts take the Rust edge flow, C's the C one; a level
        # IO-APIC line the IO-APIC's fasteoi flow.
        flow = ("handle_fasteoi_irq" if intx else
                "rust_handle_edge_irq" if ir_rust else "handle_edge_irq")
        m = re.search(r"handler:\s+(\S+)", dbg.get("dev", ""))
        check(f"{devname} on the flow {flow} (genirq debugfs)",
              bool(m) and m.group(1).split("+")[0] == flow, m.group(1) if m else "no handler line")
        check_moves([("dev", "INTx" if intx else "MSI-X", rng if intx else f"{rng}-input")])
        # QEMU judges every entry it remaps: its errors (a non-present or reserved-bit IRTE, a
        # source-id mismatch: "qemu-system-x86_64: vtd_...", on stderr, in the console log),
        # and the guest's reports of remapping faults. (QEMU's vtd_warn_ir_vector and
        # vtd_warn_ir_trigger fire for every IO-APIC interrupt of Linux's design, C's too: the
        # redirection entry carries the pin as its vector, the IRTE edge trigger.)
        bad = re.findall(r".*(?:qemu-system-x86_64: .*(?:IRTE|vtd_|VT-d).*"
                         r"|INTR-REMAP.*|DMAR: DRHD: handling fault).*", log)
        check("no interrupt remapping fault (QEMU's IRTE errors, the guest's DMAR fault "
              "reports)", not bad, "; ".join(x.strip() for x in bad[:3]))
        load = re.findall(r"rust_posted_msi_load: impl=(\w+) (demux|load) .*", log)
        check("posted-MSI load generator: demux and load points reported",
              len([l for l in load if l[1] == "demux"]) == 4 and
              len([l for l in load if l[1] == "load"]) == 5, f"{len(load)} lines")
        check(f"posted-MSI load generator on posted_msi={impl}: nothing lost or duplicated",
              bool(re.search(rf"rust_posted_msi_load: impl={impl} done: nothing lost", log)))
        # The IPI storm, CPU0 -> CPU1 at boot: how the calls reached CPU1, by the sample's count
        # (the function in hard-IRQ context or not) and by CPU1's CAL count after it.
        m = re.search(r"rust_ipi_storm: src=0 dst=1 .* calls=(\d+) ns_per_call median=(\d+)", log)
        r = re.search(r"rust_ipi_storm: runs=(\d+) by_ipi=(\d+) without_ipi=(\d+) "
                      r"by_ipi_target_busy=(\d+)", log)
        check("IPI storm: every call ran exactly once on CPU1",
              bool(m) and bool(r) and "rust_ipi_storm: done: every call ran exactly once" in log,
              f"{m.group(1)} calls, {m.group(2)} ns per call" if m else "no line")
        if m and r:
            runs, by_ipi, without, busy = (int(x) for x in r.groups())
            cal1 = a["CAL"][2][1] if "CAL" in a and len(a["CAL"][2]) > 1 else -1
            if idle_poll:
                # The calls to an idle CPU1: not those whose IPI found CPU1 running a task.
                idle = runs - busy
                # CAL also counts the boot's other function-call IPIs to CPU1 (100-200 here, more
                # on slow or KASAN kernels); calls taking IPIs would add one per call. A call that
                # finds CPU1 between polls (its interrupt threads run there with threadirqs) takes
                # an IPI: 1.6 % of them once on a loaded machine, so the bar is 95 %, as far from
                # halting idle's at most 5 % as that is from 100 %.
                check("IPI storm, idle=poll: at least 95 % of the calls to the idle CPU1 without "
                      "an IPI, CPU1's CAL count below 10 % of the calls",
                      idle > 0.9 * runs and without >= 0.95 * idle and 0 <= cal1 <= 0.1 * runs,
                      f"{without} of {idle} without, {by_ipi} by IPI ({busy} to a busy CPU1); "
                      f"CAL on CPU1 {cal1}")
            else:
                check("IPI storm, halting idle: at least 95 % of the calls by the function-call "
                      "IPI, each counted in CPU1's CAL", runs > 0 and by_ipi >= 0.95 * runs and
                      cal1 >= by_ipi,
                      f"{by_ipi} of {runs} by IPI, {without} without; CAL on CPU1 {cal1}")
        # The status tool (scripts/irq-rs-status, run at the end of tests/boot/init): the
        # posted-MSI implementation booted, in its JSON's "impl" (the verdict is "off" while
        # no posted MSI is in use, as here: QEMU's IOMMU does not post).
        check_status_impl(check, log, "posted-msi", impl)
    else:
        timer = [k for k, (_, d, _) in b.items() if "arch_timer" in d]
        rising("arch timer", timer or ["<arch_timer line>"])
        rising("rescheduling IPIs", ["IPI0"])
        after_hotplug("arch timer", timer or ["<arch_timer line>"], cpu=1)
        after_hotplug("rescheduling IPIs", ["IPI0"], cpu=1)
        virtio = [k for k, (_, d, _) in b.items() if is_dev(d, rng) and "config" not in d]
        if its_off:
            # No ITS, no MSI: virtio-rng's legacy INTx, routed to a GIC SPI.
            intx = [k for k in virtio if b[k][1].split()[0] == "GICv3"]
            rising("virtio INTx on a GIC SPI", intx or ["<GICv3 virtio line>"])
            its = sorted({d.split()[0] for _, d, _ in b.values() if d.startswith("ITS")})
            check("no ITS interrupt chip (its=off)", not its, ", ".join(its))
        else:
            # The virtqueue vector, not the configuration-change one, which never fires here:
            # on the Rust ITS's chips (ITS-RS-...) where it runs, else on the C ITS's.
            chip = "ITS-RS-PCI-MSIX" if its_impl == "rust" else "ITS-PCI-MSIX"
            msix = [k for k in virtio if b[k][1].startswith(chip)]
            rising(f"virtio MSI-X through the {'Rust' if its_impl == 'rust' else 'C'} ITS",
                   msix or [f"<{chip} virtio line>"])
            # The 65-vector device (virtio-serial with 31 ports, on tests/qemu/arm64.args'
            # machine), unbound and bound again twice: every vector torn down and set up again
            # on the same ITS's chips.
            rb = re.findall(r"@@@ msix rebind \d+ (\w+) \S+ vectors (\d+) unbound (\d+) "
                            r"bound (\d+) rust (\d+)", log)
            if not (acpi or gicv4) or rb:
                want_rust = its_impl == "rust"
                check(f"a 64-vector MSI-X device unbound and bound again twice through the "
                      f"{'Rust' if want_rust else 'C'} ITS",
                      len(rb) == 2 and all(
                          r == "ok" and int(v) >= 64 and int(u) == 0 and int(bd) == int(v) and
                          int(ru) == (int(bd) if want_rust else 0)
                          for r, v, u, bd, ru in rb),
                      "; ".join(" ".join(x) for x in rb) or "no line")
        after_hotplug("virtio", virtio or ["<virtio line>"])
        m = re.search(r"@@@ hwrng read (\d+) bytes", log)
        check("virtio-rng: 256 bytes read from /dev/hwrng", bool(m) and m.group(1) == "256",
              f"{m.group(1)} bytes" if m else "no line")
        check("kernel entered at EL2 (GIC split EOI mode)", "CPU(s) started at EL2" in log)
        # Masked by its active state (IRQD_MASKED_BY_ACTIVE, in the descriptor's debugfs state):
        # an SPI (the uart's) on the Rust driver's strict flow; never an ITS LPI (no active
        # state: virtio's MSI-X keeps the plain fasteoi path), nor anything on the C driver.
        # A dump counts only if it is one: the descriptor's state word ("dstate:") must be in it,
        # so an empty or failed dump fails the check instead of passing it.
        dbg = dict(re.findall(r"@@@ irqdebug (\S+) begin\r?\n(.*?)@@@ irqdebug \S+ end", log, re.S))
        dbg = {k: v for k, v in dbg.items() if "dstate:" in v}
        want = impl == "rust"
        check(f"SPI (uart) {'' if want else 'not '}masked by its active state",
              "spi" in dbg and ("IRQD_MASKED_BY_ACTIVE" in dbg["spi"]) == want,
              "no debugfs dump of the SPI" if "spi" not in dbg else "")
        if not its_off:
            check("ITS LPI (virtio MSI-X) not masked by its active state",
                  "lpi" in dbg and "IRQD_MASKED_BY_ACTIVE" not in dbg["lpi"],
                  "no debugfs dump of the LPI" if "lpi" not in dbg else "")

        # The GICv3 driver asked for (irqchip.gicv3=rust|c) is the one that probed: its root
        # handler, its split EOI/Deactivate mode, and not the other driver's.
        handler = {"c": "gic_handle_irq", "rust": "gic_v3_rust_handle_irq"}
        split = {"c": "GICv3: GIC: Using split EOI/Deactivate mode",
                 "rust": "GICv3 (Rust): using split EOI/Deactivate mode"}
        other = "c" if impl == "rust" else "rust"
        m = re.search(r"Root IRQ handler: (\S+)", log)
        check(f"root IRQ handler {handler[impl]}", bool(m) and m.group(1) == handler[impl],
              m.group(1) if m else "no line")
        check(f"split EOI/Deactivate mode ({split[impl]!r})",
              split[impl] in log and split[other] not in log)
        check("GICv3", ("GICv3 (Rust):" if impl == "rust" else "GICv3:") in log)
        # The status tool (scripts/irq-rs-status, run at the end of tests/boot/init): the Rust
        # GIC root exactly when the Rust driver was asked for; the C ITS unless its=off.
        check_status(check, log, "gicv3-root", impl)
        check_status_its(check, log, not its_off, its_impl)
        if not its_off and its_impl == "rust":
            check("Rust ITS probed", bool(re.search(
                r"GICv3 \(Rust\): ITS @0x[0-9a-f]+: Rust ITS, IIDR", log)))
        elif not its_off and impl == "rust":
            # Why the Rust root's ITS is C's: the switch, or what the Rust ITS leaves to C.
            why = {"itsc": None, "gicv4": "Rust ITS: GICv4 virtual LPIs are C's"}.get(variant)
            check("C ITS on the Rust root" + (f" ({why!r})" if why else
                  " (irqchip.gicv3_its=c)"), "Rust ITS," not in log and
                  (why is None or why in log))
        if gicv4:
            # The driver asked for found the redistributors' GICv4 features (QEMU's GICv4.0: no
            # DirectLPI, no RVPEID: the line lists none, as C's does) and the ITS driver
            # enabled GICv4 on its root; CPU1's redistributor four frames after CPU0's.
            prefix = "GICv3 (Rust): " if impl == "rust" else "GICv3: "
            check("GICv4 features found by the driver", bool(re.search(
                rf"^{re.escape(prefix)}GICv4 features: *\r?$", log, re.M)))
            check("ITS: GICv4 support enabled on the root", "ITS: Enabling GICv4 support" in log)
            check("ITS: vPE table allocated", "Virtual CPUs @" in log)
            if impl == "rust":
                check("CPU1's redistributor found four frames after CPU0's",
                      "GICv3 (Rust): CPU1: found redistributor 1 @0x80e0000" in log)
        if acpi:
            # The Rust driver probed from the MADT (irq-gic-v3-select.c's ACPI path), and the
            # kernel ran on ACPI, not on the device tree UEFI also passes.
            m = re.search(r"GICv3: Rust driver: the GIC of the ACPI MADT, (\d+) redistributor "
                          r"region\(s\) from its (GICR|GICC) entries", log)
            if impl == "rust":
                check("Rust driver probed from the ACPI MADT", bool(m),
                      f"{m.group(1)} region(s), {m.group(2)}" if m else "no line")
            else:
                check("C driver probed from the ACPI MADT, not the Rust one", not m and
                      "GICv3: 256 SPIs implemented" in log)
            check("booted on ACPI (acpi=force, UEFI)", "ACPI: Interpreter enabled" in log and
                  "efi: EFI v" in log)
            if its_impl == "rust":
                check("Rust ITS probed from the MADT, its ID registered to the IORT",
                      bool(re.search(r"GICv3: Rust ITS: the ITS of the ACPI MADT, ITS ID \d+ @", log)))
            else:
                check("ITS probed from the MADT", bool(re.search(r"ITS \[mem [^]]*\]", log)) and
                      "ITS@" in log)
        if impl == "rust":
            # The Rust driver's flows: the strict flow in EOImode=1, the default; booted with
            # threadirqs, so the uart's and virtio's handlers run as ONESHOT threads.
            check("strict flow on (Rust driver, EOImode=1)",
                  "GICv3 (Rust): strict flow: ONESHOT interrupts masked by their active state"
                  in log)
            check("booted with threadirqs", "threadirqs" in log.split("Kernel command line:")[-1]
                  .splitlines()[0])
        # The GICv3 benchmark sample's short round: SGIs to self and injected SPIs (not on
        # ACPI: it names its SPIs by device-tree specifier).
        if acpi:
            check("GICv3 bench sample not run on ACPI", "rust_gic_bench: not run" in log)
        m = None if acpi else re.search(r"rust_gic_bench: sgi ns=(-?\d+) spi ns=(-?\d+)", log)
        if not acpi:
            check("GICv3 bench sample: SGI and SPI costs reported", bool(m),
                  f"sgi {m.group(1)} ns, spi {m.group(2)} ns" if m else "no line")
            check("GICv3 bench sample: every injected SPI handled once",
                  "rust_gic_bench: done: nothing lost or duplicated" in log)
            m = re.search(r"rust_gic_bench: threaded irqs_per_s median=(\d+) .* "
                          r"interrupts=(\d+)", log)
            check("GICv3 bench sample, threaded ONESHOT SPI on CPU1: every interrupt handled "
                  "once by its thread", bool(m) and int(m.group(2)) > 0 and
                  "rust_gic_bench: threaded done: every interrupt handled once by its thread" in log,
                  f"{m.group(2)} interrupts, {m.group(1)}/s" if m else "no line")

        ncpu = max(len(v[2]) for v in b.values())

        # An SPI (uart-pl011) and, with an ITS, an LPI (virtio's MSI-X) moved to CPU1, then
        # CPU0, with smp_affinity; five debugfs injections each time must be counted on the
        # target CPU and on no other. An LPI's injection is an INT command, its move a MOVI:
        # QEMU's gicv3_its_cmd_movi trace, in the console log, must show exactly one MOVI
        # between the line before each move and the line after it.
        moves = [("spi", "SPI", "uart-pl011")]
        if not its_off:
            moves.append(("lpi", "LPI", f"{rng}-input"))
        check_moves(moves, its_trace)

        # The pl061 GPIO's chained handler: the power key (GPIO 3) pressed over QMP; not on
        # ACPI, whose power key is the Generic Event Device's.
        if acpi:
            check("pl061 power key skipped on ACPI", "@@@ gpio skipped" in log)
            return 0 if all(checks) else 1
        qmp = path[:-len(".log")] + "-qmp.log" if path.endswith(".log") else path + "-qmp"
        try:
            qlines = open(qmp, errors="replace").read().splitlines()
            qmp_status = qlines[-1] if qlines else "empty QMP transcript"
        except OSError:
            qmp_status = "no QMP transcript"
        m = re.search(r"@@@ gpio (\d+) of (\S+) exported (\w+) irq (\S+)", log)
        if not m:
            g = re.search(r"@@@ gpio (no .*)", log)
            check("pl061 GPIO 3 (power key) exported, its interrupt requested", False,
                  g.group(1).strip() if g else "no line")
        else:
            check(f"pl061 GPIO 3 (power key, GPIO {m.group(1)} of {m.group(2)}) exported, "
                  f"its interrupt requested", m.group(3) == "ok" and m.group(4) != "none",
                  f"export {m.group(3)}, irq {m.group(4)}")
            n = m.group(4)
            bl = re.search(rf"@@@ gpio before\s+{n}:(.*)", log)
            al = re.search(rf"@@@ gpio after\s+{n}:(.*)", log)
            if n == "none" or not bl or not al:
                check("pl061 GPIO interrupt (chained handler) counted after the power key",
                      False, "no /proc/interrupts line")
            else:
                before, desc = counts_of(bl.group(1), ncpu)
                after, _ = counts_of(al.group(1), ncpu)
                # system_powerdown holds the line high for 100 ms: both edges (edge=both).
                check(f"pl061 GPIO interrupt ({n}: {desc}) through the chained handler: press "
                      f"and release counted after QMP system_powerdown",
                      sum(after) >= sum(before) + 2, f"{sum(before)} -> {sum(after)}; {qmp_status}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
