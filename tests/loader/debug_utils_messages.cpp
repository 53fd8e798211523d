// Slipstream's messages reach the application's VK_EXT_debug_utils messengers, with the
// severity of the message: with VK_SLIPSTREAM_LOG=info, creating a device under the layer and
// getting its queue must deliver the "active on device" line to a messenger as an INFO message
// named "slipstream" (held until the loader's lock, taken through vkCreateDevice, is free).
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {
struct Seen {
    int infos = 0;
    int slipstream = 0;
    std::string first;
};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* user) {
    auto* seen = static_cast<Seen*>(user);
    if (!data->pMessageIdName || std::strcmp(data->pMessageIdName, "slipstream") != 0) return VK_FALSE;
    ++seen->slipstream;
    if (severity == VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT && std::strstr(data->pMessage, "active on device")) {
        ++seen->infos;
        if (seen->first.empty()) seen->first = data->pMessage;
    }
    return VK_FALSE;
}

int fail(const char* what, VkResult r) {
    std::fprintf(stderr, "debug_utils_messages: %s failed (%d)\n", what, int(r));
    return 2;
}
}  // namespace

int main() {
    Seen seen;
    const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = extensions;
    VkInstance instance;
    if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS) return fail("vkCreateInstance", r);
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (!create_messenger || !destroy_messenger) return fail("vkGetInstanceProcAddr(debug utils)", VK_ERROR_EXTENSION_NOT_PRESENT);
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = on_message;
    mci.pUserData = &seen;
    VkDebugUtilsMessengerEXT messenger;
    if (VkResult r = create_messenger(instance, &mci, nullptr, &messenger); r != VK_SUCCESS)
        return fail("vkCreateDebugUtilsMessengerEXT", r);

    uint32_t count = 1;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    if (VkResult r = vkEnumeratePhysicalDevices(instance, &count, &physical); r < 0 || count == 0)
        return fail("vkEnumeratePhysicalDevices", r);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = 0;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    VkDevice device;
    if (VkResult r = vkCreateDevice(physical, &dci, nullptr, &device); r != VK_SUCCESS) return fail("vkCreateDevice", r);
    // What the layer said inside vkCreateDevice (under the loader's lock) arrives from here on.
    VkQueue queue;
    vkGetDeviceQueue(device, 0, 0, &queue);
    vkDestroyDevice(device, nullptr);
    destroy_messenger(instance, messenger, nullptr);
    vkDestroyInstance(instance, nullptr);

    std::printf("%d message(s) from slipstream, %d of them the INFO line of the device%s%s\n", seen.slipstream,
                seen.infos, seen.first.empty() ? "" : ": ", seen.first.c_str());
    return seen.infos >= 1 ? 0 : 1;
}
