#!/usr/bin/env python3
"""Every setting the layer reads is in the README's settings table, in docs/settings.md and in the
manifests' "features" section (for the Vulkan Configurator), with the default the code uses, and
every setting those name is one the layer reads.

The code's own table comes from `slipstream-info --settings-json` (src/ground/core/settings.cpp)."""
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
    p.add_argument("--manifest", action="append", default=[], help="a built layer manifest (repeatable)")
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
    for path in args.manifest:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("file_format_version") != "1.2.0":
            problems.append(f"{path}: file_format_version {manifest.get('file_format_version')!r}, expected '1.2.0'")
        described = {}
        for item in manifest["layer"].get("features", {}).get("settings", []):
            missing = [k for k in ("key", "label", "description", "type", "default") if k not in item]
            if missing:
                problems.append(f"{path}: setting {item.get('key')!r} lacks {', '.join(missing)}")
            default = item.get("default")
            described[item.get("key")] = ("on" if default else "off") if isinstance(default, bool) else str(default)
            if item.get("type") == "ENUM" and default not in [f["key"] for f in item.get("flags", [])]:
                problems.append(f"{path}: {item.get('key')}: default {default!r} is not among its values")
        for name, default in code.items():
            if name not in described:
                problems.append(f"{path}: {name} is read by the layer but not described")
            elif described[name] != default:
                problems.append(f"{path}: {name} default is {default!r} in the code, {described[name]!r} in the manifest")
        for name in described:
            if name not in code:
                problems.append(f"{path}: {name} is described but the layer reads no such setting")
    for line in problems:
        print(line)
    print(f"{len(code)} settings checked in README.md, docs/settings.md and {len(args.manifest)} manifest(s): "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
