// The plan of one batch's event narrowing (barrier_narrowing.h, narrowing.md case 7): which
// vkCmdSetEvent2 and vkCmdWaitEvents2 may have their dependency infos narrowed.
#pragma once

#include "capture/command_capture.h"

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace slipstream::capture {

// Which vkCmdSetEvent2 / vkCmdWaitEvents2 of one batch may have their dependency infos
// narrowed: those on an event between two device resets of it in the batch, where every
// capture from one reset to the other is replayed with narrowing. Anything else might pair
// with a set or wait fusion does not transform: left whole.
class EventPlan {
public:
    void clear();
    // Every capture of the batch, in replay order (`narrowed`: replayed with narrowing).
    void add(const CommandCapture& capture, bool narrowed, bool indirect);
    // Replay side, in the same order: for the next vkCmdSetEvent2 or vkCmdWaitEvents2 of a
    // narrowed capture, one entry per event (0: keep; 1: narrow; 2: narrow, the destination
    // reaching DRAW_INDIRECT). nullptr where the plan has none (keep).
    const uint8_t* take(uint32_t count);

private:
    struct Segment {
        bool closed = false, tainted = false, indirect = false;
    };
    int segment_of(VkEvent e) const;
    void entry(VkEvent e, bool indirect);
    void finish();

    std::vector<Segment> segments_;
    std::unordered_map<VkEvent, int> open_;
    std::vector<int> entry_segment_;  // per entry (-1: before any reset in the batch)
    std::vector<uint8_t> decisions_;
    size_t cursor_ = 0;
    bool finished_ = false;
};

}  // namespace slipstream::capture
