#!/usr/bin/env python3
"""The spin knobs do what they say, read from the layer's own statistics:
  spin on (default): waits spin and some win; idle waits on known-idle queues are answered at
                     once; no wait blocks without first spinning... unless adaptive skipped it;
  spin off:          no spinning, no idle shortcuts (the driver answers every wait);
  spin_us=0:         no spinning, but the layer's promise still holds: no VK_TIMEOUT before
                     the whole timeout (the program checks it with --strict-timeouts)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import slipstream_env  # noqa: E402

build, program = os.path.abspath(sys.argv[1]), sys.argv[2]


def run(extra):
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats.json")
        env = slipstream_env.layer_env("on", build)
        env["VK_SLIPSTREAM_STATS_FILE"] = stats
        env.update(extra)
        # The layer promises full timeouts whenever its waits are on, whatever the budget.
        strict = [] if extra.get("VK_SLIPSTREAM_SPIN") == "off" else ["--strict-timeouts"]
        p = subprocess.run([program] + strict, env=env, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            sys.exit(f"{program} with {extra} failed:\n{p.stdout}{p.stderr}")
        return json.load(open(stats))["devices"][0]


on = run({})
print("spin on :", {k: on[k] for k in ("fence_waits", "spin_waits", "spin_wins", "spin_blocked",
                                       "spin_skipped", "spin_ns", "idle_shortcuts")})
problems = []
if on["spin_waits"] == 0 or on["spin_wins"] == 0:
    problems.append("spin on: no wait spun, or none was won by spinning")
if on["idle_shortcuts"] == 0:
    problems.append("spin on: no idle wait was answered at once (the program waits on idle queues)")
if on["spin_wins"] + on["spin_blocked"] != on["spin_waits"]:
    problems.append("spin on: every spinning wait must end as a win or a block")

off = run({"VK_SLIPSTREAM_SPIN": "off"})
print("spin off:", {k: off[k] for k in ("fence_waits", "spin_waits", "idle_shortcuts")})
if off["spin_waits"] or off["idle_shortcuts"] or off["spin_ns"]:
    problems.append("spin off: the layer still spun or answered idle waits itself")
if off["fence_waits"] != on["fence_waits"]:
    problems.append("the same program made a different number of fence waits")

zero = run({"VK_SLIPSTREAM_SPIN_US": "0"})
if zero["spin_waits"]:
    problems.append("spin_us=0: the layer still spun")

for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
