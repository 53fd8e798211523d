// Knowing when a queue is idle without asking the driver to block.
//
// A submission that carries an application fence is followed through that fence: once it
// signals, everything submitted to the queue before it has completed. A submission without
// one costs nothing at submit time (on NVIDIA a fence on a submit costs ~5 us of CPU); the
// queue is then merely "busy", and an idle wait on it first submits an empty batch with a
// fence of Slipstream's (the spec: it signals once all work submitted earlier has completed),
// then polls that fence before blocking. The empty submission overlaps the GPU work the wait
// is for anyway.
//
// An application fence is only polled while it is still the queue's latest and the
// application has not reset, destroyed or re-imported it: those calls drop it from tracking
// under the same lock, so a poll never touches a fence the application let go of.
#pragma once

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
};

class IdleTracker {
public:
    // Bounds the fences of ours that one queue may have in flight at once.
    static constexpr size_t kMaxOwnFences = 256;

    IdleTracker(VkDevice device, const VkLayerDispatchTable& dispatch) : device_(device), d_(dispatch) {}
    ~IdleTracker() = default;
    IdleTracker(const IdleTracker&) = delete;
    IdleTracker& operator=(const IdleTracker&) = delete;

    // After the application's submission (app_fence may be null).
    void after_submit(QueueIdle& q, VkFence app_fence, VkResult result);
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
    std::mutex mutex_;  // guards every QueueIdle of the device and app_fences_
    std::unordered_map<VkFence, QueueIdle*> app_fences_;  // app fence -> queue it is latest on
};

}  // namespace slipstream
