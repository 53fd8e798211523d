#!/usr/bin/env python3
"""The manifest's "features" section (layer manifest file format 1.2.0), from the layer's own
table of settings (src/ground/core/settings.cpp, setting_specs), so that the Vulkan Configurator can
show and edit every setting: key, label, description, type, default, allowed values.

Usage: gen_manifest_settings.py SETTINGS_CPP OUT_JSON_FRAGMENT
The output is the text that follows `"features": ` in the manifest."""
import json
import re
import sys

SPEC = re.compile(r'^\s*\{"([a-z0-9_]+)",\s*"([^"]*)",\s*"([^"]*)",\s*"((?:[^"\\]|\\.)*)"\},?\s*$')
RANGE = re.compile(r"^(\d+)\.\.(\d+)(?:\s*\(([^)]*)\))?$")


def specs(path):
    out = []
    in_table = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "setting_specs()" in line:
                in_table = True
            elif in_table and line.strip().startswith("};"):
                break
            elif in_table:
                m = SPEC.match(line)
                if m:
                    out.append(m.groups())
    if not out:
        raise SystemExit(f"{path}: no setting_specs table found")
    return out


def label(name):
    return name.replace("_", " ").capitalize().replace(" us", " (µs)")


def setting(name, accepted, default, description):
    s = {"key": name, "env": "VK_SLIPSTREAM_" + name.upper(), "label": label(name),
         "description": description.replace('\\"', '"')}
    values = accepted.split("|")
    r = RANGE.match(accepted)
    if values == ["on", "off"]:
        s["type"] = "BOOL"
        s["default"] = default == "on"
    elif len(values) > 1:
        s["type"] = "ENUM"
        s["flags"] = [{"key": v, "label": v, "description": v} for v in values]
        s["default"] = default
    elif r:
        s["type"] = "INT"
        s["default"] = int(default)
        s["range"] = {"min": int(r.group(1)), "max": int(r.group(2))}
        if r.group(3):
            s["unit"] = r.group(3)
    elif "path" in accepted:
        s["type"] = "SAVE_FILE"
        s["default"] = default
    else:
        s["type"] = "STRING"
        s["default"] = default
    if name.startswith("narrow_history") or name.startswith("elide_proof") or "test-only" in description:
        s["view"] = "HIDDEN"
    return s


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    features = {"settings": [setting(*spec) for spec in specs(argv[0])]}
    text = json.dumps(features, indent=4, ensure_ascii=False)
    # Indented to sit inside "layer" of the manifest.
    text = text.replace("\n", "\n        ")
    with open(argv[1], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
