#!/usr/bin/env python3
"""Prints what the failed tests of a ctest run said, without their passing lines.

    failure_digest.py JUNIT_XML

JUNIT_XML is what `ctest --output-junit` wrote. A CI log may keep only the first lines of a
failed test's output and the last lines of the whole run, and the test drivers print a line per
passing case first (fault_test, misuse_test, random_test without --quiet): a failure in the
middle is then lost. tools/test.sh runs this after a failed stage, so the log's tail names each
failed test and its own lines that are not a pass, at most 40 per test (the last ones).
"""
import re
import sys

from ctest_junit import failed_tests

# Lines that report a passing case, in the formats of the project's drivers and GoogleTest.
PASS_RE = re.compile(r"^\s*(PASS\b|seed \d+: pass\b|\[ +(OK|RUN|PASSED) +\]|\[-+\])")
KEEP = 40


def main(argv):
    failed = failed_tests(argv, __doc__.strip().splitlines()[2].strip(), "failure_digest")
    if isinstance(failed, int):
        return failed
    print(f"failure digest: {len(failed)} failed test(s)")
    for name, output in failed:
        lines = [l for l in output.splitlines() if l.strip() and not PASS_RE.match(l)]
        cut = len(lines) - KEEP
        print(f"== {name}" + (f" (its last {KEEP} lines that are not a pass, of {len(lines)})" if cut > 0 else ""))
        for line in lines[max(0, cut):]:
            print("   " + line[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
