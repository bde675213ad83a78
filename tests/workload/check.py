#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check one real-workload boot (tests/workload/init) from its console log, and print the
figures of several.

Usage:
  check.py check WAY LOG RESULT.json MODE ARCH
                                       pass/fail of one boot (exit status 1 on a failure) of MODE
                                       (full, icount, nested) on ARCH; its figures are written to
                                       RESULT.json
  check.py table RESULT.json...        the table `make workload` prints (Rust/C where a C way ran)

A full boot passes when: the guest finished; no kernel splat (tests/check-splats.py); no I/O
error, timeout, hung task or "nobody cared" in the kernel log; fio exited 0 with no error on every
disk (its crc32c verification included); iperf3 completed both ways; every CPU offline and online
succeeded; every I/O queue's interrupt row rose (NVMe's I/O queues, virtio-blk's request queues,
virtio-net's input queue, AHCI's). An icount boot passes when each disk's fio finished its I/Os.
"""
import json
import os
import re
import subprocess
import sys

# The kernel's reports of failed or stalled I/O and of stuck tasks and interrupts: the block
# layer's errors ("I/O error, dev", "timeout error, dev", ...), NVMe's timeouts, aborts and resets,
# libata's and SCSI's exceptions, timeouts and link resets, the GICv3 ITS's and redistributors'
# timeouts, VT-d's interrupt-remapping faults, spurious x86 interrupts, the hung-task detector,
# and the spurious-interrupt detector.
KERNEL_BAD = re.compile(
    r"(\berror, dev \S+, sector|Buffer I/O error|I/O error"
    r"|timeout, (aborting|reset|completion polled)|QID \d+ timeout|controller is down"
    r"|Disabling device after reset failure|Abort status"
    r"|exception Emask|failed command|hard resetting link|qc timeout|COMRESET failed"
    r"|softreset failed|timing out command"
    r"|ITS queue timeout|RWP timeout|INTR-REMAP|Spurious interrupt \(vector|Spurious LAPIC"
    r"|unexpected IRQ trap|No irq handler for|Spurious .* percpu IRQ"
    r"|blocked for more than|blocked in I/O wait|hung_task|nobody cared|Disabling IRQ #"
    r"|\btimed out\b)")
# TCG's vCPUs lag one another: the clocksource watchdog's remote read is no I/O timeout.
KERNEL_OK = re.compile(r"clocksource: Watchdog remote CPU \d+ read timed out|Kernel command line"
                       r"|Command line:")


def irq_table(lines):
    """/proc/interrupts lines -> {irq: (name, chip, {cpu: count})} for the numbered rows. Only
    online CPUs have a column: the header names them."""
    rows = {}
    cpus = None
    for l in lines:
        if cpus is None:
            if "CPU" in l:
                cpus = [int(x[3:]) for x in l.split() if re.fullmatch(r"CPU\d+", x)]
            continue
        m = re.match(r"\s*(\d+):\s+(.*)", l)
        if not m:
            continue
        f = m.group(2).split()
        counts = []
        for x in f[:len(cpus)]:
            if not x.isdigit():
                break
            counts.append(int(x))
        rest = f[len(counts):]
        # The action name is everything after the trigger ("Level", "Edge", "2-edge", ...).
        t = max([k for k, x in enumerate(rest) if re.search(r"(?i)(level|edge|fasteoi)$", x)],
                default=len(rest) - 2)
        rows[int(m.group(1))] = (" ".join(rest[t + 1:]), " ".join(rest[:t + 1]),
                                 dict(zip(cpus, counts)))
    return rows


def delta(a, b, irq):
    """Per-CPU increase of IRQ between snapshots A and B (a CPU absent from one counts 0 there)."""
    pa = a[irq][2] if irq in a else {}
    pb = b[irq][2] if irq in b else {}
    return {c: pb.get(c, 0) - pa.get(c, 0) for c in set(pa) | set(pb)}


def kv(words):
    return dict(x.split("=", 1) for x in words if "=" in x)


def parse(log):
    lines = open(log, errors="replace").read().splitlines()
    d = {"snap": {}, "stat": {}, "fio": {}, "fiojson": {}, "iperf3": {}, "stderr": [],
         "done": False, "kernel_bad": [], "lines": {}, "nested": []}
    i = 0
    while i < len(lines):
        l = lines[i]
        at = l.find("@@@ ")
        if at < 0:
            if KERNEL_BAD.search(l) and not KERNEL_OK.search(l):
                d["kernel_bad"].append(l.strip())
            i += 1
            continue
        w = l[at + 4:].split() or [""]
        try:
            if w[:2] == ["irq-snapshot", "begin"]:
                name, body = w[2], []
                i += 1
                while i < len(lines) and "@@@ irq-snapshot end" not in lines[i]:
                    body.append(lines[i])
                    i += 1
                d["snap"][name] = irq_table(body)
            elif w[:2] == ["fio-json", "begin"]:
                name, body = w[2], []
                i += 1
                while i < len(lines) and "@@@ fio-json end" not in lines[i]:
                    body.append(lines[i])
                    i += 1
                js = "\n".join(body)
                try:
                    j = json.loads(js[js.find("{"):]) if "{" in js else None
                except ValueError:
                    j = None
                d["fiojson"].setdefault(name, []).append(j)
            elif w[0] == "stat":
                u = w.index("uptime")
                d["stat"][w[1]] = ([int(x) for x in w[3:u]], float(w[u + 1]))
            elif w[0] == "fio":
                d["fio"][w[1]] = kv(w[2:])
            elif w[0] == "fio-stderr":
                d["stderr"].append(" ".join(w[1:]))
            elif w[0] == "iperf3":
                d["iperf3"][w[1]] = kv(w[2:])
            elif w[0] in ("hotplug", "affinity", "moves", "net", "stress-ng", "irqbalance"):
                d["lines"][w[0]] = kv(w[1:])
            elif w[0] == "inflight":
                d.setdefault("inflight", {})[w[1]] = w[2:]
            elif w[:2] == ["cpus", "online"]:
                d["lines"]["cpus"] = w[2] if len(w) > 2 else ""
            elif w[0] in ("l2", "l2-qemu", "kvm", "irq-debugfs"):
                d["nested"].append(w)
            elif w[:2] == ["wl", "begin"]:
                d["begin"] = kv(w[2:])
            elif w[:2] == ["wl", "done"]:
                d["done"] = True
            elif w[0] == "l2-console" and (KERNEL_BAD.search(l) and not KERNEL_OK.search(l)):
                d["kernel_bad"].append(l.strip())
        except (ValueError, IndexError):
            d.setdefault("garbled", []).append(l.strip())
        i += 1
    return d


def disk_rows(disk, snap):
    """The interrupt rows of DISK's I/O queues in a snapshot."""
    out = []
    for irq, (name, chip, counts) in snap.items():
        if disk == "nvme0n1" and re.fullmatch(r"nvme0q[1-9]\d*", name):
            out.append(irq)
        elif disk == "sda" and name.startswith("ahci"):
            out.append(irq)
        elif disk == "vda" and re.fullmatch(r"virtio\d+-req\.\d+", name):
            out.append(irq)
    return out


