#include "waits/settled_error.h"

#include "submit/fusion.h"

#include <mutex>
#include <vector>

namespace slipstream {

// An empty fenced submission on each fusing queue, waited for at most kSettleNs under every
// queue's lock (as the application's own idle waits block): a bound, since a wait a batch
// carried may need a signal only the application gives after this call returns.
VkResult settled(DeviceState& d, VkResult e) {
    if (e >= 0 || e == VK_ERROR_DEVICE_LOST || !d.fusion || d.lost.load(std::memory_order_acquire)) return e;
    constexpr uint64_t kSettleNs = 2'000'000'000;
    std::vector<QueueState*> queues;
    {
        std::lock_guard lock(d.mutex);
        queues = d.queues;
    }
    const submit::IdleWaitHold hold(d);
    std::vector<VkFence> fences;
    for (QueueState* q : queues) {
        if (!q->fusion) continue;
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence f = VK_NULL_HANDLE;
        if (d.dispatch.CreateFence(d.device, &fi, nullptr, &f) != VK_SUCCESS) continue;
        if (d.dispatch.QueueSubmit(q->queue, 0, nullptr, f) == VK_SUCCESS) fences.push_back(f);
        else d.dispatch.DestroyFence(d.device, f, nullptr);
    }
    // (Their own errors change nothing: `e` is the answer. Fences still pending after the bound
    // are left to the driver rather than destroyed in use.)
    const VkResult waited =
        fences.empty() ? VK_SUCCESS
                       : d.dispatch.WaitForFences(d.device, uint32_t(fences.size()), fences.data(), VK_TRUE, kSettleNs);
    if (waited == VK_SUCCESS)
        for (VkFence f : fences) d.dispatch.DestroyFence(d.device, f, nullptr);
    return e;
}

}  // namespace slipstream
