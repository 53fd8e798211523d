// Fences kept for reuse instead of destroyed (issue 22): some drivers charge ~0.5 ms for a
// vkCreateFence + vkDestroyFence pair (NVIDIA 580 on an H200), and compute runtimes create a
// fence per operation, which makes an operation ~10x dearer than its submission and wait.
//
// This class is the pool's policy only: which requests it may serve, which destroyed fences it
// keeps and in which list, its bound. It makes no driver call (the glue in pooled_fences.h asks
// the driver for statuses and resets), so unit tests drive it with made-up handles.
//
// Lists. `unsignaled`: driver fences nothing can signal (never given to the driver to signal),
// handed out as they are. `signaled`: fences the driver said were signaled when
// they were destroyed: handed out as they are for VK_FENCE_CREATE_SIGNALED_BIT, reset first
// for an unsignaled request. `quarantine`: fences destroyed unsignaled that a submission may
// still signal (the application destroyed a fence whose work was running, which is invalid
// but happens): reused only once the driver says signaled (then they move to `signaled`). At
// most a quarter of the bound is quarantined, so fences that never signal cannot fill the pool.
//
// Whether a fence the driver reports unsignaled at its destroy may still be signaled by
// something: every call that gives the driver an application fence to signal (submissions,
// sparse binds, image acquires, presents) counts one on the device, without a lock, before the
// driver's call; a fence created at the same count as its destroy sees was given to none.
// (Reset fences are not followed: a fence reset and then destroyed unsignaled is quarantined.)
//
// Only fences created plainly qualify (no pNext: export information and the like go to the
// driver, no allocator), and not once imported into or exported: their payload may be shared
// with something outside the device.
//
// Only where it pays (pool_cost.h): the pool learns what the driver's create and destroy cost
// and what its own path costs; while the driver is cheaper, creates go to the driver and the
// fences they make are not followed, and destroys of followed ones go to the driver too.
//
// Thread safety: one mutex per pool, taken only by vkCreateFence, vkDestroyFence, imports and
// exports of fences (none of them on a per-submission path), and by destroys only while some
// fence is followed (a count read without it says so).
#pragma once

#include "objects/pool_cost.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace slipstream::objects {

// How a fence stood in the driver when the application destroyed it.
enum class FenceAtDestroy {
    Signaled,      // no pending submission can signal it again
    Unsubmitted,   // unsignaled, and the layer knows no driver submission carries it
    MaybePending,  // unsignaled, and a driver submission may still signal it
    Failed,        // the status query failed (device lost): left to the driver
};

// Where a destroyed fence went.
enum class FenceKept { No, Unsignaled, Signaled, Quarantined };

class FencePool {
public:
    // `bound`: fences pooled at most, all lists together; `always`: pool whatever it costs.
    explicit FencePool(size_t bound, bool always = false)
        : bound_(bound), quarantine_bound_(bound / 4 ? bound / 4 : 1), cost_(always, "fence pool") {}
    FencePool(const FencePool&) = delete;
    FencePool& operator=(const FencePool&) = delete;

    // Whether a vkCreateFence may be served from the pool (and its fence come back to it).
    static bool plain(const VkFenceCreateInfo& info, const VkAllocationCallbacks* allocator) {
        return info.pNext == nullptr && allocator == nullptr && (info.flags & ~VK_FENCE_CREATE_SIGNALED_BIT) == 0;
    }

    struct Grant {
        VkFence fence = VK_NULL_HANDLE;  // null: nothing suitable, the driver creates one
        bool reset = false;              // signaled: the caller resets it before handing it out
    };
    // A pooled fence for a plain request. Unsignaled requests take an unsignaled fence, else a
    // signaled one to reset; signaled requests only a signaled one.
    Grant take(bool signaled);
    // Up to `max` quarantined fences for a status query, oldest first. Each must come back
    // through checked() (they count toward the bound meanwhile).
    std::vector<VkFence> take_quarantined(size_t max);
    // The driver's answer for a fence from take_quarantined.
    void checked(VkFence fence, bool signaled);

    // (Any thread, no lock.) The application is about to give the driver a fence to signal.
    void note_fence_given() { given_.fetch_add(1, std::memory_order_acq_rel); }

    // A plain create succeeded (served by the pool or by the driver): the fence may come back.
    void created(VkFence fence);
    // Imported into or exported: it goes to the driver at its destroy.
    void not_poolable(VkFence fence);
    // At vkDestroyFence (with a null allocator): whether the fence may be kept, so that the
    // caller asks the driver its status. Forgets the fence as a live one either way;
    // `*created_at` is what unsignaled_state() needs. `*not_worth` (when given): a followed
    // fence refused because pooling does not pay (any more).
    bool wants(VkFence fence, uint64_t* created_at, bool* not_worth = nullptr);
    // Whether any fence is followed (created plainly while pooling paid, not destroyed yet).
    // Without the lock: a fence is followed before its handle reaches the application, so its
    // destroy sees it counted.
    bool following() const { return live_count_.load(std::memory_order_relaxed) != 0; }
    // Pooling stopped paying: the fences followed so far go to the driver at their destroy
    // (as wants() would decide), so that destroys take no lock any more.
    void forget_live();
    // How a fence created at `created_at` stands when the driver says it is unsignaled:
    // `answered`: fusion answered it from a timeline, its driver fence never submitted.
    FenceAtDestroy unsignaled_state(uint64_t created_at, bool answered) const;
    // Keeps a fence wants() accepted, unless its state forbids or the bound was reached since.
    FenceKept keep(VkFence fence, FenceAtDestroy state);

    // Everything pooled, the pool emptied (vkDestroyDevice: the device is idle by then).
    std::vector<VkFence> drain();

    size_t pooled() const;
    size_t in_list(FenceKept list) const;
    size_t bound() const { return bound_; }
    PoolCost& cost() { return cost_; }

private:
    size_t pooled_locked() const { return unsignaled_.size() + signaled_.size() + quarantine_.size() + checking_; }

    const size_t bound_, quarantine_bound_;
    std::atomic<uint64_t> given_{0};  // fences given to the driver to signal, on this device
    mutable std::mutex mutex_;
    // Created plainly, not imported or exported, not destroyed: given_ when created.
    std::unordered_map<VkFence, uint64_t> live_;
    std::atomic<size_t> live_count_{0};  // live_.size(), for following()
    std::vector<VkFence> unsignaled_, signaled_;
    std::deque<VkFence> quarantine_;
    size_t checking_ = 0;  // taken from the quarantine for a status query
    PoolCost cost_;
};

}  // namespace slipstream::objects
