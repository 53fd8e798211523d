#include "memory/readback_policy.h"

#include <cinttypes>
#include <cstdio>

namespace slipstream {
namespace {

constexpr VkMemoryPropertyFlags kDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHostVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kHostCoherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kHostCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkMemoryPropertyFlags kAmdDeviceBits =
    VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD | VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;

// Bits a redirect target may have although the application's type lacks them. Everything else
// (PROTECTED, LAZILY_ALLOCATED, the AMD device-coherence bits, bits newer than this code) changes
// what the memory means or needs a feature the application may not have enabled, so a type
// carrying it is never a target. RDMA_CAPABLE only adds a capability.
constexpr VkMemoryPropertyFlags kBenignExtraBits =
    kDeviceLocal | kHostVisible | kHostCoherent | kHostCached |
    VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV;

bool valid_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type) {
    return props.memoryTypeCount <= VK_MAX_MEMORY_TYPES && type < props.memoryTypeCount &&
           props.memoryTypes[type].heapIndex < props.memoryHeapCount &&
           props.memoryHeapCount <= VK_MAX_MEMORY_HEAPS;
}

bool allowed(uint32_t type_bits, uint32_t type) { return type < 32 && (type_bits >> type) & 1u; }

// Uncached host-visible memory with nothing special about it: what steering may hide.
// Host-visible memory with nothing but the four plain flags: what steering may hide.
bool plain_host_visible(VkMemoryPropertyFlags f) {
    return (f & kHostVisible) && (f & ~(kDeviceLocal | kHostVisible | kHostCoherent | kHostCached)) == 0;
}

// The memory a reading host wants, usable without any extra feature or flush.
bool plain_cached_coherent(VkMemoryPropertyFlags f) {
    const VkMemoryPropertyFlags want = kHostVisible | kHostCoherent | kHostCached;
    return (f & want) == want &&
           (f & ~(want | kDeviceLocal | VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV)) == 0;
}

bool host_coherent(VkMemoryPropertyFlags f) {
    return (f & (kHostVisible | kHostCoherent)) == (kHostVisible | kHostCoherent);
}

}  // namespace

const char* to_string(ReadbackVerdict verdict) {
    switch (verdict) {
        case ReadbackVerdict::kRedirect: return "redirect";
        case ReadbackVerdict::kInvalidType: return "invalid-type";
        case ReadbackVerdict::kNotHostVisible: return "not-host-visible";
        case ReadbackVerdict::kAlreadyCached: return "already-cached";
        case ReadbackVerdict::kExplicitDeviceMemory: return "explicit-device-memory";
        case ReadbackVerdict::kNoCandidate: return "no-candidate";
        case ReadbackVerdict::kHeapTooSmall: return "heap-too-small";
    }
    return "unknown";
}

namespace {
// The verdict on the application's own type where it rules a redirect out (kRedirect: it does not).
ReadbackVerdict verdict_on_app_type(VkMemoryPropertyFlags app) {
    if (!(app & kHostVisible)) return ReadbackVerdict::kNotHostVisible;
    // Asking for device-coherent or device-uncached memory is deliberate (markers, debug
    // breadcrumbs read while the GPU runs): never second-guess it.
    if (app & kAmdDeviceBits) return ReadbackVerdict::kExplicitDeviceMemory;
    // Cached memory is already what we want; if it is non-coherent, the app flushes it anyway.
    if (app & kHostCached) return ReadbackVerdict::kAlreadyCached;
    return ReadbackVerdict::kRedirect;
}

// Whether candidate type `t` is better than `best`: coherent first (fewer ways for the app to
// be wrong), then the largest heap (the least likely to run out: the fallback on a full heap
// costs an extra failed allocation). Ties keep the lower index, the driver's own preference.
bool better_target(const VkPhysicalDeviceMemoryProperties& props, uint32_t t, uint32_t best) {
    const bool coherent = props.memoryTypes[t].propertyFlags & kHostCoherent;
    const bool best_coherent = props.memoryTypes[best].propertyFlags & kHostCoherent;
    if (coherent != best_coherent) return coherent;
    const VkDeviceSize heap = props.memoryHeaps[props.memoryTypes[t].heapIndex].size;
    const VkDeviceSize best_heap = props.memoryHeaps[props.memoryTypes[best].heapIndex].size;
    return heap > best_heap;
}
}  // namespace

