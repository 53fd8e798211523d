// Fusion at submission, for one queue: the face the rest of the layer sees of the parts that
// hold one queue's fusion, each behind the lock that guards it (queue_locks.h):
//
//   BatchQueue     the open batch and the sealed ones (queue lock)
//   BatchRecorder  their replay into command buffers of ours, with barrier narrowing's
//                  history (recording lock)
//   QueueTimeline  our submissions, our command buffers and the timeline semaphore that says
//                  which completed; the fence followed on the latency path (queue lock)
//   WaitHistory    what the application's waits taught (atomics, read under the queue lock)
//   KeptError      an error the flusher met, for the next caller (queue lock)
//
// A fused submission is only noted in the open batch (its capture, to be replayed later): the
// replay into a command buffer of ours, and its submission, happen when the batch goes, on the
// flusher thread where the batch filled up or the GPU ran dry, so the application's thread
// pays neither (on the H200 a batch's vkQueueSubmit costs ~5-7 us). A batch that filled up is
// sealed and handed to the flusher; an observation (a wait, a status query) or a pass-through
// submission submits everything held, in order, on the thread that makes it.
//
// No blocking driver wait of Slipstream's is made under the queue lock (the application's own
// vkQueueWaitIdle, vkDeviceWaitIdle, present and sparse binding hold it: fusion.h, IdleWaitHold).
#pragma once

#include "submit/batch_queue.h"
#include "submit/batch_recorder.h"
#include "submit/flush_policy.h"
#include "submit/kept_error.h"
#include "submit/queue_locks.h"
#include "submit/queue_timeline.h"
#include "submit/wait_history.h"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace slipstream {
struct NativeSubmission;
}  // namespace slipstream

namespace slipstream::submit {

class QueueFusion {
public:
    QueueFusion(DeviceState& device, QueueState& queue)
        : d_(device), q_(queue), batches_(device), recorder_(device), timeline_(device, queue), error_(device) {}
    QueueFusion(const QueueFusion&) = delete;
    QueueFusion& operator=(const QueueFusion&) = delete;

    // Creates the command pool and the timeline semaphore; false: this queue does not fuse.
    bool init() { return timeline_.init(); }
    QueueLocks& locks() { return locks_; }

