// Our submissions on one fusing queue, and the timeline semaphore that says which completed:
// every submission the layer makes to the queue (batches, direct and passed-through work, the
// closing barrier) signals it, except one followed through the application's fence
// (followed_fence.h). Reading it costs 0.017 us, signaling it +0.21 us per submit on the H200
// (slipstream-completion-cost), against +0.32 and 0.41 us for a fence ring. It also keeps our
// command buffers (free, or in flight until the timeline passes them), the measured cost of a
// submission, and the fusion trace's records of submissions. All under the queue lock, except
// where a member says otherwise.
#pragma once

#include "submit/armed_replay.h"
#include "submit/flush_policy.h"
#include "submit/followed_fence.h"
#include "submit/fuse_trace.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

namespace slipstream {
struct DeviceState;
struct QueueState;
class TrackedSubmission;
}  // namespace slipstream

namespace slipstream::submit {

// Operations of a submission of the application's command buffers (never a cost sample).
constexpr uint32_t kUnknownOps = UINT32_MAX;

// One submission of ours, as its trace and its bookkeeping after the driver's answer see it.
struct OurSubmission {
    VkCommandBuffer cb = VK_NULL_HANDLE;    // ours that it runs (null: none, or only the application's)
    uint64_t value = 0;                     // the timeline value it signals; 0: it signals none
    VkFence followed = VK_NULL_HANDLE;      // ... followed through this fence instead
    uint32_t ops = kUnknownOps;             // operations (kUnknownOps: the application's)
    bool traced = false;                    // a record in the fusion trace:
    TraceEvent event = TraceEvent::Flush;
    FlushReason reason = FlushReason::Full;
    uint32_t cbs = 0;
    uint64_t waited_ns = 0;
};

class QueueTimeline {
public:
    QueueTimeline(DeviceState& device, QueueState& queue) : d_(device), q_(queue), follow_(device), armed_(device, queue) {}
    ~QueueTimeline();  // the device must be idle (vkDestroyDevice)
    QueueTimeline(const QueueTimeline&) = delete;
    QueueTimeline& operator=(const QueueTimeline&) = delete;
    // Creates the command pool and the timeline semaphore; false: the queue cannot fuse.
    bool init();

    // The one way a submission of ours reaches the driver: `next` with `infos`, wrapped in
    // `tracked` (the idle tracker's view), traced, then settled (in flight until the timeline
    // reaches `s.value`, followed through `s.followed`, or just counted).
    VkResult submit(const OurSubmission& s, TrackedSubmission& tracked, PFN_vkQueueSubmit next, uint32_t count,
                    const VkSubmitInfo* infos);
    VkResult submit(const OurSubmission& s, TrackedSubmission& tracked, PFN_vkQueueSubmit2 next, uint32_t count,
                    const VkSubmitInfo2* infos);
    // The value the next submission signals.
    uint64_t next_value() const { return submitted_.load(std::memory_order_relaxed) + 1; }
    // Submissions of ours not yet complete (one counter read).
    uint64_t in_flight();
    // The queue's idleness for idle waits (QueueFusion::poll_idle).
    VkResult poll_idle();
    // One of ours, ready to begin; null with the driver's error in *error. (Both locks.)
    VkCommandBuffer acquire_command_buffer(VkResult* error);
    // One of ours that did not reach the GPU is free again (`reset`: it was recorded).
    void give_back(VkCommandBuffer cb, bool reset);
    // `cb`, submitted in the submission that signals `value`, is free once the timeline does.
    void keep_until(VkCommandBuffer cb, uint64_t value) { in_flight_.push_back({cb, value}); }
    // Whether the newest submission in flight runs `cb` (not null).
    bool newest_runs(VkCommandBuffer cb) const { return cb && !in_flight_.empty() && in_flight_.back().cb == cb; }
    void note_untracked_work() { untracked_work_ = true; }
    bool untracked_work() const { return untracked_work_; }
    // A driver's idle wait on the queue (or the device) returned.
    void note_driver_idle() {
        untracked_work_ = false;
        end_follow();
    }
    // vkQueueWaitIdle on the queue (vkDestroyDevice only: it blocks under the lock).
    VkResult wait_idle();

