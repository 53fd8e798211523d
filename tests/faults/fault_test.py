#!/usr/bin/env python3
"""Fault injection (issue 12): driver errors must reach the application where it can see them.

    fault_test.py --build-dir B --app PATH [--report FILE] [--long] [--jobs N] [--only REGEX]
                  [--timeout S] [--keep DIR]

Runs fault_app (tests/faults/fault_app.cpp), a compute workload that checks every VkResult,
over VK_LAYER_SLIPSTREAM_test_faults (tests/layers/faults), which fails the calls each case
names (SLIPSTREAM_TEST_FAULTS), in several modes:

  none         the fault layer only: shows the case itself is sane
  plain        Slipstream with its defaults (fusion off)
  fuse         VK_SLIPSTREAM_FUSE=on (lazy recording, deferred replay)
  fuse-native  FUSE=on, LAZY_RECORD=off (a failed batch falls back to the application's own
               command buffers)
  fuse-nospin  FUSE=on, SPIN=off       nospin: SPIN=off

The stack is app -> Slipstream -> test layers -> driver: Debian's loader 1.3.239 stacks layers in
manifest discovery order, so Slipstream's folder comes first on VK_ADD_LAYER_PATH; every run with
fusion checks that the fault layer saw more vkCreateCommandPool calls than the application made
(Slipstream's own pool), which it could not if it were above Slipstream.

Every run must:
  * end by itself (a run past --timeout is a hang) and normally (a signal or a sanitizer report
    is a crash);
  * show the application either VK_SUCCESS everywhere and results equal to the CPU reference, or
    an error the layer injected, at a call whose specification lists that code (a submission
    error that fusion deferred comes back from a later submission or wait);
  * after VK_ERROR_DEVICE_LOST, return it again from a new submission (device loss sticks) and
    answer a device wait in finite time; with Slipstream, no submission may reach the driver
    after the loss ("submits_after_lost" of the fault layer's report);
  * run the same workload correctly on a new device of the same process, without faults;
  * have injected at least one fault (read back from the fault layer's report), except in the
    "none" mode of cases that target Slipstream's own calls;
  * meet the case's expectation (an error the application must see, or results the layer must
    keep correct, e.g. by falling back) and its statistics.

Leaks are found by running this test under the ASan build (ctest -L layers, tools/test.sh).
--report writes the reliability report's JSON (kind "faults"). --long sweeps more random seeds.
Exit status: 0 if every run passed, 1 otherwise (2 on bad usage).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import slipstream_env  # noqa: E402

FAULT_LAYER = "VK_LAYER_SLIPSTREAM_test_faults"
VALIDATION = slipstream_env.VALIDATION
MEMORY_LAYER = "VK_LAYER_SLIPSTREAM_test_memory_layout"

OOH, OOD, LOST = "VK_ERROR_OUT_OF_HOST_MEMORY", "VK_ERROR_OUT_OF_DEVICE_MEMORY", "VK_ERROR_DEVICE_LOST"
TIMEOUT, NOT_READY = "VK_TIMEOUT", "VK_NOT_READY"
# The error codes the specification lists for each call the application makes.
SPEC_ERRORS = {
    "vkQueueSubmit": {OOH, OOD, LOST},
    "vkQueueSubmit2": {OOH, OOD, LOST},
    "vkWaitForFences": {OOH, OOD, LOST},
    "vkGetFenceStatus": {OOH, OOD, LOST},
    "vkWaitSemaphores": {OOH, OOD, LOST},
    "vkQueueWaitIdle": {OOH, OOD, LOST},
    "vkDeviceWaitIdle": {OOH, OOD, LOST},
    "vkResetFences": {OOD},
    "vkAllocateMemory": {OOH, OOD},
    "vkAllocateCommandBuffers": {OOH, OOD},
    "vkCreateFence": {OOH, OOD},
    "vkCreateSemaphore": {OOH, OOD},
    "vkCreateCommandPool": {OOH, OOD},
    "vkBeginCommandBuffer": {OOH, OOD},
    "vkEndCommandBuffer": {OOH, OOD},
    "vkCreateBuffer": {OOH, OOD},
    "vkBindBufferMemory": {OOH, OOD},
    "vkMapMemory": {OOH, OOD},
    "vkInvalidateMappedMemoryRanges": {OOH, OOD},
}

MODES = {
    "none": None,
    "plain": {"VK_SLIPSTREAM_FUSE": "off"},  # spin, idle tracking, readback: not fusion
    "fuse": {"VK_SLIPSTREAM_FUSE": "on"},
    "fuse-native": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_LAZY_RECORD": "off"},
    "fuse-nospin": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_SPIN": "off"},
    "nospin": {"VK_SLIPSTREAM_FUSE": "off", "VK_SLIPSTREAM_SPIN": "off"},
    "fuse-arm": {"VK_SLIPSTREAM_FUSE": "on", "VK_SLIPSTREAM_ARM": "on"},  # armed launches
}
FUSING = {"fuse", "fuse-native", "fuse-nospin", "fuse-arm"}
SUBMIT_MODES = ("none", "plain", "fuse", "fuse-native")
WAIT_MODES = ("none", "plain", "nospin", "fuse", "fuse-nospin")
OWN_MODES = ("none", "fuse")  # Slipstream's own calls: they exist only with fusion

BIG = ["--words", "262144"]  # dispatches long enough that waits block in the driver
DEADLINE = ["--sleep-us", "2000"]  # fused batches go from Slipstream's flusher thread


class Case:
    """One workload with one set of faults, run in each of `modes`.

    expect:       {mode: "error" | "correct"} what the application must see (default: either)
    own_calls:    the faults target calls only Slipstream makes: nothing is injected in "none"
    off_thread:   in fusing modes, a fault must have landed on another thread (the flusher)
    stats:        [(counter, op, value)] Slipstream's statistics in its modes
    timing:       whether the faulted calls happen at all depends on timing (the flusher finding
                  the GPU busy, a submission fused or sent directly): a run that injected
                  nothing is tried again (twice at most)
    validation:   the Khronos validation layer goes under the fault layer: Slipstream must not
                  misuse the driver after a fault (a command into a command buffer whose begin
                  failed, ...); any validation message fails the run
    test_env:     environment of the test layers, in every mode (the memory-layout layer's
                  heap limits and budget)
    faultless:    nothing is injected (`faults` is empty): the case checks what Slipstream does
                  under the conditions the test layers present (a heap under budget pressure)
    """

    def __init__(self, name, faults, args=(), modes=SUBMIT_MODES, expect=None, own_calls=False,
                 off_thread=False, env=None, layout=None, stats=(), validation=False, timing=False,
                 test_env=None, faultless=False):
        self.name, self.faults, self.args, self.modes = name, faults, list(args), modes
        self.expect = dict(expect or {})
        self.own_calls, self.off_thread = own_calls, off_thread
        self.env = dict(env or {})
        self.layout = layout
        self.stats = list(stats)
        self.validation = validation
        self.timing = timing
        self.test_env = dict(test_env or {})
        self.faultless = faultless


def everywhere(what, modes):
    return {m: what for m in modes}


def cases(long_form):
    c = []
    # --- submissions ---
    latency = ["--wait", "fence", "--wait-every", "1"]
    c.append(Case("submit-lost-app", "vkQueueSubmit@3=" + LOST, latency,
                  expect=everywhere("error", SUBMIT_MODES)))
    # Fused, vkQueueSubmit2's work reaches the driver in Slipstream's batches (vkQueueSubmit).
    c.append(Case("submit2-lost-app", f"vkQueueSubmit2@3={LOST};vkQueueSubmit@3={LOST}", latency + ["--submit", "submit2"],
                  expect=everywhere("error", SUBMIT_MODES)))
    # The first submissions go to the driver directly (a queue starts in latency mode); by the
    # 6th the queue streams and batches go from the flusher thread.
    c.append(Case("submit-lost-flusher", "vkQueueSubmit@6=" + LOST, ["--wait", "fence"] + DEADLINE,
                  expect=everywhere("error", SUBMIT_MODES), off_thread=True))
    c.append(Case("submit-lost-full-batch", "vkQueueSubmit@2=" + LOST, ["--wait", "fence"],
                  env={"VK_SLIPSTREAM_BATCH_MAX": "4"}, expect=everywhere("error", SUBMIT_MODES)))
    c.append(Case("submit-oom-host-app", "vkQueueSubmit@3=" + OOH, latency,
                  expect={"none": "error", "plain": "error"}))
    c.append(Case("submit-oom-device-flusher", "vkQueueSubmit@6=" + OOD, ["--wait", "fence"] + DEADLINE,
                  expect={"none": "error", "plain": "error", "fuse": "error", "fuse-native": "correct"},
                  off_thread=True))
    c.append(Case("submit2-oom-flusher", f"vkQueueSubmit2@6={OOH};vkQueueSubmit@6={OOH}",
                  ["--wait", "queue-idle", "--submit", "submit2"] + DEADLINE,
                  expect={"none": "error", "plain": "error", "fuse": "error"}, off_thread=True))
    # The submission that carries the application's fence (its last, before its one wait) fails:
    # fused, that is a batch of the flusher's, whose error the wait must return.
    c.append(Case("submit-oom-fenced-flusher", "vkQueueSubmit:fenced@1=" + OOD, ["--wait", "fence"] + DEADLINE,
                  expect={"none": "error", "plain": "error", "fuse": "error"}, off_thread=True))
    c.append(Case("submit-lost-fenced-flusher", "vkQueueSubmit:fenced@1=" + LOST, ["--wait", "fence"] + DEADLINE,
                  expect=everywhere("error", SUBMIT_MODES), off_thread=True))
    c.append(Case("submit-oom-fenced-every", "vkQueueSubmit:fenced@1+=" + OOH, ["--wait", "fence"] + DEADLINE,
                  expect=everywhere("error", SUBMIT_MODES)))
    c.append(Case("submit-oom-every", "vkQueueSubmit@3+=" + OOD, ["--wait", "fence"] + DEADLINE,
                  expect=everywhere("error", SUBMIT_MODES)))
    c.append(Case("submit-oom-ring", "vkQueueSubmit@4-6=" + OOD, ["--wait", "ring"],
                  env={"VK_SLIPSTREAM_BATCH_MAX": "3"}))
    # --- waits ---
    finite = ["--timeout-ns", "2000000000"]
    # Each wait fault also takes the route of Slipstream's spin (its polls), which answers waits
    # on work that ends within the spin budget without the driver's wait.
    c.append(Case("fence-wait-timeout", f"vkWaitForFences@1-4={TIMEOUT};vkGetFenceStatus@1-4={NOT_READY}",
                  ["--wait", "fence", "--wait-every", "4"] + finite + BIG, modes=WAIT_MODES,
                  expect=everywhere("correct", WAIT_MODES)))
    c.append(Case("fence-wait-lost", f"vkWaitForFences@2={LOST};vkGetFenceStatus@3={LOST}", ["--wait", "fence", "--wait-every", "4"] + BIG,
                  modes=WAIT_MODES, expect=everywhere("error", WAIT_MODES)))
    c.append(Case("fence-wait-oom", "vkWaitForFences@2=" + OOH, ["--wait", "ring"] + BIG, modes=WAIT_MODES))
    c.append(Case("timeline-wait-timeout", "vkWaitSemaphores@1-3=" + TIMEOUT,
                  ["--wait", "timeline", "--wait-every", "5"] + finite + BIG, modes=WAIT_MODES,
                  expect=everywhere("correct", WAIT_MODES)))
    c.append(Case("timeline-wait-lost", f"vkWaitSemaphores@2={LOST};vkGetSemaphoreCounterValue@40={LOST}", ["--wait", "timeline", "--wait-every", "5"] + BIG,
                  modes=WAIT_MODES, expect=everywhere("error", WAIT_MODES)))
    c.append(Case("queue-idle-lost", f"vkQueueWaitIdle@2={LOST};vkGetFenceStatus@3={LOST}", ["--wait", "queue-idle", "--wait-every", "4"] + BIG,
                  modes=WAIT_MODES, expect=everywhere("error", WAIT_MODES)))
    c.append(Case("device-idle-lost", f"vkDeviceWaitIdle@2={LOST};vkGetFenceStatus@3={LOST}",
                  ["--wait", "device-idle", "--wait-every", "4"] + BIG, modes=WAIT_MODES,
                  expect=everywhere("error", WAIT_MODES)))
    c.append(Case("fence-poll-not-ready", "vkGetFenceStatus%0.5=" + NOT_READY, ["--wait", "poll", "--wait-every", "3"],
                  modes=WAIT_MODES, expect=everywhere("correct", WAIT_MODES)))
    c.append(Case("fence-poll-lost", "vkGetFenceStatus@6=" + LOST, ["--wait", "poll", "--wait-every", "3"] + BIG,
                  modes=WAIT_MODES, expect=everywhere("error", WAIT_MODES)))
    c.append(Case("fence-poll-oom", "vkGetFenceStatus@6-7=" + OOD, ["--wait", "poll", "--wait-every", "3"] + BIG,
                  modes=WAIT_MODES))
    # (Counter reads come with fused batches; a loaded machine once sent every submission of a
    # fuse-native run the direct way, reading no counter: timing, tried again.)
    c.append(Case("counter-read-faults", "vkGetSemaphoreCounterValue%0.2", ["--wait", "fence"] + DEADLINE,
                  modes=("fuse", "fuse-native"), own_calls=True, timing=True))
    # The flusher's own blocking wait for its timeline (FLUSHER_POLL_US=0) times out early, runs
    # out of memory or finds the device lost.
    c.append(Case("flusher-wait-faults", "vkWaitSemaphores%0.3", ["--wait", "fence", "--sleep-us", "300"] + BIG,
                  modes=("fuse", "fuse-native"), own_calls=True, env={"VK_SLIPSTREAM_FLUSHER_POLL_US": "0"},
                  timing=True))
    # --- cached readback: the redirected allocation (the 4th) fails ---
    stats_fallback = [("readback_fallbacks", ">=", 1)]
    c.append(Case("readback-redirect-oom", "vkAllocateMemory@4=" + OOD, ["--wait", "fence"],
                  modes=("none", "plain", "fuse"), layout="nvidia-bar",
                  expect={"none": "error", "plain": "correct", "fuse": "correct"}, stats=stats_fallback))
    c.append(Case("readback-redirect-oom-host", "vkAllocateMemory@4=" + OOH, ["--wait", "queue-idle"],
                  modes=("none", "plain"), layout="nvidia-bar",
                  expect={"none": "error", "plain": "correct"}, stats=stats_fallback))
    c.append(Case("readback-fallback-oom", "vkAllocateMemory@4+=" + OOD, ["--wait", "fence"],
                  modes=("none", "plain", "fuse"), layout="nvidia-bar",
                  expect=everywhere("error", ("none", "plain", "fuse"))))
    # ... and the cached twin of memory that moves on its first use (a copy into it) cannot be
    # had: the memory stays where the application put it (the 5th allocation is the twin).
    c.append(Case("readback-twin-oom", "vkAllocateMemory@5=" + OOD, ["--wait", "fence", "--readback-block"],
                  modes=("none", "plain", "fuse"), layout="nvidia-bar", own_calls=True,
                  expect=everywhere("correct", ("none", "plain", "fuse")),
                  stats=[("readback_deferred_allocations", ">=", 1), ("readback_deferred_moves", "==", 0),
                         ("readback_twins_allocated", "==", 0)]))
    # --- the object pools (issue 22): the allocation cache and the fence pool ---
    # --churn 8: eight host-visible allocations made and freed before the workload's own, which
    # the cache keeps; the 9th allocation (the workload's first) finds the driver out of memory:
    # the cache gives what it holds back and asks again, and the application sees success.
    alloc_modes = ("none", "plain", "fuse")
    c.append(Case("alloc-oom-cache-retry", "vkAllocateMemory@9=" + OOD, ["--wait", "fence", "--churn", "8"],
                  modes=alloc_modes, expect={"none": "error", "plain": "correct", "fuse": "correct"},
                  stats=[("alloc_cache_retries", "==", 1), ("alloc_cache_kept", ">=", 8),
                         ("alloc_cache_trims", ">=", 8)]))
    # ... with a 1 MiB bound and 40 allocations (64 to 220 KiB, 5.6 MiB) freed: never more than
    # the bound held (the statistic is the peak), the oldest given back to make room.
    c.append(Case("alloc-oom-cache-retry-bound", "vkAllocateMemory@41=" + OOD,
                  ["--wait", "queue-idle", "--churn", "40"], modes=alloc_modes,
                  env={"VK_SLIPSTREAM_ALLOC_CACHE_MIB": "1"},
                  expect={"none": "error", "plain": "correct", "fuse": "correct"},
                  stats=[("alloc_cache_retries", "==", 1), ("alloc_cache_kept", ">=", 40),
                         ("alloc_cache_bytes_held", "<=", 1 << 20), ("alloc_cache_trims", ">=", 30)]))
    # Budget pressure: the memory-layout layer presents nvidia-bar with VK_EXT_memory_budget and
    # a 4 MiB budget on the system heap (1); 14 allocations of 256 to 308 KiB (3.86 MiB, above
    # 90% of it) are freed: the first keep finds the heap under pressure and gives the heap's
    # kept memory back. Nothing fails, nothing is injected.
    c.append(Case("alloc-cache-budget", "", ["--wait", "fence", "--churn", "14", "--churn-kib", "256"],
                  modes=alloc_modes, layout="nvidia-bar", faultless=True,
                  test_env={"SLIPSTREAM_TEST_MEMORY_BUDGET": "1", "SLIPSTREAM_TEST_HEAP_LIMIT": "1:4M"},
                  expect=everywhere("correct", alloc_modes),
                  stats=[("alloc_cache_trims", ">=", 1), ("alloc_cache_retries", "==", 0),
                         ("alloc_cache_kept", ">=", 14)]))
    # Device loss with the pools holding things: a fresh fence per submission (kept by the
    # pool after its wait), memory kept by the cache; the 3rd submission loses the device, and
    # its fence (never signaled) and everything else is destroyed after the loss. The pool
    # pools whatever it costs (OBJECT_POOL=always): lavapipe's fences cost less than pooling.
    pool_always = {"VK_SLIPSTREAM_OBJECT_POOL": "always"}
    c.append(Case("submit-lost-pools", "vkQueueSubmit@3=" + LOST, latency + ["--fresh-fences", "--churn", "8"],
                  env=pool_always, expect=everywhere("error", SUBMIT_MODES),
                  stats=[("alloc_cache_kept", ">=", 8), ("fences_kept", ">=", 2)]))
    # A pooled fence whose submission reached the driver, destroyed after its wait returned
    # VK_ERROR_DEVICE_LOST (its work may never signal it): quarantined, never handed out signaled.
    c.append(Case("fence-wait-lost-pooled", f"vkWaitForFences@2={LOST};vkGetFenceStatus@3={LOST}",
                  ["--wait", "fence", "--wait-every", "4", "--fresh-fences"] + BIG, modes=WAIT_MODES, env=pool_always,
                  expect=everywhere("error", WAIT_MODES)))
    # The GPU zero fill: under nvidia-bar the chain buffers' type is device-local only; --churn
    # --churn-device frees two allocations of their size first, which the cache hands them, so
    # Slipstream's fill goes ahead of the first submission (the first vkQueueSubmit the fault
    # layer sees). The upload copy into the recycled memory must come after the zeros.
    fill_args = ["--wait", "fence", "--wait-every", "1", "--churn", "4", "--churn-device"]
    c.append(Case("gpu-fill-correct", "", fill_args, modes=alloc_modes, layout="nvidia-bar", faultless=True,
                  validation=True,
                  expect=everywhere("correct", alloc_modes),
                  stats=[("alloc_cache_gpu_fills", ">=", 2), ("alloc_cache_fill_submits", ">=", 1)]))
    # Our fill's submission finds the device lost, or out of memory: the application's
    # submission returns that error (its work must not run over memory not zeroed).
    for name, code in (("lost", LOST), ("oom", OOD)):
        c.append(Case(f"gpu-fill-submit-{name}", "vkQueueSubmit@1=" + code, fill_args, modes=alloc_modes,
                      layout="nvidia-bar", expect=everywhere("error", alloc_modes),
                      stats=[("alloc_cache_fill_submits", "==", 0)]))
    # ... and the device is lost after the fills ran: vkDestroyDevice's wait for our timeline
    # must come back, with the kept memory and its fill buffers freed.
    c.append(Case("gpu-fill-lost-later", "vkQueueSubmit@4=" + LOST, fill_args, modes=alloc_modes,
                  layout="nvidia-bar", expect=everywhere("error", alloc_modes),
                  stats=[("alloc_cache_fill_submits", ">=", 1)]))
    # Armed launches: the device is lost at a wait while replays are being armed after the
    # dispatches' submissions (1: the 4th wait, one replay armed at least by then); at the
    # workload's 2nd submission, its first dispatch (2); at our submission that arms the
    # replay after it (3). The application hears of the loss; no wait hangs (the fault layer drains the
    # queues, and only our release, here the flusher's at the replay's deadline, lets an
    # armed one end), and vkDestroyDevice comes back.
    arm_modes = ("none", "fuse-arm")
    for n, fault in ((1, "vkWaitForFences@4=" + LOST), (2, "vkQueueSubmit@2=" + LOST),
                     (3, "vkQueueSubmit@3=" + LOST)):
        c.append(Case(f"armed-lost-{n}", fault, latency, modes=arm_modes, expect=everywhere("error", arm_modes),
                      stats=[("arm_armed", ">=", 1)] if n == 1 else []))
    # --- Slipstream's own machinery (fusion, lazy recording) ---
    for n in (1, 2, 3):
        c.append(Case(f"batch-begin-fails-{n}", f"vkBeginCommandBuffer@{n}=" + OOH, ["--wait", "fence"] + DEADLINE,
                      modes=OWN_MODES, expect={"none": "error"}, validation=n == 2))
        c.append(Case(f"batch-end-fails-{n}", f"vkEndCommandBuffer@{n}=" + OOD,
                      ["--wait", "queue-idle", "--wait-every", "6"], modes=OWN_MODES, expect={"none": "error"},
                      validation=n == 2))
    for n in ("2", "2+"):
        c.append(Case(f"batch-alloc-fails-{n}", f"vkAllocateCommandBuffers@{n}=" + OOD, ["--wait", "fence"] + DEADLINE,
                      modes=OWN_MODES, own_calls=True, validation=True))
    c.append(Case("own-fence-fails", "vkCreateFence@1+=" + OOH, ["--wait", "queue-idle", "--wait-every", "1"],
                  modes=("none", "plain", "fuse"), own_calls=True, expect=everywhere("correct", ("none", "plain", "fuse"))))
    c.append(Case("timeline-create-fails", "vkCreateSemaphore@1=" + OOH, ["--wait", "fence"],
                  modes=("none", "fuse"), own_calls=True, expect={"fuse": "correct"}))
    c.append(Case("pool-create-fails", "vkCreateCommandPool@1=" + OOD, ["--wait", "fence"],
                  modes=("none", "fuse"), expect={"none": "error", "fuse": "correct"}))
    # A lazily recorded command buffer made native at vkCmdExecuteCommands: its begin is the
    # 2nd vkBeginCommandBuffer the driver sees (after the secondary's own).
    for n in (2, 4):
        c.append(Case(f"native-begin-fails-{n}", f"vkBeginCommandBuffer@{n}=" + OOH,
                      ["--wait", "fence", "--secondary-every", "3"], modes=("none", "fuse"),
                      expect=everywhere("error", ("none", "fuse")), validation=True))
    c.append(Case("native-end-fails", "vkEndCommandBuffer@3=" + OOH, ["--wait", "fence", "--secondary-every", "3"],
                  modes=("none", "fuse"), expect=everywhere("error", ("none", "fuse")), validation=True))
    # --- seeded random sweeps over every function the layer can fail ---
    seeds = range(1, 41) if long_form else range(1, 7)
    waits = ["fence", "poll", "queue-idle", "timeline", "ring", "device-idle"]
    for seed in seeds:
        wait = waits[seed % len(waits)]
        args = ["--wait", wait, "--wait-every", str(2 + seed % 5)]
        if seed % 2 == 0:
            args += ["--secondary-every", "4"]
        if seed % 3 == 0:
            args += DEADLINE
        if wait in ("fence", "timeline"):
            args += finite
        c.append(Case(f"random-{seed}", f"*%0.05;seed={seed}", args,
                      modes=("none", "fuse") if seed % 3 else ("none", "fuse", "fuse-native")))
    # ... and over the calls made while work runs (submissions, waits, status queries, counter
    # reads, Slipstream's command buffers and fences), so that the runs get past the set-up.
    runtime = ";".join(f"{fn}%{p}" for fn, p in (
        ("vkQueueSubmit", 0.08), ("vkQueueSubmit2", 0.08), ("vkWaitForFences", 0.1), ("vkGetFenceStatus", 0.03),
        ("vkWaitSemaphores", 0.1), ("vkGetSemaphoreCounterValue", 0.03), ("vkQueueWaitIdle", 0.1),
        ("vkDeviceWaitIdle", 0.1), ("vkAllocateCommandBuffers", 0.2), ("vkCreateFence", 0.1)))
    for seed in (range(101, 141) if long_form else range(101, 107)):
        wait = waits[seed % len(waits)]
        args = ["--wait", wait, "--wait-every", str(1 + seed % 4)] + finite
        if seed % 2:
            args += DEADLINE
        if seed % 3 == 0:
            args += ["--submit", "submit2"]
        c.append(Case(f"random-runtime-{seed}", f"{runtime};seed={seed}", args,
                      modes=("none", "plain", "fuse", "fuse-native")))
    return c


# --- running ---

class Run:
    def __init__(self, case, mode):
        self.case, self.mode = case, mode
        self.name = f"{case.name}:{mode}"
        self.rc = None
        self.hang = self.crash = self.wrong = False
        self.stdout = self.stderr = ""
        self.seconds = 0.0
        self.facts = {}
        self.report = None
        self.stats = None
        self.problems = []
        self.injected = 0


def run_env(args, case, mode, tmpdir, run):
    base = dict(os.environ)
    base.pop("VK_LAYER_PATH", None)
    test_layers = os.path.join(os.path.abspath(args.build_dir), "test_layers")
    below = [FAULT_LAYER] + ([MEMORY_LAYER] if case.layout else []) + ([VALIDATION] if case.validation else [])
    knobs = MODES[mode]
    if knobs is None:
        env = slipstream_env.layer_env("off", args.build_dir, base, extra_layers_below=below)
        env["VK_ADD_LAYER_PATH"] = ":".join([test_layers] + ([base["VK_ADD_LAYER_PATH"]]
                                                            if base.get("VK_ADD_LAYER_PATH") else []))
    else:
        env = slipstream_env.layer_env("on", args.build_dir, base, extra_layers_below=below)
        # After Slipstream's folder: the loader stacks in discovery order (see the docstring).
        env["VK_ADD_LAYER_PATH"] += ":" + test_layers
        for k in list(env):
            if k.startswith("VK_SLIPSTREAM_"):
                del env[k]
        env.update(knobs)
        env.update(case.env)
        env["VK_SLIPSTREAM_STATS_FILE"] = os.path.join(tmpdir, run.name.replace(":", "_") + ".stats.json")
    env.update(case.test_env)
    env["SLIPSTREAM_TEST_FAULTS"] = case.faults
    env["SLIPSTREAM_TEST_FAULTS_REPORT"] = os.path.join(tmpdir, run.name.replace(":", "_") + ".faults.json")
    if case.layout:
        env["SLIPSTREAM_TEST_MEMORY_LAYOUT"] = case.layout
    return env


FACT_RE = re.compile(r"^([a-z-]+): (.*)$")


OFF_THREAD = "no fault landed on Slipstream's flusher thread"
NO_FAULT = "no fault was injected"


def never_reached(case, mode, dev):
    """Whether, spinning and fusing, Slipstream answered every call the case's only fault aims
    at itself, so that fewer reached the driver than its @N (on the H200 every fence wait of
    fence-wait-oom:fuse was answered from the timeline). Correct results are still required,
    and the case's other modes (without spin, without the layer) must inject it."""
    entries = [e for e in case.faults.split(";") if "@" in e]
    if mode not in FUSING or "nospin" in mode or len(entries) != 1:
        return False
    m = re.match(r"(vk\w+)@(\d+)", entries[0])
    if not m:
        return False
    seen = int(dev.get("functions", {}).get(m.group(1), {}).get("seen", 0))
    return seen < int(m.group(2))


