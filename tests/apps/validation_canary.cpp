// validation_canary: contains two deliberate synchronization hazards, so that synchronization
// validation MUST report them. Its suite test asserts that the "validation" run reports
// both; if the validation layer, its synchronization validation, or its queue-submit-time
// synchronization validation were not really on, that test would fail, which shows that
// the clean results of the other programs mean something.
//
//   1. Within one command buffer: vkCmdFillBuffer(a) immediately followed, with no barrier,
//      by a dispatch reading `a` (read-after-write, reported at record time by
//      vkCmdDispatch).
//   2. Across submissions: one submission fills `b`, the next submission's dispatch reads
//      `b` with no barrier or semaphore in between (read-after-write, reported by
//      vkQueueSubmit; needs queue-submit synchronization validation).
//
// Each racing fill writes the value its buffer already holds (an earlier, properly
// synchronized fill wrote it), so the result is the same whichever order the commands run
// in on any implementation, and the program still checks it against the CPU.
#include "suite_util.h"
#include "vk_app.h"

#include "canary_comp.h"

#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    suite::parse_scale(argc, argv);
    const uint32_t kN = 4096;
    const uint32_t kFillA = 0x5eed1234u, kFillB = 0x0badcafeu;
    const VkDeviceSize bytes = VkDeviceSize(kN) * 4;
    vkapp::Context ctx = vkapp::create_context("validation_canary");

    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkapp::Buffer a = vkapp::create_buffer(ctx, bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer b = vkapp::create_buffer(ctx, bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer dst =
        vkapp::create_buffer(ctx, bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
    vkapp::ComputePipeline pipe =
        vkapp::create_compute_pipeline(ctx, canary_comp, sizeof(canary_comp), 3, 4);
    VkDescriptorPool dpool = suite::create_storage_pool(ctx, 1, 3);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, pipe.set_layout);
    vkapp::write_storage_buffers(ctx, set, {a.buffer, b.buffer, dst.buffer});
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, 3);
    VkFence fence = suite::create_fence(ctx);

    // Submission 0 (clean): initial values, made visible to later fills and shader reads.
    suite::begin(cbs[0]);
    vkCmdFillBuffer(cbs[0], a.buffer, 0, bytes, kFillA);
    vkCmdFillBuffer(cbs[0], b.buffer, 0, bytes, kFillB);
    vkapp::barrier(cbs[0], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT);
    VK_CHECK(vkEndCommandBuffer(cbs[0]));

    // Submission 1: rewrites b with the same value.
    suite::begin(cbs[1]);
    vkCmdFillBuffer(cbs[1], b.buffer, 0, bytes, kFillB);
    VK_CHECK(vkEndCommandBuffer(cbs[1]));

    // Submission 2: rewrites a, then reads a and b with no barrier first.
    VkCommandBuffer cb = cbs[2];
    suite::begin(cb);
    vkCmdFillBuffer(cb, a.buffer, 0, bytes, kFillA);
    // DELIBERATE HAZARDS: no barrier after the fill of `a` just above (hazard 1), nor after
    // submission 1's fill of `b` (hazard 2).
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0,
                            nullptr);
    vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &kN);
    vkCmdDispatch(cb, kN / 64, 1, 1);
    vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cb, dst.buffer, readback.buffer, 1, &region);
    vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    VK_CHECK(vkEndCommandBuffer(cb));

    suite::submit(ctx.queue, cbs[0]);
    suite::submit(ctx.queue, cbs[1]);
    suite::submit(ctx.queue, cbs[2], fence);
    suite::wait_fence(ctx, fence);

    suite::invalidate(ctx, readback);
    std::vector<uint32_t> got(kN), want(kN);
    std::memcpy(got.data(), readback.mapped, bytes);
    for (uint32_t i = 0; i < kN; ++i) want[i] = (kFillA * 2654435761u + kFillB) ^ i;
    const bool ok = suite::compare_words("validation_canary", got.data(), want.data(), kN);

    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, readback);
    vkapp::destroy_buffer(ctx, dst);
    vkapp::destroy_buffer(ctx, b);
    vkapp::destroy_buffer(ctx, a);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, vkapp::fnv1a(got.data(), bytes));
}
