#!/usr/bin/env python3
"""Checks where cached readback (src/memory/memory/readback_tracker.h) really puts host-read memory.

    readback_test.py --build-dir B --app PATH [--jobs N] [--extra-env VAR=VALUE ...]

Runs readback_app (tests/readback/readback_app.cpp) over the test layer
VK_LAYER_SLIPSTREAM_test_memory_layout, which presents the memory layout of another device
(tests/unit/memory_layouts.h) on lavapipe and reports the memory type of every allocation that
reached it. The stack is app -> Slipstream -> test layer -> (validation) -> driver: Debian's
loader 1.3.239 stacks layers in manifest discovery order, and slipstream_env.layer_env puts
Slipstream's folder before ours on VK_ADD_LAYER_PATH. The table below proves that order on every
run: the redirected types only show in the test layer's report if Slipstream is above it.

Cases (one PASS/FAIL line each):
  * every layout with Slipstream ("on") and without it ("off", test layer still loaded): the
    redirect count, no bind mismatch, the allocations the test layer saw per type, the type the
    naive program asked for in each scenario, identical checksums;
  * nvidia-bar with the system heap (type 3's) limited so that every redirect fails: each falls
    back to the program's own type;
  * VK_SLIPSTREAM_READBACK=off: nothing redirected;
  * VK_SLIPSTREAM_READBACK_STEER=on on nvidia-bar: the naive program itself picks type 3;
  * nvidia-bar and amd over the Khronos validation layer (synchronization validation): no
    message;
  * evidence from use (readback_app --scenarios seed-large,seed-small,ml-weights,ml-copy-upload)
    on every layout with and without Slipstream: the seed runtime's staging blocks move to the
    cached type on their first use (a copy destination), the ML runtime's device buffers in
    host-visible VRAM stay; VK_SLIPSTREAM_READBACK_DEFER=off moves nothing of them; nvidia-h200
    and intel over the validation layer.

--extra-env adds VAR=VALUE to the environment of every run with Slipstream loaded; it exists to
show that this test fails when the layer misbehaves (e.g. VK_SLIPSTREAM_READBACK=off).
Exit status: 0 if every case passed, 1 otherwise (2 on bad usage).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "apps"))
import slipstream_env  # noqa: E402
import run_app  # noqa: E402  (what counts as a validation message, as in the correctness suite)

TEST_LAYER = "VK_LAYER_SLIPSTREAM_test_memory_layout"
STATS_VAR = "VK_SLIPSTREAM_STATS_FILE"
SCENARIOS = ("staging", "dedicated", "block", "mixed-suballoc", "linear-image",
             "hint-then-optimal-image", "hint-then-block")
# Evidence from use (issue 9): the seed runtime's readback and an ML runtime's device buffers.
EVIDENCE = ("seed-large", "seed-small", "ml-weights", "ml-copy-upload")
OPTIMAL = "hint-then-optimal-image"
SCENARIO_RE = re.compile(r"^scenario ([a-z-]+): (.*)$")
TYPE_RE = re.compile(r"type (\d+) \(")
CHECKSUM_RE = re.compile(r"^checksum: ([0-9a-f]{16})$")


class Layout:
    """What readback_app must get on one layout.

    naive:     the type the program asks for host-read memory in every scenario (the first
               HOST_VISIBLE|DEVICE_LOCAL type; every layout has one). Device buffers, one in each
               scenario but the last, take the first DEVICE_LOCAL type.
    target:    where Slipstream moves readback memory (None: nowhere).
    cached:    HOST_CACHED types the program never asks for: without Slipstream they stay empty.
    redirects: readback_redirects.
    on, off:   allocations_by_type of the test layer's report with and without Slipstream
               (types not named: 0).
    skipped:   scenarios the program skips on this layout.
    """

    def __init__(self, naive, target, cached, redirects, on, off, skipped=()):
        self.naive, self.target, self.cached = naive, target, cached
        self.redirects, self.on, self.off, self.skipped = redirects, on, off, set(skipped)


# The program's allocations, by scenario (D: first DEVICE_LOCAL type, N: the naive type):
#   staging          D (device buffer) + N (readback buffer; hint after its requirements query)
#   dedicated        D + N (dedicated readback buffer)
#   block            D + N (8 MiB block after a probe readback buffer was created, queried,
#                    destroyed; six readback regions bound into it)
#   mixed-suballoc   D + N (4 MiB holding STORAGE|TRANSFER_DST buffers, no allocation-time
#                    evidence; the first use of its buffers is a copy destination, so where a
#                    safe cached target exists it moves on that use: a cached twin T joins N,
#                    which stays allocated)
#   linear-image     D + N (dedicated, LINEAR TRANSFER_DST image)
#   hint-then-optimal-image   N (optimal image memory, right after the requirements query of
#                    a readback buffer as large as the image: hinted, non-dedicated) + N (its
#                    readback buffer); only where optimal images accept N.
#   hint-then-block  N (a 16 MiB block right after a 2 MiB readback buffer's requirements
#                    query; the buffer and eight host-written storage buffers that a compute
#                    dispatch reads are bound into it). Far larger than the buffer, so the hint
#                    does not cover it: it stays in N on every layout (no redirect).
# Dedicated allocations may go to any type the resource allows; the non-dedicated ones (staging,
# block, the optimal image and its readback buffer) only to safe_targets(N): types that every
# resource class accepting N also accepts. Buffers and linear images accept every type but
# LAZILY_ALLOCATED ones on these layouts; optimal images accept the DEVICE_LOCAL types, and on
# the nvidia-* layouts only the non-host-visible one.
NVIDIA = dict(
    # Types: 0 none, 1 DL, 2 HV|HC, 3 HV|HC|CACHED, 4 DL|HV|HC (BAR / host-visible VRAM). The
    # program asks 4 (N) and 1 (D). Optimal images accept only type 1, so no probed class accepts
    # 4 without accepting 3: safe_targets(4) includes 3, and staging, dedicated, block and
    # linear-image move to 3 at allocation; mixed-suballoc moves on its first use (a twin in 3,
    # its original stays in 4): 5 redirects. hint-then-block stays in 4 (host writes first).
    # Optimal images do not accept 4: hint-then-optimal-image is skipped.
    naive=4, target=3, cached=[3], redirects=5,
    on={1: 5, 3: 5, 4: 2}, off={1: 5, 4: 6}, skipped=[OPTIMAL])
LAYOUTS = {
    "nvidia-bar": Layout(**NVIDIA),
    # Same five types; type 4 is on the VRAM heap instead of a 246 MiB BAR heap: same verdicts.
    "nvidia-rebar": Layout(**NVIDIA),
    # The H200's real layout, shaped like nvidia-rebar: same verdicts.
    "nvidia-h200": Layout(**NVIDIA),
    # Types: 0 DL, 1 HV|HC, 2 DL|HV|HC, 3 HV|HC|CACHED, 4-7 their DEVICE_COHERENT/UNCACHED_AMD
    # twins. N = 2, D = 0. Optimal images accept the DEVICE_LOCAL types 0, 2, 4, 6, so
    # safe_targets(2) = {0, 2, 4, 6}: type 3 is not a safe target (an image bound later could not
    # live there) and the non-dedicated allocations stay in 2 (staging, block, the optimal image
    # and its readback buffer, mixed-suballoc and hint-then-block). Only the dedicated ones move
    # to 3 (dedicated, linear-image): 2 redirects. Type 7 is never a target (AMD device bits).
    "amd": Layout(naive=2, target=3, cached=[3, 7], redirects=2,
                  on={0: 5, 2: 6, 3: 2}, off={0: 5, 2: 8}),
    # Types: 0 DL, 1 DL|HV|HC, 2 DL|HV|HC|CACHED, all on one heap. N = 1, D = 0. Every resource
    # class accepts all three types, so every readback allocation may move to 2: staging,
    # dedicated, block, linear-image, the optimal image's memory and its readback buffer (6),
    # and mixed-suballoc on its first use (a twin; its original stays in 1): 7.
    # hint-then-block is not readback memory and stays in 1.
    "intel": Layout(naive=1, target=2, cached=[2], redirects=7,
                    on={0: 5, 1: 2, 2: 7}, off={0: 5, 1: 8}),
    # Types: 0 DL, 1 DL|HV|HC, 2 DL|HV|CACHED (not coherent), 3 DL|LAZY. N = 1 is coherent and
    # no cached type is: moving there would drop HOST_COHERENT, so nothing moves.
    "arm": Layout(naive=1, target=None, cached=[2], redirects=0,
                  on={0: 5, 1: 8}, off={0: 5, 1: 8}),
    # Types: 0 DL, 1 DL|HV|HC, 2 DL|HV|CACHED, 3 DL|HV|HC|CACHED. N = 1; the coherent cached
    # type 3 (not the first cached one, 2) is the target, safe for every class: 7 redirects as on
    # intel.
    "adreno": Layout(naive=1, target=3, cached=[2, 3], redirects=7,
                     on={0: 5, 1: 2, 3: 7}, off={0: 5, 1: 8}),
    # One type, DL|HV|HC|CACHED: the program already asks for cached memory (N = D = 0).
    "lavapipe": Layout(naive=0, target=None, cached=[], redirects=0,
                       on={0: 13}, off={0: 13}),
    # Types: 0 DL, 1 HV|HC, 2 DL|HV|HC: no cached type, nothing to move to. N = 2, D = 0.
    "no-cached": Layout(naive=2, target=None, cached=[], redirects=0,
                        on={0: 5, 2: 8}, off={0: 5, 2: 8}),
}


# Evidence from use, by layout: allocations_by_type with (on) and without (off) Slipstream, and
# the moves. The program's allocations (D: first DEVICE_LOCAL type; N: the naive host type; U:
# upload staging, the first HOST_VISIBLE (seed) or HOST_VISIBLE|HOST_COHERENT (ML) type; C: the
# ML runtime's own readback staging, the first HOST_CACHED|HOST_COHERENT type, else the first
# HOST_CACHED, else N; T: a twin where memory moves):
#   seed-large      D + U + N (48 MB block after a STORAGE|TRANSFER_DST probe) [+ T]
#   seed-small      D + U + N (32 MiB block for a 64 KiB request, a second region later) [+ T]
#   ml-weights      N (device buffers, mapped and written first: stays) + C
#   ml-copy-upload  2 x (U + N + C); the first N is filled by copies first, so it moves [+ T],
#                   then the GPU reads it (one readback_moved_gpu_reads, warned); the second N,
#                   of the same kind, stays.
# Where N has a safe cached coherent target (nvidia-*: 4 -> 3, intel: 1 -> 2, adreno: 1 -> 3)
# three allocations move (the seed blocks and the first ML block) and their originals stay.
# amd: type 3 is no safe target of N = 2 (optimal images); arm: no coherent cached type;
# lavapipe: N is cached already; no-cached: nothing to move to.
class Evidence:
    def __init__(self, on, off, moves):
        self.on, self.off, self.moves = on, off, moves


NVIDIA_EVIDENCE = Evidence(on={1: 2, 2: 4, 3: 6, 4: 5}, off={1: 2, 2: 4, 3: 3, 4: 5}, moves=3)
EVIDENCE_LAYOUTS = {
    "nvidia-bar": NVIDIA_EVIDENCE,
    "nvidia-rebar": NVIDIA_EVIDENCE,
    "nvidia-h200": NVIDIA_EVIDENCE,
    "amd": Evidence(on={0: 2, 1: 4, 2: 5, 3: 3}, off={0: 2, 1: 4, 2: 5, 3: 3}, moves=0),
    "intel": Evidence(on={0: 2, 1: 9, 2: 6}, off={0: 2, 1: 9, 2: 3}, moves=3),
    "arm": Evidence(on={0: 2, 1: 9, 2: 3}, off={0: 2, 1: 9, 2: 3}, moves=0),
    "adreno": Evidence(on={0: 2, 1: 9, 3: 6}, off={0: 2, 1: 9, 3: 3}, moves=3),
    "lavapipe": Evidence(on={0: 14}, off={0: 14}, moves=0),
    "no-cached": Evidence(on={0: 2, 1: 4, 2: 8}, off={0: 2, 1: 4, 2: 8}, moves=0),
}


class Case:
    """One run of readback_app and what it must show."""

    def __init__(self, name, layout, mode, env=None, redirects=0, fallbacks=0, steered=0,
                 allocations=None, failed=None, asked=None, skipped=(), bytes_type=None,
                 cached_empty=(), scenarios=SCENARIOS, counters=None, count_allocations=True):
        self.name, self.layout, self.mode = name, layout, mode
        # False with the allocation cache on: it serves some allocations without the driver, so
        # the test layer's counts are not readback's decisions any more.
        self.count_allocations = count_allocations
        self.scenarios = tuple(scenarios)
        self.counters = dict(counters or {})  # further statistics counters that must match
        self.env = dict(env or {})
        self.redirects, self.fallbacks = redirects, fallbacks
        self.steered = steered            # an int, or ">0"
        self.allocations = allocations or {}
        self.failed = failed or {}
        self.asked = asked or {}          # scenario -> the type every allocation of it asked for
        self.skipped = set(skipped)
        self.bytes_type = bytes_type      # readback_bytes must equal this type's bytes
        self.cached_empty = list(cached_empty)
        # Filled by run():
        self.rc = None
        self.stdout = self.stderr = ""
        self.seconds = 0.0
        self.checksum = None
        self.report = None
        self.stats = None
        self.problems = []


def cases():
    out = []
    for name, lay in LAYOUTS.items():
        asked = {s: lay.naive for s in SCENARIOS}
        out.append(Case(f"layout {name}", name, "on", redirects=lay.redirects,
                        allocations=lay.on, asked=asked, skipped=lay.skipped,
                        bytes_type=lay.target))
        out.append(Case(f"layout {name}", name, "off", allocations=lay.off, asked=asked,
                        skipped=lay.skipped, cached_empty=lay.cached))
    nv = LAYOUTS["nvidia-bar"]
    nv_asked = {s: nv.naive for s in SCENARIOS}
    # (i) Heap 1 (system RAM: types 0, 2 and 3) holds nothing of the program's own choices, so a
    # 1 KiB limit fails exactly the redirected allocations (mixed-suballoc's twin included): each
    # must fall back to type 4.
    out.append(Case("heap-full fallback", "nvidia-bar", "on",
                    env={"SLIPSTREAM_TEST_HEAP_LIMIT": "1:1K"},
                    fallbacks=nv.redirects, allocations=nv.off, failed={3: nv.redirects},
                    asked=nv_asked, skipped=nv.skipped))
    # (ii) The layer loaded with readback off: what the program asked for, untouched.
    out.append(Case("VK_SLIPSTREAM_READBACK=off", "nvidia-bar", "on",
                    env={"VK_SLIPSTREAM_READBACK": "off"}, allocations=nv.off, asked=nv_asked,
                    skipped=nv.skipped, cached_empty=nv.cached))
    # (iii) Steering reports readback buffers' memoryTypeBits without types 2 and 4, so the
    # naive choice for staging, dedicated and block is type 3 itself (first HV|HC type left):
    # nothing to redirect there. Images and storage buffers are not steered: mixed-suballoc asks
    # 4 and moves on its first use (a twin in 3), linear-image asks 4 and its dedicated memory is
    # still redirected (2 redirects).
    # The optimal-image scenario stays skipped (optimal images accept neither 3 nor 4).
    # hint-then-block chooses its block's type from the (steered) readback buffer, so the
    # program itself asks 3 there: steering's trade-off, the reason it is off by default.
    steer_asked = {"staging": 3, "dedicated": 3, "block": 3, "mixed-suballoc": 4,
                   "linear-image": 4, "hint-then-block": 3}
    out.append(Case("VK_SLIPSTREAM_READBACK_STEER=on", "nvidia-bar", "on",
                    env={"VK_SLIPSTREAM_READBACK_STEER": "on"}, redirects=2, steered=">0",
                    allocations={1: 5, 3: 6, 4: 1}, asked=steer_asked, skipped=nv.skipped))
    # (iv) Under the Khronos validation layer (below the test layer, so it sees lavapipe's real
    # type): the same results, and no validation message.
    for name in ("nvidia-bar", "amd"):
        lay = LAYOUTS[name]
        out.append(Case(f"validation {name}", name, "validation", redirects=lay.redirects,
                        allocations=lay.on, asked={s: lay.naive for s in SCENARIOS},
                        skipped=lay.skipped, bytes_type=lay.target))
    # (v) Evidence from use. The ML blocks stay in N: the only thing moved in them is the block
    # the safety net then reports (readback_moved_gpu_reads).
    for name, ev in EVIDENCE_LAYOUTS.items():
        asked = {s: LAYOUTS[name].naive for s in EVIDENCE}
        moved = {"readback_deferred_moves": ev.moves, "readback_moved_gpu_reads": 1 if ev.moves else 0}
        out.append(Case(f"evidence {name}", name, "on", redirects=ev.moves, allocations=ev.on,
                        asked=asked, scenarios=EVIDENCE, counters=moved))
        out.append(Case(f"evidence {name}", name, "off", allocations=ev.off, asked=asked,
                        scenarios=EVIDENCE))
    # The knob that turns evidence from use off: the seed runtime's blocks stay where they are.
    h200 = EVIDENCE_LAYOUTS["nvidia-h200"]
    out.append(Case("evidence VK_SLIPSTREAM_READBACK_DEFER=off", "nvidia-h200", "on",
                    env={"VK_SLIPSTREAM_READBACK_DEFER": "off"}, allocations=h200.off,
                    asked={s: 4 for s in EVIDENCE}, scenarios=EVIDENCE,
                    counters={"readback_deferred_allocations": 0}))
    for name in ("nvidia-h200", "intel"):
        ev = EVIDENCE_LAYOUTS[name]
        out.append(Case(f"evidence validation {name}", name, "validation", redirects=ev.moves,
                        allocations=ev.on, asked={s: LAYOUTS[name].naive for s in EVIDENCE},
                        scenarios=EVIDENCE, counters={"readback_deferred_moves": ev.moves}))
    # The allocation cache under cached readback (every case above runs with it off, since it
    # changes how many allocations reach the driver): the same redirects, moves and results.
    cache_on = {"VK_SLIPSTREAM_ALLOC_CACHE": "on"}
    out.append(Case("alloc cache on: layout nvidia-bar", "nvidia-bar", "on", env=cache_on,
                    redirects=nv.redirects, asked=nv_asked, skipped=nv.skipped, bytes_type=nv.target,
                    count_allocations=False))
    out.append(Case("alloc cache on: heap-full fallback", "nvidia-bar", "on",
                    env=dict(cache_on, SLIPSTREAM_TEST_HEAP_LIMIT="1:1K"), fallbacks=nv.redirects,
                    asked=nv_asked, skipped=nv.skipped, count_allocations=False))
    for name in ("nvidia-h200", "intel"):
        ev = EVIDENCE_LAYOUTS[name]
        out.append(Case(f"alloc cache on: evidence {name}", name, "on", env=cache_on, redirects=ev.moves,
                        asked={s: LAYOUTS[name].naive for s in EVIDENCE}, scenarios=EVIDENCE,
                        counters={"readback_deferred_moves": ev.moves}, count_allocations=False))
    return out


def base_env(build_dir):
    """The caller's environment without settings that would change what is tested."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VK_SLIPSTREAM_", "SLIPSTREAM_TEST_"))}
    env["VK_ADD_LAYER_PATH"] = os.path.join(os.path.abspath(build_dir), "test_layers")
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    return env


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return {"__error__": str(e)}


