// fresh_memory: the allocation lifetimes of naive compute runtimes, which make a VkDeviceMemory
// per tensor, per staging upload and per readback (and what the layer's allocation cache,
// VK_SLIPSTREAM_ALLOC_CACHE, must keep right when it hands freed memory out again).
//   per_operation  for each of 60 operations of varied sizes (4 KiB .. 1 MiB, some not a
//                  multiple of 64): a staging buffer in its own host-visible allocation, written
//                  through a mapping; a device buffer in its own device-local allocation, filled
//                  from the staging buffer and partly by vkCmdFillBuffer; a readback buffer in
//                  its own host-visible allocation, copied into and read; all freed (a third of
//                  the staging allocations still mapped: vkFreeMemory unmaps them);
//   many_alive     24 allocations alive at once, written, freed in another order, allocated
//                  again and checked.
// With --expect-zero (the layer's runs with ALLOC_CACHE_ZERO on) every new allocation must read
// zeros once the cache is warm (each size freed before: the layer serves it from the cache):
// host-visible ones through a mapping, device-local ones through a copy to the host. Before,
// the driver serves them, and lavapipe itself hands out old contents (slipstream-fresh-memory).
// Prints nothing but a failure; the checksum covers every value read back (not the zero checks).
#include "suite_util.h"
#include "vk_app.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace {

// Mapped only when a check maps it (Rig::map).
using Allocation = vkapp::Buffer;

struct Rig {
    vkapp::Context& ctx;
    bool expect_zero;
    bool warm = false;  // every size asked for next was freed before
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    uint64_t checksum = 1469598103934665603ull;
    bool ok = true;
    std::map<std::pair<VkBufferUsageFlags, VkMemoryPropertyFlags>, uint32_t> types;  // type_for's answers

    Rig(vkapp::Context& c, bool zero) : ctx(c), expect_zero(zero) {
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        cb = suite::allocate_command_buffers(ctx, pool, 1)[0];
        fence = suite::create_fence(ctx);
    }
    ~Rig() {
        vkDestroyFence(ctx.device, fence, nullptr);
        vkDestroyCommandPool(ctx.device, pool, nullptr);
    }

    void fail(const char* what, const char* detail) {
        std::fprintf(stderr, "fresh_memory: %s: %s\n", what, detail);
        ok = false;
    }

