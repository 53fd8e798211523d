// Fusion at submission, for one queue: the open batch (a command buffer of Slipstream's, being
// recorded with the captures of the application's submissions in submission order), the
// batches in flight, and the timeline semaphore every batch signals, which records which of
// them completed (slipstream-completion-cost on the H200: +0.21 us per submit to signal it,
// 0.017 us to read it, against +0.32 and 0.41 us for a fence ring).
//
// Locking (FUSION.md rule 4): `mutex()` is the queue's lock while fusion is on. Every VkQueue
// entry point of the layer takes it, and so does the deadline flusher, so the driver never sees
// two threads on the queue; no blocking driver wait is made under it. Everything but the
// atomics is guarded by it.
#pragma once

#include "capture/batch_replay.h"
#include "submit/flush_policy.h"
#include "submit/fuse_trace.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace slipstream {
struct DeviceState;
struct QueueState;
struct CommandBufferState;
}  // namespace slipstream

namespace slipstream::submit {

class QueueFusion {
public:
    QueueFusion(DeviceState& device, QueueState& queue) : d_(device), q_(queue) {}
    ~QueueFusion();  // the device must be idle (vkDestroyDevice)
    QueueFusion(const QueueFusion&) = delete;
    QueueFusion& operator=(const QueueFusion&) = delete;

    // Creates the command pool and the timeline semaphore; false: this queue does not fuse.
    bool init();

    std::mutex& mutex() { return mutex_; }

    // --- with mutex() held ---
    // Replays one application command buffer's capture into the open batch (opening one).
    // False when no batch could be opened (out of memory): the caller passes the work through.
    bool append(const CommandBufferState& cb);
    // The application's fence of a fused submission: signaled after the batch that holds it.
    void add_fence(VkFence fence) { fences_.push_back(fence); }
    bool open() const { return open_cb_ != VK_NULL_HANDLE; }
    // Whether the open batch carries one of these fences (their signal waits for its flush).
    bool holds_any(uint32_t count, const VkFence* fences) const;
    // The open batch (with the counter read for in_flight) as the flush rules see it.
    OpenBatch batch_state();
    bool latency_mode() const { return sync_.latency_mode(); }
    // A fusable submission came (with this fence, or none); the application waited for the
    // latest submission (its fence, or the queue or device idle).
    void note_submission(VkFence fence) {
        sync_.submitted();
        latest_fence_.store(fence, std::memory_order_relaxed);
    }
    void note_wait() { sync_.waited(); }
    uint64_t submit_cost_ns() const { return submit_cost_ns_.load(std::memory_order_relaxed); }
    // Submits the open batch, if any, and the empty submissions that signal its fences. An error
    // of the driver's comes back (the batch's work then went to the driver as the
    // application's own command buffers, if the driver took those); VK_SUCCESS when there was
    // nothing to do.
    VkResult flush(FlushReason reason);
    // With no batch open: submits the application's own command buffers (still recorded
    // natively) as it asked, plus the queue's timeline signal, so the next submission knows
    // whether the GPU is still busy with them.
    VkResult submit_direct(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next);
    VkResult submit_direct(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next);
    // A submission that is passed through but names lazily recorded command buffers: each of
    // those is replayed into a command buffer of ours in its place, and one more submission
    // after the application's signals the queue's timeline (ours are recycled once it passes).
    VkResult submit_replayed(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next);
    VkResult submit_replayed(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next);
    // vkQueueWaitIdle on the queue (vkDestroyDevice only: it blocks under the lock).
    VkResult wait_idle();
    // An empty submission with `fence`: it signals once everything submitted so far is done.
    VkResult signal_fence(VkFence fence);
    // Submissions of ours (batches and direct ones) not yet complete (one counter read).
    uint64_t in_flight();
    // The first error a flush met that no caller has returned yet (VK_SUCCESS if none); device
    // loss stays.
    VkResult take_error();
    // Records the error of a flush the caller cannot return (the deadline flusher).
    void keep_error(VkResult result);

