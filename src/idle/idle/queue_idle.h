// Knowing when a queue is idle, and when a fence is signaled, without asking the driver to
// block.
//
// A submission that carries an application fence is followed through that fence: once it
// signals, everything submitted to the queue before it has completed. A submission without
// one either gets a fence of Slipstream's attached, or leaves the queue merely "busy", and an
// idle wait on a busy queue first submits an empty batch with a fence of ours (the spec: it
// signals once all work submitted earlier has completed), then polls that fence.
// Which of the two is a per-queue choice learnt from the application: a fence on every submit
// cost ~5 us of CPU through this tracker on NVIDIA when measured (the driver's own part, with
// batched resets, is ~0.3 us: slipstream-completion-cost), the empty fenced batch at wait time
// ~6 us on the wait's critical path. A queue whose idle waits follow about every submission (Halide's runtime:
// submit, vkQueueWaitIdle) gets fences at submit; one with many submissions per wait
// (back-to-back launches) gets them only when a wait comes.
//
// Locks. Each queue's QueueIdle has its own mutex, so a waiter polling one queue never holds
// up submissions to another. The application fences (which queue each is the latest
// submission of, whether it is known to be signaled) are behind one short lock of the
// tracker's, under which no driver call is made; it may be taken while a queue's is held,
// never the other way round. Driver calls under a queue's lock are single, short ones
// (vkGetFenceStatus of an application fence, which the application may destroy from another
// thread the moment the layer lets go of it; the empty submit of an idle wait, on a queue the
// application may not use meanwhile); Slipstream's own fences are polled with no lock held.
//
// An application fence is registered as its queue's latest before the driver's submit is
// called (and unregistered if the submit fails), so another thread that waits on it, resets
// it and submits it elsewhere in the meantime cannot leave the queue pointing at the wrong
// submission. What a wait learns (a fence signaled) is only applied when no reset, import or
// export of a fence ran on the device meanwhile, and only to the queue submission it was
// registered with (a serial number): a fence reset and resubmitted between the driver's
// answer and the layer's bookkeeping is never taken for the new submission's completion.
//
// Applications that break the rules: a fence submitted while still pending, or while signaled
// (created signaled, or signaled and never reset), says nothing reliable about the submission
// it rides on (a driver may signal it early, or leave it signaled). Every application fence is
// remembered from its submission until its reset or destruction, and such a submission makes
// its queue Unknown: idle waits go to the driver until one of them returns.
#pragma once

#include "core/stats.h"

#include <vulkan/vulkan.h>
#include <vulkan/vk_layer_dispatch_table.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace slipstream {

struct QueueState;

enum class QueueActivity {
    Idle,     // everything submitted so far has completed
    Pending,  // `last_fence` signals when it has
    Busy,     // work submitted without a fence the layer can poll
    Unknown,  // work the layer cannot follow (sparse binding, present, a failed submit)
};

struct QueueIdle {
    std::mutex mutex;  // guards everything below
    QueueActivity activity = QueueActivity::Idle;
    VkFence last_fence = VK_NULL_HANDLE;
    bool last_is_own = false;
    uint64_t last_serial = 0;          // changes with every fence that becomes the latest
    std::deque<VkFence> own_pending;   // our fences, in submission order
    std::vector<VkFence> own_signaled;  // completed: reset before reuse
    std::vector<VkFence> own_free;      // unsignaled, ready to attach
    // Fence-less submissions since the last idle wait, and their moving average per idle wait
    // (x16, weight 1/2): at most 2 per wait means fences go on at submit time.
    // The queue fuses: its timeline records what completed (submit/queue_timeline.h), and the
    // idle waits ask it, so no fence of ours is attached at submit.
    bool timeline_tracked = false;
    uint32_t fenceless_since_wait = 0;
    uint32_t fenceless_per_wait_x16 = 4 * 16;
    bool fence_at_submit() const { return !timeline_tracked && fenceless_per_wait_x16 <= 2 * 16; }
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

