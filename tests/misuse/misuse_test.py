#!/usr/bin/env python3
"""Runs every misuse_app scenario without the layer and with it, and compares the outcomes.

    misuse_test.py --build-dir B [--report FILE] [--timeout S] [--only NAME,...] [--repeat N] [--jobs J]
                   [-- <misuse_app>]      (default: B/tests/misuse/misuse_app)

Each scenario runs in a child process of its own per mode:
  off        no layer (the driver alone: the reference);
  layer      Slipstream with fusion off;
  defaults   Slipstream with its defaults (fusion on, LAZY_RECORD=auto: on a queue in latency
             mode the driver records the application's command buffer at vkEndCommandBuffer
             and gets it as it is; a reset or free of it waits for that work first);
  fuse       VK_SLIPSTREAM_FUSE=on, VK_SLIPSTREAM_LAZY_RECORD=on (lazy recording: the driver
             sees captures only at replay);
  fuse_held  the same with batches held as long as the settings allow (BATCH_MAX=4096,
             MAX_DEFER_US=100000);
  fuse_native  VK_SLIPSTREAM_FUSE=on, VK_SLIPSTREAM_LAZY_RECORD=off (recorded natively too).
No validation layer: the scenarios break valid usage on purpose.

A run's outcome is its "outcome: ..." line and exit status ("exit 0: checksum ..."), or
"SIGSEGV" / "timeout ..." / "exit N without one outcome line". A scenario passes when every
layer mode's outcome equals the driver-alone one. Where the driver alone crashes or hangs, the
layer is not required to do better (recorded, the case passes), unless a sanitizer report (the
ASan build) names the layer's library. Scenarios the program lists as
"racy" (the driver alone races: lavapipe frees what its queue thread still runs) are compared
only in the defaults and the lazy-recording modes (SETTLED_MODES), where the driver never runs a
command buffer that the application changes (lazy recording gives it replays; a command buffer
whose own recording went to the driver is waited for before its reset or free): there they must
give the outcome of their well-defined twin ("racy=twin"), and, without
a twin, where each driver-alone run survived the race, must not crash or hang. Scenarios
listed as "errs=twin" are compared as usual, except that where the driver alone returns an
error (exit status 3: a call the scenario needs failed; NVIDIA's driver loses the device that
runs another device's command buffers, which fused replays of their captures do not) the layer
may instead give the twin's outcome, the work done as meant, if that is a normal one. With
--repeat N every layer run is made N times; every driver-alone one --reference-runs times (2): one
that varies is shown as such, and a racy scenario's twin counts by its one normal outcome.

--report FILE writes {"kind": "misuse", "cases": [...]} (REPORT_FORMAT.md), one case per
scenario and layer mode. Exit status: 0 if every case passed, 1 otherwise.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

LAYER_MODES = {
    "layer": {"VK_SLIPSTREAM_FUSE": "off"},  # the layer without fusion (fusion: the modes below)
    # (LAZY_RECORD=auto gives a latency-mode queue's command buffers to the driver as recorded:
    # before their resets and frees waited for that work, pool_gone_direct_pending_at_once
    # crashed lavapipe's queue thread in 14 of 40 runs so; the driver alone crashes in 2 of 40.)
    "defaults": {},
    "fuse": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_LAZY_RECORD": "on"},
    # Batches held as long as the settings allow: what the application frees, resets or
    # destroys is then still in a batch of Slipstream's.
    "fuse_held": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_LAZY_RECORD": "on", "VK_SLIPSTREAM_BATCH_MAX": "4096",
                  "VK_SLIPSTREAM_MAX_DEFER_US": "100000"},
    "fuse_native": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_LAZY_RECORD": "off"},
}
# The driver never runs a command buffer the application changes: it gets replays of the
# captures, or the application's own recording, waited for before a reset or free of it.
# (LAZY_RECORD=off is not held to it: another device's command buffers, a misuse, pass through
# to the driver recorded as they are, with nothing of this device's to wait for them.)
SETTLED_MODES = ("defaults", "fuse", "fuse_held")


SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")


class Outcome:
    def __init__(self, text, crash=False, hang=False, stderr=""):
        self.text, self.crash, self.hang, self.stderr = text, crash, hang, stderr
        # A sanitizer report (the ASan build) with a frame in the layer: the layer's own fault,
        # never excused by what the driver alone does.
        # (Symbolized frames name the namespace, unsymbolized ones the library.)
        self.layer_fault = bool(SANITIZER_REPORT.search(stderr)) and (
            "libVkLayer_slipstream" in stderr or " slipstream::" in stderr)

    def abnormal(self):
        return self.crash or self.hang


def run_scenario(program, scenario, env, timeout):
    try:
        proc = subprocess.run([program, scenario], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return Outcome(f"timeout after {timeout:g} s", hang=True,
                       stderr=(e.stderr or b"").decode("utf-8", "replace"))
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return Outcome(name, crash=True, stderr=stderr)
    lines = [line[len("outcome: "):] for line in stdout.splitlines() if line.startswith("outcome: ")]
    if len(lines) != 1:
        # Sanitizers report with an exit status of their own (ASan: 1): a crash too.
        return Outcome(f"exit {proc.returncode} without one outcome line", crash=True, stderr=stderr)
    return Outcome(f"exit {proc.returncode}: {lines[0]}", stderr=stderr)


def mode_env(mode, build_dir):
    env = slipstream_env.layer_env("off" if mode == "off" else "on", build_dir)
    for name in list(env):
        if name.startswith("VK_SLIPSTREAM_"):
            del env[name]
    env.update(LAYER_MODES.get(mode, {}))
    return env


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--report")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument("--repeat", type=int, default=1, help="runs per layer mode")
    p.add_argument("--reference-runs", type=int, default=2, help="runs without the layer per scenario")
    # Scenarios run side by side on machines with cores to spare (a quarter of them, at most 4;
    # one on CI's two cores, where ctest runs other tests beside this one): on the H200, device
    # creation alone takes a second or more, and each scenario where the driver alone hangs
    # spends --timeout in several modes, which took this test past its ctest limit.
    p.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 1) // 4)),
                   help="scenarios run at once")
    args = p.parse_args(argv[:split])
    # Without `-- <misuse_app>`: the build folder's (as tools/reliability runs it).
    program = argv[split + 1] if split + 1 < len(argv) else os.path.join(args.build_dir, "tests", "misuse", "misuse_app")

    scenarios = []  # (name, racy, twin)
    errs_twin = {}  # scenario -> its well-defined twin, where the driver alone returns an error
    for line in subprocess.run([program, "--list"], stdout=subprocess.PIPE, check=True).stdout.decode().splitlines():
        name, _, tag = line.partition(" ")
        if name and tag.startswith("errs="):
            errs_twin[name] = tag.partition("=")[2]
        if name and (not args.only or name in args.only.split(",")):
            scenarios.append((name, tag.startswith("racy"), tag.partition("=")[2] or None))
    ERROR_EXIT = "exit 3: "  # NEED(): a call the scenario needs failed

    if not scenarios:
        sys.exit("misuse_test.py: no scenario to run")

    references = {}  # scenario -> the driver-alone outcome (or "varies: ...")
    defined = {}  # scenario -> its driver-alone outcome without the runs the driver crashed
    reference_lock = threading.Lock()
    reference_locks = {}  # scenario -> the lock its reference runs are made under

    def reference(name):
        # One set of reference runs per scenario, even when two workers ask for the same twin.
        with reference_lock:
            lock = reference_locks.setdefault(name, threading.Lock())
        with lock:
            if name not in references:
                runs = [run_scenario(program, name, mode_env("off", args.build_dir), args.timeout)
                        for _ in range(args.reference_runs)]
                texts = sorted({o.text for o in runs})
                ref = runs[0]
                if len(texts) > 1:
                    ref = Outcome("varies: " + " | ".join(texts), crash=any(o.crash for o in runs),
                                  hang=any(o.hang for o in runs))
                normal = {o.text for o in runs if not o.abnormal()}
                # What the scenario gives when the driver does not race it: its one normal outcome.
                defined[name] = Outcome(normal.pop()) if len(normal) == 1 else ref
                references[name] = ref
            return references[name]

    def run_one(scenario, racy, twin):
        """The cases of one scenario (every layer mode) and the lines to print for them."""
        cases, lines = [], []
        ref = reference(scenario)
        for mode in LAYER_MODES:
            # What the layer must give: the driver-alone outcome, or, where the driver alone
            # races, the well-defined twin's in the modes that keep the racing objects from the
            # driver (fusion: SETTLED_MODES); nothing where the driver alone fails or races
            # otherwise.
            want = ref
            if racy:
                want = None
                if twin and mode in SETTLED_MODES:
                    reference(twin)
                    # (Where the driver alone hangs or crashes on the twin too, as NVIDIA's does
                    # on another device's command buffers, nothing is required.)
                    want = None if defined[twin].abnormal() else defined[twin]
            elif ref.abnormal():
                want = None
            # The driver alone returned an error (on the scenario, or on the racy scenario's
            # twin that is wanted); the layer may do the work as meant instead: the outcome of
            # the well-defined twin of the scenario that errs.
            alternative = None
            errs = (scenario if not racy and ref.text.startswith(ERROR_EXIT) else
                    twin if want is not None and want is not ref and want.text.startswith(ERROR_EXIT) else None)
            meant = (twin if errs == scenario else errs_twin.get(errs)) if errs else None
            if meant:
                reference(meant)
                if not defined[meant].abnormal() and not defined[meant].text.startswith(ERROR_EXIT):
                    alternative = defined[meant]
            env = mode_env(mode, args.build_dir)
            for _ in range(args.repeat):
                got = run_scenario(program, scenario, env, args.timeout)
                same = got.text == ref.text
                if got.layer_fault:
                    passed = False
                    detail = f"{got.text}: a sanitizer report names the layer"
                elif want is None and racy and mode in SETTLED_MODES and not ref.abnormal() and got.abnormal():
                    # Its outcome may differ (the race), but where the driver alone survived
                    # every run, the layer must not be why the application crashes or hangs:
                    # in SETTLED_MODES, where the driver races only with what the layer gave
                    # it (in the others it races as without the layer, and may lose).
                    passed = False
                    detail = f"layer: {got.text}; the driver alone survives the race: {ref.text}"
                elif want is None:
                    passed = True
                    detail = f"{got.text} (not compared: the driver alone {'races' if racy else 'fails'} here: {ref.text})"
                elif alternative and got.text == alternative.text:
                    passed = True
                    detail = f"{got.text} (the twin's outcome; the driver alone: {ref.text})"
                else:
                    passed = got.text == want.text and not want.abnormal()
                    detail = got.text if passed else f"layer: {got.text}; expected: {want.text}"
                    if want is not ref and passed:
                        detail += f" (the driver alone: {ref.text})"
                cases.append({
                    "name": f"{scenario}[{mode}]", "passed": passed,
                    "hang": got.hang, "crash": got.crash,
                    "wrong_result": not passed and not got.abnormal(),
                    "detail": detail,
                    "with_layer": got.text, "without_layer": ref.text, "same": int(same),
                })
                lines.append(f"{'PASS' if passed else 'FAIL'} {scenario} [{mode}]: {detail}")
                if not passed:
                    lines.append(f"--- {scenario} [{mode}] stderr:\n{got.stderr[-4000:]}")
                    break
        return cases, lines

    cases = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for got_cases, lines in pool.map(lambda t: run_one(*t), scenarios):
            cases += got_cases
            for line in lines:
                print(line, flush=True)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({"kind": "misuse", "cases": cases}, f, indent=1)
    failed = [c for c in cases if not c["passed"]]
    print(f"misuse: {len(cases) - len(failed)} of {len(cases)} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
