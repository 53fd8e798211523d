#include "submit/fusion.h"

#include "core/log.h"
#include "core/timeline_wait.h"
#include "state/object_record.h"
#include "state/object_state.h"
#include "submit/fusing_queues.h"
#include "submit/queue_fusion.h"
#include "idle/queue_idle.h"

#include <memory>

namespace slipstream::submit {

// --- lifetime ----------------------------------------------------------------------------------

void start_device(DeviceState& d) {
    const bool core = d.dispatch.GetSemaphoreCounterValue && d.dispatch.WaitSemaphores &&
                      (VK_API_VERSION_MINOR(std::min(d.instance->api_version, d.properties.apiVersion)) >= 2 ||
                       VK_API_VERSION_MAJOR(d.instance->api_version) > 1);
    d.fusion_counter_value = core ? d.dispatch.GetSemaphoreCounterValue : d.dispatch.GetSemaphoreCounterValueKHR;
    d.fusion_wait_semaphores = core ? d.dispatch.WaitSemaphores : d.dispatch.WaitSemaphoresKHR;
    if (!d.fusion_counter_value || !d.fusion_wait_semaphores) {
        log(LogLevel::Warn, "%s: no timeline semaphore commands: fusion stays off", d.properties.deviceName);
        return;
    }
    d.fusion = std::make_unique<DeviceFusion>(d);
    log(LogLevel::Info, "%s: fusing command buffers (batch_max %u, max_defer_us %u, fuse_barrier %s)",
        d.properties.deviceName, d.settings.batch_max, d.settings.max_defer_us, d.settings.fuse_barrier ? "on" : "off");
}

void start_queue(DeviceState& d, QueueState& q) {
    if (!d.fusion) return;
    std::lock_guard lock(d.mutex);
    if (q.fusion) return;
    auto f = std::make_unique<QueueFusion>(d, q);
    if (!f->init()) {
        log(LogLevel::Warn, "queue %u.%u: fusion could not start (command pool or semaphore): its work passes through",
            q.family, q.index);
        return;
    }
    d.fusing_queues.push_back(f.get());
    if (const size_t i = d.fusing_queues.size() - 1; i < DeviceState::kFusingFast)
        d.fusing_fast[i].store(f.get(), std::memory_order_relaxed);
    d.fusing_fast_count.store(uint32_t(d.fusing_queues.size()), std::memory_order_release);
    {
        std::lock_guard idle_lock(q.idle.mutex);
        q.idle.timeline_tracked = true;
    }
    q.fusion = std::move(f);
}

void stop_device(DeviceState& d) {
    if (!d.fusion) return;
    d.fusion->stop();
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        QueueLock lock(f->locks());
        f->disarm(Counter::ArmDisarmedQueueCall);
        f->flush(FlushReason::Destroy);
        // The application waited for what it submitted; ours may still run (and its command
        // buffers and semaphore go with the queue's state).
        if (f->in_flight() > 0 || f->armed_replay_running()) f->wait_idle();
    }
    d.fusion.reset();
}

// --- flushes -----------------------------------------------------------------------------------

VkResult flush_queue(QueueState& q, FlushReason reason) {
    QueueFusion* f = q.fusion.get();
    if (!f) return VK_SUCCESS;
    QueueLock lock(f->locks());
    if (reason == FlushReason::Observe) f->note_wait();
    VkResult r = f->flush(reason);
    if (r == VK_SUCCESS) r = f->take_error();
    return r;
}

namespace {
// Flushes the open batches of `d` for which `wanted(queue fusion)` holds, under their locks.
template <typename Wanted>
VkResult flush_open(DeviceState& d, FlushReason reason, Wanted&& wanted) {
    if (d.open_batches.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    const FusingQueues queues(d);
    VkResult first = VK_SUCCESS;
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        if (!f->has_pending()) continue;
        QueueLock lock(f->locks());
        if (!wanted(*f)) continue;
        if (reason == FlushReason::Observe) f->note_wait();
        VkResult r = f->flush(reason);
        if (r < 0 && first == VK_SUCCESS) first = r;
    }
    return first;
}

// Flushes, for an observer, each queue that `may_hold` (no lock held) lets be asked and whose
// held batches `holds` says it may see. `holds` is asked under the queue lock alone, so that an
// observer of nothing held (a ring's older fence, another semaphore) never waits for the
// flusher's recording. `waits`: the observer waits for the queue's work (note_wait).
template <typename MayHold, typename Holds>
VkResult flush_observed(DeviceState& d, bool waits, MayHold&& may_hold, Holds&& holds) {
    const FusingQueues queues(d);
    VkResult first = VK_SUCCESS;
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        if (!may_hold(*f)) continue;
        {
            std::lock_guard lock(f->locks().queue());
            if (!holds(*f)) continue;
        }
        QueueLock lock(f->locks());
        if (waits) f->note_wait();
        VkResult r = f->flush(FlushReason::Observe);
        if (r < 0 && first == VK_SUCCESS) first = r;
    }
    return first;
}
}  // namespace

