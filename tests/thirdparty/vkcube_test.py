#!/usr/bin/env python3
"""A presenting application under Slipstream, unmodified: vkcube (vulkan-tools) under Xvfb.

    vkcube_test.py --build-dir B [--frames N]

vkcube acquires swapchain images, renders a textured cube with graphics pipelines, submits with
the acquire and render semaphores, presents, and waits on a fence per frame. Nothing of it is
compute work Slipstream fuses; what it checks is that the layer's queue and wait paths pass
presentation through: under the layer, and under the layer over the validation layer
(synchronization validation on), vkcube must draw its frames and exit 0, the validation layer
must report nothing (as it reports nothing for vkcube alone, which runs first), and the layer's
statistics must count every frame's submission and fence wait.

Without vkcube or xvfb-run the test prints "SKIPPED: ..." and exits 0 (tools/bootstrap.sh
installs both). Exit status 1 when a run failed, 2 on bad usage.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

MARKERS = ("Validation Error", "Validation Warning", "SYNC-HAZARD")


def run(args, mode, tmp):
    """One vkcube run in `mode` ("alone": the validation layer without Slipstream); returns a
    list of problems and the layer's statistics."""
    if mode == "alone":
        env = slipstream_env.layer_env("off", args.build_dir, extra_layers_below=[slipstream_env.VALIDATION])
        env["VK_LAYER_ENABLES"] = slipstream_env.validation_enables()
    else:
        env = slipstream_env.layer_env(mode, args.build_dir)
    stats_path = os.path.join(tmp, f"stats-{mode}.json")
    if mode != "alone":
        env["VK_SLIPSTREAM_STATS_FILE"] = stats_path
    cmd = [args.xvfb_run, "-a", args.vkcube, "--c", str(args.frames)]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return [f"no exit within {args.timeout:g} s"], {}
    out = p.stdout + p.stderr
    problems = [f"exit {p.returncode}: {out.strip()[-400:]}"] if p.returncode else []
    messages = [line for line in out.splitlines() if any(m in line for m in MARKERS)]
    if messages:
        problems.append(f"{len(messages)} validation message line(s): {messages[0][:300]}")
    stats = {}
    if mode != "alone" and not problems:
        try:
            with open(stats_path, encoding="utf-8") as f:
                stats = (json.load(f).get("devices") or [{}])[0]
        except (OSError, ValueError) as e:
            problems.append(f"no statistics from the layer (was it loaded?): {e}")
        for k in ("queue_submits", "fence_waits"):
            if not problems and stats.get(k, 0) < args.frames:
                problems.append(f"statistics: {k} = {stats.get(k, 0)}, expected >= {args.frames} (one a frame)")
    return problems, stats


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--frames", type=int, default=100)
    p.add_argument("--timeout", type=float, default=120.0)
    args = p.parse_args(argv)
    args.vkcube, args.xvfb_run = shutil.which("vkcube"), shutil.which("xvfb-run")
    if not args.vkcube or not args.xvfb_run:
        print("SKIPPED: vkcube or xvfb-run missing (tools/bootstrap.sh installs vulkan-tools and xvfb)")
        return 0
    failed = 0
    with tempfile.TemporaryDirectory(prefix="slipstream-vkcube-") as tmp:
        for mode in ("alone", "on", "validation"):
            problems, stats = run(args, mode, tmp)
            detail = "; ".join(problems) if problems else (
                f"{stats.get('queue_submits', 0)} submissions, {stats.get('fence_waits', 0)} fence waits"
                if stats else "clean")
            print(f"vkcube [{mode}] {'FAIL' if problems else 'PASS'}: {detail}")
            failed += bool(problems)
    print(f"3 runs, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
