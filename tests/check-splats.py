#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fail on any kernel splat in a console log: oops, BUG, WARNING (lockdep's included), panic,
lockdep INFO reports, KASAN, UBSAN, kCFI failures (enforcing or permissive), spurious-interrupt
and RCU-stall reports, any call trace. Prints the first lines of each report.

Usage: check-splats.py WHAT LOG
"""
import re
import sys

SPLAT = re.compile(r"(Oops|BUG:|WARNING:|Kernel panic|INFO: (possible|inconsistent|trying|task)"
                   r"|KASAN:|UBSAN:|CFI failure|general protection fault"
                   r"|nobody cared|Disabling IRQ #|No irq handler for|rcu: INFO"
                   r"|self-detected stall|Call Trace:)")


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print("usage: check-splats.py WHAT LOG   (WHAT: the label of the report lines)",
              file=sys.stderr)
        return 2
    what, path = sys.argv[1], sys.argv[2]
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        # No console log: the run that should have written it did not (a failure, not a usage
        # error).
        print(f"check-splats: {what}: FAIL: no console log: {e}")
        return 1
    hits = [i for i, l in enumerate(lines) if SPLAT.search(l)]
    for i in hits[:5]:
        print(f"check-splats: {what}: " + " | ".join(l.strip() for l in lines[i:i + 3]))
    print(f"check-splats: {what}: {'FAIL' if hits else 'PASS'}: "
          f"{len(hits)} kernel splat line(s) (oops, BUG, WARNING, lockdep, KASAN, UBSAN, CFI)")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
