#!/usr/bin/env python3
"""Every setting the layer reads is in the README's settings table and in docs/settings.md, with
the default the code uses, and every setting those tables name is one the layer reads.

The code's own table comes from `slipstream-info --settings-json` (src/core/settings.cpp)."""
import argparse
import json
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\| `VK_SLIPSTREAM_([A-Z0-9_]+)` \|([^|]*)\|([^|]*)\|")


def table(path):
    """{name: default} of the rows of a settings table in a Markdown file."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows[m.group(1).lower()] = m.group(3).strip()
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--info", required=True, help="path of slipstream-info")
    p.add_argument("--repo", required=True, help="the repository's root")
    args = p.parse_args(argv)
    out = subprocess.run([args.info, "--settings-json"], capture_output=True, text=True, check=True, timeout=60)
    code = {s["name"]: s["default"] for s in json.loads(out.stdout)["settings"]}
    problems = []
    for doc in ("README.md", os.path.join("docs", "settings.md")):
        rows = table(os.path.join(args.repo, doc))
        if not rows:
            problems.append(f"{doc}: no settings table found")
            continue
        for name, default in code.items():
            if name not in rows:
                problems.append(f"{doc}: VK_SLIPSTREAM_{name.upper()} is read by the layer but not in the table")
                continue
            shown = rows[name].strip("` ")
            if shown != (default or "(none)"):
                problems.append(f"{doc}: VK_SLIPSTREAM_{name.upper()} default is {default or '(none)'!r} in the "
                                f"code, {shown!r} in the table")
        for name in rows:
            if name not in code:
                problems.append(f"{doc}: VK_SLIPSTREAM_{name.upper()} is in the table but the layer reads no such setting")
    for line in problems:
        print(line)
    print(f"{len(code)} settings checked in README.md and docs/settings.md: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
