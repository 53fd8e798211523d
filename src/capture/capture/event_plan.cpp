// EventPlan (event_plan.h): which event sets and waits of one batch are provably paired only
// with each other.
#include "capture/event_plan.h"

#include "capture_commands.h"

namespace slipstream::capture {

namespace {
VkEvent reset_event(const CaptureRecord& r) {
    switch (r.id) {
    case CommandId::CmdResetEvent: return static_cast<const CmdResetEventRecord&>(r).event;
    case CommandId::CmdResetEvent2:
    case CommandId::CmdResetEvent2KHR: return static_cast<const CmdResetEvent2Record&>(r).event;
    default: return VK_NULL_HANDLE;
    }
}
}  // namespace

void EventPlan::clear() { *this = EventPlan{}; }

int EventPlan::segment_of(VkEvent e) const {
    auto it = open_.find(e);
    return it == open_.end() ? -1 : it->second;
}

void EventPlan::entry(VkEvent e, bool indirect) {
    const int s = segment_of(e);
    entry_segment_.push_back(s);
    if (s >= 0) segments_[size_t(s)].indirect = segments_[size_t(s)].indirect || indirect;
}

void EventPlan::add(const CommandCapture& capture, bool narrowed, bool indirect) {
    // A device reset closes the event's segment and opens the next.
    auto reset = [&](VkEvent e) {
        if (const int s = segment_of(e); s >= 0) segments_[size_t(s)].closed = true;
        open_[e] = int(segments_.size());
        segments_.emplace_back();
    };
    // A capture replayed as it is (whose secondaries, say, may set or wait any event): no
    // segment open across it or opened in it is provable.
    auto taint_open = [&] {
        for (const auto& [event, s] : open_) segments_[size_t(s)].tainted = true;
    };
    if (!narrowed) taint_open();
    for (const CaptureRecord* r = capture.records(); r; r = r->next) {
        if (const VkEvent e = reset_event(*r)) {
            reset(e);
            continue;
        }
        if (!narrowed) continue;
        switch (r->id) {
        case CommandId::CmdSetEvent2:
        case CommandId::CmdSetEvent2KHR: entry(static_cast<const CmdSetEvent2Record&>(*r).event, indirect); break;
        case CommandId::CmdWaitEvents2:
        case CommandId::CmdWaitEvents2KHR: {
            const auto& w = static_cast<const CmdWaitEvents2Record&>(*r);
            for (uint32_t i = 0; i < w.eventCount; ++i) entry(w.pEvents[i], indirect);
            break;
        }
        default: break;
        }
    }
    if (!narrowed) taint_open();
}

void EventPlan::finish() {
    finished_ = true;
    decisions_.resize(entry_segment_.size());
    for (size_t i = 0; i < decisions_.size(); ++i) {
        const int s = entry_segment_[i];
        const bool proven = s >= 0 && segments_[size_t(s)].closed && !segments_[size_t(s)].tainted;
        decisions_[i] = !proven ? 0 : segments_[size_t(s)].indirect ? 2 : 1;
    }
}

const uint8_t* EventPlan::take(uint32_t count) {
    if (!finished_) finish();
    if (cursor_ + count > decisions_.size()) {
        cursor_ = decisions_.size();
        return nullptr;
    }
    const uint8_t* p = decisions_.data() + cursor_;
    cursor_ += count;
    return p;
}

}  // namespace slipstream::capture
