// The GPU zero fill of recycled memory the host cannot map (issue 22), policy only.
//
// With VK_SLIPSTREAM_ALLOC_CACHE_ZERO on, a recycled allocation must read zeros, as fresh
// driver memory does on NVIDIA. Host-visible memory is zeroed by map + memset at vkAllocateMemory
// (cached_memory.cpp). Memory the host cannot map (device-local only) is zeroed by the GPU:
// vkAllocateMemory hands the kept allocation out at once and owes it a fill
// (vkCmdFillBuffer(0) over a buffer of the layer's that covers the whole allocation); the next
// submission of the application's, on any queue, first submits the fills owed, with a barrier
// TRANSFER write -> ALL_COMMANDS read|write, on that queue. Same-queue submission order then
// puts the zeros ahead of everything the application submits there afterwards. Such memory has
// no host access, so nothing else can see it before a submission.
//
// Other queues: until a fill is known complete, a submission on another queue waits for it on
// the GPU (an empty submission of the layer's there that waits on the filling queue's timeline
// semaphore), once per queue and fill: waits_for() / waited().
//
// Memory given back to the driver (trim, eviction, retry, vkDestroyDevice) while a fill of it
// may still run must wait for that fill first: in_flight().
//
// This class makes no driver call: the glue (fill_submission.cpp, cached_memory.cpp) records, submits and reads the
// timeline semaphores, and tells it what happened, so unit tests drive it with made-up handles.
// Queues are named by an opaque id (the glue uses its per-queue state's address).
//
// Thread safety: one mutex; active() is one atomic load (the submission path's fast check).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace slipstream::objects {

class PendingFills {
public:
    using QueueId = uint64_t;
    struct Fill {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkBuffer buffer = VK_NULL_HANDLE;  // the layer's, over the whole allocation
        VkDeviceSize size = 0;
    };
    struct Wait {
        QueueId queue;   // the queue whose fill the submission must wait for
        uint64_t value;  // ... its timeline value
    };
    struct Ticket {
        QueueId queue;
        uint64_t value;
    };

    // The layer's fill buffer over `memory` (made at its first keep), or null.
    void set_buffer(VkDeviceMemory memory, VkBuffer buffer);
    VkBuffer buffer_of(VkDeviceMemory memory) const;

    // vkAllocateMemory handed `memory` (of `size` bytes, with a fill buffer) out again: it owes
    // a fill before the application's next GPU work. Owed already (freed and handed out again
    // before a submission): once. False (nothing owed) if it has no fill buffer.
    bool owe(VkDeviceMemory memory, VkDeviceSize size);
    // vkFreeMemory kept it again before its fill was submitted: nothing is owed any more (the
    // next hand-out owes it again). True if it was owed.
    bool forgive(VkDeviceMemory memory);
    bool owes(VkDeviceMemory memory) const;

    // A submission on `queue` is about to go: the fills to record ahead of it (no longer owed;
    // submitted() or failed() must follow, under the caller's own serialization: see
    // fill_submission.cpp), in the order they were owed.
    std::vector<Fill> take();
    // They went to the driver on `queue`, whose timeline reaches `value` when they are done.
    void submitted(QueueId queue, uint64_t value, const std::vector<Fill>& fills);
    // The submission failed: they are owed again.
    void failed(const std::vector<Fill>& fills);

    // The fills of other queues a submission on `queue` must wait for: each queue's newest
    // value not known complete, that `queue` has not waited for yet.
    std::vector<Wait> waits_for(QueueId queue) const;
    void waited(QueueId queue, const Wait& wait);
    // The timeline of `queue` reached `value` (its fills up to it are done).
    void completed(QueueId queue, uint64_t value);
    // The newest fill value submitted on each queue not known complete (what to read).
    std::vector<Wait> unfinished() const;

    // Before `memory` goes back to the driver: the fill of it that may still run (the caller
    // waits for it), if any, and its fill buffer (`*buffer`, null if none: the caller destroys
    // it). Forgets the memory either way (owed or not).
    std::optional<Ticket> release(VkDeviceMemory memory, VkBuffer* buffer = nullptr);
    // Every fill buffer, forgotten (vkDestroyDevice).
    std::vector<VkBuffer> drain_buffers();

    // Fills owed, or fills submitted and not known complete: a submission must look.
    bool active() const { return active_.load(std::memory_order_acquire); }
    size_t owed() const;

private:
    void update_active_locked();

    struct Owed {
        uint64_t seq;  // the order owed
        VkBuffer buffer;
        VkDeviceSize size;
    };
    using OwedMap = std::unordered_map<VkDeviceMemory, Owed>;
    mutable std::mutex mutex_;
    OwedMap owed_;
    // Hash nodes of fills forgiven, reused by the next owe(): an allocation handed out and
    // freed again with no submission between them (its fill forgiven) then calls no malloc.
    static constexpr size_t kSpareNodes = 16;
    std::vector<OwedMap::node_type> spare_;
    std::unordered_map<VkDeviceMemory, VkBuffer> buffers_;
    uint64_t next_seq_ = 0;
    std::unordered_map<VkDeviceMemory, Ticket> filled_;  // the newest fill of each allocation
    struct QueueFills {
        uint64_t submitted = 0;
        uint64_t completed = 0;
        std::map<QueueId, uint64_t> waited;  // other queue -> the value this one waited for
    };
    std::map<QueueId, QueueFills> queues_;
    std::atomic<bool> active_{false};
};

// The driver objects of the GPU fill (DeviceState::gpu_zero, made at vkCreateDevice where the
// device has timeline semaphores and the cache zeroes): the policy above, and per queue that
// filled or waited a command pool, our command buffers and a timeline semaphore. The glue is
// fill_submission.cpp and cached_memory.cpp.
struct QueueFiller {
    VkQueue queue = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t value = 0;  // the newest value a submission of ours signals
    // Our command buffers, oldest first, with the value whose completion frees each.
    std::deque<std::pair<VkCommandBuffer, uint64_t>> cbs;
};

struct GpuZero {
    PendingFills fills;
    // Serializes fill submissions and cross-queue waits (taken before a queue's lock), and
    // guards `queues`. No blocking driver wait is made under it.
    std::mutex mutex;
    std::map<const void*, std::unique_ptr<QueueFiller>> queues;  // by QueueState
    PFN_vkGetSemaphoreCounterValue counter_value = nullptr;
    PFN_vkWaitSemaphores wait_semaphores = nullptr;
};

}  // namespace slipstream::objects