    // The latency path (followed_fence.h): whether a submission with `fence` (of `fences`)
    // may be followed through it instead of signaling the timeline.
    bool may_follow(VkFence fence, size_t fences, bool latency_mode);
    // The application reset, destroyed or imported `fence` while its followed submission may
    // run (a misuse): an empty submission that signals the timeline follows it instead.
    void signal_instead_of(VkFence fence);
    // Whether the followed submission may still run (asks the driver while its fence is not
    // known signaled); once done, its command buffer is free.
    bool followed_busy();
    FollowedFence& followed() { return follow_; }
    const FollowedFence& followed() const { return follow_; }
    // The armed replay (armed_replay.h). Every other submission and idle wait of ours on the
    // queue disarms it first: the driver would put it behind the armed one.
    ArmedReplay& armed() { return armed_; }
    const ArmedReplay& armed() const { return armed_; }

    // VK_SLIPSTREAM_FUSE_TRACE's record, or null; one line of it.
    FuseTrace* tracer() const;
    void trace(FuseTrace& t, TraceEvent event, FlushReason reason, uint32_t cbs, uint32_t ops, uint64_t waited_ns,
               uint64_t in_flight, uint64_t call_ns);

    // --- any thread, no lock ---
    VkSemaphore timeline() const { return timeline_; }
    // The value the newest submission signals (read under the queue lock for an exact answer).
    uint64_t submitted_value() const { return submitted_.load(std::memory_order_acquire); }
    uint64_t submit_cost_ns() const { return submit_cost_ns_.load(std::memory_order_relaxed); }
    // The highest value any read of the timeline returned: everything up to it completed (a
    // wait on an answered fence whose value it passed needs no wait: BatchFences::seen_done).
    const std::atomic<uint64_t>& completed_seen_counter() const { return completed_seen_; }
    void saw_completed(uint64_t value) {
        uint64_t seen = completed_seen_.load(std::memory_order_relaxed);
        while (seen < value && !completed_seen_.compare_exchange_weak(seen, value, std::memory_order_acq_rel)) {
        }
    }

private:
    struct InFlight {
        VkCommandBuffer cb;  // null for a submission of the application's command buffers only
        uint64_t value;      // the timeline value its completion signals
    };
    template <typename Info, typename Next>
    VkResult submit_as(const OurSubmission& s, TrackedSubmission& tracked, Next next, uint32_t count,
                       const Info* infos);
    // After the driver's answer `result` to `s`, made at `start_ns`.
    void settle(const OurSubmission& s, VkResult result, uint64_t start_ns);
    // After a submission of `ops` operations that signals `value`, begun at `start_ns`.
    void submitted(VkCommandBuffer cb, uint64_t value, VkResult result, uint64_t start_ns, uint32_t ops);
    // Nothing is followed any more; our command buffer is free again.
    void end_follow();
    void recycle(uint64_t completed);
    uint64_t completed_value();

    DeviceState& d_;
    QueueState& q_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::atomic<uint64_t> submitted_{0};
    std::deque<InFlight> in_flight_;
    std::vector<VkCommandBuffer> free_;
    FollowedFence follow_;
    ArmedReplay armed_;
    std::atomic<uint64_t> submit_cost_ns_{20000};  // round trip; a guess until measured
    std::atomic<uint64_t> completed_seen_{0};
    uint64_t probe_value_ = 0;                     // a submission made on an idle GPU ...
    uint64_t probe_start_ns_ = 0;                  // ... and when it was made
    bool untracked_work_ = false;                  // poll_idle
};

}  // namespace slipstream::submit
