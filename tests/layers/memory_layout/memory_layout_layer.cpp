// VK_LAYER_SLIPSTREAM_test_memory_layout: a test-only layer (never installed) that sits UNDER
// Slipstream and presents the memory layout of another device (tests/unit/memory_layouts.h) to
// everything above it, so that memory policy runs on realistic layouts with real data on a device
// that has one memory type (lavapipe).
//
// Every presented ("fake") memory type is backed by a real type with at least its host access
// guarantees; allocations are translated and recorded per fake type, and a JSON report tells a
// test which type was really chosen above this layer.
//
// Environment:
//   SLIPSTREAM_TEST_MEMORY_LAYOUT=<name>       layout to present; unset: pass through (still counts)
//   SLIPSTREAM_TEST_HEAP_LIMIT=<heap>:<bytes>[,...]  allocations fail with
//                                              VK_ERROR_OUT_OF_DEVICE_MEMORY once the live bytes on
//                                              that heap would exceed <bytes> (suffix K/M/G, KiB...)
//   SLIPSTREAM_TEST_FAIL_TYPE=<type>[,...]      every allocation of these types fails the same way
//   SLIPSTREAM_TEST_MEMORY_REPORT=<path>       JSON written at each vkDestroyDevice
//   SLIPSTREAM_TEST_MEMORY_BUDGET=1            list VK_EXT_memory_budget among the device's
//                                              extensions where the driver does not (lavapipe):
//                                              with a layout presented, the budgets this layer
//                                              answers (a heap's limit, its live bytes) are then
//                                              what the layers above may ask for
// Indices are those the application sees (fake ones when a layout is presented). The environment
// is read at the first vkCreateInstance of the process, or of an instance-free period, which also
// resets the counters.
//
// Not translated (pass through; their memory-type or heap indices would be the real ones):
// vkGetDeviceGroupPeerMemoryFeatures, vkGetMemoryFdPropertiesKHR,
// vkGetMemoryHostPointerPropertiesEXT and other import paths.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory_layouts.h"
#include "test_layer.h"

namespace {

using namespace slipstream::test_layer;

constexpr const char* kLayerName = "VK_LAYER_SLIPSTREAM_test_memory_layout";

constexpr VkMemoryPropertyFlags kDL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kHC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kHCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkMemoryPropertyFlags kLazy = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT;
// Real types that need a feature or a special resource: never used to back a fake type.
constexpr VkMemoryPropertyFlags kSpecialReal = VK_MEMORY_PROPERTY_PROTECTED_BIT |
                                               VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD |
                                               VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;


// One line on stderr, prefixed with the layer's name.
__attribute__((format(printf, 1, 2))) void message(const char* fmt, ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::fprintf(stderr, "%s: %s\n", kLayerName, text);
}

// ---- configuration ------------------------------------------------------------------------

struct Config {
    const slipstream::test::MemoryLayout* layout = nullptr;  // nullptr: pass through
    std::map<uint32_t, VkDeviceSize> heap_limits;
    std::set<uint32_t> fail_types;
    std::string report_path;
    bool budget_extension = false;
};

bool parse_u64(const std::string& text, uint64_t& out, bool allow_suffix) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno) return false;
    const std::string suffix(end);
    uint64_t scale = 1;
    if (!suffix.empty()) {
        if (!allow_suffix) return false;
        if (suffix == "K" || suffix == "KiB") scale = 1ull << 10;
        else if (suffix == "M" || suffix == "MiB") scale = 1ull << 20;
        else if (suffix == "G" || suffix == "GiB") scale = 1ull << 30;
        else return false;
    }
    if (v > UINT64_MAX / scale) return false;
    out = v * scale;
    return true;
}

std::vector<std::string> split(const char* text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    for (const char* p = text; *p; ++p) {
        if (*p == sep) {
            if (!part.empty()) parts.push_back(part);
            part.clear();
        } else if (*p != ' ') {
            part += *p;
        }
    }
    if (!part.empty()) parts.push_back(part);
    return parts;
}

