#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Edit the device tree of QEMU's arm64 virt machine for the GICv3 fallback boots of
tests/boot/boot-test.sh: what real boards have, or what breaks the Rust driver's probe before it
programs the GIC, so that the boot shows the C driver taking over.

Modes:
  ppi-partitions  the GIC gets a "ppi-partitions" node (one partition of every CPU) and 4-cell
                  specifiers (#interrupt-cells = <4>): every "interrupts" property and the PCIe
                  host's interrupt-map get a fourth cell, the partition's phandle for the PPIs
                  (the arch timer's, the PMU's), 0 for the SPIs and the GIC's maintenance PPI, as
                  MediaTek MT8183/8195 or Google GS101 device trees have them.
  bad-gicd        the distributor's reg points at a region that is not a GIC (the PCIe host's
                  ECAM, bus 128, which reads all ones): GICD_PIDR2 is no GICv3's (ENODEV).
  small-gicr      the redistributor region ends 32 KiB before the last CPU's redistributor does
                  (its SGI_base frame half there): too small for the Rust driver's bounds check
                  (EINVAL), enough for the C driver, which uses the first KiB of that frame.

Usage: gic-dtb.py MODE IN.dtb OUT.dtb   (dtc from $DTC, else from PATH)
"""
import os
import re
import subprocess
import sys

FRAME = 0x10000


def cells(value):
    m = re.fullmatch(r"<([^>]*)>", value.strip())
    if not m:
        raise SystemExit(f"gic-dtb: not a cell list: {value}")
    return [int(c, 0) for c in m.group(1).split()]


def fmt(cs):
    return "<" + " ".join(f"{c:#x}" for c in cs) + ">"


class Dts:
    """A dtc-decompiled source, line by line: nodes by path, their properties and extent."""

    def __init__(self, text):
        self.lines = text.splitlines()
        self.props = {}   # path -> {name: (line, value)}
        self.nodes = {}   # path -> [first line, closing line]
        path = []
        for i, line in enumerate(self.lines):
            m = re.fullmatch(r"\t*(\S.*) \{", line)
            if m:
                path.append(m.group(1))
                self.nodes[tuple(path)] = [i, None]
                self.props.setdefault(tuple(path), {})
                continue
            if re.fullmatch(r"\t*\};", line):
                self.nodes[tuple(path)][1] = i
                path.pop()
                continue
            m = re.fullmatch(r"\t*([^\s=]+) = (.*);", line)
            if m and path:
                self.props[tuple(path)][m.group(1)] = (i, m.group(2))

    def set(self, path, name, cs):
        i, _ = self.props[path][name]
        indent = re.match(r"\t*", self.lines[i]).group(0)
        self.lines[i] = f"{indent}{name} = {fmt(cs)};"
        self.props[path][name] = (i, fmt(cs))

    def get(self, path, name):
        return cells(self.props[path][name][1])

    def find(self, compatible):
        hits = [p for p, pr in self.props.items()
                if "compatible" in pr and
                re.match(rf'"{re.escape(compatible)}(\\0|")', pr["compatible"][1])]
        if len(hits) != 1:
            raise SystemExit(f"gic-dtb: {len(hits)} nodes compatible with {compatible}")
        return hits[0]


def ppi_partitions(dts, gic):
    phandles = [cells(pr["phandle"][1])[0] for pr in dts.props.values() if "phandle" in pr]
    part = max(phandles) + 1
    gic_ph = dts.get(gic, "phandle")[0]
    cpus = sorted((p for p in dts.nodes if len(p) == 3 and p[1] == "cpus" and
                   p[2].startswith("cpu@")), key=lambda p: int(p[2][4:], 16))
    cpu_ph = [dts.get(p, "phandle")[0] for p in cpus]
    if not cpu_ph:
        raise SystemExit("gic-dtb: no CPU nodes")
    if dts.get(gic, "#interrupt-cells") != [3]:
        raise SystemExit("gic-dtb: the GIC's specifiers are not 3 cells")
    dts.set(gic, "#interrupt-cells", [4])
    for path, pr in dts.props.items():
        if "interrupts-extended" in pr:
            raise SystemExit(f"gic-dtb: interrupts-extended in {'/'.join(path)}")
        if "interrupts" in pr:
            old = cells(pr["interrupts"][1])
            if len(old) % 3:
                raise SystemExit(f"gic-dtb: {'/'.join(path)}: interrupts not in threes")
            new = []
            for k in range(0, len(old), 3):
                spec = old[k:k + 3]
                # A PPI of a device (the timer, the PMU), not the GIC's own maintenance one.
                affine = spec[0] == 1 and path != gic
                new += spec + [part if affine else 0]
            dts.set(path, "interrupts", new)
        if "interrupt-map" in pr:
            # <child unit address, child specifier, parent phandle, parent unit address,
            # parent specifier> entries, the parent being the GIC.
            child = dts.get(path, "#address-cells")[0] + dts.get(path, "#interrupt-cells")[0]
            parent_addr = dts.get(gic, "#address-cells")[0]
            entry = child + 1 + parent_addr + 3
            old = dts.get(path, "interrupt-map")
            if len(old) % entry:
                raise SystemExit(f"gic-dtb: {'/'.join(path)}: interrupt-map entries of {entry}?")
            new = []
            for k in range(0, len(old), entry):
                e = old[k:k + entry]
                if e[child] != gic_ph:
                    raise SystemExit(f"gic-dtb: {'/'.join(path)}: interrupt-map not to the GIC")
                new += e + [0]
            dts.set(path, "interrupt-map", new)
    close = dts.nodes[gic][1]
    indent = re.match(r"\t*", dts.lines[close]).group(0)
    dts.lines[close:close] = [
        "",
        f"{indent}\tppi-partitions {{",
        "",
        f"{indent}\t\tinterrupt-partition-0 {{",
        f"{indent}\t\t\taffinity = {fmt(cpu_ph)};",
        f"{indent}\t\t\tphandle = {fmt([part])};",
        f"{indent}\t\t}};",
        f"{indent}\t}};",
    ]


MODES = ("ppi-partitions", "bad-gicd", "small-gicr")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in MODES:
        if len(sys.argv) > 1 and sys.argv[1] not in MODES + ("-h", "--help"):
            print(f"gic-dtb: unknown mode {sys.argv[1]}", file=sys.stderr)
        print(f"usage: gic-dtb.py {'|'.join(MODES)} IN.dtb OUT.dtb   (dtc from $DTC, else "
              f"from PATH)", file=sys.stderr)
        return 2
    mode, src, dst = sys.argv[1:4]
    if not os.path.isfile(src):
        print(f"gic-dtb: no device tree {src}", file=sys.stderr)
        return 2
    dtc = os.environ.get("DTC") or "dtc"
    dts = Dts(subprocess.run([dtc, "-q", "-I", "dtb", "-O", "dts", src], check=True,
                             capture_output=True, text=True).stdout)
    gic = dts.find("arm,gic-v3")
    reg = dts.get(gic, "reg")
    if dts.get(gic, "#address-cells") != [2] or len(reg) < 8:
        raise SystemExit("gic-dtb: expected 2-cell addresses and sizes, GICD and GICR regions")
    if mode == "ppi-partitions":
        ppi_partitions(dts, gic)
    elif mode == "bad-gicd":
        ecam = dts.get(dts.find("pci-host-ecam-generic"), "reg")
        base = (ecam[0] << 32 | ecam[1]) + (128 << 20)
        reg[0:4] = [base >> 32, base & 0xffffffff, 0, FRAME]
        dts.set(gic, "reg", reg)
    elif mode == "small-gicr":
        ncpus = sum(1 for p in dts.nodes if len(p) == 3 and p[1] == "cpus" and
                    p[2].startswith("cpu@"))
        size = (ncpus - 1) * 2 * FRAME + FRAME + FRAME // 2
        reg[4:8] = reg[4:6] + [0, size]
        dts.set(gic, "reg", reg)
    else:
        raise SystemExit(f"gic-dtb: unknown mode {mode}")
    subprocess.run([dtc, "-q", "-I", "dts", "-O", "dtb", "-o", dst, "-"], check=True,
                   input="\n".join(dts.lines) + "\n", text=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"gic-dtb: dtc ({os.environ.get('DTC') or 'dtc'}) failed: {e}")
