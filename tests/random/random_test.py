#!/usr/bin/env python3
"""The differential random-program tester: runs random_program for each seed without the layer
and under it in several configurations, and fails on any difference.

    random_test.py --build-dir B [--seeds LIST | --count N --start S] [--ops K] [--long]
                   [--jobs J] [--shrink] [--timeout S] [--configs NAMES] [--expect-fused N]
                   [--expect-released N] [--env VAR=VALUE ...] [--share-queues] [--extra-queues]
                   [--repeat-resubmits] [--batch N]

For each seed, random_program (tests/random) builds a valid Vulkan program of compute and
transfer work and prints `checksum: <16 hex>` over everything the host read. A seed passes when
every configuration below prints the same checksum as "off" (no layer), exits 0, prints no
validation message (tests/apps/run_app.py's MESSAGE_MARKERS), does not crash, finishes within
the timeout (a hang), and, under the layer, writes its statistics file (the layer was loaded).

Over all seeds, the fusing configurations must really have fused (command_buffers_fused summed
over the seeds >= --expect-fused, default 1) and "fuse_off" must not have: a tester that
silently bypasses the layer or ignores a setting fails. The armed-launch configurations ("arm",
"arm_validation"; run only when --configs names them) must have released armed replays (arm_released summed over the seeds >=
--expect-released, default 0). The waits of resets and frees for a command buffer's last
submission to show done (native_waits, src/submit/submit/native_settle.h) are printed: the
programs are valid, so each is lavapipe showing a submission's semaphore signaled a moment
before the layer's timeline value of the same submission (8 and 12 in two sets of 2,100 program
runs).

With --shrink, each failing (seed, configuration) is reduced: first the fewest leading actions
(--ops) that still fail, then single actions left out (--drop) while it still fails; the
smallest failing command line is printed.

--long: 2000 seeds of 120 actions (for a real GPU; combine with --jobs). Each seed's result is
printed as soon as it and the seeds before it finish; stopped by SIGINT (`timeout --signal=INT`),
the run reports the seeds that finished and leaves out those in flight.
--batch N: each configuration runs up to N consecutive seeds in one process, on one device
(random_program --count): on a GPU, creating the device costs more than a program runs, and
processes that create devices at once wait for each other (an H100 ran 14 at a time no faster
than one). A seed that every configuration finished cleanly there, with no layer's checksum,
passes; any other runs again alone and is judged as without --batch, and one that failed only
in its batch still fails (state that one program left to the next is a bug too).
Exit status: 0 all passed, 1 a failure, 2 bad usage.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "apps"))
import slipstream_env  # noqa: E402
from run_app import MESSAGE_MARKERS, IGNORED_PREFIX, CHECKSUM_RE, STATS_VAR  # noqa: E402

# name, slipstream_env mode, extra environment. "off" is the reference.
CONFIGS = [
    ("off", "off", {}),
    ("defaults", "on", {}),
    ("fuse_off", "on", {"VK_SLIPSTREAM_FUSE": "off"}),
    ("lazy_on", "on", {"VK_SLIPSTREAM_LAZY_RECORD": "on"}),
    ("lazy_off", "on", {"VK_SLIPSTREAM_LAZY_RECORD": "off"}),
    ("defer_0", "on", {"VK_SLIPSTREAM_MAX_DEFER_US": "0"}),
    ("no_elide", "on", {"VK_SLIPSTREAM_ELIDE_BARRIERS": "off"}),
    # Armed launches (off by default): a replay armed after each latency-path submission,
    # released or disarmed by what the program does next.
    ("arm", "on", {"VK_SLIPSTREAM_ARM": "timeline"}),
    # The allocation cache off under validation: the layer answers idle and fence waits it
    # knows are done without calling the driver, so the validation layer below it never sees
    # those waits complete, and a recycled allocation (the same VkDeviceMemory to it) written
    # again then reads as a write-after-write hazard against work it still thinks runs (seen
    # on seeds 26 and 31 about one run in two; never with ALLOC_CACHE=off or SPIN=off). The
    # other configurations cover the cache.
    # SPIN=off as well: waits the layer answers itself (SPIN's known-signaled fences) never reach
    # the validation layer either, so work it saw submitted stays running in its eyes; a
    # command buffer recorded again then reads as a hazard against its own earlier, finished
    # recording. Seed 49 of random.shared_queue gave such a report once in fresh-ci
    # (WRITE_AFTER_WRITE against reset_no 9 of the same command buffer, its checksum right),
    # not reproduced in 240 runs here.
    ("validation", "validation", {"VK_SLIPSTREAM_ALLOC_CACHE": "off", "VK_SLIPSTREAM_SPIN": "off"}),
    ("arm_validation", "validation",
     {"VK_SLIPSTREAM_ARM": "timeline", "VK_SLIPSTREAM_ALLOC_CACHE": "off", "VK_SLIPSTREAM_SPIN": "off"}),
    # The validation layer without Slipstream: a message here means the generated program is
    # invalid (a bug of the tester's hazard model), not the layer's.
    ("validation_alone", "off+validation", {}),
]
EXTRA_QUEUES_LAYER = "VK_LAYER_SLIPSTREAM_test_extra_queues"
FUSING = ("defaults", "lazy_on", "lazy_off", "defer_0", "no_elide", "arm")
# The fixed seeds ctest runs (tests/random/CMakeLists.txt passes them). Known failures are
# listed in docs/random-tester.md, never here.


HAZARD_QUEUE_RE = re.compile(r"SYNC-HAZARD-[A-Z]+-RACING-[A-Z]+ \] Object 0: handle = (0x[0-9a-f]+), "
                             r"type = VK_OBJECT_TYPE_QUEUE;")
PRIOR_QUEUE_RE = re.compile(r"Access info \(prior_usage: .*?queue: VkQueue (0x[0-9a-f]+)\[")


def self_race(line):
    """Whether `line` reports a race between a queue and itself: a RACING hazard whose earlier
    access was made on the very queue that submits. Submission order orders every two batches
    of one queue, so no such race exists; the 1.3.239 validation layer reports them once
    another queue has waited on one of the queue's signals (docs/random-tester.md)."""
    submitting, prior = HAZARD_QUEUE_RE.search(line), PRIOR_QUEUE_RE.search(line)
    return bool(submitting and prior and submitting.group(1) == prior.group(1))


