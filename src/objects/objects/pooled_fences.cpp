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

// A followed fence at its destroy: kept in the pool (true) or left to the caller to destroy
// (`*probe`: to time the driver's destroy, PoolCost::probe).
bool keep_destroyed(DeviceState& d, FencePool& pool, VkFence fence, bool answered, bool* probe) {
    CostTimer timer(&pool.cost(), CostSite::PoolDestroy);
    uint64_t created_at = 0;
    bool not_worth = false;
    if (!pool.wants(fence, &created_at, &not_worth) || (*probe = pool.cost().probe(CostSite::DriverDestroy))) {
        timer.cancel();
        if (not_worth) d.stats.add(Counter::FencesPoolNotWorth);
        return false;
    }
    const VkResult s = d.dispatch.GetFenceStatus(d.device, fence);
    const FenceAtDestroy state = s == VK_SUCCESS      ? FenceAtDestroy::Signaled
                                 : s == VK_NOT_READY ? pool.unsignaled_state(created_at, answered)
                                                     : FenceAtDestroy::Failed;
    const FenceKept kept = pool.keep(fence, state);
    if (kept == FenceKept::No) {
        timer.cancel();
        return false;
    }
    d.stats.add(Counter::FencesKept);
    if (kept == FenceKept::Quarantined) d.stats.add(Counter::FencesQuarantined);
    return true;
}
}  // namespace

VkResult create_fence(DeviceState& d, const VkFenceCreateInfo* info, const VkAllocationCallbacks* allocator,
                      VkFence* fence) {
    FencePool* pool = d.fence_pool.get();
    PoolCost* cost = pool && FencePool::plain(*info, allocator) ? &pool->cost() : nullptr;
    const Pooling how = pooling(cost);
    if (how == Pooling::NotWorth) {
        // The driver is cheaper: plain creates go to it unfollowed (no lock).
        d.stats.add(Counter::FencesPoolNotWorth);
        if (pool->following()) pool->forget_live();
    }
    VkFence pooled = VK_NULL_HANDLE;
    if (how == Pooling::Pool) {
        CostTimer timer(cost, CostSite::PoolCreate);
        pooled = take_pooled(d, *pool, info->flags & VK_FENCE_CREATE_SIGNALED_BIT);
        if (pooled) pool->created(pooled);
        else timer.cancel();
        d.stats.add(pooled ? Counter::FencesPooled : Counter::FencesPoolMisses);
    }
    if (pooled) {
        *fence = pooled;
    } else {
        const VkResult r =
            driver_create(cost, how, fence, [&] { return d.dispatch.CreateFence(d.device, info, allocator, fence); });
        if (r != VK_SUCCESS) return r;
        if (follows(how)) pool->created(*fence);
    }
    // What the layer notes of every new fence, pooled or not.
    if (d.fusion) d.fusion->fences().fence_created(*fence, *info);
    if (d.idle && (info->flags & VK_FENCE_CREATE_SIGNALED_BIT)) d.idle->fence_created_signaled(*fence);
    return VK_SUCCESS;
}

void destroy_fence(DeviceState& d, VkFence fence, const VkAllocationCallbacks* allocator) {
    if (fence) submit::flush_before_destroy(d);  // a held batch may carry it
    FencePool* pool = fence && !allocator ? d.fence_pool.get() : nullptr;
    const bool followed = pool && pool->following();
    // Answered from a fused batch's timeline (submit/batch_fences.h): the driver's fence was
    // never submitted since its last reset, so it is simply unsignaled.
    bool answered = false;
    if (followed && d.fusion && !d.fusion->fences().none()) {
        submit::PendingFence p;
        answered = d.fusion->fences().find(fence, &p);
    }
    {
        // Every map of the layer forgets the handle before it can be handed out again.
        FenceReset reset(d, fence ? 1 : 0, &fence, true);
    }
    bool probe = false;
    if (followed && keep_destroyed(d, *pool, fence, answered, &probe)) return;
    // Timed where its create was (pool_cost.h: a destroy and a create make the pair) or as a probe.
    CostTimer timer(pool ? &pool->cost() : nullptr, CostSite::DriverDestroy,
                    probe || (pool && pool->cost().watched(handle_bits(fence))));
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
