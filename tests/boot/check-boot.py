#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the console log of a boot test (tests/boot/boot-test.sh)."""
import importlib.util
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


def main():
    arch, path = sys.argv[1].split("-")[0], sys.argv[2]
    # The posted-MSI implementation booted (x86_64: posted_msi=rust or c).
    impl = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else "rust"
    log = open(path, errors="replace").read()
    checks = []

    def check(what, ok, detail=""):
        checks.append(ok)
        print(f"boot-test {arch}{' posted_msi=' + impl if arch == 'x86_64' else ''}: {'PASS' if ok else 'FAIL'}: {what}{' (' + detail + ')' if detail else ''}")

    check("userspace reached", "@@@ userspace reached" in log)
    m = re.search(r"@@@ cpus online (\S+)", log)
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

    m = re.search(r"@@@ hotplug (\w+) cpus online (\S+)", log)
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
        rising("rescheduling IPIs", ["RES"])
        rising("function-call IPIs", ["CAL"])
        # The virtqueue vector(s), not the configuration-change one, which never fires here.
        msix = [k for k, (_, d, _) in b.items()
                if "MSI" in d and "virtio" in d and "config" not in d]
        rising("virtio MSI-X", msix or ["<virtio MSI-X line>"])
        after_hotplug("local APIC timer", ["LOC"], cpu=1)
        after_hotplug("rescheduling IPIs", ["RES"], cpu=1)
        after_hotplug("virtio MSI-X", msix or ["<virtio MSI-X line>"])
        check("x2APIC in use", bool(re.search(r"Switched APIC routing to:.*x2apic", log)))
        check("interrupt remapping in x2APIC mode",
              "Enabled IRQ remapping in x2apic mode" in log)
        load = re.findall(r"rust_posted_msi_load: impl=(\w+) (demux|load) .*", log)
        check("posted-MSI load generator: demux and load points reported",
              len([l for l in load if l[1] == "demux"]) == 4 and
              len([l for l in load if l[1] == "load"]) == 5, f"{len(load)} lines")
        check(f"posted-MSI load generator on posted_msi={impl}: nothing lost or duplicated",
              bool(re.search(rf"rust_posted_msi_load: impl={impl} done: nothing lost", log)))
    else:
        timer = [k for k, (_, d, _) in b.items() if "arch_timer" in d]
        rising("arch timer", timer or ["<arch_timer line>"])
        rising("rescheduling IPIs", ["IPI0"])
        after_hotplug("arch timer", timer or ["<arch_timer line>"], cpu=1)
        after_hotplug("rescheduling IPIs", ["IPI0"], cpu=1)
        virtio = [k for k, (_, d, _) in b.items() if "virtio" in d and "config" not in d]
        after_hotplug("virtio", virtio or ["<virtio line>"])
        check("kernel entered at EL2 (GIC split EOI mode)", "CPU(s) started at EL2" in log)
        check("GICv3", "GICv3:" in log)
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
