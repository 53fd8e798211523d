#include "idle/queue_idle.h"

#include "state/object_state.h"

#include <algorithm>

namespace slipstream {

VkFence IdleTracker::acquire_own_fence(QueueIdle& q) {
    if (q.own_free.empty() && q.own_signaled.empty()) collect_signaled(q);
    if (q.own_free.empty() && !q.own_signaled.empty()) {
        // One reset for the whole batch: on some drivers every fence call is a syscall.
        if (d_.ResetFences(device_, uint32_t(q.own_signaled.size()), q.own_signaled.data()) != VK_SUCCESS)
            return VK_NULL_HANDLE;
        q.own_free.insert(q.own_free.end(), q.own_signaled.begin(), q.own_signaled.end());
        q.own_signaled.clear();
    }
    if (q.own_free.empty()) {
        if (q.own_pending.size() >= kMaxOwnFences) return VK_NULL_HANDLE;
        VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence;
        if (d_.CreateFence(device_, &info, nullptr, &fence) != VK_SUCCESS) return VK_NULL_HANDLE;
        if (stats_) stats_->add(Counter::OwnFencesCreated);
        return fence;
    }
    VkFence fence = q.own_free.back();
    q.own_free.pop_back();
    return fence;
}

void IdleTracker::collect_signaled(QueueIdle& q) {
    // A fence signal operation's first scope includes every earlier signal operation on the
    // queue (the spec's "signal operation order"), so the signaled fences are a prefix of
    // own_pending: find its end with a binary search (log n status queries), not one query
    // per fence.
    size_t lo = 0, hi = q.own_pending.size();  // invariant: [0, lo) signaled, [hi, n) not
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d_.GetFenceStatus(device_, q.own_pending[mid]) == VK_SUCCESS) lo = mid + 1;
        else hi = mid;
    }
    q.own_signaled.insert(q.own_signaled.end(), q.own_pending.begin(), q.own_pending.begin() + long(lo));
    q.own_pending.erase(q.own_pending.begin(), q.own_pending.begin() + long(lo));
}

void IdleTracker::forget_last_fence(QueueIdle& q, bool signaled) {
    if (q.last_fence && !q.last_is_own) {
        std::lock_guard lock(fences_mutex_);
        auto it = app_fences_.find(q.last_fence);
        if (it != app_fences_.end() && it->second.latest_on == &q && it->second.serial == q.last_serial) {
            // Kept until its reset: submitted again before one, it is a misuse to notice.
            it->second.latest_on = nullptr;
            it->second.signaled = it->second.signaled || signaled;
        }
    }
    q.last_fence = VK_NULL_HANDLE;
    q.last_is_own = false;
}

VkFence IdleTracker::fence_for_submit(QueueIdle& q, VkFence app_fence) {
    // Unknown until the driver's next idle wait: nothing to follow.
    if (q.activity == QueueActivity::Unknown) return app_fence;
    VkFence fence = app_fence;
    if (!fence && q.fence_at_submit()) fence = acquire_own_fence(q);
    forget_last_fence(q, false);
    if (!fence) {
        q.activity = QueueActivity::Busy;
        return fence;
    }
    const uint64_t serial = serial_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (fence == app_fence) {
        std::lock_guard lock(fences_mutex_);
        auto [it, fresh] = app_fences_.try_emplace(fence);
        if (!fresh && (it->second.signaled || it->second.submitted)) {
            // Submitted again before a reset (see the header): neither this submission nor
            // the earlier one's queue may take a signal of it for its completion.
            it->second.latest_on = nullptr;
            it->second.signaled = false;
            q.activity = QueueActivity::Unknown;
            return app_fence;
        }
        it->second = AppFence{&q, serial, false, true};
    } else {
        q.own_pending.push_back(fence);
    }
    q.last_fence = fence;
    q.last_is_own = fence != app_fence;
    q.last_serial = serial;
    q.activity = QueueActivity::Pending;
    return fence;
}

