// Which memory type host-read ("readback") memory should live in.
//
// Pure functions over VkPhysicalDeviceMemoryProperties: no driver calls, no globals, so unit
// tests can run them on memory layouts taken from real devices (tests/unit/memory_layouts.h).
// BACKGROUND.md part 2 and DESIGN.md rule 6 say why each rule exists.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <string>

namespace slipstream {

// Why choose_readback_memory_type kept (or changed) the application's memory type; for log
// lines and statistics.
enum class ReadbackVerdict : uint8_t {
    kRedirect,             // a better type was found: use ReadbackChoice::memory_type
    kInvalidType,          // app_type is not a memory type of this device: not ours to judge
    kNotHostVisible,       // the host cannot read it at all, so it is not readback memory
    kAlreadyCached,        // the application already chose HOST_CACHED memory
    kExplicitDeviceMemory, // DEVICE_COHERENT_AMD / DEVICE_UNCACHED_AMD: an explicit request
    kNoCandidate,          // no allowed type is HOST_CACHED with the application's guarantees
    kHeapTooSmall,         // candidates exist, but every one's heap is smaller than the allocation
};

// Short stable name ("redirect", "already-cached", ...) for logs and statistics keys.
const char* to_string(ReadbackVerdict verdict);

struct ReadbackChoice {
    ReadbackVerdict verdict = ReadbackVerdict::kInvalidType;
    uint32_t memory_type = 0;  // meaningful only when verdict == kRedirect

    bool redirect() const { return verdict == ReadbackVerdict::kRedirect; }
};

// The memory type to use instead of `app_type` for memory that the host reads back.
//
// `allowed_type_bits` must be the memoryTypeBits that EVERY resource the application may bind to
// this allocation accepts (for a dedicated or known buffer, its VkMemoryRequirements); the caller
// owns that proof (DESIGN.md rule 6: a redirected allocation stays valid for every resource).
//
// Redirects only uncached host-visible memory, only to an allowed HOST_VISIBLE|HOST_CACHED type
// that keeps every guarantee of the application's type (HOST_COHERENT included) except
// DEVICE_LOCAL and adds nothing that changes semantics (PROTECTED, LAZILY_ALLOCATED, the AMD
// device-coherence bits, unknown bits). Among candidates: coherent first, then the largest heap,
// then the lowest index. The caller still falls back to `app_type` when the chosen heap turns out
// to be full at allocation time.
ReadbackChoice evaluate_readback_memory_type(const VkPhysicalDeviceMemoryProperties& props,
                                             uint32_t allowed_type_bits, uint32_t app_type,
                                             uint64_t allocation_size);

// evaluate_readback_memory_type, reduced to "which type instead, if any".
std::optional<uint32_t> choose_readback_memory_type(const VkPhysicalDeviceMemoryProperties& props,
                                                    uint32_t allowed_type_bits, uint32_t app_type,
                                                    uint64_t allocation_size);

// Allocator steering: the memoryTypeBits to report for a readback buffer so that an allocator
// choosing "the first HOST_VISIBLE type" lands in cached coherent memory. When a plain
// HOST_VISIBLE|HOST_COHERENT|HOST_CACHED type is allowed, removes every other allowed
// host-visible type (uncached ones, and cached non-coherent ones); leaves the bits unchanged
// when one of those carries other flags (AMD device-coherent, protected), since the application
// may want exactly that. Never removes anything else, never returns 0 and never leaves the bits
// without a HOST_VISIBLE|HOST_COHERENT type.
uint32_t steer_readback_type_bits(const VkPhysicalDeviceMemoryProperties& props,
                                  uint32_t type_bits);

// "DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT"; "none" for 0; unknown bits as hex.
std::string describe_memory_property_flags(VkMemoryPropertyFlags flags);

// True for the usage of a staging buffer the host reads: TRANSFER_DST, optionally TRANSFER_SRC,
// and nothing else.
bool is_readback_buffer_usage(VkBufferUsageFlags usage);

// The slack a requirements hint tolerates for small buffers: the page size to which allocators
// and drivers round small allocations (NVIDIA and AMD map VRAM in 64 KiB pages).
inline constexpr VkDeviceSize kReadbackHintPage = 64 * 1024;

// Whether an allocation of `allocation_size` that follows the requirements query `reqs` of a
// readback buffer (same thread, nothing in between) is that buffer's own memory: it holds the
// buffer and little else. At least reqs.size, and at most reqs.size plus the largest of
// reqs.alignment, kReadbackHintPage and reqs.size / 8 (an allocator's rounding to its
// alignment, pages or size classes). A sub-allocator's block that merely starts with the buffer
// is larger: the resources it places there later (often buffers the GPU reads) must stay in the
// memory the application chose, and whatever does share a covered allocation is at most an
// eighth of the readback (or one page).
bool readback_hint_covers(VkDeviceSize allocation_size, const VkMemoryRequirements& reqs);

}  // namespace slipstream
