// What a fusing queue learnt of the application's waits: how it synchronizes (SyncPattern:
// latency mode), whether the driver saw the latest wait, and which fence the latest fusable
// submission carried. The flags are atomics, because waits on any thread set them with no lock
// held; the submission that reads them holds the queue lock.
#pragma once

#include "submit/flush_policy.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace slipstream::submit {

class WaitHistory {
public:
    // --- with the queue lock held ---
    // A fusable submission came (with this fence, or none): the wait noted since the one before
    // it, if any, is learnt first.
    void note_submission(VkFence fence) {
        waited_before_ = waited_.exchange(false, std::memory_order_relaxed);
        if (waited_before_) sync_.waited();
        after_wait_ = seen_done_.exchange(false, std::memory_order_relaxed);
        sync_.submitted();
        latest_fence_.store(fence, std::memory_order_relaxed);
    }
    // Work that no fusable submission noted reached the queue (a submission passed through):
    // a wait answered before it covers none of it, so the next batch is not "after a wait".
    void note_unwaited_work() {
        seen_done_.store(false, std::memory_order_relaxed);
        after_wait_ = false;
    }
    bool latency_mode() const { return sync_.latency_mode(); }
    // Whether the layers below Slipstream (the validation layer) saw every wait the application
    // made since its previous submission to the queue: none was made, or the driver answered
    // one (note_seen_done). An idle wait that Slipstream answered from the timeline is unseen
    // there, and a submission that went to the driver as the application made it, with no
    // barrier of ours in front, would look unsynchronized against the work before the wait.
    bool waits_seen_below() const { return !waited_before_ || after_wait_; }
    // The current submission came after a wait the driver answered done.
    bool after_wait() const { return after_wait_; }

    // --- any thread, no lock ---
    // The application waited for the latest submission (its fence, or the queue or device
    // idle): however often it polls, one wait per submission.
    void note_wait() { waited_.store(true, std::memory_order_relaxed); }
    // The driver answered that the fence of the latest submission signaled (the application's
    // vkGetFenceStatus or vkWaitForFences, or Slipstream's polls for the latter), so everything
    // the queue was given before is done.
    void note_seen_done() { seen_done_.store(true, std::memory_order_relaxed); }
    // Whether one of these fences is the one of the latest fusable submission.
    bool latest_fence_in(uint32_t count, const VkFence* fences) const {
        const VkFence latest = latest_fence_.load(std::memory_order_relaxed);
        if (!latest) return false;
        for (uint32_t i = 0; i < count; ++i)
            if (fences[i] == latest) return true;
        return false;
    }

private:
    SyncPattern sync_;
    std::atomic<bool> waited_{false};     // a wait since the latest fusable submission
    std::atomic<bool> seen_done_{false};  // ... that the driver answered done (note_seen_done)
    bool after_wait_ = false;             // the current submission came after such a wait
    bool waited_before_ = false;          // ... after a wait of any kind
    std::atomic<VkFence> latest_fence_{VK_NULL_HANDLE};
};

}  // namespace slipstream::submit