# What each machine carries (tests/workload/run.sh): disks and their I/O-queue interrupt rows
# (one per CPU on the 4-CPU machine, one on the icount machine), two NICs.
EXPECT = {"x86_64": ["vda", "nvme0n1", "sda"], "arm64": ["vda", "nvme0n1"]}
CHIP = {"x86_64": "IR-PCI-MSI", "arm64": "ITS-PCI-MSI"}


def chip_of(arch, way):
    """The chip prefix of a disk's MSI-X rows: on arm64 the Rust ITS's (ITS-RS-...) on the Rust
    GICv3 driver, the C ITS's on the C one (or with irqchip.gicv3_its=c); on x86_64 the Rust
    VT-d remapping domain's (IR-RS-...) unless intel_ir=c."""
    if arch == "arm64" and "gicv3=c" not in way and "gicv3_its=c" not in way:
        return "ITS-RS-PCI-MSI"
    if arch == "x86_64" and "intel_ir=c" not in way:
        return "IR-RS-PCI-MSI"
    return CHIP.get(arch, "")


def check(way, log, result, mode, arch):
    d = parse(log)
    fails = []
    res = {"way": way, "log": os.path.basename(log), "mode": mode, "arch": arch}
    begin = d.get("begin", {})
    if not d["done"]:
        fails.append("the guest did not finish (no '@@@ wl done')")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(top, "check-splats.py"), way, log],
                       capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode:
        fails.append("kernel splat")
    if d["kernel_bad"]:
        fails.append(f"{len(d['kernel_bad'])} kernel log line(s) of I/O errors, timeouts, "
                     f"interrupt faults or hung tasks: {d['kernel_bad'][:3]}")
    if d.get("garbled"):
        fails.append(f"unreadable report lines: {d['garbled'][:3]}")
    bad_err = [l for l in d["stderr"] if re.search(r"verify|hasn't exited|forceful|err=|error", l)]
    if bad_err:
        fails.append(f"fio reported: {bad_err[:3]}")
    disks = EXPECT.get(arch, []) if mode in ("full", "icount") else []
    seen = [x for x in begin.get("disks", "").split(",") if x]
    if mode != "nested" and sorted(seen) != sorted(disks):
        fails.append(f"disks in the guest {seen}, expected {disks}")
    res["disks"] = {}
    nq = int(begin.get("cpus", "0"))
    for disk in disks:
        js = [j for j in d["fiojson"].get(disk, []) if j]
        f = d["fio"].get(disk, {})
        if f.get("rc") != "0" or not js or len(js) != len(d["fiojson"].get(disk, [])):
            fails.append(f"fio on {disk}: {f or 'no report'}, {len(js)} readable result(s)")
            continue
        jobs = [j["jobs"][0] for j in js]
        if any(job.get("error") for job in jobs):
            fails.append(f"fio on {disk}: error {[job.get('error') for job in jobs]} "
                         f"(verification included)")
        ios = sum(job[k]["total_ios"] for job in jobs for k in ("read", "write"))
        nbytes = sum(job[k]["io_bytes"] for job in jobs for k in ("read", "write"))
        # The rate while fio ran its jobs (its "elapsed"), not counting its start: loading Debian's
        # fio (librados, libglusterfs, ...) under TCG costs seconds a pass.
        secs = sum(job["elapsed"] for job in jobs) or 1
        fig = {"ios": ios, "passes": len(jobs), "iops": ios / secs, "mbs": nbytes / secs / 1e6}
        if mode == "full" and d.get("inflight", {}).get(disk) != ["0", "0"]:
            fails.append(f"{disk}: requests in flight after fio: {d.get('inflight', {}).get(disk)}")
        if mode == "icount" and ios != int(begin.get("ios", ios)):
            fails.append(f"{disk}: {ios} I/Os, asked for {begin.get('ios')}")
        pre, post = ("start", "end") if mode == "full" else (f"icount-{disk}-before",
                                                              f"icount-{disk}-after")
        a, b = d["snap"].get(pre, {}), d["snap"].get(post, {})
        irqs, chips, dead = 0, set(), []
        rows = disk_rows(disk, b)
        for irq in rows:
            dl = sum(delta(a, b, irq).values())
            irqs += dl
            chips.add(b[irq][1].split()[0] if b[irq][1] else "?")
            if dl <= 0 and mode == "full":
                dead.append(b[irq][0])
        want = 1 if disk == "sda" else (nq if mode == "full" else 1)
        if len(rows) < want:
            fails.append(f"{disk}: {len(rows)} I/O-queue interrupt row(s), expected {want}")
        if dead:
            fails.append(f"{disk}: interrupt rows that did not rise: {dead}")
        if any(not c.startswith(chip_of(arch, way)) for c in chips):
            fails.append(f"{disk}: interrupt chips {sorted(chips)}, expected {chip_of(arch, way)}*")
        fig["irqs_per_io"] = irqs / ios if ios else 0
        fig["chips"] = sorted(chips)
        fig["rows"] = len(rows)
        if mode == "icount":
            sa, sb = d["stat"].get(pre), d["stat"].get(post)
            if not sa or not sb:
                fails.append(f"{disk}: no /proc/stat around the icount run")
            elif ios:
                # Under -icount shift=0 one guest instruction is one virtual nanosecond; on one
                # vCPU the instructions are the time that CPU was not idle (idle and iowait are
                # /proc/stat's 4th and 5th fields, in USER_HZ = 100 ticks). Both readings are
                # 10 ms coarse: the figure is +- 20 ms / I/Os.
                busy_ns = (sb[1] - sa[1]) * 1e9 - ((sb[0][3] + sb[0][4]) -
                                                   (sa[0][3] + sa[0][4])) * 1e7
                fig["insn_per_io"] = busy_ns / ios
                fig["insn_per_io_err"] = 2e7 / ios
        res["disks"][disk] = fig
    if mode == "full":
        full_checks(d, fails, res, begin)
    if mode == "nested":
        nested_check(d, fails, res, log[:-len(".log")] + ".trace")
    res["pass"] = not fails
    res["fails"] = fails
    json.dump(res, open(result, "w"), indent=1)
    for f in fails:
        print(f"check-workload: {way}: FAIL: {f}")
    print(f"check-workload: {way}: {'PASS' if not fails else 'FAIL'}: {summary(res)}")
    return 0 if not fails else 1


