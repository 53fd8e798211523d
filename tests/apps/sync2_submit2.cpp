// sync2_submit2: Vulkan 1.3 synchronization2. Each round is three batches, chained with
// binary semaphores signalled in one vkQueueSubmit2 batch and waited in the next:
//
//   transfer: upload (round 0) or vkCmdUpdateBuffer of a slice of `a`   -> signals s1
//   compute:  waits s1; b = f(a); vkCmdPipelineBarrier2 (buffer barrier); a = g(a, b)
//                                                                         -> signals s2
//   readback: waits s2; copies b (and, last round, a) to host-visible memory;
//             vkCmdPipelineBarrier2 (memory barrier) to the host          -> signals s3
//
// and the next round's transfer batch waits s3. Even rounds put their three batches in one
// vkQueueSubmit2 call, odd rounds make three calls. Only the last call has a fence. Every
// round's `b` and the final `a` are compared with a CPU simulation.
#include "suite_util.h"
#include "vk_app.h"

#include "sync2_step_comp.h"

#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kSlice = 64;  // words rewritten by vkCmdUpdateBuffer each round

struct Params {
    uint32_t n, round_index, phase;
};

std::vector<uint32_t> slice_data(uint32_t round) {
    std::vector<uint32_t> v(kSlice);
    for (uint32_t i = 0; i < kSlice; ++i) v[i] = round * 0x01000193u + i * 0x9e3779b9u;
    return v;
}

