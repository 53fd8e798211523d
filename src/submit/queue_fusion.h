// Fusion at submission, for one queue: the open batch (the application's fused command buffers,
// in submission order, whose captures a command buffer of Slipstream's replays when it goes),
// the sealed ones, the batches in flight, and the timeline semaphore every batch signals, which records which of
// them completed (slipstream-completion-cost on the H200: +0.21 us per submit to signal it,
// 0.017 us to read it, against +0.32 and 0.41 us for a fence ring).
//
// A fused submission is only noted in the open batch (its capture, to be replayed later): the
// replay into a command buffer of ours, and its submission, happen when the batch goes, on the
// flusher thread where the batch filled up or the GPU ran dry, so the application's thread
// pays neither (on the H200 a naive small command buffer's replay costs ~1.2-1.7 us, a batch's
// vkQueueSubmit ~5-7 us). A batch that filled up is sealed and handed to the flusher; an
// observation (a wait, a status query) or a pass-through submission submits everything held,
// in order, on the thread that makes it.
//
// Locking (FUSION.md rule 4): `mutex()` is the queue's lock while fusion is on. Every VkQueue
// entry point of the layer takes it, and so does the flusher for its driver calls on the
// queue, so the driver never sees two threads on the queue; no blocking driver wait of
// Slipstream's is made under it (the application's own vkQueueWaitIdle, vkDeviceWaitIdle,
// present and sparse binding hold it: fusion.h, IdleWaitHold). Everything but the atomics is guarded by it, except what recording our command
// buffers uses (the pool, the replay's state), which `record_mutex()` guards. Order:
// record_mutex() before mutex(); the flusher records a batch holding record_mutex() only, so
// submissions that join the open batch meanwhile do not wait for it. Batches are recorded and
// submitted in order: only a holder of record_mutex() takes one.
#pragma once

#include "capture/barrier_elision.h"
#include "capture/batch_replay.h"
#include "submit/flush_policy.h"
#include "submit/fuse_trace.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace slipstream {
struct DeviceState;
struct QueueState;
struct CommandBufferState;
}  // namespace slipstream

namespace slipstream::submit {

class QueueFusion {
public:
    QueueFusion(DeviceState& device, QueueState& queue) : d_(device), q_(queue) {}
    ~QueueFusion();  // the device must be idle (vkDestroyDevice)
    QueueFusion(const QueueFusion&) = delete;
    QueueFusion& operator=(const QueueFusion&) = delete;

    // Creates the command pool and the timeline semaphore; false: this queue does not fuse.
    bool init();

    std::mutex& mutex() { return mutex_; }
    std::mutex& record_mutex() { return record_mutex_; }

