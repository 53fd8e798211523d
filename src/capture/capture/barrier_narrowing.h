// Narrowing of ALL_COMMANDS barriers when fusion replays a capture into its batch
// (VK_SLIPSTREAM_NARROW_BARRIERS; the argument, case by case: narrowing.md, next to this).
//
// A batch holds only compute and transfer work, so an ALL_COMMANDS stage mask in a barrier of
// a fused command buffer can be replaced by the stages that work uses: compute and transfer,
// and draw-indirect after it where the capture dispatches indirectly (a barrier into
// DRAW_INDIRECT makes NVIDIA's front end wait for idle as ALL_COMMANDS does), keeping HOST
// where the barrier names it. MEMORY_READ / MEMORY_WRITE on a narrowed side become the
// accesses of its stages, named (FUSION.md rule 8); other access bits, layout transitions and
// the barrier's structures stay as recorded;
// a barrier whose accesses would not fit the narrowed stages, or that transfers queue-family
// ownership, or has dependency flags other than BY_REGION (which no narrowed stage is
// subject to), is replayed as it is. On the H200 an ALL_COMMANDS barrier
// costs ~3 us of GPU time more per dispatch than a compute|transfer one.
//
// What the queue did outside fusion's batches is the caller's (BatchRecorder): the first barrier
// narrowed after work fusion did not replay gets a full barrier of Slipstream's in front of it
// (record_leading_barrier), and a batch whose barriers were narrowed ends with one
// (record_trailing_barrier).
//
// Events (narrowing.md, case 7): what a set or wait orders before it (vkCmdSetEvent's stage
// mask, a wait's source side) stays as recorded: it must match across set and wait, and it is
// what orders the set after the event's reset. A vkCmdWaitEvents' destination side is the
// wait's own and is narrowed like a barrier's. vkCmdWaitEvents2's dependency infos must equal
// the vkCmdSetEvent2 ones: their destination sides are narrowed, in the set and the waits
// alike, only where every set and wait that can pair with them is provably transformed the
// same way: between two device resets of the event in one batch, with every capture between
// them replayed with narrowing (EventPlan).
#pragma once

#include "capture/command_capture.h"
#include "capture/event_plan.h"

#include <vulkan/vk_layer_dispatch_table.h>

#include <cstdint>

namespace slipstream::capture {

// The stages a batch's work uses, on either side of a narrowed barrier (draw-indirect after it
// only in captures that dispatch indirectly).
inline constexpr uint64_t kNarrowSrcStages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT;
inline constexpr uint64_t kNarrowDstStages = kNarrowSrcStages;
inline constexpr uint64_t kNarrowDstIndirectStages = kNarrowSrcStages | VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT;
inline uint64_t narrow_dst_stages(bool indirect) { return indirect ? kNarrowDstIndirectStages : kNarrowDstStages; }

// Narrows one pair of stage masks (either synchronization version: their bits agree where
// these rules look) if a side names ALL_COMMANDS and the accesses fit. Returns whether it did.
bool narrow_stage_masks(uint64_t& src_stages, uint64_t& dst_stages, uint64_t src_access, uint64_t dst_access,
                        bool indirect = false);

// Whether every command of the capture works in the narrowed stages (transfer's sub-stages
// count as transfer; event commands do no work of their own): a capture with queries,
// timestamps or descriptor buffers is replayed as it is, and counts as work outside the
// narrowed stages for the barriers around it.
bool narrowable_work(const CommandCapture& capture);

// What one batch's replays did.
struct NarrowingState {
    bool indirect = false;         // in: the capture dispatches indirectly
    bool full_first = false;       // in/out: the queue ran work fusion did not replay (history)
    uint32_t seen = 0;             // pipeline barriers and event sets and waits replayed
    uint32_t narrowed = 0;         // ... with narrowed stage masks
    uint32_t inserted = 0;         // full barriers of ours put in front of one (history)
    uint32_t event_sets_narrowed = 0;   // event sets among `narrowed` (vkCmdSetEvent2's info)
    uint32_t event_waits_narrowed = 0;  // event waits among `narrowed`
};

// How many of the capture's pipeline barriers a batch's replay would narrow, event waits and
// vkCmdSetEvent2s counted as if it would (the capture must be narrowable_work), counting no
// further than `enough`.
uint32_t count_narrowable_barriers(const CommandCapture& capture, bool indirect, uint32_t enough);

// Replays one pipeline barrier record (vkCmdPipelineBarrier, 2 or 2KHR), narrowed where it
// can be; false for any other record (nothing recorded).
bool replay_barrier(const CaptureRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb, NarrowingState& state);

// Replays one vkCmdSetEvent2/KHR or vkCmdWaitEvents/2/KHR record of a narrowed capture, its
// destination side narrowed where it (and `plan`) allows; false for any other record (nothing
// recorded).
bool replay_event(const CaptureRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb, NarrowingState& state,
                  EventPlan& plan);


// The barrier a batch with narrowed barriers ends with: everything its work wrote, before
// everything the queue does after it.
void record_trailing_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb);
// The barrier in front of the first narrowed one after work fusion did not replay: everything
// before it on the queue, before the batch's work.
void record_leading_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb, bool indirect);

}  // namespace slipstream::capture
