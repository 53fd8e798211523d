#!/usr/bin/env python3
"""CPU burned by fence waits on long GPU jobs (~50 ms each): layer off, layer with adaptive
spin, layer with plain spin. Reads getrusage CPU time from slipstream-long-wait and the
layer's spin counters from its statistics.

  long_wait_report.py --build-dir BUILD [--json PATH] [-- args for slipstream-long-wait]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import slipstream_env  # noqa: E402

CONFIGS = [("layer off", "off", {}), ("adaptive spin", "on", {}),
           ("spin, not adaptive", "on", {"VK_SLIPSTREAM_SPIN_ADAPTIVE": "off"})]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--json")
    ap.add_argument("extra", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    extra = [x for x in a.extra if x != "--"]
    exe = os.path.join(a.build_dir, "tools", "overhead", "slipstream-long-wait")
    rows = []
    for name, mode, knobs in CONFIGS:
        with tempfile.TemporaryDirectory() as tmp:
            env = slipstream_env.layer_env(mode, a.build_dir)
            env.update(knobs)
            env["VK_SLIPSTREAM_STATS_FILE"] = os.path.join(tmp, "s.json")
            p = subprocess.run([exe] + extra, env=env, capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                sys.exit(f"{name}: slipstream-long-wait failed\n{p.stdout}{p.stderr}")
            r = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("{")))
            stats = {}
            if mode != "off":
                d = json.load(open(env["VK_SLIPSTREAM_STATS_FILE"]))["devices"][0]
                stats = {k: d[k] for k in ("spin_waits", "spin_skipped", "spin_ns")}
            r.update(stats, config=name)
            rows.append(r)
    print(f"{'config':<22}{'median wait':>13}{'CPU/wait time':>15}{'after 4 waits':>15}{'spin time':>12}"
          f"{'spun':>6}{'skipped':>9}")
    for r in rows:
        spin = f"{r['spin_ns'] / 1e6:.3f} ms" if "spin_ns" in r else "-"
        print(f"{r['config']:<22}{r['median_wait_ms']:>10.2f} ms"
              f"{100 * r['cpu_ms_total'] / r['wait_ms_total']:>14.2f}%"
              f"{100 * r['cpu_ms_after_4'] / max(r['wait_ms_after_4'], 1e-9):>14.2f}%{spin:>12}"
              f"{r.get('spin_waits', '-'):>6}{r.get('spin_skipped', '-'):>9}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
