// Memory allocations kept for reuse instead of freed (issue 22): some drivers charge ~0.6 ms
// for a vkAllocateMemory + vkFreeMemory pair (NVIDIA 580 on an H200), and naive runtimes make
// one per tensor, per staging upload and per readback.
//
// Recycling, not sub-allocation: vkFreeMemory of a plain allocation keeps the driver's
// allocation, and a later vkAllocateMemory of the same memory type (and allocate flags) whose
// size it covers gets that very VkDeviceMemory back. The application's handles stay the
// driver's, so no command that names memory needs translating; the price is that only sizes
// that come back are served.
//
// This class is the cache's policy only: what qualifies, which kept allocation serves a request,
// the bounds and what to trim. It makes no driver call (the glue in cached_memory.h frees,
// unmaps and zeroes), so unit tests drive it with made-up handles.
//
// What qualifies (plain()): no allocator, and no pNext but a VkMemoryAllocateFlagsInfo with
// flags of DEVICE_ADDRESS only and no device mask (buffer device address runtimes allocate so;
// the flags are part of what must match). Dedicated, exported, imported, priority and
// address-capture allocations go to the driver. Memory types that are PROTECTED or
// LAZILY_ALLOCATED never qualify, nor sizes above kSizeCap; types the host cannot map only
// where zeroing is off or the GPU fills them (zero_fill.h; then only sizes that are a multiple
// of 4, the granularity of vkCmdFillBuffer).
//
// Which kept allocation serves a request: the smallest of its type and flags whose size is at
// least the request's and at most 1/8 above (the waste of a size class of 8 steps per power of
// two, without rounding what the driver allocates). A host-visible request whose size is not a
// multiple of nonCoherentAtomSize takes only its exact size: flushing up to "the end of the
// allocation" is valid only at the allocation's real size.
//
// Only where it pays: a recycled allocation the host zeroes (memset) costs that zeroing at
// its next hand-out, and some drivers allocate for less than that (lavapipe: ~0.1 us for
// 64 KiB against ~0.9 us to zero it). Each type learns what the driver charges for an
// allocation and what zeroing costs per KiB (recent averages); a free keeps an allocation only
// while zeroing it again is expected to cost less than the driver charges for a new one.
//
// Bounds: bytes kept per heap (evicting the oldest kept allocations of the heap to make room
// for a newer one); and the application's live driver allocations plus those kept never above
// maxMemoryAllocationCount (make_room() before the driver allocates).
//
// Thread safety: one mutex per device, taken by vkAllocateMemory, vkFreeMemory, vkMapMemory and
// vkUnmapMemory of followed allocations only; no driver call is made under it. The counts and
// cost averages that let other allocations pass without it are atomics.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace slipstream::objects {

struct AllocCacheLimits {
    VkPhysicalDeviceMemoryProperties memory{};
    VkDeviceSize non_coherent_atom = 1;
    uint32_t max_allocations = 4096;                 // maxMemoryAllocationCount
    uint64_t heap_bound[VK_MAX_MEMORY_HEAPS] = {};   // bytes kept at most per heap
    bool host_invisible_types = false;               // may keep types the host cannot map
    bool gpu_fill = false;                           // ... zeroed by the GPU (sizes of 4n only)
    bool zero = false;                               // recycled memory is zeroed before reuse
    bool always = false;                             // keep even where zeroing costs more (pays())
};

class AllocCache {
public:
    static constexpr VkDeviceSize kSizeCap = VkDeviceSize(64) << 20;
    static constexpr uint64_t kDefaultBoundCap = uint64_t(256) << 20;

