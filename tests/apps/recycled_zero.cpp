// recycled_zero: device-local memory freed after the GPU wrote it, allocated again and read
// back: with the layer's allocation cache zeroing (VK_SLIPSTREAM_ALLOC_CACHE_ZERO on), the
// recycled allocation must read zeros, and memory the host cannot map is zeroed by a fill of the
// layer's that runs ahead of the application's next submission (objects/zero_fill.h).
//
// Memory: the first type with DEVICE_LOCAL and without HOST_VISIBLE for a storage/transfer
// buffer, else the first DEVICE_LOCAL one (lavapipe has only host-visible memory; the suite runs
// this program under the memory-layout test layer's "nvidia-bar" layout, which presents a
// device-local-only type, so that the GPU fill really runs there).
//
// Per round, for sizes 4 KiB .. 1 MiB:
//   garbage   allocate, bind a buffer, vkCmdFillBuffer a pattern over it (the GPU writes it),
//             wait, destroy the buffer, free the memory;
//   again     allocate the same size and type (the cache's hit), copy it to host memory, check
//             zeros (with --expect-zero), then fill a known pattern, copy and checksum it.
// Also: several allocations handed out before one submission (one fill each, in one submission
// of the layer's), one freed and allocated again before any submission (still one fill), the
// copy made with vkQueueSubmit2, and, where the device has a second queue, the fill left behind
// on the first queue by an unrelated submission there while the copy goes on the second (the
// layer must make the second queue wait). One queue only (lavapipe): that case says so and is
// skipped. Last, threads: one submits short fills of a buffer of its own on queue 0 while
// another allocates and frees device-local memory of varied sizes without submitting (the
// layer's fills and its trims under a small bound, ALLOC_CACHE_MIB, race each other). Prints the cases it ran, a failure, or nothing else; the checksum covers the known
// patterns read back (never the zero checks, which only the layer's runs can pass on lavapipe).
#include "suite_util.h"
#include "vk_app.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;

// A device buffer in an allocation of its own (never mapped).
using Device = vkapp::Buffer;

struct Rig {
    vkapp::Context& ctx;
    bool expect_zero;
    uint32_t type = 0;
    VkCommandPool pools[2] = {};
    VkFence fence = VK_NULL_HANDLE;
    vkapp::Buffer host;  // readback, 1 MiB
    uint64_t checksum = 1469598103934665603ull;
    bool ok = true;
    PFN_vkQueueSubmit2 submit2 = nullptr;

