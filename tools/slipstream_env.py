"""How to run a program with or without the Slipstream layer: one place for the environment
recipe, shared by the `slipstream` command, the correctness-suite driver and the benchmark
runner.

Modes:
  off         the layer is not loaded (DISABLE_SLIPSTREAM=1 also blocks an installed implicit
              manifest), nor is any other layer we would add.
  on          the layer from the build tree, enabled by name (explicit manifest).
  validation  the layer with the Khronos validation layer *under* it, synchronization
              validation on.
  implicit    the layer enabled through its implicit manifest (ENABLE_SLIPSTREAM=1), found
              through XDG_DATA_DIRS pointing at the build tree's staging share/ folder.

The manifests are those of a build tree (its share/ folder), or of an installation: pass its
data folder (PREFIX/share) as `share` (the installed `slipstream` command does).
"""
import glob
import json
import os

MODES = ("off", "on", "validation", "implicit")
LAYER = "VK_LAYER_slipstream"
VALIDATION = "VK_LAYER_KHRONOS_validation"


def manifest_dirs(build_dir, share=None):
    """The folders holding the manifests: under build_dir's share/, or under `share`."""
    share = os.path.abspath(share or os.path.join(build_dir, "share"))
    return {
        "share": share,
        "explicit": os.path.join(share, "vulkan", "explicit_layer.d"),
        "implicit": os.path.join(share, "vulkan", "implicit_layer.d"),
    }


def validation_enables():
    """VK_LAYER_ENABLES for the validation layer: synchronization validation, and (the second
    flag) the 1.3.239 layer's checks of hazards *between* submissions too, the ones a batching
    layer could introduce."""
    return ("VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT:"
            "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT")


def layer_env(mode, build_dir, base=None, extra_layers_below=(), share=None):
    """Returns a copy of `base` (default: os.environ) set up for `mode`, with the manifests
    of `build_dir`, or of the installation whose data folder is `share` (build_dir None).

    `extra_layers_below` names explicit layers to stack under Slipstream (for example a
    test-only layer); their manifests must be findable through VK_ADD_LAYER_PATH, which the
    caller can extend.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
    env = dict(os.environ if base is None else base)
    for k in ("VK_INSTANCE_LAYERS", "ENABLE_SLIPSTREAM", "VK_LOADER_LAYERS_ENABLE",
              "VK_LOADER_LAYERS_DISABLE"):
        env.pop(k, None)
    dirs = manifest_dirs(build_dir, share)
    below = list(extra_layers_below)
    if mode == "off":
        env["DISABLE_SLIPSTREAM"] = "1"
        if below:
            env["VK_INSTANCE_LAYERS"] = ":".join(below)
        return env
    env.pop("DISABLE_SLIPSTREAM", None)
    add = [dirs["explicit"]] + ([env["VK_ADD_LAYER_PATH"]] if env.get("VK_ADD_LAYER_PATH") else [])
    env["VK_ADD_LAYER_PATH"] = ":".join(add)
    if mode == "implicit":
        xdg = env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
        env["XDG_DATA_DIRS"] = dirs["share"] + ":" + xdg
        env["ENABLE_SLIPSTREAM"] = "1"
        if below:
            env["VK_INSTANCE_LAYERS"] = ":".join(below)
        return env
    # Named in stack order, closest to the application first. Debian's loader 1.3.239 stacks in
    # manifest discovery order instead: Slipstream's folder leads VK_ADD_LAYER_PATH, and the
    # system folders (the validation layer's) come after it (add_bottom_layer).
    layers = [LAYER]
    if mode == "validation":
        layers.append(VALIDATION)
        env["VK_LAYER_ENABLES"] = validation_enables()
    layers += below
    env["VK_INSTANCE_LAYERS"] = ":".join(layers)
    return env


def manifest_dir_of(layer, env):
    """The folder holding the explicit manifest of `layer`, searched where the loader looks
    (VK_LAYER_PATH, VK_ADD_LAYER_PATH, then XDG_DATA_DIRS' and /etc's vulkan/explicit_layer.d),
    or None."""
    dirs = []
    for var in ("VK_LAYER_PATH", "VK_ADD_LAYER_PATH"):
        dirs += [d for d in (env.get(var) or "").split(":") if d]
    xdg = env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    dirs += [os.path.join(d, "vulkan", "explicit_layer.d") for d in xdg.split(":") if d]
    dirs += ["/etc/vulkan/explicit_layer.d"]
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            try:
                with open(path, encoding="utf-8") as f:
                    if json.load(f).get("layer", {}).get("name") == layer:
                        return d
            except (OSError, ValueError, AttributeError):
                continue
    return None


def add_bottom_layer(env, layer, folder):
    """Stacks `layer` (its manifest in `folder`) under every layer `env` already names, in place.
    The loader stacks in manifest discovery order (see layer_env), so every folder of a layer
    above, the validation layer's system folder too, goes on VK_ADD_LAYER_PATH before `folder`
    (found again later, a manifest is not stacked twice)."""
    above = [n for n in (env.get("VK_INSTANCE_LAYERS") or "").split(":") if n]
    path = [d for d in (env.get("VK_ADD_LAYER_PATH") or "").split(":") if d]
    for name in above:
        d = manifest_dir_of(name, env)
        if d and d not in path:
            path.append(d)
    env["VK_ADD_LAYER_PATH"] = ":".join(path + [folder])
    env["VK_INSTANCE_LAYERS"] = ":".join(above + [layer])
