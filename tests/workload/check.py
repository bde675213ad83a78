#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check one real-workload boot (tests/workload/init) from its console log, and print the
figures of several.

Usage:
  check.py check WAY LOG RESULT.json   pass/fail of one boot (exit status 1 on a failure); its
                                       figures are written to RESULT.json
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
# layer's I/O errors, NVMe's command timeouts and resets, libata's exceptions and link resets,
# the hung-task detector, and the spurious-interrupt detector.
KERNEL_BAD = re.compile(r"(I/O error|timeout, (aborting|reset)|QID \d+ timeout|resetting controller"
                        r"|exception Emask|failed command|hard resetting link|blocked for more than"
                        r"|hung_task|nobody cared|Disabling IRQ #|\btimed out\b)")


def irq_table(lines):
    """/proc/interrupts lines -> {irq: (name, chip, total)} for the numbered rows."""
    rows = {}
    ncpu = None
    for l in lines:
        if ncpu is None:
            ncpu = len(l.split())
            continue
        m = re.match(r"\s*(\d+):\s+(.*)", l)
        if not m:
            continue
        f = m.group(2).split()
        counts = [int(x) for x in f[:ncpu] if x.isdigit()]
        rest = f[len(counts):]
        # The action name is everything after the trigger ("Level", "Edge", "2-edge", ...).
        t = max([k for k, x in enumerate(rest) if re.search(r"(?i)(level|edge|fasteoi)$", x)],
                default=len(rest) - 2)
        rows[int(m.group(1))] = (" ".join(rest[t + 1:]), " ".join(rest[:t + 1]), counts)
    return rows


def parse(log):
    text = open(log, errors="replace").read()
    lines = text.splitlines()
    d = {"snap": {}, "stat": {}, "fio": {}, "fiojson": {}, "iperf3": {}, "stderr": {},
         "done": False, "kernel_bad": []}
    i = 0
    while i < len(lines):
        l = lines[i]
        at = l.find("@@@ ")
        s = l[at + 4:] if at >= 0 else None
        if s is None:
            if KERNEL_BAD.search(l) and "@@@" not in l:
                d["kernel_bad"].append(l.strip())
            i += 1
            continue
        w = s.split()
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
            js = js[js.find("{"):] if "{" in js else ""
            try:
                d["fiojson"][name] = json.loads(js)
            except ValueError:
                d["fiojson"][name] = None
        elif w[0] == "stat":
            vals = [int(x) for x in w[3:w.index("uptime")]]
            d["stat"][w[1]] = (vals, float(w[w.index("uptime") + 1]))
        elif w[0] == "fio":
            d["fio"][w[1]] = int(w[2].split("=")[1])
        elif w[0] == "fio-stderr":
            d["stderr"].setdefault("fio", []).append(" ".join(w[1:]))
        elif w[0] == "iperf3":
            kv = dict(x.split("=", 1) for x in w[2:] if "=" in x)
            d["iperf3"][w[1]] = kv
        elif w[0] in ("hotplug", "affinity", "moves", "net", "stress-ng"):
            d[w[0] if w[0] != "net" else "net"] = dict(x.split("=", 1) for x in w[1:] if "=" in x)
        elif w[0] in ("l2", "l2-qemu", "kvm", "irq-debugfs"):
            d.setdefault("nested", []).append(w)
        elif w[:2] == ["wl", "begin"]:
            d["begin"] = dict(x.split("=", 1) for x in w[2:] if "=" in x)
        elif w[:2] == ["wl", "done"]:
            d["done"] = True
        i += 1
    return d


DISK_ROWS = {"nvme0n1": re.compile(r"^nvme0q[1-9]"), "vda": None, "sda": re.compile(r"ahci")}


def fio_ios(j):
    job = j["jobs"][0]
    return sum(job[k]["total_ios"] for k in ("read", "write")), job