class Run:
    def __init__(self, config):
        self.config = config
        self.rc = None
        self.checksum = None
        self.problems = []
        self.stats = {}
        self.output = ""
        self.seconds = 0.0
        self.message_problem = None  # the problem that says the validation layer reported
        self.exit_problem = None  # exit status 1 after the checksum: messages were reported
        self.misread = False  # messages set aside: validation_alone reported this program too
        self.self_races = []  # reports of a race between a queue and itself (self_race), set aside
        self.batch = {}  # with random_program --count: seed -> (checksum, validation messages)


BATCH_RE = re.compile(r"^batch: seed (\d+) checksum ([0-9a-f]{16}) messages (\d+)$")
BATCH_BEGIN_RE = re.compile(r"^batch: seed (\d+) begins$")


def run_once(args, seed, config, ops=None, drop=None, count=1):
    """One run of random_program; with count > 1, of seeds seed .. seed+count-1 on one device
    (random_program --count): run.batch then maps each seed that finished to (checksum, number of
    validation messages during it)."""
    name, mode, extra = config
    run = Run(name)
    if mode == "off+validation":
        env = slipstream_env.layer_env("off", args.build_dir, extra_layers_below=[slipstream_env.VALIDATION])
        env["VK_LAYER_ENABLES"] = slipstream_env.validation_enables()
        mode = "off"
    else:
        env = slipstream_env.layer_env(mode, args.build_dir)
    env.update(extra)
    if mode != "off":
        for item in args.env:
            k, _, v = item.partition("=")
            env[k] = v
    env.pop(STATS_VAR, None)
    if args.extra_queues:
        # Distinct queues on a driver with fewer (tests/layers/extra_queues), under every layer.
        test_layers = os.path.join(os.path.abspath(args.build_dir), "test_layers")
        slipstream_env.add_bottom_layer(env, EXTRA_QUEUES_LAYER, test_layers)
        env["SLIPSTREAM_TEST_QUEUES"] = str(args.queues)
    argv = [args.program, "--seed", str(seed), "--ops", str(ops if ops is not None else args.ops),
            "--queues", str(args.queues)] + (["--share-queues"] if args.share_queues else []) + \
        (["--repeat-resubmits"] if args.repeat_resubmits else []) + \
        (["--count", str(count)] if count > 1 else [])
    if drop:
        argv += ["--drop", ",".join(str(i) for i in sorted(drop))]
    with tempfile.TemporaryDirectory(prefix="slipstream-random-") as tmp:
        stats_file = os.path.join(tmp, "stats.json")
        if mode != "off":
            env[STATS_VAR] = stats_file
        start = time.monotonic()
        try:
            p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=args.timeout * count)
            run.rc = p.returncode
            out, err = p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            out, err = e.stdout or b"", e.stderr or b""
            run.problems.append(f"hang: no exit within {args.timeout * count:g} s")
        run.seconds = time.monotonic() - start
        run.output = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
        for m in (BATCH_RE.match(l.strip()) for l in run.output.splitlines()):
            if m:
                run.batch[int(m.group(1))] = (m.group(2), int(m.group(3)))
        sums = [m.group(1) for m in (CHECKSUM_RE.match(l.strip()) for l in run.output.splitlines()) if m]
        if len(sums) == 1:
            run.checksum = sums[0]
        elif run.rc is not None:
            run.problems.append(f"{len(sums)} checksum lines")
        if run.rc is not None and run.rc != 0:
            what = "crash (signal %d)" % -run.rc if run.rc < 0 else f"exit status {run.rc}"
            run.problems.append(what)
            # (After its checksum line, random_program exits 1 for validation messages alone.)
            run.exit_problem = what if run.rc == 1 and run.checksum else None
        messages = [l for l in run.output.splitlines()
                    if any(m in l for m in MESSAGE_MARKERS) and not l.startswith(IGNORED_PREFIX)]
        run.self_races = [l for l in messages if self_race(l)]
        messages = [l for l in messages if not self_race(l)]
        if run.self_races and not messages and run.exit_problem:
            run.problems.remove(run.exit_problem)  # the exit status said only that
            run.exit_problem = None
        if messages:
            run.message_problem = f"{len(messages)} validation message line(s): {messages[0][:300]}"
            run.problems.append(run.message_problem)
        if mode != "off" and run.rc is not None:
            try:
                with open(stats_file, encoding="utf-8") as f:
                    devices = json.load(f).get("devices") or []
                for d in devices:
                    for k, v in d.items():
                        if isinstance(v, int):
                            run.stats[k] = run.stats.get(k, 0) + v
                if not devices:
                    run.problems.append("the layer's statistics name no device")
            except (OSError, ValueError) as e:
                run.problems.append(f"no statistics from the layer (was it loaded?): {e}")
    return run


