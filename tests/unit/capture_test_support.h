// What the generated round-trip helpers (capture_test.inl, from tools/gen/gen_capture.py)
// build on: a Filler that gives every argument a distinct, reproducible value, a Compare that
// names the first difference, and the recording dispatch table's log.
#pragma once

#include "capture/command_capture.h"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace capture_test {

// Fills arguments with values that depend only on (seed, full): two Fillers made alike fill
// alike, so a test can fill once, capture, destroy the originals, and fill again to compare.
// In full mode every optional pointer is present, counts are 1..3 and every pNext chain holds
// each structure that may extend it; otherwise optional pointers are null and optional
// counts 0.
class Filler {
public:
    Filler(uint32_t seed, bool full) : next_(uint64_t(seed) * 0x10000u + 1), full_(full) {}
    ~Filler() { scribble(); }
    Filler(const Filler&) = delete;
    Filler& operator=(const Filler&) = delete;

    bool full() const { return full_; }
    uint64_t next() { return next_++; }

    template <typename T>
    void value(T& v) {
        if constexpr (std::is_array_v<T>) {
            for (auto& e : v) value(e);
        } else if constexpr (std::is_enum_v<T>) {
            v = T(next() & 0x7fffffff);
        } else if constexpr (std::is_floating_point_v<T>) {
            v = T(next()) + T(0.25);
        } else if constexpr (std::is_pointer_v<T>) {  // non-dispatchable handles
            v = reinterpret_cast<T>(uintptr_t(0x100000 + next() * 16));
        } else {
            static_assert(std::is_integral_v<T>, "fill: a type the generator should not hand over");
            v = T(next());
        }
    }
    template <typename T>
    T count(bool optional) {
        return T(full_ ? 1 + next() % 3 : (optional ? 0 : 1));
    }
    template <typename T>
    T pick(std::initializer_list<T> values) {
        return values.begin()[next() % values.size()];
    }
    bool present(bool optional) { return full_ || !optional; }

    void bytes(void* p, size_t n) {
        auto* b = static_cast<unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(next());
    }
    // Zeroed storage for n elements (one at least: a count of 0 may still come with a pointer).
    template <typename T>
    T* array(uint64_t n) {
        size_t size = size_t(n ? n : 1) * sizeof(T);
        blocks_.push_back({std::make_unique<std::max_align_t[]>(size / sizeof(std::max_align_t) + 1), size});
        void* p = blocks_.back().data.get();
        std::memset(p, 0, size);
        return static_cast<T*>(p);
    }
    const void* bytes_array(uint64_t n) {
        auto* p = array<unsigned char>(n);
        bytes(p, size_t(n));
        return p;
    }
    const char* string(bool optional) {
        if (!present(optional)) return nullptr;
        std::string s = "label-" + std::to_string(next());
        char* p = array<char>(s.size() + 1);
        std::memcpy(p, s.c_str(), s.size() + 1);
        return p;
    }
    // A pointer the capture must never read (the spec says it is ignored there).
    template <typename T>
    const T* poison() {
        return reinterpret_cast<const T*>(uintptr_t(0xdead0000));
    }

    // Overwrites and frees everything filled so far: a capture that kept a pointer into it
    // now reads garbage (or, under AddressSanitizer, freed memory).
    void scribble() {
        for (Block& b : blocks_) std::memset(b.data.get(), 0xa5, b.size);
        blocks_.clear();
    }

private:
    struct Block {
        std::unique_ptr<std::max_align_t[]> data;
        size_t size;
    };
    uint64_t next_;
    bool full_;
    std::vector<Block> blocks_;
};

// Links pNext nodes in the order appended.
struct ChainFiller {
    explicit ChainFiller(Filler&) {}
    void* head = nullptr;
    VkBaseOutStructure* tail = nullptr;
    void append(void* node) {
        auto* n = static_cast<VkBaseOutStructure*>(node);
        if (tail) tail->pNext = n;
        else head = n;
        tail = n;
    }
};

// The first difference found, as "path: what".
struct Compare {
    std::string message;
    bool fail(const std::string& at, const char* what) {
        if (message.empty()) message = at + ": " + what;
        return false;
    }
};

inline bool same_bytes(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }
inline bool same_string(const char* a, const char* b) {
    if (!a || !b) return a == b;
    return std::strcmp(a, b) == 0;
}
inline bool same_array_bytes(const void* a, const void* b, uint64_t n) {
    if (n == 0) return true;
    return a && b && std::memcmp(a, b, size_t(n)) == 0;
}

// What the recording dispatch table received: one entry per call, the arguments shallow
// (their pointers aim into the replayed capture, which the test keeps alive).
struct RecordedCall {
    VkCommandBuffer cb;
    std::shared_ptr<const slipstream::capture::CaptureRecord> args;
};
inline std::vector<RecordedCall>& recorded_calls() {
    static std::vector<RecordedCall> calls;
    return calls;
}

struct RoundTripCase {
    const char* name;
    slipstream::CommandId id;
    std::shared_ptr<slipstream::capture::CaptureRecord> (*make)();
    void (*fill)(Filler& f, slipstream::capture::CaptureRecord& args);
    void (*capture)(slipstream::capture::CommandCapture& c, slipstream::CommandId id,
                    const slipstream::capture::CaptureRecord& args);
    // expected first, then what the recorder received
    bool (*equal)(const slipstream::capture::CaptureRecord& expected,
                  const slipstream::capture::CaptureRecord& actual, Compare& c);
};

}  // namespace capture_test
