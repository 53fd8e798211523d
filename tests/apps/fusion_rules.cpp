// fusion_rules: the application patterns that fusion's flush rules exist for, each checked
// against a CPU simulation of a chain of dependent dispatches (the chain_dispatch kernel):
//   ring      fences reused round-robin: each waited for and reset before its next use, so a
//             fused batch holds several fences and the earlier ones are answered from its
//             timeline (submit/batch_fences.h);
//   polling   one fence per submission, then a vkGetFenceStatus loop on one in the middle and
//             one at the end (a status query must flush what it needs, or the loop never ends);
//   deadline  fence-less submissions, the last one setting a flag in host-visible memory, then
//             the host only polls that memory: nothing but the deadline flusher can submit
//             what is still held back (10 s without the flag is a failure);
//   layout    a command buffer whose pipeline layout is destroyed after recording and before
//             submission (legal): fusion must not replay a capture that names it.
// Every scenario prints nothing but a failure; the program prints one checksum over all.
#include "chain_step.h"
#include "suite_util.h"
#include "vk_app.h"

#include "fusion_step_comp.h"

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using chain::Params;
using chain::cpu_step;
using chain::params_for;

constexpr uint32_t kN = 4096 + 77;
constexpr VkDeviceSize kBytes = VkDeviceSize(kN) * 4;

struct Rig {
    vkapp::Context& ctx;
    vkapp::Buffer ping[2], upload, readback, flag;
    vkapp::ComputePipeline pipe;
    VkDescriptorPool dpool = VK_NULL_HANDLE;
    VkDescriptorSet sets[2] = {};
    VkCommandPool pool = VK_NULL_HANDLE;
    std::vector<uint32_t> initial;
    uint64_t checksum = 0;

    explicit Rig(vkapp::Context& c) : ctx(c) {
        const VkBufferUsageFlags dev = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        ping[0] = vkapp::create_buffer(ctx, kBytes, dev, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        ping[1] = vkapp::create_buffer(ctx, kBytes, dev, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        upload = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
        readback = vkapp::create_buffer(ctx, kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        flag = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        initial.resize(kN);
        suite::Rng rng(0xf05e0001ull);
        for (auto& v : initial) v = rng.next32();
        std::memcpy(upload.mapped, initial.data(), kBytes);
        suite::flush(ctx, upload);
        pipe = vkapp::create_compute_pipeline(ctx, fusion_step_comp, sizeof(fusion_step_comp), 2, sizeof(Params));
        dpool = suite::create_storage_pool(ctx, 2, 4);
        for (int i = 0; i < 2; ++i) {
            sets[i] = suite::allocate_set(ctx, dpool, pipe.set_layout);
            vkapp::write_storage_buffers(ctx, sets[i], {ping[i].buffer, ping[1 - i].buffer});
        }
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    }
    ~Rig() {
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
        vkapp::destroy_compute_pipeline(ctx, pipe);
        for (vkapp::Buffer* b : {&flag, &readback, &upload, &ping[1], &ping[0]}) vkapp::destroy_buffer(ctx, *b);
    }

    // Records step `s` of a chain of `steps` into cb (begun and ended here): the upload first,
    // the readback (and, with `set_flag`, a flag the host polls) last.
    void record(VkCommandBuffer cb, uint32_t s, uint32_t steps, bool set_flag, VkPipelineLayout layout = VK_NULL_HANDLE) {
        if (!layout) layout = pipe.layout;
        suite::begin(cb);
        if (s == 0) {
            VkBufferCopy region{0, 0, kBytes};
            vkCmdCopyBuffer(cb, upload.buffer, ping[0].buffer, 1, &region);
        }
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        Params p = params_for(s, kN);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &sets[s % 2], 0, nullptr);
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
        vkCmdDispatch(cb, 1 + (s * 37) % 16, 1, 1);
        if (s + 1 == steps) {
            vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            VkBufferCopy region{0, 0, kBytes};
            vkCmdCopyBuffer(cb, ping[steps % 2].buffer, readback.buffer, 1, &region);
            if (set_flag) {
                vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
                vkCmdFillBuffer(cb, flag.buffer, 0, 4, 1);
            }
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        }
        VK_CHECK(vkEndCommandBuffer(cb));
    }

    // Compares the readback with the CPU chain and folds it into the checksum.
    bool check(const char* what, uint32_t steps) {
        suite::invalidate(ctx, readback);
        std::vector<uint32_t> got(kN), a = initial, b(kN);
        std::memcpy(got.data(), readback.mapped, kBytes);
        for (uint32_t s = 0; s < steps; ++s) {
            cpu_step(a, b, params_for(s, kN));
            a.swap(b);
        }
        checksum ^= vkapp::fnv1a(got.data(), kBytes) + steps;
        return suite::compare_words(what, got.data(), a.data(), kN);
    }
};

bool ring(Rig& rig) {
    constexpr uint32_t kSteps = 96, kFences = 4;
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(rig.ctx, rig.pool, kSteps);
    VkFence fences[kFences];
    for (VkFence& f : fences) f = suite::create_fence(rig.ctx);
    for (uint32_t s = 0; s < kSteps; ++s) {
        VkFence f = fences[s % kFences];
        if (s >= kFences) {
            suite::wait_fence(rig.ctx, f);
            VK_CHECK(vkResetFences(rig.ctx.device, 1, &f));
        }
        rig.record(cbs[s], s, kSteps, false);
        suite::submit(rig.ctx.queue, cbs[s], f);
    }
    // All of them at once, then each alone (answered, or the driver's).
    VK_CHECK(vkWaitForFences(rig.ctx.device, kFences, fences, VK_TRUE, UINT64_MAX));
    for (VkFence f : fences) VK_CHECK(vkWaitForFences(rig.ctx.device, 1, &f, VK_TRUE, 0));
    const bool ok = rig.check("ring", kSteps);
    for (VkFence f : fences) vkDestroyFence(rig.ctx.device, f, nullptr);
    return ok;
}

bool poll_until_signaled(Rig& rig, VkFence fence, const char* what) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        VkResult r = vkGetFenceStatus(rig.ctx.device, fence);
        if (r == VK_SUCCESS) return true;
        if (r != VK_NOT_READY) vkapp::fail("vkGetFenceStatus", r, __FILE__, __LINE__);
        if (std::chrono::steady_clock::now() > give_up) {
            std::fprintf(stderr, "fusion_rules: %s: the fence never signaled (10 s of vkGetFenceStatus)\n", what);
            return false;
        }
    }
}

