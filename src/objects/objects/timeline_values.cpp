#include "objects/timeline_values.h"

#include <algorithm>
#include <cstring>

namespace slipstream::objects {

size_t submit_chain_struct_size(VkStructureType type) {
    switch (type) {
        case VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO: return sizeof(VkTimelineSemaphoreSubmitInfo);
        case VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO: return sizeof(VkDeviceGroupSubmitInfo);
        case VK_STRUCTURE_TYPE_DEVICE_GROUP_BIND_SPARSE_INFO: return sizeof(VkDeviceGroupBindSparseInfo);
        case VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO: return sizeof(VkProtectedSubmitInfo);
        case VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR: return sizeof(VkPerformanceQuerySubmitInfoKHR);
        case VK_STRUCTURE_TYPE_AMIGO_PROFILING_SUBMIT_INFO_SEC: return sizeof(VkAmigoProfilingSubmitInfoSEC);
#ifdef VK_USE_PLATFORM_WIN32_KHR
        case VK_STRUCTURE_TYPE_WIN32_KEYED_MUTEX_ACQUIRE_RELEASE_INFO_NV:
            return sizeof(VkWin32KeyedMutexAcquireReleaseInfoNV);
        case VK_STRUCTURE_TYPE_WIN32_KEYED_MUTEX_ACQUIRE_RELEASE_INFO_KHR:
            return sizeof(VkWin32KeyedMutexAcquireReleaseInfoKHR);
        case VK_STRUCTURE_TYPE_D3D12_FENCE_SUBMIT_INFO_KHR: return sizeof(VkD3D12FenceSubmitInfoKHR);
#endif
        default: return 0;
    }
}

namespace {

// A block of at least `bytes`, 8-byte aligned (every Vulkan structure's alignment), kept by `copies`.
void* block(TimelineCopies& copies, size_t bytes) {
    copies.blocks.push_back(std::make_unique<uint64_t[]>((bytes + 7) / 8));
    return copies.blocks.back().get();
}

template <typename Info>
bool names_offset(const TimelineOffsets& offsets, const Info& s) {
    for (uint32_t i = 0; i < s.waitSemaphoreCount; ++i)
        if (offsets.find(s.pWaitSemaphores[i])) return true;
    for (uint32_t i = 0; i < s.signalSemaphoreCount; ++i)
        if (offsets.find(s.pSignalSemaphores[i])) return true;
    return false;
}

// `count` values of `semaphores`, in the driver's space, in a block of `copies`.
const uint64_t* values_to_driver(const TimelineOffsets& offsets, uint32_t count, const uint64_t* values,
                                 uint32_t semaphore_count, const VkSemaphore* semaphores, TimelineCopies& copies) {
    if (!count || !values) return values;
    auto* out = static_cast<uint64_t*>(block(copies, sizeof(uint64_t) * count));
    for (uint32_t i = 0; i < count; ++i)
        out[i] = i < semaphore_count ? timeline_to_driver(values[i], offsets.find(semaphores[i])) : values[i];
    return out;
}

// `s` (a copy of the application's) gets a chain whose timeline values are the driver's: the
// structures up to the timeline values copied, the rest of the chain shared.
template <typename Info>
void translate_chain(const TimelineOffsets& offsets, Info& s, TimelineCopies& copies) {
    const VkBaseInStructure* timeline = nullptr;
    size_t before = 0;
    for (auto* p = static_cast<const VkBaseInStructure*>(s.pNext); p; p = p->pNext, ++before) {
        if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO) {
            timeline = p;
            break;
        }
        if (!submit_chain_struct_size(p->sType)) {
            copies.untranslated = true;
            return;
        }
    }
    // Without timeline values there is nothing to translate (a submission naming a timeline
    // semaphore without them is invalid, and goes to the driver as it is).
    if (!timeline) return;
    VkBaseOutStructure* prev = nullptr;
    for (auto* p = static_cast<const VkBaseInStructure*>(s.pNext);; p = p->pNext) {
        const size_t size = submit_chain_struct_size(p->sType);
        auto* copy = static_cast<VkBaseOutStructure*>(block(copies, size));
        std::memcpy(copy, p, size);
        if (prev) prev->pNext = copy;
        else s.pNext = copy;
        prev = copy;
        if (p == timeline) break;
    }
    // prev is the copy of the timeline values; its pNext still points at the rest of the chain.
    auto* values = reinterpret_cast<VkTimelineSemaphoreSubmitInfo*>(prev);
    values->pWaitSemaphoreValues = values_to_driver(offsets, values->waitSemaphoreValueCount, values->pWaitSemaphoreValues,
                                                    s.waitSemaphoreCount, s.pWaitSemaphores, copies);
    values->pSignalSemaphoreValues =
        values_to_driver(offsets, values->signalSemaphoreValueCount, values->pSignalSemaphoreValues,
                         s.signalSemaphoreCount, s.pSignalSemaphores, copies);
}

template <typename Info>
const Info* translate_all(const TimelineOffsets& offsets, uint32_t count, const Info* submits,
                          std::vector<Info>& out, TimelineCopies& copies) {
    if (!offsets.any()) return submits;
    for (uint32_t i = 0; i < count; ++i) {
        if (!names_offset(offsets, submits[i])) continue;
        if (out.empty()) out.assign(submits, submits + count);
        translate_chain(offsets, out[i], copies);
    }
    return out.empty() ? submits : out.data();
}

// Semaphore infos in the driver's space, or the application's array if none has an offset.
const VkSemaphoreSubmitInfo* infos_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                             const VkSemaphoreSubmitInfo* infos, TimelineCopies& copies) {
    uint32_t first = 0;
    while (first < count && !offsets.find(infos[first].semaphore)) ++first;
    if (first == count) return infos;
    copies.infos.push_back(std::make_unique<VkSemaphoreSubmitInfo[]>(count));
    VkSemaphoreSubmitInfo* out = copies.infos.back().get();
    std::copy(infos, infos + count, out);
    for (uint32_t i = first; i < count; ++i) out[i].value = timeline_to_driver(out[i].value, offsets.find(out[i].semaphore));
    return out;
}

}  // namespace

