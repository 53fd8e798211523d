#!/usr/bin/env python3
"""A third-party Vulkan compute runtime under Slipstream, unmodified: FFmpeg's Vulkan filters.

    ffmpeg_vulkan_test.py --build-dir B [--ffmpeg PATH] [--frames N]

FFmpeg (Debian 12: 5.1) uploads frames to Vulkan images, runs each filter as compute shaders
over sampled and storage images, orders its submissions with timeline semaphores and waits on
fences, and downloads the result; its libplacebo filter renders with graphics pipelines and
compute and labels its command buffers. Each filter chain below runs without the layer (the
reference) and under Slipstream in several configurations; the frames' MD5 (ffmpeg's md5 muxer)
must equal the reference's. Under the defaults, summed over the chains, the layer's statistics
must show command buffers fused and submissions with semaphores fused: the runtime's work went
through fusion, not around it.

FFmpeg 5.1's Vulkan filters are not clean under synchronization validation by themselves (the
validation layer without Slipstream reports hazards in every chain here), so "silent" cannot
be asked. The `validation` configuration (Slipstream over the validation layer) must report no
kind of message (its MessageID) that the validation layer without Slipstream does not report for
the same chain: the layer adds no hazard of its own.

Chains with two inputs (overlay_vulkan, blend_vulkan) are left out: their output differs from
run to run without the layer.

`--teardown-runs N` runs the scale chain N more times under `FUSE=off` and fails on any run
that does not exit cleanly. FFmpeg ends with vkDeviceWaitIdle and then destroys its timeline
semaphores; while the layer answered that wait alone, lavapipe's submit thread (which updates
emulated timeline semaphores after a submission's fence can read signaled) wrote into a
destroyed one in ~8 of 2,000 such runs (docs/internals.md, "Idle waits"). The runs must show
idle waits the layer saw done and passed to the driver (`idle_driver_waits`). `--teardown-only`
skips the chains; ctest's `thirdparty.ffmpeg_teardown` runs 300.

Without ffmpeg, or with one that has no Vulkan filters, the test prints "SKIPPED: ..." and exits
0 (tools/bootstrap.sh installs ffmpeg). Exit status 1 when a run failed, 2 on bad usage.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

CHAINS = {
    "scale": "scale_vulkan=w=128:h=72",
    "flips": "hflip_vulkan,vflip_vulkan,transpose_vulkan",
    "blurs": "gblur_vulkan=sigma=2,avgblur_vulkan=sizeX=3,chromaber_vulkan",
    "flip_scale": "flip_vulkan,scale_vulkan=w=200:h=100",
    # libplacebo: render passes and graphics pipelines next to compute, labels through
    # vkGetDeviceProcAddr on an instance without VK_EXT_debug_utils (tests/apps/debug_labels.cpp).
    "placebo": "libplacebo=w=128:h=72:deband=1",
    "placebo_lanczos": "libplacebo=w=320:h=180:upscaler=ewa_lanczos",
    # Nine filters in one graph, run by four filter threads.
    "long_threads": "scale_vulkan=w=320:h=180,gblur_vulkan=sigma=1.5,hflip_vulkan,chromaber_vulkan,"
                    "avgblur_vulkan=sizeX=2,vflip_vulkan,transpose_vulkan,scale_vulkan=w=200:h=300,flip_vulkan",
}
THREADS = {"long_threads": 4}
# name, Slipstream mode, settings
CONFIGS = [
    ("defaults", "on", {}),
    ("lazy_off", "on", {"VK_SLIPSTREAM_LAZY_RECORD": "off"}),
    ("fuse_off", "on", {"VK_SLIPSTREAM_FUSE": "off"}),
    ("defer_0", "on", {"VK_SLIPSTREAM_MAX_DEFER_US": "0"}),
    ("pools_always", "on", {"VK_SLIPSTREAM_OBJECT_POOL": "always", "VK_SLIPSTREAM_ALLOC_CACHE": "always"}),
    ("validation", "validation", {}),
]
MD5_RE = re.compile(r"^MD5=([0-9a-f]{32})$", re.M)
MESSAGE_ID_RE = re.compile(r"Validation (?:Error|Warning): \[ ([A-Za-z0-9_-]+) \]")
EXPECTED_DEFAULTS = ("command_buffers_fused", "semaphore_submits_fused")


def ffmpeg_cmd(ffmpeg, name, frames):
    chain = CHAINS[name]
    return [ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-filter_threads", str(THREADS.get(name, 1)),
            "-init_hw_device", "vulkan=vk:0",
            "-filter_hw_device", "vk", "-f", "lavfi", "-i", "testsrc2=size=256x144:rate=25",
            "-frames:v", str(frames), "-vf", f"format=yuv420p,hwupload,{chain},hwdownload,format=yuv420p",
            "-f", "md5", "-"]


def run(args, chain, mode, settings, tmp):
    """One ffmpeg run; returns (md5 or None, validation message ids, statistics, problem or None)."""
    if mode == "alone":
        env = slipstream_env.layer_env("off", args.build_dir, extra_layers_below=[slipstream_env.VALIDATION])
        env["VK_LAYER_ENABLES"] = slipstream_env.validation_enables()
    else:
        env = slipstream_env.layer_env(mode, args.build_dir)
    env.update(settings)
    stats_path = os.path.join(tmp, "stats.json")
    if os.path.exists(stats_path):
        os.remove(stats_path)
    if mode not in ("off", "alone"):
        env["VK_SLIPSTREAM_STATS_FILE"] = stats_path
    try:
        p = subprocess.run(ffmpeg_cmd(args.ffmpeg, chain, args.frames), env=env,
                           capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, set(), {}, f"no exit within {args.timeout:g} s"
    out = p.stdout + p.stderr
    md5 = MD5_RE.search(p.stdout)
    ids = set(MESSAGE_ID_RE.findall(out))
    problem = None if p.returncode == 0 and md5 else f"exit {p.returncode}, {out.strip()[-400:]}"
    stats = {}
    if mode not in ("off", "alone") and not problem:
        try:
            with open(stats_path, encoding="utf-8") as f:
                for d in json.load(f).get("devices") or []:
                    for k, v in d.items():
                        if isinstance(v, int):
                            stats[k] = stats.get(k, 0) + v
        except (OSError, ValueError) as e:
            problem = f"no statistics from the layer (was it loaded?): {e}"
    return md5.group(1) if md5 else None, ids, stats, problem


def teardown_runs(args, tmp):
    """The scale chain --teardown-runs times under FUSE=off: the failures."""
    failures, seen_idle, driver_idle = [], 0, 0
    for i in range(args.teardown_runs):
        _, _, stats, problem = run(args, "scale", "on", {"VK_SLIPSTREAM_FUSE": "off"}, tmp)
        seen_idle += stats.get("idle_shortcuts", 0)
        driver_idle += stats.get("idle_driver_waits", 0)
        if problem:
            failures.append(f"scale [fuse_off], teardown run {i + 1} of {args.teardown_runs}: {problem}")
    if args.teardown_runs:
        print(f"teardown: {args.teardown_runs} runs of the scale chain under FUSE=off, {len(failures)} failed; "
              f"idle waits the layer saw idle at once: {seen_idle}, ended in the driver's: {driver_idle}")
        # The runs must have met the case: idle waits the layer saw done, after submissions
        # that named semaphores, which then went to the driver.
        if seen_idle < 1 or driver_idle < 1:
            failures.append(f"teardown: idle_shortcuts {seen_idle}, idle_driver_waits {driver_idle}: both must be >= 1")
    return failures


def has_vulkan_filters(ffmpeg):
    try:
        p = subprocess.run([ffmpeg, "-hide_banner", "-filters"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    names = {n for c in CHAINS.values() for n in re.findall(r"(?:^|,)([a-z0-9_]+)", c)}
    return all(re.search(rf"\b{n}\b", p.stdout) for n in names)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--ffmpeg", default=shutil.which("ffmpeg"))
    p.add_argument("--frames", type=int, default=8)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--teardown-runs", type=int, default=0,
                   help="runs of the scale chain under FUSE=off after the chains, each must exit cleanly")
    p.add_argument("--teardown-only", action="store_true", help="only the --teardown-runs")
    args = p.parse_args(argv)
    if not args.ffmpeg or not has_vulkan_filters(args.ffmpeg):
        print("SKIPPED: no ffmpeg with Vulkan filters (tools/bootstrap.sh installs Debian's)")
        return 0
    failures, defaults = [], {k: 0 for k in EXPECTED_DEFAULTS}
    with tempfile.TemporaryDirectory(prefix="slipstream-ffmpeg-") as tmp:
        for chain in CHAINS if not args.teardown_only else []:
            ref, _, _, problem = run(args, chain, "off", {}, tmp)
            if problem:
                failures.append(f"{chain} [off]: {problem}")
                continue
            _, alone_ids, _, problem = run(args, chain, "alone", {}, tmp)
            if problem:
                failures.append(f"{chain} [validation_alone]: {problem}")
            line = [f"{chain}: off {ref[:8]}"]
            for name, mode, settings in CONFIGS:
                md5, ids, stats, problem = run(args, chain, mode, settings, tmp)
                if not problem and md5 != ref:
                    problem = f"MD5 {md5} differs from no layer's {ref}"
                if not problem and ids - alone_ids:
                    problem = (f"validation reported {', '.join(sorted(ids - alone_ids))}, which it does not "
                               f"report without Slipstream ({', '.join(sorted(alone_ids)) or 'nothing'})")
                if problem:
                    failures.append(f"{chain} [{name}]: {problem}")
                if name == "defaults":
                    for k in defaults:
                        defaults[k] += stats.get(k, 0)
                line.append(f"{name} {'ok' if not problem else 'FAIL'}")
            print(", ".join(line) + f" (validation alone reports: {', '.join(sorted(alone_ids)) or 'nothing'})")
        failures += teardown_runs(args, tmp)
    for k, v in defaults.items():
        if v < 1 and not args.teardown_only:
            failures.append(f"defaults: {k} = {v} over all chains, expected >= 1 (fusion did not engage)")
    if not args.teardown_only:
        print("defaults, summed over the chains: " + ", ".join(f"{k} {v}" for k, v in defaults.items()))
    for f in failures:
        print("FAIL: " + f)
    chains = 0 if args.teardown_only else len(CHAINS) * (len(CONFIGS) + 2)
    print(f"{chains + args.teardown_runs} runs, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
