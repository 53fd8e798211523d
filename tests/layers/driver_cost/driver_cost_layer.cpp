// VK_LAYER_SLIPSTREAM_test_driver_cost: a test-only layer (never installed) that sits UNDER
// Slipstream and makes chosen driver calls cost CPU time, as a real GPU driver's do. Lavapipe's
// vkQueueSubmit hands work to a thread and returns within a microsecond or two; NVIDIA's costs
// several. Where the layer's own threads meet (the flusher submitting while the application
// appends), only a driver with that cost shows what the application pays. This layer lets a
// machine without a GPU measure such effects, never their size on a real device.
//
// Environment (read at the first vkCreateInstance of the process):
//   SLIPSTREAM_TEST_DRIVER_COST=<function>=<µs>[,<function>=<µs>...]
//     <function>: vkQueueSubmit, vkQueueSubmit2 (also vkQueueSubmit2KHR), vkAllocateMemory,
//     vkCreateFence, vkCreateSemaphore, vkResetFences, vkBeginCommandBuffer, vkEndCommandBuffer
//     <µs>: the time the call spends on the CPU (busy, as a driver building a submission is)
//     before it goes on to the driver. Unknown names are reported on stderr and ignored.
//   Example: SLIPSTREAM_TEST_DRIVER_COST=vkQueueSubmit=3.8,vkQueueSubmit2=3.8
#include <vulkan/vk_dispatch_table_helper.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "test_layer.h"

namespace {

using namespace slipstream::test_layer;

enum class Fn {
    QueueSubmit,
    QueueSubmit2,
    AllocateMemory,
    CreateFence,
    CreateSemaphore,
    ResetFences,
    BeginCommandBuffer,
    EndCommandBuffer,
    Count
};

constexpr const char* kFnNames[] = {"vkQueueSubmit", "vkQueueSubmit2", "vkAllocateMemory", "vkCreateFence",
                                    "vkCreateSemaphore", "vkResetFences", "vkBeginCommandBuffer", "vkEndCommandBuffer"};
static_assert(sizeof kFnNames / sizeof kFnNames[0] == size_t(Fn::Count));

double g_cost_us[size_t(Fn::Count)] = {};

void read_config() {
    const char* env = std::getenv("SLIPSTREAM_TEST_DRIVER_COST");
    std::string text = env ? env : "";
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string entry = text.substr(start, end - start);
        start = end + 1;
        const size_t eq = entry.find('=');
        std::string name = entry.substr(0, eq);
        if (name == "vkQueueSubmit2KHR") name = "vkQueueSubmit2";
        bool known = false;
        for (size_t i = 0; i < size_t(Fn::Count) && eq != std::string::npos; ++i) {
            if (name != kFnNames[i]) continue;
            g_cost_us[i] = std::strtod(entry.c_str() + eq + 1, nullptr);
            known = true;
        }
        if (!known && !entry.empty())
            std::fprintf(stderr, "VK_LAYER_SLIPSTREAM_test_driver_cost: ignored '%s'\n", entry.c_str());
    }
}

// Busy for the call's cost: a driver building a submission keeps its thread on the CPU.
void spend(Fn fn) {
    const double us = g_cost_us[size_t(fn)];
    if (us <= 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(int64_t(us * 1000.0));
    while (std::chrono::steady_clock::now() < until) {
    }
}

struct InstanceState {
    VkInstance instance = VK_NULL_HANDLE;
    VkLayerInstanceDispatchTable dispatch{};
    PFN_vkGetInstanceProcAddr next_gipa = nullptr;
};

struct DeviceState {
    VkLayerDispatchTable dispatch{};
    PFN_vkGetDeviceProcAddr next_gdpa = nullptr;
};

std::mutex g_mutex;  // the maps
std::once_flag g_config_once;
std::unordered_map<void*, std::unique_ptr<InstanceState>> g_instances;
std::unordered_map<void*, std::unique_ptr<DeviceState>> g_devices;

InstanceState* instance_state(void* key) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_instances.find(key);
    return it == g_instances.end() ? nullptr : it->second.get();
}

DeviceState* device_state(void* key) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_devices.find(key);
    return it == g_devices.end() ? nullptr : it->second.get();
}

