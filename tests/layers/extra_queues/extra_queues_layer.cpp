// VK_LAYER_SLIPSTREAM_test_extra_queues: a test-only layer (never installed) that sits UNDER
// Slipstream (and under the validation layer, when there is one) and presents more queues than
// the driver has. Lavapipe has one queue; GPUs have several per family, and what a layer does
// between two queues (a fused batch on one that another's submission waits for, a dependency
// carried across) only shows where the queues are distinct handles. Every layer above this one,
// the validation layer's synchronization validation included, sees distinct queues and judges
// the program as it would on a GPU; below it, the driver's queues run the work.
//
// Queue index i of a family is the driver's queue i modulo the driver's count, so two presented
// queues may share one driver queue. Work on them then runs in the order it reaches the driver.
// A submission that waits for a signal nothing has submitted yet (wait-before-signal, valid
// between queues) is held until its signals are submitted, then goes to the driver
// (held_submissions.h), so that it does not block the driver queue the signal must pass
// through; idle waits wait for the held ones first.
//
// Environment (read at the first vkCreateInstance of the process):
//   SLIPSTREAM_TEST_QUEUES=<n>  queues per family presented (default 2); a family the driver
//                               gives more keeps its own count.
//   SLIPSTREAM_TEST_QUEUES_TRACE=1  prints each batch that reaches the driver on stderr (queue,
//                               waits with values, command buffers, signals, fence): what the
//                               layers above made of the application's submissions.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "held_submissions.h"
#include "test_layer.h"

namespace {

using namespace slipstream::test_layer;

uint32_t g_presented = 2;

void read_config() {
    const char* env = std::getenv("SLIPSTREAM_TEST_QUEUES");
    if (!env || !*env) return;
    const long n = std::strtol(env, nullptr, 10);
    if (n >= 1 && n <= 64)
        g_presented = uint32_t(n);
    else
        std::fprintf(stderr, "VK_LAYER_SLIPSTREAM_test_extra_queues: ignored SLIPSTREAM_TEST_QUEUES=%s\n", env);
}

// A queue handed to the layers above. Its first word is the loader's dispatch pointer, copied
// from the driver's queue, so the loader and every layer above find the device's tables through
// it as through any queue of the device.
struct PresentedQueue {
    void* loader_data = nullptr;
    VkQueue driver = VK_NULL_HANDLE;
    std::mutex* driver_lock = nullptr;  // shared by every presented queue of one driver queue
    std::deque<std::unique_ptr<CopiedSubmit>> held;  // waiting for their signals, in order
};

PresentedQueue* presented(VkQueue queue) { return reinterpret_cast<PresentedQueue*>(queue); }

template <typename Handle>
std::string pointer_text(Handle h) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", reinterpret_cast<const void*>(h));
    return text;
}

struct DeviceState : DeviceBase {
    std::vector<uint32_t> driver_counts;  // the driver's queues per family
    std::mutex mutex;  // the queues, their held submissions, the signal book
    std::condition_variable held_gone;
    SignalBook book;
    // (family, index, flags) -> the queue handed out for it, created at its first request.
    std::map<std::tuple<uint32_t, uint32_t, VkDeviceQueueCreateFlags>, std::unique_ptr<PresentedQueue>> queues;
    std::unordered_map<VkQueue, std::unique_ptr<std::mutex>> driver_locks;
};

std::once_flag g_config_once;
LayerState<DeviceState> g_layer;

template <typename Dispatchable>
const VkLayerDispatchTable& next(Dispatchable d) {
    return g_layer.of(d)->dispatch;
}

uint32_t presented_count(uint32_t driver_count) { return std::max(driver_count, g_presented); }

// --- instance: the families as presented -------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator, VkInstance* pInstance) {
    std::call_once(g_config_once, read_config);
    return g_layer.create_instance(pCreateInfo, pAllocator, pInstance);
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_instance(instance, pAllocator);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties(VkPhysicalDevice gpu, uint32_t* count,
                                                                  VkQueueFamilyProperties* props) {
    g_layer.instance(key_of(gpu))->dispatch.GetPhysicalDeviceQueueFamilyProperties(gpu, count, props);
    for (uint32_t i = 0; props && i < *count; ++i) props[i].queueCount = presented_count(props[i].queueCount);
}

