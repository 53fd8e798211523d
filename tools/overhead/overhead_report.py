#!/usr/bin/env python3
"""Pass-through cost of the layer on the hot paths: runs slipstream-overhead, which holds one
device without layers and one with VK_LAYER_slipstream enabled by name in the same process and
alternates between them, and prints minimum and median per recorded vkCmdDispatch, per recorded
vkCmdCopyBuffer, per vkQueueSubmit, per vkWaitForFences on a signaled fence, and per small
command buffer's life in a naive runtime's ring (wait, reset, begin, record, end, submit, total)
and in one that waits for every operation (latency_cb: begin, record, end, submit, spin, reset,
total).

  overhead_report.py --build-dir BUILD [--json PATH] [-- extra args for the program]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import slipstream_env  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--json")
    ap.add_argument("extra", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    extra = [x for x in a.extra if x != "--"]
    exe = os.path.join(a.build_dir, "tools", "overhead", "slipstream-overhead")
    # No layer in the environment (the program enables Slipstream by name on one instance),
    # but its manifest must be findable.
    env = slipstream_env.layer_env("off", a.build_dir)
    env["VK_ADD_LAYER_PATH"] = slipstream_env.manifest_dirs(a.build_dir)["explicit"]
    with tempfile.TemporaryDirectory() as tmp:
        env["VK_SLIPSTREAM_STATS_FILE"] = os.path.join(tmp, "stats.json")
        p = subprocess.run([exe] + extra, env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            sys.exit(f"slipstream-overhead failed:\n{p.stdout}{p.stderr}")
        # Exactly one of the two devices must have gone through the layer.
        try:
            devices = json.load(open(env["VK_SLIPSTREAM_STATS_FILE"]))["devices"]
        except (OSError, ValueError, KeyError):
            devices = []
        if len(devices) != 1:
            sys.exit(f"expected the layer on exactly one of the two devices, it reported {len(devices)}")
    r = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("{")))
    print(f"{r['device']}: {r['dispatches']} dispatches recorded, {r['submits']} submits, "
          f"{len(r['record_ns']['off'])} alternating repetitions")
    print(f"{'path':<28}{'off min':>10}{'on min':>10}{'added':>10}{'off med':>10}{'on med':>10}{'added':>10}")
    table = {}
    keys = [("record_ns", "ns"), ("copy_ns", "ns"), ("submit_us", "us"), ("signaled_wait_us", "us")]
    # The whole small command buffer of each life (the ring's, and the latency path's, where
    # the GPU's round trip is a phase of its own): the phases of each repetition summed.
    for life in ("small_cb", "latency_cb"):
        phases = [k for k in r if k.startswith(life + "_")]
        keys += [(k, "us") for k in phases]
        if phases:
            r[life + "_total_us"] = {side: [sum(v) for v in zip(*(r[k][side] for k in phases))]
                                     for side in ("off", "on")}
            keys.append((life + "_total_us", "us"))
    for key, unit in keys:
        off, on = r[key]["off"], r[key]["on"]
        row = {"off_min": min(off), "on_min": min(on), "off_median": statistics.median(off),
               "on_median": statistics.median(on), "unit": unit}
        table[key] = row
        print(f"{key + ' (' + unit + ')':<28}{row['off_min']:>10.3f}{row['on_min']:>10.3f}"
              f"{row['on_min'] - row['off_min']:>10.3f}{row['off_median']:>10.3f}{row['on_median']:>10.3f}"
              f"{row['on_median'] - row['off_median']:>10.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"table": table, "raw": r}, f, indent=2)


if __name__ == "__main__":
    main()