    // --- with mutex() held ---
    // Notes one application command buffer in the open batch (opening one); its capture is
    // replayed when the batch goes.
    void append(const CommandBufferState& cb);
    // The application's fence of a fused submission: signaled after the batch that holds it.
    void add_fence(VkFence fence) { open_.fences.push_back(fence); }
    bool open() const { return !open_.cbs.empty(); }
    // The open batch is full: it goes to the flusher, which records and submits it. False when
    // the flusher is behind (two batches waiting): then the caller flushes itself.
    bool seal();
    // Whether a batch not yet submitted carries one of these fences (their signal waits for it).
    bool holds_any(uint32_t count, const VkFence* fences) const;
    // The open batch (with the counter read for in_flight) as the flush rules see it.
    OpenBatch batch_state();
    bool latency_mode() const { return sync_.latency_mode(); }
    // A fusable submission came (with this fence, or none): the wait noted since the one before
    // it, if any, is learnt first.
    void note_submission(VkFence fence) {
        waited_before_ = waited_.exchange(false, std::memory_order_relaxed);
        if (waited_before_) sync_.waited();
        after_wait_ = seen_done_.exchange(false, std::memory_order_relaxed);
        sync_.submitted();
        latest_fence_.store(fence, std::memory_order_relaxed);
    }
    // Whether the layers below Slipstream (the validation layer) saw every wait the application
    // made since its previous submission to the queue: none was made, or the driver answered
    // one (note_seen_done). An idle wait that Slipstream answered from the timeline is unseen
    // there, and a submission that went to the driver as the application made it, with no
    // barrier of ours in front, would look unsynchronized against the work before the wait.
    bool waits_seen_below() const { return !waited_before_ || after_wait_; }
    // (Any thread, no lock.) The application waited for the latest submission (its fence, or
    // the queue or device idle): however often it polls, one wait per submission.
    void note_wait() { waited_.store(true, std::memory_order_relaxed); }
    // (Any thread, no lock.) The driver answered that the fence of the latest submission
    // signaled (the application's vkGetFenceStatus or vkWaitForFences, or Slipstream's polls
    // for the latter), so everything the queue was given before is done.
    void note_seen_done() { seen_done_.store(true, std::memory_order_relaxed); }
    // (Any thread, no lock.) The driver answered that `fence` signaled: if the queue follows
    // a submission through it (below), that submission is done.
    void fence_signaled(VkFence fence) {
        if (follows(fence)) stop_following(fence);
    }
    // (Any thread, no lock.) Whether the queue follows a submission through `fence`.
    bool follows(VkFence fence) const { return fence && followed_.load(std::memory_order_acquire) == fence; }
    // (Any thread, no lock.) The application is about to reset, destroy or import `fence`,
    // which the queue follows a submission through. Valid usage says that submission completed; if
    // the driver does not say so (a misuse), an empty submission that signals the timeline
    // follows it instead.
    void fence_released(VkFence fence);
    uint64_t submit_cost_ns() const { return submit_cost_ns_.load(std::memory_order_relaxed); }
    // With record_mutex() held too: records and submits every batch held (the sealed ones, then
    // the open one) and the empty submissions that signal their fences. An error of the
    // driver's comes back (the batch's work then went to the driver as the application's own
    // command buffers, if the driver took those); VK_SUCCESS when there was nothing to do.
    // `other_stages_next`: work outside the narrowed stages comes next on the queue (a
    // pass-through submission that leaves_narrowed_stages), so the barrier that closes narrowed
    // batches (narrowing.md, case 4) goes at the end of the last one, or, if the queue owes it
    // with nothing held, in a submission of its own.
    VkResult flush(FlushReason reason, bool other_stages_next = false);
    // Whether `cb` (null: a command buffer Slipstream does not know) may work outside the stages
    // that the narrowed barriers the queue owes a closing barrier for reach: not narrowable
    // (graphics, queries, not captured), or an indirect dispatch after barriers narrowed short of
    // its parameter reads. With record_mutex() held, or mutex() with nothing pending.
    bool leaves_narrowed_stages(const CommandBufferState* cb) const;
    bool owes_trailing_barrier() const { return trailing_owed_; }
    // With no batch open: submits the application's own command buffers (still recorded
    // natively) as it asked, plus the queue's timeline signal, so the next submission knows
    // whether the GPU is still busy with them.
    VkResult submit_direct(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next);
    VkResult submit_direct(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next);
    // A submission passed through, after everything held: each lazily recorded command buffer
    // it names is replayed into a command buffer of ours in its place, and its last batch (or
    // one more after it) signals the queue's timeline, as every submission to a fusing queue
    // does (ours are recycled once it passes).
    VkResult submit_passed(uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next);
    VkResult submit_passed(uint32_t count, const VkSubmitInfo2* submits, VkFence fence, PFN_vkQueueSubmit2 next);
    // vkQueueWaitIdle on the queue (vkDestroyDevice only: it blocks under the lock).
    VkResult wait_idle();
    // An empty submission with `fence`: it signals once everything submitted so far is done.
    VkResult signal_fence(VkFence fence);
    // Submissions of ours (batches and direct ones) not yet complete (one counter read).
    uint64_t in_flight();
    // The queue's idleness, for the application's idle waits (waits/waits.cpp): every
    // submission to a fusing queue signals its timeline, so VK_SUCCESS once the timeline has
    // reached the newest one (one counter read, no fence of ours), VK_NOT_READY before;
    // VK_INCOMPLETE while the queue holds work the timeline does not follow (sparse binding,
    // present) that no idle wait of the driver's has covered since; or the driver's error.
    VkResult poll_idle();
    void note_untracked_work() { untracked_work_ = true; }
    // A driver's idle wait on the queue (or the device) returned.
    void note_driver_idle() {
        untracked_work_ = false;
        end_follow();
        note_seen_done();
    }
    // The first error a flush met that no caller has returned yet (VK_SUCCESS if none); device
    // loss (DeviceState::lost) stays.
    VkResult take_error();
    // Records the error of a flush the caller cannot return (the deadline flusher).
    void keep_error(VkResult result);

