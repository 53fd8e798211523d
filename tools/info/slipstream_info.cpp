// `slipstream info`: what the loader sees (devices, queue families, memory types), whether it
// finds and enables Slipstream, and the settings the layer would use in this environment.
#include "core/settings.h"

#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::string flags_text(VkFlags flags, const std::vector<std::pair<VkFlags, const char*>>& names) {
    std::string out;
    for (auto& [bit, name] : names) {
        if (!(flags & bit)) continue;
        if (!out.empty()) out += " | ";
        out += name;
    }
    return out.empty() ? "none" : out;
}

const std::vector<std::pair<VkFlags, const char*>> kQueueFlags = {
    {VK_QUEUE_GRAPHICS_BIT, "GRAPHICS"}, {VK_QUEUE_COMPUTE_BIT, "COMPUTE"}, {VK_QUEUE_TRANSFER_BIT, "TRANSFER"},
    {VK_QUEUE_SPARSE_BINDING_BIT, "SPARSE_BINDING"}, {VK_QUEUE_PROTECTED_BIT, "PROTECTED"},
    {VK_QUEUE_VIDEO_DECODE_BIT_KHR, "VIDEO_DECODE"}, {VK_QUEUE_OPTICAL_FLOW_BIT_NV, "OPTICAL_FLOW"},
};
const std::vector<std::pair<VkFlags, const char*>> kMemoryFlags = {
    {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"}, {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
    {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"}, {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
    {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"}, {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"},
    {VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "DEVICE_COHERENT_AMD"},
    {VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "DEVICE_UNCACHED_AMD"},
};

std::string version_text(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

bool layer_found() {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (auto& l : layers)
        if (std::strcmp(l.layerName, "VK_LAYER_slipstream") == 0) return true;
    return false;
}

void print_device(VkPhysicalDevice pd, uint32_t index) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pd, &p);
    std::printf("device %u: %s (API %s, driver 0x%x, vendor 0x%04x, device 0x%04x)\n", index, p.deviceName,
                version_text(p.apiVersion).c_str(), p.driverVersion, p.vendorID, p.deviceID);
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> families(nf);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, families.data());
    for (uint32_t i = 0; i < nf; ++i)
        std::printf("  queue family %u: %u queue(s), %s, timestamp bits %u\n", i, families[i].queueCount,
                    flags_text(families[i].queueFlags, kQueueFlags).c_str(), families[i].timestampValidBits);
    VkPhysicalDeviceMemoryProperties m;
    vkGetPhysicalDeviceMemoryProperties(pd, &m);
    for (uint32_t h = 0; h < m.memoryHeapCount; ++h)
        std::printf("  memory heap %u: %.1f MiB%s\n", h, double(m.memoryHeaps[h].size) / (1024.0 * 1024.0),
                    (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? ", DEVICE_LOCAL" : "");
    for (uint32_t t = 0; t < m.memoryTypeCount; ++t)
        std::printf("  memory type %u: heap %u, %s\n", t, m.memoryTypes[t].heapIndex,
                    flags_text(m.memoryTypes[t].propertyFlags, kMemoryFlags).c_str());
}

// Creates a device on the first GPU and checks that Slipstream reported it: the only proof
// that the loader really put the layer in the chain.
bool layer_enabled(VkInstance instance, VkPhysicalDevice pd, const std::string& stats_file) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = 0;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    VkDevice device;
    if (vkCreateDevice(pd, &dci, nullptr, &device) != VK_SUCCESS) return false;
    vkDestroyDevice(device, nullptr);
    (void)instance;
    FILE* f = std::fopen(stats_file.c_str(), "r");
    if (!f) return false;
    std::fclose(f);
    return true;
}

// Text as a JSON string, every byte outside printable ASCII as \u00XX (a reader gets the
// bytes back as Latin-1).
std::string json_text(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += char(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\u%04x", c);
            out += hex;
        }
    }
    return out + "\"";
}

// `slipstream info --settings-json`: every setting (name, accepted values, default, the value
// in effect here) and the warnings, for tests that must not keep a copy of the settings list.
int print_settings_json(const slipstream::Settings& settings, const std::vector<std::string>& warnings) {
    const auto values = slipstream::describe_settings(settings);
    const auto& specs = slipstream::setting_specs();
    std::printf("{\"settings\": [");
    for (size_t i = 0; i < specs.size() && i < values.size(); ++i)
        std::printf("%s\n  {\"name\": %s, \"accepted\": %s, \"default\": %s, \"value\": %s}", i ? "," : "",
                    json_text(specs[i].name).c_str(), json_text(specs[i].accepted).c_str(),
                    json_text(specs[i].fallback).c_str(), json_text(values[i].second).c_str());
    std::printf("],\n \"warnings\": [");
    for (size_t i = 0; i < warnings.size(); ++i) std::printf("%s\n  %s", i ? "," : "", json_text(warnings[i]).c_str());
    std::printf("]}\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Read the settings before we point the statistics file at our probe.
    std::vector<std::string> warnings;
    slipstream::Settings settings = slipstream::parse_settings(slipstream::lookup_setting, &warnings);
    if (argc == 2 && std::strcmp(argv[1], "--settings-json") == 0) return print_settings_json(settings, warnings);

    char probe[] = "/tmp/slipstream-info-XXXXXX";
    int fd = mkstemp(probe);
    if (fd >= 0) close(fd);
    std::remove(probe);
    setenv("VK_SLIPSTREAM_STATS_FILE", probe, 1);
    unsetenv("VK_SLIPSTREAM_STATS");

    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "slipstream-info";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance instance;
    VkResult r = vkCreateInstance(&ici, nullptr, &instance);
    if (r != VK_SUCCESS) {
        std::printf("vkCreateInstance failed: %d\n", int(r));
        return 1;
    }
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
    for (uint32_t i = 0; i < count; ++i) print_device(devices[i], i);
    if (count == 0) std::printf("no Vulkan device found\n");

    bool found = layer_found();
    bool enabled = count > 0 && layer_enabled(instance, devices[0], probe);
    vkDestroyInstance(instance, nullptr);
    std::remove(probe);
    std::printf("layer VK_LAYER_slipstream: %s by the loader, %s\n", found ? "found" : "NOT found",
                enabled ? "ENABLED in this environment" : "not enabled in this environment");

    std::printf("settings (environment VK_SLIPSTREAM_<NAME>, then slipstream.<name> in vk_layer_settings.txt):\n");
    auto values = slipstream::describe_settings(settings);
    const auto& specs = slipstream::setting_specs();
    for (size_t i = 0; i < values.size() && i < specs.size(); ++i)
        std::printf("  %-14s = %-10s (default %s; %s)\n", values[i].first.c_str(),
                    values[i].second.empty() ? "\"\"" : values[i].second.c_str(),
                    *specs[i].fallback ? specs[i].fallback : "\"\"", specs[i].accepted);
    for (auto& w : warnings) std::printf("  warning: %s\n", w.c_str());
    return 0;
}
