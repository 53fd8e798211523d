// slipstream-long-wait: how much CPU a fence wait on a long GPU job burns. Calibrates a
// command buffer to about --target-ms of GPU work, then submits it --waits times, each
// followed by vkWaitForFences, and reports the wall time of the waits and the CPU time this
// thread used during them (getrusage: spinning shows up there, sleeping does not).
#include "vk_app.h"
#include "long_comp.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
double thread_cpu_ms() {
    rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}
}  // namespace

int main(int argc, char** argv) {
    double target_ms = 50;
    uint32_t groups = 2048;
    int waits = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--target-ms")) target_ms = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--waits")) waits = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--groups")) groups = uint32_t(std::atoi(argv[i + 1]));
    }
    vkapp::Context ctx = vkapp::create_context("slipstream-long-wait");
    vkapp::Buffer data = vkapp::create_buffer(ctx, 4096 * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0);
    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(ctx, long_comp, sizeof long_comp, 1, 4);
    vkapp::StorageSet storage = vkapp::create_storage_set(ctx, pipe, {data.buffer});
    VkDescriptorSet set = storage.set;
    VkCommandPool pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, &cb));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK_CHECK(vkCreateFence(ctx.device, &fci, nullptr, &fence));

    const uint32_t iterations = 60000;
    auto record = [&](uint32_t dispatches) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK_CHECK(vkBeginCommandBuffer(cb, &bi));
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0, nullptr);
        vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &iterations);
        for (uint32_t i = 0; i < dispatches; ++i) {
            if (i) vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            vkCmdDispatch(cb, groups, 1, 1);
        }
        VK_CHECK(vkEndCommandBuffer(cb));
    };
    // One wait on the GPU work; returns {wall ms, thread CPU ms}.
    auto run = [&]() {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
        double cpu0 = thread_cpu_ms();
        auto t0 = Clock::now();
        VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        double cpu = thread_cpu_ms() - cpu0;
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        return std::pair<double, double>(wall, cpu);
    };
    // Calibration: the cost of one dispatch, measured with the layer as configured.
    record(4);
    double one = 1e9;
    for (int i = 0; i < 3; ++i) one = std::min(one, run().first / 4);
    uint32_t dispatches = uint32_t(std::max(1.0, target_ms / std::max(one, 1e-3)));
    record(dispatches);

    double wall_total = 0, cpu_total = 0, wall_late = 0, cpu_late = 0;
    std::vector<double> walls;
    for (int i = 0; i < waits; ++i) {
        auto [wall, cpu] = run();
        walls.push_back(wall);
        wall_total += wall;
        cpu_total += cpu;
        if (i >= 4) {  // once the layer has seen a few such waits
            wall_late += wall;
            cpu_late += cpu;
        }
    }
    std::sort(walls.begin(), walls.end());
    std::printf("{\"dispatches\": %u, \"median_wait_ms\": %.3f, \"waits\": %d, \"wait_ms_total\": %.3f, "
                "\"cpu_ms_total\": %.3f, \"wait_ms_after_4\": %.3f, \"cpu_ms_after_4\": %.3f}\n",
                dispatches, walls[walls.size() / 2], waits, wall_total, cpu_total, wall_late, cpu_late);
    vkDestroyFence(ctx.device, fence, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkapp::destroy_storage_set(ctx, storage);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, data);
    return vkapp::finish(ctx, 0);
}
