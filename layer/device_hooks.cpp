// Device, queue and command-buffer lifetime: keeps the layer state in step with the
// application's objects on every create, reset and destroy path.
#include "submit/capture_control.h"
#include "capture/resource_registry.h"
#include "hooks.h"
#include "core/log.h"
#include "state/object_state.h"
#include "objects/cached_memory.h"
#include "objects/pooled_fences.h"
#include "objects/pooled_timelines.h"
#include "submit/fusion.h"
#include "submit/native_settle.h"
#include "waits/waits.h"

namespace slipstream::hooks {

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* allocator) {
    const LoaderLockedCall locked;
    if (!device) return;
    DeviceState* state = find_device(device);
    PFN_vkDestroyDevice destroy = state->dispatch.DestroyDevice;
    submit::stop_device(*state);
    // The objects the layer kept (pooled fences and timelines, cached memory) go before the
    // device does, once the driver is done with the submissions that may name them.
    settle_before_destroy(*state);
    objects::destroy_pooled_fences(*state);
    objects::destroy_cached_memory(*state);
    objects::destroy_pooled_timelines(*state);
    state->layouts.destroy_all();
    remove_device(device);
    destroy(device, allocator);
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index, VkQueue* queue) {
    DeviceState* state = find_device(device);
    state->dispatch.GetDeviceQueue(device, family, index, queue);
    deliver_held_log();  // what vkCreateDevice said, now that the loader's lock is free
    if (*queue) submit::start_queue(*state, *note_queue(*state, *queue, family, index));
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* info, VkQueue* queue) {
    DeviceState* state = find_device(device);
    state->dispatch.GetDeviceQueue2(device, info, queue);
    deliver_held_log();
    if (*queue) submit::start_queue(*state, *note_queue(*state, *queue, info->queueFamilyIndex, info->queueIndex));
}

VKAPI_ATTR VkResult VKAPI_CALL CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* info,
                                                 const VkAllocationCallbacks* allocator, VkCommandPool* pool) {
    DeviceState* state = find_device(device);
    VkResult result = state->dispatch.CreateCommandPool(device, info, allocator, pool);
    if (result == VK_SUCCESS) note_command_pool(*state, *pool, *info);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo* info,
                                                      VkCommandBuffer* cbs) {
    DeviceState* state = find_device(device);
    VkResult result = state->dispatch.AllocateCommandBuffers(device, info, cbs);
    if (result == VK_SUCCESS) add_command_buffers(*state, info->commandPool, info->level, cbs, info->commandBufferCount);
    return result;
}

// A command buffer fusion still has to replay from (an application that resets or frees one
// whose work it has not waited for) first has its batches go: its capture must not change or
// go away under them.
// One whose own recording the layer handed the driver waits until that work completed
// (submit/native_settle.h).
static void settle(DeviceState& d, const CommandBufferState* cb) {
    if (!d.fusion || !cb) return;
    if (cb->in_batches.load(std::memory_order_acquire) != 0) submit::flush_device(d, submit::FlushReason::PassThrough);
    submit::settle_native(*cb);
}
static void settle_pool(DeviceState& d, VkCommandPool pool) {
    if (!d.fusion) return;
    if (d.open_batches.load(std::memory_order_acquire) != 0 && pool_has_batched(d, pool))
        submit::flush_device(d, submit::FlushReason::PassThrough);
    submit::settle_native_pool(d, pool);
}

VKAPI_ATTR void VKAPI_CALL FreeCommandBuffers(VkDevice device, VkCommandPool pool, uint32_t count,
                                              const VkCommandBuffer* cbs) {
    DeviceState* state = find_device(device);
    for (uint32_t i = 0; i < count; ++i)
        if (cbs[i]) settle(*state, find_command_buffer(cbs[i]));
    remove_command_buffers(*state, pool, cbs, count);
    state->dispatch.FreeCommandBuffers(device, pool, count, cbs);
}

