#!/usr/bin/env python3
"""Slipstream beside the other layers users run: one correctness-suite program with Slipstream
and another layer stacked together must give the checksum it gives with no layer at all, and
Slipstream must do its work there.

    coexist_test.py --build-dir B --with NAME [--expect-stat NAME>=N ...] [--canary PROGRAM]
                    -- <program> [args...]

NAME is one of:
  device_select       Mesa's implicit VK_LAYER_MESA_device_select (mesa-vulkan-drivers; on
                      unless NODEVICE_SELECT=1), with Slipstream explicit by name and again
                      implicit (ENABLE_SLIPSTREAM=1)
  mangohud            MangoHud's implicit overlay (MANGOHUD=1), above Slipstream
  vkbasalt            vkBasalt's implicit post-processing layer (ENABLE_VKBASALT=1, a
                      configuration with an effect), above Slipstream
  validation_below    the Khronos validation layer under Slipstream, synchronization
                      validation on (as the suite's "validation" mode)
  validation_above    the same layer above Slipstream: it sees the application's calls, not
                      Slipstream's batches. Debian 12's loader (1.3.239) stacks explicit layers
                      in the order it found their manifests, whatever the order VK_INSTANCE_LAYERS
                      names them in: the validation layer's folder goes first in
                      VK_ADD_LAYER_PATH, ahead of Slipstream's
  all                 device_select, MangoHud and vkBasalt at once, Slipstream implicit

The reference run has no layer at all (DISABLE_SLIPSTREAM=1, NODEVICE_SELECT=1). Every other run
passes when it exits 0 with exactly one `checksum:` line equal to the reference's, prints no
validation message (as run_app.py), the layer's statistics file ($VK_SLIPSTREAM_STATS_FILE)
shows it loaded and each --expect-stat holds (run_app.py's rules), and the loader's device and
instance layer chains (VK_LOADER_DEBUG=layer) hold the expected layers in the expected order,
so a layer that silently did not load fails the test. Where the validation layer is in the
stack, --canary (the suite's validation_canary) runs too and validation must report its
deliberate hazard (exit status 1, "Hazard READ_AFTER_WRITE"): the validation layer is really
checking from where it sits. MangoHud and vkBasalt are optional
packages: without their manifest the test prints "SKIPPED: ..." (ctest's SKIP_REGULAR_EXPRESSION)
and exits 0; tools/bootstrap.sh installs both.

Exit status: 0 when every run passed (or the test was skipped), 1 otherwise, 2 on bad usage.
"""
import argparse
import glob
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tools"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "common"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "apps"))
import loader_chain  # noqa: E402
import run_app  # noqa: E402
import slipstream_env  # noqa: E402

SLIPSTREAM = slipstream_env.LAYER
VALIDATION = slipstream_env.VALIDATION
DEVICE_SELECT = "VK_LAYER_MESA_device_select"
MANGOHUD = "VK_LAYER_MANGOHUD_overlay"
VKBASALT = "VK_LAYER_VKBASALT_post_processing"
# Where each other layer comes from, for the message when its manifest is missing.
PACKAGES = {DEVICE_SELECT: "mesa-vulkan-drivers", MANGOHUD: "mangohud", VKBASALT: "vkbasalt",
            VALIDATION: "vulkan-validationlayers"}
OPTIONAL = (MANGOHUD, VKBASALT)
# What validation must say about the canary's deliberate hazard, from above or below.
HAZARD = "Hazard READ_AFTER_WRITE"
# Variables that enable or disable the layers under test: only a configuration sets them.
LAYER_SWITCHES = ("NODEVICE_SELECT", "MESA_VK_DEVICE_SELECT", "MANGOHUD", "DISABLE_MANGOHUD", "MANGOHUD_CONFIG",
                  "ENABLE_VKBASALT", "DISABLE_VKBASALT", "VKBASALT_CONFIG_FILE", "VK_LOADER_DEBUG")


class Config:
    """One run: how Slipstream is enabled (a slipstream_env mode), what else is set, and the
    layers the chains must hold: each list of `order` in that order from the application down
    (other layers may sit between), in the instance chain, and in the device chain less
    device_select (which takes part in the instance only)."""

    def __init__(self, name, mode, env=None, order=(), validation_above=False):
        self.name = name
        self.mode = mode
        self.env = env or {}
        self.order = [list(o) for o in order]
        self.validation_above = validation_above

    def layers(self):
        return {n for o in self.order for n in o}


