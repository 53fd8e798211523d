// Instance and device creation: walk the loader's layer chain, build dispatch tables, and
// create the layer state that every later call finds.
#include "build_info.h"
#include "capture/resource_registry.h"
#include "state/object_record.h"
#include "hooks.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "state/object_state.h"
#include "memory/readback_tracker.h"
#include "objects/alloc_cache.h"
#include "objects/fence_pool.h"
#include "objects/timeline_pool.h"
#include "objects/zero_fill.h"
#include "submit/fusion.h"
#include "submit/timeline_feature.h"
#include "idle/queue_idle.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

bool has_device_extension(InstanceState& instance, VkPhysicalDevice physical_device, const char* name) {
    uint32_t count = 0;
    if (instance.dispatch.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr) != VK_SUCCESS)
        return false;
    std::vector<VkExtensionProperties> all(count);
    if (instance.dispatch.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, all.data()) < 0)
        return false;
    for (uint32_t i = 0; i < count && i < all.size(); ++i)
        if (std::strcmp(all[i].extensionName, name) == 0) return true;
    return false;
}

// The allocation cache of a new device, with the GPU zero fill where the device has timeline
// semaphores (`timelines`) and the cache zeroes.
void set_up_alloc_cache(InstanceState& instance, DeviceState& state, bool timelines) {
    if (timelines && state.settings.alloc_cache_zero) {
        // The timeline commands of the version the device speaks (or of the extension).
        const uint32_t version = std::min(instance.api_version, state.properties.apiVersion);
        const bool core = VK_API_VERSION_MAJOR(version) > 1 || VK_API_VERSION_MINOR(version) >= 2;
        auto z = std::make_unique<objects::GpuZero>();
        z->counter_value = core ? state.dispatch.GetSemaphoreCounterValue : state.dispatch.GetSemaphoreCounterValueKHR;
        z->wait_semaphores = core ? state.dispatch.WaitSemaphores : state.dispatch.WaitSemaphoresKHR;
        if (z->counter_value && z->wait_semaphores) state.gpu_zero = std::move(z);
    }
    objects::AllocCacheLimits limits = objects::AllocCache::limits_for(
        state.memory_properties, state.properties.limits, state.settings.alloc_cache_mib,
        state.settings.alloc_cache_zero, state.gpu_zero != nullptr);
    limits.always = state.settings.alloc_cache_always;
    state.alloc_cache = std::make_unique<objects::AllocCache>(limits);
    state.memory_budget = instance.api_version >= VK_API_VERSION_1_1 &&
                          state.properties.apiVersion >= VK_API_VERSION_1_1 &&
                          instance.dispatch.GetPhysicalDeviceMemoryProperties2 &&
                          has_device_extension(instance, state.physical_device, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
}
}  // namespace

