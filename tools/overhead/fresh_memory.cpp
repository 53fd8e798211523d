// slipstream-fresh-memory: what a fresh vkAllocateMemory holds, per memory type (issue 22:
// the allocation cache hands recycled memory out again, and whether it must zero it first
// depends on what drivers do). For every memory type and size, the tool first allocates a few
// allocations, fills them with a pattern and frees them, so that the driver has pages to hand
// back; then it allocates as many again and reads them: host-visible types through a mapping,
// the others through a buffer bound to the allocation and vkCmdCopyBuffer into a host-visible
// buffer. A type is "zeroed" when every fresh allocation read back all zeros.
//
// Needs no layer; under VK_LAYER_slipstream it measures what the layer hands out instead
// (with VK_SLIPSTREAM_ALLOC_CACHE_ZERO=off, recycled memory keeps the pattern).
//   --count N   allocations per type and size in each round (default 4)
//   --via-copy  read host-visible types through the copy too (tests the device-local path)
//   --require-zero  exit 1 unless every type tested read back zeros (the layer's tests)
// Prints a table and one JSON line.
#include "vk_app.h"

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr VkDeviceSize kSizes[] = {4 << 10, 64 << 10, 1 << 20, 4 << 20};
constexpr uint32_t kPattern = 0xa5c3f00du;

struct Tool {
    vkapp::Context& ctx;
    VkCommandPool pool = VK_NULL_HANDLE;
    vkapp::Buffer staging;  // host-visible, the largest size: the copy path's destination

    explicit Tool(vkapp::Context& c) : ctx(c) {
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
        staging = vkapp::create_buffer(ctx, kSizes[std::size(kSizes) - 1], VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    }
    ~Tool() {
        vkapp::destroy_buffer(ctx, staging);
        vkDestroyCommandPool(ctx.device, pool, nullptr);
    }

    // A transfer buffer over the whole allocation; null when its type does not take buffers.
    VkBuffer buffer_on(VkDeviceMemory memory, uint32_t type, VkDeviceSize size) {
        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = size;
        bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        VkBuffer buffer;
        VK_CHECK(vkCreateBuffer(ctx.device, &bi, nullptr, &buffer));
        VkMemoryRequirements reqs;
        vkGetBufferMemoryRequirements(ctx.device, buffer, &reqs);
        if (!(reqs.memoryTypeBits >> type & 1u) || reqs.size > size) {
            vkDestroyBuffer(ctx.device, buffer, nullptr);
            return VK_NULL_HANDLE;
        }
        VK_CHECK(vkBindBufferMemory(ctx.device, buffer, memory, 0));
        return buffer;
    }

    // Fills `memory` with the pattern; false when it cannot (no buffer fits the type).
    bool fill(VkDeviceMemory memory, uint32_t type, VkDeviceSize size, bool host) {
        if (host) {
            void* p;
            VK_CHECK(vkMapMemory(ctx.device, memory, 0, VK_WHOLE_SIZE, 0, &p));
            auto* words = static_cast<uint32_t*>(p);
            for (VkDeviceSize i = 0; i < size / 4; ++i) words[i] = kPattern;
            flush_if_needed(memory, type);
            vkUnmapMemory(ctx.device, memory);
            return true;
        }
        VkBuffer buffer = buffer_on(memory, type, size);
        if (!buffer) return false;
        vkapp::one_shot(ctx, pool, [&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, buffer, 0, size, kPattern); });
        vkDestroyBuffer(ctx.device, buffer, nullptr);
        return true;
    }

