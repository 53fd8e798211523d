#include "submit/timeline_feature.h"

#include "state/object_state.h"

#include <algorithm>
#include <cstring>

namespace slipstream::submit {

namespace {
// Where the application already speaks of the feature (its own structure's bit), or null.
VkBool32* app_feature(const VkDeviceCreateInfo& app_info) {
    VkBool32* feature = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(app_info.pNext); p; p = p->pNext) {
        if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            feature = &const_cast<VkPhysicalDeviceVulkan12Features*>(
                           reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(p))->timelineSemaphore;
        else if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES)
            feature = &const_cast<VkPhysicalDeviceTimelineSemaphoreFeatures*>(
                           reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(p))->timelineSemaphore;
    }
    return feature;
}

bool extension_available(const VkLayerInstanceDispatchTable& id, VkPhysicalDevice physical_device) {
    uint32_t count = 0;
    id.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> exts(count);
    id.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, exts.data());
    return std::any_of(exts.begin(), exts.begin() + count, [](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) == 0;
    });
}

// Does the device support it? (A 1.0 instance without properties2 cannot ask: no fusion.)
bool device_supports(const InstanceState& instance, VkPhysicalDevice physical_device) {
    const VkLayerInstanceDispatchTable& id = instance.dispatch;
    const bool instance_11 = VK_API_VERSION_MAJOR(instance.api_version) > 1 || VK_API_VERSION_MINOR(instance.api_version) >= 1;
    PFN_vkGetPhysicalDeviceFeatures2 features2 =
        instance_11 && id.GetPhysicalDeviceFeatures2 ? id.GetPhysicalDeviceFeatures2 : id.GetPhysicalDeviceFeatures2KHR;
    if (!features2) return false;
    VkPhysicalDeviceTimelineSemaphoreFeatures supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceFeatures2 all{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &supported};
    features2(physical_device, &all);
    return supported.timelineSemaphore;
}
}  // namespace

bool request_timeline_semaphores(const InstanceState& instance, VkPhysicalDevice physical_device,
                                 const VkDeviceCreateInfo& app_info, DeviceCreateStorage& storage) {
    storage.info = app_info;
    VkPhysicalDeviceProperties props;
    instance.dispatch.GetPhysicalDeviceProperties(physical_device, &props);
    const uint32_t version = std::min(instance.api_version, props.apiVersion);
    const bool core = VK_API_VERSION_MAJOR(version) > 1 || VK_API_VERSION_MINOR(version) >= 2;
    VkBool32* feature = app_feature(app_info);
    if (feature && *feature) return true;

    bool extension_enabled = false;
    for (uint32_t i = 0; i < app_info.enabledExtensionCount; ++i)
        if (std::strcmp(app_info.ppEnabledExtensionNames[i], VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) == 0)
            extension_enabled = true;
    if (!core && !extension_enabled && !extension_available(instance.dispatch, physical_device)) return false;
    if (!device_supports(instance, physical_device)) return false;

    if (feature) {
        // The application's own structure says false: true for the call, put back after it.
        *feature = VK_TRUE;
        storage.patched = feature;
    } else {
        storage.timeline.timelineSemaphore = VK_TRUE;
        storage.timeline.pNext = const_cast<void*>(app_info.pNext);
        storage.info.pNext = &storage.timeline;
    }
    if (!core && !extension_enabled) {
        storage.extensions.assign(app_info.ppEnabledExtensionNames,
                                  app_info.ppEnabledExtensionNames + app_info.enabledExtensionCount);
        storage.extensions.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
        storage.info.enabledExtensionCount = uint32_t(storage.extensions.size());
        storage.info.ppEnabledExtensionNames = storage.extensions.data();
    }
    return true;
}

void restore_create_info(DeviceCreateStorage& storage) {
    if (storage.patched) *storage.patched = VK_FALSE;
    storage.patched = nullptr;
}

}  // namespace slipstream::submit