void IdleTracker::after_submit(QueueIdle& q, VkFence app_fence, VkFence fence, VkResult result) {
    if (result == VK_SUCCESS) {
        if (!app_fence) ++q.fenceless_since_wait;
        return;
    }
    // Nothing was submitted: our fence is still unsignaled and free (and must leave
    // own_pending, whose signaled fences are a prefix). Stay cautious: let the driver answer
    // the next idle wait.
    if (fence && fence != app_fence) {
        auto it = std::find(q.own_pending.rbegin(), q.own_pending.rend(), fence);
        if (it != q.own_pending.rend()) q.own_pending.erase(std::next(it).base());
        q.own_free.push_back(fence);
    }
    mark_unknown(q);
    if (app_fence) {
        // Not submitted after all: its next submission is no misuse.
        std::lock_guard lock(fences_mutex_);
        if (auto it = app_fences_.find(app_fence); it != app_fences_.end()) it->second.submitted = false;
    }
}

void IdleTracker::note_idle_wait(QueueIdle& q) {
    const uint32_t n = q.fenceless_since_wait > 1024 ? 1024 : q.fenceless_since_wait;
    q.fenceless_per_wait_x16 = (q.fenceless_per_wait_x16 + n * 16) / 2;
    q.fenceless_since_wait = 0;
}

bool IdleTracker::fence_busy_queue(QueueIdle& q, VkQueue queue) {
    if (q.activity != QueueActivity::Busy) return q.activity == QueueActivity::Pending || q.activity == QueueActivity::Idle;
    VkFence fence = acquire_own_fence(q);
    if (!fence) return false;
    if (d_.QueueSubmit(queue, 0, nullptr, fence) != VK_SUCCESS) {
        q.own_free.push_back(fence);  // not submitted: still unsignaled
        return false;
    }
    q.own_pending.push_back(fence);
    q.last_fence = fence;
    q.last_is_own = true;
    q.last_serial = serial_.fetch_add(1, std::memory_order_relaxed) + 1;
    q.activity = QueueActivity::Pending;
    return true;
}

void IdleTracker::mark_unknown(QueueIdle& q) {
    forget_last_fence(q, false);
    q.activity = QueueActivity::Unknown;
}

void IdleTracker::mark_idle(QueueIdle& q) {
    // The latest fence signaled with everything before it, our fences included.
    forget_last_fence(q, true);
    q.activity = QueueActivity::Idle;
    q.own_signaled.insert(q.own_signaled.end(), q.own_pending.begin(), q.own_pending.end());
    q.own_pending.clear();
}

QueueActivity IdleTracker::poll(QueueIdle& q, VkResult* error) {
    *error = VK_SUCCESS;
    std::unique_lock lock(q.mutex);
    if (q.activity != QueueActivity::Pending) return q.activity;
    VkResult r;
    if (q.last_is_own) {
        // Ours are reset or destroyed only by calls the application keeps apart from waits
        // on this queue: poll without the lock, and apply the answer only to the submission
        // it was about.
        const VkFence fence = q.last_fence;
        const uint64_t serial = q.last_serial;
        lock.unlock();
        r = d_.GetFenceStatus(device_, fence);
        lock.lock();
        if (q.activity != QueueActivity::Pending || q.last_serial != serial) return q.activity;
    } else {
        r = d_.GetFenceStatus(device_, q.last_fence);
    }
    if (r == VK_SUCCESS) {
        mark_idle(q);
        return QueueActivity::Idle;
    }
    if (r != VK_NOT_READY) *error = r;
    return QueueActivity::Pending;
}

