// The latency path's way to know a submission completed without a timeline signal: a
// submission to a queue in latency mode with nothing of ours running, whose only fence is a
// plain one of the application's, signals no timeline (on the H200 the signal cost ~0.3 us of
// CPU in vkQueueSubmit and ~0.7 us more before the fence was seen signaled,
// slipstream-overhead's latency_cb): it is followed through that fence. Its completion is
// known when the driver says the fence signaled (the application's waits and status queries,
// or a look of ours under the queue lock), when the application resets, destroys or imports
// the fence, or when the driver's idle wait returns.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>

namespace slipstream {
struct DeviceState;
}

namespace slipstream::submit {

class FollowedFence {
public:
    explicit FollowedFence(DeviceState& device) : d_(device) {}

    // --- any thread, no lock ---
    // Whether a submission is followed through `fence`.
    bool follows(VkFence fence) const { return fence && fence_.load(std::memory_order_acquire) == fence; }
    // Whether any submission is followed.
    bool any() const { return fence_.load(std::memory_order_acquire) != VK_NULL_HANDLE; }
    // The number of the newest follow (each start() counts one): with `fence`, it names one
    // followed submission, which may still run only while follows_now() says so.
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
    bool follows_now(VkFence fence, uint64_t generation) const {
        return follows(fence) && generation_.load(std::memory_order_acquire) == generation;
    }
    // Stops following `fence` if it is followed, once no look at it is under way.
    void stop(VkFence fence);

    // --- with the queue lock held ---
    // Starts following a submission just made with `fence` (`cb`: ours it runs, or null).
    void start(VkFence fence, VkCommandBuffer cb);
    // Nothing and no command buffer of ours is followed.
    bool idle() const { return !cb_ && !any(); }
    // Whether the followed submission may still run: asks the driver while the fence is not
    // known signaled. False: it is done (end() it).
    bool still_running();
    // Nothing is followed any more; returns our command buffer it ran (free again), or null.
    VkCommandBuffer end();
    // Our command buffer the followed submission runs, or null.
    VkCommandBuffer command_buffer() const { return cb_; }
    // Follows nothing any more, and forgets the command buffer (the caller took it over).
    void drop();

private:
    DeviceState& d_;
    std::atomic<VkFence> fence_{VK_NULL_HANDLE};  // the fence a submission is followed by
    VkCommandBuffer cb_ = VK_NULL_HANDLE;         // ... and our command buffer it runs
    std::atomic<bool> querying_{false};           // still_running() is asking the driver
    std::atomic<uint64_t> generation_{0};         // follows started
};

}  // namespace slipstream::submit