    // --- with the queue lock held ---
    // Notes one application command buffer in the open batch (opening one); its capture is
    // replayed when the batch goes.
    void append(const CommandBufferState& cb);
    // The application's fence of a fused submission: signaled after the batch that holds it.
    void add_fence(VkFence fence) { batches_.add_fence(fence); }
    // A fused submission's signals (semaphore_carry.h): carried by the open batch.
    void add_signals(const std::vector<SemaphoreValue>& signals) {
        batches_.add_signals(signals);
        note_signals(signals);
    }
    // The waits of the submission that opened the batch (semaphore_carry.h): the batch waits.
    void add_waits(const std::vector<SemaphoreValue>& waits) { batches_.add_waits(waits); }
    void add_reached_waits(const std::vector<SemaphoreValue>& waits) { batches_.add_reached_waits(waits); }
    // Binary semaphore pairs inside the open batch (semaphore_carry.h).
    bool signals_binary(VkSemaphore semaphore) const { return batches_.signals_binary(semaphore); }
    void pair_binary(VkSemaphore semaphore) { batches_.pair_binary(semaphore); }
    // Whether one of `signals` meets a wait the open batch carries (a wait before its signal
    // on this queue: that signal's submission goes in a batch after it).
    bool waited_by_open(const std::vector<SemaphoreValue>& signals) const { return batches_.waited_by_open(signals); }
    // Timeline signals that go to the driver in queue order from here (fused or direct): a
    // later wait on one of them is met by the work before it on this queue.
    void note_signals(const std::vector<SemaphoreValue>& signals) {
        for (const SemaphoreValue& s : signals) {
            if (s.binary) continue;
            uint64_t& v = signaled_[s.semaphore];
            if (s.value > v) v = s.value;
        }
    }
    // Whether earlier fused or direct work on this queue signals `wait`'s value or more.
    bool signaled_here(const SemaphoreValue& wait) const {
        auto it = signaled_.find(wait.semaphore);
        return it != signaled_.end() && it->second >= wait.value;
    }
    // The application destroys `semaphore` (with everything held submitted): forget its signals.
    void forget_semaphore(VkSemaphore semaphore) { signaled_.erase(semaphore); }
    bool open() const { return batches_.open(); }
    // The open batch is full: it goes to the flusher, which records and submits it. False when
    // the flusher is behind (two batches waiting): then the caller flushes itself.
    bool seal() { return batches_.seal(); }
    // Whether a batch not yet submitted carries one of these fences (their signal waits for it).
    bool holds_any(uint32_t count, const VkFence* fences) const { return batches_.holds_any(count, fences); }
    // The open batch (with the counter read for in_flight) as the flush rules see it.
    OpenBatch batch_state();
    bool latency_mode() const { return waits_.latency_mode(); }
    void note_submission(VkFence fence) { waits_.note_submission(fence); }
    bool waits_seen_below() const { return waits_.waits_seen_below(); }
    uint64_t submit_cost_ns() const { return timeline_.submit_cost_ns(); }
    // With the recording lock held too: records and submits every batch held (the sealed ones,
    // then the open one) and the empty submissions that signal their fences. An error of the
    // driver's comes back (the batch's work then went to the driver as the application's own
    // command buffers, if the driver took those); VK_SUCCESS when there was nothing to do.
    // `other_stages_next`: work outside the narrowed stages comes next on the queue (a
    // pass-through submission that leaves_narrowed_stages), so the barrier that closes narrowed
    // batches (capture/narrowing.md, case 4) goes at the end of the last one, or, if the queue owes it
    // with nothing held, in a submission of its own.
    VkResult flush(FlushReason reason, bool other_stages_next = false);
    bool leaves_narrowed_stages(const CommandBufferState* cb) const { return recorder_.leaves_narrowed_stages(cb); }
    bool owes_trailing_barrier() const { return recorder_.owes_trailing_barrier(); }
    // With no batch open: submits the application's own command buffers (still recorded
    // natively) as it asked, plus the queue's timeline signal, so the next submission knows
    // whether the GPU is still busy with them. `*done`: what says it completed (the caller notes
    // it on the command buffers it found, note_native).
    VkResult submit_direct(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next,
                           NativeSubmission* done);
    VkResult submit_direct(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next,
                           NativeSubmission* done);
    // With both locks, after everything held: a submission passed through. Each lazily
    // recorded command buffer it names is replayed into a command buffer of ours in its place,
    // and its last batch (or one more after it) signals the queue's timeline, as every
    // submission to a fusing queue does (ours are recycled once it passes).
    VkResult submit_passed(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next);
    VkResult submit_passed(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next);
    // vkQueueWaitIdle on the queue (vkDestroyDevice only: it blocks under the lock).
    VkResult wait_idle() { return timeline_.wait_idle(); }
    // An empty submission with `fence`: it signals once everything submitted so far is done.
    VkResult signal_fence(VkFence fence);
    // Submissions of ours (batches and direct ones) not yet complete (one counter read).
    uint64_t in_flight() { return timeline_.in_flight(); }
    // The queue's idleness, for the application's idle waits (waits/waits.cpp): every
    // submission to a fusing queue signals its timeline, so VK_SUCCESS once the timeline has
    // reached the newest one (one counter read, no fence of ours), VK_NOT_READY before;
    // VK_INCOMPLETE while the queue holds work the timeline does not follow (sparse binding,
    // present) that no idle wait of the driver's has covered since; or the driver's error.
    VkResult poll_idle() { return timeline_.poll_idle(); }
    void note_untracked_work() { timeline_.note_untracked_work(); }
    // A driver's idle wait on the queue (or the device) returned.
    void note_driver_idle() {
        timeline_.note_driver_idle();
        note_seen_done();
    }
    // The first error a flush met that no caller has returned yet (VK_SUCCESS if none); device
    // loss (DeviceState::lost) stays.
    VkResult take_error() { return error_.take(); }
    // Records the error of a flush the caller cannot return (the deadline flusher).
    void keep_error(VkResult result) { error_.keep(result); }

