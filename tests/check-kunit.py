#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check kunit.py's JSON result against the list of suites that must have run and passed.

kunit.py already fails on a failed test; this also fails on a suite that is missing (not
built, or lost to a crash) or that has skipped or failed cases, and prints one line per
expected suite.
"""
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


def main():
    json_path, suites_path = sys.argv[1], sys.argv[2]
    try:
        with open(json_path) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check-kunit: no usable result {json_path}: {e}")
        return 1
    suites = {}
    walk(result, suites)
    expected = [l.split("#")[0].strip() for l in open(suites_path)]
    expected = [e for e in expected if e]
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