def check_seed(args, seed, configs, ops=None, drop=None):
    """Runs every configuration; returns (runs, failed config names)."""
    runs = [run_once(args, seed, c, ops, drop) for c in configs]
    reference = runs[0].checksum if runs and runs[0].config == "off" else None
    for r in runs[1:]:
        if reference and r.checksum and r.checksum != reference:
            r.problems.append(f"checksum {r.checksum} differs from no layer's {reference}")
    alone = next((r for r in runs if r.config == "validation_alone"), None)
    if args.tolerate_validation_misreads and alone and alone.message_problem:
        # The validation layer without Slipstream reports this program: its messages, and those
        # of the layer over it, judge nothing (everything else still does).
        for r in runs:
            if r.message_problem and "validation" in r.config:
                r.problems.remove(r.message_problem)
                if r.exit_problem:
                    r.problems.remove(r.exit_problem)
                r.misread = True
    return runs, [r.config for r in runs if r.problems]


def check_chunk(args, first, count, configs):
    """Seeds first .. first+count-1 (--batch): each configuration runs them all on one device
    (a GPU driver spends ~0.2 s creating one, far more than a program takes). A seed passes
    there when every configuration finished it with no validation message of its own (reports
    of a queue racing itself set aside, as in run_once), its checksum equal to no layer's, and
    no process broke in a way its lines cannot account for (a crash, a hang, no statistics).
    Every other seed runs again alone (check_seed), which judges and reports it as without
    --batch; a seed that failed in the batch but passes alone still fails, with what the batch
    saw. Returns [(seed, runs, failed config names)]."""
    if count == 1:
        return [(first, *check_seed(args, first, configs))]
    batches = [run_once(args, first, c, count=count) for c in configs]
    seeds = range(first, first + count)
    # Per batch: each seed's validation message lines (from its "begins" line on stderr; those
    # before the first, at device creation, count for the first seed, those after the last
    # program, at device destruction, for the last), and whether the process broke beyond
    # messages (then the seeds it did not finish are suspect, all of them where it finished
    # every one).
    own, races, broken = [], [], []
    for b in batches:
        lines, cur = {first: []}, first
        for line in b.output.splitlines():
            m = BATCH_BEGIN_RE.match(line.strip())
            if m:
                cur = int(m.group(1))
                lines.setdefault(cur, [])
            elif any(k in line for k in MESSAGE_MARKERS) and not line.startswith(IGNORED_PREFIX):
                lines[cur].append(line)
        own.append({s: [l for l in lines.get(s, []) if not self_race(l)] for s in seeds})
        races.append(sum(1 for s in seeds for l in lines.get(s, []) if self_race(l)))
        extra = [x for x in b.problems if x not in (b.message_problem, b.exit_problem)]
        broken.append("; ".join(extra) if extra else None)
    results = []
    for seed in seeds:
        seen = [b.batch.get(seed) for b in batches]
        reference = seen[0][0] if seen[0] else None
        why = {}
        for i, (b, got) in enumerate(zip(batches, seen)):
            if not got:
                why[b.config] = broken[i] or "did not finish"
            elif own[i][seed]:
                why[b.config] = f"{len(own[i][seed])} validation message line(s): {own[i][seed][0][:300]}"
            elif got[0] != reference:
                why[b.config] = f"checksum {got[0]} differs from no layer's {reference}"
            elif broken[i] and len(b.batch) == count:
                why[b.config] = broken[i]
        if not why:
            runs = []
            for b, got in zip(batches, seen):
                r = Run(b.config)
                r.checksum = got[0]
                r.seconds = b.seconds / count
                runs.append(r)
            results.append((seed, runs, []))
            continue
        runs, failed = check_seed(args, seed, configs)
        for b in batches:
            r = next(r for r in runs if r.config == b.config)
            if b.config in why and not r.problems and not r.misread:
                r.problems.append(f"failed in a batch of {count} from seed {first} ({why[b.config]}), passed alone")
                r.output = b.output
                failed.append(r.config)
        results.append((seed, runs, failed))
    # The processes' statistics and set-aside reports count for the chunk's first seed (all are
    # summed over the seeds).
    for b, n in zip(batches, races):
        r = next(r for r in results[0][1] if r.config == b.config)
        if not r.stats:
            r.stats = b.stats
        r.self_races += ["(in the batch)"] * n
    return results


