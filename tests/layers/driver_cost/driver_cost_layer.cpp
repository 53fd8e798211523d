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
//     vkCreateFence, vkCreateSemaphore, vkResetFences, vkBeginCommandBuffer, vkEndCommandBuffer,
//     vkGetFenceStatus, vkGetSemaphoreCounterValue (also vkGetSemaphoreCounterValueKHR)
//     <µs>: the time the call spends on the CPU (busy, as a driver building a submission is)
//     before it goes on to the driver. Unknown names are reported on stderr and ignored.
//   Example: SLIPSTREAM_TEST_DRIVER_COST=vkQueueSubmit=3.8,vkQueueSubmit2=3.8
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

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
    GetFenceStatus,
    GetSemaphoreCounterValue,
    Count
};

constexpr const char* kFnNames[] = {"vkQueueSubmit", "vkQueueSubmit2", "vkAllocateMemory", "vkCreateFence",
                                    "vkCreateSemaphore", "vkResetFences", "vkBeginCommandBuffer", "vkEndCommandBuffer",
                                    "vkGetFenceStatus", "vkGetSemaphoreCounterValue"};
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
        if (name == "vkGetSemaphoreCounterValueKHR") name = "vkGetSemaphoreCounterValue";
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

struct DeviceState : DeviceBase {};

std::once_flag g_config_once;
LayerState<DeviceState> g_layer;

template <typename Dispatchable>
const VkLayerDispatchTable& next(Dispatchable d) {
    return g_layer.of(d)->dispatch;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator, VkInstance* pInstance) {
    std::call_once(g_config_once, read_config);
    return g_layer.create_instance(pCreateInfo, pAllocator, pInstance);
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_instance(instance, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    return g_layer.create_device(physicalDevice, pCreateInfo, pAllocator, pDevice, std::make_unique<DeviceState>(),
                                 [](DeviceState&, VkDevice) {});
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_device(device, pAllocator);
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
VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence) {
    spend(Fn::GetFenceStatus);
    return next(device).GetFenceStatus(device, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    spend(Fn::GetSemaphoreCounterValue);
    return next(device).GetSemaphoreCounterValue(device, semaphore, value);
}
VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValueKHR(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
    spend(Fn::GetSemaphoreCounterValue);
    return next(device).GetSemaphoreCounterValueKHR(device, semaphore, value);
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
    HOOK(GetFenceStatus),
    HOOK(GetSemaphoreCounterValue),
    HOOK(GetSemaphoreCounterValueKHR),
};
#undef HOOK

}  // namespace

SLIPSTREAM_TEST_LAYER_ENTRY_POINTS(g_layer, kInstanceHooks, kDeviceHooks)
