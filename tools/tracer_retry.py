#!/usr/bin/env python3
"""Decides whether the failed tests of a sanitizer ctest run may be retried.

    tracer_retry.py JUNIT_XML

JUNIT_XML is what `ctest --output-junit` wrote. A failed test may be retried only when its output
shows LeakSanitizer's stop-the-world tracer crashing ("Tracer caught signal N", which happens on
lavapipe's threads at exit and is not a finding) and no sanitizer finding at all. Exit status 0
when every failed test is such a crash: it prints which tests and why, for tools/test.sh to rerun
them (`ctest --rerun-failed`); 1 when any failure is something else, naming those tests: they
fail the stage at once.
"""
import re
import sys

from ctest_junit import failed_tests

TRACER_RE = re.compile(r"Tracer caught signal (\d+)")
FINDINGS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer: detected memory leaks",
            "runtime error:", "WARNING: ThreadSanitizer")


def main(argv):
    failed = failed_tests(argv, __doc__.strip().splitlines()[2].strip(), "tracer_retry: not retrying")
    if isinstance(failed, int):
        return failed
    retry, signals, other = [], set(), []
    for name, output in failed:
        crashes = TRACER_RE.findall(output)
        if crashes and not any(f in output for f in FINDINGS):
            retry.append(name)
            signals.update(crashes)
        else:
            other.append(name)
    if other or not failed:
        print(f"tracer_retry: {len(other)} failed test(s) not retried (a finding, or a failure other "
              f"than LeakSanitizer's tracer crash): {', '.join(other)}", file=sys.stderr)
        return 1
    print(f"retrying {len(retry)} test{'s' if len(retry) > 1 else ''}: LeakSanitizer's tracer crashed "
          f"(Tracer caught signal {', '.join(sorted(signals))}), not a finding: {', '.join(retry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