def full_checks(d, fails, res, begin):
    """Network, stress, CPU hotplug, affinity and balancing reports of a full boot."""
    L = d["lines"]
    if L.get("net", {}).get("rc") != "0":
        fails.append(f"network namespaces not set up: {L.get('net')}")
    for w in ("forward", "reverse"):
        x = d["iperf3"].get(w, {})
        try:
            mb = float(x.get("mbps", "none"))
        except ValueError:
            mb = 0
        if x.get("rc") != "0" or mb <= 0:
            fails.append(f"iperf3 {w} did not complete: {x}")
        else:
            res.setdefault("iperf3_mbps", {})[w] = mb
    a, b = d["snap"].get("start", {}), d["snap"].get("end", {})
    net = [i for i, (n, c, _) in b.items() if re.fullmatch(r"virtio\d+-input\.\d+", n)]
    if len(net) < 2:
        fails.append(f"virtio-net: {len(net)} input-queue interrupt rows, expected 2")
    for i in net:
        if sum(delta(a, b, i).values()) <= 0:
            fails.append(f"virtio-net {b[i][0]}: interrupt row did not rise")
    if L.get("stress-ng", {}).get("rc") != "0":
        fails.append(f"stress-ng: {L.get('stress-ng')}")
    ncpu = int(begin.get("cpus", "0"))
    if L.get("cpus") != f"0-{ncpu - 1}":
        fails.append(f"CPUs online at the end: {L.get('cpus')}, expected 0-{ncpu - 1}")
    bal = begin.get("balance", "none")
    if begin.get("hotplug", "1") == "1":
        hp = L.get("hotplug")
        if hp is None:
            fails.append("no CPU hotplug report")
        elif hp.get("fail") != "0" or int(hp.get("ok", 0)) < 2:
            fails.append(f"CPU hotplug: {hp}")
        else:
            res["hotplug_ok"] = int(hp["ok"])
    if bal == "none":
        af = L.get("affinity")
        if af is None or int(af.get("ok", 0)) == 0:
            fails.append(f"no interrupt moved through smp_affinity: {af}")
        else:
            res["affinity"] = af
    else:
        if bal == "daemon" and L.get("irqbalance", {}).get("alive") != "1":
            fails.append("the irqbalance daemon was not running at the end")
        mv = L.get("moves")
        if mv is None:
            fails.append("no report of interrupt moves")
        else:
            res["moves_per_min"] = int(mv["moves"]) * 60 / max(float(mv.get("secs", 1)), 1)
        # The spread of the device interrupts over the CPUs: the busiest CPU's count over the
        # mean (1.0 is even). Managed queue interrupts count too: no balancer moves them, so the
        # figure compares the balancers on the same base.
        per = {}
        for i, (n, c, counts) in b.items():
            if re.search(r"virtio|nvme|ahci", n):
                for cpu, x in delta(a, b, i).items():
                    per[cpu] = per.get(cpu, 0) + x
        if per and sum(per.values()):
            v = [per[c] for c in sorted(per)]
            res["per_cpu"] = v
            res["spread_max_over_mean"] = max(v) / (sum(v) / len(v))


