// Evidence from USE: which uncached host-visible allocations are host-read staging, decided
// at the first use of their buffers that reveals it (src/memory/memory/readback_deferral.h does the driver
// side). Plain functions and a plain class over plain data: unit tests drive them without a
// driver (tests/unit/readback_evidence_test.cpp).
//
// The rule (docs/readback.md): memory whose first revealing use is a GPU transfer
// WRITE into one of its buffers is staging the host reads back, and moves to cached memory;
// memory whose first revealing use is anything else (a host map before any GPU use, a
// descriptor, a copy source, a vertex/index/indirect use, a device address, an image...) stays
// where the application put it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace slipstream {

// What the first revealing use decided for a whole allocation.
enum class Fate : uint8_t {
    kUndecided,  // binds are pending: nothing has used the memory yet
    kKeep,       // stays in the application's type (binds performed into its memory)
    kMove,       // host-read staging: its buffers live in a cached coherent twin
};

// A bind the application asked for and the layer has not passed down yet.
struct PendingBind {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    VkMemoryRequirements reqs{};  // of the buffer, as the driver reported them
    VkBufferUsageFlags usage = 0;
    VkBufferCreateFlags flags = 0;
};

// Whether a buffer bind may wait for the first use. Only a plain bind (no pNext: no device
// group, no status report) of a buffer that can be a transfer destination; sparse, protected
// and capture-replay buffers never wait.
bool bind_may_wait(VkBufferUsageFlags usage, VkBufferCreateFlags flags, bool plain_bind);

// Whether a buffer memory barrier's destination accesses are those of host-read staging: only
// transfer writes and host reads (ACCESS and ACCESS_2 bits alike). An empty mask reveals
// nothing and counts as "no".
bool barrier_reveals_readback(VkAccessFlags2 dst_access);

// The twin types every pending buffer accepts among `safe_targets` (the types a redirect from
// the application's type may go to for every probed resource class).
uint32_t twin_allowed_types(uint32_t safe_targets, const std::vector<PendingBind>& pending);

// Whether every pending buffer can be bound at its offset into a twin of `allocation_size` in
// `twin_type`: the type is allowed, the offset keeps the buffer's alignment, the buffer fits.
bool twin_fits(const std::vector<PendingBind>& pending, VkDeviceSize allocation_size, uint32_t twin_type);

// What identifies memory the GPU turned out to read after a move: the application's type and
// the buffer whose use moved it.
struct UseSignature {
    uint32_t memory_type = 0;
    VkBufferUsageFlags usage = 0;
    VkBufferCreateFlags flags = 0;
    bool operator==(const UseSignature& o) const {
        return memory_type == o.memory_type && usage == o.usage && flags == o.flags;
    }
};

// Signatures learned as GPU-read: later binds with one of them keep their memory. Bounded, so a
// program with many kinds of memory pays a fixed, small cost per bind; once full it learns no
// more (and says so through add()).
class GpuReadSignatures {
public:
    static constexpr size_t kCapacity = 32;
    bool contains(const UseSignature& s) const;
    // False when `s` was known already or there is no room left.
    bool add(const UseSignature& s);
    size_t size() const { return size_; }

private:
    UseSignature items_[kCapacity];
    size_t size_ = 0;
};

}  // namespace slipstream
