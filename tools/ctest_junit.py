"""Reads what `ctest --output-junit` wrote (tools/test.sh's stages)."""
import sys
import xml.etree.ElementTree as ET


def failed_tests(argv, usage, what):
    """[(test name, its output)] of each failed test in the one JUnit file `argv` names, or an exit
    status after printing why: 2 with `usage` for other arguments, 1 naming `what` (the caller
    and what it does then) for a file it cannot read."""
    if len(argv) != 1:
        print(usage, file=sys.stderr)
        return 2
    try:
        return [(c.get("name"), c.findtext("system-out") or "")
                for c in ET.parse(argv[0]).getroot().iter("testcase") if c.get("status") == "fail"]
    except (OSError, ET.ParseError) as e:
        print(f"{what}: cannot read {argv[0]} ({e})", file=sys.stderr)
        return 1
