#!/usr/bin/env python3
"""Per-application settings, end to end: a vk_layer_settings.txt with a general value and a
section for one program (`slipstream.app.EXECUTABLE.name`) gives that program its own value and
leaves every other program, and the environment's word, as they were. The program is
slipstream-info, which prints the settings in effect (--settings-json)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def settings(info, settings_file, extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VK_SLIPSTREAM_")}
    env["VK_LAYER_SETTINGS_PATH"] = settings_file
    env.update(extra_env or {})
    out = subprocess.run([info, "--settings-json"], env=env, capture_output=True, text=True, check=True, timeout=60)
    return {s["name"]: s["value"] for s in json.loads(out.stdout)["settings"]}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--info", required=True, help="path of slipstream-info")
    args = p.parse_args(argv)
    exe = os.path.basename(args.info)
    problems = []
    with tempfile.TemporaryDirectory(prefix="slipstream-per-app-") as tmp:
        path = os.path.join(tmp, "vk_layer_settings.txt")
        with open(path, "w") as f:
            f.write("slipstream.fuse = off\n"
                    "slipstream.spin_us = 50\n"
                    f"slipstream.app.{exe}.fuse = on\n"
                    f"slipstream.app.{exe}.batch_max = 7\n"
                    "slipstream.app.some-other-program.spin_us = 5\n")
        got = settings(args.info, path)
        want = {"fuse": "on", "batch_max": "7", "spin_us": "50"}
        for name, value in want.items():
            if got.get(name) != value:
                problems.append(f"{exe}: {name} = {got.get(name)!r}, expected {value!r} (its own section, then the file)")
        got = settings(args.info, path, {"VK_SLIPSTREAM_BATCH_MAX": "9"})
        if got.get("batch_max") != "9":
            problems.append(f"the environment did not win over the program's section: batch_max = {got.get('batch_max')!r}")
    for line in problems:
        print(line)
    print(f"per-application settings: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
