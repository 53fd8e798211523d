#!/usr/bin/env python3
"""One bench row under several layer configurations, interleaved, with the statistics and the
fusion trace of each: what a row's number is made of, for tuning on a GPU machine.

  probe_row.py --build-dir BUILD --row ROW --out DIR [--rounds 3] [--seconds 1]
               [--config NAME=VAR=VALUE,VAR=VALUE ...]

Exit status 1 when a column got no samples (or a layer column no statistics).
Columns: the naive style without the layer ("off"), the tuned style without it ("tuned"), and
the naive style under the layer in each --config (always "defaults" first). Per column the
median of the rounds' medians, and per layer column the statistics that say how batches were
made (batches, operations per batch, flush reasons, lock waits). The last round's trace of each
column is kept in DIR/trace-NAME.txt, its statistics in DIR/stats-NAME.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import slipstream_env  # noqa: E402

KEYS = ("queue_submits", "batches_flushed", "command_buffers_fused", "batch_command_buffers",
        "command_buffers_direct", "flush_full", "flush_gpu_starving", "flush_observe", "flush_deadline",
        "lazy_recorded", "recorded_at_end", "lazy_replayed_alone", "submit_lock_waits",
        "submit_lock_wait_ns", "barriers_narrowed", "fuse_barriers_elided", "fuse_barriers_left_out")


def run_once(a, name, style, mode, extra):
    env = slipstream_env.layer_env(mode, a.build_dir)
    env.update(extra)
    if mode != "off":
        env["VK_SLIPSTREAM_STATS_FILE"] = os.path.join(a.out, f"stats-{name}.json")
        env["VK_SLIPSTREAM_FUSE_TRACE"] = os.path.join(a.out, f"trace-{name}.txt")
    js = os.path.join(a.out, f"bench-{name}.json")
    exe = os.path.join(a.build_dir, "tools", "bench", "slipstream-bench")
    r = subprocess.run([exe, "--style", style, "--rows", a.row, "--max-row-seconds", str(a.seconds),
                        "--json", js], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(f"{name}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return None
    rows = json.load(open(js))["rows"]
    return rows[0]["median"] if rows else None


def stats_of(a, name):
    try:
        d = json.load(open(os.path.join(a.out, f"stats-{name}.json")))
    except (OSError, ValueError):
        return {}
    devs = d.get("devices") or [{}]
    return {k: devs[-1][k] for k in KEYS if k in devs[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--row", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--config", action="append", default=[])
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    columns = [("off", "naive", "off", {}), ("tuned", "tuned", "off", {}), ("defaults", "naive", "on", {})]
    for c in a.config:
        name, _, sets = c.partition("=")
        extra = dict(s.split("=", 1) for s in sets.split(",") if s)
        columns.append((name, "naive", "on", extra))
    samples = {c[0]: [] for c in columns}
    for _ in range(a.rounds):
        for name, style, mode, extra in columns:
            m = run_once(a, name, style, mode, extra)
            if m is not None:
                samples[name].append(m)
    summary = {}
    for name, *_ in columns:
        med = statistics.median(samples[name]) if samples[name] else None
        summary[name] = {"median": med, "rounds": samples[name], "stats": stats_of(a, name)}
        shown = f"{med:.3f}" if med is not None else "-"
        print(f"{name:24s} {shown:>10s}  rounds {['%.3f' % s for s in samples[name]]}")
        for k, v in summary[name]["stats"].items():
            print(f"    {k} = {v}")
    json.dump(summary, open(os.path.join(a.out, "probe.json"), "w"), indent=1)
    # A column without a sample, or a layer column without statistics, is a failed probe.
    missing = [n for n, v in summary.items() if v["median"] is None or (n not in ("off", "tuned") and not v["stats"])]
    if missing:
        print(f"probe_row: no samples or statistics for {', '.join(missing)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