def nested_check(d, fails, res, trace):
    """The nested guest: KVM present, L2 up on 2 CPUs and done, its timer and IPIs rising, QEMU
    exited 0; on the host (L1) the virtual timer's interrupt (INTID 27, forwarded to the vCPU)
    rising, its priority dropped (ICC_EOIR1) and never deactivated (ICC_DIR): the guest
    deactivates it through its list register."""
    ws = d["nested"]
    if ["kvm", "present"] not in ws:
        fails.append("/dev/kvm absent in the workload guest")
    up = [w for w in ws if w[:2] == ["l2", "up"]]
    if not up or up[0][2:] != ["cpus=0-1"]:
        fails.append(f"the nested guest did not come up on 2 CPUs: {up}")
    if ["l2", "done"] not in ws:
        fails.append("the nested guest did not finish")
    cnt = {}
    for w in ws:
        if w[:2] in (["l2", "before"], ["l2", "after"]) and len(w) >= 5:
            key = w[2].rstrip(":")
            try:
                cnt.setdefault(key if key.startswith("IPI") else " ".join(w[-1:]), {})[w[1]] = \
                    int(w[3]) + int(w[4])
            except ValueError:
                pass
    rising = {k: v.get("after", 0) - v.get("before", 0) for k, v in cnt.items()}
    timer = rising.get("arch_timer", 0)
    if timer <= 0:
        fails.append(f"the nested guest's arch timer did not tick: {rising}")
    if not any(v > 0 for k, v in rising.items() if k.startswith("IPI")):
        fails.append(f"the nested guest's IPIs did not rise: {rising}")
    q = [w for w in ws if w[0] == "l2-qemu" and len(w) > 1 and w[1].startswith("rc=")]
    x = kv(q[0][1:]) if q else {}
    if x.get("rc") != "0":
        fails.append(f"the nested QEMU exited with {x.get('rc')}")
    res["l2_timer_ticks"] = timer
    res["forwarded_samples"] = f"{x.get('forwarded', 0)}/{x.get('samples', 0)}"
    a, b = d["snap"].get("nested-before", {}), d["snap"].get("nested-after", {})
    res["l1_kvm_rows"] = {n: sum(delta(a, b, i).values())
                          for i, (n, ch, c) in b.items() if "kvm" in n or "vgic" in n}
    if res["l1_kvm_rows"].get("kvm guest vtimer", 0) <= 0:
        fails.append(f"the host's virtual-timer interrupt did not rise: {res['l1_kvm_rows']}")
    if not os.path.exists(trace) or not os.path.getsize(trace):
        fails.append(f"no QEMU trace of the host's EOIs ({trace})")
        return
    eoi = dirw = alldir = 0
    for l in open(trace, errors="replace"):
        m = re.search(r"gicv3_icc_(eoir|dir)_write.*value 0x([0-9a-f]+)", l)
        if not m:
            continue
        alldir += m.group(1) == "dir"
        if int(m.group(2), 16) == 27:
            eoi += m.group(1) == "eoir"
            dirw += m.group(1) == "dir"
    res["vtimer_eoir"], res["vtimer_dir"] = eoi, dirw
    # The host deactivates its own interrupts (EOImode=1 at EL2): else the trace judges nothing.
    if not alldir:
        fails.append("no ICC_DIR write at all in the trace: the host is not in EOImode=1")
    if eoi == 0 or dirw:
        fails.append(f"the host's virtual-timer INTID 27: {eoi} priority drops, {dirw} "
                     f"deactivations (a forwarded interrupt is the guest's to deactivate)")


