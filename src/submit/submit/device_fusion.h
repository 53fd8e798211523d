// The device's part of fusion: the deadline flusher thread, which records and submits sealed
// batches and the open ones whose time came (flush_policy.h: decide_in_flusher), the fences
// answered from timelines, and the fusion trace. One per fusing device, from vkCreateDevice
// (submit::start_device) to vkDestroyDevice (submit::stop_device).
#pragma once

#include "submit/batch_fences.h"
#include "submit/semaphore_carry.h"
#include "submit/fuse_trace.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace slipstream {
struct DeviceState;
}

namespace slipstream::submit {

class DeviceFusion {
public:
    explicit DeviceFusion(DeviceState& device);
    ~DeviceFusion();  // stops the thread
    // Stops the flusher thread (vkDestroyDevice, before the last flushes).
    void stop();
    // A batch stays open (the flusher must watch its deadline), or one was sealed (the flusher
    // must record and submit it now, even while it waits for the GPU).
    void wake();
    // A batch was opened: wakes the flusher unless it is watching our running work, when it
    // looks at the queues within FLUSHER_POLL_US anyway (no futex call on the submitting
    // thread for a stream of batches).
    void opened_batch() {
        if (!watching_.load(std::memory_order_seq_cst)) wake();
    }
    BatchFences& fences() { return fences_; }
    // Timeline waits passed through to the driver (semaphore_carry.h).
    AwaitedSemaphores& awaited() { return awaited_; }
    // VK_SLIPSTREAM_FUSE_TRACE's record, or null.
    FuseTrace* trace() { return trace_.get(); }

private:
    void run();
    // One round over the fusing queues (no lock held): submits what is due, and collects the
    // timelines to wait for and the earliest time to look again.
    void serve_queues(uint64_t max_defer_ns, uint64_t* wake_at);
    // Disarms armed replays (armed_replay.h) past their deadline; lowers *wake_at to the next.
    void watch_armed(uint64_t* wake_at);
    // Blocks in vkWaitSemaphores (ANY) on the collected timelines, with no lock held.
    void wait_for_timelines(uint64_t timeout_ns);
    // With mutex_ held (`lock`) and no batch open: polls the running work once (watching_)
    // where that is worth it; false: the flusher should sleep until woken instead.
    bool watch_running(std::unique_lock<std::mutex>& lock, uint64_t poll_ns);
    // Drops the collected timelines that reached their values (their queues' work is done).
    void drop_completed_timelines();

    DeviceState& d_;
    std::unique_ptr<FuseTrace> trace_;
    std::mutex mutex_;  // stop_ and woken_, with cv_; released before any queue is touched
    std::condition_variable cv_;
    bool stop_ = false;
    bool woken_ = false;
    // The flusher polls because work of ours runs (FLUSHER_POLL_US): a batch opened meanwhile is
    // seen without a wake. Cleared before it sleeps until woken (open_batches is checked after,
    // both sequentially consistent, so an opening either sees it cleared or is seen).
    std::atomic<bool> watching_{false};
    uint64_t watch_until_ = 0;  // (the flusher thread's) it watches running work until then
    std::vector<VkSemaphore> semaphores_;  // (the flusher thread's) timelines to wait for ...
    std::vector<uint64_t> values_;         // ... and the values that mean the GPU ran dry
    std::vector<QueueFusion*> queues_;     // ... of these queues

    BatchFences fences_;
    AwaitedSemaphores awaited_;
    std::thread thread_;
};

}  // namespace slipstream::submit
