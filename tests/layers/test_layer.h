// What every test-only layer under Slipstream needs from the loader's side: the dispatch key, the
// chain link of vkCreateInstance / vkCreateDevice, the instances and devices it knows with their
// dispatch tables (LayerState), the hook tables vkGet*ProcAddr answer from, interface
// negotiation and the exported entry points, and a report written so that a reader never sees
// half of it. Header-only.
#pragma once

#include <vulkan/vk_dispatch_table_helper.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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

// An instance as every test layer keeps it.
struct InstanceState {
    VkInstance instance = VK_NULL_HANDLE;
    VkLayerInstanceDispatchTable dispatch{};
    PFN_vkGetInstanceProcAddr next_gipa = nullptr;
};

// What every test layer's device state starts with (a layer's DeviceState derives from it).
struct DeviceBase {
    VkLayerDispatchTable dispatch{};
    PFN_vkGetDeviceProcAddr next_gdpa = nullptr;
};

// The instances and devices a test layer knows, by dispatch key, and the mutex that guards both
// maps (a layer guards its own process-wide state with it too). No path of a test layer is hot.
template <typename Device>
struct LayerState {
    std::mutex mutex;
    std::unordered_map<void*, std::unique_ptr<InstanceState>> instances;
    std::unordered_map<void*, std::unique_ptr<Device>> devices;

    InstanceState* instance(void* key) {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = instances.find(key);
        return it == instances.end() ? nullptr : it->second.get();
    }
    Device* device(void* key) {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = devices.find(key);
        return it == devices.end() ? nullptr : it->second.get();
    }
    // The device state of any dispatchable handle of a device (device, queue, command buffer).
    template <typename Dispatchable>
    Device* of(Dispatchable handle) {
        return device(key_of(handle));
    }

