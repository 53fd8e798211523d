// Cached readback by evidence from use: binds of buffers into candidate memory wait until the
// first use that reveals what the memory is for (src/memory/memory/readback_evidence.h has the rule).
//
// A candidate is a plain allocation (no pNext) of an uncached host-visible type for which a
// cached coherent type is a safe target (ReadbackTracker::safe_targets), and that the
// allocation-time evidence did not already move. The application's allocation is made as
// asked, so its handle stays a real driver object; its buffer binds are remembered instead of
// passed down. The first command that needs one of its buffers bound decides for the whole
// allocation:
//   * move: the layer allocates a twin of the same size in the cached coherent type, binds the
//     pending buffers (and every later one) into the twin at the same offsets, and serves
//     vkMapMemory, vkUnmapMemory, vkFlush/InvalidateMappedMemoryRanges and image binds from it;
//     vkFreeMemory frees both. The application's allocation stays, unused.
//   * keep: the pending binds go down as asked; the layer forgets the memory.
// Every command that can name a buffer or memory (tools/gen/gen_buffer_uses.py, from vk.xml)
// resolves before it goes down, so the driver never sees an unbound buffer. While nothing is
// pending and nothing moved, DeviceState::buffer_watch is 0 and that costs one branch.
#pragma once

#include "memory/readback_evidence.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream {

struct DeviceState;

class ReadbackDeferral {
public:
    // `safe_targets`: per memory type, the types a redirect may go to (ReadbackTracker's probe).
    ReadbackDeferral(DeviceState& device, const uint32_t* safe_targets);
    ~ReadbackDeferral();

    // After the application's allocation succeeded: makes it undecided if it is a candidate.
    void allocated(VkDeviceMemory memory, const VkMemoryAllocateInfo& info);
    // vkFreeMemory: forgets pending binds into `memory` and frees its twin.
    void freed(VkDeviceMemory memory);

    // A buffer bind. True: the bind waits (do not pass it down; it succeeded). False: pass it
    // down with `memory` (replaced by the twin where the memory moved).
    bool bind_buffer(VkBuffer buffer, VkDeviceMemory& memory, VkDeviceSize offset, bool plain_bind);
    // An image bind: undecided memory is kept first; moved memory binds its twin.
    void bind_image(VkImage image, VkDeviceMemory& memory);
    // How buffers were created is in the device's object record (state/object_record.h).
    void buffer_destroyed(VkBuffer buffer);

    // The memory to map, unmap, flush or invalidate: the twin where the memory moved. A map of
    // undecided memory (host access before any GPU use) keeps it.
    VkDeviceMemory map_target(VkDeviceMemory memory);
    VkDeviceMemory host_access_target(VkDeviceMemory memory);

    // Uses of buffers and memory by commands (src/memory/memory/readback_buffer_uses.cpp and the generated
    // resolvers): a transfer write into `buffer` moves its undecided memory; every other use
    // keeps it. A read of a buffer in moved memory is the safety net's business.
    enum class Use : uint8_t {
        kTransferWrite,  // moves undecided memory
        kRead,           // keeps it; in moved memory, the safety net reports it
        kNeutral,        // keeps it; says nothing about moved memory (a barrier)
    };
    void use_buffer(VkBuffer buffer, Use use, const char* what);
    void use_memory(VkDeviceMemory memory, const char* what);
    // A command that may name buffers the layer cannot see: every pending bind is kept.
    void keep_all(const char* what);
    // Deferral ends for this device (an unknown command, a sparse resource): everything
    // pending is kept at once and no allocation is deferred again.
    void stop(const char* why);
    bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
    // Whether a map/flush hook must ask (any moved or undecided memory exists).
    bool tracking_memory() const { return tracked_memories_.load(std::memory_order_relaxed) != 0; }

    // The buffers in the opaque data of vkUpdateDescriptorSetWithTemplate and
    // vkCmdPushDescriptorSetWithTemplateKHR, where the object record's template says.
    void use_template_data(VkDescriptorUpdateTemplate t, const void* data, const char* what);

private:
    struct Memory {
        uint32_t app_type = 0;
        VkDeviceSize size = 0;
        Fate fate = Fate::kUndecided;
        std::vector<PendingBind> pending;
        std::vector<VkBuffer> bound;  // buffers bound into the twin (moved memory)
        VkDeviceMemory twin = VK_NULL_HANDLE;
        uint32_t twin_type = 0;
        UseSignature signature;       // of the buffer whose use moved it
        std::string moved_by;         // e.g. "vkCmdCopyBuffer destination"
        bool gpu_read_reported = false;
    };
    struct BufferEntry {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        bool pending = false;  // false: bound into a moved memory's twin
    };

    // All under mutex_ (unique).
    void keep_locked(VkDeviceMemory memory, Memory& m, const char* what);
    void move_locked(VkDeviceMemory memory, Memory& m, VkBuffer revealing, const char* what);
    void perform_binds_locked(Memory& m, VkDeviceMemory target, bool into_twin);
    void forget_locked(VkDeviceMemory memory);
    void gpu_read_locked(Memory& m, VkBuffer buffer, const char* what);
    void update_watch_locked();
    void report_mismatch(const char* what, uint32_t twin_type);
    bool first_time(const std::string& key);  // for messages printed once per kind

    DeviceState& d_;
    const uint32_t* safe_targets_;
    std::atomic<bool> stopped_{false};
    std::atomic<uint32_t> tracked_memories_{0};
    mutable std::shared_mutex mutex_;
    std::unordered_map<VkDeviceMemory, Memory> memories_;  // undecided and moved
    std::unordered_map<VkBuffer, BufferEntry> buffers_;    // pending, or bound into a twin
    GpuReadSignatures gpu_read_;
    std::mutex log_mutex_;
    std::unordered_set<std::string> logged_;
};

}  // namespace slipstream