Config read_config() {
    Config config;
    const char* name = std::getenv("SLIPSTREAM_TEST_MEMORY_LAYOUT");
    if (name && *name) {
        config.layout = slipstream::test::find_memory_layout(name);
        if (!config.layout)
            message("unknown SLIPSTREAM_TEST_MEMORY_LAYOUT '%s' (known: %s); passing the device's "
                    "own memory layout through unchanged",
                    name, slipstream::test::memory_layout_names().c_str());
    }
    if (const char* limits = std::getenv("SLIPSTREAM_TEST_HEAP_LIMIT")) {
        for (const std::string& entry : split(limits, ',')) {
            const size_t colon = entry.find(':');
            uint64_t heap = 0, bytes = 0;
            if (colon == std::string::npos || !parse_u64(entry.substr(0, colon), heap, false) ||
                !parse_u64(entry.substr(colon + 1), bytes, true) || heap >= VK_MAX_MEMORY_HEAPS) {
                message("ignoring SLIPSTREAM_TEST_HEAP_LIMIT entry '%s': expected "
                        "<heapIndex>:<bytes>[K|M|G]",
                        entry.c_str());
                continue;
            }
            config.heap_limits[uint32_t(heap)] = bytes;
        }
    }
    if (const char* types = std::getenv("SLIPSTREAM_TEST_FAIL_TYPE")) {
        for (const std::string& entry : split(types, ',')) {
            uint64_t type = 0;
            if (!parse_u64(entry, type, false) || type >= VK_MAX_MEMORY_TYPES) {
                message("ignoring SLIPSTREAM_TEST_FAIL_TYPE entry '%s': expected a memory type index",
                        entry.c_str());
                continue;
            }
            config.fail_types.insert(uint32_t(type));
        }
    }
    if (const char* path = std::getenv("SLIPSTREAM_TEST_MEMORY_REPORT")) config.report_path = path;
    if (const char* budget = std::getenv("SLIPSTREAM_TEST_MEMORY_BUDGET")) config.budget_extension = *budget == '1';
    return config;
}

// ---- the presented layout -----------------------------------------------------------------

struct Presented {
    VkPhysicalDeviceMemoryProperties props{};  // what the layers above see
    uint32_t real_type[VK_MAX_MEMORY_TYPES]{};  // presented type -> real type
    bool fake = false;
    bool optimal_images_host_visible = true;  // see MemoryLayout
};

// The real type backing a fake one: it must keep the fake type's host guarantees (a mapped
// HOST_COHERENT fake type must really be coherent), and otherwise resemble it most.
uint32_t backing_type(const VkPhysicalDeviceMemoryProperties& real, VkMemoryPropertyFlags fake) {
    int best = -1, best_score = -1;
    for (uint32_t r = 0; r < real.memoryTypeCount; ++r) {
        const VkMemoryPropertyFlags f = real.memoryTypes[r].propertyFlags;
        if (f & kSpecialReal) continue;
        if ((f & kLazy) && !(fake & kLazy)) continue;
        if ((fake & kHV) && (f & (kHV | kHC)) != (kHV | kHC)) continue;
        const VkMemoryPropertyFlags diff = (f ^ fake) & (kDL | kHV | kHC | kHCached);
        const int score = 4 - __builtin_popcount(diff);
        if (score > best_score) best = int(r), best_score = score;
    }
    return best < 0 ? 0 : uint32_t(best);
}

Presented present(const Config& config, const VkPhysicalDeviceMemoryProperties& real) {
    Presented p;
    if (!config.layout) {
        p.props = real;
        for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t) p.real_type[t] = t;
        return p;
    }
    p.fake = true;
    p.props = config.layout->props;
    p.optimal_images_host_visible = config.layout->optimal_images_host_visible;
    for (uint32_t t = 0; t < p.props.memoryTypeCount; ++t)
        p.real_type[t] = backing_type(real, p.props.memoryTypes[t].propertyFlags);
    return p;
}