def by_type(obj):
    return {int(k): int(v) for k, v in (obj or {}).items()}


def nonzero(d):
    return {k: v for k, v in sorted(d.items()) if v}


def run(case, args, tmpdir, extra_env):
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{case.name}-{case.mode}")
    report_path = os.path.join(tmpdir, tag + "-report.json")
    stats_path = os.path.join(tmpdir, tag + "-stats.json")
    env = slipstream_env.layer_env(case.mode, args.build_dir, base=base_env(args.build_dir),
                                   extra_layers_below=[TEST_LAYER])
    env["SLIPSTREAM_TEST_MEMORY_LAYOUT"] = case.layout
    env["SLIPSTREAM_TEST_MEMORY_REPORT"] = report_path
    env[STATS_VAR] = stats_path
    env["VK_SLIPSTREAM_LOG"] = "info"  # the redirect lines help reading a failure
    env["VK_SLIPSTREAM_ALLOC_CACHE"] = "off"  # the counts are readback's; cases may turn it on
    env.update(case.env)
    if case.mode != "off":
        env.update(extra_env)
    argv = [args.app]
    if case.scenarios != SCENARIOS:
        argv += ["--scenarios", ",".join(case.scenarios)]
    if not run_app.run_program(argv, env, args.timeout, case):
        return case
    case.report = load_json(report_path)
    case.stats = load_json(stats_path)
    check(case)
    return case