def configs(tmp):
    basalt_conf = os.path.join(tmp, "vkBasalt.conf")
    with open(basalt_conf, "w", encoding="utf-8") as f:
        f.write("effects = cas\ncasSharpness = 0.4\n")
    mangohud = {"MANGOHUD": "1"}
    vkbasalt = {"ENABLE_VKBASALT": "1", "VKBASALT_CONFIG_FILE": basalt_conf}
    # The loader puts implicit layers before those VK_INSTANCE_LAYERS names: MangoHud, vkBasalt
    # and device_select sit above an explicitly enabled Slipstream; among implicit layers the
    # order is the loader's, not ours.
    return {
        "device_select": [
            Config("device_select, Slipstream explicit", "on", order=[[DEVICE_SELECT, SLIPSTREAM]]),
            Config("device_select, Slipstream implicit", "implicit", order=[[DEVICE_SELECT], [SLIPSTREAM]]),
        ],
        "mangohud": [Config("MangoHud above Slipstream", "on", mangohud, order=[[MANGOHUD, SLIPSTREAM]])],
        "vkbasalt": [Config("vkBasalt above Slipstream", "on", vkbasalt, order=[[VKBASALT, SLIPSTREAM]])],
        "validation_below": [Config("validation below Slipstream", "validation", order=[[SLIPSTREAM, VALIDATION]])],
        "validation_above": [Config("validation above Slipstream", "validation", order=[[VALIDATION, SLIPSTREAM]],
                                    validation_above=True)],
        # Without validation: vkBasalt 0.3.2.8 enables VK_KHR_swapchain_mutable_format without
        # VK_KHR_swapchain at vkCreateDevice, which validation under it reports, Slipstream or not.
        "all": [Config("device_select, MangoHud, vkBasalt, Slipstream implicit", "implicit", dict(mangohud, **vkbasalt),
                       order=[[DEVICE_SELECT], [MANGOHUD], [VKBASALT], [SLIPSTREAM]])],
    }


def installed_layers():
    """The layers whose manifests the loader can find here: {name: manifest path}."""
    dirs = [os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")]
    dirs += (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    dirs += ["/etc", "/etc/xdg"]
    found = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "vulkan", "*_layer.d", "*.json"))):
            try:
                with open(path, encoding="utf-8") as f:
                    manifest = json.load(f)
            except (OSError, ValueError):
                continue
            layers = manifest.get("layers", []) + ([manifest["layer"]] if "layer" in manifest else [])
            for layer in layers:
                if isinstance(layer, dict) and layer.get("name"):
                    found.setdefault(layer["name"], path)
    return found


# The loader's own log lines (VK_LOADER_DEBUG), which name layers and may hold "validation:".
LOADER_LINE = re.compile(r"^(?:\[Vulkan Loader\] )?[A-Z]+(?: \| [A-Z]+)*:\s")


def validation_messages(run):
    return [line for line in run.stdout.splitlines() + run.stderr.splitlines()
            if any(m in line for m in run_app.MESSAGE_MARKERS) and not LOADER_LINE.match(line)
            and not line.startswith(run_app.IGNORED_PREFIX)]


def base_env(build_dir, mode):
    env = slipstream_env.layer_env(mode, build_dir)
    for k in LAYER_SWITCHES:
        env.pop(k, None)
    return env


def in_order(chain, expected):
    """Whether every expected name is in chain, in this order (other layers may sit between)."""
    positions = [chain.index(n) if n in chain else -1 for n in expected]
    return -1 not in positions and positions == sorted(positions)


def run(argv, env):
    r = run_app.Run("")
    run_app.run_program(argv, env, 120, r)
    sums = [m.group(1) for m in (run_app.CHECKSUM_RE.match(line.strip()) for line in r.stdout.splitlines()) if m]
    r.checksum = sums[0] if len(sums) == 1 else None
    if len(sums) != 1:
        r.problems.append(f"expected exactly one `checksum:` line, found {len(sums)}")
    if r.rc != 0:
        r.problems.append(f"exit status {r.rc}")
    return r


