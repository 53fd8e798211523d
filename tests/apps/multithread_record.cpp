// multithread_record: several threads (4), each with its own command pool, descriptor pool,
// buffers and fences, record and submit concurrently. Queue access is guarded by a mutex
// per queue, as the spec requires (externally synchronized); if the queue family has
// several queues, each thread gets its own (round-robin). Each thread runs a chain of
// steps on its own buffer: mostly fire-and-forget submissions of one dispatch, every
// fourth step a command buffer with three dispatches and barriers between them, every
// eighth a fenced submission after which the thread resets its command pool and reuses
// the command buffers. The first step uploads, the last reads back. Every thread's final
// buffer is compared with a CPU reference.
#include "suite_util.h"
#include "vk_app.h"

#include "mt_step_comp.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t kThreads = 4;

struct Params {
    uint32_t n, mul, add;
};

Params step_params(uint32_t thread, uint32_t step, uint32_t sub, uint32_t n) {
    return {n, 2u * (thread * 1000u + step * 10u + sub) + 1u, thread * 0x10001u + step * 31u + sub};
}

void cpu_step(std::vector<uint32_t>& d, const Params& p) {
    for (uint32_t i = 0; i < p.n; ++i) {
        uint32_t v = d[i] * p.mul + (p.add ^ i);
        d[i] = (v << 5) | (v >> 27);
    }
}

uint32_t dispatches_in(uint32_t step) { return step % 4 == 3 ? 3 : 1; }

struct ThreadResult {
    std::vector<uint32_t> data;
    std::vector<uint32_t> expected;
};

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv);
    const uint32_t kN = 8192;
    const uint32_t kSteps = 40 * scale;
    const VkDeviceSize bytes = VkDeviceSize(kN) * 4;

    vkapp::ContextOptions options;
    options.queue_count = kThreads;
    vkapp::Context ctx = vkapp::create_context("multithread_record", options);
    std::vector<std::unique_ptr<std::mutex>> queue_locks;
    for (size_t i = 0; i < ctx.queues.size(); ++i) queue_locks.emplace_back(new std::mutex);

    vkapp::ComputePipeline pipe =
        vkapp::create_compute_pipeline(ctx, mt_step_comp, sizeof(mt_step_comp), 1, sizeof(Params));

    std::vector<ThreadResult> results(kThreads);
    std::atomic<uint32_t> ready{0};

    auto worker = [&](uint32_t t) {
        const size_t qi = t % ctx.queues.size();
        VkQueue queue = ctx.queues[qi];
        std::mutex& lock = *queue_locks[qi];

        std::vector<uint32_t> initial(kN);
        suite::Rng rng(0x3713ad00ull + t);
        for (auto& v : initial) v = rng.next32();

        vkapp::Buffer data = vkapp::create_buffer(ctx, bytes,
                                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        vkapp::Buffer upload =
            vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
        vkapp::Buffer readback =
            vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        std::memcpy(upload.mapped, initial.data(), bytes);
        suite::flush(ctx, upload);
        VkDescriptorPool dpool = suite::create_storage_pool(ctx, 1, 1);
        VkDescriptorSet set = suite::allocate_set(ctx, dpool, pipe.set_layout);
        vkapp::write_storage_buffers(ctx, set, {data.buffer});
        VkCommandPool pool = vkapp::create_command_pool(ctx);
        VkFence fence = suite::create_fence(ctx);
        std::vector<VkCommandBuffer> free_cbs, used_cbs;

        // Start all threads together so that their recording and submissions overlap.
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();

        for (uint32_t s = 0; s < kSteps; ++s) {
            if (free_cbs.empty()) {
                std::vector<VkCommandBuffer> more = suite::allocate_command_buffers(ctx, pool, 1);
                free_cbs.push_back(more[0]);
            }
            VkCommandBuffer cb = free_cbs.back();
            free_cbs.pop_back();
            used_cbs.push_back(cb);

            const bool last = s + 1 == kSteps;
            const bool fenced = last || s % 8 == 7;
            suite::begin(cb);
            if (s == 0) {
                VkBufferCopy region{0, 0, bytes};
                vkCmdCopyBuffer(cb, upload.buffer, data.buffer, 1, &region);
            }
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0,
                                    nullptr);
            for (uint32_t d = 0; d < dispatches_in(s); ++d) {
                // The previous step (or the upload) is done and visible before this one.
                vkapp::barrier(
                    cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
                Params p = step_params(t, s, d, kN);
                vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p), &p);
                vkCmdDispatch(cb, kN / 64, 1, 1);
            }
            if (last) {
                vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
                VkBufferCopy region{0, 0, bytes};
                vkCmdCopyBuffer(cb, data.buffer, readback.buffer, 1, &region);
                vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
            }
            VK_CHECK(vkEndCommandBuffer(cb));
            {
                std::lock_guard<std::mutex> guard(lock);
                suite::submit(queue, cb, fenced ? fence : VK_NULL_HANDLE);
            }
            if (fenced) {
                // The fence covers this submission and everything before it on the queue,
                // so all of this thread's command buffers are done: recycle them.
                suite::wait_fence(ctx, fence);
                VK_CHECK(vkResetFences(ctx.device, 1, &fence));
                VK_CHECK(vkResetCommandPool(ctx.device, pool, 0));
                free_cbs.insert(free_cbs.end(), used_cbs.begin(), used_cbs.end());
                used_cbs.clear();
            }
        }

        suite::invalidate(ctx, readback);
        ThreadResult& out = results[t];
        out.data.resize(kN);
        std::memcpy(out.data.data(), readback.mapped, bytes);
        out.expected = initial;
        for (uint32_t s = 0; s < kSteps; ++s)
            for (uint32_t d = 0; d < dispatches_in(s); ++d)
                cpu_step(out.expected, step_params(t, s, d, kN));

        vkDestroyFence(ctx.device, fence, nullptr);
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkDestroyDescriptorPool(ctx.device, dpool, nullptr);
        vkapp::destroy_buffer(ctx, readback);
        vkapp::destroy_buffer(ctx, upload);
        vkapp::destroy_buffer(ctx, data);
    };

    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();

    bool ok = true;
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    for (uint32_t t = 0; t < kThreads; ++t) {
        char what[64];
        std::snprintf(what, sizeof(what), "multithread_record thread %u", t);
        ok = suite::compare_words(what, results[t].data.data(), results[t].expected.data(), kN) &&
             ok;
        checksum = vkapp::fnv1a(results[t].data.data(), size_t(bytes), checksum);
    }

    vkapp::destroy_compute_pipeline(ctx, pipe);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
