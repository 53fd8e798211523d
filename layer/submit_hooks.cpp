// Submissions, waits, and the fence and queue calls that tell Slipstream when work completes.
#include "submit/capture_control.h"
#include "hooks.h"
#include "state/object_state.h"
#include "objects/cached_memory.h"
#include "objects/pooled_fences.h"
#include "objects/pooled_timelines.h"
#include "submit/fusion.h"
#include "idle/queue_idle.h"
#include "waits/waits.h"

namespace slipstream::hooks {

namespace {
void count_command_buffer(DeviceState& device, VkCommandBuffer cb) {
    device.stats.add(Counter::CommandBuffersSubmitted);
    if (const CommandBufferState* state = find_command_buffer(cb)) device.stats.add_commands(state->command_counts);
}

void count_submits(DeviceState& device, uint32_t count, const VkSubmitInfo* submits) {
    device.stats.add(Counter::QueueSubmits);
    device.stats.add(Counter::SubmitBatches, count);
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < submits[i].commandBufferCount; ++j)
            count_command_buffer(device, submits[i].pCommandBuffers[j]);
}

void count_submits(DeviceState& device, uint32_t count, const VkSubmitInfo2* submits) {
    device.stats.add(Counter::QueueSubmits);
    device.stats.add(Counter::SubmitBatches, count);
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; ++j)
            count_command_buffer(device, submits[i].pCommandBufferInfos[j].commandBuffer);
}

bool names_semaphores(const VkSubmitInfo& s) { return s.waitSemaphoreCount || s.signalSemaphoreCount; }
bool names_semaphores(const VkSubmitInfo2& s) { return s.waitSemaphoreInfoCount || s.signalSemaphoreInfoCount; }
bool names_semaphores(const VkBindSparseInfo& s) { return s.waitSemaphoreCount || s.signalSemaphoreCount; }

// The next idle wait on `q` ends in the driver's where a submission named a semaphore
// (docs/internals.md, "Idle waits").
template <typename Info>
void note_semaphores(QueueState* q, uint32_t count, const Info* submits) {
    for (uint32_t i = 0; q && i < count; ++i)
        if (names_semaphores(submits[i])) {
            q->semaphores_since_driver_idle.store(true, std::memory_order_relaxed);
            return;
        }
}

CommandBufferState* state_of(const VkSubmitInfo& s, uint32_t j) { return find_command_buffer(s.pCommandBuffers[j]); }
CommandBufferState* state_of(const VkSubmitInfo2& s, uint32_t j) {
    return find_command_buffer(s.pCommandBufferInfos[j].commandBuffer);
}
uint32_t count_of(const VkSubmitInfo& s) { return s.commandBufferCount; }
uint32_t count_of(const VkSubmitInfo2& s) { return s.commandBufferInfoCount; }

template <typename Info>
void record_lazy_natively(uint32_t count, const Info* submits) {
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < count_of(submits[i]); ++j)
            if (CommandBufferState* cb = state_of(submits[i], j); cb && cb->lazy) capture::record_natively(*cb);
}

VkResult fused(QueueState& q, uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return submit::queue_submit(q, count, submits, fence, next);
}
VkResult fused(QueueState& q, uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next) {
    return submit::queue_submit2(q, count, submits, fence, next);
}