    // vkCreateInstance down the chain; the new instance is kept.
    VkResult create_instance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* allocator,
                             VkInstance* out) {
        auto* link = chain_link<VkLayerInstanceCreateInfo>(info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
        if (!link) return VK_ERROR_INITIALIZATION_FAILED;
        PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
        link->u.pLayerInfo = link->u.pLayerInfo->pNext;  // the next layer finds its own link
        auto create = reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
        if (!create) return VK_ERROR_INITIALIZATION_FAILED;
        const VkResult result = create(info, allocator, out);
        if (result != VK_SUCCESS) return result;
        auto state = std::make_unique<InstanceState>();
        state->instance = *out;
        state->next_gipa = next_gipa;
        layer_init_instance_dispatch_table(*out, &state->dispatch, next_gipa);
        std::lock_guard<std::mutex> lock(mutex);
        instances[key_of(*out)] = std::move(state);
        return VK_SUCCESS;
    }

    void destroy_instance(VkInstance instance, const VkAllocationCallbacks* allocator) {
        if (!instance) return;
        void* key = key_of(instance);  // the handle is gone once the call below returns
        InstanceState* state = this->instance(key);
        if (!state) return;
        state->dispatch.DestroyInstance(instance, allocator);
        std::lock_guard<std::mutex> lock(mutex);
        instances.erase(key);
    }

    // vkCreateDevice down the chain with `info` (the application's, or the layer's copy of it,
    // sharing its pNext chain); then `state` gets its dispatch, `init(Device&, VkDevice)` runs
    // with the mutex held, and the device is kept.
    template <typename Init>
    VkResult create_device(VkPhysicalDevice gpu, const VkDeviceCreateInfo* info, const VkAllocationCallbacks* allocator,
                           VkDevice* out, std::unique_ptr<Device> state, Init init) {
        InstanceState* inst = instance(key_of(gpu));
        auto* link = chain_link<VkLayerDeviceCreateInfo>(info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
        if (!inst || !link) return VK_ERROR_INITIALIZATION_FAILED;
        PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
        PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
        link->u.pLayerInfo = link->u.pLayerInfo->pNext;
        auto create = reinterpret_cast<PFN_vkCreateDevice>(next_gipa(inst->instance, "vkCreateDevice"));
        if (!create) return VK_ERROR_INITIALIZATION_FAILED;
        const VkResult result = create(gpu, info, allocator, out);
        if (result != VK_SUCCESS) return result;
        state->next_gdpa = next_gdpa;
        layer_init_device_dispatch_table(*out, &state->dispatch, next_gdpa);
        std::lock_guard<std::mutex> lock(mutex);
        init(*state, *out);
        devices[key_of(*out)] = std::move(state);
        return VK_SUCCESS;
    }

    // vkDestroyDevice down the chain; `done(Device&)` runs with the mutex held, then the state goes.
    template <typename Done>
    void destroy_device(VkDevice device, const VkAllocationCallbacks* allocator, Done done) {
        if (!device) return;
        void* key = key_of(device);  // the handle is gone once the call below returns
        Device* d = this->device(key);
        if (!d) return;
        d->dispatch.DestroyDevice(device, allocator);
        std::lock_guard<std::mutex> lock(mutex);
        done(*d);
        devices.erase(key);
    }
    void destroy_device(VkDevice device, const VkAllocationCallbacks* allocator) {
        destroy_device(device, allocator, [](Device&) {});
    }

    // vkGetDeviceProcAddr: the layer's hook where the next layer has the command (`self`: the
    // layer's vkGetDeviceProcAddr).
    template <size_t N>
    PFN_vkVoidFunction device_proc(VkDevice dev, const char* name, const Hook (&hooks)[N],
                                   PFN_vkGetDeviceProcAddr self) {
        if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(self);
        Device* d = dev ? device(key_of(dev)) : nullptr;
        if (!d) return nullptr;
        return hook_or_next(find_hook(hooks, name), d->next_gdpa(dev, name));
    }

    // vkGetInstanceProcAddr: the same for instance and device commands.
    template <size_t NI, size_t ND>
    PFN_vkVoidFunction instance_proc(VkInstance inst, const char* name, const Hook (&instance_hooks)[NI],
                                     const Hook (&device_hooks)[ND], PFN_vkGetInstanceProcAddr self,
                                     PFN_vkGetDeviceProcAddr device_self) {
        if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(self);
        if (std::strcmp(name, "vkCreateInstance") == 0) return find_hook(instance_hooks, name);
        if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(device_self);
        InstanceState* s = inst ? instance(key_of(inst)) : nullptr;
        if (!s) return nullptr;
        PFN_vkVoidFunction hook = find_hook(instance_hooks, name);
        if (!hook) hook = find_hook(device_hooks, name);
        return hook_or_next(hook, s->next_gipa(inst, name));
    }
};

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

// The loader's entry points of a test layer, used once per layer at file scope: its internal
// vkGetInstanceProcAddr and vkGetDeviceProcAddr, which answer from its LayerState `layer` and
// its Hook tables, and the exported symbols (which hand the loader the internal functions:
// see negotiate).
#define SLIPSTREAM_TEST_LAYER_ENTRY_POINTS(layer, instance_hooks, device_hooks)                                    \
    namespace {                                                                                                    \
    PFN_vkVoidFunction VKAPI_CALL TestLayerGetDeviceProcAddr(VkDevice device, const char* pName) {                \
        return layer.device_proc(device, pName, device_hooks, TestLayerGetDeviceProcAddr);                        \
    }                                                                                                              \
    PFN_vkVoidFunction VKAPI_CALL TestLayerGetInstanceProcAddr(VkInstance instance, const char* pName) {          \
        return layer.instance_proc(instance, pName, instance_hooks, device_hooks, TestLayerGetInstanceProcAddr,   \
                                   TestLayerGetDeviceProcAddr);                                                    \
    }                                                                                                              \
    }                                                                                                              \
    extern "C" {                                                                                                   \
    VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* pName) {            \
        return TestLayerGetDeviceProcAddr(device, pName);                                                          \
    }                                                                                                              \
    VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char* pName) {      \
        return TestLayerGetInstanceProcAddr(instance, pName);                                                      \
    }                                                                                                              \
    VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* pVersion) { \
        return slipstream::test_layer::negotiate(pVersion, TestLayerGetInstanceProcAddr,                           \
                                                 TestLayerGetDeviceProcAddr);                                      \
    }                                                                                                              \
    }
