// Recording one fusing queue's batches into command buffers of ours, with the history that
// barrier narrowing needs across batches (capture/barrier_narrowing.h, capture/narrowing.md). All of it
// is guarded by the recording lock (queue_locks.h), except where a member says otherwise; the
// command buffers come from QueueTimeline.
//
// A batch is recorded on the flusher thread where it filled up or the GPU ran dry, so the
// application's thread pays for no replay (on the H200 a naive small command buffer's replay
// costs ~1.2-1.7 us); an observation or a pass-through submission records what is held on the
// thread that makes it.
#pragma once

#include "capture/barrier_elision.h"
#include "capture/batch_replay.h"
#include "submit/batch_queue.h"
#include "submit/flush_policy.h"

#include <vulkan/vulkan.h>

#include <atomic>

namespace slipstream::submit {

class BatchRecorder {
public:
    explicit BatchRecorder(DeviceState& device) : d_(device) {}

    // Records `b` into `cb`. `closing`: the batch ends with the barrier that closes narrowed
    // work even if the policy would owe it.
    VkResult record(const HeldBatch& b, VkCommandBuffer cb, bool closing);
    // A lazily recorded command buffer replayed alone into `ours`, ended (its own begin info:
    // usage and pNext, device group masks, as the application recorded it). On failure `ours`
    // is ready for reuse only if `*reset` is false.
    VkResult record_alone(const CommandBufferState& cb, VkCommandBuffer ours, bool* reset);
    // `cb` with only the closing barrier the queue owes; trailing_barrier_submitted() once it
    // went to the driver.
    VkResult record_trailing_barrier(VkCommandBuffer cb);
    void trailing_barrier_submitted();

    // Whether `cb` (null: a command buffer Slipstream does not know) may work outside the stages
    // that the narrowed barriers the queue owes a closing barrier for reach: not narrowable
    // (graphics, queries, not captured), or an indirect dispatch after barriers narrowed short of
    // its parameter reads. With the recording lock held, or the queue lock with nothing pending.
    bool leaves_narrowed_stages(const CommandBufferState* cb) const;
    bool owes_trailing_barrier() const { return trailing_owed_; }
    // A batch of ours never reached the GPU: if it ended with the closing barrier, the
    // narrowed batches before it still owe it.
    void batch_failed();
    // Everything held was flushed in front of work fusion does not replay (`passed`: a
    // submission passed through; `other_stages`: work outside the narrowed stages).
    void before_other_work(bool passed, bool other_stages);
    // (Queue lock only, nothing pending.) The application's own command buffers went to the
    // driver, recorded natively: their barriers were whole.
    void ran_native_work() { other_work_before_ = true; }

private:
    // The fuse barrier in front of `state` in the batch `cb`, unless it may be left out.
    void fuse_barrier_before(const CommandBufferState& state, VkCommandBuffer cb, bool after_wait, bool compare);
    // Whether the fuse barrier in front of `state` may be left out (capture/barrier_elision.h).
    bool elide_fuse_barrier(const CommandBufferState& state);
    // The closing barrier at the end of a batch whose replay narrowed barriers (`narrowed`).
    void close_batch(VkCommandBuffer cb, bool closing, bool narrowed);
    // Replays a capture into batch `cb`, its ALL_COMMANDS barriers narrowed where the queue's
    // history allows. Returns whether it narrowed one.
    bool replay_into_batch(const CommandBufferState& state, VkCommandBuffer cb);
    // The same for a capture that works outside the narrowable stages.
    void replay_whole(const CommandBufferState& state, VkCommandBuffer cb);

    DeviceState& d_;
    capture::BatchReplay replay_;
    capture::BarrierElision elision_;       // the footprints since our last barrier
    capture::Footprint footprint_scratch_;  // capture::footprint_for's spare
    // Barrier narrowing's history: the queue ran work outside the narrowed stages since the
    // last whole ALL_COMMANDS barrier, so the next one stays whole (atomic: ran_native_work);
    // barriers narrowed since our last barrier toward ALL_COMMANDS, their second scopes short
    // of other stages (capture/narrowing.md, case 4: the queue owes the closing barrier; across
    // batches), and short of indirect parameter reads; the policy for where the closing
    // barrier goes, and whether a batch with narrowed barriers was recorded since the queue
    // last ran other work.
    std::atomic<bool> other_work_before_{true};
    bool trailing_owed_ = false;
    bool narrowed_without_indirect_ = false;
    TrailingBarrierPolicy trailing_;
    bool narrowed_since_other_ = false;
};

}  // namespace slipstream::submit
