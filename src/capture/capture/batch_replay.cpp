#include "capture/batch_replay.h"

#include "capture_commands.h"

#include <algorithm>

namespace slipstream::capture {

void BatchReplay::begin_batch() {
    pipeline_ = {};
    sets_ = {};
    events_.clear();
    binds_left_out_ = 0;
}

bool BatchReplay::same_pipeline(const CaptureRecord& record) {
    const auto& r = static_cast<const CmdBindPipelineRecord&>(record);
    if (pipeline_.valid && pipeline_.point == r.pipelineBindPoint && pipeline_.pipeline == r.pipeline) return true;
    pipeline_ = {true, r.pipelineBindPoint, r.pipeline};
    return false;
}

bool BatchReplay::same_sets(const CaptureRecord& record) {
    const auto& r = static_cast<const CmdBindDescriptorSetsRecord&>(record);
    const bool same = sets_.valid && sets_.point == r.pipelineBindPoint && sets_.layout == r.layout &&
                      sets_.first == r.firstSet && sets_.count == r.descriptorSetCount &&
                      sets_.offsets == r.dynamicOffsetCount &&
                      std::equal(r.pDescriptorSets, r.pDescriptorSets + r.descriptorSetCount, sets_.sets) &&
                      std::equal(r.pDynamicOffsets, r.pDynamicOffsets + r.dynamicOffsetCount, sets_.dynamic);
    if (same) return true;
    sets_ = {};
    if (r.descriptorSetCount <= kMaxSets && r.dynamicOffsetCount <= kMaxOffsets) {
        sets_.valid = true;
        sets_.point = r.pipelineBindPoint;
        sets_.layout = r.layout;
        sets_.first = r.firstSet;
        sets_.count = r.descriptorSetCount;
        sets_.offsets = r.dynamicOffsetCount;
        std::copy(r.pDescriptorSets, r.pDescriptorSets + r.descriptorSetCount, sets_.sets);
        std::copy(r.pDynamicOffsets, r.pDynamicOffsets + r.dynamicOffsetCount, sets_.dynamic);
    }
    return false;
}

void BatchReplay::replay(const CommandCapture& capture, const VkLayerDispatchTable& d, VkCommandBuffer cb, bool narrow,
                         NarrowingState& state) {
    for (const CaptureRecord* r = capture.records(); r; r = r->next) {
        switch (r->id) {
        case CommandId::CmdBindPipeline:
            if (same_pipeline(*r)) {
                ++binds_left_out_;
                continue;
            }
            break;
        case CommandId::CmdBindDescriptorSets:
            if (same_sets(*r)) {
                ++binds_left_out_;
                continue;
            }
            break;
        // Anything else that changes set bindings: the batch's are no longer known.
        case CommandId::CmdPushDescriptorSetKHR:
        case CommandId::CmdPushDescriptorSetWithTemplateKHR:
        case CommandId::CmdBindDescriptorBuffersEXT:
        case CommandId::CmdSetDescriptorBufferOffsetsEXT:
        case CommandId::CmdBindDescriptorBufferEmbeddedSamplersEXT: sets_ = {}; break;
        default:
            if (narrow && (replay_barrier(*r, d, cb, state) || replay_event(*r, d, cb, state, events_))) continue;
            break;
        }
        replay_record(d, cb, *r);
    }
}

}  // namespace slipstream::capture
