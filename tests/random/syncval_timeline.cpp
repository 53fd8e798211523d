// syncval_timeline: the smallest programs that show how the 1.3.239 validation layer's
// synchronization validation follows semaphores (docs/random-tester.md). Each case is valid by
// the specification; run one under the validation layer (synchronization validation and its
// queue-submit checks on) and see whether it reports a hazard.
//
//   syncval_timeline --case single|earlier|host_waited|binary
//
// All on one queue, one timeline semaphore T:
//   single       A: fill X, signal T=1.  B: wait T=1, copy X -> Y.                 not reported
//   earlier      S: signal T=1 (no work).  A: fill X, signal T=2.
//                B: wait T=2, copy X -> Y.                                          reported
//   host_waited  as `earlier`, with the host waiting for T >= 1 between S and A.    reported
//   binary       as `earlier` with binary semaphores (S's never waited).            not reported
// B reads what A wrote, and A's signal (ALL_COMMANDS) with B's wait (ALL_COMMANDS) orders
// and makes it visible. 1.3.239 keeps a semaphore's first signal until a device wait takes it
// and drops the signals made meanwhile, whatever their values; so in `earlier` B's wait pairs
// with S's signal, which A's fill is not in the scope of (READ_AFTER_WRITE at vkQueueSubmit2).
#include "vk_app.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Sem {
    VkSemaphore sem;
    uint64_t value;  // 0: binary
};

// One vkQueueSubmit2 batch: `cb` (or none), waiting for `wait` and signaling `signal` (where set).
void submit(vkapp::Context& ctx, VkCommandBuffer cb, const Sem* wait, const Sem* signal) {
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    VkCommandBufferSubmitInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    VkSemaphoreSubmitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    VkSemaphoreSubmitInfo sgi{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    if (cb) {
        ci.commandBuffer = cb;
        si.commandBufferInfoCount = 1;
        si.pCommandBufferInfos = &ci;
    }
    if (wait) {
        wi.semaphore = wait->sem;
        wi.value = wait->value;
        wi.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        si.waitSemaphoreInfoCount = 1;
        si.pWaitSemaphoreInfos = &wi;
    }
    if (signal) {
        sgi.semaphore = signal->sem;
        sgi.value = signal->value;
        sgi.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        si.signalSemaphoreInfoCount = 1;
        si.pSignalSemaphoreInfos = &sgi;
    }
    VK_CHECK(vkQueueSubmit2(ctx.queue, 1, &si, VK_NULL_HANDLE));
}

}  // namespace

int main(int argc, char** argv) {
    std::string name;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--case")) name = argv[i + 1];
    const bool timeline = name == "single" || name == "earlier" || name == "host_waited";
    if (!timeline && name != "binary") {
        std::fprintf(stderr, "usage: %s --case single|earlier|host_waited|binary\n", argv[0]);
        return 2;
    }
    vkapp::ContextOptions o;
    o.synchronization2 = true;
    o.timeline_semaphores = true;
    vkapp::Context ctx = vkapp::create_context("syncval_timeline", o);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkapp::Buffer x = vkapp::create_buffer(ctx, 4096, usage, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    vkapp::Buffer y = vkapp::create_buffer(ctx, 4096, usage, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkSemaphore> sems;
    auto semaphore = [&](bool is_timeline) {
        VkSemaphore s = is_timeline ? vkapp::create_timeline_semaphore(ctx, 0) : VK_NULL_HANDLE;
        if (!is_timeline) {
            VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
            VK_CHECK(vkCreateSemaphore(ctx.device, &ci, nullptr, &s));
        }
        sems.push_back(s);
        return s;
    };
    // S, A's signal and B's wait.
    Sem early{}, handoff{};
    if (timeline) {
        const VkSemaphore t = semaphore(true);
        early = {t, 1};
        handoff = {t, name == "single" ? 1u : 2u};
    } else {
        early = {semaphore(false), 0};
        handoff = {semaphore(false), 0};
    }
    if (name != "single") submit(ctx, VK_NULL_HANDLE, nullptr, &early);
    if (name == "host_waited") {
        auto wait = reinterpret_cast<PFN_vkWaitSemaphores>(vkGetDeviceProcAddr(ctx.device, "vkWaitSemaphores"));
        VK_CHECK(vkapp::wait_timelines(wait, ctx.device, {{early.sem, 1}}, false, UINT64_MAX));
    }
    VkCommandBuffer a = vkapp::begin_one_time(ctx, pool);
    vkCmdFillBuffer(a, x.buffer, 0, VK_WHOLE_SIZE, 0x5eed);
    VK_CHECK(vkEndCommandBuffer(a));
    submit(ctx, a, nullptr, &handoff);
    VkCommandBuffer b = vkapp::begin_one_time(ctx, pool);
    const VkBufferCopy region{0, 0, 4096};
    vkCmdCopyBuffer(b, x.buffer, y.buffer, 1, &region);
    VK_CHECK(vkEndCommandBuffer(b));
    submit(ctx, b, &handoff, nullptr);
    VK_CHECK(vkQueueWaitIdle(ctx.queue));
    uint32_t word = 0;
    std::memcpy(&word, y.mapped, sizeof(word));
    std::printf("syncval_timeline: case %s, Y[0] = 0x%x\n", name.c_str(), word);
    for (VkSemaphore s : sems) vkDestroySemaphore(ctx.device, s, nullptr);
    vkDestroyCommandPool(ctx.device, pool, nullptr);
    vkapp::destroy_buffer(ctx, x);
    vkapp::destroy_buffer(ctx, y);
    return vkapp::finish(ctx, word);
}
