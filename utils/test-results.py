#!/usr/bin/env python3
"""Summarises JUnit/xUnit XML test reports (ctest --output-junit, lit
--xunit-xml-output) for utils/check.sh.

Prints every failed test and every skipped test with the reason, then one
machine-readable line: "RESULT passed=N failed=N skipped=N". With --ci,
skipped tests (lit UNSUPPORTED: a feature such as amdgpu-clang or comgr is
missing) count as failures: CI must run everything.

Usage: utils/test-results.py [--ci] --label NAME REPORT.xml...
A missing or unreadable report is one failure (the runner did not finish).
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def testcases(root):
    if root.tag == "testcase":
        yield root
    for child in root:
        yield from testcases(child)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ci", action="store_true")
    ap.add_argument("--label", required=True)
    ap.add_argument("reports", nargs="+")
    args = ap.parse_args()

    passed = failed = skipped = 0
    for path in args.reports:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print("%s: no test report %s (%s)" % (args.label, path, e))
            failed += 1
            continue
        for tc in testcases(root):
            name = "%s.%s" % (tc.get("classname", ""), tc.get("name", ""))
            bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
            skip = tc.find("skipped")
            if bad is not None:
                failed += 1
                print("%s: FAILED %s" % (args.label, name))
            elif skip is not None or tc.get("status") == "notrun":
                why = (skip.get("message") if skip is not None else None) or "not run"
                if args.ci:
                    failed += 1
                    print("%s: FAILED (skipped in CI) %s: %s" % (args.label, name, why))
                else:
                    skipped += 1
                    print("%s: skipped %s: %s" % (args.label, name, why))
            else:
                passed += 1
    print("RESULT passed=%d failed=%d skipped=%d" % (passed, failed, skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