    // --- any thread, no lock ---
    bool has_open() const { return has_open_.load(std::memory_order_acquire); }
    // Whether one of these fences is the one of the latest fusable submission.
    bool latest_fence_in(uint32_t count, const VkFence* fences) const {
        const VkFence latest = latest_fence_.load(std::memory_order_relaxed);
        if (!latest) return false;
        for (uint32_t i = 0; i < count; ++i)
            if (fences[i] == latest) return true;
        return false;
    }
    // When the open batch was opened (now_ns()); meaningful while has_open().
    uint64_t opened_ns() const { return opened_ns_.load(std::memory_order_relaxed); }
    VkSemaphore timeline() const { return timeline_; }
    // The value the newest submitted batch signals (read under mutex() for an exact answer).
    uint64_t submitted_value() const { return submitted_.load(std::memory_order_acquire); }

private:
    struct Batch {
        VkCommandBuffer cb;  // null for a direct submission
        uint64_t value;      // the timeline value its completion signals
    };
    // After a submission that signals `value`, begun at `start_ns`, returned `result`.
    void submitted(VkCommandBuffer cb, uint64_t value, VkResult result, uint64_t start_ns);
    template <typename Info, typename Next>
    VkResult submit_direct_as(uint32_t count, const Info* submits, VkFence fence, Next next);
    template <typename Info, typename Next>
    VkResult submit_replayed_as(uint32_t count, const Info* submits, VkFence fence, Next next);
    // Replays a capture into the open batch, its ALL_COMMANDS barriers narrowed where the
    // queue's history allows (capture/barrier_narrowing.h, narrowing.md).
    void replay_into_batch(const CommandBufferState& cb);
    // A lazily recorded command buffer replayed into one of ours, ended; null on failure.
    VkCommandBuffer record_alone(const CommandBufferState& cb);
    VkCommandBuffer acquire_command_buffer();
    // VK_SLIPSTREAM_FUSE_TRACE's record, or null; one line of it.
    FuseTrace* tracer() const;
    void trace(FuseTrace& t, TraceEvent event, FlushReason reason, uint32_t cbs, uint64_t waited_ns,
               uint64_t in_flight, uint64_t call_ns);
    void recycle(uint64_t completed);
    uint64_t completed_value();
    // The batch could not be submitted: give the driver the application's command buffers.
    VkResult submit_app_command_buffers();

    DeviceState& d_;
    QueueState& q_;
    std::mutex mutex_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::atomic<uint64_t> submitted_{0};
    std::deque<Batch> in_flight_;
    std::vector<VkCommandBuffer> free_;
    // The open batch.
    VkCommandBuffer open_cb_ = VK_NULL_HANDLE;
    uint32_t open_ops_ = 0, open_records_ = 0;
    std::vector<VkCommandBuffer> app_cbs_;  // what it holds, for the fallback
    uint32_t open_lazy_ = 0;                // of which lazily recorded (no fallback for those)
    // Barrier narrowing: the queue ran work outside the narrowed stages since the last whole
    // ALL_COMMANDS barrier (so the next one stays whole); the open batch narrowed a barrier.
    bool other_work_before_ = true;
    capture::BatchReplay replay_;
    bool narrowed_in_batch_ = false;
    std::vector<VkFence> fences_;
    std::atomic<bool> has_open_{false};
    std::atomic<uint64_t> opened_ns_{0};
    SyncPattern sync_;
    std::atomic<VkFence> latest_fence_{VK_NULL_HANDLE};
    std::atomic<uint64_t> submit_cost_ns_{20000};  // round trip; a guess until measured
    uint64_t probe_value_ = 0;                     // a submission made on an idle GPU ...
    uint64_t probe_start_ns_ = 0;                  // ... and when it was made
    VkResult pending_error_ = VK_SUCCESS;
    VkResult lost_ = VK_SUCCESS;
};

}  // namespace slipstream::submit
