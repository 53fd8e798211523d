#include "objects/fence_pool.h"

namespace slipstream::objects {

FencePool::Grant FencePool::take(bool signaled) {
    std::lock_guard lock(mutex_);
    Grant g;
    if (!signaled && !unsignaled_.empty()) {
        g.fence = unsignaled_.back();
        unsignaled_.pop_back();
    } else if (!signaled_.empty()) {
        g.fence = signaled_.back();
        signaled_.pop_back();
        g.reset = !signaled;
    }
    return g;
}

std::vector<VkFence> FencePool::take_quarantined(size_t max) {
    std::lock_guard lock(mutex_);
    std::vector<VkFence> out;
    while (out.size() < max && !quarantine_.empty()) {
        out.push_back(quarantine_.front());
        quarantine_.pop_front();
    }
    checking_ += out.size();
    return out;
}

void FencePool::checked(VkFence fence, bool signaled) {
    std::lock_guard lock(mutex_);
    --checking_;
    // Still unsignaled: to the back, so that the next look starts with others.
    if (signaled) signaled_.push_back(fence);
    else quarantine_.push_back(fence);
}

void FencePool::created(VkFence fence) {
    const uint64_t now = given_.load(std::memory_order_acquire);
    std::lock_guard lock(mutex_);
    live_[fence] = now;
    live_count_.store(live_.size(), std::memory_order_relaxed);
}

void FencePool::not_poolable(VkFence fence) {
    if (!following()) return;
    std::lock_guard lock(mutex_);
    live_.erase(fence);
    live_count_.store(live_.size(), std::memory_order_relaxed);
}

void FencePool::forget_live() {
    std::lock_guard lock(mutex_);
    live_.clear();
    live_count_.store(0, std::memory_order_relaxed);
}

bool FencePool::wants(VkFence fence, uint64_t* created_at, bool* not_worth) {
    if (!following()) return false;
    std::lock_guard lock(mutex_);
    auto it = live_.find(fence);
    if (it == live_.end()) return false;
    *created_at = it->second;
    live_.erase(it);
    live_count_.store(live_.size(), std::memory_order_relaxed);
    if (!cost_.pays()) {
        if (not_worth) *not_worth = true;
        return false;
    }
    return pooled_locked() < bound_;
}

FenceAtDestroy FencePool::unsignaled_state(uint64_t created_at, bool answered) const {
    // Nothing was given to the driver to signal on the whole device since it was created.
    if (answered || given_.load(std::memory_order_acquire) == created_at) return FenceAtDestroy::Unsubmitted;
    return FenceAtDestroy::MaybePending;
}

FenceKept FencePool::keep(VkFence fence, FenceAtDestroy state) {
    std::lock_guard lock(mutex_);
    if (state == FenceAtDestroy::Failed || pooled_locked() >= bound_) return FenceKept::No;
    switch (state) {
        case FenceAtDestroy::Signaled:
            signaled_.push_back(fence);
            return FenceKept::Signaled;
        case FenceAtDestroy::Unsubmitted:
            unsignaled_.push_back(fence);
            return FenceKept::Unsignaled;
        case FenceAtDestroy::MaybePending:
            if (quarantine_.size() + checking_ >= quarantine_bound_) return FenceKept::No;
            quarantine_.push_back(fence);
            return FenceKept::Quarantined;
        case FenceAtDestroy::Failed:
            break;
    }
    return FenceKept::No;
}

std::vector<VkFence> FencePool::drain() {
    std::lock_guard lock(mutex_);
    std::vector<VkFence> all(unsignaled_.begin(), unsignaled_.end());
    all.insert(all.end(), signaled_.begin(), signaled_.end());
    all.insert(all.end(), quarantine_.begin(), quarantine_.end());
    unsignaled_.clear();
    signaled_.clear();
    quarantine_.clear();
    live_.clear();
    live_count_.store(0, std::memory_order_relaxed);
    return all;
}

size_t FencePool::pooled() const {
    std::lock_guard lock(mutex_);
    return pooled_locked();
}

size_t FencePool::in_list(FenceKept list) const {
    std::lock_guard lock(mutex_);
    switch (list) {
        case FenceKept::Unsignaled: return unsignaled_.size();
        case FenceKept::Signaled: return signaled_.size();
        case FenceKept::Quarantined: return quarantine_.size();
        case FenceKept::No: break;
    }
    return 0;
}

}  // namespace slipstream::objects
