// A host wait for one timeline semaphore to reach one value: the layer's own waits for its
// timelines (fusion's, the zero fills', an armed replay's).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace slipstream {

// `wait`: vkWaitSemaphores or vkWaitSemaphoresKHR, whichever the device has.
inline VkResult wait_for_value(PFN_vkWaitSemaphores wait, VkDevice device, VkSemaphore semaphore, uint64_t value,
                               uint64_t timeout) {
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &semaphore;
    info.pValues = &value;
    return wait(device, &info, timeout);
}

}  // namespace slipstream
