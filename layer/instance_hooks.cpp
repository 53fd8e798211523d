// Instance and device creation: walk the loader's layer chain, build dispatch tables, and
// create the layer state that every later call finds.
#include "hooks.h"
#include "core/dispatch.h"
#include "core/object_state.h"


#include <cstring>

namespace slipstream::hooks {

namespace {
template <typename Info, typename Stype>
Info* find_layer_info(const void* pnext, Stype stype, VkLayerFunction function) {
    for (auto* p = static_cast<const VkBaseInStructure*>(pnext); p; p = p->pNext) {
        if (p->sType == VkStructureType(stype) && reinterpret_cast<const Info*>(p)->function == function)
            return const_cast<Info*>(reinterpret_cast<const Info*>(p));
    }
    return nullptr;
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* allocator,
                                              VkInstance* instance) {
    auto* link = find_layer_info<VkLayerInstanceCreateInfo>(info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO,
                                                            VK_LAYER_LINK_INFO);
    if (!link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    auto next_create = reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!next_create) return VK_ERROR_INITIALIZATION_FAILED;
    // The next layer finds its own link info where ours was.
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;

    Settings settings = read_settings();
    VkResult result = next_create(info, allocator, instance);
    if (result != VK_SUCCESS) return result;

    auto state = std::make_unique<InstanceState>();
    state->instance = *instance;
    state->settings = settings;
    if (info->pApplicationInfo && info->pApplicationInfo->apiVersion)
        state->api_version = info->pApplicationInfo->apiVersion;
    init_instance_dispatch(*instance, &state->dispatch, next_gipa);
    add_instance(std::move(state));
    log(LogLevel::Info, "active on instance %p", static_cast<void*>(*instance));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* allocator) {
    if (!instance) return;
    InstanceState* state = find_instance(instance);
    PFN_vkDestroyInstance destroy = state->dispatch.DestroyInstance;
    remove_instance(instance);
    destroy(instance, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical_device, const VkDeviceCreateInfo* info,
                                            const VkAllocationCallbacks* allocator, VkDevice* device) {
    InstanceState* instance = find_instance(physical_device);
    auto* link = find_layer_info<VkLayerDeviceCreateInfo>(info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO,
                                                          VK_LAYER_LINK_INFO);
    auto* loader_data = find_layer_info<VkLayerDeviceCreateInfo>(
        info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, VK_LOADER_DATA_CALLBACK);
    if (!instance || !link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    auto next_create = reinterpret_cast<PFN_vkCreateDevice>(next_gipa(instance->instance, "vkCreateDevice"));
    if (!next_create) return VK_ERROR_INITIALIZATION_FAILED;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;

    // Fusion records completion with a timeline semaphore per queue: ask for the feature.
    submit::DeviceCreateStorage storage;
    const bool fuse = instance->settings.fuse &&
                      submit::request_timeline_semaphores(*instance, physical_device, *info, storage);
    if (instance->settings.fuse && !fuse)
        log(LogLevel::Warn, "VK_SLIPSTREAM_FUSE: the device has no timeline semaphores; fusion stays off");
    VkResult result = next_create(physical_device, fuse ? &storage.info : info, allocator, device);
    submit::restore_create_info(storage);
    if (result != VK_SUCCESS) return result;

    auto state = std::make_unique<DeviceState>();
    state->device = *device;
    state->physical_device = physical_device;
    state->instance = instance;
    state->settings = instance->settings;
    state->stats.set_enabled(stats_wanted(state->settings));
    state->set_loader_data = loader_data ? loader_data->u.pfnSetDeviceLoaderData : nullptr;
    init_device_dispatch(*device, &state->dispatch, next_gdpa);
    if (state->settings.spin) state->idle = std::make_unique<IdleTracker>(*device, state->dispatch, &state->stats);
    if (state->settings.object_pool) {
        state->fence_pool = std::make_unique<objects::FencePool>(state->settings.object_pool_fences);
        state->timeline_pool = std::make_unique<objects::TimelinePool>(state->settings.object_pool_timelines);
    }
    instance->dispatch.GetPhysicalDeviceProperties(physical_device, &state->properties);
    instance->dispatch.GetPhysicalDeviceMemoryProperties(physical_device, &state->memory_properties);
    uint32_t family_count = 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
    state->queue_families.resize(family_count);
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count,
                                                              state->queue_families.data());
    if (state->settings.readback != ReadbackMode::Off || state->settings.readback_steer)
        state->readback = std::make_unique<ReadbackTracker>(*state);
    // Barrier elision follows the objects a capture names from the device's first one on.
    if (fuse && state->settings.fuse_barrier && state->settings.elide_barriers)
        state->resources = std::make_unique<capture::ResourceRegistry>();
    log(LogLevel::Info, "active on device %p (%s)", static_cast<void*>(*device), state->properties.deviceName);
    if (fuse) submit::start_device(*state);
    add_device(std::move(state));
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL EnumerateDeviceExtensionProperties(VkPhysicalDevice physical_device,
                                                                  const char* layer_name, uint32_t* count,
                                                                  VkExtensionProperties* properties) {
    // Slipstream adds no extensions of its own.
    if (layer_name && std::strcmp(layer_name, "VK_LAYER_slipstream") == 0) {
        *count = 0;
        return VK_SUCCESS;
    }
    InstanceState* instance = find_instance(physical_device);
    return instance->dispatch.EnumerateDeviceExtensionProperties(physical_device, layer_name, count, properties);
}

}  // namespace slipstream::hooks
