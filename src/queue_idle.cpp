#include "queue_idle.h"

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

void IdleTracker::forget_app_fence(QueueIdle& q) {
    if (q.last_fence && !q.last_is_own) app_fences_.erase(q.last_fence);
    q.last_fence = VK_NULL_HANDLE;
    q.last_is_own = false;
}

VkFence IdleTracker::fence_for_submit(QueueIdle& q, VkFence app_fence) {
    if (app_fence || !q.fence_at_submit() || q.activity == QueueActivity::Unknown) return app_fence;
    return acquire_own_fence(q);
}

void IdleTracker::after_submit(QueueIdle& q, VkFence app_fence, VkFence fence, VkResult result) {
    const bool own = fence && fence != app_fence;
    if (result != VK_SUCCESS) {
        // Nothing was submitted (our fence is still unsignaled and free), but stay cautious:
        // let the driver answer the next idle wait.
        if (own) q.own_free.push_back(fence);
        mark_unknown(q);
        return;
    }
    if (!app_fence) ++q.fenceless_since_wait;
    if (q.activity == QueueActivity::Unknown) {  // until the driver's next idle wait
        if (own) q.own_pending.push_back(fence);
        return;
    }
    forget_app_fence(q);
    if (!fence) {
        q.activity = QueueActivity::Busy;
        return;
    }
    if (own) q.own_pending.push_back(fence);
    else app_fences_[fence] = &q;
    q.last_fence = fence;
    q.last_is_own = own;
    q.activity = QueueActivity::Pending;
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
    q.activity = QueueActivity::Pending;
    return true;
}

void IdleTracker::mark_unknown(QueueIdle& q) {
    forget_app_fence(q);
    q.activity = QueueActivity::Unknown;
}

void IdleTracker::mark_idle(QueueIdle& q) {
    forget_app_fence(q);
    q.activity = QueueActivity::Idle;
    // Everything submitted has completed, our fences included.
    q.own_signaled.insert(q.own_signaled.end(), q.own_pending.begin(), q.own_pending.end());
    q.own_pending.clear();
}

QueueActivity IdleTracker::poll(QueueIdle& q, VkResult* error) {
    *error = VK_SUCCESS;
    if (q.activity != QueueActivity::Pending) return q.activity;
    VkResult r = d_.GetFenceStatus(device_, q.last_fence);
    if (r == VK_SUCCESS) {
        mark_idle(q);
        return QueueActivity::Idle;
    }
    if (r != VK_NOT_READY) *error = r;
    return QueueActivity::Pending;
}

void IdleTracker::release_app_fences(uint32_t count, const VkFence* fences) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = app_fences_.find(fences[i]);
        if (it == app_fences_.end()) continue;
        QueueIdle& q = *it->second;
        if (d_.GetFenceStatus(device_, fences[i]) == VK_SUCCESS) mark_idle(q);
        else mark_unknown(q);
    }
}

void IdleTracker::app_fences_signaled(uint32_t count, const VkFence* fences) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = app_fences_.find(fences[i]);
        if (it != app_fences_.end()) mark_idle(*it->second);
    }
}

void IdleTracker::destroy_own_fences(QueueIdle& q) {
    forget_app_fence(q);
    for (auto* list : {&q.own_free, &q.own_signaled})
        for (VkFence f : *list) d_.DestroyFence(device_, f, nullptr);
    for (VkFence f : q.own_pending) d_.DestroyFence(device_, f, nullptr);
    if (stats_)
        stats_->add(Counter::OwnFencesDestroyed, q.own_free.size() + q.own_signaled.size() + q.own_pending.size());
    q.own_free.clear();
    q.own_signaled.clear();
    q.own_pending.clear();
}

}  // namespace slipstream
