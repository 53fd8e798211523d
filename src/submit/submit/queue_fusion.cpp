#include "submit/queue_fusion.h"

#include "core/clock.h"
#include "core/log.h"
#include "state/object_state.h"
#include "submit/device_fusion.h"
#include "submit/timeline_signal.h"
#include "idle/queue_idle.h"

#include <algorithm>

namespace slipstream::submit {

namespace {
// How often the flusher looks at a batch held behind a submission followed through a fence
// (no timeline value to wait for): a latency-mode queue rarely holds one.
constexpr uint64_t kFollowedPollNs = 10000;
}  // namespace

void QueueFusion::append(const CommandBufferState& cb) {
    if (!batches_.open()) {
        const uint64_t now = now_ns();
        // Nothing runs on the queue, not even what was passed through (its timeline says so),
        // nothing else is held, and the application saw its latest work done through the
        // driver. (A wait that raced a submission on another thread may set the flag late;
        // work of that submission is held or running, so it does not count then.)
        batches_.open_at(now, waits_.after_wait() && batches_.none_behind() && !timeline_.untracked_work() &&
                                  timeline_.in_flight() == 0);
    }
    batches_.add(cb);
    if (FuseTrace* t = timeline_.tracer())
        timeline_.trace(*t, TraceEvent::Append, FlushReason::Full, 1, batches_.open_batch().ops, 0, 0, 0);
}

OpenBatch QueueFusion::batch_state() {
    const HeldBatch& open = batches_.open_batch();
    OpenBatch b;
    b.ops = open.ops;
    b.records = open.records;
    const uint64_t now = now_ns();
    b.waited_ns = !open.cbs.empty() && now > open.opened_ns ? now - open.opened_ns : 0;
    b.in_flight = in_flight();
    b.submit_cost_ns = submit_cost_ns();
    b.latency_mode = waits_.latency_mode();
    return b;
}

void QueueFusion::fence_released(VkFence fence) {
    if (!follows(fence)) return;
    if (d_.dispatch.GetFenceStatus(d_.device, fence) == VK_SUCCESS || d_.lost.load(std::memory_order_acquire)) {
        timeline_.followed().stop(fence);
        return;
    }
    // Reset, destroyed or imported while its submission may run (a misuse): the timeline
    // follows it from now on.
    std::lock_guard lock(locks_.queue());
    timeline_.signal_instead_of(fence);
}

uint64_t QueueFusion::settle_followed(VkFence fence, uint64_t generation) {
    std::lock_guard lock(locks_.queue());
    if (!timeline_.followed().follows_now(fence, generation) || !timeline_.followed_busy()) return 0;
    const uint64_t before = timeline_.submitted_value();
    timeline_.signal_instead_of(fence);
    const uint64_t after = timeline_.submitted_value();
    return after > before ? after : 0;
}

VkResult QueueFusion::signal_fence(VkFence fence) {
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    TrackedSubmission tracked(&q_, fence);
    const VkResult r = timeline_.submit(OurSubmission{}, tracked, d_.dispatch.QueueSubmit, 0, nullptr);
    d_.stats.add(Counter::FenceSubmits);
    return watch_device_loss(d_, r);
}

// --- flushes -----------------------------------------------------------------------------------

VkResult QueueFusion::flush(FlushReason reason, bool other_stages_next) {
    VkResult first = VK_SUCCESS;
    while (!batches_.sealed_empty()) {
        if (d_.lost.load(std::memory_order_acquire)) return batches_.abandon_all();
        const HeldBatch b = batches_.take_sealed();
        const bool last = batches_.sealed_empty() && !batches_.open();
        const VkResult r = flush_one(b, FlushReason::Full, other_stages_next && last);
        if (r != VK_SUCCESS && first == VK_SUCCESS) first = r;
    }
    if (d_.lost.load(std::memory_order_acquire)) return batches_.abandon_all();
    if (batches_.open()) {
        const HeldBatch b = batches_.take_open();
        const VkResult r = flush_one(b, reason, other_stages_next);
        if (r != VK_SUCCESS && first == VK_SUCCESS) first = r;
    }
    recorder_.before_other_work(reason == FlushReason::PassThrough, other_stages_next);
    if (other_stages_next && recorder_.owes_trailing_barrier() && first == VK_SUCCESS)
        first = submit_trailing_barrier();
    return first;
}

VkResult QueueFusion::flush_one(const HeldBatch& b, FlushReason reason, bool closing) {
    VkResult recorded;
    const VkCommandBuffer cb = timeline_.acquire_command_buffer(&recorded);
    if (cb) recorded = recorder_.record(b, cb, closing);
    else unhold(b);
    return submit_recorded(b, cb, recorded, reason);
}

bool QueueFusion::flusher_turn(uint64_t max_defer_ns, uint64_t* wake_at, uint64_t* timeline_value) {
    QueueLock lock(locks_);
    HeldBatch b;
    FlushReason why = FlushReason::Full;
    if (!flusher_takes(&b, &why, max_defer_ns, wake_at, timeline_value)) return false;
    batches_.recording(&b);
    VkResult recorded;
    const VkCommandBuffer cb = timeline_.acquire_command_buffer(&recorded);
    // Recorded holding only the recording lock: submissions join the next batch meanwhile.
    lock.release_queue();
    if (cb) recorded = recorder_.record(b, cb, false);
    else unhold(b);
    lock.retake_queue();
    batches_.recording(nullptr);
    keep_error(submit_recorded(b, cb, recorded, why));
    return true;
}

bool QueueFusion::flusher_takes(HeldBatch* b, FlushReason* why, uint64_t max_defer_ns, uint64_t* wake_at,
                                uint64_t* timeline_value) {
    if (d_.lost.load(std::memory_order_acquire)) {
        batches_.abandon_all();  // the loss is returned by the queue's next submission or wait
        return false;
    }
    if (!batches_.sealed_empty()) {
        *b = batches_.take_sealed();
        return true;
    }
    if (!batches_.open()) return false;
    const OpenBatch s = batch_state();
    const FlusherAction action = decide_in_flusher(s, max_defer_ns);
    if (action == FlusherAction::Wait) {
        const uint64_t opened = batches_.open_batch().opened_ns;
        *wake_at = std::min(*wake_at, opened + max_defer_ns);
        if (s.in_flight == 0) *wake_at = std::min(*wake_at, opened + s.submit_cost_ns);
        else if (timeline_.followed().any()) *wake_at = std::min(*wake_at, now_ns() + kFollowedPollNs);
        else *timeline_value = timeline_.submitted_value();  // the GPU runs dry then
        return false;
    }
    *why = action == FlusherAction::FlushDeadline ? FlushReason::Deadline : FlushReason::GpuStarving;
    *b = batches_.take_open();
    return true;
}

// --- a batch's submission ------------------------------------------------------------------------

VkResult QueueFusion::submit_recorded(const HeldBatch& b, VkCommandBuffer cb, VkResult recorded, FlushReason reason) {
    // A loss another thread met since the batch was taken: nothing more reaches the driver.
    VkResult r = recorded == VK_SUCCESS && d_.lost.load(std::memory_order_acquire) ? VK_ERROR_DEVICE_LOST : recorded;
    const uint64_t value = timeline_.next_value();
    if (r == VK_SUCCESS) r = submit_batch(b, cb, reason);
    if (r != VK_SUCCESS) r = batch_failed(b, cb, r);
    if (r != VK_SUCCESS) {
        // Its work never ran: waits on its fences return the error (batch_fences.h).
        batches_.failed(b, r);
        return r;
    }
    r = answer_earlier_fences(b, timeline_.newest_runs(cb), value);
    batches_.done_with(b);
    return r;
}

VkResult QueueFusion::submit_batch(const HeldBatch& b, VkCommandBuffer cb, FlushReason reason) {
    const VkFence fence = b.last_fence();
    TrackedSubmission tracked(&q_, fence);
    const bool follow = timeline_.may_follow(fence, b.fences.size(), waits_.latency_mode()) && tracked.fence_trusted();
    OurSubmission s;
    s.cb = cb;
    s.value = follow ? 0 : timeline_.next_value();
    s.followed = follow ? fence : VK_NULL_HANDLE;
    s.ops = b.ops;
    s.traced = true;
    s.reason = reason;
    s.cbs = uint32_t(b.cbs.size());
    s.waited_ns = timeline_.tracer() ? now_ns() - b.opened_ns : 0;
    const TimelineSignal signal(timeline_.timeline(), s.value);
    const BatchSubmission submit(1, &cb, follow ? nullptr : &signal, b.signals, b.waits, b.reached_waits);
    const VkResult r = timeline_.submit(s, tracked, d_.dispatch.QueueSubmit, submit.count(), submit.infos());
    if (r != VK_SUCCESS) return r;
    d_.stats.add(Counter::BatchesFlushed);
    d_.stats.add(Counter::BatchCommandBuffers, b.cbs.size());
    static constexpr Counter kByReason[] = {Counter::FlushFull,        Counter::FlushGpuStarving,
                                            Counter::FlushObserve,     Counter::FlushDeadline,
                                            Counter::FlushPassThrough, Counter::FlushDestroy};
    d_.stats.add(kByReason[int(reason)]);
    return r;
}

VkResult QueueFusion::batch_failed(const HeldBatch& b, VkCommandBuffer cb, VkResult error) {
    // If it ended with the closing barrier, earlier narrowed batches still owe it.
    recorder_.batch_failed();
    if (cb) timeline_.give_back(cb, true);
    if (error == VK_ERROR_DEVICE_LOST) return error;
    if (b.lazy == 0) {
        log(LogLevel::Warn, "a fused batch failed (%d); submitting its %zu command buffers as they are", int(error),
            b.cbs.size());
        return watch_device_loss(d_, submit_app_command_buffers(b));
    }
    // Lazily recorded: only the batch had them. The error reaches the application (from this
    // call or its next submission or wait, and from every wait on the batch's fences, so that
    // nothing waits forever).
    log(LogLevel::Error, "a fused batch failed (%d): the work of %zu command buffers was not submitted", int(error),
        b.cbs.size());
    if (b.holds_semaphores()) {
        // Its semaphores are signaled all the same, so that no host or queue waits forever,
        // and its binary waits consume their signals as the application asked.
        const BatchSubmission submit(0, nullptr, nullptr, b.signals, b.waits, b.reached_waits);
        TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
        watch_device_loss(d_, timeline_.submit(OurSubmission{}, tracked, d_.dispatch.QueueSubmit, submit.count(),
                                               submit.infos()));
    }
    return error;
}

VkResult QueueFusion::answer_earlier_fences(const HeldBatch& b, bool batched, uint64_t value) {
    // The batch carried its last fence; each earlier one is answered from the timeline
    // (batch_fences.h), or, where it is exportable or the batch went as the application's
    // command buffers, signaled by an empty submission after it (it signals once all work
    // submitted before it has completed).
    BatchFences* answers = d_.fusion ? &d_.fusion->fences() : nullptr;
    if (b.fences.size() < 2) return VK_SUCCESS;
    if (batched && answers && !answers->exportable_any()) {
        answers->answer_later(b.fences.data(), b.fences.size() - 1,
                              {VK_NULL_HANDLE, this, timeline_.timeline(), value, &timeline_.completed_seen_counter()});
        d_.stats.add(Counter::FencesAnswered, b.fences.size() - 1);
        return VK_SUCCESS;
    }
    VkResult r = VK_SUCCESS;
    for (size_t i = 0; i + 1 < b.fences.size(); ++i) {
        if (batched && answers && !answers->exportable(b.fences[i])) {
            answers->answer_later({b.fences[i], this, timeline_.timeline(), value, &timeline_.completed_seen_counter()});
            d_.stats.add(Counter::FencesAnswered);
        } else if (r == VK_SUCCESS) {
            r = signal_fence(b.fences[i]);
        }
    }
    return r;
}

VkResult QueueFusion::submit_trailing_barrier() {
    if (d_.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    VkResult r;
    const VkCommandBuffer cb = timeline_.acquire_command_buffer(&r);
    if (!cb) return watch_device_loss(d_, r);
    r = recorder_.record_trailing_barrier(cb);
    if (r == VK_SUCCESS) {
        OurSubmission s;
        s.cb = cb;
        s.value = timeline_.next_value();
        s.ops = 0;
        s.traced = true;
        s.reason = FlushReason::PassThrough;
        const TimelineSignal signal(timeline_.timeline(), s.value);
        const VkSubmitInfo submit = submit_of(&cb, &signal);
        TrackedSubmission tracked(&q_, VK_NULL_HANDLE);
        r = timeline_.submit(s, tracked, d_.dispatch.QueueSubmit, 1, &submit);
    }
    if (r != VK_SUCCESS) {
        timeline_.give_back(cb, true);
        return watch_device_loss(d_, r);
    }
    recorder_.trailing_barrier_submitted();
    return VK_SUCCESS;
}

VkResult QueueFusion::submit_app_command_buffers(const HeldBatch& b) {
    // Still recorded natively (capture runs beside the driver's recording), and pending in the
    // application's eyes, so untouched: submitting them is what the application asked for.
    std::vector<VkCommandBuffer> handles;
    bool leaves = false;
    for (const CommandBufferState* state : b.cbs) {
        handles.push_back(state->handle);
        leaves = leaves || recorder_.leaves_narrowed_stages(state);
    }
    if (leaves && recorder_.owes_trailing_barrier() && d_.settings.narrow_history)
        if (VkResult r = submit_trailing_barrier(); r != VK_SUCCESS) return r;
    // (The application's semaphores the batch carried, waited for before them and signaled after.)
    const BatchSubmission submit(uint32_t(handles.size()), handles.data(), nullptr, b.signals, b.waits,
                                 b.reached_waits);
    TrackedSubmission tracked(&q_, b.last_fence());
    const VkResult r = timeline_.submit(OurSubmission{}, tracked, d_.dispatch.QueueSubmit, submit.count(), submit.infos());
    d_.stats.add(Counter::BatchFallbacks);
    return r;
}

}  // namespace slipstream::submit