    // --- the flusher thread, no lock held ---
    // Records and submits the oldest sealed batch, or the open one if the flush rules say it
    // is time. Returns true if it submitted one (call again); else says when to look again:
    // at `wake_at` (now_ns()), or once the queue's timeline reaches `*timeline_value` (nonzero).
    bool flusher_turn(uint64_t max_defer_ns, uint64_t* wake_at, uint64_t* timeline_value);

    // --- any thread, no lock ---
    // A batch is open, sealed or being recorded.
    bool has_pending() const { return pending_.load(std::memory_order_acquire) != 0; }
    // Whether one of these fences is the one of the latest fusable submission.
    bool latest_fence_in(uint32_t count, const VkFence* fences) const {
        const VkFence latest = latest_fence_.load(std::memory_order_relaxed);
        if (!latest) return false;
        for (uint32_t i = 0; i < count; ++i)
            if (fences[i] == latest) return true;
        return false;
    }
    VkSemaphore timeline() const { return timeline_; }
    // The value the newest submitted batch signals (read under mutex() for an exact answer).
    uint64_t submitted_value() const { return submitted_.load(std::memory_order_acquire); }

private:
    // A batch not yet submitted: the command buffers whose captures it replays, in order.
    struct Pending {
        std::vector<const CommandBufferState*> cbs;
        std::vector<VkFence> fences;
        uint32_t ops = 0, records = 0, lazy = 0;
        uint64_t opened_ns = 0;
        // Opened by a submission made after the application saw everything before it on the
        // queue complete: its first command buffer needs no fuse barrier (queue_fusion.cpp).
        bool after_wait = false;
    };
    // Records `b` into `cb` (a command buffer of ours): record_mutex() held. `closing`: the
    // batch ends with the barrier that closes narrowed work even if the policy would owe it.
    VkResult record(const Pending& b, VkCommandBuffer cb, bool closing);
    // A submission of ours with only the closing barrier the queue owes: both locks held.
    VkResult submit_trailing_barrier();
    // Submits what record() made (`recorded`: its result; `cb` null if none could be had), and
    // answers or signals the batch's fences: mutex() held.
    VkResult submit_recorded(const Pending& b, VkCommandBuffer cb, VkResult recorded, FlushReason reason);
    // record() and submit_recorded() with both locks held.
    VkResult flush_one(const Pending& b, FlushReason reason, bool closing);
    // A Pending left the queue's hands (submitted, or failed).
    void done_with(const Pending& b);
    struct Batch {
        VkCommandBuffer cb;  // null for a direct submission
        uint64_t value;      // the timeline value its completion signals
    };
    // The latency path: a submission to a queue in latency mode with nothing of ours running,
    // whose only fence is a plain one of the application's, signals no timeline (on the H200
    // the signal cost ~0.3 us of CPU in vkQueueSubmit and ~0.7 us more before the fence was
    // seen signaled, slipstream-overhead's latency_cb): it is followed through that fence.
    // Its completion is known when the driver says the fence signaled (the application's
    // waits and status queries, or a look of ours under mutex()), when the application resets,
    // destroys or imports the fence, or when the driver's idle wait returns.
    bool may_follow(VkFence fence, size_t fences);
    // Starts following a submission just made with `fence` (`cb`: ours, or null).
    void follow(VkFence fence, VkCommandBuffer cb);
    // mutex() held: whether the followed submission may still run (asks the driver while the
    // fence is not known signaled); once done, its command buffer is free again.
    bool followed_busy();
    // mutex() held: nothing is followed any more; our command buffer is free again.
    void end_follow();
    // (Any thread.) Stops following `fence` if the queue does, once no look at it is under way.
    void stop_following(VkFence fence);
    // After a submission of `ops` operations (kUnknownOps: the application's command buffers)
    // that signals `value`, begun at `start_ns`, returned `result`.
    static constexpr uint32_t kUnknownOps = UINT32_MAX;
    void submitted(VkCommandBuffer cb, uint64_t value, VkResult result, uint64_t start_ns, uint32_t ops);
    template <typename Info, typename Next>
    VkResult submit_direct_as(uint32_t count, const Info* submits, VkFence fence, Next next);
    template <typename Info, typename Next>
    VkResult submit_passed_as(uint32_t count, const Info* submits, VkFence fence, Next next);
    // Whether the fuse barrier in front of `state` in the batch being recorded may be left out
    // (capture/barrier_elision.h): record_mutex() held.
    bool elide_fuse_barrier(const CommandBufferState& state);
    // Replays a capture into batch `cb`, its ALL_COMMANDS barriers narrowed where the queue's
    // history allows (capture/barrier_narrowing.h, narrowing.md): record_mutex() held.
    // Returns whether it narrowed one.
    bool replay_into_batch(const CommandBufferState& state, VkCommandBuffer cb);
    // A lazily recorded command buffer replayed into one of ours, ended; null on failure.
    VkCommandBuffer record_alone(const CommandBufferState& cb, VkResult* error);
    // One of ours, ready to begin; null with the driver's error in *error.
    VkCommandBuffer acquire_command_buffer(VkResult* error);
    // A batch that will never reach the GPU: waits on its fences return `error`.
    void fail_fences(const Pending& b, VkResult error);
    // The device is lost: every batch held is dropped (its fences failed). Returns the loss.
    VkResult abandon_all();
    // VK_SLIPSTREAM_FUSE_TRACE's record, or null; one line of it.
    FuseTrace* tracer() const;
    void trace(FuseTrace& t, TraceEvent event, FlushReason reason, uint32_t cbs, uint32_t ops, uint64_t waited_ns,
               uint64_t in_flight, uint64_t call_ns);
    void recycle(uint64_t completed);
    uint64_t completed_value();
    // The batch could not be submitted: give the driver the application's command buffers.
    VkResult submit_app_command_buffers(const Pending& b);