def command_line(args, seed, config, ops, drop):
    name, mode, extra = config
    env = " ".join(f"{k}={v}" for k, v in extra.items())
    line = f"{args.program} --seed {seed} --ops {ops} --queues {args.queues}"
    if args.share_queues:
        line += " --share-queues"
    if args.repeat_resubmits:
        line += " --repeat-resubmits"
    if drop:
        line += " --drop " + ",".join(str(i) for i in sorted(drop))
    how = {"off": "DISABLE_SLIPSTREAM=1", "on": "tools/slipstream run --",
           "validation": "tools/slipstream run --validation --",
           "off+validation": (f"DISABLE_SLIPSTREAM=1 VK_INSTANCE_LAYERS={slipstream_env.VALIDATION} "
                              f"VK_LAYER_ENABLES={slipstream_env.validation_enables()}")}[mode]
    if mode in ("off", "off+validation"):
        full = f"{how} {line}"
    else:
        full = f"{env + ' ' if env else ''}{how} {line}"
    if args.extra_queues:
        full += (f"  (over {EXTRA_QUEUES_LAYER}, SLIPSTREAM_TEST_QUEUES={args.queues}: the folder of every layer "
                 "above before BUILD/test_layers on VK_ADD_LAYER_PATH, the layer last on VK_INSTANCE_LAYERS)")
    return full


def shrink(args, seed, config):
    """The smallest (ops, drop) that still fails `config` against no layer."""
    pair = [CONFIGS[0], config] if config[0] != "off" else [CONFIGS[0]]

    def fails(ops, drop):
        _, failed = check_seed(args, seed, pair, ops, drop)
        return bool(failed)

    ops = args.ops
    lo, hi = 0, ops  # fails(hi); find the smallest prefix that fails
    while lo < hi:
        mid = (lo + hi) // 2
        if fails(mid, set()):
            hi = mid
        else:
            lo = mid + 1
    ops = hi
    drop = set()
    for i in reversed(range(ops)):
        if fails(ops, drop | {i}):
            drop.add(i)
    return ops, drop


