#include "objects/timeline_pool.h"

namespace slipstream::objects {

uint64_t TimelineOffsets::find(VkSemaphore semaphore) const {
    std::shared_lock lock(mutex_);
    auto it = map_.find(semaphore);
    return it == map_.end() ? 0 : it->second;
}

void TimelineOffsets::set(VkSemaphore semaphore, uint64_t offset) {
    if (!offset && !any()) return;  // every destroy forgets: no lock while none has an offset
    std::unique_lock lock(mutex_);
    if (offset) map_[semaphore] = offset;
    else map_.erase(semaphore);
    count_.store(uint32_t(map_.size()), std::memory_order_release);
}

size_t TimelineOffsets::size() const {
    std::shared_lock lock(mutex_);
    return map_.size();
}

TimelineReuse plan_timeline_reuse(uint64_t counter, uint64_t initial) {
    TimelineReuse r;
    if (counter >= kTimelineReuseLimit) return r;
    if (counter >= initial) {
        r.usable = true;
        r.offset = counter - initial;
    } else if (initial - counter <= kTimelineHostStep) {
        // Cheaper than an offset: a host signal makes the driver's values the application's.
        r.usable = true;
        r.signal_to = initial;
    }
    return r;
}

TimelinePool::Grant TimelinePool::take(uint64_t initial) {
    std::lock_guard lock(mutex_);
    Grant g;
    for (size_t i = kept_.size(); i-- > 0;) {
        const TimelineReuse reuse = plan_timeline_reuse(kept_[i].counter, initial);
        if (!reuse.usable) continue;
        g.semaphore = kept_[i].semaphore;
        g.counter = kept_[i].counter;
        g.reuse = reuse;
        kept_.erase(kept_.begin() + ptrdiff_t(i));
        break;
    }
    return g;
}

void TimelinePool::created(VkSemaphore semaphore, uint64_t offset) {
    {
        std::lock_guard lock(mutex_);
        live_.insert(semaphore);
        live_count_.store(live_.size(), std::memory_order_relaxed);
    }
    offsets_.set(semaphore, offset);
}

void TimelinePool::not_poolable(VkSemaphore semaphore) {
    if (!following()) return;
    std::lock_guard lock(mutex_);
    live_.erase(semaphore);
    live_count_.store(live_.size(), std::memory_order_relaxed);
}

void TimelinePool::payload_imported(VkSemaphore semaphore) {
    not_poolable(semaphore);
    offsets_.set(semaphore, 0);
}

void TimelinePool::forget_live() {
    std::lock_guard lock(mutex_);
    live_.clear();
    live_count_.store(0, std::memory_order_relaxed);
}

bool TimelinePool::wants(VkSemaphore semaphore, bool* not_worth) {
    offsets_.set(semaphore, 0);
    if (!following()) return false;
    std::lock_guard lock(mutex_);
    if (live_.erase(semaphore) == 0) return false;
    live_count_.store(live_.size(), std::memory_order_relaxed);
    if (!cost_.pays()) {
        if (not_worth) *not_worth = true;
        return false;
    }
    return kept_.size() < bound_;
}

bool TimelinePool::keep(VkSemaphore semaphore, uint64_t counter) {
    if (counter >= kTimelineReuseLimit) return false;
    std::lock_guard lock(mutex_);
    if (kept_.size() >= bound_) return false;
    kept_.push_back({semaphore, counter});
    return true;
}

std::vector<VkSemaphore> TimelinePool::drain() {
    std::lock_guard lock(mutex_);
    std::vector<VkSemaphore> all;
    all.reserve(kept_.size());
    for (const Kept& k : kept_) all.push_back(k.semaphore);
    kept_.clear();
    live_.clear();
    live_count_.store(0, std::memory_order_relaxed);
    return all;
}

size_t TimelinePool::pooled() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
}

}  // namespace slipstream::objects