void IdleTracker::app_fences_signaled(uint32_t count, const VkFence* fences, uint64_t epoch) {
    struct Latest {
        QueueIdle* q;
        VkFence fence;
        uint64_t serial;
    };
    Latest small[4];
    std::vector<Latest> many;
    uint32_t found = 0;
    {
        std::lock_guard lock(fences_mutex_);
        // A reset raced this answer: it may be about a payload that is gone.
        if (resets_.load(std::memory_order_relaxed) != epoch) return;
        for (uint32_t i = 0; i < count; ++i) {
            AppFence& f = app_fences_[fences[i]];
            f.signaled = true;
            if (!f.latest_on) continue;
            Latest l{f.latest_on, fences[i], f.serial};
            if (found < 4) small[found] = l;
            else many.push_back(l);
            ++found;
        }
    }
    for (uint32_t i = 0; i < found; ++i) {
        const Latest& l = i < 4 ? small[i] : many[i - 4];
        std::lock_guard lock(l.q->mutex);
        if (l.q->last_fence == l.fence && !l.q->last_is_own && l.q->last_serial == l.serial) mark_idle(*l.q);
    }
}

void IdleTracker::fence_created_signaled(VkFence fence) {
    // Waits on it still go to the driver, as before; only its submission before a reset is
    // noticed.
    std::lock_guard lock(fences_mutex_);
    app_fences_[fence].submitted = true;
}

bool IdleTracker::known_signaled(uint32_t count, const VkFence* fences, bool wait_all) {
    std::lock_guard lock(fences_mutex_);
    for (uint32_t i = 0; i < count; ++i) {
        auto it = app_fences_.find(fences[i]);
        const bool signaled = it != app_fences_.end() && it->second.signaled;
        if (signaled != wait_all) return signaled;
    }
    return wait_all;
}

void IdleTracker::begin_fence_reset(uint32_t count, const VkFence* fences) {
    for (uint32_t i = 0; i < count; ++i) {
        QueueIdle* q = nullptr;
        uint64_t serial = 0;
        {
            std::lock_guard lock(fences_mutex_);
            auto it = app_fences_.find(fences[i]);
            if (it == app_fences_.end()) continue;
            q = it->second.latest_on;
            serial = it->second.serial;
        }
        if (!q) continue;
        std::lock_guard lock(q->mutex);
        if (q->last_fence != fences[i] || q->last_is_own || q->last_serial != serial) continue;
        if (d_.GetFenceStatus(device_, fences[i]) == VK_SUCCESS) mark_idle(*q);
        else mark_unknown(*q);
    }
}

void IdleTracker::end_fence_reset(uint32_t count, const VkFence* fences) {
    std::lock_guard lock(fences_mutex_);
    for (uint32_t i = 0; i < count; ++i) app_fences_.erase(fences[i]);
    resets_.fetch_add(1, std::memory_order_release);
}

void IdleTracker::destroy_own_fences(QueueIdle& q) {
    forget_last_fence(q, false);
    for (auto* list : {&q.own_free, &q.own_signaled})
        for (VkFence f : *list) d_.DestroyFence(device_, f, nullptr);
    for (VkFence f : q.own_pending) d_.DestroyFence(device_, f, nullptr);
    if (stats_)
        stats_->add(Counter::OwnFencesDestroyed, q.own_free.size() + q.own_signaled.size() + q.own_pending.size());
    q.own_free.clear();
    q.own_signaled.clear();
    q.own_pending.clear();
}

TrackedSubmission::TrackedSubmission(QueueState* q, VkFence app_fence) : q_(q), app_fence_(app_fence), fence_(app_fence) {
    if (!q_ || !q_->device->idle) {
        q_ = nullptr;
        return;
    }
    std::lock_guard lock(q_->idle.mutex);
    fence_ = q_->device->idle->fence_for_submit(q_->idle, app_fence);
    const QueueIdle& idle = q_->idle;
    trusted_ = app_fence && fence_ == app_fence && idle.activity == QueueActivity::Pending &&
               idle.last_fence == app_fence && !idle.last_is_own;
}

void TrackedSubmission::end(VkResult result) {
    if (!q_) return;
    std::lock_guard lock(q_->idle.mutex);
    q_->device->idle->after_submit(q_->idle, app_fence_, fence_, result);
}

}  // namespace slipstream
