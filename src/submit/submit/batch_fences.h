// The application's fences whose work went into a fused batch that did not carry them.
//
// One vkQueueSubmit signals one fence, and on NVIDIA every submission costs the GPU ~11-16 us
// however empty it is, so an empty submission per fence (the Khronos timeline layer's way)
// would cost what fusion saves for applications that fence every submission. A batch
// therefore carries only the last of its fences to the driver; each earlier one is answered
// from the queue's timeline semaphore (signaled once the batch that holds its work completes):
// waits and status queries on it read or wait for that value, and the driver's fence stays
// unsignaled, which nobody can observe without going through the layer (a reset, destroy or
// import forgets the mapping). Where the driver's own fence is needed (export, a wait mixing
// such fences with others), it is made real first: an empty submission with it, after
// everything already submitted. Exportable fences are never answered this way (FUSION.md rule
// 2): they ride on an empty submission of their own.
//
// A batch that never reached the GPU (the driver refused it, or the device was lost) leaves its
// fences failed: waits and status queries on them return the batch's error, without waiting,
// until the application resets, destroys or imports them. Nothing else might ever signal them
// (the empty submission that would can fail too), and a wait that succeeded would tell the
// application its work was done.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream::submit {

class QueueFusion;

struct PendingFence {
    VkFence fence = VK_NULL_HANDLE;
    QueueFusion* queue = nullptr;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t value = 0;  // signaled once the fence's work completed
    // The highest value any read of `timeline` returned (QueueTimeline::completed_seen_counter), where
    // the layer keeps one: at or above `value`, the fence is known signaled. Null for an armed
    // replay's fences (answered from a semaphore of the replay's own).
    const std::atomic<uint64_t>* seen = nullptr;
};

class BatchFences {
public:
    // vkCreateFence: an exportable fence is never answered from a timeline.
    void fence_created(VkFence fence, const VkFenceCreateInfo& info);
    // One atomic load while the device has no exportable fence (every fused submit asks).
    bool exportable(VkFence fence);
    // Whether the device made any exportable fence (one atomic load).
    bool exportable_any() const { return exportable_count_.load(std::memory_order_acquire) != 0; }
    // A batch that signals `value` on `timeline` holds this fence's work.
    void answer_later(const PendingFence& pending);
    // The same for `count` fences of one batch, under one lock (the flusher's contention with
    // waits and resets on the application's threads stays one acquisition per batch).
    // `answer` holds what they share (its `fence` is not read).
    void answer_later(const VkFence* fences, size_t count, const PendingFence& answer);
    // Nothing is answered from a timeline: one atomic load.
    bool none() const { return count_.load(std::memory_order_acquire) == 0; }
    bool find(VkFence fence, PendingFence* out);
    // Whether these fences (all of them, or any: `wait_all`) are answered from a timeline that
    // was already seen past their values (PendingFence::seen): signaled, known without
    // a driver call or a queue's lock. False where any is not answered so (ask on).
    bool seen_done(uint32_t count, const VkFence* fences, bool wait_all);
    // Forgets these fences (reset, destroy, import); `destroyed` also forgets exportability.
    void forget(uint32_t count, const VkFence* fences, bool destroyed = false);
    // Removes these fences' entries and returns them (to be made real).
    std::vector<PendingFence> take(uint32_t count, const VkFence* fences);
    // The batch holding this fence's work failed with `error`.
    void fail(VkFence fence, VkResult error);
    // The error of the first failed fence among these, or VK_SUCCESS: one atomic load while no
    // fence failed.
    VkResult failure(uint32_t count, const VkFence* fences);

private:
    std::mutex mutex_;
    std::unordered_map<VkFence, PendingFence> pending_;
    std::unordered_set<VkFence> exportable_;
    std::unordered_map<VkFence, VkResult> failed_;
    std::atomic<size_t> count_{0};
    std::atomic<size_t> failed_count_{0};
    std::atomic<size_t> exportable_count_{0};
};

}  // namespace slipstream::submit
