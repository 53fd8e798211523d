// The loader-facing entry points: interface negotiation and the two vkGet*ProcAddr that hand
// out Slipstream's intercepts and pass everything else down the chain.
#include "submit/capture_control.h"
#include "hooks.h"
#include "state/object_state.h"
#include "memory/readback_buffer_uses.h"
#include "memory/readback_tracker.h"

#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>

namespace slipstream::hooks {
namespace {

using ProcTable = std::unordered_map<std::string_view, PFN_vkVoidFunction>;

// kInstanceHooks and kDeviceHooks: every hook of layer/hooks.txt (tools/gen/gen_hooks.py).
#include "hook_table.inl"

void add(ProcTable& table, const NamedProc* procs, size_t count) {
    for (size_t i = 0; i < count; ++i) table.emplace(procs[i].name, procs[i].fn);
}

const ProcTable& instance_procs() {
    static const ProcTable table = [] {
        ProcTable t;
        add(t, kInstanceHooks, std::size(kInstanceHooks));
        return t;
    }();
    return table;
}

// The hooks first, then the generated wrappers (which leave out every hooked command).
const ProcTable& device_procs() {
    static const ProcTable table = [] {
        ProcTable t;
        add(t, kDeviceHooks, std::size(kDeviceHooks));
        size_t count = 0;
        const NamedProc* commands = command_intercepts(&count);
        add(t, commands, count);
        const NamedProc* queue_functions = queue_intercepts(&count);
        add(t, queue_functions, count);
        const NamedProc* uses = buffer_use_intercepts(&count);
        add(t, uses, count);
        return t;
    }();
    return table;
}

PFN_vkVoidFunction find(const ProcTable& table, const char* name) {
    auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

}  // namespace

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
    DeviceState* state = device ? find_device(device) : nullptr;
    if (!state) return nullptr;
    PFN_vkVoidFunction next = state->dispatch.GetDeviceProcAddr(device, name);
    // Hand out our intercept only for commands the device below really has (enabled
    // extensions, supported core version); otherwise the application must see null.
    if (PFN_vkVoidFunction ours = find(device_procs(), name)) return next ? ours : nullptr;
    // A vkCmd* we do not intercept (newer than our vk.xml) records behind our back; a VkQueue
    // function we do not intercept would use a queue the flusher may be submitting to.
    const std::string_view n(name);
    if (next && (n.substr(0, 5) == "vkCmd" || n.substr(0, 7) == "vkQueue" || n.substr(0, 10) == "vkGetQueue"))
        capture::note_unknown_command(*state, name);
    // Any command newer than our vk.xml could name a buffer whose bind cached readback holds back.
    if (next && state->readback && state->readback->deferral() && !is_known_command(name))
        state->readback->deferral()->stop(("the application obtained " + std::string(name) + ", unknown to Slipstream").c_str());
    return next;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
    if (PFN_vkVoidFunction ours = find(instance_procs(), name)) return ours;
    InstanceState* state = instance ? find_instance(instance) : nullptr;
    if (!state) return nullptr;  // only global commands exist without an instance
    PFN_vkVoidFunction next = state->dispatch.GetInstanceProcAddr(instance, name);
    // A device command is ours only where the chain below has it (the spec: core commands and
    // those of available device extensions), as in vkGetDeviceProcAddr.
    if (PFN_vkVoidFunction ours = find(device_procs(), name)) return next ? ours : nullptr;
    return next;
}

}  // namespace slipstream::hooks

extern "C" {

__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* version) {
    if (!version || version->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    if (version->loaderLayerInterfaceVersion > 2) version->loaderLayerInterfaceVersion = 2;
    if (version->loaderLayerInterfaceVersion < 2) return VK_ERROR_INITIALIZATION_FAILED;
    version->pfnGetInstanceProcAddr = slipstream::hooks::GetInstanceProcAddr;
    version->pfnGetDeviceProcAddr = slipstream::hooks::GetDeviceProcAddr;
    version->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vkGetInstanceProcAddr(VkInstance instance, const char* name) {
    return slipstream::hooks::GetInstanceProcAddr(instance, name);
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vkGetDeviceProcAddr(VkDevice device, const char* name) {
    return slipstream::hooks::GetDeviceProcAddr(device, name);
}

}  // extern "C"
