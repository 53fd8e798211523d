// QueueFusion's part in armed launches (armed_replay.h): the submission that releases the armed
// replay, the disarms that destroys, frees and updates ask for, and the deadline.
#include "submit/queue_fusion.h"

#include "core/clock.h"
#include "state/object_state.h"
#include "submit/device_fusion.h"
#include "idle/queue_idle.h"

namespace slipstream::submit {

bool QueueFusion::releases_armed(const CommandBufferState& cb, VkFence fence) {
    // A queue that no longer waits for each submission gains more from batches.
    if (!waits_.latency_mode() || batches_.has_pending()) return false;
    // A fence that leaves the layer's sight must be signaled by the driver itself.
    if (fence && d_.fusion->fences().exportable(fence)) return false;
    return timeline_.armed().matches(cb);
}

VkResult QueueFusion::release_armed(const CommandBufferState& cb, VkFence fence) {
    waits_.note_submission(fence);
    recorder_.ran_native_work();  // the application's barriers, whole
    // The idle tracker learns that the queue is busy (no fence of the driver's says when it
    // is done: idle waits ask the replay's completion, QueueTimeline::poll_idle).
    TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
    VkSemaphore done = VK_NULL_HANDLE;
    uint64_t value = 0;
    const VkResult r = timeline_.armed().release(&done, &value);
    tracked.end(r);
    if (r != VK_SUCCESS) return r;
    if (fence) {
        d_.fusion->fences().answer_later({fence, this, done, value});
        d_.stats.add(Counter::FencesAnswered);
    }
    timeline_.armed().arm(cb);
    return VK_SUCCESS;
}

bool QueueFusion::disarm_for_objects(VkSemaphore* done, uint64_t* value) {
    ArmedReplay& armed = timeline_.armed();
    armed.disarm(Counter::ArmDisarmedObjects);
    *done = armed.done();
    return armed.skipped_running(value);
}

void QueueFusion::disarm_if_late(uint64_t now, uint64_t* wake_at) {
    ArmedReplay& armed = timeline_.armed();
    if (!armed.armed()) return;
    if (now >= armed.deadline_ns()) armed.disarm(Counter::ArmDisarmedDeadline);
    else *wake_at = std::min(*wake_at, armed.deadline_ns());
}

}  // namespace slipstream::submit