uint32_t slice_offset(uint32_t round, uint32_t n) { return (round * 977u * kSlice) % (n - kSlice); }

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv);
    const uint32_t kN = 16384;
    const uint32_t kRounds = 16 * scale;
    const VkDeviceSize bytes = VkDeviceSize(kN) * 4;

    vkapp::ContextOptions options;
    options.synchronization2 = true;
    vkapp::Context ctx = vkapp::create_context("sync2_submit2", options);

    std::vector<uint32_t> initial(kN);
    suite::Rng rng(0x5c2c2ull);
    for (auto& v : initial) v = rng.next32();

    const VkBufferUsageFlags dev_usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkapp::Buffer a =
        vkapp::create_buffer(ctx, bytes, dev_usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer b =
        vkapp::create_buffer(ctx, bytes, dev_usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer upload =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    // Readback: one copy of b per round, then the final a.
    vkapp::Buffer readback = vkapp::create_buffer(
        ctx, bytes * (kRounds + 1), VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
    std::memcpy(upload.mapped, initial.data(), bytes);
    suite::flush(ctx, upload);

    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(
        ctx, sync2_step_comp, sizeof(sync2_step_comp), 2, sizeof(Params));
    VkDescriptorPool dpool = suite::create_storage_pool(ctx, 1, 2);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, pipe.set_layout);
    vkapp::write_storage_buffers(ctx, set, {a.buffer, b.buffer});

    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, 3 * kRounds);
    // One set of semaphores per round; binary semaphores are reusable once waited, but
    // separate ones keep each wait's signal unambiguous.
    std::vector<VkSemaphore> sems(3 * kRounds);
    for (auto& s : sems) s = suite::create_binary_semaphore(ctx);
    VkFence fence = suite::create_fence(ctx);

    auto memory_barrier2 = [](VkCommandBuffer cb, VkPipelineStageFlags2 src_stage,
                              VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                              VkAccessFlags2 dst_access) {
        VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        mb.srcStageMask = src_stage;
        mb.srcAccessMask = src_access;
        mb.dstStageMask = dst_stage;
        mb.dstAccessMask = dst_access;
        VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.memoryBarrierCount = 1;
        di.pMemoryBarriers = &mb;
        vkCmdPipelineBarrier2(cb, &di);
    };

    for (uint32_t r = 0; r < kRounds; ++r) {
        VkCommandBuffer t = cbs[3 * r], c = cbs[3 * r + 1], rb = cbs[3 * r + 2];
        const bool last = r + 1 == kRounds;

        // Transfer batch.
        suite::begin(t);
        if (r == 0) {
            VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(t, upload.buffer, a.buffer, 1, &region);
        } else {
            std::vector<uint32_t> data = slice_data(r);
            vkCmdUpdateBuffer(t, a.buffer, VkDeviceSize(slice_offset(r, kN)) * 4, kSlice * 4,
                              data.data());
        }
        VK_CHECK(vkEndCommandBuffer(t));

        // Compute batch.
        suite::begin(c);
        vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0,
                                nullptr);
        Params p{kN, r, 0};
        vkCmdPushConstants(c, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p), &p);
        vkCmdDispatch(c, kN / 128, 1, 1);
        // b was written (phase 0) and is read next (phase 1); a was read and is written.
        VkBufferMemoryBarrier2 bb[2] = {{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2},
                                        {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2}};
        bb[0].srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
        bb[0].srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
        bb[0].dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
        bb[0].dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT;
        bb[0].srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        bb[0].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        bb[0].buffer = b.buffer;
        bb[0].offset = 0;
        bb[0].size = VK_WHOLE_SIZE;
        bb[1] = bb[0];
        bb[1].srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT;
        bb[1].dstAccessMask =
            VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
        bb[1].buffer = a.buffer;
        VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        di.bufferMemoryBarrierCount = 2;
        di.pBufferMemoryBarriers = bb;
        vkCmdPipelineBarrier2(c, &di);
        p.phase = 1;
        vkCmdPushConstants(c, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p), &p);
        vkCmdDispatch(c, kN / 128, 1, 1);
        VK_CHECK(vkEndCommandBuffer(c));

        // Readback batch.
        suite::begin(rb);
        VkBufferCopy region{0, bytes * r, bytes};
        vkCmdCopyBuffer(rb, b.buffer, readback.buffer, 1, &region);
        if (last) {
            VkBufferCopy region_a{0, bytes * kRounds, bytes};
            vkCmdCopyBuffer(rb, a.buffer, readback.buffer, 1, &region_a);
        }
        memory_barrier2(rb, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(rb));

        // Batches and their semaphores.
        VkSemaphore s1 = sems[3 * r], s2 = sems[3 * r + 1], s3 = sems[3 * r + 2];
        VkSemaphoreSubmitInfo wait_prev{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait_prev.semaphore = r > 0 ? sems[3 * (r - 1) + 2] : VK_NULL_HANDLE;
        wait_prev.stageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
        VkSemaphoreSubmitInfo sig1{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        sig1.semaphore = s1;
        sig1.stageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
        VkSemaphoreSubmitInfo wait1 = sig1;
        wait1.stageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
        VkSemaphoreSubmitInfo sig2{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        sig2.semaphore = s2;
        sig2.stageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
        VkSemaphoreSubmitInfo wait2 = sig2;
        wait2.stageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        VkSemaphoreSubmitInfo sig3{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        sig3.semaphore = s3;
        sig3.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;

        VkCommandBufferSubmitInfo cbi[3];
        for (int i = 0; i < 3; ++i) {
            cbi[i] = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
            cbi[i].commandBuffer = cbs[3 * r + uint32_t(i)];
        }
        VkSubmitInfo2 batches[3];
        for (int i = 0; i < 3; ++i) {
            batches[i] = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
            batches[i].commandBufferInfoCount = 1;
            batches[i].pCommandBufferInfos = &cbi[i];
        }
        batches[0].waitSemaphoreInfoCount = r > 0 ? 1 : 0;
        batches[0].pWaitSemaphoreInfos = &wait_prev;
        batches[0].signalSemaphoreInfoCount = 1;
        batches[0].pSignalSemaphoreInfos = &sig1;
        batches[1].waitSemaphoreInfoCount = 1;
        batches[1].pWaitSemaphoreInfos = &wait1;
        batches[1].signalSemaphoreInfoCount = 1;
        batches[1].pSignalSemaphoreInfos = &sig2;
        batches[2].waitSemaphoreInfoCount = 1;
        batches[2].pWaitSemaphoreInfos = &wait2;
        batches[2].signalSemaphoreInfoCount = last ? 0 : 1;  // the last s3 has no waiter
        batches[2].pSignalSemaphoreInfos = &sig3;
        const VkFence round_fence = last ? fence : VK_NULL_HANDLE;
        if (r % 2 == 0) {
            VK_CHECK(vkQueueSubmit2(ctx.queue, 3, batches, round_fence));
        } else {
            VK_CHECK(vkQueueSubmit2(ctx.queue, 1, &batches[0], VK_NULL_HANDLE));
            VK_CHECK(vkQueueSubmit2(ctx.queue, 1, &batches[1], VK_NULL_HANDLE));
            VK_CHECK(vkQueueSubmit2(ctx.queue, 1, &batches[2], round_fence));
        }
    }
    suite::wait_fence(ctx, fence);
    suite::invalidate(ctx, readback);
    const auto* got = static_cast<const uint32_t*>(readback.mapped);

    // CPU reference.
    bool ok = true;
    std::vector<uint32_t> ra = initial, rb(kN);
    for (uint32_t r = 0; r < kRounds; ++r) {
        if (r > 0) {
            std::vector<uint32_t> data = slice_data(r);
            std::memcpy(&ra[slice_offset(r, kN)], data.data(), kSlice * 4);
        }
        for (uint32_t i = 0; i < kN; ++i) {
            uint32_t x = ra[i] ^ (ra[(i + 1) % kN] >> 3);
            rb[i] = x * 747796405u + r;
        }
        for (uint32_t i = 0; i < kN; ++i) {
            uint32_t x = ra[i] + (rb[i] ^ (rb[i ^ 1u] << 7));
            ra[i] = (x ^ (x >> 11)) * 2891336453u;
        }
        char what[64];
        std::snprintf(what, sizeof(what), "sync2_submit2 round %u b", r);
        ok = suite::compare_words(what, got + size_t(kN) * r, rb.data(), kN) && ok;
    }
    ok = suite::compare_words("sync2_submit2 final a", got + size_t(kN) * kRounds, ra.data(), kN) &&
         ok;
    const uint64_t checksum = vkapp::fnv1a(got, size_t(bytes * (kRounds + 1)));

    vkDestroyFence(ctx.device, fence, nullptr);
    for (auto s : sems) vkDestroySemaphore(ctx.device, s, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, readback);
    vkapp::destroy_buffer(ctx, upload);
    vkapp::destroy_buffer(ctx, b);
    vkapp::destroy_buffer(ctx, a);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