VKAPI_ATTR void VKAPI_CALL DestroyCommandPool(VkDevice device, VkCommandPool pool, const VkAllocationCallbacks* allocator) {
    DeviceState* state = find_device(device);
    if (pool) settle_pool(*state, pool);
    if (pool) remove_command_pool(*state, pool);
    state->dispatch.DestroyCommandPool(device, pool, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL ResetCommandPool(VkDevice device, VkCommandPool pool, VkCommandPoolResetFlags flags) {
    DeviceState* state = find_device(device);
    settle_pool(*state, pool);
    VkResult result = state->dispatch.ResetCommandPool(device, pool, flags);
    if (result == VK_SUCCESS) reset_command_pool(*state, pool, flags & VK_COMMAND_POOL_RESET_RELEASE_RESOURCES_BIT);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cb, const VkCommandBufferBeginInfo* info) {
    CommandBufferState* state = find_command_buffer(cb);
    settle(*state->device, state);
    // Beginning a command buffer resets it implicitly.
    state->reset();
    state->device->stats.add(Counter::CommandBuffersBegun);
    if (state->device->settings.fuse && capture::begin_capture(*state, info)) return VK_SUCCESS;  // lazy
    return state->device->dispatch.BeginCommandBuffer(cb, info);
}

VKAPI_ATTR VkResult VKAPI_CALL EndCommandBuffer(VkCommandBuffer cb) {
    CommandBufferState* state = find_command_buffer(cb);
    if (state->lazy) {
        // (A native begin that failed left it lazy: its error comes back here.)
        capture::end_capture(*state, state->native_error);
        return state->native_error;
    }
    VkResult result = state->device->dispatch.EndCommandBuffer(cb);
    if (state->native_error != VK_SUCCESS) result = state->native_error;
    if (state->capture) capture::end_capture(*state, result);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL ResetCommandBuffer(VkCommandBuffer cb, VkCommandBufferResetFlags flags) {
    CommandBufferState* state = find_command_buffer(cb);
    settle(*state->device, state);
    VkResult result = state->device->dispatch.ResetCommandBuffer(cb, flags);
    if (result == VK_SUCCESS) state->reset(flags & VK_COMMAND_BUFFER_RESET_RELEASE_RESOURCES_BIT);
    return result;
}

// Layouts a capture may name (FUSION.md rule 5): a lazy capture keeps them alive until it
// goes; a capture next to a native recording is not replayed once one of them went (the
// application's own recording still is valid). Update templates too (buffer_use_intercepts.cpp).
static capture::LayoutKeeper::Destroyers layout_destroyers(const DeviceState& d) {
    return {d.dispatch.DestroyPipelineLayout, d.dispatch.DestroyDescriptorSetLayout,
            d.dispatch.DestroyDescriptorUpdateTemplate, d.dispatch.DestroyDescriptorUpdateTemplateKHR};
}

void destroy_layout(VkDevice device, capture::LayoutKeeper::Kind kind, uint64_t handle,
                    const VkAllocationCallbacks* allocator) {
    DeviceState* state = find_device(device);
    if (handle) submit::settle_armed(*state);  // an armed replay may name it
    if (!handle) return;  // destroying VK_NULL_HANDLE does nothing
    const size_t kept = state->layouts.kept();
    state->layouts.destroy(device, layout_destroyers(*state), kind, handle, allocator);
    if (state->layouts.kept() > kept) state->stats.add(Counter::LayoutDestroysPutOff);
}

VKAPI_ATTR void VKAPI_CALL DestroyPipelineLayout(VkDevice device, VkPipelineLayout layout,
                                                 const VkAllocationCallbacks* allocator) {
    destroy_layout(device, capture::LayoutKeeper::Kind::PipelineLayout, uint64_t(layout), allocator);
}

VKAPI_ATTR void VKAPI_CALL DestroyDescriptorSetLayout(VkDevice device, VkDescriptorSetLayout layout,
                                                      const VkAllocationCallbacks* allocator) {
    DeviceState* state = find_device(device);
    if (layout && state->resources) state->resources->set_layout_destroyed(layout);
    destroy_layout(device, capture::LayoutKeeper::Kind::SetLayout, uint64_t(layout), allocator);
}

}  // namespace slipstream::hooks
