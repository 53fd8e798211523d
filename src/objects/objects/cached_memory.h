// The driver side of the allocation cache (alloc_cache.h): the application's vkAllocateMemory
// and vkFreeMemory reach the driver through these, under cached readback (which may change the
// memory type first). With VK_SLIPSTREAM_ALLOC_CACHE off (DeviceState::alloc_cache null) each
// is one branch and the driver's call.
#pragma once

#include "state/object_state.h"

namespace slipstream::objects {

// vkAllocateMemory for the application (the type as it goes to the driver): served from kept
// memory where the request is plain and a kept allocation fits (zeroed first when
// ALLOC_CACHE_ZERO is on); an out-of-memory answer of the driver's empties the cache and
// retries once.
VkResult allocate_memory(DeviceState& d, const VkMemoryAllocateInfo* info, const VkAllocationCallbacks* allocator,
                         VkDeviceMemory* memory);
// vkFreeMemory, after everything the layer does at a free: kept where it may be (unmapped first).
void free_memory(DeviceState& d, VkDeviceMemory memory, const VkAllocationCallbacks* allocator);
// The driver mapped or unmapped `memory` (as it went down: a twin of cached readback's is
// not followed).
void memory_mapped(DeviceState& d, VkDeviceMemory memory, bool mapped);
// vkDestroyDevice: everything kept goes back to the driver (after our fills ended).
void destroy_cached_memory(DeviceState& d);
// Before an application's submission to `q` reaches fusion or the driver (vkQueueSubmit,
// vkQueueSubmit2): the zero fills owed (zero_fill.h) go first, in a submission of ours on `q`,
// which also waits for fills of other queues not known complete. One atomic load while none
// are owed or running. An error (of our submission) is the application's submission's answer:
// its work must not run over memory that was not zeroed.
VkResult before_submission(DeviceState& d, QueueState* q);

}  // namespace slipstream::objects
