#!/usr/bin/env python3
"""Runs one correctness-suite program once per mode and compares the runs.

    run_app.py --build-dir B --modes off,on,validation [--expect-validation-messages]
               [--expect-message REGEX ...] [--timeout S] -- <program> [args...]

Each mode's environment comes from tools/slipstream_env.py (layer_env). A run passes when:
  * it finishes within the timeout and prints exactly one `checksum: <16 hex>` line;
  * it exits 0 and prints no validation message (lines containing "Validation Error",
    "Validation Warning", "SYNC-HAZARD" or "validation:");
  * in every mode but "off" the layer was really loaded: the JSON file the layer writes at
    vkDestroyDevice to $VK_SLIPSTREAM_STATS_FILE exists, parses, and has a non-empty list
    under "devices" (SLIPSTREAM_SUITE_SKIP_STATS_CHECK=1 skips this while the layer does
    not write it yet);
  * in every mode but "off", each --expect-stat NAME>=N (or NAME==N, NAME<=N) holds for the
    counter NAME summed over the devices of the file: the features the program exercises
    really engaged (spins, idle shortcuts, ...), so a layer that silently stopped working
    fails.
and the checksums of all modes are identical.

With --expect-validation-messages (the canary), the "validation" run must instead exit
with status 1 (vkapp::finish's answer to validation messages) and print at least one
validation message line, and each --expect-message REGEX must match some output line; the
other modes must still pass as above (no validation layer there, so nothing is reported).

In "validation" mode the driver also checks that slipstream_env turns on the validation layer's
queue-submit-time synchronization validation (VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT
in VK_LAYER_ENABLES): without it, the 1.3.239 layer checks hazards only within each command
buffer, not across submissions, which is where a layer that batches submissions could break
things.

With --layout NAME, every mode (including "off") runs over the memory-layout test layer
(VK_LAYER_SLIPSTREAM_test_memory_layout, tests/layers, under Slipstream and over the validation
layer: the loader stacks in manifest discovery order, and the test layers' folder comes after
Slipstream's and before the system's), which presents layout NAME (tests/unit/memory_layouts.h) on the real device: memory
policy then meets types lavapipe lacks (device-local-only memory, for one).

With --driver-cost SPEC, every mode (including "off") runs over the driver-cost test layer
(VK_LAYER_SLIPSTREAM_test_driver_cost, tests/layers, under Slipstream, over the validation layer),
which makes the driver calls SPEC names cost CPU time (SLIPSTREAM_TEST_DRIVER_COST's format):
the layer's adaptive decisions then meet a driver as slow as a GPU's on lavapipe.

With --extra-queues N, every mode runs over the extra-queues test layer
(VK_LAYER_SLIPSTREAM_test_extra_queues, tests/layers, under Slipstream and the validation layer:
tools/slipstream_env.py add_bottom_layer), which presents N queues per family over the device's
fewer: programs that use every queue meet distinct queues on lavapipe.

With --skip-if REGEX, a run whose output has a line matching it (the program could not run
what the test needs on this device, and said so) ends the test: the driver prints
"SKIPPED: <that line>" (ctest's SKIP_REGULAR_EXPRESSION) and exits 0.

Exit status: 0 if every mode passed, 1 otherwise (2 on bad usage).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

MESSAGE_MARKERS = ("Validation Error", "Validation Warning", "SYNC-HAZARD", "validation:")
# vk_app's messenger prints the validation layer's one self-diagnosed bug this way (see
# tests/common/vk_app.cpp); it is not a finding about the program.
IGNORED_PREFIX = "ignored validation-layer self-report:"
CHECKSUM_RE = re.compile(r"^checksum: ([0-9a-f]{16})$")
QUEUE_SUBMIT_CHECK = "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT"
STATS_VAR = "VK_SLIPSTREAM_STATS_FILE"
ARGS_ENV = []  # --env VAR=VALUE items
LAYOUT = []  # --layout NAME
MEMORY_LAYER = "VK_LAYER_SLIPSTREAM_test_memory_layout"
DRIVER_COST = []  # --driver-cost SPEC
DRIVER_COST_LAYER = "VK_LAYER_SLIPSTREAM_test_driver_cost"
EXTRA_QUEUES = []  # --extra-queues N
EXTRA_QUEUES_LAYER = "VK_LAYER_SLIPSTREAM_test_extra_queues"
SKIP_STATS_VAR = "SLIPSTREAM_SUITE_SKIP_STATS_CHECK"


def parse_args(argv):
    if "--" not in argv:
        print("run_app.py: expected `-- <program> [args...]`", file=sys.stderr)
        sys.exit(2)
    split = argv.index("--")
    ours, program = argv[:split], argv[split + 1:]
    if not program:
        print("run_app.py: no program given after `--`", file=sys.stderr)
        sys.exit(2)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--modes", default="off,on,validation")
    p.add_argument("--expect-validation-messages", action="store_true")
    p.add_argument("--expect-message", action="append", default=[], metavar="REGEX",
                   help="with --expect-validation-messages: a line of the validation run "
                        "must match this (repeatable)")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--expect-stat", action="append", default=[], metavar="NAME>=N",
                   help="in every mode but off, the layer's counter NAME (summed over "
                        "devices) must satisfy this; >=, == or <= (repeatable)")
    p.add_argument("--skip-if", metavar="REGEX",
                   help="a program output line matching this skips the test (SKIPPED: ...)")
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                   help="set in every mode's environment (repeatable)")
    p.add_argument("--layout", metavar="NAME",
                   help="run over the memory-layout test layer presenting layout NAME")
    p.add_argument("--driver-cost", metavar="SPEC",
                   help="run over the driver-cost test layer with SLIPSTREAM_TEST_DRIVER_COST=SPEC")
    p.add_argument("--extra-queues", metavar="N", type=int,
                   help="run over the extra-queues test layer, N queues per family")
    args = p.parse_args(ours)
    args.modes = [m for m in args.modes.split(",") if m]
    # SLIPSTREAM_SUITE_MODES narrows the modes run (the ThreadSanitizer stage leaves out the
    # validation layer, whose own threads are not instrumented).
    only = os.environ.get("SLIPSTREAM_SUITE_MODES")
    if only:
        args.modes = [m for m in args.modes if m in only.split(",")]
    for m in args.modes:
        if m not in slipstream_env.MODES:
            p.error(f"unknown mode {m!r}; expected some of {','.join(slipstream_env.MODES)}")
    if args.expect_message and not args.expect_validation_messages:
        p.error("--expect-message needs --expect-validation-messages")
    if args.expect_validation_messages and "validation" not in args.modes:
        p.error("--expect-validation-messages needs the validation mode in --modes")
    try:
        args.expect_stat = [parse_stat_expectation(e) for e in args.expect_stat]
    except ValueError as e:
        p.error(str(e))
    args.program = program
    ARGS_ENV.extend(args.env)
    if args.layout:
        LAYOUT.append(args.layout)
    if args.driver_cost:
        DRIVER_COST.append(args.driver_cost)
    if args.extra_queues:
        EXTRA_QUEUES.append(args.extra_queues)
    return args


def run_program(argv, env, timeout, into):
    """Runs argv, filling into.rc, .stdout, .stderr, .seconds and .problems (timeouts, a
    program that cannot start). Returns False when it could not run at all."""
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
        into.rc = proc.returncode
        into.stdout = proc.stdout.decode("utf-8", "replace")
        into.stderr = proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        into.stdout = (e.stdout or b"").decode("utf-8", "replace")
        into.stderr = (e.stderr or b"").decode("utf-8", "replace")
        into.problems.append(f"timed out after {timeout:g} s")
    except OSError as e:
        into.problems.append(f"could not run {argv[0]}: {e}")
        return False
    into.seconds = time.monotonic() - start
    return True


def mode_env(mode, build_dir, stats_file):
    below = ([MEMORY_LAYER] if LAYOUT else []) + ([DRIVER_COST_LAYER] if DRIVER_COST else [])
    env = slipstream_env.layer_env(mode, build_dir, extra_layers_below=below)
    if below:
        # After Slipstream's folder: Debian's loader (1.3.239) stacks layers in the order it
        # discovers their manifests.
        test_layers = os.path.join(os.path.abspath(build_dir), "test_layers")
        env["VK_ADD_LAYER_PATH"] = ":".join([p for p in (env.get("VK_ADD_LAYER_PATH"), test_layers) if p])
    if LAYOUT:
        env["SLIPSTREAM_TEST_MEMORY_LAYOUT"] = LAYOUT[0]
    if DRIVER_COST:
        env["SLIPSTREAM_TEST_DRIVER_COST"] = DRIVER_COST[0]
    if EXTRA_QUEUES:
        test_layers = os.path.join(os.path.abspath(build_dir), "test_layers")
        slipstream_env.add_bottom_layer(env, EXTRA_QUEUES_LAYER, test_layers)
        env["SLIPSTREAM_TEST_QUEUES"] = str(EXTRA_QUEUES[0])
    if mode == "validation" and QUEUE_SUBMIT_CHECK not in env.get("VK_LAYER_ENABLES", ""):
        sys.exit("run_app.py: slipstream_env no longer enables cross-submission sync validation")
    for item in ARGS_ENV:
        name, _, value = item.partition("=")
        env[name] = value
    env.pop(STATS_VAR, None)
    if stats_file:
        env[STATS_VAR] = stats_file
    return env


STAT_RE = re.compile(r"^([a-z_]+)(>=|==|<=)(\d+)$")
COMPARE = {">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "<=": lambda a, b: a <= b}


def parse_stat_expectation(text):
    m = STAT_RE.match(text)
    if not m:
        raise ValueError(f"--expect-stat {text!r}: expected NAME>=N, NAME==N or NAME<=N")
    return m.group(1), m.group(2), int(m.group(3))


def check_stats(path, expectations=()):
    """Returns None if the stats file proves the layer ran (and each expectation holds),
    else the problems."""
    if not os.path.exists(path):
        return f"the layer wrote no stats file ({STATS_VAR}={path}): was it loaded?"
    try:
        with open(path, encoding="utf-8") as f:
            stats = json.load(f)
    except (OSError, ValueError) as e:
        return f"stats file {path} does not parse: {e}"
    devices = stats.get("devices") if isinstance(stats, dict) else None
    if not isinstance(devices, list) or not devices:
        return f"stats file {path} has no non-empty list under \"devices\""
    problems = []
    for name, op, value in expectations:
        if not all(isinstance(d, dict) and name in d for d in devices):
            problems.append(f"the statistics have no counter {name!r}")
            continue
        total = sum(int(d[name]) for d in devices)
        if not COMPARE[op](total, value):
            problems.append(f"statistics: {name} = {total}, expected {op} {value} "
                            "(the feature did not engage)")
    return "; ".join(problems) or None


class Run:
    def __init__(self, mode):
        self.mode = mode
        self.rc = None
        self.stdout = ""
        self.stderr = ""
        self.seconds = 0.0
        self.checksum = None
        self.problems = []

    def lines(self):
        return self.stdout.splitlines() + self.stderr.splitlines()

    def message_lines(self):
        return [line for line in self.lines()
                if any(m in line for m in MESSAGE_MARKERS) and not line.startswith(IGNORED_PREFIX)]


def run_mode(args, mode, tmpdir):
    run = Run(mode)
    stats_file = os.path.join(tmpdir, f"stats-{mode}.json") if mode != "off" else None
    env = mode_env(mode, args.build_dir, stats_file)
    if not run_program(args.program, env, args.timeout, run):
        return run

    matches = (CHECKSUM_RE.match(line.strip()) for line in run.stdout.splitlines())
    sums = [m.group(1) for m in matches if m]
    if len(sums) != 1:
        run.problems.append(f"expected exactly one `checksum:` line, found {len(sums)}")
    else:
        run.checksum = sums[0]

    expect_messages = args.expect_validation_messages and mode == "validation"
    messages = run.message_lines()
    if run.rc is not None:
        if expect_messages:
            if run.rc != 1:
                run.problems.append(f"exit status {run.rc}, expected 1 (validation messages)")
            if not messages:
                run.problems.append("validation reported nothing, but this program contains "
                                    "a deliberate hazard: is validation really loaded?")
            for pattern in args.expect_message:
                if not any(re.search(pattern, line) for line in run.lines()):
                    run.problems.append(f"no output line matches {pattern!r}")
        else:
            if run.rc != 0:
                run.problems.append(f"exit status {run.rc}")
            if messages:
                run.problems.append(f"{len(messages)} validation message line(s)")

    if stats_file and run.rc is not None and os.environ.get(SKIP_STATS_VAR) != "1":
        problem = check_stats(stats_file, args.expect_stat)
        if problem:
            run.problems.append(problem)
    return run


def print_block(text):
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def main(argv):
    args = parse_args(argv)
    name = os.path.basename(args.program[0])
    runs = []
    with tempfile.TemporaryDirectory(prefix="slipstream-suite-") as tmpdir:
        for mode in args.modes:
            runs.append(run_mode(args, mode, tmpdir))
            skip = [line for line in runs[-1].stdout.splitlines()
                    if args.skip_if and re.search(args.skip_if, line)]
            if skip:
                print(f"SKIPPED: {name} [{mode}]: {skip[0]}")
                return 0

    sums = {r.checksum for r in runs if r.checksum}
    if len(sums) > 1:
        for r in runs:
            if r.checksum:
                r.problems.append("checksum differs between modes")

    failed = False
    for r in runs:
        if r.problems:
            failed = True
            print(f"--- {name} [{r.mode}] exit status {r.rc}, stdout:")
            print_block(r.stdout)
            print(f"--- {name} [{r.mode}] stderr:")
            print_block(r.stderr)
    for r in runs:
        status = "FAIL" if r.problems else "PASS"
        detail = "; ".join(r.problems) if r.problems else (
            "validation reported the deliberate hazard" if args.expect_validation_messages
            and r.mode == "validation" else "ok")
        print(f"{name} [{r.mode}] {status}: checksum {r.checksum or '-'}, exit {r.rc}, "
              f"{r.seconds:.2f} s: {detail}")
    if os.environ.get(SKIP_STATS_VAR) == "1":
        print(f"{name}: note: {SKIP_STATS_VAR}=1, the layer-loaded (stats file) check was skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
