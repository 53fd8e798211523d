// Fusion through timeline semaphores: which submissions that wait on or signal semaphores a
// batch can carry, and how.
//
// A batch replays many submissions' work in one command buffer of ours, in submission order,
// with the fuse barrier in front of each (batch_recorder.h): every submission's work is ordered
// after everything before it on the queue. So a wait on a timeline value that earlier work on
// the same queue signals is already met inside the batch, and one on a value the semaphore has
// reached is met outright; such waits are dropped. A wait on anything else (not yet signaled,
// signaled by another queue's pending work or the host later) could hold back work that comes
// after it in the batch, and so deadlock an application whose later work leads to that signal:
// such a submission passes through as before.
//
// Signals ride with the batch: its submission to the driver signals every value the batch's
// submissions asked for, in their order, once all of its work (theirs included) is done (a
// semaphore signaled twice gets its second value in an empty batch after the first: strict
// observers such as the validation layer look for each value's own signal). A signal may come
// later than without the layer, never earlier; everything that could
// observe it first submits what is held (a host wait or counter read, another queue's
// submission that waits, a destroy, an export), as for fences.
//
// Only timeline semaphores that nothing outside the device shares (neither exportable nor
// exported nor imported) are carried; binary semaphores (a signal must pair with one wait) and
// shared ones pass through.
#pragma once

#include "state/object_record.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace slipstream::submit {

struct SemaphoreValue {
    VkSemaphore semaphore;
    uint64_t value;
};

// The waits and signals of a submission whose every semaphore `record(s)` says is a timeline
// nobody outside shares, with their values; false otherwise (a binary, shared or unknown
// semaphore, values missing, a device index other than 0). `Record` is callable as
// std::optional<SemaphoreRecord>(VkSemaphore).
template <typename Record>
bool timeline_uses(const VkSubmitInfo& s, const Record& record, std::vector<SemaphoreValue>& waits,
                   std::vector<SemaphoreValue>& signals);
template <typename Record>
bool timeline_uses(const VkSubmitInfo2& s, const Record& record, std::vector<SemaphoreValue>& waits,
                   std::vector<SemaphoreValue>& signals);

// The application's signals of a batch, in the order its submissions asked for them, put in
// rounds: round r holds each semaphore's (r+1)-th signal. Each round becomes a signal
// operation of its own after the batch's work (round 0 with the work, later rounds in empty
// batches after it), so every value is signaled, in order, and none before the work.
inline std::vector<std::vector<SemaphoreValue>> signal_rounds(const std::vector<SemaphoreValue>& signals) {
    std::vector<std::vector<SemaphoreValue>> rounds;
    for (size_t i = 0; i < signals.size(); ++i) {
        size_t round = 0;  // earlier signals of the same semaphore
        for (size_t j = 0; j < i; ++j) round += signals[j].semaphore == signals[i].semaphore;
        if (rounds.size() <= round) rounds.resize(round + 1);
        rounds[round].push_back(signals[i]);
    }
    return rounds;
}

// Timeline waits the driver already has from submissions that passed through (waits fusion
// could not carry): a batch that takes a signal meeting one goes at once rather than at its
// deadline, since a queue waits for it on the GPU. Few at a time; one mutex, an atomic count.
class AwaitedSemaphores {
public:
    void waited(const std::vector<SemaphoreValue>& waits) {
        if (waits.empty()) return;
        std::lock_guard lock(mutex_);
        for (const SemaphoreValue& w : waits) {
            bool known = false;
            for (SemaphoreValue& a : awaited_)
                if (a.semaphore == w.semaphore) {
                    if (w.value < a.value) a.value = w.value;  // the lowest wait is met first
                    known = true;
                }
            if (!known) awaited_.push_back(w);
        }
        count_.store(uint32_t(awaited_.size()), std::memory_order_release);
    }
    // Whether one of `signals` meets an awaited wait; the waits met are forgotten.
    bool met_by(const std::vector<SemaphoreValue>& signals) {
        if (signals.empty() || count_.load(std::memory_order_acquire) == 0) return false;
        std::lock_guard lock(mutex_);
        bool met = false;
        for (const SemaphoreValue& s : signals)
            for (size_t i = 0; i < awaited_.size();)
                if (awaited_[i].semaphore == s.semaphore && s.value >= awaited_[i].value) {
                    awaited_[i] = awaited_.back();
                    awaited_.pop_back();
                    met = true;
                } else {
                    ++i;
                }
        count_.store(uint32_t(awaited_.size()), std::memory_order_release);
        return met;
    }
    void forget(VkSemaphore semaphore) { met_by({{semaphore, UINT64_MAX}}); }

private:
    std::atomic<uint32_t> count_{0};
    std::mutex mutex_;
    std::vector<SemaphoreValue> awaited_;
};

// --- implementation ---

template <typename Record>
bool carried_semaphore(VkSemaphore s, const Record& record) {
    const std::optional<SemaphoreRecord> r = record(s);
    return r && r->timeline && !r->shared;
}

template <typename Record>
bool timeline_uses(const VkSubmitInfo& s, const Record& record, std::vector<SemaphoreValue>& waits,
                   std::vector<SemaphoreValue>& signals) {
    const VkTimelineSemaphoreSubmitInfo* values = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(s.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
            values = reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(p);
    if (!values) return false;  // only binary semaphores go without values
    if (s.waitSemaphoreCount && (values->waitSemaphoreValueCount != s.waitSemaphoreCount || !values->pWaitSemaphoreValues))
        return false;
    if (s.signalSemaphoreCount &&
        (values->signalSemaphoreValueCount != s.signalSemaphoreCount || !values->pSignalSemaphoreValues))
        return false;
    for (uint32_t i = 0; i < s.waitSemaphoreCount; ++i) {
        if (!carried_semaphore(s.pWaitSemaphores[i], record)) return false;
        waits.push_back({s.pWaitSemaphores[i], values->pWaitSemaphoreValues[i]});
    }
    for (uint32_t i = 0; i < s.signalSemaphoreCount; ++i) {
        if (!carried_semaphore(s.pSignalSemaphores[i], record)) return false;
        signals.push_back({s.pSignalSemaphores[i], values->pSignalSemaphoreValues[i]});
    }
    return true;
}

template <typename Record>
bool timeline_uses(const VkSubmitInfo2& s, const Record& record, std::vector<SemaphoreValue>& waits,
                   std::vector<SemaphoreValue>& signals) {
    auto add = [&](uint32_t n, const VkSemaphoreSubmitInfo* infos, std::vector<SemaphoreValue>& out) {
        for (uint32_t i = 0; i < n; ++i) {
            const VkSemaphoreSubmitInfo& info = infos[i];
            if (info.pNext || info.deviceIndex != 0 || !carried_semaphore(info.semaphore, record)) return false;
            out.push_back({info.semaphore, info.value});
        }
        return true;
    };
    return add(s.waitSemaphoreInfoCount, s.pWaitSemaphoreInfos, waits) &&
           add(s.signalSemaphoreInfoCount, s.pSignalSemaphoreInfos, signals);
}

}  // namespace slipstream::submit
