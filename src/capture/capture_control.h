// When a command buffer is captured: VK_SLIPSTREAM_FUSE on, and a device that has not handed
// the application a vkCmd* Slipstream does not know. The layer's vkBeginCommandBuffer,
// vkEndCommandBuffer and vkGetDeviceProcAddr call these.
#pragma once

#include "core/object_state.h"

namespace slipstream::capture {

// vkBeginCommandBuffer: starts a capture (creating it on first use) or drops the one the
// command buffer had, if the device can no longer fuse.
void begin_capture(CommandBufferState& cb, const VkCommandBufferBeginInfo* info);
// vkEndCommandBuffer returned `result`: counts the command buffer as captured or not.
void end_capture(CommandBufferState& cb, VkResult result);
// vkGetDeviceProcAddr handed the application `name`, a vkCmd* that Slipstream does not
// intercept: the device stops fusing (one info line and one count per distinct name).
void note_unknown_command(DeviceState& device, const char* name);

}  // namespace slipstream::capture
