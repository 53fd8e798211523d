// Waits and the submissions they depend on, spin-then-block (see spin_wait.h, queue_idle.h).
// The layer's hooks call these; with VK_SLIPSTREAM_SPIN=off each is one branch and the
// driver's call.
#pragma once

#include "state/object_state.h"

namespace slipstream {

VkResult wait_for_fences(DeviceState& d, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                         uint64_t timeout);
VkResult wait_semaphores(DeviceState& d, const VkSemaphoreWaitInfo* info, uint64_t timeout,
                         PFN_vkWaitSemaphores next_wait);
VkResult queue_wait_idle(QueueState& q);
VkResult device_wait_idle(DeviceState& d);
// At vkDestroyDevice, before the layer destroys what it kept: waits up to a second for the
// driver to be done with every queue's submissions (a fence submitted last on each), where one
// named a semaphore since the driver's last idle wait. Bounded: an application that destroys
// its device with work still waiting for a signal gets what the driver alone gives it.
void settle_before_destroy(DeviceState& d);

// vkGetFenceStatus: answered from what the layer knows where it can, and learnt from.
VkResult get_fence_status(DeviceState& d, VkFence fence);
// Before a call that observes completion outside the waits above (semaphore counters, query
// results, event status, fence and semaphore export): submits what fusion holds back.
VkResult observe_device(DeviceState& d);
// Queue work the layer cannot follow (sparse binding, present).
void note_untracked_queue_work(QueueState& q);

// Brackets an application call that resets these fences or replaces their payload
// (vkResetFences, vkDestroyFence, imports, sync-fd exports): the layer stops following them
// before the call and forgets what it knew of them after it.
class FenceReset {
public:
    // `destroyed`: vkDestroyFence (everything the layer knew of the fences goes).
    FenceReset(DeviceState& d, uint32_t count, const VkFence* fences, bool destroyed = false);
    ~FenceReset();
    FenceReset(const FenceReset&) = delete;
    FenceReset& operator=(const FenceReset&) = delete;

private:
    IdleTracker* t_;
    uint32_t count_;
    const VkFence* fences_;
};

}  // namespace slipstream
