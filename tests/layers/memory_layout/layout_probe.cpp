// Checks VK_LAYER_SLIPSTREAM_test_memory_layout with real data.
//
//   layout_probe [--report-dir DIR]    runs every scenario, each in a child process with its own
//                                      environment (the layer reads it per process)
//   layout_probe --child SCENARIO      one scenario; the parent sets the environment
//
// Scenarios: every layout of memory_layouts.h (the presented properties and memoryTypeBits are
// exact, a buffer in every usable type carries data through the GPU and the mapping, the report
// counts every allocation by type); the same under the Khronos validation layer placed below and
// above the test layer; a heap limit; an injected allocation failure; an unknown layout name.
#include "memory_layouts.h"
#include "vk_app.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

using slipstream::test::find_memory_layout;
using slipstream::test::memory_layouts;
using slipstream::test::MemoryLayout;

constexpr const char* kTestLayer = "VK_LAYER_SLIPSTREAM_test_memory_layout";
constexpr const char* kValidation = "VK_LAYER_KHRONOS_validation";

constexpr VkMemoryPropertyFlags kDL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kHC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kLazy = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT;
constexpr VkMemoryPropertyFlags kProtected = VK_MEMORY_PROPERTY_PROTECTED_BIT;
constexpr VkMemoryPropertyFlags kAmd =
    VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD | VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;

int g_failures = 0;

__attribute__((format(printf, 1, 2))) void fail(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::fprintf(stderr, "layout_probe: FAIL: ");
    std::vfprintf(stderr, fmt, args);
    std::fputc('\n', stderr);
    va_end(args);
    ++g_failures;
}

