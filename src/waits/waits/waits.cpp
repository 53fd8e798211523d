#include "waits/waits.h"

#include "waits/settled_error.h"
#include "waits/spin_then_block.h"

#include "core/clock.h"
#include "submit/device_fusion.h"
#include "submit/fusion.h"
#include "submit/queue_fusion.h"
#include "idle/queue_idle.h"
#include "idle/spin_wait.h"

#include <algorithm>

namespace slipstream {

namespace {
// Work fusion holds back is submitted before anything observes completion (FUSION.md rule 3).
// Then errors fusion holds for the application come first (submit::fusion_error).
inline VkResult flush_for_observer(DeviceState& d) {
    if (!d.fusion) return VK_SUCCESS;
    if (VkResult e = submit::flush_device(d, submit::FlushReason::Observe); e < 0) return settled(d, e);
    return settled(d, submit::fusion_error(d));
}
// ... for fences, only the batches that carry them: a wait on an older fence (a ring of
// command buffers coming round) lets the open batch grow.
inline VkResult flush_for_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.fusion) return VK_SUCCESS;
    if (VkResult e = submit::flush_for_fences(d, count, fences); e < 0) return settled(d, e);
    return settled(d, submit::fusion_error(d, count, fences));
}

// Fences whose work is in a fused batch that did not carry them are answered from the queue's
// timeline (submit/batch_fences.h): a wait on only such fences waits on the timelines. Returns
// false when the wait is not of that kind; fences of that kind mixed with others are made
// real first.
bool wait_answered_fences(DeviceState& d, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                          uint64_t timeout, VkResult* result) {
    if (!d.fusion || d.fusion->fences().none()) return false;
    constexpr uint32_t kMax = 8;  // distinct timelines (one per fusing queue)
    VkSemaphore semaphores[kMax];
    uint64_t values[kMax];
    uint32_t distinct = 0, answered = 0;
    bool fits = true;
    for (uint32_t i = 0; i < count; ++i) {
        submit::PendingFence p;
        if (!d.fusion->fences().find(fences[i], &p)) continue;
        ++answered;
        uint32_t k = 0;
        while (k < distinct && semaphores[k] != p.timeline) ++k;
        if (k == distinct) {
            if (distinct == kMax) {
                fits = false;
                continue;
            }
            semaphores[distinct] = p.timeline;
            values[distinct++] = p.value;
        } else {
            // All: the latest value covers the others; any: the earliest one is enough.
            values[k] = wait_all ? std::max(values[k], p.value) : std::min(values[k], p.value);
        }
    }
    if (answered == 0) return false;
    if (answered < count || !fits) {
        submit::realize_fences(d, count, fences);
        return false;
    }
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.flags = wait_all ? 0 : VK_SEMAPHORE_WAIT_ANY_BIT;
    info.semaphoreCount = distinct;
    info.pSemaphores = semaphores;
    info.pValues = values;
    *result = wait_semaphores(d, &info, timeout, d.fusion_wait_semaphores);
    if (*result == VK_SUCCESS && wait_all) submit::note_timelines_reached(d, distinct, semaphores, values);
    return true;
}
}  // namespace

VkResult wait_for_fences(DeviceState& d, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                         uint64_t timeout) {
    d.stats.add(Counter::FenceWaits);
    // Slipstream saw these fences signal and nothing reset them since: no driver call. First,
    // before fusion looks at its batches: a fence known signaled is in none (submitting one
    // needs a reset, which ends the knowledge), and a runtime that waits again on a fence it
    // already waited for pays no more than without fusion.
    if (d.idle && count != 0 && d.idle->known_signaled(count, fences, wait_all)) {
        d.stats.add(Counter::FenceShortcuts);
        return VK_SUCCESS;
    }
    if (submit::answered_fences_done(d, count, fences, wait_all)) {
        d.stats.add(Counter::FenceShortcuts);
        return VK_SUCCESS;
    }
    if (VkResult e = flush_for_fences(d, count, fences); e < 0) return e;
    if (VkResult answered; wait_answered_fences(d, count, fences, wait_all, timeout, &answered)) return answered;
    // Each answer of the driver's (a wait, or the status polls of a spin) that every fence
    // signaled: the queue whose latest work they carried knows it is done.
    auto seen = [&](VkResult r) {
        if (r == VK_SUCCESS && (wait_all || count == 1)) submit::note_fences_seen_done(d, count, fences);
        return r;
    };
    auto block = [&](uint64_t t) { return d.dispatch.WaitForFences(d.device, count, fences, wait_all, t); };
    if (!d.idle || count == 0) return seen(block(timeout));
    IdleTracker& t = *d.idle;
    if (timeout == 0) return seen(block(timeout));
    const uint64_t epoch = t.fence_epoch();
    // Fences seen signaled stay so for the rest of this wait (resetting a fence being waited
    // on is invalid), so each is polled until it signals, then no more.
    uint64_t done_bits = 0;
    auto poll = [&]() -> VkResult {
        bool any = false, all = true;
        for (uint32_t i = 0; i < count; ++i) {
            const bool tracked = i < 64;
            if (tracked && (done_bits >> i & 1)) {
                any = true;
                continue;
            }
            VkResult r = d.dispatch.GetFenceStatus(d.device, fences[i]);
            if (r == VK_SUCCESS) {
                any = true;
                if (tracked) done_bits |= uint64_t(1) << i;
                if (!wait_all) return VK_SUCCESS;
            } else if (r == VK_NOT_READY) {
                all = false;
                if (wait_all) return VK_NOT_READY;
            } else {
                return r;
            }
        }
        return (wait_all ? all : any) ? VK_SUCCESS : VK_NOT_READY;
    };
    VkResult r = seen(spin_then_block(d, d.fence_spin, timeout, poll, block));
    if (r == VK_SUCCESS && (wait_all || count == 1)) t.app_fences_signaled(count, fences, epoch);
    return r;
}

