// Finding the memory the host reads back, and moving it to cached memory (the policy itself is
// readback_policy.h). One per device, when VK_SLIPSTREAM_READBACK is not off or
// VK_SLIPSTREAM_READBACK_STEER is on (steering works on its own too).
//
// Evidence that an allocation is host-read staging (VK_SLIPSTREAM_READBACK=auto):
//  - a dedicated allocation for a readback buffer (usage TRANSFER_DST, optionally TRANSFER_SRC,
//    nothing else) or a linear image used only as a copy destination (and source);
//  - an allocation that follows, on the same thread and device, the requirements query of such
//    a buffer that is not bound yet, and can hold that buffer and little else
//    (readback_hint_covers: a sub-allocator's block that starts with the buffer is not the
//    buffer's memory);
//  - the block-first pattern of sub-allocating runtimes: a readback buffer created, queried and
//    destroyed (or vkGetDeviceBufferMemoryRequirements for one), then a block of >= 1 MiB;
//  - with VK_SLIPSTREAM_READBACK=all-host-visible: every allocation of an uncached
//    host-visible type;
//  - evidence from use (VK_SLIPSTREAM_READBACK_DEFER, on by default): an allocation none of the
//    above covers waits with its buffer binds until the first use reveals what it is for
//    (readback_deferral.h).
// Where the allocation is not dedicated, other resources may be bound to it later. The tracker
// therefore only redirects between types that every resource class it probed at device
// creation treats alike (a class that accepts the application's type accepts the new one too),
// and checks every bind into redirected memory; a mismatch is logged as an error and counted.
#pragma once

#include "memory/readback_deferral.h"
#include "core/settings.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream {

struct DeviceState;

class ReadbackTracker {
public:
    static constexpr VkDeviceSize kBlockMinBytes = 1u << 20;

    explicit ReadbackTracker(DeviceState& device);

    // Evidence from use; null when VK_SLIPSTREAM_READBACK is not auto or the deferral is off.
    ReadbackDeferral* deferral() { return deferral_.get(); }

    // What buffers and images were created as, and whether they are bound, is in the device's
    // object record (state/object_record.h); the tracker is told only what it acts on.
    void buffer_created(const VkBufferCreateInfo& info);
    void buffer_destroyed(VkBuffer buffer);
    void image_created(const VkImageCreateInfo& info);

    // A buffer's requirements were queried (reqs is what the application will see: steering
    // may change its memoryTypeBits). `buffer` is null for vkGetDeviceBufferMemoryRequirements.
    void buffer_requirements(VkBuffer buffer, const VkBufferCreateInfo* info, VkMemoryRequirements& reqs);
    // Another resource's requirements were queried: the next allocation is probably for it.
    void other_requirements();

    VkResult allocate(const VkMemoryAllocateInfo* info, const VkAllocationCallbacks* allocator, VkDeviceMemory* memory);
    void freed(VkDeviceMemory memory);
    void buffer_bound(VkBuffer buffer, VkDeviceMemory memory);
    void image_bound(VkImage image, VkDeviceMemory memory);

private:
    struct Redirected {
        uint32_t app_type, real_type;
    };
    // What the last memory-requirements query of a thread on this device was, so that the
    // allocation that follows it can be matched to its resource. Kept here rather than in a
    // thread_local: the layer stays loaded (-z nodelete), and TLS of a dlopen-ed library costs
    // either static TLS that glibc never gets back below it (drivers loaded later for each
    // instance then run out of it) or dynamic TLS (which LeakSanitizer's exit tracer trips on).
    struct Hint {
        VkBuffer buffer = VK_NULL_HANDLE;
        bool probe = false;  // the buffer was destroyed unbound, or never existed
        VkMemoryRequirements reqs{};
    };
    // This thread's hint, removed: each one serves only the next allocation or query.
    std::optional<Hint> drop_hint();
    void probe_resource_classes();
    template <typename Handle, typename Info, typename Create, typename Reqs, typename Destroy>
    void probe(const Info* info, Create create, Reqs reqs, Destroy destroy, std::vector<uint32_t>& classes);
    std::vector<uint32_t> buffer_classes();
    std::vector<uint32_t> image_classes();
    // The types the allocation's resources allow and a name for the log, or 0 when the
    // allocation is not known to be host-read.
    uint32_t evidence(const VkMemoryAllocateInfo& info, const char** kind);
    void log_once(const char* kind, uint32_t from, uint32_t to);
    void check_bind(VkDeviceMemory memory, uint32_t allowed_bits, const char* what);
    bool redirected(VkDeviceMemory memory);  // cached readback moved it

    DeviceState& d_;
    // Types that each type may be redirected to without invalidating any probed resource class.
    uint32_t safe_targets_[VK_MAX_MEMORY_TYPES] = {};
    std::mutex mutex_;   // guards the maps
    std::unordered_map<std::thread::id, Hint> hints_;  // at most one per thread, dropped on use
    std::unordered_map<VkDeviceMemory, Redirected> redirected_;
    // Their sizes, read without the lock: allocations, binds and frees of memory that is not
    // read back take no lock while no thread holds a hint and nothing is redirected.
    std::atomic<uint32_t> hint_count_{0}, redirected_count_{0};
    std::unordered_set<std::string> logged_;
    std::unique_ptr<ReadbackDeferral> deferral_;  // last: it may use safe_targets_ until destroyed
};

}  // namespace slipstream
