// Wait-before-signal over fewer driver queues (the extra-queues test layer): a submission whose
// wait has no signal submitted yet would, on a driver queue shared by presented queues, block
// the work queued after it there, the signal included. So such a submission is held (copied)
// until every wait it names has its signal submitted (a timeline value signaled by a submission
// that went to the driver or by the host; a binary semaphore with a signal no wait took), and
// goes to the driver then, in its presented queue's order. Header-only; the layer's device
// mutex guards everything here.
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace slipstream::test_layer {

struct SemaphoreUse {
    VkSemaphore semaphore;
    uint64_t value;  // timeline value (ignored for binary semaphores)
};

// What has been submitted to signal each semaphore the device created.
class SignalBook {
public:
    void created(VkSemaphore s, bool timeline, uint64_t initial) { book_[s] = {timeline, initial, 0}; }
    void destroyed(VkSemaphore s) { book_.erase(s); }
    void host_signaled(VkSemaphore s, uint64_t value) {
        auto it = book_.find(s);
        if (it != book_.end()) it->second.submitted = std::max(it->second.submitted, value);
    }
    // Whether every wait has its signal submitted (a semaphore this layer did not see created:
    // assumed so). Payload imports (vkImportSemaphoreFdKHR and the like) are not followed: a
    // wait on an imported binary semaphore would be held for good; the tests over this layer
    // import none.
    bool satisfiable(const std::vector<SemaphoreUse>& waits) const {
        std::unordered_map<VkSemaphore, uint32_t> binary_needed;
        for (const SemaphoreUse& w : waits) {
            auto it = book_.find(w.semaphore);
            if (it == book_.end()) continue;
            if (it->second.timeline ? it->second.submitted < w.value
                                    : ++binary_needed[w.semaphore] > it->second.binary_signals)
                return false;
        }
        return true;
    }
    // A submission went to the driver: its binary waits took their signals, its signals are submitted.
    void forwarded(const std::vector<SemaphoreUse>& waits, const std::vector<SemaphoreUse>& signals) {
        for (const SemaphoreUse& w : waits) {
            auto it = book_.find(w.semaphore);
            if (it != book_.end() && !it->second.timeline && it->second.binary_signals) --it->second.binary_signals;
        }
        for (const SemaphoreUse& s : signals) {
            auto it = book_.find(s.semaphore);
            if (it == book_.end()) continue;
            if (it->second.timeline) it->second.submitted = std::max(it->second.submitted, s.value);
            else ++it->second.binary_signals;
        }
    }

private:
    struct Entry {
        bool timeline;
        uint64_t submitted;       // timeline: the highest value a submitted signal or the host set
        uint32_t binary_signals;  // binary: signals submitted that no submitted wait took yet
    };
    std::unordered_map<VkSemaphore, Entry> book_;
};

// One vkQueueSubmit / vkQueueSubmit2 call, copied so that it outlives the application's
// structures: only what the layer knows how to copy (a timeline-values chain on VkSubmitInfo;
// no pNext anywhere on VkSubmitInfo2); `copyable` says whether a call is.
class CopiedSubmit {
public:
    static bool copyable(uint32_t count, const VkSubmitInfo* infos);
    static bool copyable(uint32_t count, const VkSubmitInfo2* infos);
    CopiedSubmit(uint32_t count, const VkSubmitInfo* infos, VkFence fence);
    CopiedSubmit(uint32_t count, const VkSubmitInfo2* infos, VkFence fence, bool khr);

    bool v2 = false, khr = false;
    VkFence fence = VK_NULL_HANDLE;
    std::vector<SemaphoreUse> waits, signals;
    // Version 1: the infos, their arrays and timeline chains, pointing into these.
    std::vector<VkSubmitInfo> infos;
    std::vector<VkTimelineSemaphoreSubmitInfo> timelines;
    std::deque<std::vector<VkSemaphore>> semaphores;
    std::deque<std::vector<uint64_t>> values;
    std::deque<std::vector<VkPipelineStageFlags>> stages;
    std::deque<std::vector<VkCommandBuffer>> cbs;
    // Version 2.
    std::vector<VkSubmitInfo2> infos2;
    std::deque<std::vector<VkSemaphoreSubmitInfo>> semaphore_infos;
    std::deque<std::vector<VkCommandBufferSubmitInfo>> cb_infos;
};

// The semaphores a call waits on and signals, with their timeline values.
void semaphore_uses(uint32_t count, const VkSubmitInfo* infos, std::vector<SemaphoreUse>& waits,
                    std::vector<SemaphoreUse>& signals);
void semaphore_uses(uint32_t count, const VkSubmitInfo2* infos, std::vector<SemaphoreUse>& waits,
                    std::vector<SemaphoreUse>& signals);

// --- implementation ---

inline const VkTimelineSemaphoreSubmitInfo* timeline_values(const VkSubmitInfo& si) {
    for (auto* p = static_cast<const VkBaseInStructure*>(si.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
            return reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(p);
    return nullptr;
}

inline void semaphore_uses(uint32_t count, const VkSubmitInfo* infos, std::vector<SemaphoreUse>& waits,
                           std::vector<SemaphoreUse>& signals) {
    for (uint32_t i = 0; i < count; ++i) {
        const VkSubmitInfo& si = infos[i];
        const VkTimelineSemaphoreSubmitInfo* t = timeline_values(si);
        for (uint32_t w = 0; w < si.waitSemaphoreCount; ++w)
            waits.push_back({si.pWaitSemaphores[w], t && w < t->waitSemaphoreValueCount ? t->pWaitSemaphoreValues[w] : 0});
        for (uint32_t s = 0; s < si.signalSemaphoreCount; ++s)
            signals.push_back(
                {si.pSignalSemaphores[s], t && s < t->signalSemaphoreValueCount ? t->pSignalSemaphoreValues[s] : 0});
    }
}

inline void semaphore_uses(uint32_t count, const VkSubmitInfo2* infos, std::vector<SemaphoreUse>& waits,
                           std::vector<SemaphoreUse>& signals) {
    for (uint32_t i = 0; i < count; ++i) {
        for (uint32_t w = 0; w < infos[i].waitSemaphoreInfoCount; ++w)
            waits.push_back({infos[i].pWaitSemaphoreInfos[w].semaphore, infos[i].pWaitSemaphoreInfos[w].value});
        for (uint32_t s = 0; s < infos[i].signalSemaphoreInfoCount; ++s)
            signals.push_back({infos[i].pSignalSemaphoreInfos[s].semaphore, infos[i].pSignalSemaphoreInfos[s].value});
    }
}

inline bool CopiedSubmit::copyable(uint32_t count, const VkSubmitInfo* infos) {
    for (uint32_t i = 0; i < count; ++i) {
        const auto* p = static_cast<const VkBaseInStructure*>(infos[i].pNext);
        if (p && (p->sType != VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO || p->pNext)) return false;
    }
    return true;
}

inline bool CopiedSubmit::copyable(uint32_t count, const VkSubmitInfo2* infos) {
    for (uint32_t i = 0; i < count; ++i) {
        const VkSubmitInfo2& si = infos[i];
        if (si.pNext) return false;
        for (uint32_t j = 0; j < si.waitSemaphoreInfoCount; ++j)
            if (si.pWaitSemaphoreInfos[j].pNext) return false;
        for (uint32_t j = 0; j < si.signalSemaphoreInfoCount; ++j)
            if (si.pSignalSemaphoreInfos[j].pNext) return false;
        for (uint32_t j = 0; j < si.commandBufferInfoCount; ++j)
            if (si.pCommandBufferInfos[j].pNext) return false;
    }
    return true;
}

inline CopiedSubmit::CopiedSubmit(uint32_t count, const VkSubmitInfo* in, VkFence f) : fence(f) {
    semaphore_uses(count, in, waits, signals);
    infos.assign(in, in + count);
    timelines.resize(count);
    auto keep = [](auto& store, const auto* first, uint32_t n) {
        store.emplace_back(first, first + n);
        return n ? store.back().data() : nullptr;
    };
    for (uint32_t i = 0; i < count; ++i) {
        VkSubmitInfo& si = infos[i];
        si.pWaitSemaphores = keep(semaphores, si.pWaitSemaphores, si.waitSemaphoreCount);
        si.pWaitDstStageMask = keep(stages, si.pWaitDstStageMask, si.pWaitDstStageMask ? si.waitSemaphoreCount : 0);
        si.pCommandBuffers = keep(cbs, si.pCommandBuffers, si.commandBufferCount);
        si.pSignalSemaphores = keep(semaphores, si.pSignalSemaphores, si.signalSemaphoreCount);
        if (const VkTimelineSemaphoreSubmitInfo* t = timeline_values(in[i])) {
            timelines[i] = *t;
            timelines[i].pWaitSemaphoreValues = keep(values, t->pWaitSemaphoreValues, t->waitSemaphoreValueCount);
            timelines[i].pSignalSemaphoreValues = keep(values, t->pSignalSemaphoreValues, t->signalSemaphoreValueCount);
            si.pNext = &timelines[i];
        }
    }
}

inline CopiedSubmit::CopiedSubmit(uint32_t count, const VkSubmitInfo2* in, VkFence f, bool is_khr)
    : v2(true), khr(is_khr), fence(f) {
    semaphore_uses(count, in, waits, signals);
    infos2.assign(in, in + count);
    for (VkSubmitInfo2& si : infos2) {
        semaphore_infos.emplace_back(si.pWaitSemaphoreInfos, si.pWaitSemaphoreInfos + si.waitSemaphoreInfoCount);
        si.pWaitSemaphoreInfos = semaphore_infos.back().data();
        semaphore_infos.emplace_back(si.pSignalSemaphoreInfos, si.pSignalSemaphoreInfos + si.signalSemaphoreInfoCount);
        si.pSignalSemaphoreInfos = semaphore_infos.back().data();
        cb_infos.emplace_back(si.pCommandBufferInfos, si.pCommandBufferInfos + si.commandBufferInfoCount);
        si.pCommandBufferInfos = cb_infos.back().data();
    }
}

}  // namespace slipstream::test_layer
