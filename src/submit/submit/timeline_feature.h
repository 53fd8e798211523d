// Fusion needs one timeline semaphore per queue: the feature is enabled at vkCreateDevice where
// the device has it and the application did not enable it itself.
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

namespace slipstream {
struct InstanceState;
}

namespace slipstream::submit {

// Before vkCreateDevice: makes `info` (a copy of the application's) enable timeline semaphores
// where the device has them and the application did not enable them itself; `storage` keeps
// what the new chain points at. Returns false when the device cannot have them (fusion then
// stays off on it).
struct DeviceCreateStorage {
    VkDeviceCreateInfo info{};
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    std::vector<const char*> extensions;
    VkBool32* patched = nullptr;  // a feature bit of the application's set to true for the call
};
bool request_timeline_semaphores(const InstanceState& instance, VkPhysicalDevice physical_device,
                                 const VkDeviceCreateInfo& app_info, DeviceCreateStorage& storage);
// After vkCreateDevice returned: puts back what request_timeline_semaphores changed in the
// application's structures.
void restore_create_info(DeviceCreateStorage& storage);

}  // namespace slipstream::submit
