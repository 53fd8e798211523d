// Filling the next layer's dispatch tables. A member is null exactly when the next layer
// returned null for it, so code that chooses between a core command and its extension alias,
// or skips a feature whose command is absent, can test the pointer (the utility library's
// helpers put stubs there that return VK_SUCCESS and write nothing).
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vk_layer_dispatch_table.h>

namespace slipstream {
#include "dispatch_init.inl"
}  // namespace slipstream
