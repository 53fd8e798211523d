#include "submit/followed_fence.h"

#include "core/cpu_relax.h"
#include "state/object_state.h"

namespace slipstream::submit {

void FollowedFence::start(VkFence fence, VkCommandBuffer cb) {
    cb_ = cb;
    generation_.fetch_add(1, std::memory_order_release);
    fence_.store(fence, std::memory_order_release);
    d_.stats.add(Counter::SubmitsFollowedByFence);
    d_.stats.add(Counter::DriverSubmits);
}

VkCommandBuffer FollowedFence::end() {
    VkFence fence = fence_.load(std::memory_order_acquire);
    if (fence) fence_.compare_exchange_strong(fence, VK_NULL_HANDLE);
    const VkCommandBuffer cb = cb_;
    cb_ = VK_NULL_HANDLE;
    return cb;
}

void FollowedFence::drop() {
    cb_ = VK_NULL_HANDLE;
    fence_.store(VK_NULL_HANDLE);  // (no look of ours runs: they hold the queue lock)
}

bool FollowedFence::still_running() {
    // The application may destroy or reset the fence on another thread once its work is done:
    // whoever stops following it waits until no look of ours at it is under way (stop), and a
    // reset that came first is seen as the fence no longer followed.
    querying_.store(true);
    const VkFence fence = fence_.load();
    const VkResult r = fence ? d_.dispatch.GetFenceStatus(d_.device, fence) : VK_SUCCESS;
    querying_.store(false);
    if (r == VK_NOT_READY && follows(fence)) return true;
    if (fence) watch_device_loss(d_, r);  // (a lost device completes nothing more: nothing to follow)
    return false;
}

void FollowedFence::stop(VkFence fence) {
    VkFence expected = fence;
    if (!fence || !fence_.compare_exchange_strong(expected, VK_NULL_HANDLE)) return;
    while (querying_.load()) cpu_relax();  // one driver call at most
}

}  // namespace slipstream::submit
