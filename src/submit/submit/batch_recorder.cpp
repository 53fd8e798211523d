#include "submit/batch_recorder.h"

#include "capture/barrier_cover.h"
#include "capture/barrier_narrowing.h"
#include "submit/capture_control.h"
#include "state/object_state.h"

namespace slipstream::submit {

namespace {
// The barrier between two fused command buffers: everything compute and transfer work wrote
// before it is visible to, and ordered before, compute and transfer work after it, indirect
// parameters included. Access bits are named, not MEMORY_* (FUSION.md rule 8).
// (capture/barrier_cover.h: a command buffer that opens with a barrier holding this one's
// scopes and accesses needs none.)
void fuse_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb, bool indirect) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = capture::kFuseSrcAccess;
    barrier.dstAccessMask = capture::fuse_dst_access(indirect);
    d.CmdPipelineBarrier(cb, capture::kFuseSrcStages, capture::fuse_dst_stages(indirect), 0, 1, &barrier, 0, nullptr, 0,
                         nullptr);
}

bool dispatches_indirectly(const CommandBufferState& cb) { return cb.stages & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT; }

VkResult begin_one_time(const VkLayerDispatchTable& d, VkCommandBuffer cb) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    return d.BeginCommandBuffer(cb, &begin);
}
}  // namespace

VkResult BatchRecorder::record(const HeldBatch& b, VkCommandBuffer cb, bool closing) {
    const VkLayerDispatchTable& d = d_.dispatch;
    VkResult r = begin_one_time(d, cb);
    replay_.begin_batch();
    if (d_.settings.narrow_barriers)  // which event sets and waits pair only among themselves
        for (const CommandBufferState* state : b.cbs)
            replay_.plan_events(*state->capture, state->narrowable, dispatches_indirectly(*state));
    elision_.begin_batch();
    // Footprints compare only within a batch: a batch of one needs none.
    const bool compare = d_.resources && b.cbs.size() > 1;
    bool narrowed = false;
    for (const CommandBufferState* state : b.cbs) {
        const bool after_wait = b.after_wait && state == b.cbs.front();
        if (r == VK_SUCCESS && d_.settings.fuse_barrier) fuse_barrier_before(*state, cb, after_wait, compare);
        if (r == VK_SUCCESS) narrowed = replay_into_batch(*state, cb) || narrowed;
        // Replayed: the application may reset or free it once its work is done.
        state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
    }
    if (r != VK_SUCCESS) return r;
    close_batch(cb, closing, narrowed);
    d_.stats.add(Counter::BindsLeftOut, replay_.binds_left_out());
    return d.EndCommandBuffer(cb);
}

void BatchRecorder::fuse_barrier_before(const CommandBufferState& state, VkCommandBuffer cb, bool after_wait,
                                        bool compare) {
    // In front of every fused command buffer, a batch's first too: to an application that
    // relies on command-buffer boundaries, the work before the batch on the queue is as much
    // "the command buffer before" as the work before it in the batch. Except where that work
    // is done, and the application waited for it before it submitted this (a wait on every
    // submission): then the command buffer follows it as it would without the layer, in a
    // submission of its own after the wait (H200: a bare dispatch waited for at once, 21.1 us
    // with that barrier, 17.9 us with FUSE_BARRIER=off, 17.6 no layer).
    if (after_wait) {
        d_.stats.add(Counter::FuseBarriersAfterWait);
        if (compare) elision_.ordered(capture::footprint_for(state, footprint_scratch_));
    } else if (state.opens_ordered) {
        d_.stats.add(Counter::FuseBarriersLeftOut);
        if (compare) elision_.ordered(capture::footprint_for(state, footprint_scratch_));
    } else if (compare && elide_fuse_barrier(state)) {
        d_.stats.add(Counter::FuseBarriersElided);
    } else {
        fuse_barrier(d_.dispatch, cb, dispatches_indirectly(state));
    }
}

bool BatchRecorder::elide_fuse_barrier(const CommandBufferState& state) {
    if (d_.settings.elide_proof == ElideProof::Off) return elision_.may_elide_blindly();
    return elision_.may_elide(capture::footprint_for(state, footprint_scratch_), dispatches_indirectly(state));
}

void BatchRecorder::close_batch(VkCommandBuffer cb, bool closing, bool narrowed) {
    if (!d_.settings.narrow_history) {
        trailing_owed_ = narrowed_without_indirect_ = false;
    } else if (trailing_owed_ && (closing || trailing_.at_batch_end())) {
        // What comes after the batch on the queue may be work in any stage (capture/narrowing.md, case 4).
        capture::record_trailing_barrier(d_.dispatch, cb);
        d_.stats.add(Counter::FullBarriersInserted);
        trailing_owed_ = narrowed_without_indirect_ = false;
    } else if (trailing_owed_ && narrowed) {
        // Owed: later work in the narrowed stages needs none; other work gets it first.
        d_.stats.add(Counter::TrailingBarriersOwed);
    }
    if (narrowed) {
        trailing_.narrowed_batch();
        narrowed_since_other_ = true;
    }
}