void present_families2(uint32_t* count, VkQueueFamilyProperties2* props) {
    for (uint32_t i = 0; props && i < *count; ++i)
        props[i].queueFamilyProperties.queueCount = presented_count(props[i].queueFamilyProperties.queueCount);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties2(VkPhysicalDevice gpu, uint32_t* count,
                                                                   VkQueueFamilyProperties2* props) {
    g_layer.instance(key_of(gpu))->dispatch.GetPhysicalDeviceQueueFamilyProperties2(gpu, count, props);
    present_families2(count, props);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties2KHR(VkPhysicalDevice gpu, uint32_t* count,
                                                                      VkQueueFamilyProperties2* props) {
    g_layer.instance(key_of(gpu))->dispatch.GetPhysicalDeviceQueueFamilyProperties2KHR(gpu, count, props);
    present_families2(count, props);
}

// --- the device: created with the driver's counts ----------------------------------------

std::vector<uint32_t> driver_queue_counts(InstanceState* instance, VkPhysicalDevice gpu) {
    uint32_t n = 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(gpu, &n, nullptr);
    std::vector<VkQueueFamilyProperties> props(n);
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(gpu, &n, props.data());
    std::vector<uint32_t> counts;
    for (const auto& p : props) counts.push_back(p.queueCount);
    return counts;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    InstanceState* instance = g_layer.instance(key_of(physicalDevice));
    if (!instance) return VK_ERROR_INITIALIZATION_FAILED;
    auto state = std::make_unique<DeviceState>();
    state->driver_counts = driver_queue_counts(instance, physicalDevice);
    // The driver is asked for no more queues of a family than it has (their priorities are
    // the first ones the application gave).
    const VkDeviceQueueCreateInfo* asked = pCreateInfo->pQueueCreateInfos;
    std::vector<VkDeviceQueueCreateInfo> queue_infos(asked, asked + pCreateInfo->queueCreateInfoCount);
    for (VkDeviceQueueCreateInfo& q : queue_infos)
        if (q.queueFamilyIndex < state->driver_counts.size())
            q.queueCount = std::min(q.queueCount, state->driver_counts[q.queueFamilyIndex]);
    VkDeviceCreateInfo info = *pCreateInfo;
    info.pQueueCreateInfos = queue_infos.data();
    return g_layer.create_device(physicalDevice, &info, pAllocator, pDevice, std::move(state),
                                 [](DeviceState&, VkDevice) {});
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_device(device, pAllocator);  // and with it every queue handed out
}

// --- queues: handed out once per (family, index, flags), translated on every call --------

VkQueue hand_out(DeviceState* d, VkDevice device, uint32_t family, uint32_t index, VkDeviceQueueCreateFlags flags,
                 VkQueue driver_queue) {
    if (!driver_queue) return VK_NULL_HANDLE;
    std::lock_guard<std::mutex> lock(d->mutex);
    auto& slot = d->queues[{family, index, flags}];
    if (!slot) {
        auto& driver_lock = d->driver_locks[driver_queue];
        if (!driver_lock) driver_lock = std::make_unique<std::mutex>();
        slot = std::make_unique<PresentedQueue>();
        slot->loader_data = key_of(device);
        slot->driver = driver_queue;
        slot->driver_lock = driver_lock.get();
    }
    return reinterpret_cast<VkQueue>(slot.get());
}

uint32_t driver_index(const DeviceState* d, uint32_t family, uint32_t index) {
    const uint32_t n = family < d->driver_counts.size() ? d->driver_counts[family] : 0;
    return n ? index % n : index;
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index, VkQueue* pQueue) {
    DeviceState* d = g_layer.of(device);
    VkQueue driver_queue = VK_NULL_HANDLE;
    d->dispatch.GetDeviceQueue(device, family, driver_index(d, family, index), &driver_queue);
    *pQueue = hand_out(d, device, family, index, 0, driver_queue);
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* pInfo, VkQueue* pQueue) {
    DeviceState* d = g_layer.of(device);
    VkDeviceQueueInfo2 info = *pInfo;
    info.queueIndex = driver_index(d, pInfo->queueFamilyIndex, pInfo->queueIndex);
    VkQueue driver_queue = VK_NULL_HANDLE;
    d->dispatch.GetDeviceQueue2(device, &info, &driver_queue);
    *pQueue = hand_out(d, device, pInfo->queueFamilyIndex, pInfo->queueIndex, pInfo->flags, driver_queue);
}

// A driver queue shared by presented queues is still externally synchronized: one call at a time.
template <typename Call>
auto on_driver_queue(VkQueue queue, Call call) {
    PresentedQueue* q = presented(queue);
    std::lock_guard<std::mutex> lock(*q->driver_lock);
    return call(next(queue), q->driver);
}

// --- SLIPSTREAM_TEST_QUEUES_TRACE: what reaches the driver, one line per batch ------------

// One batch as the trace prints it: handles as pointers, timeline values after '='.
struct TracedBatch {
    std::vector<const void*> cbs;
    std::vector<std::pair<const void*, uint64_t>> waits, signals;
};

TracedBatch traced(const VkSubmitInfo& si) {
    const VkTimelineSemaphoreSubmitInfo* values = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(si.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
            values = reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(p);
    TracedBatch b;
    for (uint32_t i = 0; i < si.commandBufferCount; ++i) b.cbs.push_back(si.pCommandBuffers[i]);
    for (uint32_t i = 0; i < si.waitSemaphoreCount; ++i)
        b.waits.push_back({si.pWaitSemaphores[i],
                           values && i < values->waitSemaphoreValueCount ? values->pWaitSemaphoreValues[i] : 0});
    for (uint32_t i = 0; i < si.signalSemaphoreCount; ++i)
        b.signals.push_back({si.pSignalSemaphores[i],
                             values && i < values->signalSemaphoreValueCount ? values->pSignalSemaphoreValues[i] : 0});
    return b;
}

TracedBatch traced(const VkSubmitInfo2& si) {
    TracedBatch b;
    for (uint32_t i = 0; i < si.commandBufferInfoCount; ++i) b.cbs.push_back(si.pCommandBufferInfos[i].commandBuffer);
    for (uint32_t i = 0; i < si.waitSemaphoreInfoCount; ++i)
        b.waits.push_back({si.pWaitSemaphoreInfos[i].semaphore, si.pWaitSemaphoreInfos[i].value});
    for (uint32_t i = 0; i < si.signalSemaphoreInfoCount; ++i)
        b.signals.push_back({si.pSignalSemaphoreInfos[i].semaphore, si.pSignalSemaphoreInfos[i].value});
    return b;
}

// On stderr, where the validation layer's messages go: a message about a submission comes just
// before its line (the validation layer sits above this one).
template <typename Info>
void trace_submit(VkQueue queue, uint32_t count, const Info* submits, VkFence fence) {
    static const bool on = std::getenv("SLIPSTREAM_TEST_QUEUES_TRACE") != nullptr;
    if (!on) return;
    for (uint32_t i = 0; i < count; ++i) {
        const TracedBatch b = traced(submits[i]);
        std::string line = "extra_queues: queue " + pointer_text(queue) + " waits";
        auto values = [&](const std::vector<std::pair<const void*, uint64_t>>& list) {
            for (const auto& [semaphore, value] : list) line += " " + pointer_text(semaphore) + "=" + std::to_string(value);
        };
        values(b.waits);
        line += " cbs";
        for (const void* cb : b.cbs) line += " " + pointer_text(cb);
        line += " signals";
        values(b.signals);
        if (fence && i + 1 == count) line += " fence " + pointer_text(fence);
        std::fprintf(stderr, "%s\n", line.c_str());
    }
}

// --- submissions: to the driver, or held until their waits have signals submitted -------

// `held` to the driver queue of `q` (with d.mutex held).
VkResult forward(const VkLayerDispatchTable& t, PresentedQueue& q, CopiedSubmit& held) {
    std::lock_guard<std::mutex> lock(*q.driver_lock);
    if (!held.v2) {
        trace_submit(reinterpret_cast<VkQueue>(&q), uint32_t(held.infos.size()), held.infos.data(), held.fence);
        return t.QueueSubmit(q.driver, uint32_t(held.infos.size()), held.infos.data(), held.fence);
    }
    trace_submit(reinterpret_cast<VkQueue>(&q), uint32_t(held.infos2.size()), held.infos2.data(), held.fence);
    auto submit2 = held.khr ? t.QueueSubmit2KHR : t.QueueSubmit2;
    return submit2(q.driver, uint32_t(held.infos2.size()), held.infos2.data(), held.fence);
}

// Every held submission whose waits now have their signals goes, in each queue's order, until
// none can (with d.mutex held).
void release_held(DeviceState& d) {
    for (bool progress = true; progress;) {
        progress = false;
        for (auto& [key, q] : d.queues) {
            while (!q->held.empty() && d.book.satisfiable(q->held.front()->waits)) {
                CopiedSubmit& h = *q->held.front();
                const VkResult r = forward(d.dispatch, *q, h);
                if (r != VK_SUCCESS)
                    std::fprintf(stderr, "VK_LAYER_SLIPSTREAM_test_extra_queues: a held submission failed (%d)\n", int(r));
                else
                    d.book.forwarded(h.waits, h.signals);
                q->held.pop_front();
                progress = true;
            }
        }
    }
    d.held_gone.notify_all();
}

template <typename Info, typename Submit>
VkResult submit_or_hold(VkQueue queue, uint32_t count, const Info* submits, VkFence fence, bool khr, Submit submit) {
    DeviceState& d = *g_layer.of(queue);
    PresentedQueue& q = *presented(queue);
    std::vector<SemaphoreUse> waits, signals;
    semaphore_uses(count, submits, waits, signals);
    std::lock_guard<std::mutex> lock(d.mutex);
    const bool now = q.held.empty() && d.book.satisfiable(waits);
    if (now || !CopiedSubmit::copyable(count, submits)) {
        if (!now)
            std::fprintf(stderr, "VK_LAYER_SLIPSTREAM_test_extra_queues: a submission that waits before its signal "
                                 "has a pNext chain this layer cannot copy: it goes to the driver now\n");
        VkResult r;
        {
            std::lock_guard<std::mutex> driver(*q.driver_lock);
            trace_submit(queue, count, submits, fence);
            r = submit(d.dispatch, q.driver);
        }
        if (r != VK_SUCCESS) return r;
        d.book.forwarded(waits, signals);
        release_held(d);
        return VK_SUCCESS;
    }
    if constexpr (std::is_same_v<Info, VkSubmitInfo>) q.held.push_back(std::make_unique<CopiedSubmit>(count, submits, fence));
    else q.held.push_back(std::make_unique<CopiedSubmit>(count, submits, fence, khr));
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    return submit_or_hold(queue, count, submits, fence, false, [&](const VkLayerDispatchTable& t, VkQueue q) {
        return t.QueueSubmit(q, count, submits, fence);
    });
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                            VkFence fence) {
    return submit_or_hold(queue, count, submits, fence, false, [&](const VkLayerDispatchTable& t, VkQueue q) {
        return t.QueueSubmit2(q, count, submits, fence);
    });
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits,
                                               VkFence fence) {
    return submit_or_hold(queue, count, submits, fence, true, [&](const VkLayerDispatchTable& t, VkQueue q) {
        return t.QueueSubmit2KHR(q, count, submits, fence);
    });
}

// Idle waits first wait for the queue's (the device's) held submissions to leave.
VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    DeviceState& d = *g_layer.of(queue);
    {
        std::unique_lock<std::mutex> lock(d.mutex);
        d.held_gone.wait(lock, [&] { return presented(queue)->held.empty(); });
    }
    return on_driver_queue(queue, [&](const VkLayerDispatchTable& t, VkQueue q) { return t.QueueWaitIdle(q); });
}
VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    DeviceState& d = *g_layer.of(device);
    {
        std::unique_lock<std::mutex> lock(d.mutex);
        d.held_gone.wait(lock, [&] {
            for (auto& entry : d.queues)
                if (!entry.second->held.empty()) return false;
            return true;
        });
    }
    return d.dispatch.DeviceWaitIdle(device);
}

// --- semaphores: what the signal book follows ----------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateSemaphore(VkDevice device, const VkSemaphoreCreateInfo* info,
                                               const VkAllocationCallbacks* allocator, VkSemaphore* semaphore) {
    DeviceState& d = *g_layer.of(device);
    const VkResult r = d.dispatch.CreateSemaphore(device, info, allocator, semaphore);
    if (r != VK_SUCCESS) return r;
    bool timeline = false;
    uint64_t initial = 0;
    for (auto* p = static_cast<const VkBaseInStructure*>(info->pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
            const auto* type = reinterpret_cast<const VkSemaphoreTypeCreateInfo*>(p);
            timeline = type->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE;
            initial = type->initialValue;
        }
    std::lock_guard<std::mutex> lock(d.mutex);
    d.book.created(*semaphore, timeline, initial);
    return r;
}
VKAPI_ATTR void VKAPI_CALL DestroySemaphore(VkDevice device, VkSemaphore semaphore,
                                            const VkAllocationCallbacks* allocator) {
    DeviceState& d = *g_layer.of(device);
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.book.destroyed(semaphore);
    }
    d.dispatch.DestroySemaphore(device, semaphore, allocator);
}
VkResult signal_from_host(VkDevice device, const VkSemaphoreSignalInfo* info, PFN_vkSignalSemaphore signal) {
    DeviceState& d = *g_layer.of(device);
    const VkResult r = signal(device, info);
    if (r != VK_SUCCESS) return r;
    std::lock_guard<std::mutex> lock(d.mutex);
    d.book.host_signaled(info->semaphore, info->value);
    release_held(d);
    return r;
}
VKAPI_ATTR VkResult VKAPI_CALL SignalSemaphore(VkDevice device, const VkSemaphoreSignalInfo* info) {
    return signal_from_host(device, info, g_layer.of(device)->dispatch.SignalSemaphore);
}
VKAPI_ATTR VkResult VKAPI_CALL SignalSemaphoreKHR(VkDevice device, const VkSemaphoreSignalInfo* info) {
    return signal_from_host(device, info, g_layer.of(device)->dispatch.SignalSemaphoreKHR);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueBindSparse(VkQueue queue, uint32_t count, const VkBindSparseInfo* infos,
                                               VkFence fence) {
    return on_driver_queue(queue, [&](const VkLayerDispatchTable& t, VkQueue q) {
        return t.QueueBindSparse(q, count, infos, fence);
    });
}
VKAPI_ATTR VkResult VKAPI_CALL QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
    return on_driver_queue(queue, [&](const VkLayerDispatchTable& t, VkQueue q) { return t.QueuePresentKHR(q, info); });
}
VKAPI_ATTR void VKAPI_CALL QueueBeginDebugUtilsLabelEXT(VkQueue queue, const VkDebugUtilsLabelEXT* label) {
    on_driver_queue(queue, [&](const VkLayerDispatchTable& t, VkQueue q) { t.QueueBeginDebugUtilsLabelEXT(q, label); });
}
VKAPI_ATTR void VKAPI_CALL QueueEndDebugUtilsLabelEXT(VkQueue queue) {
    on_driver_queue(queue, [&](const VkLayerDispatchTable& t, VkQueue q) { t.QueueEndDebugUtilsLabelEXT(q); });
}
VKAPI_ATTR void VKAPI_CALL QueueInsertDebugUtilsLabelEXT(VkQueue queue, const VkDebugUtilsLabelEXT* label) {
    on_driver_queue(queue,
                    [&](const VkLayerDispatchTable& t, VkQueue q) { t.QueueInsertDebugUtilsLabelEXT(q, label); });
}

