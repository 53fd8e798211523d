// Timeline semaphores kept for reuse instead of destroyed (issue 22): a vkCreateSemaphore +
// vkDestroySemaphore pair of a timeline semaphore costs ~460 µs on an H200 (NVIDIA 580), where
// a binary one costs half a microsecond, so a runtime that makes one per operation pays more for
// it than for the operation.
//
// A driver timeline semaphore's counter never goes back. One handed out again stands at the
// value C its last user left it at, while the application asked for `initialValue`: the layer
// maps every application value x to the driver's x + offset, offset = C - initialValue (below
// C, a host signal first takes the counter up to initialValue, and the offset is 0). Only
// semaphores with a nonzero offset are translated (TimelineOffsets below; the translation
// itself is timeline_values.h), and one atomic load says whether any is alive.
//
// Overflow. A semaphore whose counter reached kTimelineReuseLimit (2^62) is not kept, so every
// offset stays below it and application values up to UINT64_MAX - offset (at least 3 * 2^62)
// map exactly. Above that a value saturates at UINT64_MAX: a signal or wait of such a value
// acts as one of UINT64_MAX, and the counter read back is UINT64_MAX - offset.
//
// This class is the policy only (what qualifies, what is kept, what a request may take, the
// bound, the offsets of live semaphores); it makes no driver call (pooled_timelines.h does),
// so unit tests drive it with made-up handles.
//
// Only where it pays (pool_cost.h): the pool learns what the driver's create and destroy cost,
// what its own path costs and what translating values costs per hand-out; while the driver is
// cheaper, creates go to the driver (no offset, so nothing to translate) and the semaphores
// they make are not followed.
//
// Thread safety: the pool's lists behind one mutex, taken by vkCreateSemaphore and
// vkDestroySemaphore of plain timeline semaphores while some semaphore is followed, and by
// imports and exports; the offsets behind a reader/writer lock that submissions and waits take
// only while an offset is alive.
#pragma once

#include "objects/pool_cost.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream::objects {

// Counters at or above this are not kept (see Overflow above).
constexpr uint64_t kTimelineReuseLimit = uint64_t(1) << 62;
// The largest host signal that takes a pooled counter up to a request's initial value: the
// smallest maxTimelineSemaphoreValueDifference a device may have, so no device refuses it.
constexpr uint64_t kTimelineHostStep = 0x7fffffffu;

// Application value -> driver value, saturating at UINT64_MAX.
inline uint64_t timeline_to_driver(uint64_t value, uint64_t offset) {
    return value > UINT64_MAX - offset ? UINT64_MAX : value + offset;
}
// Driver value -> application value (a driver counter never stands below its offset).
inline uint64_t timeline_to_app(uint64_t value, uint64_t offset) { return value >= offset ? value - offset : 0; }

// The offsets of live timeline semaphores handed out from the pool (only nonzero ones).
class TimelineOffsets {
public:
    // Any semaphore with an offset alive (one atomic load: the fast path of every translation).
    bool any() const { return count_.load(std::memory_order_acquire) != 0; }
    // The semaphore's offset, 0 for none.
    uint64_t find(VkSemaphore semaphore) const;
    // Sets (nonzero) or forgets (0) the semaphore's offset.
    void set(VkSemaphore semaphore, uint64_t offset);
    size_t size() const;

private:
    mutable std::shared_mutex mutex_;
    std::unordered_map<VkSemaphore, uint64_t> map_;
    std::atomic<uint32_t> count_{0};
};

// How a pooled semaphore whose counter stands at `counter` can serve a request for
// `initial`: usable with this offset, after a host signal to `signal_to` (0: none).
struct TimelineReuse {
    bool usable = false;
    uint64_t offset = 0;
    uint64_t signal_to = 0;
};
TimelineReuse plan_timeline_reuse(uint64_t counter, uint64_t initial);