    DeviceState& d_;
    QueueState& q_;
    std::mutex record_mutex_;
    std::mutex mutex_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::atomic<uint64_t> submitted_{0};
    std::deque<Batch> in_flight_;
    std::vector<VkCommandBuffer> free_;
    // The batches not yet submitted: open, sealed (in order), and the one the flusher records.
    Pending open_;
    std::deque<Pending> sealed_;
    const Pending* recording_ = nullptr;
    std::atomic<uint32_t> pending_{0};
    // With record_mutex(): barrier narrowing's history (the queue ran work outside the narrowed
    // stages since the last whole ALL_COMMANDS barrier, so the next one stays whole; atomic:
    // submit_direct sets it holding mutex() only, with nothing pending); barriers narrowed
    // since our last barrier toward ALL_COMMANDS, their second scopes short of other stages
    // (narrowing.md, case 4: the queue owes the closing barrier; across batches), and short of
    // indirect parameter reads; the policy for where the closing barrier goes, and whether a
    // batch with narrowed barriers was recorded since the queue last ran other work.
    std::atomic<bool> other_work_before_{true};
    bool trailing_owed_ = false;
    bool narrowed_without_indirect_ = false;
    TrailingBarrierPolicy trailing_;
    bool narrowed_since_other_ = false;
    capture::BatchReplay replay_;
    capture::BarrierElision elision_;  // with record_mutex(): the footprints since our last barrier
    capture::Footprint footprint_scratch_;  // with record_mutex(): capture::footprint_for's spare
    SyncPattern sync_;
    std::atomic<bool> waited_{false};  // a wait since the latest fusable submission
    std::atomic<bool> seen_done_{false};  // ... that the driver answered done (note_seen_done)
    bool after_wait_ = false;  // the current submission came after such a wait
    bool waited_before_ = false;  // ... after a wait of any kind
    std::atomic<VkFence> latest_fence_{VK_NULL_HANDLE};
    std::atomic<VkFence> followed_{VK_NULL_HANDLE};  // the fence a submission is followed by
    VkCommandBuffer followed_cb_ = VK_NULL_HANDLE;    // ... and our command buffer it runs (mutex())
    std::atomic<bool> querying_{false};               // followed_busy() is asking the driver
    std::atomic<uint64_t> submit_cost_ns_{20000};  // round trip; a guess until measured
    uint64_t probe_value_ = 0;                     // a submission made on an idle GPU ...
    uint64_t probe_start_ns_ = 0;                  // ... and when it was made
    VkResult pending_error_ = VK_SUCCESS;  // counted in DeviceState::fusion_errors
    bool untracked_work_ = false;          // poll_idle
};

}  // namespace slipstream::submit