// One device lookup per submission: the queue's state knows its device.
template <typename Info, typename Next>
VkResult submit(VkQueue queue, uint32_t count, const Info* app_submits, VkFence fence, Next VkLayerDispatchTable::*next) {
    QueueState* q = find_queue(queue);
    DeviceState* device = q ? q->device : find_device(queue);
    // Timeline values of pooled semaphores in the driver's space before anything of the layer
    // sees the submission (one atomic load while no semaphore has an offset).
    objects::TimelineCopies copies;
    const Info* submits = objects::submits_to_driver(*device, count, app_submits, copies);
    // Zero fills of recycled memory handed out since the last submission go first (one atomic
    // load while there are none).
    if (VkResult r = objects::before_submission(*device, q); r != VK_SUCCESS) return r;
    objects::note_fence_given(*device, fence);
    if (device->stats.enabled()) count_submits(*device, count, submits);
    note_semaphores(q, count, submits);
    // A wait on a semaphore another queue's held batch signals, or a binary signal one may wait
    // for: that batch goes first (its own queue's meet it in order).
    if (VkResult e = submit::flush_holders_before(*device, q, count, submits); e < 0) return e;
    if (q && q->fusion) return watch_device_loss(*device, fused(*q, count, submits, fence, device->dispatch.*next));
    if (device->fusion) record_lazy_natively(count, submits);
    TrackedSubmission tracked(q, fence);
    VkResult result = (device->dispatch.*next)(queue, count, submits, tracked.fence());
    tracked.end(result);
    return watch_device_loss(*device, result);
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    return submit(queue, count, submits, fence, &VkLayerDispatchTable::QueueSubmit);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits, VkFence fence) {
    return submit(queue, count, submits, fence, &VkLayerDispatchTable::QueueSubmit2);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                               VkFence fence) {
    return submit(queue, count, submits, fence, &VkLayerDispatchTable::QueueSubmit2KHR);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueBindSparse(VkQueue queue, uint32_t count, const VkBindSparseInfo* binds,
                                               VkFence fence) {
    QueueState* q = find_queue(queue);
    // Its waits may name semaphores a batch of another queue carries: those go first.
    if (VkResult e = submit::flush_signal_holders(*find_device(queue), q); e < 0) return e;
    submit::FlushedQueue flushed(q, submit::FlushReason::PassThrough);
    if (flushed.error() < 0) return flushed.error();
    if (q) note_untracked_queue_work(*q);
    note_semaphores(q, count, binds);
    DeviceState* device = find_device(queue);
    objects::note_fence_given(*device, fence);
    objects::TimelineCopies copies;
    return device->dispatch.QueueBindSparse(queue, count, objects::submits_to_driver(*device, count, binds, copies),
                                            fence);
}

VKAPI_ATTR VkResult VKAPI_CALL QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
    QueueState* q = find_queue(queue);
    // Its waits may name binary semaphores a batch of another queue signals: those go first.
    if (info->waitSemaphoreCount) {
        if (VkResult e = submit::flush_signal_holders(*find_device(queue), q); e < 0) return e;
        if (q) q->semaphores_since_driver_idle.store(true, std::memory_order_relaxed);
    }
    submit::FlushedQueue flushed(q, submit::FlushReason::PassThrough);
    if (flushed.error() < 0) return flushed.error();
    if (q) note_untracked_queue_work(*q);
    DeviceState* device = find_device(queue);
#ifdef VK_EXT_swapchain_maintenance1
    // Present fences (VK_EXT_swapchain_maintenance1) are signaled by the presentation engine.
    for (auto* p = static_cast<const VkBaseInStructure*>(info->pNext); p; p = p->pNext) {
        if (p->sType != VK_STRUCTURE_TYPE_SWAPCHAIN_PRESENT_FENCE_INFO_EXT) continue;
        const auto* fences = reinterpret_cast<const VkSwapchainPresentFenceInfoEXT*>(p);
        for (uint32_t i = 0; i < fences->swapchainCount; ++i) objects::note_fence_given(*device, fences->pFences[i]);
    }
#endif
    return device->dispatch.QueuePresentKHR(queue, info);
}

// Image acquires only tell the object pool that a fence may be signaled by the presentation
// engine (objects/fence_pool.h).
VKAPI_ATTR VkResult VKAPI_CALL AcquireNextImageKHR(VkDevice device, VkSwapchainKHR swapchain, uint64_t timeout,
                                                   VkSemaphore semaphore, VkFence fence, uint32_t* index) {
    DeviceState* state = find_device(device);
    objects::note_fence_given(*state, fence);
    return state->dispatch.AcquireNextImageKHR(device, swapchain, timeout, semaphore, fence, index);
}

VKAPI_ATTR VkResult VKAPI_CALL AcquireNextImage2KHR(VkDevice device, const VkAcquireNextImageInfoKHR* info,
                                                    uint32_t* index) {
    DeviceState* state = find_device(device);
    objects::note_fence_given(*state, info->fence);
    return state->dispatch.AcquireNextImage2KHR(device, info, index);
}

VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                                             uint64_t timeout) {
    DeviceState* state = find_device(device);
    return watch_device_loss(*state, wait_for_fences(*state, count, fences, wait_all, timeout));
}

VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence) {
    DeviceState* state = find_device(device);
    return watch_device_loss(*state, get_fence_status(*state, fence));
}

