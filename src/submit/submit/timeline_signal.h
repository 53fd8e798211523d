// The signal of a fusing queue's timeline semaphore, added to a submission: every submission
// the layer makes to a fusing queue signals it (QueueTimeline), the application's own
// included where they go to the driver as they are (direct, passed through).
#pragma once

#include "submit/semaphore_carry.h"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace slipstream::submit {

// The queue's timeline signal of `value`, for either submit version (it points into itself).
struct TimelineSignal {
    uint64_t value;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    TimelineSignal(VkSemaphore timeline, uint64_t v) : value(v) {
        values.signalSemaphoreValueCount = 1;
        values.pSignalSemaphoreValues = &value;
        info.semaphore = timeline;
        info.value = v;
        info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    }
    TimelineSignal(const TimelineSignal&) = delete;
    TimelineSignal& operator=(const TimelineSignal&) = delete;
};

// The queue's timeline signal added to the last batch of a submission, with what it points at.
// A VkSubmitInfo's pNext chain may index its semaphores (device group indices, D3D12 fence
// values) or carry timeline values of its own: one with a chain is left as it is (false: the
// caller adds a batch of its own after it, whose signal covers everything before it as well).
struct SignalAdded {
    std::vector<VkSemaphore> semaphores;
    std::vector<uint64_t> values;
    std::vector<VkSemaphoreSubmitInfo> infos;
    VkTimelineSemaphoreSubmitInfo timeline_values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
};

// Makes `s` signal a's semaphores with a's values (its chain: a's timeline values).
inline void signal_from(VkSubmitInfo& s, SignalAdded& a) {
    a.timeline_values.signalSemaphoreValueCount = uint32_t(a.values.size());
    a.timeline_values.pSignalSemaphoreValues = a.values.data();
    s.pNext = &a.timeline_values;
    s.signalSemaphoreCount = uint32_t(a.semaphores.size());
    s.pSignalSemaphores = a.semaphores.data();
}

inline bool add_signal(VkSubmitInfo& s, SignalAdded& a, const TimelineSignal& signal) {
    if (s.pNext) return false;
    if (s.signalSemaphoreCount == 0) {  // the common case (every direct submission): no copies
        s.pNext = &signal.values;
        s.signalSemaphoreCount = 1;
        s.pSignalSemaphores = &signal.info.semaphore;
        return true;
    }
    // Without a chain every semaphore of the batch is binary: their values are ignored, and
    // no wait value is needed.
    a.semaphores.assign(s.pSignalSemaphores, s.pSignalSemaphores + s.signalSemaphoreCount);
    a.semaphores.push_back(signal.info.semaphore);
    a.values.assign(s.signalSemaphoreCount, 0);
    a.values.push_back(signal.value);
    signal_from(s, a);
    return true;
}

inline bool add_signal(VkSubmitInfo2& s, SignalAdded& a, const TimelineSignal& signal) {
    if (s.signalSemaphoreInfoCount == 0) {
        s.signalSemaphoreInfoCount = 1;
        s.pSignalSemaphoreInfos = &signal.info;
        return true;
    }
    a.infos.assign(s.pSignalSemaphoreInfos, s.pSignalSemaphoreInfos + s.signalSemaphoreInfoCount);
    a.infos.push_back(signal.info);
    s.signalSemaphoreInfoCount = uint32_t(a.infos.size());
    s.pSignalSemaphoreInfos = a.infos.data();
    return true;
}

// A submission of our one command buffer `*cb` that signals `signal` (null: signals nothing).
inline VkSubmitInfo submit_of(const VkCommandBuffer* cb, const TimelineSignal* signal) {
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    s.commandBufferCount = 1;
    s.pCommandBuffers = cb;
    if (signal) {
        s.pNext = &signal->values;
        s.signalSemaphoreCount = 1;
        s.pSignalSemaphores = &signal->info.semaphore;
    }
    return s;
}

