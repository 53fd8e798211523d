// The building blocks of the generated deep copies (capture_commands.cpp, from
// tools/gen/gen_capture.py): arrays, single structures, strings, sized bytes and pNext nodes,
// each copied into a CaptureArena. Every function returns false when the copy is incomplete
// (the arena is exhausted, or a structure holds something Slipstream cannot copy); the caller
// then gives up on the whole command buffer (FUSION.md rule 6).
#pragma once

#include "capture/capture_arena.h"

#include <vulkan/vulkan.h>

#include <cstring>

namespace slipstream::capture::detail {

// Specialised by the generated code, for every structure that points to more memory, with
//   static bool copy(CaptureArena&, T& dst, const T& src);          // pNext chain + members
//   static bool copy_members(CaptureArena&, T& dst, const T& src);  // all but pNext
// where dst already holds a byte copy of src.
template <typename T>
struct Deep {
    static constexpr bool kNeeded = false;
};

// `count` elements of src (null, or nothing to copy, gives null).
template <typename T, typename Pointer>
[[nodiscard]] bool copy_array(CaptureArena& a, const T* src, uint64_t count, Pointer& dst) {
    if (!src || count == 0) {
        dst = nullptr;
        return true;
    }
    T* out = a.allocate_array<T>(count);
    if (!out) return false;
    std::memcpy(static_cast<void*>(out), src, size_t(count) * sizeof(T));
    if constexpr (Deep<T>::kNeeded) {
        for (uint64_t i = 0; i < count; ++i)
            if (!Deep<T>::copy(a, out[i], src[i])) return false;
    }
    dst = out;
    return true;
}

template <typename Pointer>
[[nodiscard]] bool copy_bytes(CaptureArena& a, const void* src, uint64_t size, Pointer& dst) {
    return copy_array(a, static_cast<const unsigned char*>(src), size, dst);
}

[[nodiscard]] inline bool copy_string(CaptureArena& a, const char* src, const char*& dst) {
    return copy_array(a, src, src ? std::strlen(src) + 1 : 0, dst);
}

// One structure of a pNext chain: its own members deep, its pNext left for the chain.
template <typename T>
void* copy_node(CaptureArena& a, const T& src) {
    T* out = a.allocate_array<T>(1);
    if (!out) return nullptr;
    std::memcpy(static_cast<void*>(out), &src, sizeof(T));
    out->pNext = nullptr;
    if constexpr (Deep<T>::kNeeded) {
        if (!Deep<T>::copy_members(a, *out, src)) return nullptr;
    }
    return out;
}

// Links copied nodes in their original order.
struct ChainBuilder {
    void* head = nullptr;
    VkBaseOutStructure* tail = nullptr;
    void append(void* node) {
        auto* n = static_cast<VkBaseOutStructure*>(node);
        n->pNext = nullptr;
        if (tail) tail->pNext = n;
        else head = n;
        tail = n;
    }
};

}  // namespace slipstream::capture::detail
