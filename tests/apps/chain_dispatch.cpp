// chain_dispatch: a long chain of dependent compute dispatches, one command buffer and one
// vkQueueSubmit per dispatch, each dispatch reading what the previous one wrote (ping-pong
// between two device-local buffers). Work per dispatch varies (dispatch size and inner
// rounds). Only the last submission has a fence; the host waits once. The final buffer is
// compared with a CPU simulation of the same chain.
// --submit-extensions: every submission chains what runtimes attach to all of theirs and says
// nothing here (an empty VkTimelineSemaphoreSubmitInfo, device-group masks naming the one
// device): fusion must carry them.
// --timeline-chain: the steps are chained by a timeline semaphore as some runtimes do: step s
// waits for value s and signals s + 1 (VkTimelineSemaphoreSubmitInfo); the host reads the
// counter and waits for the middle value halfway (both must first get the held work
// submitted), and waits for the last value instead of a fence. Fusion carries the waits (met
// in queue order) and the signals (each batch signals the highest value it holds).
// --timeline-chain-ring: the same chain, each submission also carrying a fence from a ring of
// kRing, as naive runtimes reuse their command buffers: before step s reuses a slot, the host
// waits for the fence of step s - kRing and resets it. Those waits are on work long submitted:
// they must not flush the batch being filled, though it carries semaphore signals.
#include "chain_step.h"
#include "suite_util.h"
#include "vk_app.h"

#include "chain_step_comp.h"

#include <cstring>
#include <vector>

namespace {

using chain::Params;
using chain::cpu_step;
using chain::params_for;

uint32_t groups_for(uint32_t step) { return 1 + (step * 37) % 64; }  // 1..64 workgroups
constexpr uint32_t kRing = 64;  // --timeline-chain-ring's fences

void wait_timeline(vkapp::Context& ctx, VkSemaphore timeline, uint64_t value) {
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &timeline;
    wait.pValues = &value;
    VK_CHECK(vkWaitSemaphores(ctx.device, &wait, UINT64_MAX));
}

// --timeline-chain: step `s` waits for value s and signals s + 1; halfway the host polls the
// counter until it reaches the middle value, and then waits for it as well.
void submit_chained(vkapp::Context& ctx, VkCommandBuffer cb, VkSemaphore timeline, uint32_t s, uint32_t steps,
                    VkFence fence) {
    const uint64_t wait_value = s, signal_value = s + 1;
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &wait_value;
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &signal_value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &timeline;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline;
    VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
    if (signal_value != steps / 2) return;
    uint64_t counter = 0;
    do VK_CHECK(vkGetSemaphoreCounterValue(ctx.device, timeline, &counter));
    while (counter < signal_value);
    wait_timeline(ctx, timeline, signal_value);
}

}  // namespace

