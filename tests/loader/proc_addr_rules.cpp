// What Slipstream's vkGetInstanceProcAddr and vkGetDeviceProcAddr may return (the spec's
// tables for both, and the loader's rule that a layer hands out its intercept only where the
// chain below has the command). Runs with the layer enabled; argv[1] is the layer library,
// already loaded by the loader, whose exported entry points are called directly.
#include "vk_app.h"

#include <dlfcn.h>

namespace {
int failures = 0;
void check(bool ok, const char* what, const char* name) {
    std::printf("%s: %s (%s)\n", ok ? "PASS" : "FAIL", what, name);
    if (!ok) ++failures;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <path of libVkLayer_slipstream.so>\n", argv[0]);
        return 2;
    }
    vkapp::Context ctx = vkapp::create_context("proc_addr_rules");
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    if (!lib) {
        std::fprintf(stderr, "proc_addr_rules: the layer is not loaded: is it enabled?\n");
        return 1;
    }
    auto layer_gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    auto layer_gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(dlsym(lib, "vkGetDeviceProcAddr"));

    // Without an instance only global commands exist.
    check(layer_gipa(VK_NULL_HANDLE, "vkCreateInstance") != nullptr, "global command without an instance",
          "vkCreateInstance");
    for (const char* name : {"vkCmdDispatch", "vkQueueSubmit", "vkWaitForFences", "vkAllocateMemory"})
        check(layer_gipa(VK_NULL_HANDLE, name) == nullptr, "no device command without an instance", name);

    // Core device commands: the layer's intercept, the same through both, and what the
    // application gets from the loader for its device.
    for (const char* name : {"vkCmdDispatch", "vkQueueSubmit", "vkWaitForFences", "vkAllocateMemory"}) {
        PFN_vkVoidFunction ours = layer_gdpa(ctx.device, name);
        check(ours != nullptr, "core device command intercepted", name);
        check(layer_gipa(ctx.instance, name) == ours, "same intercept through vkGetInstanceProcAddr", name);
        check(vkGetDeviceProcAddr(ctx.device, name) == ours, "the application gets the layer's intercept", name);
    }
    // Commands of device extensions this device did not enable: null for the device.
    for (const char* name : {"vkCmdDrawMultiEXT", "vkCmdTraceRaysKHR", "vkGetFenceFdKHR", "vkQueuePresentKHR",
                             "vkWaitSemaphoresKHR"}) {
        check(layer_gdpa(ctx.device, name) == nullptr, "no command of an extension the device did not enable", name);
        check(vkGetDeviceProcAddr(ctx.device, name) == nullptr, "null for the application too", name);
    }
    check(layer_gipa(ctx.instance, "vkNotACommand") == nullptr, "unknown name", "vkNotACommand");
    vkapp::destroy_context(ctx);
    std::printf("%d failed\n", failures);
    return failures ? 1 : 0;
}
