#!/usr/bin/env python3
"""Pass-through cost of the layer on the hot paths: runs slipstream-overhead with the layer off
and on, alternating, and prints the median per recorded vkCmdDispatch and per vkQueueSubmit.

  overhead_report.py --build-dir BUILD [--rounds N] [--json PATH] [-- extra args for the program]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import slipstream_env  # noqa: E402


def run(build, mode, extra):
    exe = os.path.join(build, "tools", "overhead", "slipstream-overhead")
    p = subprocess.run([exe] + extra, env=slipstream_env.layer_env(mode, build), capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"slipstream-overhead ({mode}) failed:\n{p.stdout}{p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("extra", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    extra = a.extra[1:] if a.extra[:1] == ["--"] else a.extra
    samples = {"off": [], "on": []}
    for _ in range(a.rounds):
        for mode in ("off", "on"):
            samples[mode] += run(a.build_dir, mode, extra)
    table = {}
    for key, unit in (("record_dispatch_ns", "ns"), ("queue_submit_us", "µs")):
        off = statistics.median(s[key] for s in samples["off"])
        on = statistics.median(s[key] for s in samples["on"])
        table[key] = {"off": off, "on": on, "added": on - off, "unit": unit}
    print(f"{'path':<28}{'layer off':>12}{'layer on':>12}{'added':>12}")
    for key, row in table.items():
        print(f"{key:<28}{row['off']:>10.3f}{row['unit']:>2}{row['on']:>10.3f}{row['unit']:>2}"
              f"{row['added']:>10.3f}{row['unit']:>2}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"table": table, "samples": samples}, f, indent=2)


if __name__ == "__main__":
    main()
