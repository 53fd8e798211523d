// staging_roundtrip: host data -> host-visible staging buffer -> copy to a device-local
// buffer -> compute in place -> copy to a host-visible readback buffer -> host reads it.
//
// Sizes cycle H, 1.5H, 2H for three bases H (some not a multiple of 4 KiB, some not even a
// multiple of 4 bytes; the largest round is 3 MiB). Rounds are pipelined two deep: the
// upload of round k is submitted before the compute and readback of round k-1, and the
// buffers, descriptor set and command buffers of each round are destroyed as soon as its
// fence has been waited on and its data checked. Odd rounds read back through
// host-cached memory when the device has it, and call vkInvalidateMappedMemoryRanges
// whether or not the memory is coherent. Every round is compared with a CPU reference,
// including the tail bytes the shader does not touch.
#include "suite_util.h"
#include "vk_app.h"

#include "roundtrip_comp.h"

#include <cstring>
#include <vector>

namespace {

struct Round {
    uint32_t index = 0;
    VkDeviceSize bytes = 0;
    uint32_t seed = 0;
    std::vector<uint8_t> input;
    vkapp::Buffer staging, device, readback;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkCommandBuffer cbs[3] = {};  // upload, compute, readback
    VkFence fence = VK_NULL_HANDLE;
};

struct PushConstants {
    uint32_t n, seed;
};

std::vector<uint8_t> cpu_reference(const Round& r) {
    std::vector<uint8_t> out = r.input;
    const uint32_t n = uint32_t(r.bytes / 4);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t v;
        std::memcpy(&v, &out[size_t(i) * 4], 4);
        v = v * 2654435761u + (r.seed ^ i);
        v ^= v >> 15;
        std::memcpy(&out[size_t(i) * 4], &v, 4);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv);
    vkapp::Context ctx = vkapp::create_context("staging_roundtrip");

    // Byte sizes: for each base H the sizes H, 1.5H, 2H; the whole cycle twice per scale.
    const VkDeviceSize bases[] = {4101, 24580, 1572868};
    std::vector<VkDeviceSize> sizes;
    for (uint32_t rep = 0; rep < 2 * scale; ++rep)
        for (VkDeviceSize h : bases)
            for (VkDeviceSize s : {h, h + h / 2, 2 * h}) sizes.push_back(s);

    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(
        ctx, roundtrip_comp, sizeof(roundtrip_comp), 1, sizeof(PushConstants));
    VkDescriptorPool dpool =
        suite::create_storage_pool(ctx, 4, 4, VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT);
    VkCommandPool cpool = vkapp::create_command_pool(ctx);
    suite::Rng rng(0x57a61e6ull);

    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    bool ok = true;
    std::vector<Round> live;  // rounds in flight, oldest first

    auto start_round = [&](uint32_t index) {
        Round r;
        r.index = index;
        r.bytes = sizes[index];
        r.seed = rng.next32();
        r.input.resize(size_t(r.bytes));
        for (size_t i = 0; i < r.input.size(); ++i) r.input[i] = uint8_t(rng.next() >> 56);
        r.staging = vkapp::create_buffer(ctx, r.bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                         suite::kHostMemory);
        r.device = vkapp::create_buffer(ctx, r.bytes,
                                        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        // Odd rounds read back through cached memory (if any) and always invalidate.
        r.readback =
            vkapp::create_buffer(ctx, r.bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 index % 2 ? suite::cached_host_memory(ctx) : suite::kHostMemory);
        std::memcpy(r.staging.mapped, r.input.data(), r.input.size());
        suite::flush(ctx, r.staging);
        r.set = suite::allocate_set(ctx, dpool, pipe.set_layout);
        vkapp::write_storage_buffers(ctx, r.set, {r.device.buffer});
        std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, cpool, 3);
        for (int i = 0; i < 3; ++i) r.cbs[i] = cbs[size_t(i)];
        r.fence = suite::create_fence(ctx);

        const VkBufferCopy region{0, 0, r.bytes};
        // Upload: its own submission, made now.
        suite::begin(r.cbs[0]);
        vkCmdCopyBuffer(r.cbs[0], r.staging.buffer, r.device.buffer, 1, &region);
        VK_CHECK(vkEndCommandBuffer(r.cbs[0]));
        // Compute: waits for all earlier transfers on the queue.
        suite::begin(r.cbs[1]);
        vkapp::barrier(r.cbs[1], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        PushConstants pc{uint32_t(r.bytes / 4), r.seed};
        vkCmdBindPipeline(r.cbs[1], VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(r.cbs[1], VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &r.set,
                                0, nullptr);
        vkCmdPushConstants(r.cbs[1], pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
        vkCmdDispatch(r.cbs[1], (pc.n + 255) / 256, 1, 1);
        VK_CHECK(vkEndCommandBuffer(r.cbs[1]));
        // Readback: waits for all earlier compute on the queue, then hands over to the host.
        suite::begin(r.cbs[2]);
        vkapp::barrier(r.cbs[2], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        vkCmdCopyBuffer(r.cbs[2], r.device.buffer, r.readback.buffer, 1, &region);
        vkapp::barrier(r.cbs[2], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(r.cbs[2]));

        suite::submit(ctx.queue, r.cbs[0]);
        live.push_back(std::move(r));
    };

    auto launch_round = [&](Round& r) {
        suite::submit(ctx.queue, r.cbs[1]);
        suite::submit(ctx.queue, r.cbs[2], r.fence);
    };

    auto finish_round = [&](Round& r) {
        suite::wait_fence(ctx, r.fence);
        suite::invalidate(ctx, r.readback, r.index % 2 == 1);
        const auto* got = static_cast<const uint8_t*>(r.readback.mapped);
        std::vector<uint8_t> want = cpu_reference(r);
        if (std::memcmp(got, want.data(), want.size()) != 0) {
            size_t first = 0;
            while (got[first] == want[first]) ++first;
            size_t bad = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
            std::fprintf(stderr,
                         "staging_roundtrip: round %u (%llu bytes): %zu bytes differ, first at "
                         "%zu (got 0x%02x, expected 0x%02x)\n",
                         r.index, static_cast<unsigned long long>(r.bytes), bad, first, got[first],
                         want[first]);
            ok = false;
        }
        checksum = vkapp::fnv1a(got, size_t(r.bytes), checksum);
        // Free everything of this round right away.
        vkFreeCommandBuffers(ctx.device, cpool, 3, r.cbs);
        VK_CHECK(vkFreeDescriptorSets(ctx.device, dpool, 1, &r.set));
        vkDestroyFence(ctx.device, r.fence, nullptr);
        vkapp::destroy_buffer(ctx, r.readback);
        vkapp::destroy_buffer(ctx, r.device);
        vkapp::destroy_buffer(ctx, r.staging);
    };

    // Schedule: upload(k), compute(k-1), readback(k-1), then wait for round k-2.
    const uint32_t rounds = uint32_t(sizes.size());
    for (uint32_t k = 0; k <= rounds; ++k) {
        if (k < rounds) start_round(k);
        if (k >= 1) launch_round(live[live.size() - (k < rounds ? 2 : 1)]);
        if (live.size() > 2 || (k == rounds && !live.empty())) {
            finish_round(live.front());
            live.erase(live.begin());
        }
    }
    while (!live.empty()) {
        finish_round(live.front());
        live.erase(live.begin());
    }

    vkDestroyCommandPool(ctx.device, cpool, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