def execute(args, case, mode, tmpdir):
    """One run; again (twice at most) where only the flusher missed its fault: a loaded machine
    can delay the flusher past the application's next wait, which then flushes itself, and the
    flusher's own waits (case.timing) happen only while it finds the GPU busy."""
    retry = [[OFF_THREAD]] + ([[NO_FAULT]] if case.timing else [])
    for _ in range(3):
        run = execute_once(args, case, mode, tmpdir)
        if run.problems not in retry:
            break
    return run


def execute_once(args, case, mode, tmpdir):
    run = Run(case, mode)
    env = run_env(args, case, mode, tmpdir, run)
    start = time.monotonic()
    proc = subprocess.Popen([args.app] + case.args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        run.stdout, run.stderr = proc.communicate(timeout=args.timeout)
        run.rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        run.stdout, run.stderr = proc.communicate()
        run.hang = True
    run.seconds = time.monotonic() - start
    for line in run.stdout.splitlines():
        m = FACT_RE.match(line)
        if m and m.group(1) != "error":
            run.facts[m.group(1)] = m.group(2)
    report = env["SLIPSTREAM_TEST_FAULTS_REPORT"]
    try:
        with open(report) as f:
            run.report = json.load(f)
    except (OSError, ValueError):
        run.report = None
    stats = env.get("VK_SLIPSTREAM_STATS_FILE")
    if stats:
        try:
            with open(stats) as f:
                run.stats = json.load(f)
        except (OSError, ValueError):
            run.stats = None
    check(run)
    return run


def first_device(report):
    devices = (report or {}).get("devices") or []
    for d in devices:
        if d.get("device") == 1:
            return d
    return None


def stat_first(stats, name):
    """The counter of the faulted device: the first one the statistics list (the next device's
    follow it)."""
    devices = (stats or {}).get("devices") or []
    return int(devices[0].get(name, 0)) if devices and isinstance(devices[0], dict) else 0


OPS = {">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "<=": lambda a, b: a <= b}


def check(run):
    p = run.problems
    case, mode = run.case, run.mode
    if run.hang:
        p.append(f"hang: no exit within the time limit")
        return
    sanitizer = re.search(r"ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error:",
                          run.stderr)
    if run.rc == 3:
        run.hang = True
        p.append("hang: the application's fence poll did not end in 20 s")
        return
    if sanitizer and "LeakSanitizer" in sanitizer.group(0):
        p.append("leak: LeakSanitizer reported memory the run did not free")
        return
    if run.rc != 0 or sanitizer:
        run.crash = True
        p.append(f"crash: exit status {run.rc}" + (f", {sanitizer.group(0)}" if sanitizer else ""))
        return
    if case.validation:
        messages = [l for l in run.stderr.splitlines() if l.startswith("validation:")]
        if messages:
            p.append(f"{len(messages)} validation message(s): {messages[0][:300]}")
    f = run.facts
    for key in ("first-error", "results", "next-device", "app-calls"):
        if key not in f:
            p.append(f"no '{key}:' line in the output")
            return
    dev = first_device(run.report)
    if dev is None:
        p.append("the fault layer wrote no report for the first device")
        return
    run.injected = int(dev.get("injected", 0))
    injected_codes = {k for k, v in (dev.get("injected_by_result") or {}).items() if v}

    # 1. an error where it may come back, or correct results
    first = f["first-error"]
    if first == "none":
        if f["results"] != "correct":
            run.wrong = True
            p.append(f"VK_SUCCESS everywhere but results {f['results']}")
    else:
        call, _, code = first.partition(" ")
        if code not in SPEC_ERRORS.get(call, set()):
            p.append(f"{call} returned {code}, which its specification does not list")
        elif code not in injected_codes:
            p.append(f"{call} returned {code}, which was never injected (injected: {sorted(injected_codes)})")
        if f["results"] == "wrong":
            run.wrong = True
            p.append("results wrong")
    want = case.expect.get(mode)
    if want == "error" and first == "none":
        p.append("the application never saw the injected error")
    if want == "correct" and first != "none":
        p.append(f"the application saw {first}, which {mode} should have kept from it")

    # 2. device loss sticks; nothing submitted after it
    if first.endswith(LOST):
        m = re.match(r"submit=(\S+) wait=(\S+)", f.get("after-lost", ""))
        if not m:
            p.append("no after-lost line")
        else:
            if m.group(1) not in (LOST, "not-probed"):
                p.append(f"a submission after VK_ERROR_DEVICE_LOST returned {m.group(1)}")
            if m.group(2) not in ("VK_SUCCESS", LOST):
                p.append(f"vkDeviceWaitIdle after VK_ERROR_DEVICE_LOST returned {m.group(2)}")
    # Fusing, Slipstream submits nothing once it knows of the loss, and answers the
    # application's submissions itself; otherwise the application's own submission after the
    # loss (the probe) passes through, as it would without the layer.
    # (A queue whose fusion could not start, its timeline semaphore or pool refused, passes
    # through: it fused nothing.)
    fused = mode in FUSING and stat_first(run.stats, "command_buffers_fused") > 0
    allowed_after = 0 if fused else int("after-lost" in f)
    if mode != "none" and int(dev.get("submits_after_lost", 0)) > allowed_after:
        p.append(f"{dev['submits_after_lost']} submission(s) reached the driver after the device was lost")

    # 3. the next device works
    if f["next-device"] != "correct":
        p.append(f"the next device: {f['next-device']}")

    # 4. faults were injected, where they were meant to land
    if case.faultless:
        if run.injected:
            p.append(f"{run.injected} fault(s) injected in a case that injects none")
    elif run.injected == 0 and not (mode == "none" and case.own_calls) and not never_reached(case, mode, dev):
        p.append(NO_FAULT)
    if case.off_thread and mode in FUSING and int(dev.get("injected_off_thread", 0)) == 0:
        p.append(OFF_THREAD)
    if mode in FUSING:
        app_pools = int(dict(kv.split("=") for kv in f["app-calls"].split()).get("vkCreateCommandPool", 0))
        seen_pools = int(dev["functions"]["vkCreateCommandPool"]["seen"])
        if seen_pools <= app_pools:
            p.append(f"the fault layer saw {seen_pools} vkCreateCommandPool calls, the application made "
                     f"{app_pools}: it is not below Slipstream")
    if mode != "none":
        for name, op, value in case.stats:
            total = stat_first(run.stats, name)
            if not OPS[op](total, value):
                p.append(f"statistics: {name} = {total}, expected {op} {value}")


def detail(run):
    if run.problems:
        return "; ".join(run.problems)
    f = run.facts
    return f"first error: {f.get('first-error')}; results {f.get('results')}; injected {run.injected}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--report")
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="run only cases whose name:mode matches this regular expression")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--keep", help="keep the runs' reports and logs in this folder")
    args = ap.parse_args(argv)

    todo = [(c, m) for c in cases(args.long) for m in c.modes]
    if args.only:
        todo = [(c, m) for c, m in todo if re.search(args.only, f"{c.name}:{m}")]
    if not todo:
        print("fault_test: no case matches", file=sys.stderr)
        return 2
    tmp = tempfile.TemporaryDirectory(prefix="fault_test.")
    tmpdir = args.keep or tmp.name
    os.makedirs(tmpdir, exist_ok=True)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda cm: execute(args, cm[0], cm[1], tmpdir), todo))
    failed = 0
    for run in runs:
        ok = not run.problems
        failed += 0 if ok else 1
        print(f"{'PASS' if ok else 'FAIL'} {run.name:40s} {run.seconds:5.1f}s  {detail(run)}")
        if not ok:
            sys.stdout.write("  --- stdout ---\n" + "".join("  " + l + "\n" for l in run.stdout.splitlines()))
            sys.stdout.write("  --- stderr ---\n" + "".join("  " + l + "\n" for l in run.stderr.splitlines()[-40:]))
    print(f"{len(runs)} runs, {failed} failed, {time.monotonic() - start:.1f} s")
    if args.report:
        cases_json = [{
            "name": r.name, "passed": not r.problems, "hang": r.hang, "crash": r.crash,
            "wrong_result": r.wrong, "detail": detail(r), "injected": r.injected,
            "survived": int(not r.hang and not r.crash and r.facts.get("next-device") == "correct"),
        } for r in runs]
        with open(args.report, "w") as f:
            json.dump({"kind": "faults", "cases": cases_json}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
