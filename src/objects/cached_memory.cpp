#include "objects/cached_memory.h"

#include "core/log.h"
#include "objects/alloc_cache.h"

#include <chrono>
#include <cstring>

namespace slipstream::objects {

namespace {
// How often a keep may ask VK_EXT_memory_budget whether the heap is under pressure: the query
// costs a driver call, the pressure changes slowly.
constexpr int64_t kBudgetCheckNs = 1'000'000;

bool out_of_memory(VkResult r) {
    return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_TOO_MANY_OBJECTS;
}

void release(DeviceState& d, const std::vector<VkDeviceMemory>& memories) {
    for (VkDeviceMemory m : memories) {
        d.dispatch.FreeMemory(d.device, m, nullptr);
        d.stats.add(Counter::AllocCacheTrims);
    }
}

// Zeroes a recycled host-visible allocation (the whole of it: a map of VK_WHOLE_SIZE sees it
// all). False when the driver would not map it.
bool zero(DeviceState& d, VkDeviceMemory memory, uint32_t type, VkDeviceSize size) {
    void* p = nullptr;
    if (d.dispatch.MapMemory(d.device, memory, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS) return false;
    std::memset(p, 0, size_t(size));
    bool ok = true;
    if (!(d.memory_properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = memory;
        range.size = VK_WHOLE_SIZE;
        ok = d.dispatch.FlushMappedMemoryRanges(d.device, 1, &range) == VK_SUCCESS;
    }
    d.dispatch.UnmapMemory(d.device, memory);
    return ok;
}

// With VK_EXT_memory_budget: trims the heap of `type` when the driver says it is under pressure.
void check_budget(DeviceState& d, AllocCache& cache, uint32_t type) {
    if (!d.memory_budget) return;
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count();
    int64_t last = d.memory_budget_checked_ns.load(std::memory_order_relaxed);
    if (now - last < kBudgetCheckNs ||
        !d.memory_budget_checked_ns.compare_exchange_strong(last, now, std::memory_order_relaxed))
        return;
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    props.pNext = &budget;
    d.instance->dispatch.GetPhysicalDeviceMemoryProperties2(d.physical_device, &props);
    const uint32_t heap = d.memory_properties.memoryTypes[type].heapIndex;
    if (AllocCache::under_pressure(budget.heapUsage[heap], budget.heapBudget[heap])) release(d, cache.trim_heap(heap));
}
}  // namespace

VkResult allocate_memory(DeviceState& d, const VkMemoryAllocateInfo* info, const VkAllocationCallbacks* allocator,
                         VkDeviceMemory* memory) {
    AllocCache* cache = d.alloc_cache.get();
    if (!cache) return d.dispatch.AllocateMemory(d.device, info, allocator, memory);
    const std::optional<VkMemoryAllocateFlags> flags = AllocCache::plain(*info, allocator);
    const uint32_t type = info->memoryTypeIndex;
    const bool followed = flags && cache->qualifies(type, info->allocationSize);
    if (followed) {
        const AllocCache::Taken t = cache->take(type, *flags, info->allocationSize);
        if (t.memory) {
            if (!d.settings.alloc_cache_zero || zero(d, t.memory, type, t.size)) {
                if (d.settings.alloc_cache_zero) d.stats.add(Counter::AllocCacheZeroed);
                d.stats.add(Counter::AllocCacheHits);
                *memory = t.memory;
                return VK_SUCCESS;
            }
            cache->dropped(t.memory);  // unmappable after all: the driver's, and a fresh one below
            d.dispatch.FreeMemory(d.device, t.memory, nullptr);
        }
        d.stats.add(Counter::AllocCacheMisses);
    }
    release(d, cache->make_room());
    VkResult r = d.dispatch.AllocateMemory(d.device, info, allocator, memory);
    if (out_of_memory(r)) {
        // Memory the cache holds may be what the driver lacks: the application must not see an
        // error it would not have seen without the layer.
        const std::vector<VkDeviceMemory> all = cache->trim_all();
        if (!all.empty()) {
            release(d, all);
            d.stats.add(Counter::AllocCacheRetries);
            r = d.dispatch.AllocateMemory(d.device, info, allocator, memory);
        }
    }
    if (r == VK_SUCCESS) cache->allocated(*memory, followed, type, flags.value_or(0), info->allocationSize);
    return r;
}

void free_memory(DeviceState& d, VkDeviceMemory memory, const VkAllocationCallbacks* allocator) {
    AllocCache* cache = d.alloc_cache.get();
    bool is_mapped = false;
    uint32_t type = 0;
    if (!cache || !memory || !cache->wants(memory, &is_mapped, &type)) {
        d.dispatch.FreeMemory(d.device, memory, allocator);
        return;
    }
    // (wants() follows only allocations made with a null allocator.) The mapping goes before
    // anyone else can take it: vkFreeMemory would have ended it.
    if (is_mapped) d.dispatch.UnmapMemory(d.device, memory);
    std::vector<VkDeviceMemory> evicted;
    const bool kept = cache->keep(memory, &evicted);
    release(d, evicted);
    if (!kept) {
        d.dispatch.FreeMemory(d.device, memory, nullptr);
        return;
    }
    d.stats.add(Counter::AllocCacheKept);
    if (d.stats.enabled()) d.stats.raise(Counter::AllocCacheBytesHeld, cache->held_total());
    check_budget(d, *cache, type);
}

void memory_mapped(DeviceState& d, VkDeviceMemory memory, bool mapped) {
    if (d.alloc_cache && memory) d.alloc_cache->mapped(memory, mapped);
}

void destroy_cached_memory(DeviceState& d) {
    if (!d.alloc_cache) return;
    for (VkDeviceMemory m : d.alloc_cache->drain()) d.dispatch.FreeMemory(d.device, m, nullptr);
}

}  // namespace slipstream::objects