def check(case):
    p = case.problems
    if case.rc is not None and case.rc != 0:
        p.append(f"exit status {case.rc}")
    sums = [m.group(1) for m in (CHECKSUM_RE.match(line) for line in case.stdout.splitlines()) if m]
    if len(sums) != 1:
        p.append(f"expected one `checksum:` line, found {len(sums)}")
    else:
        case.checksum = sums[0]
    # Validation messages, by the correctness suite's rule (run_app.py).
    messages = run_app.Run(case.mode)
    messages.stdout, messages.stderr = case.stdout, case.stderr
    if messages.message_lines():
        p.append(f"{len(messages.message_lines())} validation message line(s)")

    # Every scenario ran and verified its data, asking for the expected types.
    lines = {}
    for line in case.stdout.splitlines():
        m = SCENARIO_RE.match(line)
        if m:
            lines[m.group(1)] = m.group(2)
    for s in case.scenarios:
        text = lines.get(s)
        if text is None:
            p.append(f"scenario {s} printed nothing")
        elif s in case.skipped:
            if not text.startswith("skipped"):
                p.append(f"scenario {s} ran, expected it skipped: {text}")
        elif text.startswith("skipped"):
            p.append(f"scenario {s} was {text}")
        elif not text.endswith("... ok"):
            p.append(f"scenario {s}: {text}")
        elif s in case.asked:
            types = [int(t) for t in TYPE_RE.findall(text)]
            if not types or any(t != case.asked[s] for t in types):
                p.append(f"scenario {s} asked types {types}, expected {case.asked[s]}")

    # The test layer's report: which types the allocations really reached.
    rep = case.report
    if rep is None:
        p.append("the test layer wrote no report: was it loaded?")
    elif "__error__" in rep:
        p.append(f"report does not parse: {rep['__error__']}")
    else:
        if rep.get("layout") != case.layout:
            p.append(f"report layout {rep.get('layout')!r}, expected {case.layout!r}")
        got = nonzero(by_type(rep.get("allocations_by_type")))
        if not case.count_allocations:
            pass
        elif got != nonzero(case.allocations):
            p.append(f"allocations by type {got}, expected {nonzero(case.allocations)}")
        failed = nonzero(by_type(rep.get("failed_by_type")))
        if case.count_allocations and failed != nonzero(case.failed):
            p.append(f"failed allocations by type {failed}, expected {nonzero(case.failed)}")
        for t in case.cached_empty:
            if got.get(t):
                p.append(f"{got[t]} allocation(s) in cached type {t}, which the program never "
                         f"asks for")

    # Slipstream's statistics.
    stats = case.stats
    if case.mode == "off":
        if stats is not None:
            p.append("Slipstream wrote a stats file in a run without it")
        return
    devices = stats.get("devices") if isinstance(stats, dict) else None
    if stats is None:
        p.append(f"Slipstream wrote no stats file ({STATS_VAR}): was it loaded?")
        return
    if not isinstance(devices, list) or len(devices) != 1:
        p.append(f"stats file: expected one device, got {stats!r:.200}")
        return
    dev = devices[0]

    def counter(name, want):
        got = dev.get(name)
        ok = (isinstance(got, int) and got > 0) if want == ">0" else got == want
        if not ok:
            p.append(f"{name} = {got}, expected {want}")

    counter("readback_redirects", case.redirects)
    counter("readback_bind_mismatches", 0)
    counter("readback_fallbacks", case.fallbacks)
    counter("readback_steered", case.steered)
    for name, want in case.counters.items():
        counter(name, want)
    if case.bytes_type is not None and rep and "__error__" not in rep:
        target_bytes = by_type(rep.get("bytes_by_type")).get(case.bytes_type, 0)
        counter("readback_bytes", target_bytes)  # everything in the target came by redirect


