#include "capture/capture_footprint.h"

#include <algorithm>

namespace slipstream::capture {

void Footprint::add(VkDeviceMemory memory, uint64_t begin, uint64_t end, bool write) {
    if (unknown_) return;
    if (!memory) {
        set_unknown();
        return;
    }
    if (end <= begin) return;
    ranges_.push_back({memory, begin, end, write});
}

void Footprint::add(const Footprint& other) {
    if (unknown_) return;
    if (other.unknown_) {
        set_unknown();
        return;
    }
    ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
}

void Footprint::normalize() {
    if (unknown_ || ranges_.size() < 2) return;
    std::sort(ranges_.begin(), ranges_.end(), [](const MemoryRange& a, const MemoryRange& b) {
        return a.memory != b.memory ? a.memory < b.memory : a.begin < b.begin;
    });
    size_t out = 0;
    for (size_t i = 1; i < ranges_.size(); ++i) {
        MemoryRange& last = ranges_[out];
        const MemoryRange& r = ranges_[i];
        if (r.memory == last.memory && r.begin <= last.end) {
            last.end = std::max(last.end, r.end);
            last.write = last.write || r.write;
        } else {
            ranges_[++out] = r;
        }
    }
    ranges_.resize(out + 1);
    if (ranges_.size() > kMaxRanges) set_unknown();
}

bool Footprint::conflicts_with(const Footprint& other) const {
    if (unknown_ || other.unknown_) return true;
    for (const MemoryRange& a : ranges_)
        for (const MemoryRange& b : other.ranges_)
            if ((a.write || b.write) && a.memory == b.memory && a.begin < b.end && b.begin < a.end) return true;
    return false;
}

}  // namespace slipstream::capture