int main(int argc, char** argv) {
    const char* kExtensionsFlag = "--submit-extensions";
    const char* kChainFlag = "--timeline-chain";
    const char* kRingFlag = "--timeline-chain-ring";
    const bool ring = argc > 1 && std::strcmp(argv[argc - 1], kRingFlag) == 0;
    const bool chain = ring || (argc > 1 && std::strcmp(argv[argc - 1], kChainFlag) == 0);
    const uint32_t scale = suite::parse_scale(argc, argv, ring ? kRingFlag : chain ? kChainFlag : kExtensionsFlag);
    const bool extensions = argc > 1 && std::strcmp(argv[argc - 1], kExtensionsFlag) == 0;
    const uint32_t kSteps = 500 * scale;
    const uint32_t kN = 8192 + 123;  // not a multiple of the workgroup size
    const VkDeviceSize bytes = VkDeviceSize(kN) * 4;

    vkapp::ContextOptions options;
    options.timeline_semaphores = chain;
    vkapp::Context ctx = vkapp::create_context("chain_dispatch", options);
    VkSemaphore timeline = VK_NULL_HANDLE;
    if (chain) {
        VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
        VK_CHECK(vkCreateSemaphore(ctx.device, &sci, nullptr, &timeline));
    }

    std::vector<uint32_t> initial(kN);
    suite::Rng rng(0xc4a1d15e11ull);
    for (auto& v : initial) v = rng.next32();

    const VkBufferUsageFlags dev_usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkapp::Buffer ping[2] = {
        vkapp::create_buffer(ctx, bytes, dev_usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
        vkapp::create_buffer(ctx, bytes, dev_usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    vkapp::Buffer upload =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    vkapp::Buffer readback =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
    std::memcpy(upload.mapped, initial.data(), bytes);
    suite::flush(ctx, upload);

    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(
        ctx, chain_step_comp, sizeof(chain_step_comp), 2, sizeof(Params));
    VkDescriptorPool dpool = suite::create_storage_pool(ctx, 2, 4);
    VkDescriptorSet sets[2];
    for (int i = 0; i < 2; ++i) {
        sets[i] = suite::allocate_set(ctx, dpool, pipe.set_layout);
        // set 0 reads ping[0] and writes ping[1]; set 1 the other way round.
        vkapp::write_storage_buffers(ctx, sets[i], {ping[i].buffer, ping[1 - i].buffer});
    }

    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, kSteps);
    VkFence fence = suite::create_fence(ctx);
    std::vector<VkFence> slots;
    for (uint32_t i = 0; ring && i < kRing; ++i) slots.push_back(suite::create_fence(ctx));

    for (uint32_t s = 0; s < kSteps; ++s) {
        VkCommandBuffer cb = cbs[s];
        suite::begin(cb);
        if (s == 0) {
            VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(cb, upload.buffer, ping[0].buffer, 1, &region);
        }
        // Everything earlier on the queue (the previous dispatch, or the upload copy) is
        // made visible to this dispatch's reads, and its reads of the other buffer are
        // finished before this dispatch overwrites it.
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        Params p = params_for(s, kN);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[s % 2],
                                0, nullptr);
        vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p), &p);
        vkCmdDispatch(cb, groups_for(s), 1, 1);
        if (s + 1 == kSteps) {
            vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(cb, ping[kSteps % 2].buffer, readback.buffer, 1, &region);
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        }
        VK_CHECK(vkEndCommandBuffer(cb));
        const VkFence signal = s + 1 == kSteps ? fence : VK_NULL_HANDLE;
        if (chain) {
            VkFence slot = VK_NULL_HANDLE;
            if (ring) {
                slot = slots[s % kRing];
                if (s >= kRing) {
                    suite::wait_fence(ctx, slot);
                    VK_CHECK(vkResetFences(ctx.device, 1, &slot));
                }
            }
            submit_chained(ctx, cb, timeline, s, kSteps, slot);
            continue;
        }
        if (!extensions) {
            suite::submit(ctx.queue, cb, signal);
            continue;
        }
        VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        const uint32_t one_device = 1;
        VkDeviceGroupSubmitInfo group{VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO};
        group.commandBufferCount = 1;
        group.pCommandBufferDeviceMasks = &one_device;
        timeline.pNext = &group;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &timeline};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, signal));
    }
    if (chain) {
        wait_timeline(ctx, timeline, kSteps);
    } else {
        suite::wait_fence(ctx, fence);
    }
    suite::invalidate(ctx, readback);
    std::vector<uint32_t> got(kN);
    std::memcpy(got.data(), readback.mapped, bytes);

    // CPU reference.
    std::vector<uint32_t> a = initial, b(kN);
    for (uint32_t s = 0; s < kSteps; ++s) {
        cpu_step(a, b, params_for(s, kN));
        a.swap(b);
    }
    const bool ok = suite::compare_words("chain_dispatch", got.data(), a.data(), kN);

    vkDestroyFence(ctx.device, fence, nullptr);
    for (VkFence f : slots) vkDestroyFence(ctx.device, f, nullptr);
    if (timeline) vkDestroySemaphore(ctx.device, timeline, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, readback);
    vkapp::destroy_buffer(ctx, upload);
    vkapp::destroy_buffer(ctx, ping[1]);
    vkapp::destroy_buffer(ctx, ping[0]);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, vkapp::fnv1a(got.data(), bytes));
}
