#include "objects/zero_fill.h"

namespace slipstream::objects {

void PendingFills::owe(const Fill& fill) {
    std::lock_guard lock(mutex_);
    if (owed_seq_.count(fill.memory)) return;
    const uint64_t seq = next_seq_++;
    owed_[seq] = fill;
    owed_seq_[fill.memory] = seq;
    update_active_locked();
}

bool PendingFills::forgive(VkDeviceMemory memory) {
    std::lock_guard lock(mutex_);
    auto it = owed_seq_.find(memory);
    if (it == owed_seq_.end()) return false;
    owed_.erase(it->second);
    owed_seq_.erase(it);
    update_active_locked();
    return true;
}

bool PendingFills::owes(VkDeviceMemory memory) const {
    std::lock_guard lock(mutex_);
    return owed_seq_.count(memory) != 0;
}

std::vector<PendingFills::Fill> PendingFills::take() {
    std::lock_guard lock(mutex_);
    std::vector<Fill> out;
    out.reserve(owed_.size());
    for (const auto& [seq, fill] : owed_) out.push_back(fill);
    owed_.clear();
    owed_seq_.clear();
    update_active_locked();
    return out;
}

void PendingFills::submitted(QueueId queue, uint64_t value, const std::vector<Fill>& fills) {
    std::lock_guard lock(mutex_);
    QueueFills& q = queues_[queue];
    if (value > q.submitted) q.submitted = value;
    for (const Fill& f : fills) filled_[f.memory] = Ticket{queue, value};
    update_active_locked();
}

void PendingFills::failed(const std::vector<Fill>& fills) {
    std::lock_guard lock(mutex_);
    // Ahead of anything owed since (they were owed first).
    uint64_t seq = owed_.empty() ? next_seq_ : owed_.begin()->first;
    for (auto it = fills.rbegin(); it != fills.rend(); ++it) {
        if (owed_seq_.count(it->memory)) continue;
        --seq;  // (wraps below 0 only after 2^64 fills)
        owed_[seq] = *it;
        owed_seq_[it->memory] = seq;
    }
    update_active_locked();
}

std::vector<PendingFills::Wait> PendingFills::waits_for(QueueId queue) const {
    std::lock_guard lock(mutex_);
    std::vector<Wait> out;
    auto self = queues_.find(queue);
    for (const auto& [id, q] : queues_) {
        if (id == queue || q.submitted <= q.completed) continue;
        uint64_t done = 0;
        if (self != queues_.end()) {
            auto w = self->second.waited.find(id);
            if (w != self->second.waited.end()) done = w->second;
        }
        if (q.submitted > done) out.push_back(Wait{id, q.submitted});
    }
    return out;
}

void PendingFills::waited(QueueId queue, const Wait& wait) {
    std::lock_guard lock(mutex_);
    uint64_t& v = queues_[queue].waited[wait.queue];
    if (wait.value > v) v = wait.value;
}

void PendingFills::completed(QueueId queue, uint64_t value) {
    std::lock_guard lock(mutex_);
    QueueFills& q = queues_[queue];
    if (value > q.completed) q.completed = value;
    // Fills known done need no ticket any more.
    for (auto it = filled_.begin(); it != filled_.end();) {
        if (it->second.queue == queue && it->second.value <= q.completed) it = filled_.erase(it);
        else ++it;
    }
    update_active_locked();
}

std::vector<PendingFills::Wait> PendingFills::unfinished() const {
    std::lock_guard lock(mutex_);
    std::vector<Wait> out;
    for (const auto& [id, q] : queues_)
        if (q.submitted > q.completed) out.push_back(Wait{id, q.submitted});
    return out;
}

std::optional<PendingFills::Ticket> PendingFills::release(VkDeviceMemory memory) {
    std::lock_guard lock(mutex_);
    if (auto it = owed_seq_.find(memory); it != owed_seq_.end()) {
        owed_.erase(it->second);
        owed_seq_.erase(it);
    }
    std::optional<Ticket> out;
    if (auto it = filled_.find(memory); it != filled_.end()) {
        const QueueFills& q = queues_[it->second.queue];
        if (it->second.value > q.completed) out = it->second;
        filled_.erase(it);
    }
    update_active_locked();
    return out;
}

size_t PendingFills::owed() const {
    std::lock_guard lock(mutex_);
    return owed_.size();
}

void PendingFills::update_active_locked() {
    bool any = !owed_.empty();
    for (const auto& [id, q] : queues_) any = any || q.submitted > q.completed;
    active_.store(any, std::memory_order_release);
}

}  // namespace slipstream::objects
