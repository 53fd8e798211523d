#include "submit/batch_queue.h"

#include "capture/command_capture.h"
#include "state/object_state.h"
#include "submit/device_fusion.h"

namespace slipstream::submit {

void BatchQueue::open_at(uint64_t now, bool after_wait) {
    open_.opened_ns = now;
    open_.after_wait = after_wait;
    pending_.fetch_add(1, std::memory_order_acq_rel);
    d_.open_batches.fetch_add(1, std::memory_order_seq_cst);  // (DeviceFusion::watching_)
}

void BatchQueue::add(const CommandBufferState& cb) {
    cb.in_batches.fetch_add(1, std::memory_order_acq_rel);
    open_.cbs.push_back(&cb);
    open_.ops += cb.operations();
    open_.records += cb.capture->size();
    if (cb.lazy) ++open_.lazy;
}

void BatchQueue::count_holder(bool held_before) {
    const bool holds = open_.holds_semaphores();
    if (holds == held_before) return;
    const int delta = holds ? 1 : -1;
    signal_batches_.fetch_add(uint32_t(delta), std::memory_order_acq_rel);
    d_.held_signal_batches.fetch_add(uint32_t(delta), std::memory_order_acq_rel);
}

void BatchQueue::add_signals(const std::vector<SemaphoreValue>& signals) {
    if (signals.empty()) return;
    const bool before = open_.holds_semaphores();
    open_.signals.insert(open_.signals.end(), signals.begin(), signals.end());
    count_holder(before);
}

void BatchQueue::add_reached_waits(const std::vector<SemaphoreValue>& waits) {
    if (waits.empty()) return;
    const bool before = open_.holds_semaphores();
    open_.reached_waits.insert(open_.reached_waits.end(), waits.begin(), waits.end());
    count_holder(before);
}

void BatchQueue::add_waits(const std::vector<SemaphoreValue>& waits) {
    if (waits.empty()) return;
    const bool before = open_.holds_semaphores();
    open_.waits.insert(open_.waits.end(), waits.begin(), waits.end());
    count_holder(before);
}

bool BatchQueue::signals_binary(VkSemaphore semaphore) const {
    for (const SemaphoreValue& s : open_.signals)
        if (s.binary && s.semaphore == semaphore) return true;
    return false;
}

void BatchQueue::pair_binary(VkSemaphore semaphore) {
    const bool before = open_.holds_semaphores();
    for (size_t i = open_.signals.size(); i-- > 0;)
        if (open_.signals[i].binary && open_.signals[i].semaphore == semaphore) {
            open_.signals.erase(open_.signals.begin() + std::ptrdiff_t(i));
            break;
        }
    count_holder(before);
}

bool BatchQueue::waited_by_open(const std::vector<SemaphoreValue>& signals) const {
    for (const SemaphoreValue& w : open_.waits) {
        if (w.binary) continue;  // its signal came before it: a later one is the next use's
        for (const SemaphoreValue& s : signals)
            if (meets(s, w)) return true;
    }
    return false;
}

bool BatchQueue::seal() {
    if (sealed_.size() >= 2) return false;
    sealed_.push_back(std::move(open_));
    open_ = HeldBatch{};
    return true;
}

bool BatchQueue::holds_any(uint32_t count, const VkFence* fences) const {
    uint64_t asked = 0;
    for (uint32_t i = 0; i < count; ++i) asked |= fence_bit(fences[i]);
    auto in = [&](const HeldBatch& b) {
        if (!(b.fence_bits & asked)) return false;  // (a wait on a fence already submitted: no scan)
        for (VkFence held : b.fences)
            for (uint32_t i = 0; i < count; ++i)
                if (fences[i] == held) return true;
        return false;
    };
    if (in(open_) || (recording_ && in(*recording_))) return true;
    for (const HeldBatch& b : sealed_)
        if (in(b)) return true;
    return false;
}

bool BatchQueue::signals_any(uint32_t count, const VkSemaphore* semaphores) const {
    auto in = [&](const HeldBatch& b) {
        for (const SemaphoreValue& held : b.signals)
            for (uint32_t i = 0; i < count; ++i)
                if (semaphores[i] == held.semaphore) return true;
        return false;
    };
    if (in(open_) || (recording_ && in(*recording_))) return true;
    for (const HeldBatch& b : sealed_)
        if (in(b)) return true;
    return false;
}

bool BatchQueue::waits_any(uint32_t count, const VkSemaphore* semaphores) const {
    auto in = [&](const std::vector<SemaphoreValue>& list) {
        for (const SemaphoreValue& held : list)
            for (uint32_t i = 0; i < count; ++i)
                if (semaphores[i] == held.semaphore) return true;
        return false;
    };
    auto batch = [&](const HeldBatch& b) { return in(b.waits) || in(b.reached_waits); };
    if (batch(open_) || (recording_ && batch(*recording_))) return true;
    for (const HeldBatch& b : sealed_)
        if (batch(b)) return true;
    return false;
}

HeldBatch BatchQueue::take_sealed() {
    HeldBatch b = std::move(sealed_.front());
    sealed_.pop_front();
    return b;
}

HeldBatch BatchQueue::take_open() {
    HeldBatch b = std::move(open_);
    open_ = HeldBatch{};
    return b;
}

void BatchQueue::done_with(const HeldBatch& b) {
    pending_.fetch_sub(1, std::memory_order_acq_rel);
    d_.open_batches.fetch_sub(1, std::memory_order_acq_rel);
    if (b.holds_semaphores()) {
        signal_batches_.fetch_sub(1, std::memory_order_acq_rel);
        d_.held_signal_batches.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void BatchQueue::failed(const HeldBatch& b, VkResult error) {
    if (d_.fusion)
        for (VkFence fence : b.fences) d_.fusion->fences().fail(fence, error);
    done_with(b);
}

VkResult BatchQueue::abandon_all() {
    // What is held never reaches the driver, and waits on its fences return the loss.
    while (!sealed_.empty()) {
        unhold(sealed_.front());
        failed(sealed_.front(), VK_ERROR_DEVICE_LOST);
        sealed_.pop_front();
    }
    if (!open_.cbs.empty()) {
        unhold(open_);
        failed(open_, VK_ERROR_DEVICE_LOST);
        open_ = HeldBatch{};
    }
    return VK_ERROR_DEVICE_LOST;
}

void unhold(const HeldBatch& b) {
    for (const CommandBufferState* state : b.cbs) state->in_batches.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace slipstream::submit
