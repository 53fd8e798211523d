// The driver side of the timeline semaphore pool (timeline_pool.h) and of its value
// translation (timeline_values.h): vkCreateSemaphore, vkDestroySemaphore, semaphore imports
// and exports, vkDestroyDevice, and every call that carries timeline values go through these.
// With VK_SLIPSTREAM_OBJECT_POOL off (DeviceState::timeline_pool null) each is one branch and
// the driver's call; with it on and no pooled semaphore alive with an offset (as where pooling
// does not pay), translations are one atomic load.
#pragma once

#include "state/object_state.h"
#include "objects/timeline_values.h"

namespace slipstream::objects {

// vkCreateSemaphore: a plain timeline semaphore served from the pool where one fits.
VkResult create_semaphore(DeviceState& d, const VkSemaphoreCreateInfo* info, const VkAllocationCallbacks* allocator,
                          VkSemaphore* semaphore);
// vkDestroySemaphore: a plain timeline semaphore kept where it may be.
void destroy_semaphore(DeviceState& d, VkSemaphore semaphore, const VkAllocationCallbacks* allocator);
// An export from the semaphore (`imported` false) or an import into it: it never comes back
// to the pool; an import also ends its translation (the payload is the imported one).
void semaphore_shared(DeviceState& d, VkSemaphore semaphore, bool imported);
// vkDestroyDevice (everything the application submitted has completed): the pooled ones go.
void destroy_pooled_timelines(DeviceState& d);
// A submission whose chain the layer could not translate (logged once per device).
void note_untranslated(DeviceState& d);

// The application's submissions, waits and signals with the driver's values (the application's
// pointer where nothing needs translating). `copies` must outlive the driver's call.
template <typename Info>
const Info* submits_to_driver(DeviceState& d, uint32_t count, const Info* submits, TimelineCopies& copies) {
    if (!d.timeline_pool || !d.timeline_pool->offsets().any()) return submits;
    // What translating costs is charged to pooling (pool_cost.h).
    CostTimer timer(&d.timeline_pool->cost(), CostSite::PoolUse);
    const Info* out = timeline_submits_to_driver(d.timeline_pool->offsets(), count, submits, copies);
    timer.stop();
    if (copies.untranslated) note_untranslated(d);
    return out;
}
const VkSemaphoreWaitInfo* wait_to_driver(DeviceState& d, const VkSemaphoreWaitInfo* info, VkSemaphoreWaitInfo& storage,
                                          TimelineCopies& copies);
VkSemaphoreSignalInfo signal_to_driver(DeviceState& d, const VkSemaphoreSignalInfo& info);
// vkGetSemaphoreCounterValue's answer, into the application's space.
void counter_to_app(DeviceState& d, VkSemaphore semaphore, uint64_t* value);

}  // namespace slipstream::objects
