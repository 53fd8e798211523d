#!/usr/bin/env python3
"""Proves that a leak in Slipstream's own code fails the AddressSanitizer stage.

    leak_canary_test.py --build-dir B --layer-dir D --library L --suppressions S -- <program> [args...]

Runs a real Vulkan program with VK_LAYER_slipstream taken from D: the canary build of the layer
(library L), which is the real layer plus tests/sanitizers/leak_canary.cpp, leaking one block of
4321 bytes in vkCreateInstance. Twice: as the machine is, and with NODEVICE_SELECT=1 (no Mesa
device-select layer above ours, so the loader calls the hook itself). LeakSanitizer runs with the
suppressions S (the stage's tests/sanitizers/lsan.supp) and frames that name their module. Each
run passes only when:
  * the program did its work (one `checksum:` line) and still failed (exit status not 0);
  * LeakSanitizer reported a direct leak of 4321 bytes whose stack has the canary's frame
    (slipstream_leak_canary_allocate, leak_canary.cpp), symbolized, in library L;
  * that leak is the only one reported (everything else is either not a leak or suppressed).
It also checks that this driver itself, an uninstrumented python3, runs without an ASan runtime
(the stage's LD_PRELOAD must not bring one in).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

LEAK_BYTES = 4321
FRAME_FUNCTION = "slipstream_leak_canary_allocate"
FRAME_FILE = "leak_canary.cpp"
LEAK_RE = re.compile(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\) allocated from:")
FRAME_RE = re.compile(r"^\s*#\d+ ")
CHECKSUM_RE = re.compile(r"^checksum: [0-9a-f]{16}$")
# Frames as "#N pc function file:line {module}": the module is printed even when symbolized.
FRAME_FORMAT = "stack_trace_format='    #%n %p %F %L {%m}'"


def leak_reports(text):
    """[(kind, bytes, objects, [frame lines])] of each leak LeakSanitizer reported."""
    reports, frames = [], None
    for line in text.splitlines():
        m = LEAK_RE.match(line)
        if m:
            frames = []
            reports.append((m.group(1), int(m.group(2)), int(m.group(3)), frames))
        elif frames is not None and FRAME_RE.match(line):
            frames.append(line.strip())
        else:
            frames = None  # anything else ends the stack
    return reports


def main(argv):
    if "--" not in argv:
        print("leak_canary_test.py: expected `-- <program> [args...]`", file=sys.stderr)
        return 2
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--layer-dir", required=True)
    p.add_argument("--library", required=True)
    p.add_argument("--suppressions", required=True)
    p.add_argument("--timeout", type=float, default=240.0)
    args = p.parse_args(argv[:split])
    program = argv[split + 1:]
    failed = False

    with open("/proc/self/maps", encoding="utf-8") as f:
        maps = f.read()
    preload = os.environ.get("LD_PRELOAD", "")
    print(f"leak_canary: LD_PRELOAD={preload or '(none)'}; keep_loaded mapped in this driver: "
          f"{'yes' if 'libslipstream_keep_loaded.so' in maps else 'no'}")
    if re.search(r"/libasan\.so", maps):
        print("leak_canary: FAIL: this uninstrumented python3 has an ASan runtime mapped: the "
              "stage's LD_PRELOAD must not bring one in")
        failed = True

    base = slipstream_env.layer_env("on", args.build_dir)
    base["VK_ADD_LAYER_PATH"] = os.path.abspath(args.layer_dir)  # the canary's manifest only
    lsan = [o for o in base.get("LSAN_OPTIONS", "").split(":") if o and not o.startswith("suppressions=")]
    base["LSAN_OPTIONS"] = ":".join(lsan + [f"suppressions={os.path.abspath(args.suppressions)}"])
    asan = [o for o in base.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")]
    base["ASAN_OPTIONS"] = ":".join(asan + ["detect_leaks=1", FRAME_FORMAT])
    # Twice: as the machine is, and without Mesa's device-select layer (an implicit layer above
    # ours), so that the loader itself calls our vkCreateInstance, as on machines without Mesa:
    # then a suppression naming the loader's library would hide the leak.
    runs = [("as installed", base), ("loader calls the layer directly", dict(base, NODEVICE_SELECT="1"))]
    for label, env in runs:
        failed |= not run_once(label, program, env, args)
    return 1 if failed else 0


def run_once(label, program, env, args):
    """Runs the program once; prints PASS or FAIL with the reasons. Returns True on PASS."""
    name = f"{os.path.basename(program[0])} [{label}]"
    problems = []
    try:
        proc = subprocess.run(program, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=args.timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"leak_canary: {name} FAIL: could not run it: {e}")
        return False
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")

    if sum(1 for line in out.splitlines() if CHECKSUM_RE.match(line.strip())) != 1:
        problems.append("the program did not finish its work (expected one `checksum:` line)")
    if proc.returncode == 0:
        problems.append("the program exited 0 although the layer leaked")
    library = os.path.realpath(args.library)
    reports = leak_reports(err)
    ours = [r for r in reports if r[0] == "Direct" and r[1] == LEAK_BYTES and r[2] == 1]
    symbolized = [r for r in ours
                  if any(FRAME_FUNCTION in f and FRAME_FILE in f and ("{" + library + "}") in f
                         for f in r[3])]
    if not ours:
        problems.append(f"LeakSanitizer reported no direct leak of {LEAK_BYTES} bytes in 1 object "
                        "(the canary's): a suppression or a lost module hides leaks in our code")
    elif not symbolized:
        problems.append(f"the {LEAK_BYTES}-byte leak has no frame {FRAME_FUNCTION} ({FRAME_FILE}) "
                        f"in {library}")
    others = [r for r in reports if r not in ours]
    if others:
        problems.append(f"{len(others)} other leak(s) reported besides the canary's "
                        f"({', '.join(f'{r[0].lower()} {r[1]} bytes' for r in others)}): "
                        "not ours, and not suppressed by library name?")

    if problems:
        print(f"--- {name} exit status {proc.returncode}, stdout:")
        print(out.rstrip("\n"))
        print(f"--- {name} stderr:")
        print(err.rstrip("\n"))
        for problem in problems:
            print(f"leak_canary: {name} FAIL: {problem}")
        return False
    frames = symbolized[0][3]
    print(f"leak_canary: {name} PASS: exit status {proc.returncode}; LeakSanitizer reported the "
          f"canary's {LEAK_BYTES}-byte leak, and only it:")
    # The canary's frame up to the first frame outside the canary library: who called the hook.
    first = next(i for i, f in enumerate(frames) if FRAME_FUNCTION in f)
    shown = frames[first:first + 1] + [f for f in frames[first + 1:] if ("{" + library + "}") not in f][:1]
    for f in shown:
        print(f"  {f}")
    return True

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