VkResult flush_device(DeviceState& d, FlushReason reason) {
    return flush_open(d, reason, [](const QueueFusion&) { return true; });
}

void flush_before_destroy(DeviceState& d) {
    if (d.fusion) flush_device(d, FlushReason::Destroy);
}

void settle_armed(DeviceState& d) {
    if (!d.fusion || d.settings.arm == ArmMode::Off) return;
    d.arm_epoch.fetch_add(1, std::memory_order_acq_rel);
    // (Also where none is armed: one disarmed a moment ago may still bind what goes now.)
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        uint64_t value = 0;
        VkSemaphore done = VK_NULL_HANDLE;
        {
            std::lock_guard lock(queues[i]->locks().queue());
            if (!queues[i]->disarm_for_objects(&done, &value)) continue;
        }
        // Skipped, it runs at once: then its command buffer of ours no longer uses what it names.
        watch_device_loss(d, wait_for_value(d.fusion_wait_semaphores, d.device, done, value, UINT64_MAX));
    }
}

VkResult flush_signal_holders(DeviceState& d, const QueueState* except) {
    if (!d.fusion || d.held_signal_batches.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    const QueueFusion* skip = except ? except->fusion.get() : nullptr;
    return flush_open(d, FlushReason::Observe,
                      [skip](const QueueFusion& f) { return &f != skip && f.holds_signals(); });
}

VkResult flush_signalers_of(DeviceState& d, uint32_t count, const VkSemaphore* semaphores) {
    if (!d.fusion || count == 0 || d.held_signal_batches.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    return flush_observed(
        d, true, [](const QueueFusion& f) { return f.holds_signals(); },
        [&](const QueueFusion& f) { return f.signals_any(count, semaphores); });
}

namespace {
uint32_t waits_of(const VkSubmitInfo& s) { return s.waitSemaphoreCount; }
uint32_t waits_of(const VkSubmitInfo2& s) { return s.waitSemaphoreInfoCount; }
uint32_t signals_of(const VkSubmitInfo& s) { return s.signalSemaphoreCount; }
uint32_t signals_of(const VkSubmitInfo2& s) { return s.signalSemaphoreInfoCount; }
VkSemaphore signal_of(const VkSubmitInfo& s, uint32_t i) { return s.pSignalSemaphores[i]; }
VkSemaphore signal_of(const VkSubmitInfo2& s, uint32_t i) { return s.pSignalSemaphoreInfos[i].semaphore; }

bool binary(const DeviceState& d, VkSemaphore s) {
    const std::optional<SemaphoreRecord> r = d.record ? d.record->semaphore(s) : std::nullopt;
    return !r || !r->timeline;  // (unknown: assume the worst)
}

template <typename Info>
bool needs_holders_first(const DeviceState& d, uint32_t count, const Info* submits) {
    for (uint32_t i = 0; i < count; ++i) {
        if (waits_of(submits[i])) return true;
        for (uint32_t j = 0; j < signals_of(submits[i]); ++j)
            if (binary(d, signal_of(submits[i], j))) return true;
    }
    return false;
}

// Another queue's held batch that waits on a timeline semaphore this call signals goes first,
// so that the waits and signals of one semaphore reach the driver in the order the application
// made them: fusion may hold a wait (even one already met) past another queue's next signal,
// which is valid, but a layer below that pairs each wait with the oldest signal no wait took
// (the validation layer) then pairs the later wait with nothing and reports a race.
template <typename Info>
VkResult flush_waiters_before(DeviceState& d, const QueueState* q, uint32_t count, const Info* submits) {
    const QueueFusion* skip = q ? q->fusion.get() : nullptr;
    // Only another queue's held semaphores matter (one queue keeps its own order): a program of
    // one fusing queue pays no look at its signals' kinds.
    const FusingQueues queues(d);
    bool others = false;
    for (size_t i = 0; i < queues.size() && !others; ++i) others = queues[i] != skip && queues[i]->holds_signals();
    if (!others) return VK_SUCCESS;
    constexpr uint32_t kMax = 8;
    VkSemaphore signaled[kMax];
    uint32_t n = 0;
    bool many = false;
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t j = 0; j < signals_of(submits[i]); ++j) {
            const VkSemaphore s = signal_of(submits[i], j);
            if (binary(d, s)) continue;  // (binary signals flush every holder already)
            if (n < kMax) signaled[n++] = s;
            else many = true;
        }
    if (n == 0) return VK_SUCCESS;
    return flush_open(d, FlushReason::PassThrough, [&](const QueueFusion& f) {
        return &f != skip && f.holds_signals() && (many || f.waits_any(n, signaled));
    });
}

template <typename Info>
VkResult flush_holders_before_as(DeviceState& d, const QueueState* q, uint32_t count, const Info* submits) {
    if (!d.fusion || d.held_signal_batches.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    if (needs_holders_first(d, count, submits)) return flush_signal_holders(d, q);
    return flush_waiters_before(d, q, count, submits);
}
}  // namespace

VkResult flush_holders_before(DeviceState& d, const QueueState* q, uint32_t count, const VkSubmitInfo* submits) {
    return flush_holders_before_as(d, q, count, submits);
}
VkResult flush_holders_before(DeviceState& d, const QueueState* q, uint32_t count, const VkSubmitInfo2* submits) {
    return flush_holders_before_as(d, q, count, submits);
}

void semaphore_destroyed(DeviceState& d, VkSemaphore semaphore) {
    if (!d.fusion) return;
    d.fusion->awaited().forget(semaphore);
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        std::lock_guard lock(queues[i]->locks().queue());
        queues[i]->forget_semaphore(semaphore);
    }
}

VkResult fusion_error(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return VK_SUCCESS;
    if (d.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    if (d.fusion_errors.load(std::memory_order_acquire) != 0) {
        const FusingQueues queues(d);
        for (size_t i = 0; i < queues.size(); ++i) {
            std::lock_guard lock(queues[i]->locks().queue());
            if (VkResult r = queues[i]->take_error(); r != VK_SUCCESS) return r;
        }
    }
    return count ? d.fusion->fences().failure(count, fences) : VK_SUCCESS;
}

void realize_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion || d.fusion->fences().none()) return;
    for (const PendingFence& p : d.fusion->fences().take(count, fences)) {
        std::lock_guard lock(p.queue->locks().queue());
        p.queue->signal_fence(p.fence);
    }
}