const VkSubmitInfo* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                               const VkSubmitInfo* submits, TimelineCopies& copies) {
    return translate_all(offsets, count, submits, copies.submits, copies);
}

const VkBindSparseInfo* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                                   const VkBindSparseInfo* binds, TimelineCopies& copies) {
    return translate_all(offsets, count, binds, copies.binds, copies);
}

const VkSubmitInfo2* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                                const VkSubmitInfo2* submits, TimelineCopies& copies) {
    if (!offsets.any()) return submits;
    for (uint32_t i = 0; i < count; ++i) {
        const VkSubmitInfo2& s = submits[i];
        const VkSemaphoreSubmitInfo* waits =
            infos_to_driver(offsets, s.waitSemaphoreInfoCount, s.pWaitSemaphoreInfos, copies);
        const VkSemaphoreSubmitInfo* signals =
            infos_to_driver(offsets, s.signalSemaphoreInfoCount, s.pSignalSemaphoreInfos, copies);
        if (waits == s.pWaitSemaphoreInfos && signals == s.pSignalSemaphoreInfos) continue;
        if (copies.submits2.empty()) copies.submits2.assign(submits, submits + count);
        copies.submits2[i].pWaitSemaphoreInfos = waits;
        copies.submits2[i].pSignalSemaphoreInfos = signals;
    }
    return copies.submits2.empty() ? submits : copies.submits2.data();
}

const VkSemaphoreWaitInfo* timeline_wait_to_driver(const TimelineOffsets& offsets, const VkSemaphoreWaitInfo* info,
                                                   VkSemaphoreWaitInfo& storage, TimelineCopies& copies) {
    if (!offsets.any()) return info;
    uint32_t first = 0;
    while (first < info->semaphoreCount && !offsets.find(info->pSemaphores[first])) ++first;
    if (first == info->semaphoreCount) return info;
    storage = *info;
    storage.pValues = values_to_driver(offsets, info->semaphoreCount, info->pValues, info->semaphoreCount,
                                       info->pSemaphores, copies);
    return &storage;
}

VkSemaphoreSignalInfo timeline_signal_to_driver(const TimelineOffsets& offsets, const VkSemaphoreSignalInfo& info) {
    VkSemaphoreSignalInfo out = info;
    if (offsets.any()) out.value = timeline_to_driver(info.value, offsets.find(info.semaphore));
    return out;
}

}  // namespace slipstream::objects
