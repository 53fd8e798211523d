#!/usr/bin/env python3
"""Runs slipstream-bench in three configurations, interleaved, and reports one table.

Columns:
  naive   --style naive, Slipstream not loaded (layer_env("off"))
  layer   --style naive, Slipstream loaded from the build tree (layer_env("on"))
  tuned   --style tuned, Slipstream not loaded: what a careful runtime does by hand

For each of --rounds rounds, the three configurations run one after the other (the order
rotates each round, so no column always runs first or last). Each row runs in a process of its
own (--process row, the default): the three columns of one row, then the next row's, so that no
row runs in the heap and placement state that earlier rows left behind (on the H200, after the
48 MB rows and the matvec row's 235 MB of host-visible VRAM, the naive program's later kernels,
with the layer or without it, took 2-2.6x their GPU time of a fresh process, while the tuned
program's did not). --process column runs all rows of a column in one process instead. The samples of each row from all
rounds are pooled: the table shows their median and spread (p10..p90), and the ratios
layer / naive (below 1: the layer helps) and layer / tuned (near 1: the layer gets what hand
tuning gets).

Rows with a submission pattern of their own (OWN_PATTERN_ROWS; today only `batched`, the
pattern of ML runtimes: 100 dependent dispatches per command buffer, one fence wait per command
buffer) submit the same way whatever --style says: the naive and layer columns run that pattern
without and with the layer, so layer / naive is the layer's cost on it, and the tuned column
does not run the row (it would be the same program as the naive column); its cell shows
"not run" and the table prints a note saying so.

Slow-state reruns (--rerun-slow, auto by default): each bench process first measures the
round trip of an empty command buffer (its JSON's state_probe_us). Some machines put a whole
process in a state where every GPU round trip costs several times more (an H200 ran some
processes at 80-120 us per round trip, others at 15-20, with and without the layer), which
would make one configuration's process look slow for a reason that is not its configuration.
After the rounds, a process whose probe is more than twice the best probe of the report and
20 us above it runs again (twice at most), and the run with the lower probe stays; the JSON
lists every rerun (slow_state_reruns). auto does not rerun on a software device.

Writes DIR/bench.json (every raw run, the combined table, device, driver, commit, date) and
DIR/bench.svg (the table as grouped horizontal bars on a log scale). Exit status: 0 when all
runs succeeded and verified, 1 when any run failed (verification, validation message, crash,
timeout) or the outputs could not be written, 2 for usage errors or a missing layer manifest.

--knob-matrix runs, instead of the three columns, the naive program without the layer, with
the layer under its defaults, and with the layer under each single knob flipped (KNOBS), all
interleaved in the same rounds, and prints per row the fastest configuration of the layer and
the defaults' ratio to it. A row is marked where the defaults lose by more than 5% to another
configuration (or to no layer) and their p10..p90 ranges do not overlap; marked rows are run
again (--repeat-rounds more rounds of those rows and configurations) and the mark stays only if
the pooled samples still say so. Writes DIR/knob_matrix.json. Exit status 1 when any run failed.

Usage:
  bench_report.py --build-dir B [--quick] [--out DIR] [--wait fence|queue-idle] [--reps N]
                  [--rounds R] [--rows a,b] [--process row|column] [--bench PATH]
                  [--allow-missing-layer] [--knob-matrix [--repeat-rounds K]]
                  [--rerun-slow auto|on|off]
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(HERE))  # tools/, for slipstream_env
import slipstream_env  # noqa: E402

MANIFEST_NAME = "VkLayer_slipstream.json"

COLUMNS = [
    # key, style, layer mode, label
    ("naive", "naive", "off", "naive, no layer"),
    ("layer", "naive", "on", "naive + Slipstream"),
    ("tuned", "tuned", "off", "tuned by hand, no layer"),
]

COLORS = {"naive": "#c0392b", "layer": "#2471a3", "tuned": "#229954"}

# The knob matrix: each single knob flipped from its default (the layer's README says what
# each trades), in the naive program under the layer.
KNOBS = [
    ("VK_SLIPSTREAM_FUSE", "off"),
    ("VK_SLIPSTREAM_LAZY_RECORD", "off"),
    ("VK_SLIPSTREAM_LAZY_RECORD", "on"),
    ("VK_SLIPSTREAM_NARROW_BARRIERS", "off"),
    ("VK_SLIPSTREAM_FUSE_BARRIER", "off"),
    ("VK_SLIPSTREAM_MAX_DEFER_US", "0"),
    ("VK_SLIPSTREAM_SPIN", "off"),
    ("VK_SLIPSTREAM_ELIDE_BARRIERS", "off"),
    ("VK_SLIPSTREAM_OBJECT_POOL", "off"),
    ("VK_SLIPSTREAM_ALLOC_CACHE", "off"),
    # Armed launches (a latency queue keeps the last command buffer's replay waiting on the
    # GPU): off by default, a research feature.
    ("VK_SLIPSTREAM_ARM", "on"),
]
MATRIX_COLUMNS = [("naive", "naive", "off", "no layer", {}), ("defaults", "naive", "on", "defaults", {})] + [
    (f"{k[len('VK_SLIPSTREAM_'):]}={v}", "naive", "on", f"{k[len('VK_SLIPSTREAM_'):]}={v}", {k: v})
    for k, v in KNOBS]
MARK_RATIO = 1.05

# Rows whose submission pattern does not depend on --style (slipstream-bench says "pattern" in
# each row of its JSON): the note the table prints for each, and the columns that skip it,
# because there it would only repeat another column's program under a misleading label.
OWN_PATTERN_ROWS = {
    "batched": ("batched: the 'naive' and 'layer' columns both run the row's own pattern (ML "
                "runtimes: 100 dependent dispatches per command buffer with COMPUTE_SHADER "
                "barriers, one vkQueueSubmit with a fence and one plain vkWaitForFences per "
                "command buffer; µs per command buffer), without and with the layer, whatever "
                "--wait says; layer÷naive is the layer's cost on it (target: at most 1.02×). "
                "Not run in the tuned column: it would be the naive column's program again."),
}
SKIPPED_IN_COLUMN = {"tuned": set(OWN_PATTERN_ROWS)}

SOFTWARE_NOTE = ("Ran on lavapipe (llvmpipe, Mesa's CPU implementation of Vulkan), not a GPU: "
                 "these numbers only show that the benchmark and the layer work; they say "
                 "nothing about GPU performance.")


def eprint(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Statistics (same definitions as slipstream-bench: linear interpolation between samples).
def percentile(values, p):
    v = sorted(values)
    if not v:
        return None
    pos = p * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(len(v) - 1, lo + 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stats(values):
    if not values:
        return None
    return {
        "median": percentile(values, 0.5),
        "min": min(values),
        "p10": percentile(values, 0.1),
        "p90": percentile(values, 0.9),
        "max": max(values),
        "n": len(values),
    }


UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1e6, "ns": 1e-3}


def fmt_time_us(us):
    """Formats a duration given in microseconds with a fitting unit."""
    if us is None or not math.isfinite(us):
        return "-"
    a = abs(us)
    if a >= 1e6:
        return f"{us / 1e6:.3g} s"
    if a >= 1e3:
        return f"{us / 1e3:.3g} ms"
    if a >= 1:
        return f"{us:.3g} µs"
    return f"{us * 1e3:.3g} ns"


def fmt_cell(med, p10, p90):
    """'40.6 µs [37.9–45.3]': the median, then p10–p90 in the median's unit."""
    if med is None or not math.isfinite(med):
        return "-"
    a = abs(med)
    div, unit = (1e6, "s") if a >= 1e6 else (1e3, "ms") if a >= 1e3 else (1.0, "µs") if a >= 1 \
        else (1e-3, "ns")
    spread = ""
    if p10 is not None and p90 is not None:
        spread = f" [{p10 / div:.3g}–{p90 / div:.3g}]"
    return f"{med / div:.3g} {unit}{spread}"


