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
}  // namespace

VkResult create_semaphore(DeviceState& d, const VkSemaphoreCreateInfo* info, const VkAllocationCallbacks* allocator,
                          VkSemaphore* semaphore) {
    TimelinePool* pool = d.timeline_pool.get();
    uint64_t initial = 0;
    const bool plain = pool && TimelinePool::plain(*info, allocator, &initial);
    if (plain) {
        uint64_t offset = 0;
        if (VkSemaphore pooled = take_pooled(d, *pool, initial, &offset)) {
            *semaphore = pooled;
            pool->created(pooled, offset);
            d.stats.add(Counter::TimelinesPooled);
            return VK_SUCCESS;
        }
        d.stats.add(Counter::TimelinesPoolMisses);
    }
    const VkResult r = d.dispatch.CreateSemaphore(d.device, info, allocator, semaphore);
    if (r == VK_SUCCESS && plain) pool->created(*semaphore, 0);
    return r;
}

void destroy_semaphore(DeviceState& d, VkSemaphore semaphore, const VkAllocationCallbacks* allocator) {
    // Fusion holds no submission that names an application semaphore (those pass through after
    // a flush), but this keeps the same order as every other destroy.
    if (semaphore) submit::flush_before_destroy(d);
    TimelinePool* pool = d.timeline_pool.get();
    if (semaphore && pool && !allocator && pool->wants(semaphore)) {
        // Valid usage: nothing pending names it any more, so its counter stays where it is.
        PFN_vkGetSemaphoreCounterValue get = counter_fn(d);
        uint64_t counter = 0;
        if (get && get(d.device, semaphore, &counter) == VK_SUCCESS && pool->keep(semaphore, counter)) {
            d.stats.add(Counter::TimelinesKept);
            return;
        }
    }
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
    return timeline_wait_to_driver(d.timeline_pool->offsets(), info, storage, copies);
}

VkSemaphoreSignalInfo signal_to_driver(DeviceState& d, const VkSemaphoreSignalInfo& info) {
    if (!d.timeline_pool) return info;
    return timeline_signal_to_driver(d.timeline_pool->offsets(), info);
}

void counter_to_app(DeviceState& d, VkSemaphore semaphore, uint64_t* value) {
    if (!d.timeline_pool || !d.timeline_pool->offsets().any()) return;
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
