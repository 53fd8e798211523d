// The driver side of the allocation cache (alloc_cache.h): the application's vkAllocateMemory
// and vkFreeMemory reach the driver through these, under cached readback (which may change the
// memory type first). With VK_SLIPSTREAM_ALLOC_CACHE off (DeviceState::alloc_cache null) each
// is one branch and the driver's call.
#pragma once

#include "core/object_state.h"

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
// vkDestroyDevice: everything kept goes back to the driver.
void destroy_cached_memory(DeviceState& d);

}  // namespace slipstream::objects