#define HOOK(name) {"vk" #name, reinterpret_cast<PFN_vkVoidFunction>(name)}
const Hook kInstanceHooks[] = {
    HOOK(CreateInstance),
    HOOK(DestroyInstance),
    HOOK(CreateDevice),
    HOOK(GetPhysicalDeviceQueueFamilyProperties),
    HOOK(GetPhysicalDeviceQueueFamilyProperties2),
    HOOK(GetPhysicalDeviceQueueFamilyProperties2KHR),
};
// Every device command that takes a VkQueue the driver could have (vk.xml; lavapipe and the
// devices these tests run on have no others): a presented queue must never reach the driver.
// And what held submissions need: idle waits, and what semaphores signal outside submissions.
const Hook kDeviceHooks[] = {
    HOOK(DestroyDevice),
    HOOK(GetDeviceQueue),
    HOOK(GetDeviceQueue2),
    HOOK(QueueSubmit),
    HOOK(QueueSubmit2),
    HOOK(QueueSubmit2KHR),
    HOOK(QueueWaitIdle),
    HOOK(DeviceWaitIdle),
    HOOK(CreateSemaphore),
    HOOK(DestroySemaphore),
    HOOK(SignalSemaphore),
    HOOK(SignalSemaphoreKHR),
    HOOK(QueueBindSparse),
    HOOK(QueuePresentKHR),
    HOOK(QueueBeginDebugUtilsLabelEXT),
    HOOK(QueueEndDebugUtilsLabelEXT),
    HOOK(QueueInsertDebugUtilsLabelEXT),
};
#undef HOOK

}  // namespace

SLIPSTREAM_TEST_LAYER_ENTRY_POINTS(g_layer, kInstanceHooks, kDeviceHooks)
