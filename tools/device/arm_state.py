#!/usr/bin/env python3
"""Does arming put the GPU's round trips into the slow state? (docs/armed-launch.md)

    arm_state.py --build-dir B --out DIR [--steps N] [--rows a,b] [--reps R] [--arm MODE]

On the H200 every process with VK_SLIPSTREAM_ARM on ran its round trips at 85-120 us instead of
16-20, and so did processes after them; but some processes on that machine are slow with no
arming at all. This runs, N times in turn, a bench process with ARM=off and one with ARM=MODE
(default timeline), each followed by a probe process without the layer, and prints every
process's state probe (an empty command buffer's round trip, slipstream-bench's
state_probe_us) before and after its rows. Only the probe processes judge the machine's state
(a bench process's own probe goes through the layer, armed under ARM). Arming is what makes the
state when the probes after armed processes are slow and those after ARM=off processes are not;
the state comes and goes by itself when slow probes follow both settings alike.

Writes DIR/arm_state.json (every process, in order) and prints the table and a summary.
Exit status 1 when a process failed (its rows did not verify, a crash, a time-out).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import slipstream_env  # noqa: E402

# As bench_report.py judges a process slow: more than twice the best probe and 20 us above it.
SLOW_RATIO, SLOW_FLOOR_US = 2.0, 20.0


def run_process(args, kind, arm, path):
    """One bench process: `kind` "probe" runs a short row without the layer, else the rows with
    the layer and VK_SLIPSTREAM_ARM=arm. Returns its record."""
    env = slipstream_env.layer_env("off" if kind == "probe" else "on", args.build_dir)
    rows, reps = ("launch_spin_bare", "3") if kind == "probe" else (args.rows, str(args.reps))
    if kind != "probe":
        env["VK_SLIPSTREAM_ARM"] = arm
        env["VK_SLIPSTREAM_STATS_FILE"] = path + ".stats.json"
    cmd = [args.bench, "--rows", rows, "--reps", reps, "--max-row-seconds", "2", "--json", path]
    rec = {"kind": kind, "arm": arm, "error": None}
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        if p.returncode != 0:
            rec["error"] = f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
        rec["probe_us"] = result.get("state_probe_us")
        rec["probe_end_us"] = result.get("state_probe_end_us")
        rec["rows"] = {r["name"]: r["median"] for r in result.get("rows", [])}
        if rec["probe_us"] is None or rec["probe_end_us"] is None or not rec["rows"]:
            rec["error"] = rec["error"] or "no state probes or no rows in its JSON"
        if kind != "probe":
            with open(path + ".stats.json", encoding="utf-8") as f:
                dev = (json.load(f).get("devices") or [{}])[0]
            rec["stats"] = {k: v for k, v in dev.items() if k.startswith("arm_")}
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        rec["error"] = rec["error"] or f"{type(e).__name__}: {e}"
    return rec


def slow(probe, best):
    return probe is not None and best is not None and probe > max(best * SLOW_RATIO, best + SLOW_FLOOR_US)


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def summary(procs, rows):
    """Lines saying how often the probe process after each setting's processes was slow, and the
    rows' medians per setting. Only the probes without the layer judge the machine's state: a
    bench process's own probes go through the layer, and under ARM its empty command buffer,
    submitted again and again, is armed like any other."""
    clean = [p for r in procs if r["kind"] == "probe" for p in (r.get("probe_us"), r.get("probe_end_us")) if p]
    best = min(clean) if clean else None
    lines = [f"best probe without the layer {fmt(best)} us; slow: more than {SLOW_RATIO:g}x it and "
             f"{SLOW_FLOOR_US:g} us above"]
    for arm in sorted({r["arm"] for r in procs if r["kind"] == "bench"}):
        mine = [i for i, r in enumerate(procs) if r["kind"] == "bench" and r["arm"] == arm]
        after = [procs[i + 1].get("probe_us") for i in mine if i + 1 < len(procs)]
        med = statistics.median([p for p in after if p]) if any(after) else None
        meds = []
        for row in rows:
            v = [procs[i].get("rows", {}).get(row) for i in mine]
            v = [x for x in v if x is not None]
            meds.append(f"{row} {fmt(statistics.median(v)) if v else '-'}")
        lines.append(f"ARM={arm}: {len(mine)} processes (median over them: {', '.join(meds)} us); the probe "
                     f"after them: {sum(slow(p, best) for p in after)} of {len(after)} slow, median {fmt(med)} us")
    return lines


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=6, help="pairs of ARM=off and ARM=MODE processes")
    p.add_argument("--rows", default="launch_sync_resubmit,launch_sync,launch_spin_bare")
    p.add_argument("--reps", type=int, default=300)
    p.add_argument("--arm", default="timeline", help="the VK_SLIPSTREAM_ARM value to compare with off")
    p.add_argument("--timeout", type=float, default=120.0)
    args = p.parse_args(argv)
    args.bench = os.path.join(args.build_dir, "tools", "bench", "slipstream-bench")
    if not os.path.exists(args.bench):
        p.error(f"{args.bench} does not exist")
    os.makedirs(args.out, exist_ok=True)
    procs = [run_process(args, "probe", "-", os.path.join(args.out, "00-probe.json"))]
    for step in range(args.steps):
        for arm in ("off", args.arm):
            n = len(procs)
            procs.append(run_process(args, "bench", arm, os.path.join(args.out, f"{n:02d}-arm-{arm}.json")))
            procs.append(run_process(args, "probe", "-", os.path.join(args.out, f"{n + 1:02d}-probe.json")))
    rows = args.rows.split(",")
    print(f"{'#':>3} {'process':<14} {'probe':>7} {'end':>7}  " + "  ".join(f"{r[:22]:>22}" for r in rows) + "  armed/released")
    for i, r in enumerate(procs):
        name = "no layer" if r["kind"] == "probe" else f"ARM={r['arm']}"
        cells = "  ".join(f"{fmt(r.get('rows', {}).get(row)) if r['kind'] == 'bench' else '':>22}" for row in rows)
        st = r.get("stats") or {}
        arm = f"{st.get('arm_armed', 0)}/{st.get('arm_released', 0)}" if r["kind"] == "bench" else ""
        print(f"{i:>3} {name:<14} {fmt(r.get('probe_us')):>7} {fmt(r.get('probe_end_us')):>7}  {cells}  {arm}"
              + (f"  ERROR {r['error']}" if r["error"] else ""))
    lines = summary(procs, rows)
    for line in lines:
        print(line)
    with open(os.path.join(args.out, "arm_state.json"), "w", encoding="utf-8") as f:
        json.dump({"processes": procs, "summary": lines, "rows": rows}, f, indent=1)
    return 1 if any(r["error"] for r in procs) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