void forget_fences(DeviceState& d, uint32_t count, const VkFence* fences, bool destroyed) {
    if (d.fusion) d.fusion->fences().forget(count, fences, destroyed);
}

void note_fences_seen_done(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        if (queues[i]->latest_fence_in(count, fences)) queues[i]->note_seen_done();
        for (uint32_t k = 0; k < count; ++k) queues[i]->fence_signaled(fences[k]);
    }
}

void release_followed_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        QueueFusion* f = queues[i];
        for (uint32_t k = 0; k < count; ++k) f->fence_released(fences[k]);
    }
}

void note_device_wait(DeviceState& d) {
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) queues[i]->note_wait();
}

bool answered_fences_done(DeviceState& d, uint32_t count, const VkFence* fences, bool wait_all) {
    if (!d.fusion || d.lost.load(std::memory_order_acquire) || !d.fusion->fences().seen_done(count, fences, wait_all))
        return false;
    // One counter read per fusing queue (~17 ns on NVIDIA), no lock: a device lost since the
    // values were seen is learnt here, before the application, told its work is done, submits
    // more (a sticky loss while the flusher's driver wait drained the device: fault injection).
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i) {
        uint64_t value = 0;
        if (watch_device_loss(d, d.fusion_counter_value(d.device, queues[i]->timeline(), &value)) != VK_SUCCESS)
            return false;
        queues[i]->saw_completed(value);
    }
    for (size_t i = 0; i < queues.size(); ++i)
        if (queues[i]->latest_fence_in(count, fences)) queues[i]->note_wait();
    return true;
}

void note_timelines_reached(DeviceState& d, uint32_t count, const VkSemaphore* timelines, const uint64_t* values) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    for (size_t i = 0; i < queues.size(); ++i)
        for (uint32_t k = 0; k < count; ++k)
            if (queues[i]->timeline() == timelines[k]) queues[i]->saw_completed(values[k]);
}

VkResult flush_for_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return VK_SUCCESS;
    // A wait on a queue's newest fence is a wait for everything it was given: what the queue's
    // mode is learnt from. (The submission that carries a fence waited for came before the wait.)
    auto may_hold = [&](QueueFusion& f) {
        if (f.latest_fence_in(count, fences)) f.note_wait();
        return f.has_pending();
    };
    return flush_observed(d, false, may_hold, [&](const QueueFusion& f) { return f.holds_any(count, fences); });
}

FlushedQueue::FlushedQueue(QueueState* q, FlushReason reason) {
    if (!q || !q->fusion) return;
    lock_.emplace(q->fusion->locks());
    q->fusion->disarm(Counter::ArmDisarmedQueueCall);
    error_ = q->fusion->flush(reason);
    lock_->release_recording();
}

IdleWaitHold::IdleWaitHold(QueueState& q) {
    if (!q.fusion) return;
    one_ = std::unique_lock(q.fusion->locks().queue());
    q.fusion->disarm(Counter::ArmDisarmedQueueCall);  // the idle wait would wait for its release
}

IdleWaitHold::IdleWaitHold(DeviceState& d) {
    if (!d.fusion) return;
    const FusingQueues queues(d);
    all_.reserve(queues.size());
    // Always in the device's order; no other path holds two queues' locks.
    for (size_t i = 0; i < queues.size(); ++i) {
        all_.emplace_back(queues[i]->locks().queue());
        queues[i]->disarm(Counter::ArmDisarmedQueueCall);
    }
}

}  // namespace slipstream::submit
