#include "objects/pooled_fences.h"

#include "objects/fence_pool.h"
#include "submit/fusion.h"
#include "idle/queue_idle.h"
#include "waits/waits.h"

namespace slipstream::objects {

namespace {
// Quarantined fences looked at per request that found nothing else: a status query each,
// nanoseconds against the driver's create.
constexpr size_t kQuarantineChecks = 4;

VkFence take_pooled(DeviceState& d, FencePool& pool, bool signaled) {
    for (int round = 0; round < 2; ++round) {
        const FencePool::Grant g = pool.take(signaled);
        if (g.fence) {
            if (!g.reset || d.dispatch.ResetFences(d.device, 1, &g.fence) == VK_SUCCESS) return g.fence;
            // A reset that fails (out of memory, device lost) leaves the fence's state unknown.
            d.dispatch.DestroyFence(d.device, g.fence, nullptr);
            return VK_NULL_HANDLE;
        }
        if (round == 1) break;
        // Fences quarantined earlier whose work has completed since become reusable.
        const std::vector<VkFence> check = pool.take_quarantined(kQuarantineChecks);
        if (check.empty()) break;
        for (VkFence f : check) pool.checked(f, d.dispatch.GetFenceStatus(d.device, f) == VK_SUCCESS);
    }
    return VK_NULL_HANDLE;
}
}  // namespace

VkResult create_fence(DeviceState& d, const VkFenceCreateInfo* info, const VkAllocationCallbacks* allocator,
                      VkFence* fence) {
    FencePool* pool = d.fence_pool.get();
    const bool plain = pool && FencePool::plain(*info, allocator);
    VkResult r = VK_SUCCESS;
    VkFence pooled = plain ? take_pooled(d, *pool, info->flags & VK_FENCE_CREATE_SIGNALED_BIT) : VK_NULL_HANDLE;
    if (pooled) {
        *fence = pooled;
        d.stats.add(Counter::FencesPooled);
    } else {
        if (plain) d.stats.add(Counter::FencesPoolMisses);
        r = d.dispatch.CreateFence(d.device, info, allocator, fence);
    }
    if (r != VK_SUCCESS) return r;
    if (plain) pool->created(*fence);
    // What the layer notes of every new fence, pooled or not.
    if (d.fusion) d.fusion->fences().fence_created(*fence, *info);
    if (d.idle && (info->flags & VK_FENCE_CREATE_SIGNALED_BIT)) d.idle->fence_created_signaled(*fence);
    return r;
}

void destroy_fence(DeviceState& d, VkFence fence, const VkAllocationCallbacks* allocator) {
    if (fence) submit::flush_before_destroy(d);  // a held batch may carry it
    // Answered from a fused batch's timeline (submit/batch_fences.h): the driver's fence was
    // never submitted since its last reset, so it is simply unsignaled.
    bool answered = false;
    if (fence && d.fence_pool && d.fusion && !d.fusion->fences().none()) {
        submit::PendingFence p;
        answered = d.fusion->fences().find(fence, &p);
    }
    {
        // Every map of the layer forgets the handle before it can be handed out again.
        FenceReset reset(d, fence ? 1 : 0, &fence, true);
    }
    uint64_t created_at = 0;
    if (fence && d.fence_pool && !allocator && d.fence_pool->wants(fence, &created_at)) {
        const VkResult s = d.dispatch.GetFenceStatus(d.device, fence);
        const FenceAtDestroy state = s == VK_SUCCESS      ? FenceAtDestroy::Signaled
                                     : s == VK_NOT_READY ? d.fence_pool->unsignaled_state(created_at, answered)
                                                         : FenceAtDestroy::Failed;
        const FenceKept kept = d.fence_pool->keep(fence, state);
        if (kept != FenceKept::No) {
            d.stats.add(Counter::FencesKept);
            if (kept == FenceKept::Quarantined) d.stats.add(Counter::FencesQuarantined);
            return;
        }
    }
    d.dispatch.DestroyFence(d.device, fence, allocator);
}

void note_fence_given(DeviceState& d, VkFence fence) {
    if (d.fence_pool && fence) d.fence_pool->note_fence_given();
}

void fence_shared(DeviceState& d, VkFence fence) {
    if (d.fence_pool && fence) d.fence_pool->not_poolable(fence);
}

void destroy_pooled_fences(DeviceState& d) {
    if (!d.fence_pool) return;
    for (VkFence f : d.fence_pool->drain()) d.dispatch.DestroyFence(d.device, f, nullptr);
}

}  // namespace slipstream::objects
