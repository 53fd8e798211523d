// slipstream-memory-types: CPU read and write bandwidth of every host-visible memory type, so
// the memory a readback lands in can be judged by numbers. Allocates --mib MiB of each type
// (no layer involvement matters: run it with the layer off), writes it, reads it back.
#include "vk_app.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    VkDeviceSize mib = 16;
    if (argc > 2 && !std::strcmp(argv[1], "--mib")) mib = VkDeviceSize(std::atoi(argv[2]));
    const VkDeviceSize bytes = mib << 20;
    vkapp::Context ctx = vkapp::create_context("slipstream-memory-types");
    const VkPhysicalDeviceMemoryProperties& mp = ctx.memory_properties;
    std::printf("%-5s %-6s %-56s %12s %12s\n", "type", "heap", "flags", "write GB/s", "read GB/s");
    std::vector<uint64_t> sink(bytes / 8);
    for (uint32_t t = 0; t < mp.memoryTypeCount; ++t) {
        const VkMemoryPropertyFlags f = mp.memoryTypes[t].propertyFlags;
        std::string flags;
        const std::pair<VkMemoryPropertyFlags, const char*> names[] = {
            {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"}, {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
            {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"}, {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"}};
        for (auto& [bit, name] : names)
            if (f & bit) flags += (flags.empty() ? "" : "|") + std::string(name);
        if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
            std::printf("%-5u %-6u %-56s %12s %12s\n", t, mp.memoryTypes[t].heapIndex, flags.empty() ? "none" : flags.c_str(), "-", "-");
            continue;
        }
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = bytes;
        mai.memoryTypeIndex = t;
        VkDeviceMemory memory;
        if (vkAllocateMemory(ctx.device, &mai, nullptr, &memory) != VK_SUCCESS) {
            std::printf("%-5u allocation of %llu MiB failed\n", t, (unsigned long long)mib);
            continue;
        }
        void* p;
        VK_CHECK(vkMapMemory(ctx.device, memory, 0, VK_WHOLE_SIZE, 0, &p));
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = memory;
        range.size = VK_WHOLE_SIZE;
        auto t0 = std::chrono::steady_clock::now();
        std::memset(p, 0x5a, bytes);
        if (!(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) VK_CHECK(vkFlushMappedMemoryRanges(ctx.device, 1, &range));
        double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) VK_CHECK(vkInvalidateMappedMemoryRanges(ctx.device, 1, &range));
        t0 = std::chrono::steady_clock::now();
        std::memcpy(sink.data(), p, bytes);  // what a readback does
        double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (sink[bytes / 16] != 0x5a5a5a5a5a5a5a5aull) std::printf("type %u: read back wrong data\n", t);
        std::printf("%-5u %-6u %-56s %12.3f %12.3f\n", t, mp.memoryTypes[t].heapIndex, flags.c_str(),
                    double(bytes) / write_s / 1e9, double(bytes) / read_s / 1e9);
        vkUnmapMemory(ctx.device, memory);
        vkFreeMemory(ctx.device, memory, nullptr);
    }
    return vkapp::finish(ctx, 0);
}
