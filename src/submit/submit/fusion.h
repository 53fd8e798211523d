// Fusion at submission, for a device (VK_SLIPSTREAM_FUSE): which submissions join a queue's
// open batch, the flushes before everything that observes completion, and the deadline
// flusher (device_fusion.h). Each queue's batch is a QueueFusion (queue_fusion.h); the flush
// rules are flush_policy.h; the submissions themselves are fused_submit.cpp's.
//
// A vkQueueSubmit(2) call is fused whole or not at all: every command buffer it names must
// hold a complete capture made for this queue's family since no layout it may name was
// destroyed, and every submission must be plain (flush_policy.h: classify_submit). A call
// that is not fused first flushes the open batch, then goes to the driver unchanged, so the
// order of work on the queue is always the application's.
#pragma once

#include "submit/device_fusion.h"
#include "submit/flush_policy.h"
#include "submit/queue_locks.h"

#include <vulkan/vulkan.h>

#include <mutex>
#include <optional>
#include <vector>

namespace slipstream {
struct DeviceState;
struct QueueState;
}  // namespace slipstream

namespace slipstream::submit {

// vkCreateDevice succeeded with timeline semaphores: fusion starts on the device.
void start_device(DeviceState& device);
// A queue was retrieved: give it a batch of its own.
void start_queue(DeviceState& device, QueueState& queue);
// vkDestroyDevice: stops the flusher, submits what is open and waits for it.
void stop_device(DeviceState& device);

// vkQueueSubmit / vkQueueSubmit2(KHR) on a queue that fuses.
VkResult queue_submit(QueueState& q, uint32_t count, const VkSubmitInfo* submits, VkFence fence,
                      PFN_vkQueueSubmit next);
VkResult queue_submit2(QueueState& q, uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                       PFN_vkQueueSubmit2 next);

// Records and submits every batch the queue holds, sealed and open (before work or a wait on
// that queue). Returns an error of
// the flush, or one an earlier flush left for the application.
VkResult flush_queue(QueueState& q, FlushReason reason);
// The same for every queue of the device (before a fence, semaphore, query or event is looked
// at, or the device waits). One atomic load when nothing is held.
VkResult flush_device(DeviceState& d, FlushReason reason);
// Before the application destroys or frees an object a capture may name (a pipeline, buffer,
// image, view, sampler, descriptor set, query pool, event) or a held batch may carry (a
// fence): a held batch's replay or submission would hand the driver a dead handle (the
// flusher may be recording one right then), where the driver alone got the work before the destroy (an
// application that destroys what pending work still uses breaks valid usage, and drivers
// mostly survive it; a replay of a freed handle crashes them). One atomic load when nothing
// is held; a failed batch's error reaches the waits on its fences.
void flush_before_destroy(DeviceState& d);
// Before a destroy or free of what a capture of dispatches may name (a buffer, image, view,
// sampler, memory, descriptor set or pool, pipeline or layout; not a fence, semaphore, event or
// query pool) and before a descriptor update: an armed replay may name what it touches (armed_replay.h), so each queue's is disarmed and waited for,
// and the command buffers of ours recorded before it are recorded again before their next use.
// Nothing while arming is off.
void settle_armed(DeviceState& d);
// Before anything that can observe a semaphore of the application's signal (a host wait or
// counter read, a submission that waits on it, sparse binding, a present): submits the held
// batches that carry semaphores (semaphore_carry.h), on every fusing queue but `except` (null: all). One
// atomic load while none is held. Returns the first error.
VkResult flush_signal_holders(DeviceState& d, const QueueState* except = nullptr);
// Before a host wait on or a counter read of these semaphores: submits the held batches that
// signal one of them, on every fusing queue, and no other (a wait on an unrelated semaphore, or
// on one of Slipstream's timelines to answer a fence, lets batches that carry semaphores grow).
VkResult flush_signalers_of(DeviceState& d, uint32_t count, const VkSemaphore* semaphores);
// The same before a submission to `q` that waits on a semaphore, or signals a binary one that
// a held batch of another queue may wait for (that wait must reach the driver before the new
// signal); before one that signals a timeline semaphore, the other queues' held batches that
// wait on it (the waits and signals of one semaphore reach the driver in the application's
// order). One atomic load while no batch holds semaphores.
VkResult flush_holders_before(DeviceState& d, const QueueState* q, uint32_t count, const VkSubmitInfo* submits);
VkResult flush_holders_before(DeviceState& d, const QueueState* q, uint32_t count, const VkSubmitInfo2* submits);
// vkDestroySemaphore, after flush_before_destroy: the queues forget what they noted of it.
void semaphore_destroyed(DeviceState& d, VkSemaphore semaphore);

// Before a wait or status query on the device (these fences, or none): the loss of the device,
// an error a flush of the flusher's met that no call returned yet (taken: returned once), or
// the error of a failed batch that held one of these fences; VK_SUCCESS if none. A few atomic
// loads when there is none.
VkResult fusion_error(DeviceState& d, uint32_t count = 0, const VkFence* fences = nullptr);

// Fences answered from a timeline (batch_fences.h), for the fence entry points.
// Makes these fences real (an empty submission with each, on its queue) where they are
// answered from a timeline: before an export, or a wait that mixes them with others.
void realize_fences(DeviceState& d, uint32_t count, const VkFence* fences);
// vkResetFences, vkDestroyFence, imports: the fences' answers are forgotten.
void forget_fences(DeviceState& d, uint32_t count, const VkFence* fences, bool destroyed);

// The driver answered that these fences signaled (all of them): a queue whose latest fusable
// submission carried one of them learns that everything before it is done
// (submit/queue_fusion.h, note_seen_done).
void note_fences_seen_done(DeviceState& d, uint32_t count, const VkFence* fences);

// The application is about to reset, destroy or import these fences (or export one with copy
// transference): a queue that follows a submission through one of them settles it first
// (QueueFusion::fence_released).
void release_followed_fences(DeviceState& d, uint32_t count, const VkFence* fences);

// vkDeviceWaitIdle: the application waits for everything; every queue learns from it.
void note_device_wait(DeviceState& d);

// Before a wait on or status query of these fences: submits the open batches that carry one
// of them (the others can signal without: their work reached the driver already).
VkResult flush_for_fences(DeviceState& d, uint32_t count, const VkFence* fences);

// Before a wait on or status query of these fences: whether they are answered from timelines
// already seen past their values (all of them, or any: `wait_all`), so signaled. No queue's
// lock and no wait: a ring's older fence, waited for before its command buffer is reused,
// costs a lookup and one counter read per fusing queue (which finds a device lost meanwhile).
// A wait on a queue's newest fence is still noted (the queue's mode).
bool answered_fences_done(DeviceState& d, uint32_t count, const VkFence* fences, bool wait_all);
// A wait on answered fences returned: their timelines reached `values` (QueueFusion::saw_completed).
void note_timelines_reached(DeviceState& d, uint32_t count, const VkSemaphore* timelines, const uint64_t* values);

// Holds a fusing queue's lock, its open batch flushed, for as long as it lives: wraps the
// VkQueue functions other than submissions (labels, sparse binding, present...), so the
// driver never sees the flusher and the application on one queue at once. Does nothing for a
// queue that does not fuse (or null).
class FlushedQueue {
public:
    FlushedQueue(QueueState* q, FlushReason reason);
    // An error of the flush (or left by an earlier one) the caller should return.
    VkResult error() const { return error_; }

private:
    std::optional<QueueLock> lock_;  // the queue lock only, once the flush is done
    VkResult error_ = VK_SUCCESS;
};

// Held across vkQueueWaitIdle (one queue) or vkDeviceWaitIdle (every fusing queue of the
// device), after the flush: the locks of the queues, so that the driver never sees the idle
// wait, and the idle tracker's empty submission and fence polls (idle/queue_idle.h), at once
// with a submission of Slipstream's on another thread. The application holds these queues for
// the call (externally synchronized), so nothing of theirs is pending and neither its
// submissions nor the flusher need the locks meanwhile; what does is a wait on another thread
// that makes one of their fences real (realize_fences), which then waits for the idle wait.
// (A blocking driver call under the lock, as vkQueuePresentKHR's and vkQueueBindSparse's.)
class IdleWaitHold {
public:
    explicit IdleWaitHold(QueueState& q);
    explicit IdleWaitHold(DeviceState& d);

private:
    std::unique_lock<PollingMutex> one_;
    std::vector<std::unique_lock<PollingMutex>> all_;
};

}  // namespace slipstream::submit