def report_seed(seed, runs, failed, failures, quiet=False):
    """Prints one seed's result (and the tail of each failing run); adds its failures. With
    `quiet`, a seed that passed prints nothing."""
    if quiet and not failed and not any(r.misread or r.self_races for r in runs):
        return
    status = "FAIL " + ",".join(failed) if failed else "pass"
    if any(r.misread for r in runs):
        status += " (validation messages not judged: validation_alone reports this program)"
    races = sum(len(r.self_races) for r in runs)
    if races:
        status += f" ({races} report(s) of a queue racing itself set aside)"
    times = " ".join(f"{r.config}={r.seconds:.1f}s" for r in runs)
    print(f"seed {seed}: {status} (checksum {runs[0].checksum}; {times})")
    for r in runs:
        if r.problems:
            failures.append((seed, r))
            print(f"  [{r.config}] " + "; ".join(r.problems))
            lines = r.output.strip().splitlines()
            # A crash's stack (tests/common/vk_app.cpp prints it) whole, else the last lines.
            crash = next((i for i, l in enumerate(lines) if l.startswith("fatal signal:")), None)
            for line in (lines[crash:crash + 40] if crash is not None else lines[-15:]):
                print(f"    | {line[:400]}")


def main(argv):
    # A line at a time, also into a pipe or file: a long run stopped by a time limit keeps what
    # it printed (an H200 run under `timeout` lost all of its output to the buffer).
    sys.stdout.reconfigure(line_buffering=True)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--program", help="random_program (default: B/tests/random/random_program)")
    p.add_argument("--seeds", help="comma-separated seeds")
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--start", type=int, default=1)
    p.add_argument("--ops", type=int, default=60)
    # Two queues where the device has them. On the H200 (16 queues in its first family) the
    # 1.3.239 validation layer reported cross-queue races in some generated two-queue programs
    # with Slipstream and without it alike (validation_alone); --queues 1 leaves them out.
    # Their likely cause, its pairing of timeline waits (docs/random-tester.md), the runner now
    # avoids; not run there again yet.
    p.add_argument("--queues", type=int, default=2, help="queues the program may use (default 2)")
    p.add_argument("--repeat-resubmits", action="store_true",
                   help="resubmit actions repeat 1-5 times with a wait each (random_program --repeat-resubmits)")
    p.add_argument("--share-queues", action="store_true",
                   help="queues the device lacks share its last one (random_program --share-queues)")
    p.add_argument("--extra-queues", action="store_true",
                   help="every configuration over the test layer that presents --queues distinct queues per "
                        "family on a driver with fewer (lavapipe): the layers above see two queues, the work "
                        "runs on the driver's one in submission order")
    p.add_argument("--tolerate-validation-misreads", action="store_true",
                   help="where validation_alone (the validation layer without Slipstream) reports a program, "
                        "the messages of every validation configuration of that seed judge nothing (the 1.3.239 "
                        "layer misreads some valid two-queue programs); such seeds are counted and listed")
    p.add_argument("--max-misreads", type=int, default=None,
                   help="with --tolerate-validation-misreads: fail when more seeds than this had their "
                        "validation messages set aside (a tester that stops judging fails)")
    p.add_argument("--long", action="store_true", help="2000 seeds of 120 actions")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--batch", type=int, default=1,
                   help="run up to this many consecutive seeds in one process per configuration, on one "
                        "device (check_chunk); seeds that fail there run again alone")
    p.add_argument("--shrink", action="store_true")
    p.add_argument("--quiet", action="store_true",
                   help="print only the seeds that failed or had messages set aside, and the summary "
                        "(a test log that keeps only its first lines then shows the failure)")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--configs", help="comma-separated subset of: " + ",".join(c[0] for c in CONFIGS))
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                   help="set in every configuration under the layer (for example a test-only "
                        "setting that breaks the layer on purpose, to see the tester fail)")
    p.add_argument("--expect-fused", type=int, default=1,
                   help="command_buffers_fused summed over the seeds, each fusing configuration")
    p.add_argument("--expect-released", type=int, default=0,
                   help="arm_released summed over the seeds, each armed-launch configuration")
    args = p.parse_args(argv)
    args.program = args.program or os.path.join(args.build_dir, "tests", "random", "random_program")
    if not os.path.exists(args.program):
        p.error(f"{args.program} does not exist (build the random_program target)")
    if args.long:
        args.count, args.ops = 2000, 120
    seeds = [int(s) for s in args.seeds.split(",") if s] if args.seeds else \
        list(range(args.start, args.start + args.count))
    # By default all but armed launches' (off by default in the layer; --repeat-resubmits
    # programs are where they engage): name them in --configs.
    configs = [c for c in CONFIGS if not c[0].startswith("arm")]
    if args.configs:
        names = args.configs.split(",")
        unknown = [n for n in names if n not in {c[0] for c in CONFIGS}]
        if unknown:
            p.error(f"unknown configurations {unknown}")
        configs = [CONFIGS[0]] + [c for c in CONFIGS[1:] if c[0] in names]

    start = time.monotonic()
    failures = []
    fused = {c[0]: 0 for c in configs}
    released = {c[0]: 0 for c in configs}  # armed replays released (the arm configurations)
    native_waits = {c[0]: 0 for c in configs}  # waits for command buffers the driver ran (native_settle.h)
    finished = 0
    misread_seeds = []
    # Each seed's lines as soon as it and the seeds before it are done: a run stopped by a time
    # limit (SIGINT, as `timeout --signal=INT` sends) keeps every seed that finished, and says
    # how far it got. The seeds in flight then are left out, not counted as failures.
    chunks = []  # (first seed, count): runs of consecutive seeds, at most --batch long
    for seed in seeds:
        if chunks and chunks[-1][0] + chunks[-1][1] == seed and chunks[-1][1] < max(1, args.batch):
            chunks[-1] = (chunks[-1][0], chunks[-1][1] + 1)
        else:
            chunks.append((seed, 1))
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        for seed, runs, failed in (r for chunk in pool.map(lambda c: check_chunk(args, *c, configs), chunks)
                                   for r in chunk):
            finished += 1
            for r in runs:
                fused[r.config] += r.stats.get("command_buffers_fused", 0)
                released[r.config] += r.stats.get("arm_released", 0)
                native_waits[r.config] += r.stats.get("native_waits", 0)
            report_seed(seed, runs, failed, failures, args.quiet)
            if any(r.misread for r in runs):
                misread_seeds.append(seed)
    except KeyboardInterrupt:
        # A second interrupt (`timeout` and a shell both passing one on) must not cut the summary.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"random_test: interrupted after {finished} of {len(seeds)} seed(s); the seeds in flight are left out")
        pool.shutdown(wait=False, cancel_futures=True)
        seeds = seeds[:finished]
    else:
        pool.shutdown()
    problems = []
    for name in fused:
        if name in FUSING and fused[name] < args.expect_fused:
            problems.append(f"configuration {name}: command_buffers_fused = {fused[name]} over all "
                            f"seeds, expected >= {args.expect_fused} (fusion did not engage)")
        if name.startswith("arm") and released[name] < args.expect_released:
            problems.append(f"configuration {name}: arm_released = {released[name]} over all seeds, "
                            f"expected >= {args.expect_released} (arming did not engage)")
        if name == "fuse_off" and fused[name] != 0:
            problems.append(f"configuration fuse_off fused {fused[name]} command buffers")
    if args.max_misreads is not None and len(misread_seeds) > args.max_misreads:
        problems.append(f"{len(misread_seeds)} seeds had their validation messages set aside "
                        f"({','.join(map(str, misread_seeds))}), more than --max-misreads {args.max_misreads}")
    for line in problems:
        print("FAIL: " + line)
    print("fused command buffers per configuration: " +
          ", ".join(f"{k} {v}" for k, v in fused.items() if k != "off"))
    if any(native_waits.values()):
        print("native waits (a reset or free that waited for its command buffer's submission to show done): " +
              ", ".join(f"{k} {v}" for k, v in native_waits.items() if v))
    if any(k.startswith("arm") for k in released):
        print("armed replays released: " + ", ".join(f"{k} {v}" for k, v in released.items() if k.startswith("arm")))

    if args.shrink:
        done = set()
        for seed, r in failures:
            if (seed, r.config) in done or r.config == "off":
                continue
            done.add((seed, r.config))
            config = next(c for c in CONFIGS if c[0] == r.config)
            ops, drop = shrink(args, seed, config)
            print(f"smallest failing program for seed {seed} [{r.config}]: {ops} actions, "
                  f"{len(drop)} left out:\n  {command_line(args, seed, config, ops, drop)}\n"
                  f"  (compare with: {command_line(args, seed, CONFIGS[0], ops, drop)})")

    seconds = time.monotonic() - start
    bad = len({seed for seed, _ in failures})
    misread = f", {len(misread_seeds)} with validation messages not judged" if misread_seeds else ""
    print(f"random_test: {len(seeds)} seed(s), {len(configs)} configuration(s), {bad} failing{misread}, "
          f"{seconds:.0f} s")
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
