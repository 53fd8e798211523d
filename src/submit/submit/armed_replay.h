// Armed launches (VK_SLIPSTREAM_ARM, off by default; docs/armed-launch.md): on a queue in
// latency mode, the work of the command buffer just submitted is submitted once more at once,
// as a replay of its capture that waits before its first command. When the application then
// submits the same work again, one host call releases the replay that the GPU already holds,
// instead of a driver submission (~6 us of the H200's round trip is its submission path).
//
// The replay waits on a timeline value of ours that the host signals (ARM=timeline: waiting
// before the signal is allowed for timeline semaphores), or on an event of ours that the host
// sets (ARM=event: the specification says a host-set event must be set before the submission
// that waits on it, so this is for measurement only). Either way the host first writes the
// group counts of its dispatches, which it replays as indirect dispatches
// (capture/armed_work.h): the captured counts to run it, zeros to skip it. Anything else that
// reaches the queue, any idle wait, destroy, free or descriptor update, and a deadline first
// disarm it: released with its work skipped. Its completion signals a timeline of ours that
// the released submission's fence is answered from.
//
// Two command buffers of ours take turns, so that the next replay can be armed while the one
// just released runs; each is recorded again only when the work changes. After a disarm, the
// queue arms again only after 2^n - 1 more direct submissions (n disarms in a row, at most 6),
// so that work that never repeats costs little.
#pragma once

#include "capture/armed_work.h"
#include "core/stats.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace slipstream {
struct DeviceState;
struct QueueState;
struct CommandBufferState;
}  // namespace slipstream

namespace slipstream::submit {

class ArmedReplay {
public:
    ArmedReplay(DeviceState& device, QueueState& queue) : d_(device), q_(queue) {}
    ~ArmedReplay();  // the device must be idle (vkDestroyDevice)
    ArmedReplay(const ArmedReplay&) = delete;
    ArmedReplay& operator=(const ArmedReplay&) = delete;

    // --- any thread, no lock ---
    bool armed() const { return armed_.load(std::memory_order_acquire); }
    // When an armed replay nobody claims is disarmed (now_ns()).
    uint64_t deadline_ns() const { return deadline_ns_.load(std::memory_order_acquire); }
    // The flusher, with no lock (the submitting thread holds the queue's): an event replay whose
    // submission the driver holds on the submitting thread past the deadline is let go skipped;
    // else *wake_at is lowered to the deadline.
    void unblock_if_late(uint64_t now, uint64_t* wake_at);

    // --- with the queue lock held ---
    // After a submission of `cb` that reached the driver: arms a replay of its capture, unless
    // it cannot be armed, the queue backs off, or the command buffer of ours whose turn it is
    // still runs.
    void arm(const CommandBufferState& cb);
    // Whether `cb`'s capture is the armed work.
    bool matches(const CommandBufferState& cb);
    // The armed replay runs: its completion is `*done` reaching `*value`. The driver's error
    // if the host call failed (the replay then counts as disarmed).
    VkResult release(VkSemaphore* done, uint64_t* value);
    // The armed replay runs with its work skipped; `why` counts why (Counter::ArmDisarmed*).
    // Nothing if none is armed.
    void disarm(Counter why);
    // Whether a released replay (the application's work) may still run: one counter read while
    // one may. A disarmed one does nothing, and what it binds is waited for where it matters
    // (skipped_running: destroys, frees and updates; vkDestroyDevice), so idle waits and the
    // latency path do not wait for it.
    bool busy();
    // Whether a disarmed replay may still run (it binds what the application may destroy or
    // update next): true with the value of done() that ends it.
    bool skipped_running(uint64_t* value);
    VkSemaphore done() const { return done_; }

private:
    bool make_objects();
    bool make_args();
    VkResult record(uint32_t slot, const CommandBufferState& cb);
    VkResult submit(uint32_t slot, uint64_t release_value, uint64_t done_value);
    bool submit_armed(uint32_t slot);
    // Writes the group counts of the armed slot: the work's, or zeros to skip it.
    void write_args(bool run);
    // The host call that lets the armed replay start.
    VkResult let_go();
    uint64_t completed();

    DeviceState& d_;
    QueueState& q_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cbs_[2] = {};
    VkEvent events_[2] = {};              // ARM=event
    VkSemaphore release_ = VK_NULL_HANDLE;  // ARM=timeline: the host signals it
    VkSemaphore done_ = VK_NULL_HANDLE;     // the GPU signals it after each replay
    VkBuffer args_ = VK_NULL_HANDLE;
    VkDeviceMemory args_memory_ = VK_NULL_HANDLE;
    VkDispatchIndirectCommand* args_map_ = nullptr;
    bool failed_ = false;  // objects could not be made: never arms

    capture::ArmableWork recorded_[2];  // what each command buffer of ours holds ...
    uint64_t recorded_epoch_[2] = {};   // ... recorded at this DeviceState::arm_epoch
    capture::ArmableWork work_;         // the armed work
    capture::ArmableWork scratch_;      // a submission's work, read to compare
    uint64_t slot_done_[2] = {};        // the done_ value each command buffer's last replay signals
    uint32_t slot_ = 0;                 // the armed (or last armed) command buffer
    uint64_t release_value_ = 0;        // the last value submitted to wait on release_
    uint64_t done_value_ = 0;           // the last value submitted to signal done_
    uint64_t last_done_ = 0;            // the value that ends the last replay released or disarmed
    uint64_t released_done_ = 0;        // ... the last released
    uint64_t skipped_done_ = 0;         // ... the last disarmed
    uint64_t seen_done_ = 0;            // done_'s counter as last read
    uint32_t misses_ = 0;               // disarms in a row
    uint32_t skip_ = 0;                 // direct submissions left before the queue arms again
    uint32_t stuck_ = 0;                // event submissions held past the deadline, in a row
    std::atomic<bool> armed_{false};
    std::atomic<VkEvent> blocking_event_{VK_NULL_HANDLE};  // ARM=event: while its submission is made
    std::atomic<uint64_t> deadline_ns_{0};
};

}  // namespace slipstream::submit
