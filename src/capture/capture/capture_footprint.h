// A capture's footprint: the device memory its commands may read and write, as byte ranges of
// VkDeviceMemory objects (so two buffers or images bound to the same memory meet there), or
// "unknown" where the layer cannot see all of it. Barrier elision (barrier_elision.h) compares
// footprints; footprint_of() (capture_footprint.cpp) computes one at vkEndCommandBuffer from a
// capture and what ResourceRegistry knows of the objects it names.
//
// Unknown, in plain words: anything the registry has not seen or cannot bound (buffer device
// addresses, update-after-bind or partially bound descriptors, descriptor buffers, sparse or
// imported memory, any command outside compute and transfer work...). An unknown footprint
// conflicts with every other one.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

namespace slipstream::capture {

struct MemoryRange {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t begin = 0, end = 0;  // bytes of `memory`, [begin, end)
    bool write = false;           // may write (else only reads)
    bool operator==(const MemoryRange& o) const {
        return memory == o.memory && begin == o.begin && end == o.end && write == o.write;
    }
};

class Footprint {
public:
    // More ranges than this (after merging) and the footprint is unknown: comparing stays cheap.
    static constexpr size_t kMaxRanges = 64;

    // What nothing is known of yet (a default Footprint is empty: it touches nothing).
    static Footprint make_unknown() {
        Footprint f;
        f.unknown_ = true;
        return f;
    }
    bool unknown() const { return unknown_; }
    const std::vector<MemoryRange>& ranges() const { return ranges_; }
    bool empty() const { return !unknown_ && ranges_.empty(); }

    void clear() {
        unknown_ = false;
        ranges_.clear();
    }
    void set_unknown() {
        unknown_ = true;
        ranges_.clear();
    }
    // Adds [begin, end) of `memory` (an empty range adds nothing; a null memory is unknown).
    void add(VkDeviceMemory memory, uint64_t begin, uint64_t end, bool write);
    // Adds everything `other` holds.
    void add(const Footprint& other);
    // Sorts and merges overlapping or touching ranges of one memory (a merged range writes if
    // any part did: conservative); past kMaxRanges, unknown.
    void normalize();

    // Whether one may write memory the other touches (either unknown: yes). Both normalized
    // or not: the check is pairwise.
    bool conflicts_with(const Footprint& other) const;

private:
    bool unknown_ = false;
    std::vector<MemoryRange> ranges_;
};

}  // namespace slipstream::capture