VKAPI_ATTR VkResult VKAPI_CALL CreateFence(VkDevice device, const VkFenceCreateInfo* info,
                                           const VkAllocationCallbacks* allocator, VkFence* fence) {
    return objects::create_fence(*find_device(device), info, allocator, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL ResetFences(VkDevice device, uint32_t count, const VkFence* fences) {
    DeviceState* state = find_device(device);
    FenceReset reset(*state, count, fences);
    return state->dispatch.ResetFences(device, count, fences);
}

VKAPI_ATTR void VKAPI_CALL DestroyFence(VkDevice device, VkFence fence, const VkAllocationCallbacks* allocator) {
    objects::destroy_fence(*find_device(device), fence, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL ImportFenceFdKHR(VkDevice device, const VkImportFenceFdInfoKHR* info) {
    DeviceState* state = find_device(device);
    objects::fence_shared(*state, info->fence);  // its payload may come from outside the device
    VkResult r;
    {
        FenceReset reset(*state, 1, &info->fence);
        r = state->dispatch.ImportFenceFdKHR(device, info);
    }
    if (r == VK_SUCCESS && state->idle) state->idle->fence_payload_imported(info->fence);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL GetFenceFdKHR(VkDevice device, const VkFenceGetFdInfoKHR* info, int* fd) {
    DeviceState* state = find_device(device);
    if (VkResult e = observe_device(*state); e < 0) return e;
    // The payload exported must be the driver's own.
    submit::realize_fences(*state, 1, &info->fence);
    objects::fence_shared(*state, info->fence);  // something outside the device may hold its payload
    // A sync fd is exported with copy transference, which resets the fence (opaque fds share
    // the payload and change nothing).
    const bool resets = info->handleType == VK_EXTERNAL_FENCE_HANDLE_TYPE_SYNC_FD_BIT;
    FenceReset reset(*state, resets ? 1 : 0, &info->fence);
    return state->dispatch.GetFenceFdKHR(device, info, fd);
}

#ifdef VK_USE_PLATFORM_WIN32_KHR
// Win32 fence handles are all exported by reference: only an import replaces the payload.
VKAPI_ATTR VkResult VKAPI_CALL ImportFenceWin32HandleKHR(VkDevice device, const VkImportFenceWin32HandleInfoKHR* info) {
    DeviceState* state = find_device(device);
    objects::fence_shared(*state, info->fence);
    VkResult r;
    {
        FenceReset reset(*state, 1, &info->fence);
        r = state->dispatch.ImportFenceWin32HandleKHR(device, info);
    }
    if (r == VK_SUCCESS && state->idle) state->idle->fence_payload_imported(info->fence);
    return r;
}
#endif

// The wait's values in the driver's space, so the spin's counter reads and the driver's wait
// compare in one space.
VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* state = find_device(device);
    objects::TimelineCopies copies;
    VkSemaphoreWaitInfo storage;
    info = objects::wait_to_driver(*state, info, storage, copies);
    return watch_device_loss(*state, wait_semaphores(*state, info, timeout, state->dispatch.WaitSemaphores));
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphoresKHR(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* state = find_device(device);
    objects::TimelineCopies copies;
    VkSemaphoreWaitInfo storage;
    info = objects::wait_to_driver(*state, info, storage, copies);
    return watch_device_loss(*state, wait_semaphores(*state, info, timeout, state->dispatch.WaitSemaphoresKHR));
}

VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    DeviceState* state = find_device(queue);
    if (QueueState* q = find_queue(queue)) return watch_device_loss(*state, queue_wait_idle(*q));
    return watch_device_loss(*state, state->dispatch.QueueWaitIdle(queue));
}

VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    DeviceState* state = find_device(device);
    return watch_device_loss(*state, device_wait_idle(*state));
}

// Calls that observe completion outside the waits: what fusion holds back goes first.
// (Semaphore waits and counter reads flush the batches that carry semaphores: waits.cpp.)
VKAPI_ATTR VkResult VKAPI_CALL GetQueryPoolResults(VkDevice device, VkQueryPool pool, uint32_t first, uint32_t count,
                                                   size_t size, void* data, VkDeviceSize stride,
                                                   VkQueryResultFlags flags) {
    DeviceState* state = find_device(device);
    if (VkResult e = observe_device(*state); e < 0) return e;
    return state->dispatch.GetQueryPoolResults(device, pool, first, count, size, data, stride, flags);
}

VKAPI_ATTR VkResult VKAPI_CALL GetEventStatus(VkDevice device, VkEvent event) {
    DeviceState* state = find_device(device);
    if (VkResult e = observe_device(*state); e < 0) return e;
    return state->dispatch.GetEventStatus(device, event);
}

VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreFdKHR(VkDevice device, const VkSemaphoreGetFdInfoKHR* info, int* fd) {
    DeviceState* state = find_device(device);
    if (VkResult e = observe_device(*state); e < 0) return e;
    objects::semaphore_shared(*state, info->semaphore, false);  // something outside may hold its payload
    if (state->record) state->record->semaphore_shared(info->semaphore);
    return state->dispatch.GetSemaphoreFdKHR(device, info, fd);
}

}  // namespace slipstream::hooks