    // --- armed launches (armed_replay.h), with the queue lock held ---
    // Whether a replay waits on the queue for a host release (any thread, no lock).
    bool armed() const { return timeline_.armed().armed(); }
    // Whether a submission of `cb` with `fence` may release it: the same work, the queue in
    // latency mode, a fence that may be answered from the replay's completion.
    bool releases_armed(const CommandBufferState& cb, VkFence fence);
    // Releases it for that submission (`fence` answered from its completion), and arms the
    // next replay of the same work.
    VkResult release_armed(const CommandBufferState& cb, VkFence fence);
    // After a direct submission of `cb` alone: arms a replay of it.
    void arm(const CommandBufferState& cb) { timeline_.armed().arm(cb); }
    void disarm(Counter why) { timeline_.armed().disarm(why); }
    // A destroy, free or descriptor update: disarms it; true, with the completion to wait for
    // (outside the lock) before the call may go on, while a disarmed replay may still run.
    bool disarm_for_objects(VkSemaphore* done, uint64_t* value);
    // vkDestroyDevice: whether a replay of ours (released or disarmed) may still run.
    bool armed_replay_running() {
        uint64_t value = 0;
        return timeline_.armed().busy() || timeline_.armed().skipped_running(&value);
    }
    // The flusher: disarms a replay nobody claimed before its deadline, or lowers *wake_at to it.
    void disarm_if_late(uint64_t now, uint64_t* wake_at);
    // The flusher, with no lock: ArmedReplay::unblock_if_late.
    void unblock_arming(uint64_t now, uint64_t* wake_at) { timeline_.armed().unblock_if_late(now, wake_at); }

    // --- the flusher thread, no lock held ---
    // Records and submits the oldest sealed batch, or the open one if the flush rules say it
    // is time. Returns true if it submitted one (call again); else says when to look again:
    // at `wake_at` (now_ns()), or once the queue's timeline reaches `*timeline_value` (nonzero).
    bool flusher_turn(uint64_t max_defer_ns, uint64_t* wake_at, uint64_t* timeline_value);

