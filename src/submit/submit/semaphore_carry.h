// Fusion through semaphores: which submissions that wait on or signal semaphores a batch can
// carry, and how.
//
// A batch replays many submissions' work in one command buffer of ours, in submission order,
// with the fuse barrier in front of each (batch_recorder.h): every submission's work is ordered
// after everything before it on the queue.
//
// Waits. A wait on a timeline value that earlier work on the same queue signals is already met
// inside the batch, and one on a value the semaphore has reached is met outright: such waits
// are dropped (the reached ones still named by the batch's submission,
// HeldBatch::reached_waits, so that a layer below that pairs waits with signals sees them). A
// binary semaphore's wait must consume its signal: where that signal rides in the open batch
// (or earlier in the same call), signal and wait are both dropped (the pair leaves the
// semaphore unsignaled, as it would be after them, and nothing outside the queue can see a
// binary semaphore in between). Any other wait (a value not yet reached, a binary signal
// already with the driver: another queue's, an image acquire's) is carried: the submission
// starts a new batch (the open one goes first), whose submission waits as it asked, with its
// stage masks. Later submissions may join that batch: their work then waits too, as a queue
// stalls at a semaphore wait on real hardware anyway, and every signal or fence after the wait
// already waited for the waiting work. A later submission that signals what the open batch
// waits for (a wait-before-signal on one queue) starts a batch of its own instead. (A binary
// wait's signal always came before it: a later signal of that semaphore is its next use, and
// meets no wait the batch carries.)
//
// Signals ride with the batch: its submission to the driver signals every value the batch's
// submissions asked for, in their order, once all of its work (theirs included) is done (a
// semaphore signaled twice gets its second value in an empty batch after the first: strict
// observers such as the validation layer look for each value's own signal). A signal may come
// later than without the layer, never earlier; everything that could observe it first submits
// what is held (a host wait or counter read, another queue's submission that waits on it or
// signals a binary semaphore a held batch waits on, a present, a destroy, an export), as for
// fences.
//
// Only semaphores that nothing outside the device shares (neither exportable nor exported nor
// imported) are carried; shared ones pass through.
#pragma once

#include "state/object_record.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace slipstream::submit {

// One wait or signal: a timeline value, or a binary semaphore (value 0). A wait's stages are
// those that wait for it (sync2 flags; a VkSubmitInfo's are widened).
struct SemaphoreValue {
    VkSemaphore semaphore;
    uint64_t value;
    bool binary = false;
    VkPipelineStageFlags2 stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
};

// The waits and signals of a submission whose every semaphore `record(s)` knows and says
// nobody outside shares, with their values and wait stages; false otherwise (a shared or
// unknown semaphore, timeline values missing, a device index other than 0). `Record` is
// callable as std::optional<SemaphoreRecord>(VkSemaphore).
template <typename Record>
bool semaphore_uses(const VkSubmitInfo& s, const Record& record, std::vector<SemaphoreValue>& waits,
                    std::vector<SemaphoreValue>& signals);
template <typename Record>
bool semaphore_uses(const VkSubmitInfo2& s, const Record& record, std::vector<SemaphoreValue>& waits,
                    std::vector<SemaphoreValue>& signals);

// A sync2 wait stage mask as a VkSubmitInfo's: flags beyond 32 bits widen to ALL_COMMANDS, and
// NONE (nothing waits) is TOP_OF_PIPE, which a VkSubmitInfo's wait means the same by.
inline VkPipelineStageFlags sync1_stages(VkPipelineStageFlags2 stages) {
    if (stages >> 32) return VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    return stages ? VkPipelineStageFlags(stages) : VkPipelineStageFlags(VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
}

// Whether `signal` meets `wait` (the same semaphore; a value as high, or binary).
inline bool meets(const SemaphoreValue& signal, const SemaphoreValue& wait) {
    return signal.semaphore == wait.semaphore && (wait.binary || signal.value >= wait.value);
}

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

// Timeline waits the driver already has (from submissions that passed through or went direct)
// or that a held batch carries: a batch that takes a signal meeting one goes at once rather
// than at its deadline, since a queue waits for it. (A binary wait's signal was submitted
// before it, so no later signal meets it: binary waits are not kept.) Few at a time; one
// mutex, an atomic count.
class AwaitedSemaphores {
public:
    void waited(const std::vector<SemaphoreValue>& waits) {
        bool any = false;
        for (const SemaphoreValue& w : waits) any = any || !w.binary;
        if (!any) return;
        std::lock_guard lock(mutex_);
        for (const SemaphoreValue& w : waits) {
            if (w.binary) continue;
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
bool carried_semaphore(VkSemaphore s, const Record& record, bool* binary) {
    const std::optional<SemaphoreRecord> r = record(s);
    if (!r || r->shared) return false;
    *binary = !r->timeline;
    return true;
}

template <typename Record>
bool semaphore_uses(const VkSubmitInfo& s, const Record& record, std::vector<SemaphoreValue>& waits,
                    std::vector<SemaphoreValue>& signals) {
    const VkTimelineSemaphoreSubmitInfo* values = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(s.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
            values = reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(p);
    // Values must match the semaphores where a timeline needs them (binary-only submissions
    // may leave them out).
    const uint64_t* wait_values = values && values->waitSemaphoreValueCount == s.waitSemaphoreCount
                                      ? values->pWaitSemaphoreValues : nullptr;
    const uint64_t* signal_values = values && values->signalSemaphoreValueCount == s.signalSemaphoreCount
                                        ? values->pSignalSemaphoreValues : nullptr;
    for (uint32_t i = 0; i < s.waitSemaphoreCount; ++i) {
        bool binary = false;
        if (!carried_semaphore(s.pWaitSemaphores[i], record, &binary) || (!binary && !wait_values)) return false;
        const VkPipelineStageFlags2 stages = s.pWaitDstStageMask ? s.pWaitDstStageMask[i] : 0;
        waits.push_back({s.pWaitSemaphores[i], binary ? 0 : wait_values[i], binary, stages});
    }
    for (uint32_t i = 0; i < s.signalSemaphoreCount; ++i) {
        bool binary = false;
        if (!carried_semaphore(s.pSignalSemaphores[i], record, &binary) || (!binary && !signal_values)) return false;
        signals.push_back({s.pSignalSemaphores[i], binary ? 0 : signal_values[i], binary});
    }
    return true;
}

template <typename Record>
bool semaphore_uses(const VkSubmitInfo2& s, const Record& record, std::vector<SemaphoreValue>& waits,
                    std::vector<SemaphoreValue>& signals) {
    auto add = [&](uint32_t n, const VkSemaphoreSubmitInfo* infos, std::vector<SemaphoreValue>& out, bool wait) {
        for (uint32_t i = 0; i < n; ++i) {
            const VkSemaphoreSubmitInfo& info = infos[i];
            bool binary = false;
            if (info.pNext || info.deviceIndex != 0 || !carried_semaphore(info.semaphore, record, &binary)) return false;
            out.push_back({info.semaphore, binary ? 0 : info.value, binary,
                           wait ? info.stageMask : VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT});
        }
        return true;
    };
    return add(s.waitSemaphoreInfoCount, s.pWaitSemaphoreInfos, waits, true) &&
           add(s.signalSemaphoreInfoCount, s.pSignalSemaphoreInfos, signals, false);
}

}  // namespace slipstream::submit
