#include "objects/zero_fill.h"

#include <algorithm>

namespace slipstream::objects {

void PendingFills::set_buffer(VkDeviceMemory memory, VkBuffer buffer) {
    std::lock_guard lock(mutex_);
    buffers_[memory] = buffer;
}

VkBuffer PendingFills::buffer_of(VkDeviceMemory memory) const {
    std::lock_guard lock(mutex_);
    auto it = buffers_.find(memory);
    return it == buffers_.end() ? VK_NULL_HANDLE : it->second;
}

bool PendingFills::owe(VkDeviceMemory memory, VkDeviceSize size) {
    std::lock_guard lock(mutex_);
    auto b = buffers_.find(memory);
    if (b == buffers_.end()) return false;
    if (!owed_.count(memory)) {
        const Owed owed{next_seq_++, b->second, size};
        if (spare_.empty()) {
            owed_.emplace(memory, owed);
        } else {
            OwedMap::node_type node = std::move(spare_.back());
            spare_.pop_back();
            node.key() = memory;
            node.mapped() = owed;
            owed_.insert(std::move(node));
        }
    }
    update_active_locked();
    return true;
}

bool PendingFills::forgive(VkDeviceMemory memory) {
    std::lock_guard lock(mutex_);
    auto it = owed_.find(memory);
    if (it == owed_.end()) return false;
    if (spare_.size() < kSpareNodes) spare_.push_back(owed_.extract(it));
    else owed_.erase(it);
    update_active_locked();
    return true;
}

bool PendingFills::owes(VkDeviceMemory memory) const {
    std::lock_guard lock(mutex_);
    return owed_.count(memory) != 0;
}

std::vector<PendingFills::Fill> PendingFills::take() {
    std::vector<std::pair<uint64_t, Fill>> order;
    {
        std::lock_guard lock(mutex_);
        order.reserve(owed_.size());
        for (const auto& [memory, o] : owed_) order.push_back({o.seq, Fill{memory, o.buffer, o.size}});
        owed_.clear();
        update_active_locked();
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Fill> out;
    out.reserve(order.size());
    for (const auto& [seq, fill] : order) out.push_back(fill);
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
    uint64_t seq = next_seq_;
    for (const auto& [memory, o] : owed_) seq = std::min(seq, o.seq);
    for (auto it = fills.rbegin(); it != fills.rend(); ++it) {
        if (owed_.count(it->memory)) continue;
        --seq;  // (wraps below 0 only after 2^64 fills)
        owed_.emplace(it->memory, Owed{seq, it->buffer, it->size});
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

std::optional<PendingFills::Ticket> PendingFills::release(VkDeviceMemory memory, VkBuffer* buffer) {
    std::lock_guard lock(mutex_);
    owed_.erase(memory);
    if (buffer) *buffer = VK_NULL_HANDLE;
    if (auto b = buffers_.find(memory); b != buffers_.end()) {
        if (buffer) *buffer = b->second;
        buffers_.erase(b);
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

std::vector<VkBuffer> PendingFills::drain_buffers() {
    std::lock_guard lock(mutex_);
    std::vector<VkBuffer> out;
    out.reserve(buffers_.size());
    for (const auto& [memory, buffer] : buffers_) out.push_back(buffer);
    buffers_.clear();
    owed_.clear();
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
