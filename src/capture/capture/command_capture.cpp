#include "capture/command_capture.h"

#include "capture_commands.h"

namespace slipstream::capture {

const char* stop_reason_name(StopReason reason) {
    switch (reason) {
    case StopReason::None: return "capturable";
    case StopReason::NotReplayable: return "a command Slipstream does not replay";
    case StopReason::UnknownStructure: return "a structure Slipstream cannot copy";
    case StopReason::TooLarge: return "the capture outgrew its memory limit";
    case StopReason::BatchSized: return "more operations than a batch holds";
    }
    return "?";
}

void CommandCapture::clear(bool release_memory) {
    if (release_memory) arena_.release();
    else arena_.reset();
    head_ = tail_ = nullptr;
    count_ = 0;
    begin_info_ = nullptr;
    inheritance_ = nullptr;
}

void CommandCapture::reset(bool release_memory) {
    clear(release_memory);
    stop_ = StopReason::None;
    stopped_at_ = "";
    stop_hook_ = nullptr;
    stop_context_ = nullptr;
    begun_ = ended_ = false;
    usage_ = 0;
    footprint.set_unknown();
    footprint_state.store(0, std::memory_order_relaxed);
}

void CommandCapture::begin(VkCommandBufferLevel level, const VkCommandBufferBeginInfo* info) {
    reset(false);
    begun_ = true;
    level_ = level;
    usage_ = info ? info->flags : 0;
    // pInheritanceInfo is read only for secondary command buffers (the generated copy of the
    // begin info leaves it null); a primary's may point anywhere.
    if (!copy_root(arena_, info, begin_info_)) {
        stop("vkBeginCommandBuffer", arena_.exhausted() ? StopReason::TooLarge : StopReason::UnknownStructure);
        return;
    }
    if (level == VK_COMMAND_BUFFER_LEVEL_SECONDARY && info &&
        !copy_root(arena_, info->pInheritanceInfo, inheritance_)) {
        stop("vkBeginCommandBuffer", arena_.exhausted() ? StopReason::TooLarge : StopReason::UnknownStructure);
        return;
    }
    if (inheritance_) begin_info_->pInheritanceInfo = inheritance_;
}

void CommandCapture::end(VkResult result) {
    ended_ = true;
    if (result != VK_SUCCESS && capturable()) stop("vkEndCommandBuffer", StopReason::NotReplayable);
}

void CommandCapture::stop(const char* where, StopReason reason) {
    if (!capturable()) return;
    if (StopHook hook = stop_hook_) {
        stop_hook_ = nullptr;
        hook(stop_context_, *this);
    }
    stop_ = reason;
    stopped_at_ = where;
    // Nothing of a capture that stopped is ever replayed: give its memory back now.
    clear(false);
}

void CommandCapture::replay(const VkLayerDispatchTable& dispatch, VkCommandBuffer cb) const {
    for (const CaptureRecord* r = head_; r; r = r->next) replay_record(dispatch, cb, *r);
}

}  // namespace slipstream::capture
