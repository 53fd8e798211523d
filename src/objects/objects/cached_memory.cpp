#include "objects/cached_memory.h"

#include "core/log.h"
#include "core/timeline_wait.h"
#include "objects/alloc_cache.h"
#include "objects/zero_fill.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace slipstream::objects {

namespace {
bool out_of_memory(VkResult r) {
    return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_TOO_MANY_OBJECTS;
}

// With z.mutex held.
QueueFiller* filler_of(GpuZero& z, PendingFills::QueueId id) {
    for (auto& [key, f] : z.queues)
        if (PendingFills::QueueId(reinterpret_cast<uintptr_t>(f.get())) == id) return f.get();
    return nullptr;
}

// Memory of the layer's domain goes back to the driver: a fill of it that may still run is
// waited for first (rare: the fill ran ahead of the application's work, which the application
// waited for before freeing; a trim can meet a fill no submission covered yet), and the fill
// buffer over it goes first.
void give_back(DeviceState& d, VkDeviceMemory memory) {
    if (GpuZero* z = d.gpu_zero.get()) {
        VkBuffer buffer = VK_NULL_HANDLE;
        std::optional<PendingFills::Ticket> t;
        QueueFiller* f = nullptr;
        {
            // Under the submissions' lock: a submission that took this memory's fill has
            // submitted it (a ticket) or failed (owed again, forgotten here) by then, never
            // records over a buffer destroyed meanwhile.
            std::lock_guard lock(z->mutex);
            t = z->fills.release(memory, &buffer);
            if (t) f = filler_of(*z, t->queue);
        }
        uint64_t value = 0;
        if (t && f && (z->counter_value(d.device, f->timeline, &value) != VK_SUCCESS || value < t->value)) {
            d.stats.add(Counter::AllocCacheFillHostWaits);
            // (A lost device answers at once: its work runs no more.)
            watch_device_loss(d, wait_for_value(z->wait_semaphores, d.device, f->timeline, t->value, UINT64_MAX));
        }
        if (buffer) d.dispatch.DestroyBuffer(d.device, buffer, nullptr);
    }
    d.dispatch.FreeMemory(d.device, memory, nullptr);
}

void release(DeviceState& d, const std::vector<VkDeviceMemory>& memories) {
    for (VkDeviceMemory m : memories) {
        give_back(d, m);
        d.stats.add(Counter::AllocCacheTrims);
    }
}

// The fill buffer of an allocation of a GPU-filled type, made and bound at its first keep.
// False: no buffer of TRANSFER_DST usage can cover it whole (its type is not in the buffer's
// memoryTypeBits, the buffer needs more than the allocation, or a call failed): not kept.
bool ensure_fill_buffer(DeviceState& d, GpuZero& z, VkDeviceMemory memory, uint32_t type, VkDeviceSize size) {
    if (z.fills.buffer_of(memory)) return true;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    // (Written only by our fills, on whichever queue they run; the application reads the memory
    // through resources of its own, first used after the fill.)
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (d.dispatch.CreateBuffer(d.device, &info, nullptr, &buffer) != VK_SUCCESS) return false;
    VkMemoryRequirements reqs{};
    d.dispatch.GetBufferMemoryRequirements(d.device, buffer, &reqs);
    if (!(reqs.memoryTypeBits & (1u << type)) || reqs.size > size ||
        d.dispatch.BindBufferMemory(d.device, buffer, memory, 0) != VK_SUCCESS) {
        d.dispatch.DestroyBuffer(d.device, buffer, nullptr);
        return false;
    }
    z.fills.set_buffer(memory, buffer);
    return true;
}

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
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

// zero(), its cost taught to the cache (what keeping such allocations costs).
bool zero_timed(DeviceState& d, AllocCache& cache, VkDeviceMemory memory, uint32_t type, VkDeviceSize size) {
    const int64_t t0 = steady_ns();
    const bool ok = zero(d, memory, type, size);
    if (ok) cache.zeroed(type, size, uint64_t(std::max<int64_t>(1, steady_ns() - t0)));
    return ok;
}

// With VK_EXT_memory_budget: trims the heap of `type` when the driver says it is under pressure.
// At most every AllocCache::budget_interval_ns, which follows what the query costs.
void check_budget(DeviceState& d, AllocCache& cache, uint32_t type) {
    if (!d.memory_budget) return;
    const int64_t now = steady_ns();
    int64_t last = d.memory_budget_checked_ns.load(std::memory_order_relaxed);
    if (now - last < d.memory_budget_interval_ns.load(std::memory_order_relaxed) ||
        !d.memory_budget_checked_ns.compare_exchange_strong(last, now, std::memory_order_relaxed))
        return;
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    props.pNext = &budget;
    d.instance->dispatch.GetPhysicalDeviceMemoryProperties2(d.physical_device, &props);
    d.memory_budget_interval_ns.store(AllocCache::budget_interval_ns(steady_ns() - now), std::memory_order_relaxed);
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
    const bool qualifies = flags && cache->qualifies(type, info->allocationSize);
    const bool followed = qualifies && cache->pays(type, info->allocationSize);
    if (followed) {
        const AllocCache::Taken t = cache->take(type, *flags, info->allocationSize);
        if (t.memory && cache->gpu_filled(type)) {
            // Handed out at once; zeroed by the GPU ahead of the application's next submission
            // (every kept allocation of such a type has its fill buffer).
            if (d.gpu_zero->fills.owe(t.memory, t.size)) {
                d.stats.add(Counter::AllocCacheZeroed);
                d.stats.add(Counter::AllocCacheHits);
                *memory = t.memory;
                return VK_SUCCESS;
            }
            cache->dropped(t.memory);
            give_back(d, t.memory);
        } else if (t.memory) {
            if (!d.settings.alloc_cache_zero || zero_timed(d, *cache, t.memory, type, t.size)) {
                if (d.settings.alloc_cache_zero) d.stats.add(Counter::AllocCacheZeroed);
                d.stats.add(Counter::AllocCacheHits);
                *memory = t.memory;
                return VK_SUCCESS;
            }
            cache->dropped(t.memory);  // unmappable after all: the driver's, and a fresh one below
            give_back(d, t.memory);
        }
        d.stats.add(Counter::AllocCacheMisses);
    }
    release(d, cache->make_room());
    // Timed where a keep must weigh it against zeroing (AllocCache::worth_keeping).
    const bool timed = qualifies && cache->host_zeroed(type) && (followed || cache->sample_driver());
    const int64_t t0 = timed ? steady_ns() : 0;
    VkResult r = d.dispatch.AllocateMemory(d.device, info, allocator, memory);
    const uint64_t driver_ns = timed ? uint64_t(std::max<int64_t>(1, steady_ns() - t0)) : 0;
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
    if (r == VK_SUCCESS) cache->allocated(*memory, followed, type, flags.value_or(0), info->allocationSize, driver_ns);
    return r;
}

void free_memory(DeviceState& d, VkDeviceMemory memory, const VkAllocationCallbacks* allocator) {
    AllocCache* cache = d.alloc_cache.get();
    bool is_mapped = false;
    uint32_t type = 0;
    VkDeviceSize size = 0;
    bool not_worth = false;
    if (!cache || !memory || !cache->wants(memory, &is_mapped, &type, &size, &not_worth)) {
        if (not_worth) d.stats.add(Counter::AllocCacheNotWorth);
        d.dispatch.FreeMemory(d.device, memory, allocator);
        return;
    }
    if (cache->gpu_filled(type)) {
        // A fill owed and not yet submitted is owed again only when it is handed out again.
        d.gpu_zero->fills.forgive(memory);
        if (!ensure_fill_buffer(d, *d.gpu_zero, memory, type, size)) {
            cache->let_go(memory);
            give_back(d, memory);
            return;
        }
    }
    // (wants() follows only allocations made with a null allocator.) The mapping goes before
    // anyone else can take it: vkFreeMemory would have ended it.
    if (is_mapped) d.dispatch.UnmapMemory(d.device, memory);
    std::vector<VkDeviceMemory> evicted;
    const bool kept = cache->keep(memory, &evicted);
    release(d, evicted);
    if (!kept) {
        give_back(d, memory);
        return;
    }
    d.stats.add(Counter::AllocCacheKept);
    if (d.stats.enabled()) {
        d.stats.raise(Counter::AllocCacheBytesHeld, cache->held_total());
        d.stats.raise(Counter::AllocCacheHeapBytesHeld, cache->held(d.memory_properties.memoryTypes[type].heapIndex));
    }
    check_budget(d, *cache, type);
}

void memory_mapped(DeviceState& d, VkDeviceMemory memory, bool mapped) {
    if (d.alloc_cache && memory) d.alloc_cache->mapped(memory, mapped);
}

void destroy_cached_memory(DeviceState& d) {
    if (!d.alloc_cache) return;
    GpuZero* z = d.gpu_zero.get();
    if (z) {
        // Our submissions end before anything they name goes (a lost device's at once).
        for (auto& [key, f] : z->queues) {
            if (!f->value) continue;
            wait_for_value(z->wait_semaphores, d.device, f->timeline, f->value, UINT64_MAX);
            z->fills.completed(PendingFills::QueueId(reinterpret_cast<uintptr_t>(f.get())), f->value);
        }
    }
    // (Fills still owed are simply dropped with their memory.)
    for (VkDeviceMemory m : d.alloc_cache->drain()) give_back(d, m);
    if (!z) return;
    for (VkBuffer buffer : z->fills.drain_buffers()) d.dispatch.DestroyBuffer(d.device, buffer, nullptr);
    for (auto& [key, f] : z->queues) {
        if (f->pool) d.dispatch.DestroyCommandPool(d.device, f->pool, nullptr);  // frees our command buffers
        if (f->timeline) d.dispatch.DestroySemaphore(d.device, f->timeline, nullptr);
    }
    z->queues.clear();
}

}  // namespace slipstream::objects
