// Command buffers whose own recording the driver may still run. Lazy recording hands the driver
// only replays of ours, so whatever the application does to its command buffers meanwhile, the
// driver never sees one change under running work. The latency path's direct submission, and a
// submission passed through, hand the driver the application's command buffer itself
// (CommandBufferState::native_on notes which submission). Before the application re-begins,
// resets or frees such a command buffer, or resets or destroys its pool, the layer makes sure
// that submission completed, and waits for it where it did not.
//
// Valid usage says it has completed: then this costs an atomic load (the queue's timeline seen
// past it), a counter read (and, where that lags, as lavapipe's may behind the fence of the same
// submission, a look at the idle tracker's queue state under its lock), or, for a submission
// followed through the application's fence, two atomic loads (the fence seen signaled ended the
// follow), else the queue lock and a status query of that fence (a submission still running is
// then followed by the timeline: QueueFusion::settle_followed). Nothing waits, except where
// lavapipe shows a semaphore of the submission signaled before the timeline value: then the
// wait lasts that moment (8 and 12 resets in two sets of 2,100 random-program runs). An
// application that breaks valid usage (a pool reset or destroyed under pending work:
// misuse.scenarios' pool_gone_direct_pending_at_once) waits for its work instead of racing the
// driver, which crashed lavapipe's queue thread in 14 of 40 runs under LAZY_RECORD=auto before
// this, and in 2 of 40 without the layer (`native_waits` counts the waits). Left out: a
// followed submission whose fence the application reset, destroyed or imported while it ran (a
// second misuse) counts as done; secondary command buffers that a natively recorded one
// executes.
#pragma once

#include <vulkan/vulkan.h>

namespace slipstream {
struct DeviceState;
struct CommandBufferState;
}  // namespace slipstream

namespace slipstream::submit {

// Before the driver may reset or free `cb`'s own recording.
void settle_native(const CommandBufferState& cb);
// The same for every command buffer of `pool` (a pool reset or destroy).
void settle_native_pool(DeviceState& d, VkCommandPool pool);

}  // namespace slipstream::submit