    // A buffer of `size` bytes in an allocation of its own, of the first type with `flags`
    // (else the first the buffer allows).
    Allocation allocate(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags flags) {
        return vkapp::create_buffer_of_type(ctx, size, usage, type_for(usage, flags), vkapp::Map::no);
    }
    uint32_t type_for(VkBufferUsageFlags usage, VkMemoryPropertyFlags flags) {
        auto [it, added] = types.try_emplace({usage, flags}, 0);
        if (added) {
            const uint32_t bits = vkapp::buffer_memory_type_bits(ctx, usage);
            int type = vkapp::find_memory_type(ctx.memory_properties, bits, flags);
            if (type < 0) type = vkapp::find_memory_type(ctx.memory_properties, bits, 0);
            it->second = uint32_t(type);
        }
        return it->second;
    }
    bool host_visible(const Allocation& a) const {
        return ctx.memory_properties.memoryTypes[a.memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    }
    bool coherent(const Allocation& a) const {
        return ctx.memory_properties.memoryTypes[a.memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    }
    void* map(Allocation& a) {
        if (!a.mapped) VK_CHECK(vkMapMemory(ctx.device, a.memory, 0, VK_WHOLE_SIZE, 0, &a.mapped));
        return a.mapped;
    }
    void unmap(Allocation& a) {
        if (a.mapped) vkUnmapMemory(ctx.device, a.memory);
        a.mapped = nullptr;
    }
    void range(Allocation& a, bool flush) {
        if (coherent(a)) return;
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        r.memory = a.memory;
        r.size = VK_WHOLE_SIZE;
        if (flush) VK_CHECK(vkFlushMappedMemoryRanges(ctx.device, 1, &r));
        else VK_CHECK(vkInvalidateMappedMemoryRanges(ctx.device, 1, &r));
    }
    // Frees with the buffer; leaves a mapping for vkFreeMemory to end where `leave_mapped`.
    void release(Allocation& a, bool leave_mapped = false) {
        vkDestroyBuffer(ctx.device, a.buffer, nullptr);
        if (!leave_mapped) unmap(a);
        vkFreeMemory(ctx.device, a.memory, nullptr);
        a = Allocation{};
    }

    template <typename F>
    void run(F&& record) {
        suite::begin(cb);
        record(cb);
        VK_CHECK(vkEndCommandBuffer(cb));
        suite::submit(ctx.queue, cb, fence);
        suite::wait_fence(ctx, fence);
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
    }

    void check_zero_host(const char* what, Allocation& a) {
        if (!expect_zero || !warm) return;
        map(a);
        range(a, false);
        const auto* bytes = static_cast<const uint8_t*>(a.mapped);
        if (std::any_of(bytes, bytes + a.size, [](uint8_t b) { return b != 0; })) fail(what, "new host-visible memory is not zeros");
    }
    // Device memory read through a copy into a host-visible buffer.
    void check_zero_device(const char* what, Allocation& a) {
        if (!expect_zero || !warm) return;
        if (host_visible(a)) {
            check_zero_host(what, a);
            unmap(a);
        }
        Allocation probe = allocate(a.size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        // The probe itself may be recycled memory: known nonzero first, so a zero result is the copy's.
        std::memset(map(probe), 0xee, size_t(probe.size));
        range(probe, true);
        run([&](VkCommandBuffer c) {
            VkBufferCopy copy{0, 0, a.size};
            vkCmdCopyBuffer(c, a.buffer, probe.buffer, 1, &copy);
            vkapp::barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        });
        range(probe, false);
        const auto* bytes = static_cast<const uint8_t*>(probe.mapped);
        if (std::any_of(bytes, bytes + a.size, [](uint8_t b) { return b != 0; })) fail(what, "new device memory is not zeros");
        release(probe);
    }
};

constexpr VkDeviceSize kSizes[] = {4096, 65536, 60 * 1024 + 4, 200 * 1024, 1 << 20, 12 * 1024 + 36};

void per_operation(Rig& rig) {
    const VkMemoryPropertyFlags device_local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    for (uint32_t i = 0; i < 60; ++i) {
        rig.warm = i >= std::size(kSizes);  // the first round of sizes fills the cache
        const VkDeviceSize size = kSizes[i % std::size(kSizes)] & ~VkDeviceSize(3);
        const uint32_t words = uint32_t(size / 4);
        // Upload.
        Allocation staging = rig.allocate(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
        rig.check_zero_host("per_operation staging", staging);
        auto* up = static_cast<uint32_t*>(rig.map(staging));
        for (uint32_t w = 0; w < words; ++w) up[w] = i * 0x9e3779b9u + w;
        rig.range(staging, true);
        Allocation device = rig.allocate(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                         device_local);
        rig.check_zero_device("per_operation device", device);
        Allocation readback = rig.allocate(size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        rig.check_zero_host("per_operation readback", readback);
        rig.unmap(readback);
        const VkDeviceSize fill_at = (size / 2) & ~VkDeviceSize(3);
        rig.run([&](VkCommandBuffer c) {
            VkBufferCopy copy{0, 0, size};
            vkCmdCopyBuffer(c, staging.buffer, device.buffer, 1, &copy);
            vkapp::barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
            vkCmdFillBuffer(c, device.buffer, fill_at, 256, 0xc0de0000u + i);
            vkapp::barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_ACCESS_TRANSFER_READ_BIT);
            vkCmdCopyBuffer(c, device.buffer, readback.buffer, 1, &copy);
            vkapp::barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        });
        const auto* got = static_cast<const uint32_t*>(rig.map(readback));
        rig.range(readback, false);
        std::vector<uint32_t> want(words);
        for (uint32_t w = 0; w < words; ++w)
            want[w] = w >= fill_at / 4 && w < fill_at / 4 + 64 ? 0xc0de0000u + i : i * 0x9e3779b9u + w;
        if (!suite::compare_words("per_operation", got, want.data(), words)) rig.ok = false;
        rig.checksum = vkapp::fnv1a(got, size_t(size), rig.checksum);
        rig.release(readback, i % 2 == 0);
        rig.release(device);
        rig.release(staging, i % 3 == 0);
    }
}

void many_alive(Rig& rig) {
    constexpr uint32_t kCount = 24;
    for (uint32_t round = 0; round < 2; ++round) {
        rig.warm = round == 1;  // round 0's sizes, freed
        std::vector<Allocation> alive;
        for (uint32_t i = 0; i < kCount; ++i) {
            const VkDeviceSize size = 4096 * (1 + i % 5);
            alive.push_back(rig.allocate(size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory));
            rig.check_zero_host("many_alive", alive.back());
            auto* p = static_cast<uint32_t*>(rig.map(alive.back()));
            for (uint32_t w = 0; w < size / 4; ++w) p[w] = round * 0x10000u + i * 0x100u + (w & 0xff);
            rig.range(alive.back(), true);
        }
        // Every allocation still holds its own contents while the others live.
        for (uint32_t i = 0; i < kCount; ++i) {
            Allocation& a = alive[(i * 7) % kCount];
            rig.range(a, false);
            rig.checksum = vkapp::fnv1a(a.mapped, size_t(a.size), rig.checksum);
        }
        for (uint32_t i = 0; i < kCount; ++i) rig.release(alive[(i * 5 + 3) % kCount], i % 2 == 0);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool expect_zero = suite::has_flag(argc, argv, "--expect-zero");
    const uint32_t scale = suite::parse_scale(argc, argv, "--expect-zero");
    vkapp::Context ctx = vkapp::create_context("fresh_memory");
    uint64_t checksum = 0;
    bool ok = true;
    {
        Rig rig(ctx, expect_zero);
        for (uint32_t s = 0; s < scale; ++s) {
            per_operation(rig);
            many_alive(rig);
        }
        // Every program of the suite ends with a device wait on a queue the layer knows is idle.
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
        checksum = rig.checksum;
        ok = rig.ok;
    }
    return vkapp::finish_checked(ctx, ok, checksum);
}