    // What a fresh allocation holds: 0 all zeros, 1 the pattern somewhere, 2 other bytes,
    // -1 unreadable.
    int read(VkDeviceMemory memory, uint32_t type, VkDeviceSize size, bool host) {
        std::vector<uint32_t> words(size / 4);
        if (host) {
            void* p;
            VK_CHECK(vkMapMemory(ctx.device, memory, 0, VK_WHOLE_SIZE, 0, &p));
            const bool coherent =
                ctx.memory_properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
            if (!coherent) {
                VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
                range.memory = memory;
                range.size = VK_WHOLE_SIZE;
                VK_CHECK(vkInvalidateMappedMemoryRanges(ctx.device, 1, &range));
            }
            std::memcpy(words.data(), p, size);
            vkUnmapMemory(ctx.device, memory);
        } else {
            VkBuffer buffer = buffer_on(memory, type, size);
            if (!buffer) return -1;
            vkapp::one_shot(ctx, pool, [&](VkCommandBuffer cb) {
                VkBufferCopy copy{0, 0, size};
                vkCmdCopyBuffer(cb, buffer, staging.buffer, 1, &copy);
                vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
            });
            vkDestroyBuffer(ctx.device, buffer, nullptr);
            std::memcpy(words.data(), staging.mapped, size);
        }
        int verdict = 0;
        for (uint32_t w : words) {
            if (w == kPattern) return 1;
            if (w) verdict = 2;
        }
        return verdict;
    }

    void flush_if_needed(VkDeviceMemory memory, uint32_t type) {
        if (ctx.memory_properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) return;
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = memory;
        range.size = VK_WHOLE_SIZE;
        VK_CHECK(vkFlushMappedMemoryRanges(ctx.device, 1, &range));
    }
};