namespace {
// Slipstream's messages also reach the application's debug-utils messengers (the loader hands
// a message submitted down the chain to every messenger of the instance).
void to_debug_utils(void* context, LogLevel level, const char* message) {
    const auto* state = static_cast<const InstanceState*>(context);
    static constexpr VkDebugUtilsMessageSeverityFlagBitsEXT kSeverity[] = {
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT, VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT};
    VkDebugUtilsMessengerCallbackDataEXT data{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
    data.pMessageIdName = "slipstream";
    data.pMessage = message;
    state->dispatch.SubmitDebugUtilsMessageEXT(state->instance, kSeverity[int(level)],
                                               VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT, &data);
}

bool enables_debug_utils(const VkInstanceCreateInfo& info) {
    for (uint32_t i = 0; i < info.enabledExtensionCount; ++i)
        if (std::strcmp(info.ppEnabledExtensionNames[i], VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0) return true;
    return false;
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

    const LoaderLockedCall locked;
    Settings settings = read_settings();
    VkResult result = next_create(info, allocator, instance);
    if (result != VK_SUCCESS) return result;

    auto state = std::make_unique<InstanceState>();
    state->instance = *instance;
    state->settings = settings;
    if (info->pApplicationInfo && info->pApplicationInfo->apiVersion)
        state->api_version = info->pApplicationInfo->apiVersion;
    init_instance_dispatch(*instance, &state->dispatch, next_gipa);
    log(LogLevel::Info, "active on instance %p (Slipstream %s, commit %s)", static_cast<void*>(*instance),
        SLIPSTREAM_BUILD_VERSION, SLIPSTREAM_BUILD_COMMIT);
    if (settings.log_messengers && enables_debug_utils(*info) && state->dispatch.SubmitDebugUtilsMessageEXT)
        add_log_sink(state.get(), to_debug_utils, state.get());
    add_instance(std::move(state));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* allocator) {
    if (!instance) return;
    const LoaderLockedCall locked;
    InstanceState* state = find_instance(instance);
    PFN_vkDestroyInstance destroy = state->dispatch.DestroyInstance;
    remove_log_sink(state);
    remove_instance(instance);
    destroy(instance, allocator);
}

namespace {
// False for a device made of a group of several physical devices.
bool one_physical_device(const VkDeviceCreateInfo& info) {
    for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_DEVICE_CREATE_INFO)
            return reinterpret_cast<const VkDeviceGroupDeviceCreateInfo*>(s)->physicalDeviceCount <= 1;
    return true;
}

// The record of objects, for cached readback, barrier elision and fusion, which follow the
// objects from the device's first one on.
void set_up_object_record(DeviceState& d, bool fuse) {
    const bool readback = d.settings.readback != ReadbackMode::Off || d.settings.readback_steer;
    const bool elide = fuse && d.settings.fuse_barrier && d.settings.elide_barriers;
    // (Fusion reads its semaphores: which may be carried in a batch.)
    if (readback || elide || fuse) d.record = std::make_unique<ObjectRecord>(readback || elide);
    if (readback) d.readback = std::make_unique<ReadbackTracker>(d);
    if (elide) d.resources = std::make_unique<capture::ResourceRegistry>(*d.record);
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical_device, const VkDeviceCreateInfo* info,
                                            const VkAllocationCallbacks* allocator, VkDevice* device) {
    const LoaderLockedCall locked;
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

    // Fusion records completion with a timeline semaphore per queue, and so does the GPU zero
    // fill of recycled memory (objects/zero_fill.h): ask for the feature.
    submit::DeviceCreateStorage storage;
    const Settings& want = instance->settings;
    const bool gpu_fill_wanted = want.alloc_cache && want.alloc_cache_zero;
    const bool timelines = (want.fuse || gpu_fill_wanted) &&
                           submit::request_timeline_semaphores(*instance, physical_device, *info, storage);
    const bool fuse = want.fuse && timelines;
    if (want.fuse && !fuse)
        log(LogLevel::Warn, "VK_SLIPSTREAM_FUSE: the device has no timeline semaphores; fusion stays off");
    VkResult result = next_create(physical_device, timelines ? &storage.info : info, allocator, device);
    submit::restore_create_info(storage);
    if (result != VK_SUCCESS) return result;

    auto state = std::make_unique<DeviceState>();
    state->device = *device;
    state->physical_device = physical_device;
    state->one_physical_device = one_physical_device(*info);
    state->instance = instance;
    state->settings = instance->settings;
    state->stats.set_enabled(stats_wanted(state->settings));
    state->set_loader_data = loader_data ? loader_data->u.pfnSetDeviceLoaderData : nullptr;
    init_device_dispatch(*device, &state->dispatch, next_gdpa, instance->instance, instance->dispatch.GetInstanceProcAddr);
    if (state->settings.spin) state->idle = std::make_unique<IdleTracker>(*device, state->dispatch, &state->stats);
    if (state->settings.object_pool) {
        const bool always = state->settings.object_pool_always;
        state->fence_pool = std::make_unique<objects::FencePool>(state->settings.object_pool_fences, always);
        state->timeline_pool = std::make_unique<objects::TimelinePool>(state->settings.object_pool_timelines, always);
    }
    instance->dispatch.GetPhysicalDeviceProperties(physical_device, &state->properties);
    instance->dispatch.GetPhysicalDeviceMemoryProperties(physical_device, &state->memory_properties);
    if (state->settings.alloc_cache) set_up_alloc_cache(*instance, *state, timelines);
    uint32_t family_count = 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
    state->queue_families.resize(family_count);
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count,
                                                              state->queue_families.data());
    set_up_object_record(*state, fuse);
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