    // --- with q.mutex held ---
    // Before the driver's submit: the fence to submit with (the application's, or, when this
    // queue attaches fences at submit time, one of ours, or null), already registered as the
    // queue's latest.
    VkFence fence_for_submit(QueueIdle& q, VkFence app_fence);
    // After the driver's submit with `fence` (ours when it differs from `app_fence`): undoes
    // the registration if it failed.
    void after_submit(QueueIdle& q, VkFence app_fence, VkFence fence, VkResult result);
    // An idle wait is about to look at the queue: learn how many submissions it covers.
    void note_idle_wait(QueueIdle& q);
    // A Busy queue gets an empty submission with a fence of ours, and becomes Pending on it.
    // Returns false when that cannot be done (the caller lets the driver wait).
    bool fence_busy_queue(QueueIdle& q, VkQueue queue);
    // Work on the queue the layer cannot follow until the next successful driver wait.
    void mark_unknown(QueueIdle& q);
    // Everything submitted to the queue has completed (a driver wait returned, or the
    // latest fence signaled).
    void mark_idle(QueueIdle& q);
    // Destroys our fences of `q` (the device is idle: at vkDestroyDevice).
    void destroy_own_fences(QueueIdle& q);

    // --- without q.mutex held, from a wait on this queue (which the application keeps apart
    // from submissions to it) ---
    // One poll of the queue: its activity, or an error (device lost) in *error.
    QueueActivity poll(QueueIdle& q, VkResult* error);

    // --- application fences, any thread, no lock held ---
    // Read before asking the driver about fences; pass to app_fences_signaled.
    uint64_t fence_epoch() const { return resets_.load(std::memory_order_acquire); }
    // The driver said these fences are signaled (a wait or status query that began at
    // `epoch`): the queues they were the latest submission of are idle.
    void app_fences_signaled(uint32_t count, const VkFence* fences, uint64_t epoch);
    // vkCreateFence with VK_FENCE_CREATE_SIGNALED_BIT: submitting it before a reset is a misuse.
    void fence_created_signaled(VkFence fence);
    // A payload was imported into the fence (it may be signaled): the same until its reset.
    void fence_payload_imported(VkFence fence) { fence_created_signaled(fence); }
    // True when the layer knows, from earlier answers, that these fences are signaled: all of
    // them, or (wait_all false) at least one.
    bool known_signaled(uint32_t count, const VkFence* fences, bool wait_all);
    // The application is about to reset, destroy, import into or export with copy
    // transference from these fences: stop following them (first noting completion where a
    // tracked fence has signaled). Call end_fence_reset after the driver's call.
    void begin_fence_reset(uint32_t count, const VkFence* fences);
    void end_fence_reset(uint32_t count, const VkFence* fences);

private:
    struct AppFence {
        QueueIdle* latest_on = nullptr;  // the queue this fence is the latest submission of
        uint64_t serial = 0;             // ... and which submission (QueueIdle::last_serial)
        bool signaled = false;           // known signaled since its last submission
        bool submitted = false;          // submitted (or created signaled) since its last reset
    };


    VkFence acquire_own_fence(QueueIdle& q);
    void collect_signaled(QueueIdle& q);
    void forget_last_fence(QueueIdle& q, bool signaled);

    VkDevice device_;
    const VkLayerDispatchTable& d_;
    DeviceStats* stats_;
    std::mutex fences_mutex_;  // guards app_fences_; no driver call under it
    std::unordered_map<VkFence, AppFence> app_fences_;
    std::atomic<uint64_t> serial_{0};
    std::atomic<uint64_t> resets_{0};  // fence resets (and the like) ended on this device
};

// Wraps one submission so the queue's idleness stays known: fence() is what to submit with
// (the application's fence, or one of ours on queues that attach fences at submit time).
class TrackedSubmission {
public:
    TrackedSubmission(QueueState* q, VkFence app_fence);
    VkFence fence() const { return fence_; }
    // The application's fence is followed by the idle tracker as this submission's own: it
    // was reset (or created unsignaled) since its last submission, and no payload was imported
    // into it since, so it signals only once this submission completes.
    bool fence_trusted() const { return trusted_; }
    void end(VkResult result);

private:
    QueueState* q_;
    VkFence app_fence_, fence_;
    bool trusted_ = false;
};

}  // namespace slipstream