def main():
    argv = sys.argv[1:]
    if "--" not in argv or not argv[argv.index("--") + 1:]:
        print("coexist_test.py: expected `-- <program> [args...]`", file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--with", dest="other", required=True,
                    choices=("device_select", "mangohud", "vkbasalt", "validation_below", "validation_above", "all"))
    ap.add_argument("--expect-stat", action="append", default=[], metavar="NAME>=N")
    ap.add_argument("--canary", help="a program with a hazard validation must report")
    args = ap.parse_args(argv[:split])
    program = argv[split + 1:]
    try:
        expect = [run_app.parse_stat_expectation(e) for e in args.expect_stat]
    except ValueError as e:
        ap.error(str(e))
    name = os.path.basename(program[0])

    with tempfile.TemporaryDirectory(prefix="slipstream-coexist-") as tmp:
        runs = configs(tmp)[args.other]
        found = installed_layers()
        needed = {n for c in runs for n in c.layers() if n != SLIPSTREAM}
        for layer in sorted(needed - set(found)):
            hint = f"{layer} is not installed (Debian package {PACKAGES[layer]}; tools/bootstrap.sh installs it)"
            if layer in OPTIONAL:
                print(f"SKIPPED: {hint}")
                return 0
            print(f"FAIL: {hint}")
            return 1

        ref_env = base_env(args.build_dir, "off")
        ref_env["NODEVICE_SELECT"] = "1"
        ref_env["VK_LOADER_DEBUG"] = "layer"
        ref = run(program, ref_env)
        chain = loader_chain.names(loader_chain.parse(ref.stderr).get("instance", []))
        if SLIPSTREAM in chain or DEVICE_SELECT in chain:
            ref.problems.append(f"the reference run had layers: {chain}")
        print(f"{name} [no layer] {'FAIL' if ref.problems else 'PASS'}: checksum {ref.checksum or '-'}, "
              f"{ref.seconds:.2f} s{': ' + '; '.join(ref.problems) if ref.problems else ''}")
        if ref.problems:
            run_app.print_block(ref.stdout + ref.stderr)
            return 1

        failed = False
        for i, config in enumerate(runs):
            env = base_env(args.build_dir, config.mode)
            env.update(config.env)
            if config.validation_above:
                env["VK_INSTANCE_LAYERS"] = f"{VALIDATION}:{SLIPSTREAM}"
                env["VK_ADD_LAYER_PATH"] = os.path.dirname(found[VALIDATION]) + ":" + env["VK_ADD_LAYER_PATH"]
            env["VK_LOADER_DEBUG"] = "layer"
            stats = os.path.join(tmp, f"stats-{i}.json")
            env[run_app.STATS_VAR] = stats
            r = run(program, env)
            messages = validation_messages(r)
            if messages:
                r.problems.append(f"{len(messages)} validation message line(s)")
            if r.checksum and r.checksum != ref.checksum:
                r.problems.append(f"checksum differs from the run without layers ({ref.checksum})")
            problem = run_app.check_stats(stats, expect)
            if problem:
                r.problems.append(problem)
            chains = loader_chain.parse(r.stderr)
            instance = loader_chain.names(chains.get("instance", []))
            device = loader_chain.names(chains.get("device", []))
            for order in config.order:
                if not in_order(instance, order):
                    r.problems.append(f"instance layer chain {instance}: expected {' > '.join(order)}")
                order = [n for n in order if n != DEVICE_SELECT]
                if order and not in_order(device, order):
                    r.problems.append(f"device layer chain {device}: expected {' > '.join(order)}")
            if args.canary and VALIDATION in config.layers():
                c = run([args.canary], dict(env, VK_SLIPSTREAM_FUSE="off"))
                if c.rc != 1 or not any(HAZARD in line for line in validation_messages(c)):
                    r.problems.append(f"validation did not report the canary's hazard (exit {c.rc}):\n"
                                      f"{c.stdout}{c.stderr}")
            if r.problems:
                failed = True
                print(f"--- {name} [{config.name}] exit status {r.rc}, output:")
                run_app.print_block(r.stdout + r.stderr)
            print(f"{name} [{config.name}] {'FAIL' if r.problems else 'PASS'}: checksum {r.checksum or '-'}, "
                  f"device chain {' > '.join(device)}, {r.seconds:.2f} s"
                  f"{': ' + '; '.join(r.problems) if r.problems else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