std::string flag_text(VkMemoryPropertyFlags f) {
    const std::pair<VkMemoryPropertyFlags, const char*> names[] = {
        {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"}, {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
        {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"}, {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
        {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"}, {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"}};
    std::string s;
    for (auto& [bit, name] : names)
        if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
    return s.empty() ? "none" : s;
}

struct TypeResult {
    uint32_t type = 0, heap = 0;
    std::string flags, path, skipped;
    uint32_t tested = 0, zero = 0, pattern = 0, other = 0, failed = 0;
    uint32_t size_tested[std::size(kSizes)] = {}, size_zero[std::size(kSizes)] = {};
};

std::string size_text(VkDeviceSize s) {
    return s >= (1 << 20) ? std::to_string(s >> 20) + "M" : std::to_string(s >> 10) + "K";
}

}  // namespace

int main(int argc, char** argv) {
    uint32_t count = 4;
    bool via_copy = false, require_zero = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--count") && i + 1 < argc) count = uint32_t(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--via-copy")) via_copy = true;
        else if (!std::strcmp(argv[i], "--require-zero")) require_zero = true;
        else {
            std::fprintf(stderr, "usage: %s [--count N] [--via-copy] [--require-zero]\n", argv[0]);
            return 2;
        }
    }
    if (count < 1 || count > 64) {
        std::fprintf(stderr, "--count must be between 1 and 64\n");
        return 2;
    }
    vkapp::Context ctx = vkapp::create_context("slipstream-fresh-memory");
    std::vector<TypeResult> results;
    {
        Tool tool(ctx);
        const VkPhysicalDeviceMemoryProperties& mp = ctx.memory_properties;
        for (uint32_t t = 0; t < mp.memoryTypeCount; ++t) {
            TypeResult r;
            r.type = t;
            r.heap = mp.memoryTypes[t].heapIndex;
            const VkMemoryPropertyFlags f = mp.memoryTypes[t].propertyFlags;
            r.flags = flag_text(f);
            const bool host = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && !via_copy;
            r.path = host ? "map" : "copy";
            if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT))
                r.skipped = "protected or lazily allocated";
            for (size_t si = 0; si < std::size(kSizes); ++si) {
                const VkDeviceSize size = kSizes[si];
                if (!r.skipped.empty()) break;
                if (mp.memoryHeaps[r.heap].size < 64 * size * count) continue;  // leave small heaps alone
                VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
                ai.allocationSize = size;
                ai.memoryTypeIndex = t;
                // Round 1: used memory, freed. Round 2: fresh memory, read.
                for (int round = 0; round < 2 && r.skipped.empty(); ++round) {
                    std::vector<VkDeviceMemory> mems;
                    for (uint32_t i = 0; i < count; ++i) {
                        VkDeviceMemory m;
                        if (vkAllocateMemory(ctx.device, &ai, nullptr, &m) != VK_SUCCESS) {
                            ++r.failed;
                            continue;
                        }
                        mems.push_back(m);
                    }
                    for (VkDeviceMemory m : mems) {
                        if (round == 0) {
                            if (!tool.fill(m, t, size, host)) r.skipped = "no buffer takes this type";
                            continue;
                        }
                        const int verdict = tool.read(m, t, size, host);
                        if (verdict >= 0) ++r.size_tested[si];
                        switch (verdict) {
                            case 0:
                                ++r.zero;
                                ++r.size_zero[si];
                                break;
                            case 1: ++r.pattern; break;
                            case 2: ++r.other; break;
                            default: r.skipped = "no buffer takes this type"; break;
                        }
                        ++r.tested;
                    }
                    for (VkDeviceMemory m : mems) vkFreeMemory(ctx.device, m, nullptr);
                }
            }
            results.push_back(r);
        }
    }
    std::printf("%-5s %-5s %-44s %-5s %7s %6s %8s %6s  %-30s %s\n", "type", "heap", "flags", "path", "tested", "zero",
                "pattern", "other", "zeroed/tested by size", "fresh memory");
    bool all_zero = true;
    std::string json = "{\"tool\":\"fresh-memory\",\"device\":\"" + std::string(ctx.properties.deviceName) +
                       "\",\"driver_version\":" + std::to_string(ctx.properties.driverVersion) +
                       ",\"count\":" + std::to_string(count) + ",\"types\":[";
    for (size_t i = 0; i < results.size(); ++i) {
        const TypeResult& r = results[i];
        const bool tested = r.skipped.empty() && r.tested > 0;
        const bool zeroed = tested && r.zero == r.tested;
        if (tested && !zeroed) all_zero = false;
        const char* verdict = !tested ? (r.skipped.empty() ? "not tested" : r.skipped.c_str())
                              : zeroed ? "zeroed"
                                       : (r.pattern ? "NOT zeroed (recycled contents)" : "NOT zeroed");
        std::string by_size, by_size_json;
        for (size_t si = 0; si < std::size(kSizes); ++si) {
            if (!r.size_tested[si]) continue;
            by_size += size_text(kSizes[si]) + ":" + std::to_string(r.size_zero[si]) + "/" +
                       std::to_string(r.size_tested[si]) + " ";
            by_size_json += std::string(by_size_json.empty() ? "" : ",") + "\"" + std::to_string(kSizes[si]) +
                            "\":[" + std::to_string(r.size_zero[si]) + "," + std::to_string(r.size_tested[si]) + "]";
        }
        std::printf("%-5u %-5u %-44s %-5s %7u %6u %8u %6u  %-30s %s\n", r.type, r.heap, r.flags.c_str(),
                    r.path.c_str(), r.tested, r.zero, r.pattern, r.other, by_size.c_str(), verdict);
        json += std::string(i ? "," : "") + "{\"type\":" + std::to_string(r.type) + ",\"heap\":" + std::to_string(r.heap) +
                ",\"flags\":\"" + r.flags + "\",\"path\":\"" + r.path + "\",\"tested\":" + std::to_string(r.tested) +
                ",\"zero\":" + std::to_string(r.zero) + ",\"pattern\":" + std::to_string(r.pattern) +
                ",\"other\":" + std::to_string(r.other) + ",\"alloc_failures\":" + std::to_string(r.failed) + ",\"zero_by_size\":{" + by_size_json + "}" +
                ",\"zeroed\":" + (tested ? (zeroed ? "true" : "false") : "null") + "}";
    }
    json += std::string("],\"all_zeroed\":") + (all_zero ? "true" : "false") + "}";
    std::printf("%s\n", json.c_str());
    vkapp::destroy_context(ctx);
    if (require_zero && !all_zero) std::fprintf(stderr, "slipstream-fresh-memory: fresh memory was not all zeros\n");
    return vkapp::g_validation_messages.load() || (require_zero && !all_zero) ? 1 : 0;
}
