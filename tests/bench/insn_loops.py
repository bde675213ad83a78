# SPDX-License-Identifier: GPL-2.0
"""The instruction counts of tests/boot/init's debugfs loops ("@@@ itsbench ..." lines), as
the QEMU plugin tests/bench/qemu-insn-window.c counted them, for tests/bench/its.sh and
tests/bench/intremap.sh."""

import re
import statistics


def per_injection(log, insns_path, keys, tag, name, fails):
    """{key: instructions per injection} for each key ("lpi", "spi", "msi", ...): the median
    window of its "trigger" loops less the median window of its "nothing" loops. A loop of w
    writes owns the next w windows (the instructions between consecutive irq_debug_write()
    entries), the last of which runs into the next loop's set-up and is left out. Appends to
    fails what went wrong (an injection lost, a count that does not add up, a missing loop),
    each with tag ("its=rust") and name (the log's)."""
    insns = [int(x) for x in open(insns_path)]
    loops, pos = {}, 0
    for m in re.finditer(r"@@@ itsbench (\w+) (nothing|trigger) irq (\S+) writes (\d+) "
                         r"handled (-?\d+) ns (\d+)", log):
        k, word, w, h = m.group(1), m.group(2), int(m.group(4)), int(m.group(5))
        if word == "trigger" and h != w:
            fails.append(f"{tag}: {k} injections lost, {h} of {w} handled ({name})")
        loops.setdefault((k, word), []).extend(insns[pos:pos + w - 1])
        pos += w
    d = {}
    if pos != len(insns) + 1:
        fails.append(f"{tag}: {len(insns) + 1} debugfs writes counted, {pos} expected ({name})")
        return d
    for k in keys:
        if not loops.get((k, "trigger")) or not loops.get((k, "nothing")):
            fails.append(f"{tag}: no {k} loops ({name})")
            continue
        d[k] = statistics.median(loops[(k, "trigger")]) - statistics.median(loops[(k, "nothing")])
    return d


def med(d, w, k):
    """The median over the boots of way w of figure k."""
    return statistics.median(x[k] for x in d[w])


def ratios(d, k):
    """The Rust / C ratio of the medians of figure k, and the range of the per-boot ratios."""
    r = [a[k] / b[k] for a, b in zip(d["rust"], d["c"])]
    return f"{med(d, 'rust', k) / med(d, 'c', k):.3f} ({min(r):.3f}-{max(r):.3f})"
