// What every test-only layer under Slipstream needs from the loader's side: the dispatch key, the
// chain link of vkCreateInstance / vkCreateDevice, the hook tables vkGet*ProcAddr answer from,
// interface negotiation, and a report written so that a reader never sees half of it.
// Header-only.
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace slipstream::test_layer {

template <typename T>
void* key_of(T dispatchable) {
    return *reinterpret_cast<void**>(dispatchable);  // the loader's dispatch table pointer
}

// The loader's link for this layer in a create info's pNext chain (Link: VkLayerInstanceCreateInfo
// or VkLayerDeviceCreateInfo, with its sType), or null. The caller takes what it needs from
// link->u.pLayerInfo, then advances it for the next layer.
template <typename Link>
Link* chain_link(const void* pNext, VkStructureType sType) {
    auto* link = static_cast<Link*>(const_cast<void*>(pNext));
    while (link && !(link->sType == sType && link->function == VK_LAYER_LINK_INFO))
        link = static_cast<Link*>(const_cast<void*>(link->pNext));
    return link && link->u.pLayerInfo ? link : nullptr;
}

struct Hook {
    const char* name;
    PFN_vkVoidFunction function;
};

template <size_t N>
PFN_vkVoidFunction find_hook(const Hook (&hooks)[N], const char* name) {
    for (const Hook& h : hooks)
        if (std::strcmp(h.name, name) == 0) return h.function;
    return nullptr;
}

// A hook is returned only where the next layer has the command: an application must get NULL
// for commands of versions and extensions the device does not enable.
inline PFN_vkVoidFunction hook_or_next(PFN_vkVoidFunction hook, PFN_vkVoidFunction next) {
    return next && hook ? hook : next;
}

// vkNegotiateLoaderLayerInterfaceVersion, interface version 2. The loader gets these internal
// functions, never the exported symbols: inside the library a call or address of an exported
// vkGetInstanceProcAddr may bind to the loader's own symbol of that name (ELF interposition),
// which would skip the layer and re-enter the loader.
inline VkResult negotiate(VkNegotiateLayerInterface* v, PFN_vkGetInstanceProcAddr gipa, PFN_vkGetDeviceProcAddr gdpa) {
    if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    if (v->loaderLayerInterfaceVersion >= 2) {
        v->pfnGetInstanceProcAddr = gipa;
        v->pfnGetDeviceProcAddr = gdpa;
        v->pfnGetPhysicalDeviceProcAddr = nullptr;
    }
    if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
    return VK_SUCCESS;
}

// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees
// half of it. False on failure.
inline bool write_whole_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f) ok = (std::fclose(f) == 0) && ok;
    return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace slipstream::test_layer
