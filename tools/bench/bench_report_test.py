#!/usr/bin/env python3
"""bench_report.py's slow-state reruns on made-up runs: a process whose state probe is more than
twice the best (and 20 us above it) runs again, at most twice; the run with the lower probe
stays; fast processes, software devices and --rerun-slow off run nothing again."""
import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_report as br  # noqa: E402


def run(column, probe, device="NVIDIA H200", error=None):
    return {"round": 0, "column": column, "error": error,
            "result": {"state_probe_us": probe, "device": {"name": device}},
            "rerun": {"column": [column], "rows": None, "tag": ""}}


class Redo:
    """Hands out made-up runs with the given probes, in order, and counts the calls."""

    def __init__(self, probes):
        self.probes = list(probes)
        self.calls = []

    def __call__(self, r):
        self.calls.append(r["column"])
        return run(r["column"], self.probes.pop(0))


class SlowStateReruns(unittest.TestCase):
    def test_slow_state_needs_twice_the_best_and_20_us_more(self):
        self.assertFalse(br.slow_state(30.0, 16.0))   # below twice
        self.assertTrue(br.slow_state(90.0, 16.0))    # the H200's second state
        self.assertFalse(br.slow_state(29.0, 10.0))   # more than twice, but less than 20 us above
        self.assertTrue(br.slow_state(31.0, 10.0))    # 31 > max(2 x 10, 10 + 20)
        self.assertFalse(br.slow_state(4.0, 1.0))     # fast devices: the floor keeps noise out
        self.assertFalse(br.slow_state(None, 16.0))

    def test_a_slow_process_runs_again_and_the_faster_run_stays(self):
        runs = [run("naive", 16.0), run("defaults", 95.0), run("tuned", 17.0)]
        redo = Redo([18.0])
        notes = br.rerun_slow_processes(runs, redo)
        self.assertEqual(redo.calls, ["defaults"])
        self.assertEqual(br.state_probe(runs[1]), 18.0)
        self.assertEqual(runs[1]["replaced_slow_probe_us"], 95.0)
        self.assertEqual(len(notes), 1)

    def test_at_most_two_tries_and_a_slower_rerun_is_not_kept(self):
        runs = [run("naive", 16.0), run("defaults", 95.0)]
        redo = Redo([120.0, 90.0, 10.0])
        br.rerun_slow_processes(runs, redo)
        self.assertEqual(redo.calls, ["defaults", "defaults"])
        self.assertEqual(br.state_probe(runs[1]), 90.0)  # the second try was faster, still slow

    def test_no_probe_no_rerun(self):
        runs = [run("naive", None), run("defaults", None)]
        self.assertEqual(br.rerun_slow_processes(runs, Redo([])), [])

    def test_software_devices_and_off_rerun_nothing(self):
        slow = [run("naive", 50.0, "llvmpipe (LLVM 15.0.6, 256 bits)"), run("defaults", 500.0, "llvmpipe")]
        self.assertEqual(br.slow_state_reruns(argparse.Namespace(rerun_slow="auto"), slow, Redo([])), [])
        gpu = [run("naive", 16.0), run("defaults", 95.0)]
        self.assertEqual(br.slow_state_reruns(argparse.Namespace(rerun_slow="off"), gpu, Redo([])), [])
        redo = Redo([17.0])
        self.assertEqual(len(br.slow_state_reruns(argparse.Namespace(rerun_slow="on"), gpu, redo)), 1)


if __name__ == "__main__":
    unittest.main()