enum class Resource { kBuffer, kLinearImage, kOptimalImage, kTransientImage };

// memoryTypeBits as the presented device would report them: buffers and linear images may use
// every type but lazily allocated ones, optimal images only DEVICE_LOCAL types (lazily allocated
// ones only for transient attachments). A fake type is offered only if its backing real type is
// allowed for the resource, so every binding stays valid below.
uint32_t present_type_bits(const Presented& p, uint32_t real_bits, Resource resource) {
    if (!p.fake) return real_bits;
    uint32_t bits = 0;
    for (uint32_t t = 0; t < p.props.memoryTypeCount; ++t) {
        const VkMemoryPropertyFlags f = p.props.memoryTypes[t].propertyFlags;
        if (!((real_bits >> p.real_type[t]) & 1u)) continue;
        if (f & VK_MEMORY_PROPERTY_PROTECTED_BIT) continue;  // no protected resources here
        if ((f & kLazy) && resource != Resource::kTransientImage) continue;
        if ((resource == Resource::kOptimalImage || resource == Resource::kTransientImage) &&
            (!(f & kDL) || (!p.optimal_images_host_visible && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))))
            continue;
        bits |= 1u << t;
    }
    return bits;
}

const char* resource_name(Resource resource) {
    switch (resource) {
        case Resource::kBuffer: return "buffers";
        case Resource::kLinearImage: return "linear images";
        case Resource::kOptimalImage: return "optimal images";
        case Resource::kTransientImage: return "transient attachments";
    }
    return "resources";
}

Resource image_resource(VkImageTiling tiling, VkImageUsageFlags usage) {
    if (tiling == VK_IMAGE_TILING_LINEAR) return Resource::kLinearImage;
    if (usage & VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT) return Resource::kTransientImage;
    return Resource::kOptimalImage;
}

// ---- state --------------------------------------------------------------------------------

struct Allocation {
    uint32_t type;
    uint32_t heap;
    VkDeviceSize size;
};

struct DeviceState : DeviceBase {
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    Presented presented;
    // Guarded by g_layer.mutex:
    VkDeviceSize live_by_heap[VK_MAX_MEMORY_HEAPS]{};
    std::unordered_map<VkDeviceMemory, Allocation> allocations;
    std::unordered_map<VkImage, Resource> images;
};

struct Counters {
    std::map<uint32_t, uint64_t> allocations, bytes, failed;  // by presented type
    std::map<uint32_t, VkDeviceSize> peak_by_heap;
    uint32_t type_count = 0;  // largest presented type count seen, for the report
    uint32_t heap_count = 0;
};

// A test layer: one mutex for everything (g_layer.mutex); no path here is hot.
Config g_config;
Counters g_counters;
LayerState<DeviceState> g_layer;


// present_type_bits for a device, saying once per kind of resource when no presented type is
// left: the real types behind this layout do not allow that resource on this device (a layout
// faked on a multi-type GPU), and the application will see memoryTypeBits 0.
uint32_t translate_bits(const DeviceState* d, uint32_t real_bits, Resource resource) {
    const uint32_t bits = present_type_bits(d->presented, real_bits, resource);
    static std::atomic<uint32_t> warned{0};
    const uint32_t flag = 1u << static_cast<uint32_t>(resource);
    if (bits == 0 && real_bits != 0 && !(warned.fetch_or(flag) & flag))
        message("no presented memory type is backed by a real type that allows %s here "
                "(real memoryTypeBits 0x%x): they get memoryTypeBits 0",
                resource_name(resource), real_bits);
    return bits;
}

// ---- report -------------------------------------------------------------------------------