class TimelinePool {
public:
    // `bound`: semaphores pooled at most; `always`: pool whatever it costs.
    explicit TimelinePool(size_t bound, bool always = false)
        : bound_(bound), cost_(always, "timeline semaphore pool") {}
    TimelinePool(const TimelinePool&) = delete;
    TimelinePool& operator=(const TimelinePool&) = delete;

    // Whether a vkCreateSemaphore may be served from the pool (and its semaphore come back to
    // it): a timeline semaphore whose pNext holds only its VkSemaphoreTypeCreateInfo, no flags,
    // no allocator. `*initial` gets its initial value. Binary semaphores cost nothing to create.
    static bool plain(const VkSemaphoreCreateInfo& info, const VkAllocationCallbacks* allocator, uint64_t* initial) {
        if (allocator || info.flags || !info.pNext) return false;
        const auto* type = static_cast<const VkBaseInStructure*>(info.pNext);
        if (type->sType != VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO || type->pNext) return false;
        const auto* t = reinterpret_cast<const VkSemaphoreTypeCreateInfo*>(type);
        if (t->semaphoreType != VK_SEMAPHORE_TYPE_TIMELINE) return false;
        *initial = t->initialValue;
        return true;
    }

    struct Grant {
        VkSemaphore semaphore = VK_NULL_HANDLE;  // null: nothing suitable, the driver creates one
        uint64_t counter = 0;                    // its counter when it was kept
        TimelineReuse reuse;                     // how it serves the request
    };
    // A pooled semaphore for a plain request with this initial value, newest first among
    // those plan_timeline_reuse accepts.
    Grant take(uint64_t initial);

    // A plain create succeeded (served by the pool with `offset`, or by the driver with 0).
    void created(VkSemaphore semaphore, uint64_t offset);
    // Exported from: it goes to the driver at its destroy.
    void not_poolable(VkSemaphore semaphore);
    // A payload imported into it (timeline imports are permanent): its values are the
    // imported payload's from now on, so its offset goes, and it goes to the driver at its destroy.
    void payload_imported(VkSemaphore semaphore);
    // At vkDestroySemaphore with a null allocator: forgets the semaphore's offset and its
    // liveness; whether it may be kept (so the caller reads its counter). `*not_worth` (when
    // given): a followed semaphore refused because pooling does not pay (any more).
    bool wants(VkSemaphore semaphore, bool* not_worth = nullptr);
    // Whether any semaphore is followed (as FencePool::following).
    bool following() const { return live_count_.load(std::memory_order_relaxed) != 0; }
    // Pooling stopped paying: the semaphores followed so far go to the driver at their destroy
    // (as wants() would decide; their offsets stay until then), so that destroys take no lock.
    void forget_live();
    // Keeps a semaphore wants() accepted whose counter stands at `counter`, unless the counter
    // is too high or the bound was reached since.
    bool keep(VkSemaphore semaphore, uint64_t counter);

    // Everything pooled, the pool emptied (vkDestroyDevice: the device is idle by then).
    std::vector<VkSemaphore> drain();

    // A submission went untranslated (timeline_values.h): true the first time only, for a log.
    bool first_untranslated() { return !untranslated_.exchange(true, std::memory_order_relaxed); }

    size_t pooled() const;
    size_t bound() const { return bound_; }
    PoolCost& cost() { return cost_; }
    TimelineOffsets& offsets() { return offsets_; }
    const TimelineOffsets& offsets() const { return offsets_; }

private:
    struct Kept {
        VkSemaphore semaphore;
        uint64_t counter;
    };
    const size_t bound_;
    mutable std::mutex mutex_;
    std::unordered_set<VkSemaphore> live_;  // created plainly, not shared, not destroyed
    std::atomic<size_t> live_count_{0};     // live_.size(), for following()
    std::vector<Kept> kept_;
    TimelineOffsets offsets_;
    std::atomic<bool> untranslated_{false};
    PoolCost cost_;
};

}  // namespace slipstream::objects