    // `mib` 0: min(256 MiB, 5% of the heap).
    static uint64_t heap_bound(VkDeviceSize heap_size, uint32_t mib);
    // The limits of a device (zeroing on: only host-visible types are kept, unless `gpu_fill`:
    // the GPU zeroes the others).
    static AllocCacheLimits limits_for(const VkPhysicalDeviceMemoryProperties& memory, const VkPhysicalDeviceLimits& limits,
                                       uint32_t mib, bool zero, bool gpu_fill = false);
    // Whether recycled memory of `type` is zeroed by the GPU (zeroing on, the host cannot map it).
    bool gpu_filled(uint32_t type) const {
        return limits_.gpu_fill && type < limits_.memory.memoryTypeCount &&
               !(limits_.memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    }
    // The allocate flags of a plain request (0 without a VkMemoryAllocateFlagsInfo); nullopt:
    // not plain, the driver serves it and it is never kept.
    static std::optional<VkMemoryAllocateFlags> plain(const VkMemoryAllocateInfo& info,
                                                      const VkAllocationCallbacks* allocator);
    // Whether the budget says the heap is under pressure (usage above 90% of the budget).
    static bool under_pressure(VkDeviceSize usage, VkDeviceSize budget) { return usage > budget - budget / 10; }
    // How long keeps wait between two budget queries, given what the last one cost: at least a
    // millisecond (pressure changes slowly), and long enough that the queries, made on the
    // application's thread, cost it at most 1% of its time (some drivers ask the kernel), up
    // to 100 ms (an out-of-memory error still trims everything and retries).
    static int64_t budget_interval_ns(int64_t query_ns) {
        constexpr int64_t kMin = 1'000'000, kMax = 100'000'000;
        return query_ns <= kMin / 100 ? kMin : query_ns >= kMax / 100 ? kMax : query_ns * 100;
    }

    // Whether keeping an allocation of `size` pays: zeroing it for its next hand-out, at
    // `zero_ns_per_kib` (0: not measured yet), against the `driver_ns` the driver charges for an
    // allocation of its type (0: not measured). Unknown costs keep it (a hand-out measures).
    static bool worth_keeping(VkDeviceSize size, uint64_t zero_ns_per_kib, uint64_t driver_ns) {
        return !zero_ns_per_kib || !driver_ns || (size + 1023) / 1024 * zero_ns_per_kib < driver_ns;
    }
    // Whether recycled memory of `type` is zeroed by the host (zeroing on, host-visible).
    bool host_zeroed(uint32_t type) const {
        return limits_.zero && type < limits_.memory.memoryTypeCount &&
               (limits_.memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    }
    // A hand-out of `type` was zeroed by the host: `bytes` in `ns` (an average of the recent ones
    // is kept per type).
    void zeroed(uint32_t type, VkDeviceSize bytes, uint64_t ns);
    // Whether following an allocation of `type` and `size` pays (worth_keeping with what the
    // type has taught so far; types the host does not zero always pay). Lock-free.
    bool pays(uint32_t type, VkDeviceSize size) const;
    // For a request that does not pay: whether to time the driver's allocation anyway (one in
    // 16), so that a driver that turns dear is noticed.
    bool sample_driver() { return (samples_.fetch_add(1, std::memory_order_relaxed) & 15) == 0; }

    explicit AllocCache(const AllocCacheLimits& limits) : limits_(limits) {}
    AllocCache(const AllocCache&) = delete;
    AllocCache& operator=(const AllocCache&) = delete;

    // Whether an allocation of this type and size may ever be kept.
    bool qualifies(uint32_t type, VkDeviceSize size) const;

    struct Taken {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkDeviceSize size = 0;  // the allocation's real size (at least the request's)
    };
    // A kept allocation for a qualifying request, out of the cache and live again. Null: none fits.
    Taken take(uint32_t type, VkMemoryAllocateFlags flags, VkDeviceSize size);

    // Before the driver allocates for the application: kept allocations to free first, so that
    // live ones, kept ones and the new one stay within maxMemoryAllocationCount.
    std::vector<VkDeviceMemory> make_room();
    // The driver allocated (or take() handed out) `memory` for the application. `followed`: a
    // qualifying request (its size as the driver allocated it), so its free may keep it;
    // `driver_ns`: what the driver's vkAllocateMemory took (0: not timed), averaged per type.
    void allocated(VkDeviceMemory memory, bool followed, uint32_t type = 0, VkMemoryAllocateFlags flags = 0,
                   VkDeviceSize size = 0, uint64_t driver_ns = 0);
    // A zeroing or retry gave a taken allocation back to the driver instead: no longer live.
    void dropped(VkDeviceMemory memory);
    // The driver's mapping of a followed allocation (vkMapMemory / vkUnmapMemory succeeded).
    void mapped(VkDeviceMemory memory, bool is_mapped);

    // vkFreeMemory: whether the cache wants the allocation (then the caller unmaps it if
    // `*is_mapped` and calls keep() or let_go()), its memory type and size. Forgets it as live
    // either way. `*not_worth` (when given): refused because keeping it does not pay.
    bool wants(VkDeviceMemory memory, bool* is_mapped, uint32_t* type, VkDeviceSize* size = nullptr,
               bool* not_worth = nullptr);
    // An allocation wants() accepted that the caller frees after all (its fill buffer could not be had).
    void let_go(VkDeviceMemory memory);
    // Keeps an allocation wants() accepted: true, with the older kept allocations to free to
    // make room in `evicted`; false (it is larger than the heap's bound): the caller frees it.
    bool keep(VkDeviceMemory memory, std::vector<VkDeviceMemory>* evicted);

    // Kept allocations to free: all of them, or those of one heap (out of memory, budget pressure).
    std::vector<VkDeviceMemory> trim_all();
    std::vector<VkDeviceMemory> trim_heap(uint32_t heap);
    // Everything kept, the cache emptied (vkDestroyDevice).
    std::vector<VkDeviceMemory> drain() { return trim_all(); }

    uint64_t held(uint32_t heap) const;
    uint64_t held_total() const;
    size_t kept() const;
    size_t live() const;
    const AllocCacheLimits& limits() const { return limits_; }

private:
    // Where a followed allocation is: the application's (live), between wants() and keep()
    // (leaving), or the cache's (kept). One entry per allocation for all three, so that the
    // allocate + free cycle of a recycled allocation moves no hash node.
    enum class State : uint8_t { Live, Leaving, Kept };
    struct Live {
        uint32_t type;
        VkMemoryAllocateFlags flags;
        VkDeviceSize size;
        bool mapped;
        State state = State::Live;
    };
    struct Kept {
        VkDeviceMemory memory;
        uint32_t type;
        VkMemoryAllocateFlags flags;
        VkDeviceSize size;
    };
    using ByAge = std::map<uint64_t, Kept>;                 // sequence number -> kept allocation
    using BySize = std::multimap<VkDeviceSize, uint64_t>;  // size -> sequence number
    using Key = uint64_t;  // type << 32 | flags
    static Key key(uint32_t type, VkMemoryAllocateFlags flags) { return uint64_t(type) << 32 | flags; }

    // With mutex_ held. remove_kept_locked leaves the allocation's entry in followed_ (take()
    // makes it live again); evict_locked also forgets it (it goes back to the driver).
    void remove_kept_locked(ByAge::iterator age);
    void evict_locked(ByAge::iterator age, std::vector<VkDeviceMemory>* out);
    uint32_t heap_of(uint32_t type) const { return limits_.memory.memoryTypes[type].heapIndex; }

    const AllocCacheLimits limits_;
    void drop_live();  // live_ less one, not below 0

    mutable std::mutex mutex_;
    std::unordered_map<VkDeviceMemory, Live> followed_;  // qualifying: live, leaving or kept
    // followed_.size(), read without the lock: while nothing is followed (every type's requests
    // go to the driver, recycling not paying) frees take no lock.
    std::atomic<size_t> followed_count_{0};
    size_t leaving_ = 0;                                 // entries between wants() and keep()
    std::atomic<size_t> live_{0};                        // every live application allocation
    // Kept allocations: by age (a sequence number, oldest first) and by type, flags and size.
    ByAge by_age_;
    std::map<Key, BySize> by_size_;
    // Tree nodes of kept allocations taken back, reused by the next keeps: an allocate + free
    // cycle of a recycled allocation then calls neither malloc nor free (a few spares suffice).
    static constexpr size_t kSpareNodes = 16;
    std::vector<ByAge::node_type> spare_age_;
    std::vector<BySize::node_type> spare_size_;
    uint64_t next_seq_ = 0;
    uint64_t held_[VK_MAX_MEMORY_HEAPS] = {};
    // Recent averages per type (0: not measured): zeroing per KiB, the driver's vkAllocateMemory;
    // each moved by the smaller of a sample and the one before (undisturbed, cost_average.h).
    std::atomic<uint64_t> zero_ns_per_kib_[VK_MAX_MEMORY_TYPES] = {};
    std::atomic<uint64_t> driver_ns_[VK_MAX_MEMORY_TYPES] = {};
    std::atomic<uint64_t> zero_last_ns_per_kib_[VK_MAX_MEMORY_TYPES] = {};
    std::atomic<uint64_t> driver_last_ns_[VK_MAX_MEMORY_TYPES] = {};
    std::atomic<uint32_t> samples_{0};
};

}  // namespace slipstream::objects
