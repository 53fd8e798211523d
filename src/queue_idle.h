// Knowing when a queue is idle without asking the driver to block.
//
// A submission that carries an application fence is followed through that fence: once it
// signals, everything submitted to the queue before it has completed. A submission without
// one either gets a fence of Slipstream's attached, or leaves the queue merely "busy", and an
// idle wait on a busy queue first submits an empty batch with a fence of ours (the spec: it
// signals once all work submitted earlier has completed), then polls that fence.
// Which of the two is a per-queue choice learnt from the application: a fence on a submit
// costs ~5 us of CPU on NVIDIA, the empty fenced batch at wait time ~6 us on the wait's
// critical path. A queue whose idle waits follow about every submission (Halide's runtime:
// submit, vkQueueWaitIdle) gets fences at submit; one with many submissions per wait
// (back-to-back launches) gets them only when a wait comes.
//
// An application fence is only polled while it is still the queue's latest and the
// application has not reset, destroyed or re-imported it: those calls drop it from tracking
// under the same lock, so a poll never touches a fence the application let go of.
#pragma once

#include "stats.h"

#include <vulkan/vulkan.h>
#include <vulkan/vk_layer_dispatch_table.h>

#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace slipstream {

enum class QueueActivity {
    Idle,     // everything submitted so far has completed
    Pending,  // `last_fence` signals when it has
    Busy,     // work submitted without a fence the layer can poll
    Unknown,  // work the layer cannot follow (sparse binding, present, a failed submit)
};

struct QueueIdle {
    QueueActivity activity = QueueActivity::Idle;
    VkFence last_fence = VK_NULL_HANDLE;
    bool last_is_own = false;
    std::deque<VkFence> own_pending;   // our fences, in submission order
    std::vector<VkFence> own_signaled;  // completed: reset before reuse
    std::vector<VkFence> own_free;      // unsignaled, ready to attach
    // Fence-less submissions since the last idle wait, and their moving average per idle wait
    // (x16, weight 1/2): at most 2 per wait means fences go on at submit time.
    uint32_t fenceless_since_wait = 0;
    uint32_t fenceless_per_wait_x16 = 4 * 16;
    bool fence_at_submit() const { return fenceless_per_wait_x16 <= 2 * 16; }
};

class IdleTracker {
public:
    // Bounds the fences of ours that one queue may have in flight at once.
    static constexpr size_t kMaxOwnFences = 256;

    // `stats` (may be null) counts the fences this tracker creates and destroys.
    IdleTracker(VkDevice device, const VkLayerDispatchTable& dispatch, DeviceStats* stats = nullptr)
        : device_(device), d_(dispatch), stats_(stats) {}
    ~IdleTracker() = default;
    IdleTracker(const IdleTracker&) = delete;
    IdleTracker& operator=(const IdleTracker&) = delete;

    // The fence to submit with: the application's, or (when this queue attaches fences at
    // submit time) one of ours, or null.
    VkFence fence_for_submit(QueueIdle& q, VkFence app_fence);
    // After the submission, with the fence it carried (`fence` is ours when it differs from
    // `app_fence`).
    void after_submit(QueueIdle& q, VkFence app_fence, VkFence fence, VkResult result);
    // An idle wait is about to look at the queue: learn how many submissions it covers.
    void note_idle_wait(QueueIdle& q);
    // A Busy queue gets an empty submission with a fence of ours, and becomes Pending on it.
    // Returns false when that cannot be done (the caller lets the driver wait).
    bool fence_busy_queue(QueueIdle& q, VkQueue queue);
    // Work on the queue the layer cannot follow until the next successful driver wait.
    void mark_unknown(QueueIdle& q);
    // After the driver's own wait for the queue returned successfully.
    void mark_idle(QueueIdle& q);

    // One poll of the queue: its activity, or an error (device lost) in *error.
    QueueActivity poll(QueueIdle& q, VkResult* error);

    // The application resets, destroys or imports into these fences: stop tracking them
    // (first noting completion where a tracked fence has signaled).
    void release_app_fences(uint32_t count, const VkFence* fences);
    // The application saw these fences signaled (a successful wait).
    void app_fences_signaled(uint32_t count, const VkFence* fences);

    // Destroys our fences of `q` (the device is idle: at vkDestroyDevice).
    void destroy_own_fences(QueueIdle& q);

    std::mutex& mutex() { return mutex_; }

private:
    VkFence acquire_own_fence(QueueIdle& q);
    void collect_signaled(QueueIdle& q);
    void forget_app_fence(QueueIdle& q);

    VkDevice device_;
    const VkLayerDispatchTable& d_;
    DeviceStats* stats_;
    std::mutex mutex_;  // guards every QueueIdle of the device and app_fences_
    std::unordered_map<VkFence, QueueIdle*> app_fences_;  // app fence -> queue it is latest on
};

}  // namespace slipstream