def wrap(text, width):
    """Greedy word wrap to lines of at most `width` characters."""
    lines, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    if cur:
        lines.append(cur)
    return lines


def fmt_ratio(r):
    if r is None or not math.isfinite(r):
        return "-"
    return f"{r:.2f}×" if r < 10 else f"{r:.3g}×"


# --------------------------------------------------------------------------------------------
def find_bench(build_dir, explicit):
    if explicit:
        if not os.access(explicit, os.X_OK):
            eprint(f"bench_report: {explicit} is not an executable")
            sys.exit(2)
        return os.path.abspath(explicit)
    for rel in ("tools/bench/slipstream-bench", "bench/slipstream-bench", "bin/slipstream-bench"):
        p = os.path.join(build_dir, rel)
        if os.access(p, os.X_OK) and os.path.isfile(p):
            return os.path.abspath(p)
    for root, dirs, files in os.walk(build_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "CMakeFiles"]
        if "slipstream-bench" in files:
            p = os.path.join(root, "slipstream-bench")
            if os.access(p, os.X_OK):
                return os.path.abspath(p)
    eprint(f"bench_report: no slipstream-bench under {build_dir}; build the target "
           "slipstream-bench first (or pass --bench PATH)")
    sys.exit(2)


def list_rows(bench):
    """The row ids slipstream-bench knows, in its order (its --list-rows)."""
    try:
        p = subprocess.run([bench, "--list-rows"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        eprint(f"bench_report: {bench} --list-rows failed: {e}")
        sys.exit(2)
    rows = p.stdout.split()
    if p.returncode != 0 or not rows:
        eprint(f"bench_report: {bench} --list-rows failed (exit {p.returncode}): {p.stderr.strip()}")
        sys.exit(2)
    return rows


def software_device(bench):
    """Whether the device slipstream-bench would run on is a software one (its --probe-device)."""
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
    try:
        p = subprocess.run([bench, "--probe-device"], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0 and "software: yes" in p.stdout


def rows_per_column(all_rows, selected):
    """Which rows each column runs: None for all of the bench's rows (no --rows), else a list;
    an empty list means the column does not run at all."""
    plan = {}
    for key, *_ in COLUMNS:
        want = [r for r in (selected or all_rows) if r not in SKIPPED_IN_COLUMN.get(key, ())]
        plan[key] = None if (not selected and want == all_rows) else want
    return plan


def build_commit(bench):
    """The commit the bench (and the layer built beside it) was built from, or None."""
    try:
        p = subprocess.run([bench, "--build-commit"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = p.stdout.strip()
    return commit if p.returncode == 0 and commit and commit != "unknown" else None


def git_commit():
    """The repository's HEAD (with '-dirty' when tracked files changed), or None. Read-only."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    repo = os.path.dirname(os.path.dirname(HERE))
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "--quiet", "HEAD"],
                              capture_output=True, text=True, env=env, timeout=20)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        commit = head.stdout.strip()
        st = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, env=env, timeout=60)
        if st.returncode == 0 and st.stdout.strip():
            commit += "-dirty"
        return commit
    except (OSError, subprocess.SubprocessError):
        return None


def tail(text, n=4000):
    return text if len(text) <= n else "…" + text[-n:]


def run_one(bench, column, rows, build_dir, args, commit, tmpdir, round_index, layer_present, tag=""):
    key, style, mode, _, *rest = column
    effective_mode = mode if (mode == "off" or layer_present) else "off"
    env = slipstream_env.layer_env(effective_mode, build_dir)
    if rest:
        # A knob-matrix column: the knobs as it says, whatever the caller's environment held.
        for k, _v in KNOBS:
            env.pop(k, None)
        env.update(rest[0])
    if commit and not env.get("SLIPSTREAM_COMMIT"):
        env["SLIPSTREAM_COMMIT"] = commit
    env.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
    safe_key = "".join(c if c.isalnum() else "_" for c in key)
    json_path = os.path.join(tmpdir, f"round{round_index}-{safe_key}{'-' + tag if tag else ''}.json")
    cmd = [bench, "--style", style, "--wait", args.wait, "--json", json_path]
    if args.quick:
        cmd.append("--quick")
    if args.per_run_reps:
        cmd += ["--reps", str(args.per_run_reps)]
    if rows is not None:
        cmd += ["--rows", ",".join(rows)]
    if args.max_row_seconds is not None:
        cmd += ["--max-row-seconds", str(args.max_row_seconds)]
    label = (f"round {round_index + 1}/{args.rounds}: {key:<5} ({style}, layer {effective_mode})"
             f"{': ' + tag if tag else ''}")
    print(f"  {label} ...", end="", flush=True)
    t0 = datetime.datetime.now()
    record = {"round": round_index, "column": key, "style": style, "layer_mode": effective_mode,
              "command": cmd, "returncode": None, "seconds": None, "result": None,
              "stdout_tail": "", "stderr_tail": "", "error": None,
              "rerun": {"column": list(column), "rows": rows, "tag": tag}}
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        record["returncode"] = p.returncode
        record["stdout_tail"] = tail(p.stdout)
        record["stderr_tail"] = tail(p.stderr)
    except subprocess.TimeoutExpired as e:
        record["error"] = f"timed out after {args.timeout} s"
        record["stdout_tail"] = tail((e.stdout or b"").decode("utf-8", "replace")
                                     if isinstance(e.stdout, bytes) else (e.stdout or ""))
    record["seconds"] = round((datetime.datetime.now() - t0).total_seconds(), 2)
    if os.path.exists(json_path):
        try:
            with open(json_path, encoding="utf-8") as f:
                record["result"] = json.load(f)
        except (OSError, ValueError) as e:
            record["error"] = (record["error"] or "") + f" unreadable JSON: {e}"
    elif record["error"] is None:
        record["error"] = "no JSON written"
    if record["returncode"] not in (0, None) and record["error"] is None:
        failed_rows = [r["name"] for r in (record["result"] or {}).get("rows", []) if not r.get("verified")]
        vm = (record["result"] or {}).get("validation_messages", 0)
        why = []
        if failed_rows:
            why.append("verification failed: " + ", ".join(failed_rows))
        if vm:
            why.append(f"{vm} validation message(s)")
        record["error"] = "; ".join(why) or f"exit status {record['returncode']}"
    ok = record["error"] is None and record["returncode"] == 0
    print(f" {'ok' if ok else 'FAILED'} ({record['seconds']} s)", flush=True)
    if not ok:
        eprint(f"    {label}: {record['error']}")
        if record["stderr_tail"]:
            eprint("    stderr: " + record["stderr_tail"][-1500:].replace("\n", "\n    "))
    return record


# A process in a slow state: some machines put a whole process in a state where every GPU round
# trip costs several times more (an H200 ran some processes at 80-120 us per round trip against
# 15-20 for the others, with and without the layer). Each bench process measures an empty
# command buffer's round trip before its rows (state_probe_us); a process whose probe is more
# than SLOW_STATE_RATIO times the best of the report, and SLOW_STATE_FLOOR_US above it, runs
# again, up to SLOW_STATE_RETRIES times, and the run with the lower probe stays.
SLOW_STATE_RATIO = 2.0
SLOW_STATE_FLOOR_US = 20.0
SLOW_STATE_RETRIES = 2


def state_probe(run):
    p = (run.get("result") or {}).get("state_probe_us")
    return p if isinstance(p, (int, float)) and p > 0 else None


def slow_state(probe, best):
    return (probe is not None and best is not None and
            probe > max(best * SLOW_STATE_RATIO, best + SLOW_STATE_FLOOR_US))


def ran_on_software(runs):
    return any((r["result"] or {}).get("device", {}).get("software") or
               "llvmpipe" in (r["result"] or {}).get("device", {}).get("name", "") for r in runs)


def slow_state_reruns(args, runs, redo):
    """--rerun-slow: auto reruns slow processes except on a software device (whose round trips
    vary with the host's load, and whose numbers only show that the bench works)."""
    if args.rerun_slow == "off" or (args.rerun_slow == "auto" and ran_on_software(runs)):
        return []
    notes = rerun_slow_processes(runs, redo)
    for n in notes:
        print(f"  slow state: {n}")
    return notes


def rerun_slow_processes(runs, redo):
    """Runs again each run whose process was in a slow state (redo(run) makes a new run); returns
    what it did, a line each, and replaces a run where the new one's probe is lower."""
    probes = [p for p in map(state_probe, runs) if p is not None]
    if not probes:
        return []
    best = min(probes)
    notes = []
    for i, r in enumerate(runs):
        probe = state_probe(r)
        for _ in range(SLOW_STATE_RETRIES):
            if not slow_state(probe, best):
                break
            again = redo(r)
            new_probe = state_probe(again)
            kept = again["error"] is None and new_probe is not None and new_probe < probe
            tag = r["rerun"]["tag"]
            notes.append(f"round {r['round'] + 1} {r['column']}{' ' + tag if tag else ''}: state probe "
                         f"{probe:.1f} us against the best {best:.1f}: ran again, probe "
                         f"{'-' if new_probe is None else f'{new_probe:.1f}'} us, "
                         f"{'the new run kept' if kept else 'the first run kept'}")
            if kept:
                again["replaced_slow_probe_us"] = probe
                runs[i] = r = again
                probe = new_probe
    return notes


# --------------------------------------------------------------------------------------------
def combine(runs, columns, plan):
    """Pools samples per (row, column) across rounds. Returns the table rows in bench order.
    `plan` is rows_per_column's: a row a column did not run gets "not_run" there."""
    order, info = [], {}
    for run in runs:
        res = run["result"]
        if not res:
            continue
        for row in res.get("rows", []):
            name = row["name"]
            if name not in info:
                order.append(name)
                info[name] = {"name": name, "title": row.get("title", name), "unit": row["unit"],
                              "bytes": row.get("bytes", 0), "gpu_time_what": row.get("gpu_time_what", "")}
    table = []
    for name in order:
        entry = dict(info[name])
        scale = UNIT_US.get(entry["unit"], 1.0)
        entry["columns"] = {}
        entry["note"] = OWN_PATTERN_ROWS.get(name)
        for key, *_ in columns:
            samples, medians, gpus, verified, nruns, patterns = [], [], [], True, 0, []
            for run in runs:
                if run["column"] != key or not run["result"]:
                    continue
                for row in run["result"].get("rows", []):
                    if row["name"] != name:
                        continue
                    nruns += 1
                    if row.get("pattern") and row["pattern"] not in patterns:
                        patterns.append(row["pattern"])
                    samples += [s for s in row.get("samples", []) if s is not None]
                    if row.get("median") is not None:
                        medians.append(row["median"])
                    if row.get("gpu_time_us") is not None:
                        gpus.append(row["gpu_time_us"])
                    verified = verified and bool(row.get("verified"))
            st = stats(samples)
            entry["columns"][key] = {
                **(st or {}),
                "median_us": st["median"] * scale if st else None,
                "p10_us": st["p10"] * scale if st else None,
                "p90_us": st["p90"] * scale if st else None,
                "round_medians": medians,
                "runs": nruns,
                "gpu_time_us": percentile(gpus, 0.5) if gpus else None,
                "verified": verified and nruns > 0,
                "pattern": "/".join(patterns) or None,
            }
            if plan.get(key) is not None and name not in plan[key]:
                entry["columns"][key]["not_run"] = (
                    "the row's submission pattern does not depend on --style: this column would "
                    "run the naive column's program again")
        def ratio(a, b):
            ca, cb = entry["columns"].get(a, {}), entry["columns"].get(b, {})
            if ca.get("median") and cb.get("median"):
                return ca["median"] / cb["median"]
            return None
        entry["ratio_layer_naive"] = ratio("layer", "naive")
        entry["ratio_layer_tuned"] = ratio("layer", "tuned")
        entry["ratio_naive_tuned"] = ratio("naive", "tuned")
        table.append(entry)
    return table


def matrix_verdicts(table):
    """Per row: the fastest configuration of the layer, the defaults' ratio to it and to no
    layer, and whether the defaults lose (by more than MARK_RATIO, ranges not overlapping)."""
    out = []
    for r in table:
        cols = r["columns"]
        d = cols.get("defaults") or {}
        if d.get("median") is None:
            continue
        layer_keys = [k for k, *_ in MATRIX_COLUMNS if k != "naive" and (cols.get(k) or {}).get("median")]
        best = min(layer_keys, key=lambda k: cols[k]["median"])

        def loses_to(k):
            c = cols.get(k) or {}
            if not c.get("median"):
                return False
            return d["median"] > MARK_RATIO * c["median"] and d["p10"] > c["p90"]
        losing = [k for k in [k for k, *_ in MATRIX_COLUMNS] if k != "defaults" and loses_to(k)]
        naive = cols.get("naive") or {}
        out.append({"name": r["name"], "title": r["title"], "unit": r["unit"],
                    "defaults_median": d["median"], "best": best, "best_median": cols[best]["median"],
                    "ratio_to_best": d["median"] / cols[best]["median"],
                    "no_layer_median": naive.get("median"),
                    "ratio_to_no_layer": d["median"] / naive["median"] if naive.get("median") else None,
                    "marked": bool(losing), "loses_to": losing,
                    "medians": {k: (cols.get(k) or {}).get("median") for k, *_ in MATRIX_COLUMNS}})
    return out


def print_matrix(verdicts):
    w = max([len(v["title"]) for v in verdicts] + [10])
    head = (f"{'row':<{w}}  {'unit':>4}  {'no layer':>10}  {'defaults':>10}  {'best config':>24}  "
            f"{'best':>10}  {'def÷best':>8}  {'def÷none':>8}  mark")
    print()
    print(head)
    print("-" * len(head))
    for v in verdicts:
        none = v["no_layer_median"]
        print(f"{v['title']:<{w}}  {v['unit']:>4}  {none if none is not None else float('nan'):>10.4g}  "
              f"{v['defaults_median']:>10.4g}  {v['best']:>24}  {v['best_median']:>10.4g}  "
              f"{fmt_ratio(v['ratio_to_best']):>8}  {fmt_ratio(v['ratio_to_no_layer']):>8}  "
              f"{'LOSES to ' + ', '.join(v['loses_to']) if v['marked'] else ''}")
    print(f"marked: the defaults' median is more than {MARK_RATIO:.2f}× another configuration's and "
          "their p10..p90 ranges do not overlap")
    keys = [k for k, *_ in MATRIX_COLUMNS]
    print("\nmedians per configuration:")
    print(f"{'row':<{w}}  " + "  ".join(f"{k:>14}" for k in keys))
    for v in verdicts:
        print(f"{v['title']:<{w}}  " + "  ".join(
            f"{v['medians'][k]:>14.4g}" if v["medians"].get(k) is not None else f"{'-':>14}" for k in keys))


def run_matrix(args, bench, build_dir, all_rows, selected, commit, layer_present, out_dir):
    rows = selected or all_rows
    runs = []
    plan = {k: rows for k, *_ in MATRIX_COLUMNS}

    def one_round(rnd, columns, which_rows):
        shift = rnd % len(columns)
        rotated = columns[shift:] + columns[:shift]
        if args.process == "column":
            for col in rotated:
                runs.append(run_one(bench, col, which_rows, build_dir, args, commit, tmp, rnd, layer_present))
            return
        for row in which_rows:
            for col in rotated:
                runs.append(run_one(bench, col, [row], build_dir, args, commit, tmp, rnd, layer_present, tag=row))

    with tempfile.TemporaryDirectory(prefix="slipstream-matrix-") as tmp:
        def redo(r):
            return run_one(bench, tuple(r["rerun"]["column"]), r["rerun"]["rows"], build_dir, args, commit, tmp,
                           r["round"], layer_present, tag=r["rerun"]["tag"])
        for rnd in range(args.rounds):
            one_round(rnd, MATRIX_COLUMNS, rows)
        slow_notes = slow_state_reruns(args, runs, redo)
        verdicts = matrix_verdicts(combine(runs, MATRIX_COLUMNS, plan))
        marked = [v for v in verdicts if v["marked"]]
        repeated = []
        if marked and args.repeat_rounds > 0:
            # Again, the marked rows with the configurations they lost to, in fresh rounds.
            print(f"\nrepeating {len(marked)} marked row(s): {', '.join(v['name'] for v in marked)}")
            for v in marked:
                cols = [c for c in MATRIX_COLUMNS if c[0] == "defaults" or c[0] in v["loses_to"]]
                for rnd in range(args.rounds, args.rounds + args.repeat_rounds):
                    one_round(rnd, cols, [v["name"]])
                repeated.append(v["name"])
            slow_notes += slow_state_reruns(args, runs, redo)
            verdicts = matrix_verdicts(combine(runs, MATRIX_COLUMNS, plan))
    print_matrix(verdicts)
    failures = [f"round {r['round'] + 1} {r['column']}: {r['error'] or 'exit ' + str(r['returncode'])}"
                for r in runs if r["error"] is not None or r["returncode"] != 0]
    # Every row must have a sample in every configuration, or the matrix proves nothing.
    failures += [f"{v['name']}: no samples under {k}" for v in verdicts for k, *_ in MATRIX_COLUMNS
                 if v["medians"].get(k) is None]
    if len(verdicts) != len(rows):
        failures.append(f"{len(rows) - len(verdicts)} row(s) without samples under the defaults")
    first = next((r["result"] for r in runs if r["result"]), {}) or {}
    report = {"tool": "bench_report", "mode": "knob-matrix", "format": 1,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "commit": commit or first.get("commit", "unknown"), "device": first.get("device", {}),
              "settings": {"quick": args.quick, "wait": args.wait, "rounds": args.rounds,
                           "repeat_rounds": args.repeat_rounds, "process": args.process,
                           "reps_per_run": args.per_run_reps, "mark_ratio": MARK_RATIO},
              "configurations": [{"key": k, "layer_mode": m, "env": e} for k, _s, m, _l, e in MATRIX_COLUMNS],
              "rows": verdicts, "repeated": repeated, "slow_state_reruns": slow_notes, "ok": not failures,
              "failures": failures, "runs": runs}
    path = os.path.join(out_dir, "knob_matrix.json")
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"\nwrote {path}")
    except OSError as e:
        eprint(f"bench_report: cannot write {path}: {e}")
        return 1
    if failures:
        eprint("bench_report: FAILED:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


def print_table(table, labels, software, layer_missing):
    w_title = max([len(r["title"]) for r in table] + [10])
    cols = [k for k, *_ in COLUMNS]
    heads = [labels[k] for k in cols]
    cw = max(26, max(len(h) for h in heads) + 2)
    line = f"{'row':<{w_title}}  " + "".join(f"{h:>{cw}}" for h in heads) + \
        f"{'layer÷naive':>13}{'layer÷tuned':>13}{'GPU time':>11}"
    print()
    print(line)
    print("-" * len(line))
    for r in table:
        cells = []
        for k in cols:
            c = r["columns"].get(k) or {}
            if c.get("median_us") is None:
                cells.append(f"{'not run' if c.get('not_run') else '-':>{cw}}")
                continue
            s = fmt_cell(c["median_us"], c["p10_us"], c["p90_us"])
            if not c.get("verified"):
                s = "FAILED " + s
            cells.append(f"  {s:>{cw - 2}}")
        gpu = (r["columns"].get("naive") or {}).get("gpu_time_us")
        if gpu is None:
            gpu = (r["columns"].get("tuned") or {}).get("gpu_time_us")
        print(f"{r['title']:<{w_title}}  " + "".join(cells) +
              f"{fmt_ratio(r['ratio_layer_naive']):>13}{fmt_ratio(r['ratio_layer_tuned']):>13}"
              f"{fmt_time_us(gpu):>11}")
    print("cells: median [p10–p90] of all samples pooled over the rounds; ratios of medians; "
          "GPU time: timestamps around the row's device work (naive column)")
    for r in table:
        if r.get("note"):
            print("\n".join(wrap(r["note"], len(line))))
    if layer_missing:
        print("NOTE: the layer manifest was missing; the 'layer' column ran WITHOUT the layer "
              "(--allow-missing-layer).")
    if software:
        print("NOTE: " + SOFTWARE_NOTE)


# --------------------------------------------------------------------------------------------
def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def render_svg(report):
    """Grouped horizontal bars, one group per row, on one shared log time axis."""
    table = report["table"]
    labels = {c["key"]: c["label"] for c in report["columns"]}
    keys = [c["key"] for c in report["columns"]]
    vals = []
    for r in table:
        for k in keys:
            c = r["columns"].get(k) or {}
            for f in ("median_us", "p10_us", "p90_us", "gpu_time_us"):
                v = c.get(f)
                if v is not None and v > 0 and math.isfinite(v):
                    vals.append(v)
    lo_dec = math.floor(math.log10(min(vals))) if vals else -1
    hi_dec = math.ceil(math.log10(max(vals))) if vals else 6
    if hi_dec <= lo_dec:
        hi_dec = lo_dec + 1

    W = 1100
    left, right = 300, 930          # the axis spans [left, right]; value labels go after it
    bar_h, bar_gap, group_gap = 15, 4, 30
    group_h = len(keys) * (bar_h + bar_gap) + 18
    dev = report["device"] or {}
    s = report["settings"]
    header = []  # (text, attributes) lines under the title
    header.append((f'driver {dev.get("driver_name", "")} {dev.get("driver_version", "")} '
                   f'({dev.get("driver_info", "")}), Vulkan {dev.get("api_version", "")}; '
                   f'commit {report["commit"]}; {report["date"]}', 'fill="#333"'))
    header.append((f'{s["rounds"]} interleaved rounds, naive wait={s["wait"]}'
                   f'{", quick (small sizes, few repetitions)" if s["quick"] else ""}; bars: median '
                   f'of the samples pooled over the rounds, whiskers p10–p90; log scale',
                   'fill="#333"'))
    warn = []
    if report["software_device"]:
        warn += wrap(SOFTWARE_NOTE, 150)
    if report["layer_missing"]:
        warn += wrap(f'The layer manifest was missing: the "{labels["layer"]}" column ran WITHOUT '
                     f'the layer.', 150)
    y_title = 30
    y = y_title + 22
    header_y = []
    for _ in header:
        header_y.append(y)
        y += 18
    warn_y = y + 4
    if warn:
        y = warn_y + 16 * len(warn) + 10
    legend_y = y + 4
    top = legend_y + 40
    H = top + len(table) * (group_h + group_gap) + 60

    def x_of(us):
        us = max(us, 10.0 ** lo_dec)
        return left + (math.log10(us) - lo_dec) / (hi_dec - lo_dec) * (right - left)

    out = []
    a = out.append
    a('<?xml version="1.0" encoding="UTF-8"?>')
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
      'font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="12">')
    a(f'<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>')
    a(f'<text x="20" y="{y_title}" font-size="20" font-weight="bold">Slipstream benchmark: '
      f'{esc(dev.get("name", "unknown device"))}</text>')
    for (text, attrs), hy in zip(header, header_y):
        a(f'<text x="20" y="{hy}" font-size="11.5" {attrs}>{esc(text)}</text>')
    if warn:
        a(f'<rect x="14" y="{warn_y - 13}" width="{W - 28}" height="{16 * len(warn) + 8}" '
          'fill="#fdecea" stroke="#c0392b"/>')
        for i, line in enumerate(warn):
            a(f'<text x="22" y="{warn_y + 16 * i}" fill="#a93226" font-weight="bold" '
              f'font-size="11.5">{esc(line)}</text>')
    # legend
    lx = 20
    for k in keys:
        a(f'<rect x="{lx}" y="{legend_y}" width="14" height="12" fill="{COLORS.get(k, "#888")}"/>')
        a(f'<text x="{lx + 20}" y="{legend_y + 11}">{esc(labels[k])}</text>')
        lx += 44 + 7.6 * len(labels[k])
    a(f'<line x1="{lx}" y1="{legend_y - 2}" x2="{lx}" y2="{legend_y + 14}" stroke="black" '
      'stroke-width="2"/>')
    a(f'<text x="{lx + 8}" y="{legend_y + 11}">GPU time of the device work (timestamps)</text>')

    # axis and decade grid
    axis_top = top - 8
    axis_bottom = H - 50
    for d in range(lo_dec, hi_dec + 1):
        x = x_of(10.0 ** d)
        a(f'<line x1="{x:.1f}" y1="{axis_top}" x2="{x:.1f}" y2="{axis_bottom}" stroke="#ccc"/>')
        a(f'<text x="{x:.1f}" y="{axis_bottom + 16}" text-anchor="middle" fill="#333">'
          f'{esc(fmt_time_us(10.0 ** d))}</text>')
        if d < hi_dec:
            for m in range(2, 10):
                xm = x_of(m * 10.0 ** d)
                a(f'<line x1="{xm:.1f}" y1="{axis_top}" x2="{xm:.1f}" y2="{axis_bottom}" '
                  'stroke="#eee"/>')
    a(f'<text x="{(left + right) / 2:.0f}" y="{axis_bottom + 34}" text-anchor="middle" fill="#333">'
      'time per operation (log scale; shorter is better)</text>')

    gy = top
    for r in table:
        # Wrapped so that long titles stay left of the bars (about 7 px per bold character).
        title_lines = wrap(r["title"], 36)
        for i, tl in enumerate(title_lines):
            a(f'<text x="20" y="{gy + 14 + 14 * i}" font-weight="bold">{esc(tl)}</text>')
        rl = []
        if r.get("ratio_layer_naive") is not None:
            # Own-pattern rows: both columns ran the row's pattern, so the ratio is the layer's.
            what = "layer ÷ no layer" if r.get("note") else "layer ÷ naive"
            rl.append(f'{what} {fmt_ratio(r["ratio_layer_naive"])}')
        if r.get("ratio_layer_tuned") is not None:
            rl.append(f'layer ÷ tuned {fmt_ratio(r["ratio_layer_tuned"])}')
        if rl:
            a(f'<text x="20" y="{gy + 17 + 14 * len(title_lines)}" fill="#555" font-size="11">'
              f'{esc(",  ".join(rl))}</text>')
        by = gy
        for k in keys:
            c = r["columns"].get(k) or {}
            med = c.get("median_us")
            if med is None:
                a(f'<text x="{left + 4}" y="{by + 12}" fill="#888">'
                  f'{"not run (same program as the naive column)" if c.get("not_run") else "no data"}'
                  f'</text>')
                by += bar_h + bar_gap
                continue
            x1 = x_of(med)
            a(f'<rect x="{left}" y="{by}" width="{max(1.0, x1 - left):.1f}" height="{bar_h}" '
              f'fill="{COLORS.get(k, "#888")}"><title>{esc(labels[k])}: {esc(fmt_time_us(med))}'
              f'</title></rect>')
            p10, p90 = c.get("p10_us"), c.get("p90_us")
            end = x1
            if p10 is not None and p90 is not None:
                xa, xb = x_of(p10), x_of(p90)
                cy = by + bar_h / 2
                a(f'<line x1="{xa:.1f}" y1="{cy}" x2="{xb:.1f}" y2="{cy}" stroke="#222"/>')
                a(f'<line x1="{xa:.1f}" y1="{cy - 4}" x2="{xa:.1f}" y2="{cy + 4}" stroke="#222"/>')
                a(f'<line x1="{xb:.1f}" y1="{cy - 4}" x2="{xb:.1f}" y2="{cy + 4}" stroke="#222"/>')
                end = max(end, xb)
            g = c.get("gpu_time_us")
            if g is not None and g > 0:
                xg = x_of(g)
                a(f'<line x1="{xg:.1f}" y1="{by - 2}" x2="{xg:.1f}" y2="{by + bar_h + 2}" '
                  f'stroke="black" stroke-width="2"><title>GPU time {esc(fmt_time_us(g))}</title></line>')
                end = max(end, xg)
            label = fmt_time_us(med)
            color = "#111"
            if not c.get("verified"):
                label += "  VERIFICATION FAILED"
                color = "#c0392b"
            a(f'<text x="{end + 6:.1f}" y="{by + 12}" fill="{color}">{esc(label)}</text>')
            by += bar_h + bar_gap
        gy += group_h + group_gap
    a('</svg>')
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--build-dir", required=True, help="the CMake build directory")
    ap.add_argument("--out", help="output folder (default: BUILD_DIR/bench-report)")
    ap.add_argument("--quick", action="store_true", help="pass --quick (few reps, 4 MB), 2 rounds")
    ap.add_argument("--full", action="store_true",
                    help="the full form even on a software device (where the quick form is the default)")
    ap.add_argument("--wait", choices=("fence", "queue-idle"), default="fence",
                    help="the naive style's blocking wait (default fence)")
    ap.add_argument("--reps", type=int,
                    help="timed repetitions per row in total; split over the rounds "
                         "(default: the benchmark's own per-row counts in every round)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 2)")
    ap.add_argument("--rows", help="comma-separated row ids (default all)")
    ap.add_argument("--process", choices=("row", "column"), default="row",
                    help="one bench process per row and column (default), or per column")
    ap.add_argument("--bench", help="path of slipstream-bench (default: found in the build dir)")
    ap.add_argument("--max-row-seconds", type=float,
                    help="passed to slipstream-bench (its default: 60)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds allowed per run (default 1800, --quick 300)")
    ap.add_argument("--knob-matrix", action="store_true",
                    help="the layer under its defaults and under each single knob flipped, interleaved")
    ap.add_argument("--repeat-rounds", type=int, default=2,
                    help="with --knob-matrix: rounds run again for marked rows (default 2)")
    ap.add_argument("--rerun-slow", choices=("auto", "on", "off"), default="auto",
                    help="run again a bench process whose state probe (an empty command buffer's round "
                         f"trip) is more than {SLOW_STATE_RATIO:g}x the best of the report and "
                         f"{SLOW_STATE_FLOOR_US:g} us above it (up to {SLOW_STATE_RETRIES} times; auto: "
                         "not on a software device)")
    ap.add_argument("--allow-missing-layer", action="store_true",
                    help="for testing before the layer exists: run the layer column without it "
                         "(labelled so) instead of failing")
    args = ap.parse_args(argv)

    build_dir = os.path.abspath(args.build_dir)
    if not os.path.isdir(build_dir):
        eprint(f"bench_report: build dir {build_dir} does not exist")
        return 2
    if args.quick and args.full:
        eprint("bench_report: --quick and --full contradict each other")
        return 2
    bench = find_bench(build_dir, args.bench)
    if not args.quick and not args.full and software_device(bench):
        # A CPU's Vulkan says nothing of GPU costs; the quick form shows the same in minutes.
        args.quick = True
        print("bench_report: a software Vulkan device (no GPU): the quick form (--full for the full one)")
    args.rounds = args.rounds or (2 if args.quick else 3)
    if args.rounds < 1:
        eprint("bench_report: --rounds must be >= 1")
        return 2
    if args.reps is not None and args.reps < 1:
        eprint("bench_report: --reps must be >= 1")
        return 2
    args.per_run_reps = None if args.reps is None else max(1, math.ceil(args.reps / args.rounds))
    args.timeout = args.timeout or (300 if args.quick else 1800)
    out_dir = os.path.abspath(args.out or os.path.join(build_dir, "bench-report"))
    all_rows = list_rows(bench)
    selected = [r for r in (args.rows or "").split(",") if r]
    unknown = [r for r in selected if r not in all_rows]
    if unknown:
        eprint(f"bench_report: unknown row(s) {', '.join(unknown)}; slipstream-bench has: "
               f"{', '.join(all_rows)}")
        return 2
    plan = rows_per_column(all_rows, selected)
    columns_run = [c for c in COLUMNS if plan[c[0]] != []]

    manifest = os.path.join(slipstream_env.manifest_dirs(build_dir)["explicit"], MANIFEST_NAME)
    layer_present = os.path.isfile(manifest)
    if not layer_present and not args.allow_missing_layer:
        eprint(f"bench_report: the Slipstream layer manifest {manifest} does not exist.\n"
               f"  Build the layer first (it is staged into BUILD_DIR/share/vulkan/explicit_layer.d);\n"
               f"  the 'naive + Slipstream' column cannot run without it. To test the benchmark\n"
               f"  alone, pass --allow-missing-layer (that column then runs without the layer and\n"
               f"  is labelled so).")
        return 2
    labels = {k: label for k, _, _, label in COLUMNS}
    if not layer_present:
        labels["layer"] = "naive, layer MISSING"

    # The build's own commit (built in), not that of whatever repository this runs in.
    commit = os.environ.get("SLIPSTREAM_COMMIT") or build_commit(bench) or git_commit()
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        eprint(f"bench_report: cannot create {out_dir}: {e}")
        return 1
    print(f"bench_report: {bench}")
    print(f"  build dir {build_dir}; out {out_dir}; {args.rounds} round(s); wait={args.wait}"
          f"{'; quick' if args.quick else ''}"
          f"{f'; {args.per_run_reps} reps per run' if args.per_run_reps else ''}")
    if not layer_present:
        print(f"  WARNING: {manifest} is missing; the layer column runs WITHOUT the layer")

    if args.knob_matrix:
        if not layer_present:
            eprint("bench_report: --knob-matrix needs the layer")
            return 2
        return run_matrix(args, bench, build_dir, all_rows, selected, commit, layer_present, out_dir)

    runs = []
    with tempfile.TemporaryDirectory(prefix="slipstream-bench-") as tmp:
        def redo(r):
            return run_one(bench, tuple(r["rerun"]["column"]), r["rerun"]["rows"], build_dir, args, commit, tmp,
                           r["round"], layer_present, tag=r["rerun"]["tag"])
        for rnd in range(args.rounds):
            shift = rnd % len(columns_run)
            rotated = columns_run[shift:] + columns_run[:shift]
            if args.process == "column":
                for col in rotated:
                    runs.append(run_one(bench, col, plan[col[0]], build_dir, args, commit, tmp, rnd,
                                        layer_present))
                continue
            for row in selected or all_rows:
                for col in rotated:
                    if plan[col[0]] is not None and row not in plan[col[0]]:
                        continue
                    runs.append(run_one(bench, col, [row], build_dir, args, commit, tmp, rnd,
                                        layer_present, tag=row))
        slow_notes = slow_state_reruns(args, runs, redo)

    failures = [f"round {r['round'] + 1} {r['column']}: {r['error'] or 'exit ' + str(r['returncode'])}"
                for r in runs if r["error"] is not None or r["returncode"] != 0]
    table = combine(runs, COLUMNS, plan)
    for r in table:
        for k, c in r["columns"].items():
            if c["runs"] and not c["verified"]:
                failures.append(f"{r['name']} ({k}): verification failed")
    first = next((r["result"] for r in runs if r["result"]), {}) or {}
    device = first.get("device", {})
    software = ran_on_software(runs)
    report = {
        "tool": "bench_report",
        "format": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit or first.get("commit", "unknown"),
        "device": device,
        "driver": {k: device.get(k) for k in ("driver_name", "driver_version", "driver_info",
                                              "driver_version_raw")},
        "api_version": device.get("api_version"),
        "memory_types": first.get("memory_types", []),
        "memory_heaps": first.get("memory_heaps", []),
        "software_device": software,
        "note": SOFTWARE_NOTE if software else "",
        "layer_manifest": manifest,
        "layer_missing": not layer_present,
        "bench": bench,
        "settings": {"quick": args.quick, "wait": args.wait, "rounds": args.rounds,
                     "reps_total": args.reps, "reps_per_run": args.per_run_reps, "rows": args.rows,
                     "order": "columns rotate each round", "process": args.process,
                     "combine": "samples pooled over rounds; median, p10, p90, min, max"},
        "columns": [{"key": k, "style": s, "layer_mode": m, "label": labels[k],
                     "rows": plan[k] if plan[k] is not None else all_rows}
                    for k, s, m, _ in COLUMNS],
        "table": table,
        "ok": not failures,
        "failures": failures,
        "slow_state_reruns": slow_notes,
        "runs": runs,
    }

    print_table(table, labels, software, not layer_present)

    json_path = os.path.join(out_dir, "bench.json")
    svg_path = os.path.join(out_dir, "bench.svg")
    problems = []
    try:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
            f.write("\n")
        with open(svg_path, "w", encoding="utf-8") as f:
            f.write(render_svg(report))
    except OSError as e:
        problems.append(f"cannot write the outputs: {e}")
    # Check what was written: the JSON parses back, the SVG is well-formed XML with bars.
    try:
        with open(json_path, encoding="utf-8") as f:
            back = json.load(f)
        if not back.get("table"):
            problems.append(f"{json_path} has no table rows")
    except (OSError, ValueError) as e:
        problems.append(f"{json_path} unreadable: {e}")
    try:
        root = ET.parse(svg_path).getroot()
        if not root.tag.endswith("svg") or not root.findall(".//{http://www.w3.org/2000/svg}rect"):
            problems.append(f"{svg_path} is not an SVG with bars")
    except (OSError, ET.ParseError) as e:
        problems.append(f"{svg_path} unreadable: {e}")

    print(f"\nwrote {json_path}\nwrote {svg_path}")
    for p in problems:
        eprint("bench_report: " + p)
    if failures:
        eprint("bench_report: FAILED:\n  " + "\n  ".join(failures))
    return 1 if (failures or problems) else 0


if __name__ == "__main__":
    sys.exit(main())
