#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check kunit.py's JSON result against the list of suites that must have run and passed.

kunit.py already fails on a failed test; this also fails on a suite that is missing (not
built, or lost to a crash) or that has skipped or failed cases, and prints one line per
expected suite.

With --filter GLOB (tests/run-kunit.sh passes $SUITES, the filter glob it gave kunit.py), only
the expected suites whose names match the suite part of GLOB (before its first ".", as the
kernel's kunit.filter_glob splits it) must have run and passed; the others are listed as not
selected, and a GLOB that selects no expected suite fails. Without it, every suite of the list.
"""
import argparse
import fnmatch
import json
import sys


def leaves(node, prefix=""):
    """The test cases of a suite, those of parameterised cases (sub-groups) included."""
    out = [(prefix + c["name"], c.get("status")) for c in node.get("test_cases", [])]
    for sub in node.get("sub_groups", []):
        out += leaves(sub, prefix + sub["name"] + ".")
    return out


def walk(node, out):
    for sub in node.get("sub_groups", []):
        out[sub["name"]] = sub
        walk(sub, out)


def parse_args():
    p = argparse.ArgumentParser(
        prog="check-kunit.py",
        description="Check kunit.py's JSON result against the suites that must have passed.")
    p.add_argument("--filter", metavar="GLOB",
                   help="kunit.py's filter glob (SUITE_GLOB[.TEST_GLOB]): only the expected "
                        "suites it selects must have run")
    p.add_argument("result", metavar="RESULT.json", help="kunit.py's --json output")
    p.add_argument("suites", metavar="SUITES_FILE",
                   help="the expected suites, one a line (tests/kunit/ARCH.suites)")
    args = p.parse_args()
    if args.filter is not None and not args.filter.split(".", 1)[0]:
        p.error(f"--filter {args.filter!r}: no suite glob")
    try:
        with open(args.suites) as f:
            expected = [l.split("#")[0].strip() for l in f]
    except OSError as e:
        p.error(f"cannot read the suites list: {e}")
    args.expected = [e for e in expected if e]
    if not args.expected:
        p.error(f"{args.suites} lists no suite")
    return args


def main():
    args = parse_args()
    expected = args.expected
    if args.filter is not None:
        suite_glob = args.filter.split(".", 1)[0]
        selected = [e for e in expected if fnmatch.fnmatchcase(e, suite_glob)]
        others = [e for e in expected if e not in selected]
        if not selected:
            print(f"check-kunit: SUITES={args.filter} selects none of the expected suites "
                  f"({args.suites}: {', '.join(expected)})")
            return 1
        if others:
            print(f"check-kunit: not selected by SUITES={args.filter}, not checked: "
                  f"{', '.join(others)}")
        expected = selected
    try:
        with open(args.result) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check-kunit: no usable result {args.result}: {e}")
        return 1
    suites = {}
    walk(result, suites)
    bad = 0
    for name in expected:
        s = suites.get(name)
        if s is None:
            print(f"check-kunit: {name}: MISSING")
            bad += 1
            continue
        cases = leaves(s)
        passed = sum(1 for _, status in cases if status == "PASS")
        other = [(n, status) for n, status in cases if status != "PASS"]
        misc = s.get("misc", {})
        ok = (not other and passed > 0
              and not any(misc.get(k) for k in ("failed", "crashed", "skipped", "errors")))
        print(f"check-kunit: {name}: {passed} passed, {len(other)} not passed"
              + ("" if ok else f"  {other[:5]}"))
        bad += 0 if ok else 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
