#!/usr/bin/env python3
"""Hostile values for every Slipstream setting, through the environment and vk_layer_settings.txt.

    settings_fuzz.py --build-dir B [--info <slipstream-info>] [--all] [--report FILE]
                     [--timeout S] [-- <program> [args...]]
    (defaults: B/tools/slipstream-info, B/tests/apps/chain_dispatch)

The settings come from the code (`slipstream-info --settings-json`: name, accepted values,
default), never from a copy here. Two levels:

  parse   slipstream-info reads the settings exactly as the layer does (environment, then the
          settings file through the Vulkan layer-settings library) and reports the values in
          effect and the warnings: every setting that is not a path must keep its default and
          get exactly one warning that names it and says which default is used. Every hostile
          value, all settings at once, through the environment and through a settings file
          (with --all also each setting alone).
  run     <program> (a correctness-suite program printing `checksum: <hex>`) under the layer
          with hostile values: it must exit 0 with the checksum of its run without the layer,
          and stderr must name every setting given a bad value (exactly one warning each). A
          sample of the values, all settings at once, in the environment and in a settings
          file; a settings file full of garbage (binary bytes, lines without '=', duplicated
          keys, a 1 MiB line, NULs, CRLF); the path settings pointed at a directory, an
          unwritable path, /dev/full, a 64 KiB path and a name with a newline. --all: every
          value, in both forms, all settings at once and each setting alone.

A settings file cannot hold a newline in a value, and the settings library trims spaces around
values and treats an empty one as unset: such values are tried only through the environment.

--report FILE writes {"kind": "settings", "cases": [...]} (REPORT_FORMAT.md): one case per
setting (counters: "values": hostile values tried on it, parse and run level; "runs": program
runs with a hostile value for it; "warned": those whose stderr named it), plus the
garbage-file and path cases. Exit status: 0 if every case passed, 1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

CHECKSUM_RE = re.compile(r"^checksum: ([0-9a-f]{16})$", re.M)

# Invalid for every setting that is not a path (tests/unit/settings_test.cpp has the same kinds).
HOSTILE = [
    ("empty", b""),
    ("2^64", b"18446744073709551616"),
    ("2^32", b"4294967296"),
    ("1e300", b"1e300"),
    ("negative", b"-1"),
    ("non-numeric", b"abc"),
    ("unknown word", b"sometimes"),
    ("64 KiB of digits", b"9" * 65536),
    ("64 KiB of letters", b"x" * 65536),
    ("leading space", b" 1"),
    ("trailing space", b"on "),
    ("inner space", b"o n"),
    ("newline", b"on\nVK_SLIPSTREAM_FUSE=on"),
    ("tab", b"\t1"),
    ("UTF-8", "\u00fc".encode()),
    ("UTF-8 digit", "\uff11".encode()),
    ("binary", b"\x01\xff\x7f\x80"),
    ("leading plus", b"+1"),
    ("hex", b"0x10"),
    ("trailing garbage", b"10abc"),
    ("fraction", b"1.5"),
    ("quoted", b'"1"'),
]
# What the real program runs with in the short form (all settings at once, each value).
SAMPLE_ENV = ["empty", "2^64", "64 KiB of digits", "trailing garbage", "newline", "binary"]
SAMPLE_FILE = ["2^64", "64 KiB of letters", "trailing garbage", "UTF-8"]


def in_file(text):
    """Whether a settings file can hold this value as it is."""
    return bool(text) and b"\n" not in text and b"\r" not in text and b"#" not in text and text == text.strip()


class Runner:
    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.count = 0

    def env(self, mode, values=None, settings_file=None):
        env = slipstream_env.layer_env(mode, self.args.build_dir)
        for name in list(env):
            if name.startswith("VK_SLIPSTREAM_") or name == "VK_LAYER_SETTINGS_PATH":
                del env[name]
        env = {k.encode(): v.encode() for k, v in env.items()}
        for name, value in (values or {}).items():
            env[b"VK_SLIPSTREAM_" + name.upper().encode()] = value
        if settings_file:
            env[b"VK_LAYER_SETTINGS_PATH"] = settings_file.encode()
        return env

    def settings_file(self, values, extra=b""):
        self.count += 1
        path = os.path.join(self.workdir, f"settings-{self.count}.txt")
        with open(path, "wb") as f:
            for name, value in values.items():
                f.write(b"slipstream." + name.encode() + b" = " + value + b"\n")
            f.write(extra)
        return path

    def run(self, argv, env):
        try:
            p = subprocess.run(argv, env=env, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=self.args.timeout)
            return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            return None, "", ""

    def parsed(self, values=None, settings_file=None):
        rc, out, err = self.run([self.args.info, "--settings-json"], self.env("off", values, settings_file))
        if rc != 0:
            return None, f"slipstream-info exit {rc}: {err[-300:]}"
        return json.loads(out), None


class Cases:
    def __init__(self, specs):
        self.per_setting = {s["name"]: {"name": s["name"], "passed": True, "hang": False, "crash": False,
                                        "wrong_result": False, "detail": "", "values": 0, "warned": 0,
                                        "runs": 0, "problems": []} for s in specs}
        self.other = []

    def problem(self, name, text):
        c = self.per_setting[name]
        c["passed"] = False
        c["problems"].append(text)

    def add(self, name, passed, detail, **kw):
        case = {"name": name, "passed": passed, "hang": kw.pop("hang", False), "crash": kw.pop("crash", False),
                "wrong_result": kw.pop("wrong_result", False), "detail": detail, "values": kw.pop("values", 0),
                "warned": kw.pop("warned", 0)}
        self.other.append(case)
        print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")

    def all(self):
        out = []
        for c in self.per_setting.values():
            c = dict(c)
            problems = c.pop("problems")
            c["detail"] = "; ".join(problems[:3]) if problems else \
                f"{c['values']} hostile values tried, {c['warned']} of {c['runs']} program runs warned"
            out.append(c)
        return out + self.other


def warning_re(spec):
    name = spec["name"]
    return re.compile(re.escape(f"VK_SLIPSTREAM_{name.upper()} (slipstream.{name}) = '") + r".*" +
                      re.escape(f"Using the default '{spec['default']}'."))


def check_parse(runner, cases, specs, label, values, settings_file=None):
    """Parse level: values (name -> bytes) of non-path settings keep their defaults and warn once."""
    data, error = runner.parsed(values if not settings_file else None, settings_file)
    for spec in specs:
        if spec["name"] not in values:
            continue
        cases.per_setting[spec["name"]]["values"] += 1
        if error:
            cases.problem(spec["name"], f"{label}: {error}")
            continue
        got = {s["name"]: s["value"] for s in data["settings"]}
        if got[spec["name"]] != spec["default"]:
            cases.problem(spec["name"], f"{label}: value {got[spec['name']][:40]!r}, not the default")
        naming = [w for w in data["warnings"] if warning_re(spec).search(w)]
        if len(naming) != 1:
            cases.problem(spec["name"], f"{label}: {len(naming)} warnings naming it, expected 1")


def check_run(runner, cases, specs, reference, label, values, settings_file=None, env_values=None):
    """Run level: the program exits 0 with the reference checksum; stderr names each setting once."""
    env = runner.env("on", env_values if env_values is not None else (None if settings_file else values),
                     settings_file)
    rc, out, err = runner.run(runner.args.program, env)
    sums = CHECKSUM_RE.findall(out)
    trouble = None
    if rc is None:
        trouble = "timed out"
    elif rc != 0:
        trouble = f"exit {rc}"
    elif sums != [reference]:
        trouble = f"checksums {sums}, expected [{reference}]"
    for spec in specs:
        if spec["name"] not in values:
            continue
        c = cases.per_setting[spec["name"]]
        c["values"] += 1
        c["runs"] += 1
        if trouble:
            cases.problem(spec["name"], f"{label}: {trouble}")
            c["crash"] = c["crash"] or (rc is not None and rc < 0)
            c["hang"] = c["hang"] or rc is None
            c["wrong_result"] = c["wrong_result"] or (rc == 0 and sums != [reference])
        lines = [line for line in err.splitlines() if warning_re(spec).search(line)]
        if lines:
            c["warned"] += 1
        if len(lines) != 1:
            cases.problem(spec["name"], f"{label}: stderr named it {len(lines)} times, expected once")
    return rc, out, err


def garbage_file(runner, cases, specs, reference):
    spec = {s["name"]: s for s in specs}
    # A valid value first, the same key again with a bad one (the later line wins), and a valid
    # setting after everything else: proof that the file was read past the garbage.
    lines = [
        b"slipstream.batch_max = 7",
        bytes(range(1, 256)).replace(b"\n", b"").replace(b"\r", b""),
        b"no equals sign at all",
        b"=",
        b"= value without key",
        b"slipstream.",
        b"slipstream.fuse",
        b"slipstream.max_defer_us =",
        b"slipstream.nonexistent_setting = 1",
        b"slipstream." + b"k" * 70000 + b" = 1",
        b"slipstream.spin_us = " + b"9" * (1 << 20),
        b"x" * (1 << 20),
        b"slipstream.fuse_barrier = o\x00n",
        b"slipstream.batch_max = banana\r",
        b"slipstream.batch_max = banana",
        b"\xef\xbb\xbfslipstream.readback = off",
        b"slipstream.stats = on",
    ]
    path = runner.settings_file({}, b"\n".join(lines) + b"\n")
    data, error = runner.parsed(settings_file=path)
    problems = []
    if error:
        problems.append(error)
    else:
        got = {s["name"]: s["value"] for s in data["settings"]}
        if got["stats"] != "on":
            problems.append("the valid last line (stats = on) was not read")
        if got["batch_max"] != spec["batch_max"]["default"]:
            problems.append(f"batch_max = {got['batch_max']!r}: the later bad duplicate should win and be rejected")
        if not any(warning_re(spec["batch_max"]).search(w) for w in data["warnings"]):
            problems.append("no warning for the duplicated batch_max")
    rc, out, err = runner.run(runner.args.program, runner.env("on", settings_file=path))
    sums = CHECKSUM_RE.findall(out)
    if rc != 0 or sums != [reference]:
        problems.append(f"program: exit {rc}, checksums {sums}")
    if "slipstream: statistics for" not in err:
        problems.append("the layer printed no statistics (stats = on, the last line)")
    cases.add("garbage_file", not problems, "; ".join(problems) or
              "binary, no '=', duplicates, 1 MiB lines, NUL, CRLF: read past, program ok",
              crash=rc is not None and rc < 0, hang=rc is None, values=len(lines))


def path_cases(runner, cases, specs, reference):
    paths = [s["name"] for s in specs if s["accepted"] == "a file path"]
    directory = os.path.join(runner.workdir, "a-directory")
    os.makedirs(directory, exist_ok=True)
    newline_name = os.path.join(runner.workdir, "new\nline.json").encode()
    hostile = [
        ("directory", directory.encode(), True),
        ("unwritable", b"/proc/slipstream-cannot-write-here/x", True),
        ("missing folder", os.path.join(runner.workdir, "no/such/folder/x").encode(), True),
        ("/dev/full", b"/dev/full", True),
        ("64 KiB path", b"/tmp/" + b"p" * 65536, True),
        ("newline in name", newline_name, False),  # writable: no error, the file appears
    ]
    for setting in paths:
        for what, value, fails in hostile:
            if os.path.exists(newline_name):
                os.remove(newline_name)
            env_values = {setting: value, "fuse": b"on", "stats": b"off"}
            rc, out, err = runner.run(runner.args.program, runner.env("on", env_values))
            sums = CHECKSUM_RE.findall(out)
            problems = []
            if rc != 0 or sums != [reference]:
                problems.append(f"exit {rc}, checksums {sums}")
            named = [line for line in err.splitlines() if f"VK_SLIPSTREAM_{setting.upper()}" in line]
            if fails and len(named) != 1:
                problems.append(f"stderr named VK_SLIPSTREAM_{setting.upper()} {len(named)} times, expected once")
            if not fails and (named or not os.path.exists(newline_name)):
                problems.append("the file was not written, or an error was printed")
            cases.add(f"path:{setting}:{what}", not problems, "; ".join(problems) or
                      (named[0][:120] if named else "written"),
                      crash=rc is not None and rc < 0, hang=rc is None, values=1, warned=int(bool(named)))


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--info", help="slipstream-info (default: the build folder's)")
    p.add_argument("--all", action="store_true")
    p.add_argument("--report")
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args(argv[:split])
    args.program = argv[split + 1:]
    # Without them (as tools/reliability runs it): the build folder's.
    args.info = args.info or os.path.join(args.build_dir, "tools", "slipstream-info")
    args.program = args.program or [os.path.join(args.build_dir, "tests", "apps", "chain_dispatch")]
    # The runs' working folder is a temporary one (relative path values land there).
    args.info = os.path.abspath(args.info)
    args.build_dir = os.path.abspath(args.build_dir)
    if args.program:
        args.program[0] = os.path.abspath(args.program[0])

    with tempfile.TemporaryDirectory(prefix="slipstream-settings-") as workdir:
        runner = Runner(args, workdir)
        clean, error = runner.parsed()
        if error:
            sys.exit(f"settings_fuzz.py: {error}")
        specs = clean["settings"]
        if clean["warnings"] or any(s["value"] != s["default"] for s in specs):
            sys.exit("settings_fuzz.py: the clean environment is not all defaults: " + json.dumps(clean))
        words = [s for s in specs if s["accepted"] != "a file path"]
        cases = Cases(words)
        rc, out, _ = runner.run(args.program, runner.env("off"))
        reference = CHECKSUM_RE.findall(out)
        if rc != 0 or len(reference) != 1:
            sys.exit(f"settings_fuzz.py: the program without the layer failed (exit {rc})")
        reference = reference[0]
        hostile = dict(HOSTILE)

        # Parse level: every value, all settings at once; --all: each setting alone too.
        for what, value in HOSTILE:
            everyone = {s["name"]: value for s in words}
            check_parse(runner, cases, words, f"env {what}", everyone)
            if in_file(value):
                check_parse(runner, cases, words, f"file {what}", everyone, runner.settings_file(everyone))
            if args.all:
                for s in words:
                    check_parse(runner, cases, words, f"env {what} alone", {s["name"]: value})

        # Run level.
        env_values = [w for w, _ in HOSTILE] if args.all else SAMPLE_ENV
        file_values = [w for w, v in HOSTILE if in_file(v)] if args.all else SAMPLE_FILE
        for what in env_values:
            everyone = {s["name"]: hostile[what] for s in words}
            check_run(runner, cases, words, reference, f"run env {what}", everyone)
            if args.all:
                for s in words:
                    check_run(runner, cases, words, reference, f"run env {what} alone", {s["name"]: hostile[what]})
        for what in file_values:
            everyone = {s["name"]: hostile[what] for s in words}
            check_run(runner, cases, words, reference, f"run file {what}", everyone, runner.settings_file(everyone))
            if args.all:
                for s in words:
                    alone = {s["name"]: hostile[what]}
                    check_run(runner, cases, words, reference, f"run file {what} alone", alone,
                              runner.settings_file(alone))
        garbage_file(runner, cases, specs, reference)
        path_cases(runner, cases, specs, reference)

    all_cases = cases.all()
    for c in all_cases[:len(words)]:
        print(f"{'PASS' if c['passed'] else 'FAIL'} {c['name']}: {c['detail']}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({"kind": "settings", "cases": all_cases}, f, indent=1)
    failed = [c for c in all_cases if not c["passed"]]
    print(f"settings: {len(all_cases) - len(failed)} of {len(all_cases)} cases passed "
          f"({len(words)} settings and {len(specs) - len(words)} paths from the code, {len(HOSTILE)} hostile values)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
