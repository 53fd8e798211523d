// Small helpers shared by the correctness-suite programs (tests/apps) on top of vk_app.
// Header-only; everything here is plain Vulkan.
#pragma once

#include "vk_app.h"
#include "rng.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace suite {

// True when the flag `name` is among the arguments.
inline bool has_flag(int argc, char** argv, const char* name) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return true;
    return false;
}

// Parses an optional `--scale N` (N >= 1, default 1). Unknown arguments are an error (exit 2),
// except the program's own `flag` when it has one, and --print-device (print_device).
inline uint32_t parse_scale(int argc, char** argv, const char* flag = nullptr) {
    uint32_t scale = 1;
    for (int i = 1; i < argc; ++i) {
        if ((flag && std::strcmp(argv[i], flag) == 0) || std::strcmp(argv[i], "--print-device") == 0) continue;
        if (std::strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            long v = std::strtol(argv[++i], nullptr, 10);
            if (v < 1 || v > 1000) {
                std::fprintf(stderr, "--scale must be between 1 and 1000\n");
                std::exit(2);
            }
            scale = uint32_t(v);
        } else {
            std::fprintf(stderr, "usage: %s [--scale N] [--print-device]%s%s\n", argv[0], flag ? " " : "",
                         flag ? flag : "");
            std::exit(2);
        }
    }
    return scale;
}

// With --print-device: prints `device: <name>` on stdout, for a test whose expectations are
// one driver's (run_app.py --skip-if "^device: (?!name)").
inline void print_device(int argc, char** argv, const vkapp::Context& ctx) {
    if (has_flag(argc, argv, "--print-device")) std::printf("device: %s\n", ctx.properties.deviceName);
}

using Rng = vkapp::Rng;

// A descriptor pool for `max_sets` sets of storage buffers only.
inline VkDescriptorPool create_storage_pool(vkapp::Context& ctx, uint32_t max_sets,
                                            uint32_t storage_descriptors,
                                            VkDescriptorPoolCreateFlags flags = 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, storage_descriptors};
    VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    ci.flags = flags;
    ci.maxSets = max_sets;
    ci.poolSizeCount = 1;
    ci.pPoolSizes = &size;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(ctx.device, &ci, nullptr, &pool));
    return pool;
}

inline VkDescriptorSet allocate_set(vkapp::Context& ctx, VkDescriptorPool pool,
                                    VkDescriptorSetLayout layout) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(ctx.device, &ai, &set));
    return set;
}

inline std::vector<VkCommandBuffer> allocate_command_buffers(vkapp::Context& ctx,
                                                             VkCommandPool pool, uint32_t count) {
    std::vector<VkCommandBuffer> cbs(count);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = count;
    VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, cbs.data()));
    return cbs;
}

inline void begin(VkCommandBuffer cb,
                  VkCommandBufferUsageFlags flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = flags;
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
}

inline VkFence create_fence(vkapp::Context& ctx, bool signaled = false) {
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fi.flags = signaled ? VK_FENCE_CREATE_SIGNALED_BIT : 0;
    VkFence fence;
    VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
    return fence;
}

inline VkSemaphore create_binary_semaphore(vkapp::Context& ctx) {
    VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore s;
    VK_CHECK(vkCreateSemaphore(ctx.device, &ci, nullptr, &s));
    return s;
}

// Submits one command buffer (no semaphores) with an optional fence.
inline void submit(VkQueue queue, VkCommandBuffer cb, VkFence fence = VK_NULL_HANDLE) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VK_CHECK(vkQueueSubmit(queue, 1, &si, fence));
}

inline void wait_fence(vkapp::Context& ctx, VkFence fence) {
    VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
}

// Makes device writes to a host-visible buffer visible to host reads when the memory is
// not host-coherent (the GPU side must already have a barrier to HOST/HOST_READ). With
// `always`, calls vkInvalidateMappedMemoryRanges even on coherent memory (valid, and a
// path a layer that redirects readback memory has to get right).
inline void invalidate(vkapp::Context& ctx, const vkapp::Buffer& b, bool always = false) {
    if (always || !(ctx.memory_properties.memoryTypes[b.memory_type].propertyFlags &
                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = b.memory;
        r.offset = 0;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkInvalidateMappedMemoryRanges(ctx.device, 1, &r));
    }
}

// Makes host writes to a host-visible buffer available when the memory is not coherent.
inline void flush(vkapp::Context& ctx, const vkapp::Buffer& b) {
    if (!(ctx.memory_properties.memoryTypes[b.memory_type].propertyFlags &
          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = b.memory;
        r.offset = 0;
        r.size = VK_WHOLE_SIZE;
        VK_CHECK(vkFlushMappedMemoryRanges(ctx.device, 1, &r));
    }
}

// Host-visible staging memory, coherent (the spec guarantees such a type exists).
constexpr VkMemoryPropertyFlags kHostMemory =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// Host-visible cached memory for readback if the device has such a type (it may be
// non-coherent: use invalidate()), else kHostMemory.
inline VkMemoryPropertyFlags cached_host_memory(const vkapp::Context& ctx) {
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    for (uint32_t i = 0; i < ctx.memory_properties.memoryTypeCount; ++i)
        if ((ctx.memory_properties.memoryTypes[i].propertyFlags & want) == want) return want;
    return kHostMemory;
}

// Compares two word arrays; prints the first few differences. Returns true if equal.
inline bool compare_words(const char* what, const uint32_t* got, const uint32_t* want,
                          size_t count) {
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
        if (got[i] != want[i]) {
            if (bad < 8)
                std::fprintf(stderr, "%s: word %zu is 0x%08x, expected 0x%08x\n", what, i, got[i],
                             want[i]);
            ++bad;
        }
    }
    if (bad) std::fprintf(stderr, "%s: %zu of %zu words differ\n", what, bad, count);
    return bad == 0;
}

}  // namespace suite