void append_object(std::string& out, const char* name, const std::map<uint32_t, uint64_t>& values,
                   uint32_t count, bool last = false) {
    out += "  \"";
    out += name;
    out += "\": {";
    for (uint32_t i = 0; i < count; ++i) {
        auto it = values.find(i);
        char item[64];
        std::snprintf(item, sizeof item, "%s\"%u\": %" PRIu64, i ? ", " : "", i,
                      it == values.end() ? uint64_t(0) : uint64_t(it->second));
        out += item;
    }
    out += last ? "}\n" : "},\n";
}

// Caller holds g_layer.mutex.
void write_report_locked() {
    if (g_config.report_path.empty()) return;
    uint32_t types = g_counters.type_count, heaps = g_counters.heap_count;
    for (const auto& m : {g_counters.allocations, g_counters.failed})
        if (!m.empty()) types = std::max(types, m.rbegin()->first + 1);
    std::string json = "{\n  \"layout\": \"";
    json += g_config.layout ? g_config.layout->name : "passthrough";
    json += "\",\n";
    append_object(json, "allocations_by_type", g_counters.allocations, types);
    append_object(json, "bytes_by_type", g_counters.bytes, types);
    append_object(json, "failed_by_type", g_counters.failed, types);
    append_object(json, "peak_bytes_by_heap", g_counters.peak_by_heap, heaps, true);
    json += "}\n";
    if (!write_whole_file(g_config.report_path, json))
        message("cannot write the report to '%s'", g_config.report_path.c_str());
}

// ---- instance -----------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator,
                                              VkInstance* pInstance) {
    {
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        if (g_layer.instances.empty()) {
            g_config = read_config();
            g_counters = Counters{};
        }
    }
    return g_layer.create_instance(pCreateInfo, pAllocator, pInstance);
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_instance(instance, pAllocator);
}

// Caller holds g_layer.mutex. Budgets of the presented heaps: usage is what this layer counts for the
// devices of `physical_device`, budget the heap limit or else the heap size.
void patch_budget_locked(VkPhysicalDevice physical_device, const VkPhysicalDeviceMemoryProperties& props,
                         VkPhysicalDeviceMemoryBudgetPropertiesEXT* budget) {
    for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; ++h) {
        budget->heapBudget[h] = 0;
        budget->heapUsage[h] = 0;
    }
    for (uint32_t h = 0; h < props.memoryHeapCount; ++h) {
        auto limit = g_config.heap_limits.find(h);
        budget->heapBudget[h] = limit == g_config.heap_limits.end()
                                    ? props.memoryHeaps[h].size
                                    : std::min(limit->second, props.memoryHeaps[h].size);
        for (const auto& entry : g_layer.devices)
            if (entry.second->physical_device == physical_device)
                budget->heapUsage[h] += entry.second->live_by_heap[h];
    }
}

