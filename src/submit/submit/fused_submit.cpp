// vkQueueSubmit(2) on a fusing queue: which submissions join the open batch, which go to the
// driver directly (the latency path), and which pass through after everything held.
#include "submit/fusion.h"

#include "submit/capture_control.h"
#include "capture/layout_keeper.h"
#include "core/log.h"
#include "state/object_state.h"
#include "submit/queue_fusion.h"
#include "submit/semaphore_carry.h"

#include <vector>

namespace slipstream::submit {

namespace {

PassReason classify_command_buffer(const DeviceState& d, const QueueState& q, VkCommandBuffer handle,
                                   const CommandBufferState** out) {
    const CommandBufferState* cb = find_command_buffer(handle);
    *out = cb;
    if (!cb || !cb->capture || !cb->capture->capturable() || !cb->capture->ended() ||
        cb->level != VK_COMMAND_BUFFER_LEVEL_PRIMARY)
        return PassReason::NotCaptured;
    // A command buffer of another device (invalid usage drivers may tolerate) is passed through
    // as well: its resets and frees settle only its own device's batches.
    if (cb->queue_family != q.family || cb->device != &d) return PassReason::OtherFamily;
    // A lazy capture keeps what it names alive; one beside a native recording does not.
    if (!cb->lazy && cb->layout_epoch != d.layouts.epoch()) return PassReason::LayoutsDestroyed;
    return PassReason::None;
}

uint32_t command_buffer_count(const VkSubmitInfo& s) { return s.commandBufferCount; }
VkCommandBuffer command_buffer(const VkSubmitInfo& s, uint32_t i) { return s.pCommandBuffers[i]; }
uint32_t command_buffer_count(const VkSubmitInfo2& s) { return s.commandBufferInfoCount; }
VkCommandBuffer command_buffer(const VkSubmitInfo2& s, uint32_t i) { return s.pCommandBufferInfos[i].commandBuffer; }

// `extension`: the sType that stopped a SubmitExtension (counted by sType, logged once each).
void count_passed(DeviceStats& stats, PassReason why, uint64_t n, VkStructureType extension) {
    switch (why) {
    case PassReason::None: break;
    case PassReason::NotCaptured: stats.add(Counter::PassedNotCaptured, n); break;
    case PassReason::Semaphores: stats.add(Counter::PassedSemaphores, n); break;
    case PassReason::SubmitExtension:
        stats.add(Counter::PassedSubmitExtension, n);
        if (extension != VK_STRUCTURE_TYPE_MAX_ENUM && stats.add_passed_extension(extension, n))
            log(LogLevel::Info, "fusion: submissions chaining a structure of sType %u go to the driver unfused",
                unsigned(extension));
        break;
    case PassReason::OtherFamily: stats.add(Counter::PassedOtherFamily, n); break;
    case PassReason::LayoutsDestroyed: stats.add(Counter::PassedLayoutsDestroyed, n); break;
    }
}

// A lazily recorded command buffer submitted before vkEndCommandBuffer (a misuse) goes to the
// driver as the application's own, recorded natively from its capture and still recording, as
// the driver alone would get it; a replay of ours would be ended, and run what it holds.
template <typename Info>
void record_unended_natively(uint32_t count, const Info* submits) {
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < command_buffer_count(submits[i]); ++j)
            if (CommandBufferState* cb = find_command_buffer(command_buffer(submits[i], j));
                cb && cb->lazy && !cb->capture->ended())
                capture::record_natively(*cb);
}

// Small calls are the common case: their command buffers' states without a heap allocation.
constexpr uint32_t kInlineStates = 16;

// The command buffers of one call, as the classification found them.
struct Classified {
    PassReason why = PassReason::None;
    VkStructureType extension = VK_STRUCTURE_TYPE_MAX_ENUM;  // the sType that stopped it, if one did
    uint32_t total = 0;
    // Semaphores the call's submissions signal, carried with its work; waits its first
    // submission carries (the batch it starts waits); binary waits that take a signal of the
    // open batch (both dropped); timeline waits on values already reached (named by the batch's
    // submission, never waited for); and whether any submission waited or signaled
    // (semaphore_carry.h).
    std::vector<SemaphoreValue> signals, waits, pairs, reached;
    bool semaphores = false;
    bool lazy = false;  // a command buffer only a replay can carry
    const CommandBufferState* inline_states[kInlineStates];
    std::vector<const CommandBufferState*> many;
    const CommandBufferState* operator[](uint32_t i) const {
        return i < kInlineStates ? inline_states[i] : many[i - kInlineStates];
    }
};

// Whether a batch can carry the submission's semaphores (semaphore_carry.h): every one known
// and not shared. Waits met in queue order (ordered by the fuse barrier) are dropped, and so
// are those already reached, except that the batch's submission still names these (c.reached);
// a binary wait takes a binary signal earlier in the call (both dropped) or in the
// open batch (c.pairs); any other wait is carried by the batch the call's first submission
// starts (c.waits); in a later submission of the call it passes the call through. Signals go
// into c.signals.
template <typename Info>
bool carry_semaphores(const DeviceState& d, const QueueFusion& f, const Info& submit, bool first, Classified& c) {
    if (!d.record || !d.fusion_counter_value) return false;
    std::vector<SemaphoreValue> waits;
    size_t earlier = c.signals.size();  // signals of the call's earlier submissions
    auto record = [&](VkSemaphore s) { return d.record->semaphore(s); };
    if (!semaphore_uses(submit, record, waits, c.signals)) return false;
    // (Without the fuse barrier nothing orders one submission's work after another's.)
    const bool ordered = d.settings.fuse_barrier;
    auto met_in_call = [&](const SemaphoreValue& w) {
        for (size_t i = earlier; i-- > 0;)
            if (meets(c.signals[i], w)) {
                if (w.binary) {  // the pair: neither goes
                    c.signals.erase(c.signals.begin() + std::ptrdiff_t(i));
                    --earlier;
                }
                return true;
            }
        return false;
    };
    for (const SemaphoreValue& w : waits) {
        if (ordered && met_in_call(w)) continue;
        if (w.binary) {
            if (ordered && f.signals_binary(w.semaphore)) {
                c.pairs.push_back(w);
                continue;
            }
        } else {
            if (ordered && f.signaled_here(w)) continue;
            uint64_t value = 0;
            if (d.fusion_counter_value(d.device, w.semaphore, &value) == VK_SUCCESS && value >= w.value) {
                c.reached.push_back(w);
                continue;
            }
        }
        if (!first) return false;
        c.waits.push_back(w);
    }
    c.semaphores = true;
    return true;
}

// The call is fused whole or not at all: every submission plain, every command buffer fusable.
template <typename Info>
void classify(const DeviceState& d, const QueueState& q, uint32_t count, const Info* submits, Classified& c) {
    // A device that handed out a command Slipstream does not know stops fusing at once.
    if (!d.fusable.load(std::memory_order_relaxed)) c.why = PassReason::NotCaptured;
    for (uint32_t i = 0; i < count && c.why == PassReason::None; ++i) {
        c.why = classify_submit(submits[i], d.one_physical_device, &c.extension);
        if (c.why == PassReason::Semaphores && carry_semaphores(d, *q.fusion, submits[i], i == 0, c))
            c.why = PassReason::None;
        for (uint32_t j = 0; j < command_buffer_count(submits[i]) && c.why == PassReason::None; ++j) {
            const CommandBufferState* cb;
            c.why = classify_command_buffer(d, q, command_buffer(submits[i], j), &cb);
            c.lazy = c.lazy || (cb && cb->lazy);
            if (c.total < kInlineStates) c.inline_states[c.total] = cb;
            else c.many.push_back(cb);
            ++c.total;
        }
    }
}

// Whether the closing barrier the queue owes must come before one of these command buffers.
bool owes_closing(const QueueFusion& f, const Classified& c) {
    if (!f.owes_trailing_barrier()) return false;
    for (uint32_t i = 0; i < c.total; ++i)
        if (f.leaves_narrowed_stages(c[i])) return true;
    return false;
}

// The latency path: the queue waits on every submission and nothing of ours runs. (A lazily
// recorded command buffer goes into a batch, flushed at once; so does one the closing barrier
// the queue owes must come before: the batch's replay puts it there.)
bool goes_direct(DeviceState& d, const QueueState& q, QueueFusion& f, const Classified& c) {
    // (The counter read of in_flight also lets every submission find a lost device before its
    // work reaches the driver: the fault tests' flusher-wait-faults submitted after a loss when
    // a streaming queue skipped it.)
    const bool idle_latency = submit_directly(f.latency_mode(), f.has_pending(), f.in_flight()) && f.waits_seen_below();
    d.latency_families.note(q.family, idle_latency);
    return !c.lazy && idle_latency && !owes_closing(f, c);
}

// A call whose first submission carries waits starts a batch of its own, and so does one that
// signals what the open batch waits for (a wait before its signal on this queue): the open
// batch goes first. Its binary waits that were to take the open batch's signals are then
// carried instead (those signals are with the driver, earlier on this queue).
VkResult split_for_semaphores(DeviceState& d, QueueFusion& f, Classified& c, QueueLock& lock) {
    if (!c.semaphores || !f.open() || (c.waits.empty() && !f.waited_by_open(c.signals))) return VK_SUCCESS;
    lock.add_recording();
    if (VkResult r = f.flush(FlushReason::PassThrough); r < 0) return r;
    c.waits.insert(c.waits.end(), c.pairs.begin(), c.pairs.end());
    c.pairs.clear();
    d.stats.add(Counter::SemaphoreSplits);
    return VK_SUCCESS;
}

// Joins the open batch; then the flush rules say whether it stays open, goes to the flusher, or
// goes now (taking the recording lock).
VkResult append_to_batch(DeviceState& d, QueueFusion& f, Classified& c, VkFence fence, QueueLock& lock) {
    auto flush_now = [&](FlushReason reason) {
        lock.add_recording();
        return f.flush(reason);
    };
    if (VkResult r = split_for_semaphores(d, f, c, lock); r < 0) return r;
    const bool was_open = f.open();
    for (uint32_t i = 0; i < c.total; ++i) f.append(*c[i]);
    if (fence) f.add_fence(fence);
    if (c.semaphores) {
        for (const SemaphoreValue& w : c.pairs) f.pair_binary(w.semaphore);
        f.add_waits(c.waits);
        f.add_reached_waits(c.reached);
        f.add_signals(c.signals);
        d.fusion->awaited().waited(c.waits);
        d.stats.add(Counter::SemaphoreSubmitsFused);
        d.stats.add(Counter::SemaphoreWaitsCarried, c.waits.size());
        d.stats.add(Counter::SemaphoreWaitsReached, c.reached.size());
        d.stats.add(Counter::BinarySemaphoresPaired, c.pairs.size());
    }
    d.stats.add(Counter::CommandBuffersFused, c.total);
    // A queue already waits on the GPU for one of its signals: no deadline to wait for.
    if (c.semaphores && d.fusion->awaited().met_by(c.signals)) return flush_now(FlushReason::Observe);
    // An exportable fence must be the driver's own: it leaves with the batch now.
    if (fence && d.fusion->fences().exportable(fence)) return flush_now(FlushReason::Observe);
    if (d.settings.max_defer_us == 0) return flush_now(FlushReason::Deadline);
    switch (decide_after_append(f.batch_state(), d.settings.batch_max)) {
    case AfterAppend::FlushFull:
        // The flusher records and submits it, unless it is behind.
        if (!f.seal()) return flush_now(FlushReason::Full);
        d.fusion->wake();
        return VK_SUCCESS;
    case AfterAppend::FlushGpuStarving: return flush_now(FlushReason::GpuStarving);
    case AfterAppend::Keep: break;
    }
    if (!was_open) d.fusion->opened_batch();
    return VK_SUCCESS;
}

uint32_t signal_count(const VkSubmitInfo& s) { return s.signalSemaphoreCount; }
uint32_t signal_count(const VkSubmitInfo2& s) { return s.signalSemaphoreInfoCount; }

uint32_t wait_count(const VkSubmitInfo& s) { return s.waitSemaphoreCount; }
uint32_t wait_count(const VkSubmitInfo2& s) { return s.waitSemaphoreInfoCount; }

// A passed-through submission's semaphores, where fusion could carry all of them: later waits
// on its timeline signals are met by the work before them on this queue, and its timeline
// waits are awaited on the GPU (a batch that takes their signal goes at once).
template <typename Info>
void note_passed_semaphores(DeviceState& d, QueueFusion& f, uint32_t count, const Info* submits) {
    if (!d.record) return;
    auto record = [&](VkSemaphore s) { return d.record->semaphore(s); };
    std::vector<SemaphoreValue> waits, signals;
    for (uint32_t i = 0; i < count; ++i) {
        if (!signal_count(submits[i]) && !wait_count(submits[i])) continue;
        waits.clear();
        signals.clear();
        if (!semaphore_uses(submits[i], record, waits, signals)) continue;
        f.note_signals(signals);
        d.fusion->awaited().waited(waits);
    }
}

// As it is, after everything before it (FUSION.md rule 10), and after the barrier that closes
// narrowed batches where its command buffers may work in other stages.
template <typename Info, typename Next>
VkResult pass_through(DeviceState& d, QueueFusion& f, const Classified& c, uint32_t count, const Info* submits,
                      VkFence fence, Next next, QueueLock& lock) {
    uint32_t cbs = 0;
    for (uint32_t i = 0; i < count; ++i) cbs += command_buffer_count(submits[i]);
    count_passed(d.stats, c.why, cbs, c.extension);
    lock.add_recording();
    bool leaves = false;
    for (uint32_t i = 0; i < count && !leaves; ++i)
        for (uint32_t j = 0; j < command_buffer_count(submits[i]) && !leaves; ++j)
            leaves = f.leaves_narrowed_stages(find_command_buffer(command_buffer(submits[i], j)));
    if (VkResult r = f.flush(FlushReason::PassThrough, leaves); r < 0) return r;
    record_unended_natively(count, submits);
    note_passed_semaphores(d, f, count, submits);
    return f.submit_passed(count, submits, fence, next);
}

// Armed launches (armed_replay.h) follow one command buffer submitted alone, with no semaphore
// and nothing chained that fusion would not carry (an empty VkTimelineSemaphoreSubmitInfo, the
// one device's masks): its state, or null.
template <typename Info>
const CommandBufferState* lone_command_buffer(const DeviceState& d, uint32_t count, const Info* s) {
    VkStructureType unknown = VK_STRUCTURE_TYPE_MAX_ENUM;
    if (count != 1 || command_buffer_count(*s) != 1 ||
        classify_submit(*s, d.one_physical_device, &unknown) != PassReason::None)
        return nullptr;
    return find_command_buffer(command_buffer(*s, 0));
}

// The queue holds an armed replay: a submission of the same work releases it; anything else
// disarms it first, and goes on as it would have.
template <typename Info>
bool released_armed(DeviceState& d, const QueueState& q, QueueFusion& f, uint32_t count, const Info* submits,
                    VkFence fence, VkResult* result) {
    const CommandBufferState* cb = lone_command_buffer(d, count, submits);
    if (cb && cb->device == &d && cb->queue_family == q.family && f.releases_armed(*cb, fence)) {
        *result = f.release_armed(*cb, fence);
        return true;
    }
    log(LogLevel::Debug, "arm: disarmed by a submission of %s", !cb ? "other than one command buffer alone"
        : !f.latency_mode() ? "a queue not waiting for each submission" : f.has_pending() ? "a queue holding a batch"
        : "other work");
    f.disarm(Counter::ArmDisarmedMismatch);
    return false;
}

template <typename Info, typename Next>
VkResult fused_submit(QueueState& q, uint32_t count, const Info* submits, VkFence fence, Next next) {
    DeviceState& d = *q.device;
    QueueFusion& f = *q.fusion;
    // What must submit held batches later takes the recording lock as well (add_recording):
    // the application's submissions to this queue are its own to serialize, so meanwhile only
    // the flusher can act, and it only submits what is held, in order.
    QueueLock lock(f.locks(), QueueLock::Take::QueueOnly);
    if (lock.waited_ns()) {
        d.stats.add(Counter::SubmitLockWaits);
        d.stats.add(Counter::SubmitLockWaitNs, lock.waited_ns());
    }
    if (VkResult error = f.take_error(); error != VK_SUCCESS) return error;
    if (VkResult r; f.armed() && released_armed(d, q, f, count, submits, fence, &r)) return r;
    Classified c;
    classify(d, q, count, submits, c);
    if (c.why == PassReason::None && c.total > 0) {
        f.note_submission(fence);
        if (goes_direct(d, q, f, c)) {
            d.stats.add(Counter::CommandBuffersDirect, c.total);
            // (Its semaphores go to the driver as the application made them.)
            f.note_signals(c.signals);
            d.fusion->awaited().waited(c.waits);
            NativeSubmission done;
            const VkResult r = f.submit_direct(count, submits, fence, next, &done);
            // (The classification found every command buffer's state: of this device, captured.)
            if (r == VK_SUCCESS)
                for (uint32_t i = 0; i < c.total; ++i) note_native(*c[i], q, done);
            if (r == VK_SUCCESS && d.settings.arm != ArmMode::Off)
                if (const CommandBufferState* cb = lone_command_buffer(d, count, submits)) f.arm(*cb);
            return r;
        }
    }
    // Carried waits open a batch; a call with no command buffers has none to open.
    if (!c.waits.empty() && c.total == 0) c.why = PassReason::Semaphores;
    if (c.why == PassReason::None && (c.total > 0 || f.open())) {
        // Nothing of ours ran before it: then nothing in front of a replay armed behind it can
        // wait for the host (a settle_armed waits for a disarmed replay).
        const bool idle = d.settings.arm != ArmMode::Off && !f.has_pending() && f.in_flight() == 0;
        const VkResult r = append_to_batch(d, f, c, fence, lock);
        // A lazily recorded command buffer on the latency path went in a batch of its own, at
        // once: as after a direct submission, a replay of it may be armed behind it.
        if (r == VK_SUCCESS && idle && f.latency_mode() && !f.has_pending())
            if (const CommandBufferState* cb = lone_command_buffer(d, count, submits)) f.arm(*cb);
        return r;
    }
    return pass_through(d, f, c, count, submits, fence, next, lock);
}

}  // namespace

VkResult queue_submit(QueueState& q, uint32_t count, const VkSubmitInfo* submits, VkFence fence, PFN_vkQueueSubmit next) {
    return fused_submit(q, count, submits, fence, next);
}

VkResult queue_submit2(QueueState& q, uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                       PFN_vkQueueSubmit2 next) {
    return fused_submit(q, count, submits, fence, next);
}

}  // namespace slipstream::submit
