#!/usr/bin/env python3
"""Runs lifecycle_loop under the layer and checks, from the layer's own statistics, that every
device's state, queue and command buffer was freed when the application destroyed them."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import slipstream_env  # noqa: E402

build, program = os.path.abspath(sys.argv[1]), sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    stats = os.path.join(tmp, "stats.json")
    env = slipstream_env.layer_env("on", build)
    env["VK_SLIPSTREAM_STATS_FILE"] = stats
    p = subprocess.run([program, "10"], env=env, capture_output=True, text=True, timeout=300)
    print(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f"lifecycle_loop failed with exit code {p.returncode}")
    devices = json.load(open(stats))["devices"]
    if len(devices) != 10:
        sys.exit(f"expected 10 device reports, got {len(devices)}")
    for i, d in enumerate(devices):
        live = d["live_layer_objects"]
        if any(live.values()):
            sys.exit(f"device {i}: layer state left after vkDestroyDevice: {live}")
        if d["command_buffers_submitted"] != 1 or d["commands"]["Transfer"] != 1:
            sys.exit(f"device {i}: expected one submitted command buffer holding one fill: {d}")
print("every device, queue and command buffer state was freed; secondaries counted in primaries")
