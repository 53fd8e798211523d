// How fusion replays captures into one batch: in order, each pipeline barrier narrowed where
// it may be (barrier_narrowing.h), and state a capture binds left out where the batch already
// has exactly that bound (a naive runtime binds the same pipeline and descriptor sets in every
// command buffer; in one batch only the first bind is needed).
//
// Vulkan keeps bound state across the commands of a command buffer: binding a pipeline does
// not disturb descriptor set bindings, so an identical vkCmdBindPipeline is redundant; an
// identical vkCmdBindDescriptorSets (same bind point, layout, first set, sets and dynamic
// offsets) is redundant while nothing else changed set bindings since (another set bind, a
// push descriptor, descriptor buffers: each forgets what the batch had bound).
#pragma once

#include "capture/barrier_narrowing.h"

namespace slipstream::capture {

class BatchReplay {
public:
    // A new batch: nothing bound yet, no event plan.
    void begin_batch();
    // Before the batch's replays, where barriers are narrowed: every capture of the batch, in
    // order (`narrowed`: replayed with narrowing), for the event plan (barrier_narrowing.h).
    void plan_events(const CommandCapture& capture, bool narrowed, bool indirect) {
        events_.add(capture, narrowed, indirect);
    }
    // Replays `capture` into `cb` (`narrow`: barriers narrowed; `state` says what the queue's
    // history allows and counts what happened).
    void replay(const CommandCapture& capture, const VkLayerDispatchTable& d, VkCommandBuffer cb, bool narrow,
                NarrowingState& state);
    uint32_t binds_left_out() const { return binds_left_out_; }

private:
    static constexpr uint32_t kMaxSets = 8, kMaxOffsets = 8;
    struct SetBinding {
        bool valid = false;
        VkPipelineBindPoint point{};
        VkPipelineLayout layout = VK_NULL_HANDLE;
        uint32_t first = 0, count = 0, offsets = 0;
        VkDescriptorSet sets[kMaxSets] = {};
        uint32_t dynamic[kMaxOffsets] = {};
    };
    struct PipelineBinding {
        bool valid = false;
        VkPipelineBindPoint point{};
        VkPipeline pipeline = VK_NULL_HANDLE;
    };
    bool same_pipeline(const CaptureRecord& r);
    bool same_sets(const CaptureRecord& r);

    PipelineBinding pipeline_;
    SetBinding sets_;
    EventPlan events_;
    uint32_t binds_left_out_ = 0;
};

}  // namespace slipstream::capture