def check(way, log, result):
    d = parse(log)
    fails = []
    res = {"way": way, "log": os.path.basename(log)}
    begin = d.get("begin", {})
    mode = begin.get("mode", "?")
    res["mode"] = mode
    res["arch"] = begin.get("arch", "?")
    if not d["done"]:
        fails.append("the guest did not finish (no '@@@ wl done')")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(top, "check-splats.py"), way, log],
                       capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode:
        fails.append("kernel splat")
    # TCG's vCPUs lag one another: the clocksource watchdog's "read timed out" is no I/O timeout.
    bad = [l for l in d["kernel_bad"] if "clocksource" not in l and "wl." not in l]
    if bad:
        fails.append(f"{len(bad)} kernel log line(s) of I/O errors, timeouts or hung tasks: {bad[:3]}")
    disks = [x for x in begin.get("disks", "").split(",") if x] if mode != "nested" else []
    res["disks"] = {}
    for disk in disks:
        j = d["fiojson"].get(disk)
        rc = d["fio"].get(disk)
        if rc != 0 or not j:
            fails.append(f"fio on {disk}: rc={rc}, json {'ok' if j else 'missing'}")
            continue
        ios, job = fio_ios(j)
        if job.get("error"):
            fails.append(f"fio on {disk}: error {job['error']} (verification included)")
        fig = {"ios": ios,
               "iops": job["read"]["iops"] + job["write"]["iops"],
               "mbs": (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6}
        pre, post = ("start", "end") if mode == "full" else (f"icount-{disk}-before",
                                                              f"icount-{disk}-after")
        a, b = d["snap"].get(pre, {}), d["snap"].get(post, {})
        irqs, chips, dead = 0, set(), []
        dev_rows = disk_rows(disk, b)
        for irq in dev_rows:
            name, chip, counts = b[irq]
            before = sum(a[irq][2]) if irq in a else 0
            delta = sum(counts) - before
            irqs += delta
            chips.add(chip.split()[0] if chip else "?")
            if delta <= 0 and mode == "full":
                dead.append(name)
        if not dev_rows:
            fails.append(f"{disk}: no interrupt row in /proc/interrupts")
        if dead:
            fails.append(f"{disk}: interrupt rows that did not rise: {dead}")
        fig["irqs_per_io"] = irqs / ios if ios else 0
        fig["chips"] = sorted(chips)
        fig["rows"] = len(dev_rows)
        if mode == "icount":
            sa, sb = d["stat"].get(pre), d["stat"].get(post)
            if not sa or not sb:
                fails.append(f"{disk}: no /proc/stat around the icount run")
            else:
                # Under -icount shift=0 one guest instruction is one virtual nanosecond; on one
                # vCPU the instructions are the time that CPU was not idle (idle and iowait are
                # /proc/stat's 4th and 5th fields, in USER_HZ = 100 ticks).
                busy_ns = (sb[1] - sa[1]) * 1e9 - ((sb[0][3] + sb[0][4]) - (sa[0][3] + sa[0][4])) * 1e7
                fig["insn_per_io"] = busy_ns / ios if ios else 0
        res["disks"][disk] = fig
    if mode == "full":
        for way_ in ("forward", "reverse"):
            kv = d["iperf3"].get(way_)
            if not kv or kv.get("rc") != "0" or kv.get("gbps") in (None, "none"):
                fails.append(f"iperf3 {way_} did not complete: {kv}")
            else:
                res.setdefault("iperf3", {})[way_] = float(kv["gbps"])
        b = d["snap"].get("end", {})
        a = d["snap"].get("start", {})
        net = [i for i, (n, c, _) in b.items() if re.search(r"virtio\d+-input", n)]
        if not net:
            fails.append("virtio-net: no input-queue interrupt row")
        for i in net:
            if sum(b[i][2]) - (sum(a[i][2]) if i in a else 0) <= 0:
                fails.append(f"virtio-net {b[i][0]}: interrupt row did not rise")
        if begin.get("balance", "none") == "none" or "hotplug" in d:
            hp = d.get("hotplug")
            if hp is None:
                fails.append("no CPU hotplug report")
            elif hp.get("fail") != "0" or int(hp.get("ok", 0)) < 2:
                fails.append(f"CPU hotplug: {hp}")
            else:
                res["hotplug_ok"] = int(hp["ok"])
        if "affinity" in d:
            res["affinity"] = d["affinity"]
        if "moves" in d:
            secs = int(d["moves"].get("samples", 1))
            res["moves_per_min"] = int(d["moves"]["moves"]) * 60 / max(secs, 1)
            # The spread of the device interrupts over the CPUs: the busiest CPU's share over the
            # mean share (1.0 is even).
            per = None
            for i, (n, c, counts) in b.items():
                if not re.search(r"virtio|nvme|ahci", n):
                    continue
                prev = a[i][2] if i in a else [0] * len(counts)
                dl = [x - y for x, y in zip(counts, prev)]
                per = dl if per is None else [x + y for x, y in zip(per, dl)]
            if per and sum(per):
                res["spread_max_over_mean"] = max(per) / (sum(per) / len(per))
                res["per_cpu"] = per
    if mode == "nested":
        nested_check(d, fails, res)
    res["pass"] = not fails
    res["fails"] = fails
    json.dump(res, open(result, "w"), indent=1)
    for f in fails:
        print(f"check-workload: {way}: FAIL: {f}")
    print(f"check-workload: {way}: {'PASS' if not fails else 'FAIL'}: {summary(res)}")
    return 0 if not fails else 1


def nested_check(d, fails, res):
    """The nested guest: KVM present, L2 up on 2 CPUs and done, its timer and IPIs rising, QEMU
    exited 0, and the host's virtual-timer interrupt seen forwarded to the vCPU."""
    ws = d.get("nested", [])
    if ["kvm", "present"] not in ws:
        fails.append("/dev/kvm absent in the workload guest")
    up = [w for w in ws if w[:2] == ["l2", "up"]]
    if not up or up[0][2] != "cpus=0-1":
        fails.append(f"the nested guest did not come up on 2 CPUs: {up}")
    if ["l2", "done"] not in ws:
        fails.append("the nested guest did not finish")
    cnt = {}
    for w in ws:
        if w[:2] == ["l2", "before"] or w[:2] == ["l2", "after"]:
            name = " ".join(w[2:])
            m = re.match(r"(\S+):\s+(\d+)\s+(\d+)\s+(.*)", name)
            if m:
                cnt.setdefault(m.group(1) + " " + m.group(4).split()[-1]
                               if "IPI" not in m.group(1) else m.group(1), {})[w[1]] = \
                    int(m.group(2)) + int(m.group(3))
    timer = [k for k in cnt if "arch_timer" in k]
    rising = {k: v.get("after", 0) - v.get("before", 0) for k, v in cnt.items()}
    if not timer or not any(rising[k] > 0 for k in timer):
        fails.append(f"the nested guest's arch timer did not tick: {rising}")
    ipis = [k for k in cnt if k.startswith("IPI")]
    if not ipis or not any(rising[k] > 0 for k in ipis):
        fails.append(f"the nested guest's IPIs did not rise: {rising}")
    q = [w for w in ws if w[0] == "l2-qemu" and w[1].startswith("rc=")]
    kv = dict(x.split("=", 1) for x in q[0][1:]) if q else {}
    if kv.get("rc") != "0":
        fails.append(f"the nested QEMU exited with {kv.get('rc')}")
    res["l2_timer_ticks"] = sum(rising[k] for k in timer) if timer else 0
    res["forwarded_samples"] = f"{kv.get('forwarded', 0)}/{kv.get('samples', 0)}"
    if int(kv.get("forwarded", 0)) == 0:
        fails.append("no host interrupt seen forwarded to a vCPU (IRQD_FORWARDED_TO_VCPU)")
    a, b = d["snap"].get("nested-before", {}), d["snap"].get("nested-after", {})
    res["l1_kvm_rows"] = {n: sum(c) - (sum(a[i][2]) if i in a else 0)
                          for i, (n, ch, c) in b.items() if "kvm" in n or "vgic" in n}


def disk_rows(disk, snap):
    """The interrupt rows of DISK's controller in a snapshot."""
    out = []
    for irq, (name, chip, counts) in snap.items():
        if disk == "nvme0n1" and re.match(r"nvme0q[1-9]", name):
            out.append(irq)
        elif disk == "sda" and "ahci" in name:
            out.append(irq)
        elif disk == "vda" and re.search(r"virtio\d+-req", name):
            out.append(irq)
    return out


def summary(r):
    s = []
    for disk, f in r.get("disks", {}).items():
        t = f"{disk} {f['iops']:.0f} IOPS {f['mbs']:.1f} MB/s {f['irqs_per_io']:.2f} irq/IO"
        if "insn_per_io" in f:
            t += f" {f['insn_per_io']:.0f} insn/IO"
        s.append(t + f" ({','.join(f['chips'])}, {f['rows']} rows)")
    if "iperf3" in r:
        s.append("iperf3 " + "/".join(f"{v:.2f}" for v in r["iperf3"].values()) + " Gbit/s")
    if "forwarded_samples" in r:
        s.append(f"L2 timer ticks {r['l2_timer_ticks']}, forwarded in {r['forwarded_samples']} "
                 f"samples, L1 rows {r['l1_kvm_rows']}")
    if "moves_per_min" in r:
        s.append(f"moves/min {r['moves_per_min']:.1f} spread {r.get('spread_max_over_mean', 0):.2f}")
    return "; ".join(s)


def table(paths):
    rs = [json.load(open(p)) for p in paths if os.path.exists(p)]
    full = [r for r in rs if r["mode"] == "full"]
    ic = {r["way"].replace("-icount", ""): r for r in rs if r["mode"] == "icount"}
    base = {}
    for r in full:
        if r["way"].endswith("gicv3=c") or r["way"].endswith("-c"):
            base[r["arch"]] = r
    print("| way | disk | IOPS | MB/s | irq/IO | insn/IO (icount) | insn/IO vs C | iperf3 fwd/rev Gbit/s | pass |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in full:
        c = base.get(r["arch"])
        cic = ic.get(c["way"]) if c else None
        for disk, f in r.get("disks", {}).items():
            ir = ic.get(r["way"], {}).get("disks", {}).get(disk, {}).get("insn_per_io")
            cr = cic.get("disks", {}).get(disk, {}).get("insn_per_io") if cic else None
            ratio = f"{ir / cr:.3f}" if ir and cr and c is not r else "-"
            ipf = "/".join(f"{v:.2f}" for v in r.get("iperf3", {}).values()) or "-"
            print(f"| {r['way']} | {disk} | {f['iops']:.0f} | {f['mbs']:.1f} | "
                  f"{f['irqs_per_io']:.2f} | {f'{ir:.0f}' if ir else '-'} | {ratio} | {ipf} | "
                  f"{'yes' if r['pass'] else 'NO'} |")
    bal = [r for r in full if "moves_per_min" in r]
    if bal:
        print()
        print("| balancing pass | device interrupts per CPU | busiest / mean | moves per minute |")
        print("|---|---|---|---|")
        for r in bal:
            print(f"| {r['way']} | {r.get('per_cpu')} | {r.get('spread_max_over_mean', 0):.2f} | "
                  f"{r['moves_per_min']:.1f} |")


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], sys.argv[4])
    if len(sys.argv) >= 3 and sys.argv[1] == "table":
        return table(sys.argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