    Rig(vkapp::Context& c, bool zero) : ctx(c), expect_zero(zero) {
        for (size_t q = 0; q < 2 && q < ctx.queues.size(); ++q) {
            VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
            pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
            pci.queueFamilyIndex = ctx.queue_families[q];
            VK_CHECK(vkCreateCommandPool(ctx.device, &pci, nullptr, &pools[q]));
        }
        fence = suite::create_fence(ctx);
        host = vkapp::create_buffer(ctx, VkDeviceSize(1) << 20, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                    suite::kHostMemory);
        submit2 = reinterpret_cast<PFN_vkQueueSubmit2>(vkGetDeviceProcAddr(ctx.device, "vkQueueSubmit2"));
        // The memory type of the device buffers.
        const uint32_t bits = vkapp::buffer_memory_type_bits(ctx, kUsage);
        int t = -1;
        for (uint32_t i = 0; i < ctx.memory_properties.memoryTypeCount && t < 0; ++i) {
            const VkMemoryPropertyFlags f = ctx.memory_properties.memoryTypes[i].propertyFlags;
            if ((bits & (1u << i)) && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
                !(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
                t = int(i);
        }
        std::printf("device-local-only type: %s\n", t >= 0 ? "yes" : "no (a host-visible one)");
        if (t < 0) t = vkapp::find_memory_type(ctx.memory_properties, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (t < 0) t = vkapp::find_memory_type(ctx.memory_properties, bits, 0);
        type = uint32_t(t);
    }
    ~Rig() {
        vkapp::destroy_buffer(ctx, host);
        vkDestroyFence(ctx.device, fence, nullptr);
        for (VkCommandPool p : pools)
            if (p) vkDestroyCommandPool(ctx.device, p, nullptr);
    }

    Device allocate(VkDeviceSize size) { return vkapp::create_buffer_of_type(ctx, size, kUsage, type, vkapp::Map::no); }
    void release(Device& d) { vkapp::destroy_buffer(ctx, d); }

    // Records `record` into a new command buffer of queue `q`'s pool, submits it there (with
    // vkQueueSubmit2 if asked) and waits for it.
    template <typename F>
    void run(size_t q, F&& record, bool use_submit2 = false) {
        VkCommandBuffer cb = suite::allocate_command_buffers(ctx, pools[q], 1)[0];
        suite::begin(cb);
        record(cb);
        VK_CHECK(vkEndCommandBuffer(cb));
        if (use_submit2 && submit2) {
            VkCommandBufferSubmitInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
            cbi.commandBuffer = cb;
            VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
            si.commandBufferInfoCount = 1;
            si.pCommandBufferInfos = &cbi;
            VK_CHECK(submit2(ctx.queues[q], 1, &si, fence));
        } else {
            suite::submit(ctx.queues[q], cb, fence);
        }
        suite::wait_fence(ctx, fence);
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        vkFreeCommandBuffers(ctx.device, pools[q], 1, &cb);
    }

    void fill(VkCommandBuffer cb, const Device& d, uint32_t word) {
        vkCmdFillBuffer(cb, d.buffer, 0, VK_WHOLE_SIZE, word);
    }

    // A copy of `d` into host memory, recorded after whatever `before` records.
    void copy_out(VkCommandBuffer cb, const Device& d) {
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
        VkBufferCopy copy{0, 0, d.size};
        vkCmdCopyBuffer(cb, d.buffer, host.buffer, 1, &copy);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
    }

    void check_zero(const char* what, const Device& d) {
        suite::invalidate(ctx, host);
        if (!expect_zero) return;
        const auto* words = static_cast<const uint32_t*>(host.mapped);
        for (VkDeviceSize i = 0; i < d.size / 4; ++i) {
            if (words[i] != 0) {
                std::fprintf(stderr, "recycled_zero: %s: word %llu of %llu reads 0x%08x, not zero\n", what,
                             static_cast<unsigned long long>(i), static_cast<unsigned long long>(d.size / 4), words[i]);
                ok = false;
                return;
            }
        }
    }

    // The known pattern, filled and read back into the checksum.
    void pattern(size_t q, const Device& d, uint32_t word) {
        run(q, [&](VkCommandBuffer cb) {
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_ACCESS_TRANSFER_WRITE_BIT);
            fill(cb, d, word);
            copy_out(cb, d);
        });
        suite::invalidate(ctx, host);
        checksum = vkapp::fnv1a(host.mapped, size_t(d.size), checksum);
    }

    // Allocates, lets the GPU write garbage, frees.
    void dirty(VkDeviceSize size, uint32_t garbage) {
        Device d = allocate(size);
        run(0, [&](VkCommandBuffer cb) { fill(cb, d, garbage); });
        release(d);
    }
};

void round_trip(Rig& rig, VkDeviceSize size, uint32_t n, bool use_submit2) {
    rig.dirty(size, 0xdead0000u + n);
    Device d = rig.allocate(size);
    rig.run(0, [&](VkCommandBuffer cb) { rig.copy_out(cb, d); }, use_submit2);
    rig.check_zero("recycled", d);
    rig.pattern(0, d, 0x01010101u * (n + 1));
    rig.release(d);
}

// Several handed out before one submission, one of them freed and handed out again first.
void several(Rig& rig) {
    const VkDeviceSize sizes[] = {16384, 65536, 262144};
    for (VkDeviceSize s : sizes) rig.dirty(s, 0xbad0bad0u);
    Device d[3];
    for (int i = 0; i < 3; ++i) d[i] = rig.allocate(sizes[i]);
    rig.release(d[1]);
    d[1] = rig.allocate(sizes[1]);
    for (int i = 0; i < 3; ++i) {
        rig.run(0, [&](VkCommandBuffer cb) { rig.copy_out(cb, d[i]); });
        rig.check_zero("several", d[i]);
    }
    for (Device& x : d) rig.release(x);
}

// The fill goes with an unrelated submission on queue 0; the copy follows on queue 1.
void two_queues(Rig& rig) {
    if (rig.ctx.queues.size() < 2) {
        std::printf("two-queue case skipped: the device gives one queue\n");
        return;
    }
    std::printf("two-queue case: queue families %u and %u\n", rig.ctx.queue_families[0], rig.ctx.queue_families[1]);
    for (uint32_t n = 0; n < 8; ++n) {
        const VkDeviceSize size = VkDeviceSize(65536) << (n % 3);
        rig.dirty(size, 0xfeed0000u + n);
        Device d = rig.allocate(size);
        Device other = rig.allocate(4096);
        rig.run(0, [&](VkCommandBuffer cb) { rig.fill(cb, other, 7); });  // carries the fill
        rig.run(1, [&](VkCommandBuffer cb) { rig.copy_out(cb, d); });
        rig.check_zero("second queue", d);
        rig.release(other);
        rig.release(d);
    }
}

// Submissions on one thread, allocations and frees on another.
void threads(Rig& rig) {
    Device scratch = rig.allocate(65536);
    std::atomic<bool> done{false};
    std::thread churn([&] {
        for (uint32_t i = 0; i < 400; ++i) {
            Device d = rig.allocate(VkDeviceSize(4096) << (i % 7));
            rig.release(d);
        }
        done.store(true);
    });
    uint32_t n = 0;
    while (!done.load() || n < 8) {
        rig.run(0, [&](VkCommandBuffer cb) { rig.fill(cb, scratch, n); });
        ++n;
    }
    churn.join();
    // What the scratch buffer holds last is known: n - 1.
    rig.run(0, [&](VkCommandBuffer cb) { rig.copy_out(cb, scratch); });
    suite::invalidate(rig.ctx, rig.host);
    const auto* words = static_cast<const uint32_t*>(rig.host.mapped);
    if (words[0] != n - 1 || words[scratch.size / 4 - 1] != n - 1) {
        std::fprintf(stderr, "recycled_zero: threads: the scratch buffer reads %u, not %u\n", words[0], n - 1);
        rig.ok = false;
    }
    rig.release(scratch);
}

}  // namespace

int main(int argc, char** argv) {
    const bool expect_zero = suite::has_flag(argc, argv, "--expect-zero");
    vkapp::ContextOptions options;
    options.queue_count = 2;
    options.every_compute_family = true;
    options.synchronization2 = true;
    vkapp::Context ctx = vkapp::create_context("recycled_zero", options);
    uint64_t checksum = 0;
    bool ok = true;
    {
        Rig rig(ctx, expect_zero);
        const VkDeviceSize sizes[] = {4096, 65536, 65536 + 4096, 262144, 1 << 20};
        uint32_t n = 0;
        for (int round = 0; round < 3; ++round)
            for (VkDeviceSize s : sizes) {
                round_trip(rig, s, n, n % 2 == 1);
                ++n;
            }
        several(rig);
        two_queues(rig);
        threads(rig);
        checksum = rig.checksum;
        ok = rig.ok;
    }
    return vkapp::finish_checked(ctx, ok, checksum);
}