bool polling(Rig& rig) {
    constexpr uint32_t kSteps = 32;
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(rig.ctx, rig.pool, kSteps);
    std::vector<VkFence> fences(kSteps);
    for (uint32_t s = 0; s < kSteps; ++s) {
        fences[s] = suite::create_fence(rig.ctx);
        rig.record(cbs[s], s, kSteps, false);
        suite::submit(rig.ctx.queue, cbs[s], fences[s]);
    }
    bool ok = poll_until_signaled(rig, fences[kSteps / 2], "polling (middle fence)") &&
              poll_until_signaled(rig, fences[kSteps - 1], "polling (last fence)");
    if (ok) ok = rig.check("polling", kSteps);
    VK_CHECK(vkQueueWaitIdle(rig.ctx.queue));
    for (VkFence f : fences) vkDestroyFence(rig.ctx.device, f, nullptr);
    return ok;
}

bool deadline(Rig& rig) {
    constexpr uint32_t kSteps = 64;
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(rig.ctx, rig.pool, kSteps);
    volatile uint32_t* flag = static_cast<volatile uint32_t*>(rig.flag.mapped);
    *flag = 0;
    suite::flush(rig.ctx, rig.flag);
    for (uint32_t s = 0; s < kSteps; ++s) {
        rig.record(cbs[s], s, kSteps, true);
        suite::submit(rig.ctx.queue, cbs[s]);
    }
    // No Vulkan call until the flag shows up: only the layer's own thread can submit what it
    // still holds.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < give_up) {
        suite::invalidate(rig.ctx, rig.flag);
        seen = *flag == 1;
        if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    VK_CHECK(vkQueueWaitIdle(rig.ctx.queue));
    if (!seen) {
        std::fprintf(stderr, "fusion_rules: deadline: the host never saw the GPU's flag (10 s)\n");
        return false;
    }
    return rig.check("deadline", kSteps);
}

bool layout_destroyed(Rig& rig) {
    constexpr uint32_t kSteps = 8;
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(rig.ctx, rig.pool, kSteps);
    // A layout of the application's own, compatible with the pipeline's, that goes away after
    // recording (allowed: no command buffer that uses it is recording any more).
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Params)};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &rig.pipe.set_layout;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &range;
    VkPipelineLayout layout;
    VK_CHECK(vkCreatePipelineLayout(rig.ctx.device, &li, nullptr, &layout));
    for (uint32_t s = 0; s < kSteps; ++s) rig.record(cbs[s], s, kSteps, false, layout);
    vkDestroyPipelineLayout(rig.ctx.device, layout, nullptr);
    VkFence fence = suite::create_fence(rig.ctx);
    for (uint32_t s = 0; s < kSteps; ++s) suite::submit(rig.ctx.queue, cbs[s], s + 1 == kSteps ? fence : VK_NULL_HANDLE);
    suite::wait_fence(rig.ctx, fence);
    vkDestroyFence(rig.ctx.device, fence, nullptr);
    return rig.check("layout", kSteps);
}

}  // namespace

int main(int, char**) {
    vkapp::Context ctx = vkapp::create_context("fusion_rules");
    bool ok = true;
    uint64_t checksum = 0;
    {
        Rig rig(ctx);
        ok = ring(rig) && ok;
        ok = polling(rig) && ok;
        ok = deadline(rig) && ok;
        ok = layout_destroyed(rig) && ok;
        checksum = rig.checksum;
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
    }
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