def summary(r):
    s = []
    for disk, f in r.get("disks", {}).items():
        t = f"{disk} {f['iops']:.0f} IOPS {f['mbs']:.1f} MB/s {f['irqs_per_io']:.2f} irq/IO"
        if "insn_per_io" in f:
            t += f" {f['insn_per_io']:.0f} +- {f['insn_per_io_err']:.0f} insn/IO"
        s.append(t + f" ({','.join(f['chips'])}, {f['rows']} rows)")
    if "iperf3_mbps" in r:
        s.append("iperf3 " + "/".join(f"{v:.0f}" for v in r["iperf3_mbps"].values()) + " Mbit/s")
    if "forwarded_samples" in r:
        s.append(f"L2 timer ticks {r['l2_timer_ticks']}, forwarded in {r['forwarded_samples']} "
                 f"samples, L1 rows {r['l1_kvm_rows']}, L1 INTID 27 EOIR {r.get('vtimer_eoir')} "
                 f"DIR {r.get('vtimer_dir')}")
    if "moves_per_min" in r:
        s.append(f"moves/min {r['moves_per_min']:.1f} spread {r.get('spread_max_over_mean', 0):.2f}")
    return "; ".join(s)


def table(paths):
    rs = []
    for p in paths:
        if not os.path.exists(p):
            continue  # that way did not run (WL_WAYS) or wrote no result
        try:
            with open(p) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            print(f"check-workload: table: {p} skipped: {e}", file=sys.stderr)
            continue
        if not isinstance(r, dict) or not {"way", "mode", "arch", "pass"} <= r.keys():
            print(f"check-workload: table: {p} skipped: not a result of check.py check",
                  file=sys.stderr)
            continue
        rs.append(r)
    full = [r for r in rs if r["mode"] == "full"]
    ic = {r["way"].replace("-icount", ""): r for r in rs if r["mode"] == "icount"}
    # The C way of each architecture, for Rust/C (arm64: irqchip.gicv3=c; x86_64: intel_ir=c).
    base = {r["arch"]: r for r in full
            if r["way"].endswith("gicv3=c") or r["way"].endswith("intel_ir=c")}
    print("| way | disk | IOPS | MB/s | irq/IO | insn/IO (icount) | insn/IO Rust/C "
          "| iperf3 fwd/rev Mbit/s | pass |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in full:
        c = base.get(r["arch"])
        cic = ic.get(c["way"]) if c else None
        for disk, f in r.get("disks", {}).items():
            fi = ic.get(r["way"], {}).get("disks", {}).get(disk, {})
            ir, err = fi.get("insn_per_io"), fi.get("insn_per_io_err", 0)
            cr = cic.get("disks", {}).get(disk, {}).get("insn_per_io") if cic else None
            ratio = (f"{ir / cr:.3f} +- {(err / cr) * 2:.3f}" if ir and cr and c is not r
                     else "-")
            ipf = "/".join(f"{v:.0f}" for v in r.get("iperf3_mbps", {}).values()) or "-"
            icp = ic.get(r["way"], {}).get("pass")
            print(f"| {r['way']} | {disk} | {f['iops']:.0f} | {f['mbs']:.1f} | "
                  f"{f['irqs_per_io']:.2f} | {f'{ir:.0f} +- {err:.0f}' if ir else '-'} | "
                  f"{ratio} | {ipf} | {'yes' if r['pass'] and icp is not False else 'NO'} |")
    nested = [r for r in rs if r["mode"] == "nested"]
    if nested:
        print()
        print("| nested guest | L2 timer ticks | host vtimer forwarded (samples) | host vtimer "
              "interrupts | host EOIR / DIR of INTID 27 | pass |")
        print("|---|---|---|---|---|---|")
        for r in nested:
            print(f"| {r['way']} | {r.get('l2_timer_ticks')} | {r.get('forwarded_samples')} | "
                  f"{r.get('l1_kvm_rows', {}).get('kvm guest vtimer')} | "
                  f"{r.get('vtimer_eoir')} / {r.get('vtimer_dir')} | "
                  f"{'yes' if r['pass'] else 'NO'} |")
    bal = [r for r in full if "moves_per_min" in r]
    if bal:
        print()
        print("| balancing pass | device interrupts per CPU | busiest / mean | moves per minute |")
        print("|---|---|---|---|")
        for r in bal:
            print(f"| {r['way']} | {r.get('per_cpu')} | {r.get('spread_max_over_mean', 0):.2f} | "
                  f"{r['moves_per_min']:.1f} |")


MODES = ("full", "icount", "nested")


def usage(msg=None):
    if msg:
        print(f"check.py: {msg}", file=sys.stderr)
    print(__doc__.split("\n\n")[1], file=sys.stderr)  # its "Usage:" paragraph
    return 2


def main():
    argv = sys.argv[1:]
    if argv and argv[0] == "check":
        if len(argv) != 6:
            return usage(f"check takes 5 arguments, not {len(argv) - 1}")
        way, log, _, mode, arch = argv[1:]
        if mode not in MODES:
            return usage(f"unknown MODE {mode!r} (one of {', '.join(MODES)})")
        if arch not in EXPECT:
            return usage(f"unknown ARCH {arch!r} (one of {', '.join(EXPECT)})")
        if not os.path.isfile(log):
            # The boot wrote no log: a failure of the run, not a usage error.
            print(f"check-workload: {way}: FAIL: no console log {log}")
            return 1
        return check(*argv[1:])
    if argv and argv[0] == "table":
        if len(argv) < 2:
            return usage("table takes at least one RESULT.json")
        return table(argv[1:])
    return usage(f"unknown command {argv[0]!r}" if argv and argv[0] not in ("-h", "--help")
                 else None)


if __name__ == "__main__":
    sys.exit(main())