#define EXPECT_EQ_U64(actual, expected, ...)                                                     \
    do {                                                                                         \
        const uint64_t a_ = uint64_t(actual), e_ = uint64_t(expected);                           \
        if (a_ != e_) {                                                                          \
            std::fprintf(stderr, "layout_probe: FAIL: %s = %" PRIu64 " (0x%" PRIx64 "), expected " \
                                 "%" PRIu64 " (0x%" PRIx64 "): ",                                \
                         #actual, a_, a_, e_, e_);                                               \
            std::fprintf(stderr, __VA_ARGS__);                                                   \
            std::fputc('\n', stderr);                                                            \
            ++g_failures;                                                                        \
        }                                                                                        \
    } while (0)

uint64_t digest(const VkPhysicalDeviceMemoryProperties& p) {
    uint64_t h = vkapp::fnv1a(&p.memoryTypeCount, sizeof p.memoryTypeCount);
    for (uint32_t t = 0; t < p.memoryTypeCount; ++t) h = vkapp::fnv1a(&p.memoryTypes[t], sizeof p.memoryTypes[t], h);
    h = vkapp::fnv1a(&p.memoryHeapCount, sizeof p.memoryHeapCount, h);
    for (uint32_t i = 0; i < p.memoryHeapCount; ++i) {
        h = vkapp::fnv1a(&p.memoryHeaps[i].size, sizeof p.memoryHeaps[i].size, h);
        h = vkapp::fnv1a(&p.memoryHeaps[i].flags, sizeof p.memoryHeaps[i].flags, h);
    }
    return h;
}

void print_layout(const char* what, const VkPhysicalDeviceMemoryProperties& p) {
    std::printf("%s: %u heaps, %u types\n", what, p.memoryHeapCount, p.memoryTypeCount);
    for (uint32_t i = 0; i < p.memoryHeapCount; ++i)
        std::printf("  heap %u: %" PRIu64 " bytes, flags 0x%x\n", i, uint64_t(p.memoryHeaps[i].size),
                    p.memoryHeaps[i].flags);
    for (uint32_t t = 0; t < p.memoryTypeCount; ++t)
        std::printf("  type %u: heap %u, flags 0x%x\n", t, p.memoryTypes[t].heapIndex,
                    p.memoryTypes[t].propertyFlags);
}

void expect_same_layout(const VkPhysicalDeviceMemoryProperties& got,
                        const VkPhysicalDeviceMemoryProperties& want, const char* via) {
    EXPECT_EQ_U64(got.memoryTypeCount, want.memoryTypeCount, "%s", via);
    EXPECT_EQ_U64(got.memoryHeapCount, want.memoryHeapCount, "%s", via);
    for (uint32_t t = 0; t < want.memoryTypeCount && t < got.memoryTypeCount; ++t) {
        EXPECT_EQ_U64(got.memoryTypes[t].propertyFlags, want.memoryTypes[t].propertyFlags, "%s type %u", via, t);
        EXPECT_EQ_U64(got.memoryTypes[t].heapIndex, want.memoryTypes[t].heapIndex, "%s type %u", via, t);
    }
    for (uint32_t h = 0; h < want.memoryHeapCount && h < got.memoryHeapCount; ++h) {
        EXPECT_EQ_U64(got.memoryHeaps[h].size, want.memoryHeaps[h].size, "%s heap %u", via, h);
        EXPECT_EQ_U64(got.memoryHeaps[h].flags, want.memoryHeaps[h].flags, "%s heap %u", via, h);
    }
}

// ---- the report ---------------------------------------------------------------------------

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// {"0": 1, "3": 2} under `key` in the layer's flat JSON.
std::map<uint32_t, uint64_t> report_object(const std::string& json, const char* key) {
    std::map<uint32_t, uint64_t> out;
    size_t pos = json.find(std::string("\"") + key + "\"");
    if (pos == std::string::npos) {
        fail("report has no \"%s\"", key);
        return out;
    }
    pos = json.find('{', pos);
    const size_t end = json.find('}', pos);
    while (pos != std::string::npos && (pos = json.find('"', pos + 1)) < end) {
        const uint32_t index = uint32_t(std::strtoul(json.c_str() + pos + 1, nullptr, 10));
        pos = json.find(':', pos);
        out[index] = std::strtoull(json.c_str() + pos + 1, nullptr, 10);
    }
    return out;
}

std::string report_string(const std::string& json, const char* key) {
    size_t pos = json.find(std::string("\"") + key + "\"");
    if (pos == std::string::npos) return "(missing)";
    pos = json.find('"', json.find(':', pos));
    return json.substr(pos + 1, json.find('"', pos + 1) - pos - 1);
}

struct Expected {
    std::map<uint32_t, uint64_t> allocations, bytes, failed, peak_by_heap;
};

void check_report(const char* layout_name, uint32_t type_count, const Expected& want) {
    const char* path = std::getenv("SLIPSTREAM_TEST_MEMORY_REPORT");
    const std::string json = read_file(path ? path : "");
    if (json.empty()) {
        fail("no report at '%s'", path ? path : "(SLIPSTREAM_TEST_MEMORY_REPORT unset)");
        return;
    }
    if (report_string(json, "layout") != layout_name)
        fail("report layout '%s', expected '%s'", report_string(json, "layout").c_str(), layout_name);
    const auto allocations = report_object(json, "allocations_by_type");
    const auto bytes = report_object(json, "bytes_by_type");
    const auto failed = report_object(json, "failed_by_type");
    EXPECT_EQ_U64(allocations.size(), type_count, "types in allocations_by_type");
    auto at = [](const std::map<uint32_t, uint64_t>& m, uint32_t k) {
        auto it = m.find(k);
        return it == m.end() ? uint64_t(0) : it->second;
    };
    for (uint32_t t = 0; t < type_count; ++t) {
        EXPECT_EQ_U64(at(allocations, t), at(want.allocations, t), "allocations of type %u", t);
        EXPECT_EQ_U64(at(bytes, t), at(want.bytes, t), "bytes of type %u", t);
        EXPECT_EQ_U64(at(failed, t), at(want.failed, t), "failed allocations of type %u", t);
    }
    const auto peaks = report_object(json, "peak_bytes_by_heap");
    for (const auto& p : want.peak_by_heap)
        EXPECT_EQ_U64(at(peaks, p.first), p.second, "peak bytes on heap %u", p.first);
}

// ---- Vulkan helpers -----------------------------------------------------------------------

constexpr VkDeviceSize kBlockBytes = 64 * 1024;

// A buffer of kBlockBytes in an allocation of its own of `type` (mapped where host-visible),
// counted in `expect`.
vkapp::Buffer make_block(vkapp::Context& ctx, uint32_t type, Expected& expect) {
    vkapp::Buffer b = vkapp::create_buffer_of_type(
        ctx, kBlockBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, type);
    ++expect.allocations[type];
    expect.bytes[type] += b.allocation_size;
    return b;
}

uint32_t* block_words(const vkapp::Buffer& b) { return static_cast<uint32_t*>(b.mapped); }

bool coherent(const vkapp::Context& ctx, uint32_t type) {
    return ctx.memory_properties.memoryTypes[type].propertyFlags & kHC;
}

VkMappedMemoryRange whole(VkDeviceMemory memory) {
    VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    r.memory = memory;
    r.size = VK_WHOLE_SIZE;
    return r;
}

uint32_t pattern(uint32_t type, uint32_t i) { return (type + 1) * 0x9E3779B9u ^ (i * 2654435761u); }

// Data written into `type` (by the host when it is host-visible, else by the GPU) is copied by
// the GPU into a host-visible block and read back through the mapping.
void round_trip(vkapp::Context& ctx, VkCommandPool pool, uint32_t type, uint32_t host_type,
                Expected& expect) {
    const VkMemoryPropertyFlags flags = ctx.memory_properties.memoryTypes[type].propertyFlags;
    const bool host_visible = flags & kHV;
    const uint32_t words = uint32_t(kBlockBytes / 4);
    const uint32_t fill = 0xA5A50000u | type;
    vkapp::Buffer src = make_block(ctx, type, expect);
    vkapp::Buffer dst = make_block(ctx, host_visible ? type : host_type, expect);
    if (host_visible) {
        for (uint32_t i = 0; i < words; ++i) block_words(src)[i] = pattern(type, i);
        if (!coherent(ctx, type)) {
            VkMappedMemoryRange r = whole(src.memory);
            VK_CHECK(vkFlushMappedMemoryRanges(ctx.device, 1, &r));
        }
    }
    vkapp::one_shot(ctx, pool, [&](VkCommandBuffer cb) {
        if (!host_visible) {
            vkCmdFillBuffer(cb, src.buffer, 0, VK_WHOLE_SIZE, fill);
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        }
        VkBufferCopy region{0, 0, kBlockBytes};
        vkCmdCopyBuffer(cb, src.buffer, dst.buffer, 1, &region);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    });
    if (!coherent(ctx, dst.memory_type)) {
        VkMappedMemoryRange r = whole(dst.memory);
        VK_CHECK(vkInvalidateMappedMemoryRanges(ctx.device, 1, &r));
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < words; ++i)
        if (block_words(dst)[i] != (host_visible ? pattern(type, i) : fill)) ++wrong;
    if (wrong) fail("type %u: %u of %u words wrong after the round trip", type, wrong, words);
    std::printf("  type %u (flags 0x%x): %s, copied on the GPU into type %u, read back: %s\n", type,
                flags, host_visible ? "written through the mapping" : "filled by the GPU", dst.memory_type,
                wrong ? "WRONG" : "ok");
    vkapp::destroy_buffer(ctx, src);  // frees the mapping too
    vkapp::destroy_buffer(ctx, dst);
}

template <typename Keep>
uint32_t types_where(const VkPhysicalDeviceMemoryProperties& p, Keep keep) {
    uint32_t bits = 0;
    for (uint32_t t = 0; t < p.memoryTypeCount; ++t)
        if (keep(p.memoryTypes[t].propertyFlags)) bits |= 1u << t;
    return bits;
}

VkImage make_image(vkapp::Context& ctx, VkImageTiling tiling, VkImageUsageFlags usage) {
    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = VK_FORMAT_R8G8B8A8_UNORM;
    ici.extent = {16, 16, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = tiling;
    ici.usage = usage;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image;
    VK_CHECK(vkCreateImage(ctx.device, &ici, nullptr, &image));
    return image;
}

// A presented type is offered to a resource only if the real type behind it is (a binding must
// stay valid below). On a device with one memory type (lavapipe) that holds for every type, and
// image bits must be exact; on a real multi-type device (the H200 allows only its plain
// DEVICE_LOCAL type for optimal images) they may be fewer.
void expect_image_bits(uint32_t got, uint32_t want, const char* what, const char* query) {
    const char* real_types = std::getenv("PROBE_REAL_TYPE_COUNT");
    if (!real_types || std::strcmp(real_types, "1") == 0) {
        EXPECT_EQ_U64(got, want, "%s image, %s", what, query);
    } else if (got & ~want) {
        fail("%s image, %s: memoryTypeBits 0x%x has types outside 0x%x", what, query, got, want);
    } else if (got != want && std::strcmp(query, "vkGetImageMemoryRequirements") == 0) {
        std::printf("  note: %s images get 0x%x of 0x%x here: the real types behind the others do not "
                    "allow them\n", what, got, want);
    }
}

// memoryTypeBits through every query the layer translates.
void check_image_bits(vkapp::Context& ctx, const char* what, VkImageTiling tiling,
                      VkImageUsageFlags usage, uint32_t want) {
    VkImage image = make_image(ctx, tiling, usage);
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(ctx.device, image, &req);
    expect_image_bits(req.memoryTypeBits, want, what, "vkGetImageMemoryRequirements");
    VkImageMemoryRequirementsInfo2 info{VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2};
    info.image = image;
    VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    vkGetImageMemoryRequirements2(ctx.device, &info, &req2);
    expect_image_bits(req2.memoryRequirements.memoryTypeBits, want, what, "vkGetImageMemoryRequirements2");
    vkDestroyImage(ctx.device, image, nullptr);

    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = VK_FORMAT_R8G8B8A8_UNORM;
    ici.extent = {16, 16, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = tiling;
    ici.usage = usage;
    VkDeviceImageMemoryRequirements dimr{VK_STRUCTURE_TYPE_DEVICE_IMAGE_MEMORY_REQUIREMENTS};
    dimr.pCreateInfo = &ici;
    VkMemoryRequirements2 req3{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    vkGetDeviceImageMemoryRequirements(ctx.device, &dimr, &req3);
    expect_image_bits(req3.memoryRequirements.memoryTypeBits, want, what, "vkGetDeviceImageMemoryRequirements");
}

uint32_t buffer_bits(vkapp::Context& ctx) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = kBlockBytes;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buffer;
    VK_CHECK(vkCreateBuffer(ctx.device, &bci, nullptr, &buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device, buffer, &req);
    VkBufferMemoryRequirementsInfo2 info{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
    info.buffer = buffer;
    VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    vkGetBufferMemoryRequirements2(ctx.device, &info, &req2);
    EXPECT_EQ_U64(req2.memoryRequirements.memoryTypeBits, req.memoryTypeBits, "vkGetBufferMemoryRequirements2");
    VkDeviceBufferMemoryRequirements dbmr{VK_STRUCTURE_TYPE_DEVICE_BUFFER_MEMORY_REQUIREMENTS};
    dbmr.pCreateInfo = &bci;
    VkMemoryRequirements2 req3{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    vkGetDeviceBufferMemoryRequirements(ctx.device, &dbmr, &req3);
    EXPECT_EQ_U64(req3.memoryRequirements.memoryTypeBits, req.memoryTypeBits, "vkGetDeviceBufferMemoryRequirements");
    vkDestroyBuffer(ctx.device, buffer, nullptr);
    return req.memoryTypeBits;
}

VkResult allocate(vkapp::Context& ctx, uint32_t type, VkDeviceSize size, VkDeviceMemory* memory) {
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = size;
    mai.memoryTypeIndex = type;
    *memory = VK_NULL_HANDLE;
    return vkAllocateMemory(ctx.device, &mai, nullptr, memory);
}

bool has_device_extension(vkapp::Context& ctx, const char* name) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> exts(count);
    vkEnumerateDeviceExtensionProperties(ctx.physical_device, nullptr, &count, exts.data());
    for (const auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

int finish_child(vkapp::Context& ctx) {
    vkapp::destroy_context(ctx);  // vkDestroyDevice writes the report
    if (vkapp::g_validation_messages.load()) fail("%d validation message(s)", vkapp::g_validation_messages.load());
    return 0;
}

// Proves where the validation layer sits (PROBE_VALIDATION=above|below): a memory type index
// just past the presented layout is an error to a validation layer above the test layer (which
// sees the presented layout and stops the call), while the test layer itself refuses it before
// anything below sees it. Nothing invalid reaches the driver either way.
void check_validation_position(vkapp::Context& ctx) {
    const char* position = std::getenv("PROBE_VALIDATION");
    if (!position) return;
    const bool above = std::strcmp(position, "above") == 0;
    const uint32_t type = ctx.memory_properties.memoryTypeCount;
    const int before = vkapp::g_validation_messages.load();
    std::fprintf(stderr, "layout_probe: allocating memory type %u on purpose: %s\n", type,
                 above ? "the validation layer must report it" : "the test layer must refuse it");
    VkDeviceMemory memory;
    const VkResult result = allocate(ctx, type, 4096, &memory);
    if (result == VK_SUCCESS) {
        fail("allocating memory type %u succeeded", type);
        vkFreeMemory(ctx.device, memory, nullptr);
    }
    const int reported = vkapp::g_validation_messages.load() - before;
    vkapp::g_validation_messages.fetch_sub(reported);
    EXPECT_EQ_U64(reported, above ? 1 : 0, "validation messages for memory type %u with validation %s", type, position);
    if (reported == (above ? 1 : 0))
        std::printf("  validation %s the test layer: confirmed (%d message for memory type %u)\n", position,
                    reported, type);
}

// ---- child scenarios ----------------------------------------------------------------------

void scenario_layout(const MemoryLayout& layout) {
    vkapp::Context ctx = vkapp::create_context("layout_probe");
    const VkPhysicalDeviceMemoryProperties& p = layout.props;
    std::printf("%s (%s) on %s\n", layout.name, layout.origin, ctx.properties.deviceName);
    expect_same_layout(ctx.memory_properties, p, "vkGetPhysicalDeviceMemoryProperties");
    VkPhysicalDeviceMemoryProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    vkGetPhysicalDeviceMemoryProperties2(ctx.physical_device, &p2);
    expect_same_layout(p2.memoryProperties, p, "vkGetPhysicalDeviceMemoryProperties2");

    // What a device of this layout reports: buffers and linear images any type but lazily
    // allocated (and protected) ones, optimal images DEVICE_LOCAL ones (not host-visible ones
    // where the layout says so), transient attachments also the lazily allocated ones.
    const bool hv_images = layout.optimal_images_host_visible;
    auto image_ok = [hv_images](VkMemoryPropertyFlags f) {
        return (f & kDL) && !(f & kProtected) && (hv_images || !(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT));
    };
    const uint32_t want_buffer = types_where(p, [](VkMemoryPropertyFlags f) { return !(f & (kLazy | kProtected)); });
    const uint32_t want_optimal = types_where(p, [&](VkMemoryPropertyFlags f) { return image_ok(f) && !(f & kLazy); });
    const uint32_t want_transient = types_where(p, image_ok);
    const uint32_t bits = buffer_bits(ctx);
    EXPECT_EQ_U64(bits, want_buffer, "buffer memoryTypeBits");
    check_image_bits(ctx, "optimal", VK_IMAGE_TILING_OPTIMAL,
                     VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT, want_optimal);
    check_image_bits(ctx, "linear", VK_IMAGE_TILING_LINEAR,
                     VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, want_buffer);
    check_image_bits(ctx, "transient", VK_IMAGE_TILING_OPTIMAL,
                     VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT,
                     want_transient);

    // The GPU's readback of non-host-visible types lands in the first plain coherent type.
    uint32_t host_type = UINT32_MAX;
    for (uint32_t t = 0; t < p.memoryTypeCount && host_type == UINT32_MAX; ++t)
        if ((bits >> t & 1u) && (p.memoryTypes[t].propertyFlags & (kHV | kHC)) == (kHV | kHC) &&
            !(p.memoryTypes[t].propertyFlags & kAmd))
            host_type = t;
    if (host_type == UINT32_MAX) fail("no plain HOST_VISIBLE|HOST_COHERENT type for buffers");

    Expected expect;
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    for (uint32_t t = 0; t < p.memoryTypeCount && host_type != UINT32_MAX; ++t) {
        if (!(bits >> t & 1u)) continue;
        if (p.memoryTypes[t].propertyFlags & kAmd) {
            // Allocating these needs the deviceCoherentMemory feature of VK_AMD_device_coherent_memory.
            std::printf("  type %u (flags 0x%x): skipped, needs deviceCoherentMemory\n", t,
                        p.memoryTypes[t].propertyFlags);
            continue;
        }
        round_trip(ctx, pool, t, host_type, expect);
    }
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    check_validation_position(ctx);
    finish_child(ctx);
    check_report(layout.name, p.memoryTypeCount, expect);
}

// nvidia-bar with heap 2 (the 246 MiB BAR) limited to 1 MiB.
void scenario_heap_limit() {
    vkapp::Context ctx = vkapp::create_context("layout_probe");
    const VkDeviceSize k768 = 768 * 1024;
    Expected expect;
    VkDeviceMemory bar1, bar2, ram;
    EXPECT_EQ_U64(allocate(ctx, 4, k768, &bar1), VK_SUCCESS, "first BAR allocation fits");
    EXPECT_EQ_U64(allocate(ctx, 4, k768, &bar2), VK_ERROR_OUT_OF_DEVICE_MEMORY, "BAR heap over its limit");
    EXPECT_EQ_U64(allocate(ctx, 3, k768, &ram), VK_SUCCESS, "another heap is not limited");
    if (has_device_extension(ctx, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME)) {
        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        p2.pNext = &budget;
        vkGetPhysicalDeviceMemoryProperties2(ctx.physical_device, &p2);
        EXPECT_EQ_U64(budget.heapBudget[2], 1024 * 1024, "budget of the limited heap");
        EXPECT_EQ_U64(budget.heapUsage[2], k768, "usage of the limited heap");
        EXPECT_EQ_U64(budget.heapBudget[1], p2.memoryProperties.memoryHeaps[1].size, "unlimited heap");
        EXPECT_EQ_U64(budget.heapUsage[1], k768, "usage of the RAM heap");
        std::printf("  VK_EXT_memory_budget: presented budgets checked\n");
    } else {
        std::printf("  VK_EXT_memory_budget not supported here: budgets not checked\n");
    }
    vkFreeMemory(ctx.device, bar1, nullptr);
    EXPECT_EQ_U64(allocate(ctx, 4, k768, &bar2), VK_SUCCESS, "fits again after a free");
    vkFreeMemory(ctx.device, bar2, nullptr);
    vkFreeMemory(ctx.device, ram, nullptr);
    finish_child(ctx);
    expect.allocations = {{3, 1}, {4, 2}};
    expect.bytes = {{3, k768}, {4, 2 * k768}};
    expect.failed = {{4, 1}};
    expect.peak_by_heap = {{1, k768}, {2, k768}};
    check_report("nvidia-bar", 5, expect);
}

// nvidia-bar with every allocation of type 3 failing.
void scenario_fail_type() {
    vkapp::Context ctx = vkapp::create_context("layout_probe");
    VkDeviceMemory m;
    EXPECT_EQ_U64(allocate(ctx, 3, 4096, &m), VK_ERROR_OUT_OF_DEVICE_MEMORY, "type 3 fails");
    EXPECT_EQ_U64(allocate(ctx, 2, 4096, &m), VK_SUCCESS, "type 2 still works");
    vkFreeMemory(ctx.device, m, nullptr);
    EXPECT_EQ_U64(buffer_bits(ctx), 0x1f, "failing types stay in memoryTypeBits");
    finish_child(ctx);
    Expected expect;
    expect.allocations = {{2, 1}};
    expect.bytes = {{2, 4096}};
    expect.failed = {{3, 1}};
    check_report("nvidia-bar", 5, expect);
}

// An unknown layout name: the device's own layout passes through, allocations are still counted.
void scenario_unknown_layout() {
    vkapp::Context ctx = vkapp::create_context("layout_probe");
    const char* want = std::getenv("PROBE_REAL_DIGEST");
    char got[32];
    std::snprintf(got, sizeof got, "%016" PRIx64, digest(ctx.memory_properties));
    if (!want || std::strcmp(want, got) != 0) fail("memory properties changed: digest %s, expected %s", got, want ? want : "?");
    const int host = vkapp::find_memory_type(ctx.memory_properties, ~0u, kHV | kHC);
    VkDeviceMemory m;
    EXPECT_EQ_U64(allocate(ctx, uint32_t(host), 4096, &m), VK_SUCCESS, "pass-through allocation");
    vkFreeMemory(ctx.device, m, nullptr);
    const uint32_t count = ctx.memory_properties.memoryTypeCount;
    finish_child(ctx);
    Expected expect;
    expect.allocations = {{uint32_t(host), 1}};
    expect.bytes = {{uint32_t(host), 4096}};
    check_report("passthrough", count, expect);
}

int run_child(const std::string& scenario) {
    const std::string layout = scenario.substr(scenario.find(':') + 1);
    if (scenario == "heap-limit") scenario_heap_limit();
    else if (scenario == "fail-type") scenario_fail_type();
    else if (scenario == "unknown-layout") scenario_unknown_layout();
    else if (const MemoryLayout* l = find_memory_layout(layout.c_str())) scenario_layout(*l);
    else fail("unknown scenario '%s'", scenario.c_str());
    std::fflush(stdout);
    return g_failures ? 1 : 0;
}

// ---- parent -------------------------------------------------------------------------------

struct Scenario {
    std::string name;
    std::vector<std::pair<std::string, std::string>> env;
    std::string stderr_must_contain;
    std::vector<std::string> unset = {};
};

// Runs this program with `--child`, the environment changed by `env`, stderr into `log`.
int spawn_child(const Scenario& s, const std::string& log) {
    std::vector<std::string> storage;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        bool replaced = false;
        for (const auto& kv : s.env) replaced |= entry.compare(0, kv.first.size() + 1, kv.first + "=") == 0;
        for (const auto& k : s.unset) replaced |= entry.compare(0, k.size() + 1, k + "=") == 0;
        if (!replaced) storage.push_back(entry);
    }
    for (const auto& kv : s.env) storage.push_back(kv.first + "=" + kv.second);
    std::vector<char*> envp;
    for (auto& e : storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe", flag = "--child", name = s.name;
    char* argv[] = {self.data(), flag.data(), name.data(), nullptr};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    const int err = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (err) {
        std::fprintf(stderr, "layout_probe: cannot start a child: %s\n", std::strerror(err));
        return 127;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool instance_layer_present(const char* name) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (const auto& l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

// The folder holding the Khronos validation layer's manifest, or "".
std::string validation_manifest_dir() {
    std::vector<std::string> roots;
    const char* xdg = std::getenv("XDG_DATA_DIRS");
    std::string dirs = xdg && *xdg ? xdg : "/usr/local/share:/usr/share";
    for (size_t start = 0; start <= dirs.size();) {
        const size_t end = std::min(dirs.find(':', start), dirs.size());
        if (end > start) roots.push_back(dirs.substr(start, end - start) + "/vulkan/explicit_layer.d");
        start = end + 1;
    }
    roots.push_back("/etc/vulkan/explicit_layer.d");
    for (const std::string& dir : roots)
        if (access((dir + "/VkLayer_khronos_validation.json").c_str(), R_OK) == 0) return dir;
    return "";
}

// The device's own memory layout, without any layer.
VkPhysicalDeviceMemoryProperties real_memory_properties() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance instance;
    VK_CHECK(vkCreateInstance(&ici, nullptr, &instance));
    uint32_t count = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
    std::vector<VkPhysicalDevice> devices(count);
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, devices.data()));
    uint32_t index = 0;
    if (const char* env = std::getenv("VKAPP_DEVICE_INDEX")) index = uint32_t(std::atoi(env));
    if (index >= count) {
        std::fprintf(stderr, "layout_probe: no Vulkan device %u\n", index);
        std::exit(2);
    }
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(devices[index], &props);
    vkDestroyInstance(instance, nullptr);
    return props;
}

int run_parent(std::string report_dir) {
    // Children name their layers themselves; nothing else may slip in.
    unsetenv("VK_INSTANCE_LAYERS");
    unsetenv("VK_LOADER_LAYERS_ENABLE");
    setenv("DISABLE_SLIPSTREAM", "1", 1);
    std::string layer_path = SLIPSTREAM_TEST_LAYER_DIR;
    if (const char* add = std::getenv("VK_ADD_LAYER_PATH")) layer_path += std::string(":") + add;
    setenv("VK_ADD_LAYER_PATH", layer_path.c_str(), 1);
    if (report_dir.empty()) {
        char tmpl[] = "/tmp/layout_probe.XXXXXX";
        if (!mkdtemp(tmpl)) {
            std::perror("layout_probe: mkdtemp");
            return 2;
        }
        report_dir = tmpl;
    } else {
        std::string cmd = "mkdir -p '" + report_dir + "'";
        if (std::system(cmd.c_str()) != 0) return 2;
    }

    const VkPhysicalDeviceMemoryProperties real = real_memory_properties();
    print_layout("real memory layout", real);
    char real_digest[32];
    std::snprintf(real_digest, sizeof real_digest, "%016" PRIx64, digest(real));
    setenv("PROBE_REAL_TYPE_COUNT", std::to_string(real.memoryTypeCount).c_str(), 1);
    if (!instance_layer_present(kTestLayer)) {
        std::fprintf(stderr, "layout_probe: %s not found (VK_ADD_LAYER_PATH=%s)\n", kTestLayer, layer_path.c_str());
        return 1;
    }
    const bool validation = instance_layer_present(kValidation);

    const std::string only_test = kTestLayer;
    const std::pair<std::string, std::string> sync{
        "VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"};
    std::vector<Scenario> scenarios;
    for (const MemoryLayout& l : memory_layouts())
        scenarios.push_back({std::string("layout:") + l.name,
                             {{"VK_INSTANCE_LAYERS", only_test}, {"SLIPSTREAM_TEST_MEMORY_LAYOUT", l.name}}, ""});
    // The first layer VK_INSTANCE_LAYERS names should be the one nearest the application, but
    // the loader 1.3.239 of Debian 12 orders env-enabled layers by where it found their manifests
    // (Vulkan-Loader issue #1168, fixed in later loaders). So each scenario also sets
    // VK_LAYER_PATH in the same order, and check_validation_position proves the result.
    const std::string validation_dir = validation ? validation_manifest_dir() : "";
    if (!validation_dir.empty()) {
        for (const MemoryLayout& l : memory_layouts()) {
            scenarios.push_back({std::string("validation-below:") + l.name,
                                 {{"VK_INSTANCE_LAYERS", only_test + ":" + kValidation},
                                  {"VK_LAYER_PATH", std::string(SLIPSTREAM_TEST_LAYER_DIR) + ":" + validation_dir},
                                  {"SLIPSTREAM_TEST_MEMORY_LAYOUT", l.name}, {"PROBE_VALIDATION", "below"}, sync},
                                 "", {"VK_ADD_LAYER_PATH"}});
            scenarios.push_back({std::string("validation-above:") + l.name,
                                 {{"VK_INSTANCE_LAYERS", std::string(kValidation) + ":" + only_test},
                                  {"VK_LAYER_PATH", validation_dir + ":" + SLIPSTREAM_TEST_LAYER_DIR},
                                  {"SLIPSTREAM_TEST_MEMORY_LAYOUT", l.name}, {"PROBE_VALIDATION", "above"}, sync},
                                 "", {"VK_ADD_LAYER_PATH"}});
        }
    } else {
        std::printf("%s not found: validation scenarios skipped\n", kValidation);
    }
    scenarios.push_back({"heap-limit",
                         {{"VK_INSTANCE_LAYERS", only_test},
                          {"SLIPSTREAM_TEST_MEMORY_LAYOUT", "nvidia-bar"},
                          {"SLIPSTREAM_TEST_HEAP_LIMIT", "2:1M, x:y"}},
                         "ignoring SLIPSTREAM_TEST_HEAP_LIMIT entry 'x:y'"});
    scenarios.push_back({"fail-type",
                         {{"VK_INSTANCE_LAYERS", only_test},
                          {"SLIPSTREAM_TEST_MEMORY_LAYOUT", "nvidia-bar"},
                          {"SLIPSTREAM_TEST_FAIL_TYPE", "3"}},
                         ""});
    scenarios.push_back({"unknown-layout",
                         {{"VK_INSTANCE_LAYERS", only_test},
                          {"SLIPSTREAM_TEST_MEMORY_LAYOUT", "no-such-layout"},
                          {"PROBE_REAL_DIGEST", real_digest}},
                         "unknown SLIPSTREAM_TEST_MEMORY_LAYOUT 'no-such-layout'"});

    int failed = 0;
    for (Scenario& s : scenarios) {
        std::string file = s.name;
        for (char& c : file)
            if (c == ':') c = '_';
        const std::string report = report_dir + "/" + file + ".json";
        const std::string log = report_dir + "/" + file + ".stderr";
        std::remove(report.c_str());
        s.env.push_back({"SLIPSTREAM_TEST_MEMORY_REPORT", report});
        std::fflush(stdout);
        const int code = spawn_child(s, log);
        const std::string err = read_file(log);
        bool ok = code == 0;
        if (!s.stderr_must_contain.empty() && err.find(s.stderr_must_contain) == std::string::npos) {
            std::fprintf(stderr, "layout_probe: FAIL: stderr of %s lacks \"%s\"\n", s.name.c_str(),
                         s.stderr_must_contain.c_str());
            ok = false;
        }
        if (!err.empty()) std::fprintf(stderr, "--- stderr of %s ---\n%s", s.name.c_str(), err.c_str());
        std::printf("%s %s (exit %d, report %s)\n", ok ? "PASS" : "FAIL", s.name.c_str(), code, report.c_str());
        failed += ok ? 0 : 1;
    }
    std::printf("%zu scenarios, %d failed\n", scenarios.size(), failed);
    return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return run_child(argv[2]);
    std::string report_dir;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--report-dir") == 0 && i + 1 < argc) {
            report_dir = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--report-dir DIR] | --child SCENARIO\n", argv[0]);
            return 2;
        }
    }
    return run_parent(report_dir);
}
