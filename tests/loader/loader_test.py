#!/usr/bin/env python3
"""Loader integration: the layer is found and enabled exactly when it should be.

Runs `slipstream-info` (which proves enablement by the layer's own statistics report) under:
  explicit by name (VK_INSTANCE_LAYERS) from the build tree,
  implicit (ENABLE_SLIPSTREAM=1) from the build tree's staging share/ via XDG_DATA_DIRS,
  implicit without ENABLE_SLIPSTREAM (must stay off), with DISABLE_SLIPSTREAM=1 (must stay off),
  an install into a fresh prefix (relative library path), found through XDG_DATA_DIRS,
  a vk_layer_settings.txt in the working directory, and the environment winning over it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import slipstream_env  # noqa: E402
from checks import check, failures  # noqa: E402


def info(build, env, cwd=None):
    p = subprocess.run([os.path.join(build, "tools", "slipstream-info")], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    return p.stdout + p.stderr


def enabled(out):
    return "ENABLED in this environment" in out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    b = os.path.abspath(ap.parse_args().build_dir)
    base = dict(os.environ)
    for k in ("VK_INSTANCE_LAYERS", "ENABLE_SLIPSTREAM", "DISABLE_SLIPSTREAM", "VK_ADD_LAYER_PATH"):
        base.pop(k, None)
    base = {k: v for k, v in base.items() if not k.startswith("VK_SLIPSTREAM_")}

    out = info(b, slipstream_env.layer_env("off", b, base))
    check("off: layer not enabled", not enabled(out), out)

    out = info(b, slipstream_env.layer_env("on", b, base))
    check("explicit by name: found and enabled", "found by the loader" in out and enabled(out), out)

    out = info(b, slipstream_env.layer_env("implicit", b, base))
    check("implicit with ENABLE_SLIPSTREAM=1: enabled", enabled(out), out)

    env = slipstream_env.layer_env("implicit", b, base)
    env.pop("ENABLE_SLIPSTREAM")
    out = info(b, env)
    check("implicit without ENABLE_SLIPSTREAM: not enabled", not enabled(out), out)

    env = slipstream_env.layer_env("implicit", b, base)
    env["DISABLE_SLIPSTREAM"] = "1"
    out = info(b, env)
    check("implicit with DISABLE_SLIPSTREAM=1: not enabled", not enabled(out), out)

    with tempfile.TemporaryDirectory() as prefix:
        p = subprocess.run(["cmake", "--install", b, "--prefix", prefix], capture_output=True, text=True)
        check("cmake --install into a prefix", p.returncode == 0, p.stdout + p.stderr)
        env = dict(base)
        env["XDG_DATA_DIRS"] = os.path.join(prefix, "share") + ":/usr/local/share:/usr/share"
        env["ENABLE_SLIPSTREAM"] = "1"
        out = info(b, env)
        check("installed implicit manifest (relative library path): enabled", enabled(out), out)
        env.pop("ENABLE_SLIPSTREAM")
        env["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
        env["VK_ADD_LAYER_PATH"] = os.path.join(prefix, "share", "vulkan", "explicit_layer.d")
        env["VK_INSTANCE_LAYERS"] = "VK_LAYER_slipstream"
        out = info(b, env)
        check("installed explicit manifest by name: enabled", enabled(out), out)

    with tempfile.TemporaryDirectory() as cwd:
        stats = os.path.join(cwd, "from_file.json")
        with open(os.path.join(cwd, "vk_layer_settings.txt"), "w") as f:
            f.write(f"slipstream.log = info\nslipstream.stats = on\n")
        env = slipstream_env.layer_env("on", b, base)
        out = info(b, env, cwd=cwd)
        check("settings file read from the working directory", "stats          = on" in out
              and "log            = info" in out, out)
        env["VK_SLIPSTREAM_LOG"] = "error"
        out = info(b, env, cwd=cwd)
        check("environment wins over the settings file", "log            = error" in out, out)
        env.pop("VK_SLIPSTREAM_LOG")
        env["VK_LAYER_SETTINGS_PATH"] = os.path.join(cwd, "elsewhere.txt")
        with open(env["VK_LAYER_SETTINGS_PATH"], "w") as f:
            f.write(f"slipstream.stats_file = {stats}\n")
        out = info(b, env, cwd="/")
        check("settings file through VK_LAYER_SETTINGS_PATH", f"stats_file     = {stats}" in out, out)

    env = slipstream_env.layer_env("on", b, base)
    env["VK_SLIPSTREAM_LOG"] = "loud"
    out = info(b, env)
    check("bad value: one clear warning, default kept",
          "VK_SLIPSTREAM_LOG (slipstream.log) = 'loud' is not valid; it accepts error|warn|info|debug" in out
          and "log            = warn" in out, out)

    print(f"{len(failures)} failed" if failures else "all loader checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