ReadbackChoice evaluate_readback_memory_type(const VkPhysicalDeviceMemoryProperties& props,
                                             uint32_t allowed_type_bits, uint32_t app_type,
                                             uint64_t allocation_size) {
    ReadbackChoice choice;
    if (!valid_type(props, app_type)) return choice;  // kInvalidType: let the driver judge it
    const VkMemoryPropertyFlags app = props.memoryTypes[app_type].propertyFlags;
    choice.verdict = verdict_on_app_type(app);
    if (choice.verdict != ReadbackVerdict::kRedirect) return choice;

    // Keep every guarantee of the application's type but DEVICE_LOCAL (leaving VRAM is the point).
    // An application whose type is HOST_COHERENT does not flush or invalidate, so coherence is
    // required; one that chose non-coherent memory already does both, so it may get either.
    const VkMemoryPropertyFlags required = (app & ~kDeviceLocal) | kHostVisible | kHostCached;
    const bool app_coherent = (app & kHostCoherent) != 0;

    bool any_candidate = false;
    bool found = false;
    uint32_t best = 0;
    for (uint32_t t = 0; t < props.memoryTypeCount && t < VK_MAX_MEMORY_TYPES; ++t) {
        if (t == app_type || !allowed(allowed_type_bits, t) || !valid_type(props, t)) continue;
        const VkMemoryPropertyFlags f = props.memoryTypes[t].propertyFlags;
        if ((f & required) != required) continue;
        if (f & ~app & ~kBenignExtraBits) continue;
        if (app_coherent && !(f & kHostCoherent)) continue;  // implied by `required`; kept explicit
        any_candidate = true;
        // A heap smaller than the allocation can never hold it; fall to the next candidate.
        if (props.memoryHeaps[props.memoryTypes[t].heapIndex].size < allocation_size) continue;
        if (!found || better_target(props, t, best)) best = t;
        found = true;
    }
    if (found) {
        choice.verdict = ReadbackVerdict::kRedirect;
        choice.memory_type = best;
    } else {
        choice.verdict = any_candidate ? ReadbackVerdict::kHeapTooSmall : ReadbackVerdict::kNoCandidate;
    }
    return choice;
}

std::optional<uint32_t> choose_readback_memory_type(const VkPhysicalDeviceMemoryProperties& props,
                                                    uint32_t allowed_type_bits, uint32_t app_type,
                                                    uint64_t allocation_size) {
    const ReadbackChoice choice =
        evaluate_readback_memory_type(props, allowed_type_bits, app_type, allocation_size);
    if (!choice.redirect()) return std::nullopt;
    return choice.memory_type;
}

uint32_t steer_readback_type_bits(const VkPhysicalDeviceMemoryProperties& props,
                                  uint32_t type_bits) {
    const uint32_t count =
        props.memoryTypeCount < VK_MAX_MEMORY_TYPES ? props.memoryTypeCount : VK_MAX_MEMORY_TYPES;
    // Steering must leave only cached coherent memory to a "first host-visible type" choice:
    // every other allowed host-visible type goes (uncached ones, and cached non-coherent ones
    // that would silently need invalidation). If one of them is not plain (AMD
    // device-coherent, protected...) there is no telling what the application wants from it:
    // do not steer at all.
    bool cached_coherent_allowed = false;
    uint32_t removable = 0;
    for (uint32_t t = 0; t < count; ++t) {
        if (!allowed(type_bits, t)) continue;
        const VkMemoryPropertyFlags f = props.memoryTypes[t].propertyFlags;
        if (plain_cached_coherent(f)) {
            cached_coherent_allowed = true;
        } else if (f & kHostVisible) {
            if (!plain_host_visible(f)) return type_bits;
            removable |= 1u << t;
        }
    }
    if (!cached_coherent_allowed || removable == 0) return type_bits;

    const uint32_t steered = type_bits & ~removable;
    // Implied by the cached coherent type staying, but the spec promises applications a
    // HOST_VISIBLE|HOST_COHERENT type for every buffer: check it rather than trust the reasoning.
    bool coherent_left = false;
    for (uint32_t t = 0; t < count; ++t)
        if (allowed(steered, t) && host_coherent(props.memoryTypes[t].propertyFlags))
            coherent_left = true;
    if (steered == 0 || !coherent_left) return type_bits;
    return steered;
}

std::string describe_memory_property_flags(VkMemoryPropertyFlags flags) {
    static constexpr struct {
        VkMemoryPropertyFlags bit;
        const char* name;
    } kNames[] = {
        {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
        {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
        {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
        {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
        {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"},
        {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"},
        {VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "DEVICE_COHERENT_AMD"},
        {VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "DEVICE_UNCACHED_AMD"},
        {VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, "RDMA_CAPABLE_NV"},
    };
    if (flags == 0) return "none";
    std::string out;
    VkMemoryPropertyFlags rest = flags;
    for (const auto& n : kNames) {
        if (!(flags & n.bit)) continue;
        if (!out.empty()) out += " | ";
        out += n.name;
        rest &= ~n.bit;
    }
    if (rest) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%" PRIx32, static_cast<uint32_t>(rest));
        if (!out.empty()) out += " | ";
        out += hex;
    }
    return out;
}

bool is_readback_buffer_usage(VkBufferUsageFlags usage) {
    return (usage & VK_BUFFER_USAGE_TRANSFER_DST_BIT) &&
           (usage & ~(VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT)) == 0;
}

bool readback_hint_covers(VkDeviceSize allocation_size, const VkMemoryRequirements& reqs) {
    if (allocation_size < reqs.size) return false;
    VkDeviceSize slack = reqs.size / 8;
    if (slack < kReadbackHintPage) slack = kReadbackHintPage;
    if (slack < reqs.alignment) slack = reqs.alignment;
    return allocation_size - reqs.size <= slack;
}

}  // namespace slipstream