void present_properties2(VkPhysicalDevice physical_device, VkPhysicalDeviceMemoryProperties2* out,
                         const VkPhysicalDeviceMemoryProperties& real) {
    std::lock_guard<std::mutex> lock(g_layer.mutex);
    const Presented p = present(g_config, real);
    if (!p.fake) return;
    out->memoryProperties = p.props;
    for (auto* s = static_cast<VkBaseOutStructure*>(out->pNext); s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT)
            patch_budget_locked(physical_device, p.props,
                                reinterpret_cast<VkPhysicalDeviceMemoryBudgetPropertiesEXT*>(s));
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceMemoryProperties(VkPhysicalDevice physicalDevice,
                                                             VkPhysicalDeviceMemoryProperties* pProps) {
    InstanceState* state = g_layer.instance(key_of(physicalDevice));
    if (!state) return;
    state->dispatch.GetPhysicalDeviceMemoryProperties(physicalDevice, pProps);
    std::lock_guard<std::mutex> lock(g_layer.mutex);
    *pProps = present(g_config, *pProps).props;
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceMemoryProperties2(VkPhysicalDevice physicalDevice,
                                                              VkPhysicalDeviceMemoryProperties2* pProps) {
    InstanceState* state = g_layer.instance(key_of(physicalDevice));
    if (!state) return;
    state->dispatch.GetPhysicalDeviceMemoryProperties2(physicalDevice, pProps);
    present_properties2(physicalDevice, pProps, pProps->memoryProperties);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceMemoryProperties2KHR(VkPhysicalDevice physicalDevice,
                                                                 VkPhysicalDeviceMemoryProperties2* pProps) {
    InstanceState* state = g_layer.instance(key_of(physicalDevice));
    if (!state) return;
    state->dispatch.GetPhysicalDeviceMemoryProperties2KHR(physicalDevice, pProps);
    present_properties2(physicalDevice, pProps, pProps->memoryProperties);
}

// SLIPSTREAM_TEST_MEMORY_BUDGET: the driver's device extensions, plus VK_EXT_memory_budget (a
// query only: nothing needs enabling below, and an application that enables it is not expected).
VKAPI_ATTR VkResult VKAPI_CALL EnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice,
                                                                  const char* pLayerName, uint32_t* pCount,
                                                                  VkExtensionProperties* pProps) {
    InstanceState* state = g_layer.instance(key_of(physicalDevice));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    bool add = false;
    {
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        add = g_config.budget_extension && !pLayerName;
    }
    if (!add) return state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pCount, pProps);
    uint32_t n = 0;
    VkResult r = state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, nullptr, &n, nullptr);
    if (r != VK_SUCCESS) return r;
    std::vector<VkExtensionProperties> all(n);
    r = state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, nullptr, &n, all.data());
    if (r < 0) return r;
    all.resize(n);
    bool listed = false;
    for (const VkExtensionProperties& e : all)
        listed = listed || std::strcmp(e.extensionName, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) == 0;
    if (!listed) {
        VkExtensionProperties budget{};
        std::snprintf(budget.extensionName, sizeof budget.extensionName, "%s", VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
        budget.specVersion = VK_EXT_MEMORY_BUDGET_SPEC_VERSION;
        all.push_back(budget);
    }
    if (!pProps) {
        *pCount = uint32_t(all.size());
        return VK_SUCCESS;
    }
    const uint32_t copied = std::min<uint32_t>(*pCount, uint32_t(all.size()));
    std::copy(all.begin(), all.begin() + copied, pProps);
    *pCount = copied;
    return copied < all.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

// ---- device -------------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice,
                                            const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    InstanceState* instance = g_layer.instance(key_of(physicalDevice));
    if (!instance) return VK_ERROR_INITIALIZATION_FAILED;
    VkPhysicalDeviceMemoryProperties real{};
    instance->dispatch.GetPhysicalDeviceMemoryProperties(physicalDevice, &real);
    auto init = [&](DeviceState& state, VkDevice device) {  // with g_layer.mutex held
        state.device = device;
        state.physical_device = physicalDevice;
        state.presented = present(g_config, real);
        g_counters.type_count = std::max(g_counters.type_count, state.presented.props.memoryTypeCount);
        g_counters.heap_count = std::max(g_counters.heap_count, state.presented.props.memoryHeapCount);
        for (const auto& limit : g_config.heap_limits)
            if (limit.first >= state.presented.props.memoryHeapCount)
                message("SLIPSTREAM_TEST_HEAP_LIMIT names heap %u, which this layout does not have",
                        limit.first);
    };
    return g_layer.create_device(physicalDevice, pCreateInfo, pAllocator, pDevice, std::make_unique<DeviceState>(),
                                 init);
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    g_layer.destroy_device(device, pAllocator, [](DeviceState&) { write_report_locked(); });
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateMemory(VkDevice device, const VkMemoryAllocateInfo* pAllocateInfo,
                                              const VkAllocationCallbacks* pAllocator,
                                              VkDeviceMemory* pMemory) {
    DeviceState* d = g_layer.device(key_of(device));
    const Presented& p = d->presented;
    const uint32_t type = pAllocateInfo->memoryTypeIndex;
    if (type >= p.props.memoryTypeCount) {
        message("vkAllocateMemory: memoryTypeIndex %u is not a type of the presented layout (%u types)",
                type, p.props.memoryTypeCount);
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    const uint32_t heap = p.props.memoryTypes[type].heapIndex;
    const VkDeviceSize size = pAllocateInfo->allocationSize;
    {
        // Decide and reserve under the lock, so that concurrent allocations respect the limit.
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        auto limit = g_config.heap_limits.find(heap);
        if (g_config.fail_types.count(type) ||
            (limit != g_config.heap_limits.end() && d->live_by_heap[heap] + size > limit->second)) {
            ++g_counters.failed[type];
            return VK_ERROR_OUT_OF_DEVICE_MEMORY;
        }
        d->live_by_heap[heap] += size;
    }
    VkMemoryAllocateInfo info = *pAllocateInfo;
    info.memoryTypeIndex = p.real_type[type];
    const VkResult result = d->dispatch.AllocateMemory(device, &info, pAllocator, pMemory);

    std::lock_guard<std::mutex> lock(g_layer.mutex);
    if (result != VK_SUCCESS) {
        d->live_by_heap[heap] -= size;
        ++g_counters.failed[type];
        return result;
    }
    d->allocations[*pMemory] = {type, heap, size};
    ++g_counters.allocations[type];
    g_counters.bytes[type] += size;
    VkDeviceSize& peak = g_counters.peak_by_heap[heap];
    peak = std::max(peak, d->live_by_heap[heap]);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL FreeMemory(VkDevice device, VkDeviceMemory memory,
                                      const VkAllocationCallbacks* pAllocator) {
    DeviceState* d = g_layer.device(key_of(device));
    if (memory != VK_NULL_HANDLE) {
        // Forget it before the driver can hand the same handle to another allocation.
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        auto it = d->allocations.find(memory);
        if (it != d->allocations.end()) {
            d->live_by_heap[it->second.heap] -= it->second.size;
            d->allocations.erase(it);
        }
    }
    d->dispatch.FreeMemory(device, memory, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateImage(VkDevice device, const VkImageCreateInfo* pCreateInfo,
                                           const VkAllocationCallbacks* pAllocator, VkImage* pImage) {
    DeviceState* d = g_layer.device(key_of(device));
    const VkResult result = d->dispatch.CreateImage(device, pCreateInfo, pAllocator, pImage);
    if (result == VK_SUCCESS) {
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        d->images[*pImage] = image_resource(pCreateInfo->tiling, pCreateInfo->usage);
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL DestroyImage(VkDevice device, VkImage image,
                                        const VkAllocationCallbacks* pAllocator) {
    DeviceState* d = g_layer.device(key_of(device));
    if (image != VK_NULL_HANDLE) {
        std::lock_guard<std::mutex> lock(g_layer.mutex);
        d->images.erase(image);
    }
    d->dispatch.DestroyImage(device, image, pAllocator);
}

Resource resource_of(DeviceState* d, VkImage image) {
    std::lock_guard<std::mutex> lock(g_layer.mutex);
    auto it = d->images.find(image);
    return it == d->images.end() ? Resource::kOptimalImage : it->second;
}

VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements(VkDevice device, VkBuffer buffer,
                                                       VkMemoryRequirements* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetBufferMemoryRequirements(device, buffer, pReq);
    pReq->memoryTypeBits = translate_bits(d, pReq->memoryTypeBits, Resource::kBuffer);
}

VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements2(VkDevice device,
                                                        const VkBufferMemoryRequirementsInfo2* pInfo,
                                                        VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetBufferMemoryRequirements2(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, Resource::kBuffer);
}

VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements2KHR(VkDevice device,
                                                           const VkBufferMemoryRequirementsInfo2* pInfo,
                                                           VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetBufferMemoryRequirements2KHR(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, Resource::kBuffer);
}

VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements(VkDevice device, VkImage image,
                                                      VkMemoryRequirements* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetImageMemoryRequirements(device, image, pReq);
    pReq->memoryTypeBits = translate_bits(d, pReq->memoryTypeBits, resource_of(d, image));
}

VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements2(VkDevice device,
                                                       const VkImageMemoryRequirementsInfo2* pInfo,
                                                       VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetImageMemoryRequirements2(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, resource_of(d, pInfo->image));
}

VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements2KHR(VkDevice device,
                                                          const VkImageMemoryRequirementsInfo2* pInfo,
                                                          VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetImageMemoryRequirements2KHR(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, resource_of(d, pInfo->image));
}

VKAPI_ATTR void VKAPI_CALL GetDeviceBufferMemoryRequirements(VkDevice device,
                                                             const VkDeviceBufferMemoryRequirements* pInfo,
                                                             VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceBufferMemoryRequirements(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, Resource::kBuffer);
}

VKAPI_ATTR void VKAPI_CALL GetDeviceBufferMemoryRequirementsKHR(
    VkDevice device, const VkDeviceBufferMemoryRequirements* pInfo, VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceBufferMemoryRequirementsKHR(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits, Resource::kBuffer);
}

VKAPI_ATTR void VKAPI_CALL GetDeviceImageMemoryRequirements(VkDevice device,
                                                            const VkDeviceImageMemoryRequirements* pInfo,
                                                            VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceImageMemoryRequirements(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits,
                             image_resource(pInfo->pCreateInfo->tiling, pInfo->pCreateInfo->usage));
}

VKAPI_ATTR void VKAPI_CALL GetDeviceImageMemoryRequirementsKHR(
    VkDevice device, const VkDeviceImageMemoryRequirements* pInfo, VkMemoryRequirements2* pReq) {
    DeviceState* d = g_layer.device(key_of(device));
    d->dispatch.GetDeviceImageMemoryRequirementsKHR(device, pInfo, pReq);
    auto& bits = pReq->memoryRequirements.memoryTypeBits;
    bits = translate_bits(d, bits,
                             image_resource(pInfo->pCreateInfo->tiling, pInfo->pCreateInfo->usage));
}

// ---- entry-point tables -------------------------------------------------------------------

#define HOOK(name) {"vk" #name, reinterpret_cast<PFN_vkVoidFunction>(name)}

const Hook kInstanceHooks[] = {
    HOOK(CreateInstance),
    HOOK(DestroyInstance),
    HOOK(CreateDevice),
    HOOK(GetPhysicalDeviceMemoryProperties),
    HOOK(GetPhysicalDeviceMemoryProperties2),
    HOOK(GetPhysicalDeviceMemoryProperties2KHR),
    HOOK(EnumerateDeviceExtensionProperties),
};

const Hook kDeviceHooks[] = {
    HOOK(DestroyDevice),
    HOOK(AllocateMemory),
    HOOK(FreeMemory),
    HOOK(CreateImage),
    HOOK(DestroyImage),
    HOOK(GetBufferMemoryRequirements),
    HOOK(GetBufferMemoryRequirements2),
    HOOK(GetBufferMemoryRequirements2KHR),
    HOOK(GetImageMemoryRequirements),
    HOOK(GetImageMemoryRequirements2),
    HOOK(GetImageMemoryRequirements2KHR),
    HOOK(GetDeviceBufferMemoryRequirements),
    HOOK(GetDeviceBufferMemoryRequirementsKHR),
    HOOK(GetDeviceImageMemoryRequirements),
    HOOK(GetDeviceImageMemoryRequirementsKHR),
};

#undef HOOK

}  // namespace

SLIPSTREAM_TEST_LAYER_ENTRY_POINTS(g_layer, kInstanceHooks, kDeviceHooks)
