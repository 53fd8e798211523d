// Application timeline values into the driver's (timeline_pool.h: a pooled semaphore's value x
// is the driver's x + offset) wherever they cross the layer: the values of submissions
// (VkTimelineSemaphoreSubmitInfo in the pNext of VkSubmitInfo and VkBindSparseInfo,
// VkSemaphoreSubmitInfo of VkSubmitInfo2), of host waits and of host signals. Counter reads
// go back with timeline_to_app.
//
// Each function copies what it changes into `copies` and never writes into the application's
// structures; where no semaphore named has an offset it returns the application's pointer.
// Pure functions over plain structures (no driver call), unit-tested.
#pragma once

#include "objects/timeline_pool.h"

#include <memory>
#include <vector>

namespace slipstream::objects {

// What translated structures point at: keep it alive until the driver's call returns.
// (Empty vectors: constructing one costs nothing on a submission that needs no copy.)
struct TimelineCopies {
    std::vector<VkSubmitInfo> submits;
    std::vector<VkSubmitInfo2> submits2;
    std::vector<VkBindSparseInfo> binds;
    std::vector<std::unique_ptr<uint64_t[]>> blocks;  // value arrays and copied chain structures
    std::vector<std::unique_ptr<VkSemaphoreSubmitInfo[]>> infos;
    // A pNext chain held a structure unknown to the layer in front of the timeline values:
    // that submission went with the application's values (the layer cannot copy what it
    // cannot size, and must not write into the application's chain).
    bool untranslated = false;
};

// The size of a structure that may precede VkTimelineSemaphoreSubmitInfo in the pNext chain of
// a VkSubmitInfo or VkBindSparseInfo (the structures vk.xml lets extend them), 0 if unknown.
size_t submit_chain_struct_size(VkStructureType type);

const VkSubmitInfo* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                               const VkSubmitInfo* submits, TimelineCopies& copies);
const VkSubmitInfo2* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                                const VkSubmitInfo2* submits, TimelineCopies& copies);
const VkBindSparseInfo* timeline_submits_to_driver(const TimelineOffsets& offsets, uint32_t count,
                                                   const VkBindSparseInfo* binds, TimelineCopies& copies);
// vkWaitSemaphores: `storage` receives the copy when one is needed.
const VkSemaphoreWaitInfo* timeline_wait_to_driver(const TimelineOffsets& offsets, const VkSemaphoreWaitInfo* info,
                                                   VkSemaphoreWaitInfo& storage, TimelineCopies& copies);
// vkSignalSemaphore: the signal with the driver's value.
VkSemaphoreSignalInfo timeline_signal_to_driver(const TimelineOffsets& offsets, const VkSemaphoreSignalInfo& info);

}  // namespace slipstream::objects
