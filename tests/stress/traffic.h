// The stress programs' workload: threads that record and submit small compute command buffers
// to shared queues under the application's own lock per queue (the spec makes queues
// externally synchronized), and threads that watch those submissions complete.
//
// Submitters. Each has its own command pool, a ring of 16 command buffers and fences it
// reuses, its own 64 words of data and 16 marker words. Submission `seq` applies step
// (thread, seq) to the data (the order of steps matters: a wrong submission order is a wrong
// result) and writes tag seq+1 into marker slot seq % 16. One in `fence_every` carries the
// slot's fence, which a fence waiter waits on; some signal the thread's timeline semaphore,
// which a semaphore waiter waits on; some wait on a gate timeline that a signalling thread
// signals from the host. Whoever sees a submission done checks its marker, so a wait that
// returns before the work is done is a wrong result, not luck. A slot is reused (its fence
// reset, its command buffer re-recorded, now and then the whole pool reset) only once its
// previous submission is known complete and nobody looks at it any more: memory stays bounded
// however many submissions are made.
//
// With `poll_memory`, fence-less submissions are watched through their marker only (no Vulkan
// call), and some of them the submitter itself waits for that way before it goes on; with
// `quiet_probes`, every 64th of a submitter's waits so while the threads that wait, poll and
// wait for idleness make no Vulkan call: only the layer's deadline flush can get a held batch
// to the GPU then. With `idle_waits`, a thread
// takes a queue's lock and calls vkQueueWaitIdle, or all queues' locks and vkDeviceWaitIdle,
// then checks that every submission made before is complete.
//
// Relays hand one buffer from queue to queue: stage k runs on queue (r * 3 + k) % queues,
// submitted by the relay's thread k % 2 once stage k-1 was submitted, and waits on the relay's
// timeline for value k and signals k+1 (cross-queue, and cross-family where the queues are).
//
// At the end every data buffer is compared with a CPU reference of the steps it saw.
#pragma once

#include "stress_run.h"
#include "vk_app.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stress {

// One queue of the application's, with the lock it keeps submissions to it apart with.
struct AppQueue {
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t family = 0;
    std::mutex lock;
};

struct TrafficConfig {
    uint32_t submitters = 4;
    uint32_t fence_waiters = 2;
    uint32_t fence_every = 4;  // 1 in N submissions of a submitter carries a fence (N <= 8)
    bool timelines = false;    // timeline signals with a waiter thread ...
    bool gates = true;         // ... and (with timelines) host-signalled gates
    bool poll_memory = false;  // a thread that watches fence-less submissions through memory
    // (with poll_memory) now and then a submitter's probe that no other thread's Vulkan call
    // can get to the GPU: the waiting threads pause meanwhile, so only a layer's own deadline
    // flush can (a layer that held it forever hangs: the watchdog says so)
    bool quiet_probes = false;
    bool idle_waits = false;   // a thread doing vkQueueWaitIdle and vkDeviceWaitIdle
    uint32_t relays = 0;       // cross-queue relays, two threads each
    uint32_t relay_stages = 0;
    uint64_t submissions = 1000;  // by the submitters together (relay stages come on top)
    double stop_at_s = 0;         // elapsed_s() after which no new submission is made (0: none)
    // While this is true the submitters go on past `submissions` (the results' checksum then
    // depends on timing; the CPU reference still checks them).
    const std::atomic<bool>* while_running = nullptr;
};

struct TrafficResult {
    bool ok = true;
    bool wrong_result = false;
    std::string detail;  // the first problem, or what ran
    uint64_t checksum = 0;
    uint64_t submissions = 0;
};

// Runs the workload on `queues` (all of `ctx`'s device; the device must have timeline
// semaphores). Returns when every thread is done and the device is idle.
TrafficResult run_traffic(vkapp::Context& ctx, std::vector<AppQueue*>& queues, const TrafficConfig& config,
                          Progress& progress);

// The case's outcome from a traffic run and its counters.
CaseOutcome outcome_of(const TrafficResult& r, const Progress& progress);

// One step of stream `stream` on a fresh buffer, submitted alone on ctx.queue with a fence and
// checked: what a short-lived device of the churn case does. False (and *problem) on a wrong
// result.
bool single_step(vkapp::Context& ctx, uint64_t stream, std::string* problem);

// The context's queues as AppQueues (queue i of ctx.queues, family ctx.queue_families[i]).
std::vector<AppQueue*> app_queues(vkapp::Context& ctx, std::vector<std::unique_ptr<AppQueue>>& storage);

}  // namespace stress