    // --- any thread, no lock ---
    // The application waited for the latest submission (wait_history.h).
    void note_wait() { waits_.note_wait(); }
    // The driver answered that the fence of the latest submission signaled.
    void note_seen_done() { waits_.note_seen_done(); }
    // The driver answered that `fence` signaled: if the queue follows a submission through it
    // (followed_fence.h), that submission is done.
    void fence_signaled(VkFence fence) {
        if (follows(fence)) timeline_.followed().stop(fence);
    }
    // Whether the queue follows a submission through `fence`.
    bool follows(VkFence fence) const { return timeline_.followed().follows(fence); }
    // Whether the submission followed through `fence` as follow `generation` may still run
    // (followed_fence.h): the queue still follows it. Any thread, no lock.
    bool follows_now(VkFence fence, uint64_t generation) const {
        return timeline_.followed().follows_now(fence, generation);
    }
    // The application is about to reset, destroy or import `fence`, which the queue follows a
    // submission through. Valid usage says that submission completed; if the driver does not
    // say so (a misuse), an empty submission that signals the timeline follows it instead.
    void fence_released(VkFence fence);
    // A command buffer that the submission followed through `fence` as follow `generation` ran
    // is being reset or freed (native_settle.h): if that submission may still run, the timeline
    // follows it from now on, and the value that says it completed is returned; 0: it is done,
    // followed no more, or the signal could not be submitted. Takes the queue lock, under which
    // the fence is looked at: the follow's end and the application's destroy of the fence wait
    // for no look made without it.
    uint64_t settle_followed(VkFence fence, uint64_t generation);
    // A batch is open, sealed or being recorded.
    bool has_pending() const { return batches_.has_pending(); }
    // A batch held signals semaphores of the application's (an observer flushes it first).
    bool holds_signals() const { return batches_.holds_signals(); }
    // With the queue lock held: whether a batch held signals one of these semaphores.
    bool signals_any(uint32_t count, const VkSemaphore* semaphores) const {
        return batches_.signals_any(count, semaphores);
    }
    // With the queue lock held: whether a batch held waits on one of these semaphores.
    bool waits_any(uint32_t count, const VkSemaphore* semaphores) const { return batches_.waits_any(count, semaphores); }
    // Whether one of these fences is the one of the latest fusable submission.
    bool latest_fence_in(uint32_t count, const VkFence* fences) const { return waits_.latest_fence_in(count, fences); }
    VkSemaphore timeline() const { return timeline_.timeline(); }
    // The value the newest submitted batch signals (read under the queue lock for an exact answer).
    uint64_t submitted_value() const { return timeline_.submitted_value(); }
    // Any thread, no lock: a read of the timeline returned `value` (QueueTimeline::saw_completed).
    void saw_completed(uint64_t value) { timeline_.saw_completed(value); }
    // Any thread, no lock: a read of the timeline returned `value` or more.
    bool seen_done(uint64_t value) const { return timeline_.completed_seen_counter().load(std::memory_order_acquire) >= value; }

private:
    // Takes the batch the flusher submits next, with the queue lock held: false if none (or
    // not yet: `wake_at` and `timeline_value` say when to look again).
    bool flusher_takes(HeldBatch* b, FlushReason* why, uint64_t max_defer_ns, uint64_t* wake_at,
                       uint64_t* timeline_value);
    // Records (recording lock) and submits (queue lock) one batch taken out.
    VkResult flush_one(const HeldBatch& b, FlushReason reason, bool closing);
    // Submits what BatchRecorder::record made (`recorded`: its result; `cb` null if none could
    // be had), and answers or signals the batch's fences: queue lock held.
    VkResult submit_recorded(const HeldBatch& b, VkCommandBuffer cb, VkResult recorded, FlushReason reason);
    // The batch's own submission, signaling the timeline or followed through its fence.
    VkResult submit_batch(const HeldBatch& b, VkCommandBuffer cb, FlushReason reason);
    // The batch could not be submitted: its command buffer is free again, and the application's
    // own command buffers carry the work where the driver has them. Returns the error to report.
    VkResult batch_failed(const HeldBatch& b, VkCommandBuffer cb, VkResult error);
    // The batch's fences before its last: answered from the timeline, or signaled apart.
    VkResult answer_earlier_fences(const HeldBatch& b, bool batched, uint64_t value);
    // A submission of ours with only the closing barrier the queue owes: both locks held.
    VkResult submit_trailing_barrier();
    // The batch could not be submitted: give the driver the application's command buffers.
    VkResult submit_app_command_buffers(const HeldBatch& b);
    template <typename Info, typename Next>
    VkResult submit_direct_as(uint32_t count, const Info* submits, VkFence fence, Next next, NativeSubmission* done);
    template <typename Info, typename Next>
    VkResult submit_passed_as(uint32_t count, const Info* submits, VkFence fence, Next next);
    // A lazily recorded command buffer replayed into one of ours, ended; null on failure.
    VkCommandBuffer record_alone(const CommandBufferState& cb, VkResult* error);

    DeviceState& d_;
    QueueState& q_;
    QueueLocks locks_;
    BatchQueue batches_;
    BatchRecorder recorder_;
    QueueTimeline timeline_;
    WaitHistory waits_;
    KeptError error_;
    // Timeline values fused or direct submissions on this queue signal (queue lock).
    std::unordered_map<VkSemaphore, uint64_t> signaled_;
};

}  // namespace slipstream::submit
