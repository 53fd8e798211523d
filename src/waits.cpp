#include "waits.h"

#include <algorithm>

namespace slipstream {

namespace {

// Polls `poll` for up to the site's budget, then calls `block(remaining timeout)`.
// `poll` returns VK_SUCCESS (done), VK_NOT_READY (keep polling), another positive code (stop
// polling and block), or an error (returned as is).
template <typename Poll, typename Block>
VkResult spin_then_block(DeviceState& d, AdaptiveSpinBudget& site, uint64_t timeout, Poll&& poll, Block&& block) {
    const uint64_t start = now_ns();
    const uint64_t budget = site.budget_ns(uint64_t(d.settings.spin_us) * 1000, timeout, d.settings.spin_adaptive);
    if (budget > 0) {
        uint64_t spun = 0;
        VkResult r = spin_until(poll, budget, &spun);
        d.stats.add(Counter::SpinWaits);
        d.stats.add(Counter::SpinNs, spun);
        if (r == VK_SUCCESS) {
            d.stats.add(Counter::SpinWins);
            site.record(now_ns() - start);
            return r;
        }
        if (r < 0) return r;
        d.stats.add(Counter::SpinBlocked);
    } else if (timeout != 0 && d.settings.spin_us != 0) {
        d.stats.add(Counter::SpinSkipped);
    }
    VkResult r = block(remaining_timeout(timeout, now_ns() - start));
    if (r == VK_SUCCESS) site.record(now_ns() - start);
    return r;
}

}  // namespace

VkResult wait_for_fences(DeviceState& d, uint32_t count, const VkFence* fences, VkBool32 wait_all,
                         uint64_t timeout) {
    d.stats.add(Counter::FenceWaits);
    auto block = [&](uint64_t t) { return d.dispatch.WaitForFences(d.device, count, fences, wait_all, t); };
    if (!d.settings.spin || timeout == 0 || count == 0) return block(timeout);
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
    VkResult r = spin_then_block(d, d.fence_spin, timeout, poll, block);
    if (r == VK_SUCCESS && (wait_all || count == 1)) note_fences_signaled(d, count, fences);
    return r;
}

VkResult wait_semaphores(DeviceState& d, const VkSemaphoreWaitInfo* info, uint64_t timeout,
                         PFN_vkWaitSemaphores next_wait) {
    d.stats.add(Counter::SemaphoreWaits);
    auto block = [&](uint64_t t) { return next_wait(d.device, info, t); };
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

VkResult queue_wait_idle(QueueState& q) {
    DeviceState& d = *q.device;
    d.stats.add(Counter::QueueWaitIdles);
    if (!d.idle) return d.dispatch.QueueWaitIdle(q.queue);
    IdleTracker& t = *d.idle;
    // One poll under the tracker's lock: the application may drop its fence meanwhile.
    auto poll = [&]() -> VkResult {
        std::lock_guard lock(t.mutex());
        VkResult error;
        QueueActivity a = t.poll(q.idle, &error);
        if (error != VK_SUCCESS) return error;
        return a == QueueActivity::Idle ? VK_SUCCESS : a == QueueActivity::Pending ? VK_NOT_READY : VK_INCOMPLETE;
    };
    VkResult first;
    {
        std::lock_guard lock(t.mutex());
        t.note_idle_wait(q.idle);
        VkResult error;
        QueueActivity a = t.poll(q.idle, &error);
        if (error != VK_SUCCESS) return error;
        if (a == QueueActivity::Idle) {
            d.stats.add(Counter::IdleShortcuts);
            return VK_SUCCESS;
        }
        first = (a == QueueActivity::Pending || (a == QueueActivity::Busy && t.fence_busy_queue(q.idle, q.queue)))
                    ? VK_NOT_READY
                    : VK_INCOMPLETE;
    }
    auto block = [&](uint64_t) { return d.dispatch.QueueWaitIdle(q.queue); };
    VkResult r = first == VK_NOT_READY ? spin_then_block(d, d.idle_spin, UINT64_MAX, poll, block) : block(0);
    if (r == VK_SUCCESS) {
        std::lock_guard lock(t.mutex());
        t.mark_idle(q.idle);
    }
    return r;
}

VkResult device_wait_idle(DeviceState& d) {
    d.stats.add(Counter::DeviceWaitIdles);
    if (!d.idle) return d.dispatch.DeviceWaitIdle(d.device);
    IdleTracker& t = *d.idle;
    std::vector<QueueState*> queues;
    {
        std::lock_guard lock(d.mutex);
        queues = d.queues;
    }
    auto poll = [&]() -> VkResult {
        std::lock_guard lock(t.mutex());
        VkResult result = VK_SUCCESS;
        for (QueueState* q : queues) {
            VkResult error;
            QueueActivity a = t.poll(q->idle, &error);
            if (error != VK_SUCCESS) return error;
            if (a == QueueActivity::Unknown || a == QueueActivity::Busy) return VK_INCOMPLETE;
            if (a == QueueActivity::Pending) result = VK_NOT_READY;
        }
        return result;
    };
    {
        std::lock_guard lock(t.mutex());
        for (QueueState* q : queues) {
            t.note_idle_wait(q->idle);
            if (q->idle.activity == QueueActivity::Busy) t.fence_busy_queue(q->idle, q->queue);
        }
    }
    VkResult first = poll();
    if (first == VK_SUCCESS) {
        d.stats.add(Counter::IdleShortcuts);
        return VK_SUCCESS;
    }
    if (first < 0) return first;
    auto block = [&](uint64_t) { return d.dispatch.DeviceWaitIdle(d.device); };
    VkResult r = first == VK_NOT_READY ? spin_then_block(d, d.idle_spin, UINT64_MAX, poll, block) : block(0);
    if (r == VK_SUCCESS) {
        std::lock_guard lock(t.mutex());
        for (QueueState* q : queues) t.mark_idle(q->idle);
    }
    return r;
}

void note_fences_signaled(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.idle) return;
    std::lock_guard lock(d.idle->mutex());
    d.idle->app_fences_signaled(count, fences);
}

void release_fences(DeviceState& d, uint32_t count, const VkFence* fences) {
    if (!d.idle) return;
    std::lock_guard lock(d.idle->mutex());
    d.idle->release_app_fences(count, fences);
}

void note_untracked_queue_work(QueueState& q) {
    if (!q.device->idle) return;
    std::lock_guard lock(q.device->idle->mutex());
    q.device->idle->mark_unknown(q.idle);
}

TrackedSubmission::TrackedSubmission(QueueState* q, VkFence app_fence) : q_(q), app_fence_(app_fence), fence_(app_fence) {
    if (!q_ || !q_->device->idle) {
        q_ = nullptr;
        return;
    }
    std::lock_guard lock(q_->device->idle->mutex());
    fence_ = q_->device->idle->fence_for_submit(q_->idle, app_fence);
}

void TrackedSubmission::end(VkResult result) {
    if (!q_) return;
    std::lock_guard lock(q_->device->idle->mutex());
    q_->device->idle->after_submit(q_->idle, app_fence_, fence_, result);
}

}  // namespace slipstream