// The batches of one vkQueueSubmit of our `count` command buffers (0: none) that waits for the
// semaphores a batch carries (`waits`, then `reached`, those met already, in the first batch,
// with their stages), signals the
// application's semaphores it carries (`also`, signal_rounds: the first round with the work,
// each later one in an empty batch after it) and, in the last batch, the queue's timeline
// (`signal`; null: not), so that the timeline says the application's signals are done too.
// `infos()` and `count()` are what to submit; it points into itself.
class BatchSubmission {
public:
    BatchSubmission(uint32_t count, const VkCommandBuffer* cbs, const TimelineSignal* signal,
                    const std::vector<SemaphoreValue>& also, const std::vector<SemaphoreValue>& waits = {},
                    const std::vector<SemaphoreValue>& reached = {}) {
        std::vector<std::vector<SemaphoreValue>> rounds = signal_rounds(also);
        if (rounds.empty()) rounds.resize(1);
        const size_t n = rounds.size();
        semaphores_.resize(n);
        values_.resize(n);
        chains_.assign(n, VkTimelineSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO});
        infos_.assign(n, VkSubmitInfo{VK_STRUCTURE_TYPE_SUBMIT_INFO});
        infos_[0].commandBufferCount = count;
        infos_[0].pCommandBuffers = cbs;
        for (size_t r = 0; r < n; ++r) {
            for (const SemaphoreValue& v : rounds[r]) {
                semaphores_[r].push_back(v.semaphore);
                values_[r].push_back(v.value);
            }
            if (signal && r + 1 == n) {
                semaphores_[r].push_back(signal->info.semaphore);
                values_[r].push_back(signal->value);
            }
            if (semaphores_[r].empty()) continue;
            chains_[r].signalSemaphoreValueCount = uint32_t(values_[r].size());
            chains_[r].pSignalSemaphoreValues = values_[r].data();
            infos_[r].pNext = &chains_[r];
            infos_[r].signalSemaphoreCount = uint32_t(semaphores_[r].size());
            infos_[r].pSignalSemaphores = semaphores_[r].data();
        }
        add_waits(waits);
        add_waits(reached);
    }
    BatchSubmission(const BatchSubmission&) = delete;
    BatchSubmission& operator=(const BatchSubmission&) = delete;
    uint32_t count() const { return uint32_t(infos_.size()); }
    const VkSubmitInfo* infos() const { return infos_.data(); }

private:
    void add_waits(const std::vector<SemaphoreValue>& waits) {
        if (waits.empty()) return;
        for (const SemaphoreValue& w : waits) {
            wait_semaphores_.push_back(w.semaphore);
            wait_values_.push_back(w.value);
            wait_stages_.push_back(sync1_stages(w.stages));
        }
        chains_[0].waitSemaphoreValueCount = uint32_t(wait_values_.size());
        chains_[0].pWaitSemaphoreValues = wait_values_.data();
        infos_[0].pNext = &chains_[0];
        infos_[0].waitSemaphoreCount = uint32_t(wait_semaphores_.size());
        infos_[0].pWaitSemaphores = wait_semaphores_.data();
        infos_[0].pWaitDstStageMask = wait_stages_.data();
    }

    std::vector<VkSemaphore> wait_semaphores_;
    std::vector<uint64_t> wait_values_;
    std::vector<VkPipelineStageFlags> wait_stages_;
    std::vector<std::vector<VkSemaphore>> semaphores_;
    std::vector<std::vector<uint64_t>> values_;
    std::vector<VkTimelineSemaphoreSubmitInfo> chains_;
    std::vector<VkSubmitInfo> infos_;
};

// A submission of nothing that signals the queue's timeline once all before it completed.
template <typename Info>
void timeline_only(Info& s, const TimelineSignal& signal) {
    s = {std::is_same_v<Info, VkSubmitInfo> ? VK_STRUCTURE_TYPE_SUBMIT_INFO : VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    SignalAdded none;  // (an empty batch: add_signal copies nothing)
    add_signal(s, none, signal);
}

}  // namespace slipstream::submit
