// What the resolvers of buffer-naming commands (generated: buffer_uses.h) do with the buffers
// and memory they find. Called only while DeviceState::buffer_watch is nonzero.
#pragma once

#include <vulkan/vulkan.h>

#include <string_view>

namespace slipstream {
struct DeviceState;
namespace buffer_use {

// Any use but a transfer write: undecided memory is kept; a buffer in moved memory is reported
// as read by the GPU (the safety net).
void keep_buffer(DeviceState& d, VkBuffer buffer, const char* what);
void keep_memory(DeviceState& d, VkDeviceMemory memory, const char* what);
// A command that may name buffers in structures the resolver does not read: every pending
// bind of the device is kept.
void keep_all(DeviceState& d, const char* what);

}  // namespace buffer_use

// Whether `name` is a command of Slipstream's vk.xml (buffer_uses.h: kKnownCommands). A device
// whose application obtains any other command stops deferring binds: that command could name a
// buffer no resolver sees.
bool is_known_command(std::string_view name);

}  // namespace slipstream
