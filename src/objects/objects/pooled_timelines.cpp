#include "objects/pooled_timelines.h"

#include "core/log.h"
#include "submit/fusion.h"

namespace slipstream::objects {

namespace {
// The core command where the device has it, else the extension's (a 1.1 application with
// VK_KHR_timeline_semaphore); null where the device has neither.
PFN_vkGetSemaphoreCounterValue counter_fn(DeviceState& d) {
    return d.dispatch.GetSemaphoreCounterValue ? d.dispatch.GetSemaphoreCounterValue
                                               : d.dispatch.GetSemaphoreCounterValueKHR;
}
PFN_vkSignalSemaphore signal_fn(DeviceState& d) {
    return d.dispatch.SignalSemaphore ? d.dispatch.SignalSemaphore : d.dispatch.SignalSemaphoreKHR;
}

// A pooled semaphore for a request with this initial value, made ready (its offset in
// `*offset`), or null.
VkSemaphore take_pooled(DeviceState& d, TimelinePool& pool, uint64_t initial, uint64_t* offset) {
    PFN_vkGetSemaphoreCounterValue get = counter_fn(d);
    PFN_vkSignalSemaphore signal = signal_fn(d);
    if (!get || !signal) return VK_NULL_HANDLE;
    for (int round = 0; round < 2; ++round) {
        const TimelinePool::Grant g = pool.take(initial);
        if (!g.semaphore) return VK_NULL_HANDLE;
        // A counter that moved since the destroy had work pending then (invalid, but it
        // happens): more may come, which would move the application's values. Not reused.
        uint64_t now = 0;
        bool ready = get(d.device, g.semaphore, &now) == VK_SUCCESS && now == g.counter;
        if (ready && g.reuse.signal_to) {
            VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
            info.semaphore = g.semaphore;
            info.value = g.reuse.signal_to;
            ready = signal(d.device, &info) == VK_SUCCESS;
        }
        if (ready) {
            *offset = g.reuse.offset;
            return g.semaphore;
        }
        d.dispatch.DestroySemaphore(d.device, g.semaphore, nullptr);
    }
    return VK_NULL_HANDLE;
}

// A semaphore at its destroy: kept in the pool (true) or left to the caller to destroy
// (`*probe`: to time the driver's destroy, PoolCost::probe).
bool keep_destroyed(DeviceState& d, TimelinePool& pool, VkSemaphore semaphore, bool* probe) {
    CostTimer timer(pool.following() ? &pool.cost() : nullptr, CostSite::PoolDestroy);
    bool not_worth = false;
    if (!pool.wants(semaphore, &not_worth) || (*probe = pool.cost().probe(CostSite::DriverDestroy))) {
        timer.cancel();
        if (not_worth) d.stats.add(Counter::TimelinesPoolNotWorth);
        return false;
    }
    // Valid usage: nothing pending names it any more, so its counter stays where it is.
    PFN_vkGetSemaphoreCounterValue get = counter_fn(d);
    uint64_t counter = 0;
    if (get && get(d.device, semaphore, &counter) == VK_SUCCESS && pool.keep(semaphore, counter)) {
        d.stats.add(Counter::TimelinesKept);
        return true;
    }
    timer.cancel();
    return false;
}
}  // namespace

VkResult create_semaphore(DeviceState& d, const VkSemaphoreCreateInfo* info, const VkAllocationCallbacks* allocator,
                          VkSemaphore* semaphore) {
    TimelinePool* pool = d.timeline_pool.get();
    uint64_t initial = 0;
    PoolCost* cost = pool && TimelinePool::plain(*info, allocator, &initial) ? &pool->cost() : nullptr;
    const Pooling how = pooling(cost);
    if (how == Pooling::NotWorth) {
        // The driver is cheaper: plain creates go to it unfollowed (no lock, no offset to translate).
        d.stats.add(Counter::TimelinesPoolNotWorth);
        if (pool->following()) pool->forget_live();
    }
    if (how == Pooling::Pool) {
        CostTimer timer(cost, CostSite::PoolCreate);
        uint64_t offset = 0;
        if (VkSemaphore pooled = take_pooled(d, *pool, initial, &offset)) {
            *semaphore = pooled;
            pool->created(pooled, offset);
            timer.stop();
            cost->handed_out();
            d.stats.add(Counter::TimelinesPooled);
            return VK_SUCCESS;
        }
        timer.cancel();
        d.stats.add(Counter::TimelinesPoolMisses);
    }
    const VkResult r = driver_create(cost, how, semaphore,
                                     [&] { return d.dispatch.CreateSemaphore(d.device, info, allocator, semaphore); });
    if (r == VK_SUCCESS && follows(how)) pool->created(*semaphore, 0);
    return r;
}

void destroy_semaphore(DeviceState& d, VkSemaphore semaphore, const VkAllocationCallbacks* allocator) {
    // A held batch may wait on or signal it (submit/semaphore_carry.h): what is held goes
    // first, as at every other destroy.
    if (semaphore) submit::flush_before_destroy(d);
    TimelinePool* pool = semaphore && !allocator ? d.timeline_pool.get() : nullptr;
    // Nothing followed and no offset alive (as where pooling does not pay): nothing to forget.
    bool probe = false;
    if (pool && (pool->following() || pool->offsets().any()) && keep_destroyed(d, *pool, semaphore, &probe)) return;
    CostTimer timer(pool ? &pool->cost() : nullptr, CostSite::DriverDestroy,
                    probe || (pool && pool->cost().watched(handle_bits(semaphore))));
    d.dispatch.DestroySemaphore(d.device, semaphore, allocator);
}

void semaphore_shared(DeviceState& d, VkSemaphore semaphore, bool imported) {
    if (!d.timeline_pool || !semaphore) return;
    if (imported) d.timeline_pool->payload_imported(semaphore);
    else d.timeline_pool->not_poolable(semaphore);
}

void destroy_pooled_timelines(DeviceState& d) {
    if (!d.timeline_pool) return;
    for (VkSemaphore s : d.timeline_pool->drain()) d.dispatch.DestroySemaphore(d.device, s, nullptr);
}

const VkSemaphoreWaitInfo* wait_to_driver(DeviceState& d, const VkSemaphoreWaitInfo* info, VkSemaphoreWaitInfo& storage,
                                          TimelineCopies& copies) {
    if (!d.timeline_pool || !d.timeline_pool->offsets().any()) return info;
    CostTimer timer(&d.timeline_pool->cost(), CostSite::PoolUse);
    return timeline_wait_to_driver(d.timeline_pool->offsets(), info, storage, copies);
}

VkSemaphoreSignalInfo signal_to_driver(DeviceState& d, const VkSemaphoreSignalInfo& info) {
    if (!d.timeline_pool || !d.timeline_pool->offsets().any()) return info;
    CostTimer timer(&d.timeline_pool->cost(), CostSite::PoolUse);
    return timeline_signal_to_driver(d.timeline_pool->offsets(), info);
}

void counter_to_app(DeviceState& d, VkSemaphore semaphore, uint64_t* value) {
    if (!d.timeline_pool || !d.timeline_pool->offsets().any()) return;
    CostTimer timer(&d.timeline_pool->cost(), CostSite::PoolUse);
    *value = timeline_to_app(*value, d.timeline_pool->offsets().find(semaphore));
}

void note_untranslated(DeviceState& d) {
    if (d.timeline_pool && d.timeline_pool->first_untranslated())
        log(LogLevel::Warn,
            "a submission's pNext chain holds a structure unknown to Slipstream before its timeline values: "
            "they went to the driver untranslated (a pooled timeline semaphore may see wrong values; "
            "VK_SLIPSTREAM_OBJECT_POOL=off avoids it)");
}

}  // namespace slipstream::objects