VkResult get_fence_status(DeviceState& d, VkFence fence) {
    if (d.idle && d.idle->known_signaled(1, &fence, true)) return VK_SUCCESS;  // (as in wait_for_fences)
    if (submit::answered_fences_done(d, 1, &fence, true)) return VK_SUCCESS;
    if (VkResult e = flush_for_fences(d, 1, &fence); e < 0) return e;
    if (submit::PendingFence p; d.fusion && !d.fusion->fences().none() && d.fusion->fences().find(fence, &p)) {
        uint64_t value = 0;
        if (VkResult r = d.fusion_counter_value(d.device, p.timeline, &value); r != VK_SUCCESS) return r;
        if (p.timeline == p.queue->timeline()) p.queue->saw_completed(value);
        return value >= p.value ? VK_SUCCESS : VK_NOT_READY;
    }
    auto seen = [&](VkResult r) {
        if (r == VK_SUCCESS) submit::note_fences_seen_done(d, 1, &fence);
        return r;
    };
    if (!d.idle) return seen(d.dispatch.GetFenceStatus(d.device, fence));
    IdleTracker& t = *d.idle;
    const uint64_t epoch = t.fence_epoch();
    VkResult r = seen(d.dispatch.GetFenceStatus(d.device, fence));
    if (r == VK_SUCCESS) t.app_fences_signaled(1, &fence, epoch);
    return r;
}

VkResult wait_semaphores(DeviceState& d, const VkSemaphoreWaitInfo* info, uint64_t timeout,
                         PFN_vkWaitSemaphores next_wait) {
    d.stats.add(Counter::SemaphoreWaits);
    // A held batch may carry a signal it waits for (submit/semaphore_carry.h): those go first.
    if (VkResult e = submit::flush_signalers_of(d, info->semaphoreCount, info->pSemaphores); e < 0)
        return settled(d, e);
    if (VkResult e = submit::fusion_error(d); e < 0) return settled(d, e);
    // `info` holds the driver's values (the hook translated those of pooled timeline
    // semaphores, objects/timeline_values.h), so the counters polled below compare with them.
    auto block = [&](uint64_t t) { return next_wait(d.device, info, t); };
    // The core command where the device has it, else the extension's (a 1.1 application
    // with VK_KHR_timeline_semaphore); the dispatch table is null where the device has none.
    PFN_vkGetSemaphoreCounterValue get =
        d.dispatch.GetSemaphoreCounterValue ? d.dispatch.GetSemaphoreCounterValue : d.dispatch.GetSemaphoreCounterValueKHR;
    if (!d.settings.spin || timeout == 0 || !get || info->semaphoreCount == 0) return block(timeout);
    const bool wait_any = info->flags & VK_SEMAPHORE_WAIT_ANY_BIT;
    auto poll = [&]() -> VkResult {
        bool all = true;
        for (uint32_t i = 0; i < info->semaphoreCount; ++i) {
            uint64_t value = 0;
            VkResult r = get(d.device, info->pSemaphores[i], &value);
            if (r != VK_SUCCESS) return r;
            const bool reached = value >= info->pValues[i];
            if (reached && wait_any) return VK_SUCCESS;
            all = all && reached;
        }
        return (!wait_any && all) ? VK_SUCCESS : VK_NOT_READY;
    };
    return spin_then_block(d, d.semaphore_spin, timeout, poll, block);
}

VkResult observe_device(DeviceState& d) { return flush_for_observer(d); }

void note_untracked_queue_work(QueueState& q) {
    // (A fusing queue's lock is held: FlushedQueue.)
    if (q.fusion) q.fusion->note_untracked_work();
    if (!q.device->idle) return;
    std::lock_guard lock(q.idle.mutex);
    q.device->idle->mark_unknown(q.idle);
}

FenceReset::FenceReset(DeviceState& d, uint32_t count, const VkFence* fences, bool destroyed)
    : t_(d.idle.get()), count_(count), fences_(fences) {
    submit::release_followed_fences(d, count, fences);
    submit::forget_fences(d, count, fences, destroyed);
    if (t_) t_->begin_fence_reset(count_, fences_);
}

FenceReset::~FenceReset() {
    if (t_) t_->end_fence_reset(count_, fences_);
}

}  // namespace slipstream