def summary(case):
    if case.problems:
        return "; ".join(case.problems)
    rep = case.report or {}
    dev = ((case.stats or {}).get("devices") or [{}])[0]
    parts = []
    if case.mode != "off":
        parts.append(f"{dev.get('readback_redirects')} redirects")
        if dev.get("readback_fallbacks"):
            parts.append(f"{dev.get('readback_fallbacks')} fallbacks")
        if dev.get("readback_steered"):
            parts.append(f"{dev.get('readback_steered')} steered")
    parts.append(f"types {nonzero(by_type(rep.get('allocations_by_type')))}")
    return ", ".join(parts)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--app", required=True, help="path of readback_app")
    p.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    p.add_argument("--extra-env", action="append", default=[], metavar="VAR=VALUE",
                   help="added to every run with Slipstream loaded (to see the test fail)")
    args = p.parse_args(argv)
    extra = {}
    for item in args.extra_env:
        if "=" not in item:
            p.error(f"--extra-env {item!r}: expected VAR=VALUE")
        k, v = item.split("=", 1)
        extra[k] = v
    args.extra = extra
    return args


def real_device_name(build_dir):
    """The first Vulkan device's name, as slipstream-info reports it without any layer."""
    info = os.path.join(build_dir, "tools", "slipstream-info")
    try:
        p = subprocess.run([info], env=slipstream_env.layer_env("off", build_dir), capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in p.stdout.splitlines():
        if line.startswith("device 0: "):
            return line[len("device 0: "):].split(" (API")[0]
    return None


def main(argv):
    args = parse_args(argv)
    if not os.access(args.app, os.X_OK):
        print(f"readback_test.py: {args.app} is not an executable", file=sys.stderr)
        return 2
    if args.extra:
        print(f"note: --extra-env {args.extra} in every run with Slipstream loaded")
    start = time.monotonic()
    todo = cases()
    # The expectations assume lavapipe below the test layer: one real memory type that every
    # resource accepts, so each fake layout's image rules are presented as written. On a real
    # GPU, optimal images accept only the real types the driver allows (NVIDIA: its plain
    # DEVICE_LOCAL type), which only the NVIDIA layouts describe faithfully: run those there.
    real = real_device_name(args.build_dir)
    if real and "llvmpipe" not in real:
        todo = [c for c in todo if c.layout.startswith("nvidia")]
        print(f"note: real device {real!r}: only the NVIDIA layouts' expectations hold here; "
              f"running {len(todo)} cases")
    with tempfile.TemporaryDirectory(prefix="slipstream-readback-") as tmpdir:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            done = list(pool.map(lambda c: run(c, args, tmpdir, args.extra), todo))

    # The data does not depend on the layout or the layer: runs of the same scenarios agree.
    groups = {}
    for c in done:
        if c.checksum:
            groups.setdefault((c.scenarios, frozenset(c.skipped)), {}).setdefault(c.checksum, []).append(c)
    for sums in groups.values():
        if len(sums) > 1:
            for c in (c for cs in sums.values() for c in cs):
                c.problems.append("checksum differs from other runs of the same scenarios: " +
                                  ", ".join(f"{k} ({len(v)} runs)" for k, v in sums.items()))

    failed = [c for c in done if c.problems]
    for c in failed:
        print(f"--- {c.name} [{c.mode}] exit status {c.rc}; stdout:")
        run_app.print_block(c.stdout)
        print(f"--- {c.name} [{c.mode}] stderr:")
        run_app.print_block(c.stderr[-4000:])
    for c in done:
        status = "FAIL" if c.problems else "PASS"
        print(f"{status} {c.name} [{c.mode}]: checksum {c.checksum or '-'}, {c.seconds:.2f} s: "
              f"{summary(c)}")
    print(f"{len(done) - len(failed)} of {len(done)} cases passed in "
          f"{time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
