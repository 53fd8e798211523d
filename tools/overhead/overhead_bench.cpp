// slipstream-overhead: the CPU cost the layer adds to the two hottest paths, measured by
// running the same program with and without it (overhead_report.py does both, interleaved).
//   record: ns per vkCmdDispatch recorded (N dispatches into one command buffer)
//   submit: µs per vkQueueSubmit of a one-dispatch command buffer, N back to back, no fence
// Prints one JSON object per repetition on stdout.
#include "vk_app.h"
#include "tiny_comp.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

int main(int argc, char** argv) {
    int reps = 7, dispatches = 20000, submits = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--dispatches")) dispatches = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--submits")) submits = std::atoi(argv[i + 1]);
    }
    vkapp::Context ctx = vkapp::create_context("slipstream-overhead");
    vkapp::Buffer buffer = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0);
    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(ctx, tiny_comp, sizeof tiny_comp, 1, 0);
    vkapp::StorageSet storage = vkapp::create_storage_set(ctx, pipe, {buffer.buffer});
    VkDescriptorSet set = storage.set;

    VkCommandPool pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 2;
    VkCommandBuffer cbs[2];
    VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, cbs));
    VkCommandBuffer big = cbs[0], small = cbs[1];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};

    // The small command buffer, submitted many times: one dispatch after a barrier.
    VK_CHECK(vkBeginCommandBuffer(small, &bi));
    vkCmdBindPipeline(small, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
    vkCmdBindDescriptorSets(small, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0, nullptr);
    vkapp::barrier(small, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdDispatch(small, 1, 1, 1);
    VK_CHECK(vkEndCommandBuffer(small));

    for (int rep = 0; rep < reps + 1; ++rep) {  // the first repetition warms up
        VK_CHECK(vkBeginCommandBuffer(big, &bi));
        vkCmdBindPipeline(big, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(big, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0, nullptr);
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < dispatches; ++i) vkCmdDispatch(big, 1, 1, 1);
        double record = seconds_since(t0);
        VK_CHECK(vkEndCommandBuffer(big));  // recorded, never submitted: recording is what we time

        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &small;
        t0 = Clock::now();
        for (int i = 0; i < submits; ++i) VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, VK_NULL_HANDLE));
        double submit = seconds_since(t0);
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        if (rep > 0)
            std::printf("{\"record_dispatch_ns\": %.2f, \"queue_submit_us\": %.3f}\n", record / dispatches * 1e9,
                        submit / submits * 1e6);
    }
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkapp::destroy_storage_set(ctx, storage);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, buffer);
    return vkapp::finish(ctx, 0);
}
