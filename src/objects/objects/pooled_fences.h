// The driver side of the fence pool (fence_pool.h): vkCreateFence, vkDestroyFence, fence
// imports and exports, and vkDestroyDevice go through these. With VK_SLIPSTREAM_OBJECT_POOL
// off (DeviceState::fence_pool null) each is one branch and the driver's call.
#pragma once

#include "state/object_state.h"

namespace slipstream::objects {

// vkCreateFence, served from the pool where the request is plain and a fence fits.
VkResult create_fence(DeviceState& d, const VkFenceCreateInfo* info, const VkAllocationCallbacks* allocator,
                      VkFence* fence);
// vkDestroyFence, after everything the layer does at a fence's destroy: kept where it may be.
void destroy_fence(DeviceState& d, VkFence fence, const VkAllocationCallbacks* allocator);
// Before the driver is given `fence` (may be null) to signal: a submission, a sparse bind, an
// image acquire, a present. One branch and, with a fence, one atomic add (no lock).
void note_fence_given(DeviceState& d, VkFence fence);
// An import into or an export from the fence: it never comes back to the pool.
void fence_shared(DeviceState& d, VkFence fence);
// vkDestroyDevice (everything the application submitted has completed): the pooled fences go.
void destroy_pooled_fences(DeviceState& d);

}  // namespace slipstream::objects
