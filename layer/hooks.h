// The Vulkan entry points Slipstream intercepts by hand. Each one finds the layer state of its
// objects, lets the engine (src/) act, and calls down the chain. They are listed, each with its
// reason, in layer/hooks.txt, from which tools/gen/gen_hooks.py generates their declarations
// (hook_decls.h, included here) and the table vkGet*ProcAddr hand them out from.
#pragma once

#include "capture/layout_keeper.h"
#include "hook_decls.h"

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

namespace slipstream::hooks {

// Destroys a pipeline or set layout or an update template, or keeps it while lazy captures
// may name it (capture/layout_keeper.h).
void destroy_layout(VkDevice device, capture::LayoutKeeper::Kind kind, uint64_t handle,
                    const VkAllocationCallbacks* allocator);

struct NamedProc {
    const char* name;
    PFN_vkVoidFunction fn;
};
// queue_intercepts.cpp: the generated VkQueue wrappers, for vkGetDeviceProcAddr.
const NamedProc* queue_intercepts(size_t* count);

// command_intercepts.cpp: the generated vkCmd* wrappers, for vkGetDeviceProcAddr.
const NamedProc* command_intercepts(size_t* count);
// buffer_use_intercepts.cpp: the generated wrappers of the other commands that can name a
// buffer or memory.
const NamedProc* buffer_use_intercepts(size_t* count);

}  // namespace slipstream::hooks
