// Submissions and waits. For now Slipstream counts them and passes them through unchanged.
#include "hooks.h"
#include "object_state.h"

namespace slipstream::hooks {

namespace {
void count_command_buffer(DeviceState& device, VkCommandBuffer cb) {
    device.stats.add(Counter::CommandBuffersSubmitted);
    if (const CommandBufferState* state = find_command_buffer(cb)) device.stats.add_commands(state->command_counts);
}

VkResult submit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                 VkFence fence, bool khr) {
    DeviceState* device = find_device(queue);
    device->stats.add(Counter::QueueSubmits);
    device->stats.add(Counter::SubmitBatches, count);
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; ++j)
            count_command_buffer(*device, submits[i].pCommandBufferInfos[j].commandBuffer);
    PFN_vkQueueSubmit2 next = khr ? device->dispatch.QueueSubmit2KHR : device->dispatch.QueueSubmit2;
    return next(queue, count, submits, fence);
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    DeviceState* device = find_device(queue);
    device->stats.add(Counter::QueueSubmits);
    device->stats.add(Counter::SubmitBatches, count);
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < submits[i].commandBufferCount; ++j)
            count_command_buffer(*device, submits[i].pCommandBuffers[j]);
    return device->dispatch.QueueSubmit(queue, count, submits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits, VkFence fence) {
    return submit2(queue, count, submits, fence, false);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                               VkFence fence) {
    return submit2(queue, count, submits, fence, true);
}

VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                                             uint64_t timeout) {
    DeviceState* state = find_device(device);
    state->stats.add(Counter::FenceWaits);
    return state->dispatch.WaitForFences(device, count, fences, wait_all, timeout);
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* state = find_device(device);
    state->stats.add(Counter::SemaphoreWaits);
    return state->dispatch.WaitSemaphores(device, info, timeout);
}

VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphoresKHR(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
    DeviceState* state = find_device(device);
    state->stats.add(Counter::SemaphoreWaits);
    return state->dispatch.WaitSemaphoresKHR(device, info, timeout);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    DeviceState* device = find_device(queue);
    device->stats.add(Counter::QueueWaitIdles);
    return device->dispatch.QueueWaitIdle(queue);
}

VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    DeviceState* state = find_device(device);
    state->stats.add(Counter::DeviceWaitIdles);
    return state->dispatch.DeviceWaitIdle(device);
}

}  // namespace slipstream::hooks