template <typename Dispatchable>
const VkLayerDispatchTable& next(Dispatchable d) {
    return device_state(key_of(d))->dispatch;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator, VkInstance* pInstance) {
    auto* link = chain_link<VkLayerInstanceCreateInfo>(pCreateInfo->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto create = reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!create) return VK_ERROR_INITIALIZATION_FAILED;
    std::call_once(g_config_once, read_config);
    VkResult result = create(pCreateInfo, pAllocator, pInstance);
    if (result != VK_SUCCESS) return result;
    auto state = std::make_unique<InstanceState>();
    state->instance = *pInstance;
    state->next_gipa = next_gipa;
    layer_init_instance_dispatch_table(*pInstance, &state->dispatch, next_gipa);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_instances[key_of(*pInstance)] = std::move(state);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    if (!instance) return;
    void* key = key_of(instance);
    InstanceState* state = instance_state(key);
    if (!state) return;
    state->dispatch.DestroyInstance(instance, pAllocator);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_instances.erase(key);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    InstanceState* instance = instance_state(key_of(physicalDevice));
    auto* link = chain_link<VkLayerDeviceCreateInfo>(pCreateInfo->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    if (!instance || !link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto create = reinterpret_cast<PFN_vkCreateDevice>(next_gipa(instance->instance, "vkCreateDevice"));
    if (!create) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = create(physicalDevice, pCreateInfo, pAllocator, pDevice);
    if (result != VK_SUCCESS) return result;
    auto state = std::make_unique<DeviceState>();
    state->next_gdpa = next_gdpa;
    layer_init_device_dispatch_table(*pDevice, &state->dispatch, next_gdpa);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_devices[key_of(*pDevice)] = std::move(state);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    if (!device) return;
    void* key = key_of(device);
    DeviceState* d = device_state(key);
    if (!d) return;
    d->dispatch.DestroyDevice(device, pAllocator);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_devices.erase(key);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    spend(Fn::QueueSubmit);
    return next(queue).QueueSubmit(queue, count, submits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits, VkFence fence) {
    spend(Fn::QueueSubmit2);
    return next(queue).QueueSubmit2(queue, count, submits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                               VkFence fence) {
    spend(Fn::QueueSubmit2);
    return next(queue).QueueSubmit2KHR(queue, count, submits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL AllocateMemory(VkDevice device, const VkMemoryAllocateInfo* info,
                                              const VkAllocationCallbacks* allocator, VkDeviceMemory* memory) {
    spend(Fn::AllocateMemory);
    return next(device).AllocateMemory(device, info, allocator, memory);
}
VKAPI_ATTR VkResult VKAPI_CALL CreateFence(VkDevice device, const VkFenceCreateInfo* info,
                                           const VkAllocationCallbacks* allocator, VkFence* fence) {
    spend(Fn::CreateFence);
    return next(device).CreateFence(device, info, allocator, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL CreateSemaphore(VkDevice device, const VkSemaphoreCreateInfo* info,
                                               const VkAllocationCallbacks* allocator, VkSemaphore* semaphore) {
    spend(Fn::CreateSemaphore);
    return next(device).CreateSemaphore(device, info, allocator, semaphore);
}
VKAPI_ATTR VkResult VKAPI_CALL ResetFences(VkDevice device, uint32_t count, const VkFence* fences) {
    spend(Fn::ResetFences);
    return next(device).ResetFences(device, count, fences);
}
VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cb, const VkCommandBufferBeginInfo* info) {
    spend(Fn::BeginCommandBuffer);
    return next(cb).BeginCommandBuffer(cb, info);
}
VKAPI_ATTR VkResult VKAPI_CALL EndCommandBuffer(VkCommandBuffer cb) {
    spend(Fn::EndCommandBuffer);
    return next(cb).EndCommandBuffer(cb);
}

#define HOOK(name) {"vk" #name, reinterpret_cast<PFN_vkVoidFunction>(name)}
const Hook kInstanceHooks[] = {
    HOOK(CreateInstance),
    HOOK(DestroyInstance),
    HOOK(CreateDevice),
};
const Hook kDeviceHooks[] = {
    HOOK(DestroyDevice),
    HOOK(QueueSubmit),
    HOOK(QueueSubmit2),
    HOOK(QueueSubmit2KHR),
    HOOK(AllocateMemory),
    HOOK(CreateFence),
    HOOK(CreateSemaphore),
    HOOK(ResetFences),
    HOOK(BeginCommandBuffer),
    HOOK(EndCommandBuffer),
};
#undef HOOK

// Internal functions for the loader (test_layer.h: negotiate).
PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* pName) {
    if (std::strcmp(pName, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(GetDeviceProcAddr);
    DeviceState* d = device ? device_state(key_of(device)) : nullptr;
    if (!d) return nullptr;
    return hook_or_next(find_hook(kDeviceHooks, pName), d->next_gdpa(device, pName));
}

PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* pName) {
    if (std::strcmp(pName, "vkGetInstanceProcAddr") == 0)
        return reinterpret_cast<PFN_vkVoidFunction>(GetInstanceProcAddr);
    if (std::strcmp(pName, "vkCreateInstance") == 0) return find_hook(kInstanceHooks, pName);
    if (std::strcmp(pName, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(GetDeviceProcAddr);
    InstanceState* s = instance ? instance_state(key_of(instance)) : nullptr;
    if (!s) return nullptr;
    PFN_vkVoidFunction hook = find_hook(kInstanceHooks, pName);
    if (!hook) hook = find_hook(kDeviceHooks, pName);
    return hook_or_next(hook, s->next_gipa(instance, pName));
}

}  // namespace

extern "C" {
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* pName) {
    return GetDeviceProcAddr(device, pName);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char* pName) {
    return GetInstanceProcAddr(instance, pName);
}
VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* pVersionStruct) {
    return negotiate(pVersionStruct, GetInstanceProcAddr, GetDeviceProcAddr);
}
}  // extern "C"