bool BatchRecorder::replay_into_batch(const CommandBufferState& state, VkCommandBuffer cb) {
    const VkLayerDispatchTable& d = d_.dispatch;
    capture::NarrowingState s;
    if (!d_.settings.narrow_barriers) {
        replay_.replay(*state.capture, d, cb, false, s);
        return false;
    }
    const bool history = d_.settings.narrow_history;
    const bool indirect = dispatches_indirectly(state);
    if (indirect && narrowed_without_indirect_ && history) {
        // Narrowed barriers before it did not reach indirect parameter reads (capture/narrowing.md).
        fuse_barrier(d, cb, true);
        d_.stats.add(Counter::FullBarriersInserted);
    }
    narrowed_without_indirect_ = narrowed_without_indirect_ && !indirect;
    if (!state.narrowable) {
        replay_whole(state, cb);
        return false;
    }
    s.indirect = indirect;
    s.full_first = other_work_before_.load(std::memory_order_relaxed) && history;
    replay_.replay(*state.capture, d, cb, true, s);
    other_work_before_.store(s.full_first, std::memory_order_relaxed);
    if (s.narrowed) {
        trailing_owed_ = true;
        if (!indirect) narrowed_without_indirect_ = true;
    }
    d_.stats.add(Counter::BarriersSeen, s.seen);
    d_.stats.add(Counter::BarriersNarrowed, s.narrowed);
    d_.stats.add(Counter::EventSetsNarrowed, s.event_sets_narrowed);
    d_.stats.add(Counter::EventWaitsNarrowed, s.event_waits_narrowed);
    d_.stats.add(Counter::FullBarriersInserted, s.inserted);
    return s.narrowed != 0;
}

void BatchRecorder::replay_whole(const CommandBufferState& state, VkCommandBuffer cb) {
    // Work in other stages (queries, timestamps): narrowed barriers before it get a full one
    // of ours in front of it, and barriers after it stay whole (capture/narrowing.md).
    if (trailing_owed_ && d_.settings.narrow_history) {
        capture::record_trailing_barrier(d_.dispatch, cb);
        d_.stats.add(Counter::FullBarriersInserted);
    }
    trailing_owed_ = narrowed_without_indirect_ = false;
    capture::NarrowingState s;
    replay_.replay(*state.capture, d_.dispatch, cb, false, s);
    other_work_before_.store(true, std::memory_order_relaxed);
}

VkResult BatchRecorder::record_alone(const CommandBufferState& cb, VkCommandBuffer ours, bool* reset) {
    const VkLayerDispatchTable& d = d_.dispatch;
    *reset = false;
    if (VkResult r = d.BeginCommandBuffer(ours, cb.capture->begin_info()); r != VK_SUCCESS) return r;
    cb.capture->replay(d, ours);
    if (VkResult r = d.EndCommandBuffer(ours); r != VK_SUCCESS) {
        *reset = true;
        return r;
    }
    d_.stats.add(Counter::LazyReplayedAlone);
    return VK_SUCCESS;
}

VkResult BatchRecorder::record_trailing_barrier(VkCommandBuffer cb) {
    const VkLayerDispatchTable& d = d_.dispatch;
    VkResult r = begin_one_time(d, cb);
    if (r == VK_SUCCESS) {
        capture::record_trailing_barrier(d, cb);
        r = d.EndCommandBuffer(cb);
    }
    return r;
}

void BatchRecorder::trailing_barrier_submitted() {
    d_.stats.add(Counter::TrailingBarriersSubmitted);
    d_.stats.add(Counter::FullBarriersInserted);
    trailing_owed_ = narrowed_without_indirect_ = false;
}

bool BatchRecorder::leaves_narrowed_stages(const CommandBufferState* cb) const {
    if (!cb || !cb->narrowable) return true;
    return narrowed_without_indirect_ && dispatches_indirectly(*cb);
}

void BatchRecorder::batch_failed() {
    if (d_.settings.narrow_history) trailing_owed_ = narrowed_without_indirect_ = true;
}

void BatchRecorder::before_other_work(bool passed, bool other_stages) {
    // Work fusion does not replay comes next: later barriers must reach it (capture/narrowing.md).
    if (passed) other_work_before_.store(true, std::memory_order_relaxed);
    if (!other_stages) return;
    if (narrowed_since_other_) trailing_.other_work();
    narrowed_since_other_ = false;
}

}  // namespace slipstream::submit
