// timeline_semaphores: Vulkan 1.2+ timeline semaphores, through vkQueueSubmit with
// VkTimelineSemaphoreSubmitInfo. Each round (base value B = 10 * round) submits
//
//   A: waits T >= B+1 (signalled by the HOST, from another thread, after a delay);
//      dispatch (round 0 first uploads the data)                          signals T = B+2
//   B: waits T >= B+2 (GPU -> GPU); dispatch                signals T = B+3 and S = 101+round
//   C: waits S >= 101+round (GPU -> GPU on a second timeline); dispatch; copy to
//      host-visible memory                                                signals T = B+4
//
// then checks, before the host signal, that vkGetSemaphoreCounterValue(T) is still the
// last round's final value (B-6, or 0) and that vkWaitSemaphores with a 1 ms timeout
// returns VK_TIMEOUT (the GPU really is blocked); then starts the signalling thread and
// waits with VK_SEMAPHORE_WAIT_ANY_BIT (one of the two conditions is never met), then
// waits for both (wait-all), then checks that a WAIT_ANY whose first condition is unmet
// but second is met returns at once with a zero timeout, and finally that both counters
// have the expected values. The data are compared with a CPU reference after every round.
// Before the rounds, 64 waits on a value the second timeline has from its creation.
//
// With --khr the same runs as a Vulkan 1.1 application with VK_KHR_timeline_semaphore,
// through the KHR entry points (vkWaitSemaphoresKHR, ...): the core 1.2 commands are absent
// for it, and a layer that cannot tell must still wait correctly, and quickly.
#include "suite_util.h"
#include "vk_app.h"

#include "timeline_step_comp.h"

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct PushConstants {
    uint32_t n, seed;
};

uint32_t seed_for(uint32_t round, uint32_t phase) { return round * 3 + phase + 1; }

void cpu_step(std::vector<uint32_t>& d, uint32_t seed) {
    for (uint32_t i = 0; i < uint32_t(d.size()); ++i) {
        uint32_t v = d[i] * 2654435761u + (seed ^ i);
        d[i] = v ^ (v >> 15);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv, "--khr");
    const bool khr = suite::has_flag(argc, argv, "--khr");
    const uint32_t kN = 32768;
    const uint32_t kRounds = 4 * scale;
    const uint32_t kReachedWaits = 64;
    const VkDeviceSize bytes = VkDeviceSize(kN) * 4;

    vkapp::ContextOptions options;
    options.timeline_semaphores = true;
    if (khr) options.api_version = VK_API_VERSION_1_1;
    vkapp::Context ctx = vkapp::create_context("timeline_semaphores", options);
    VkDevice dev = ctx.device;
    auto device_proc = [&](const char* core, const char* ext) {
        PFN_vkVoidFunction fn = vkGetDeviceProcAddr(dev, khr ? ext : core);
        if (!fn) {
            std::fprintf(stderr, "timeline_semaphores: %s is missing\n", khr ? ext : core);
            std::exit(2);
        }
        return fn;
    };
    auto wait_semaphores = reinterpret_cast<PFN_vkWaitSemaphores>(device_proc("vkWaitSemaphores", "vkWaitSemaphoresKHR"));
    auto signal_semaphore = reinterpret_cast<PFN_vkSignalSemaphore>(device_proc("vkSignalSemaphore", "vkSignalSemaphoreKHR"));
    auto counter_value = reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(
        device_proc("vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR"));

    std::vector<uint32_t> initial(kN);
    suite::Rng rng(0x7131e11e5ull);
    for (auto& v : initial) v = rng.next32();

    vkapp::Buffer data =
        vkapp::create_buffer(ctx, bytes,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkapp::Buffer upload =
        vkapp::create_buffer(ctx, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, suite::kHostMemory);
    vkapp::Buffer readback = vkapp::create_buffer(
        ctx, bytes * kRounds, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
    std::memcpy(upload.mapped, initial.data(), bytes);
    suite::flush(ctx, upload);

    vkapp::ComputePipeline pipe = vkapp::create_compute_pipeline(
        ctx, timeline_step_comp, sizeof(timeline_step_comp), 1, sizeof(PushConstants));
    VkDescriptorPool dpool = suite::create_storage_pool(ctx, 1, 1);
    VkDescriptorSet set = suite::allocate_set(ctx, dpool, pipe.set_layout);
    vkapp::write_storage_buffers(ctx, set, {data.buffer});

    VkSemaphore timeline = vkapp::create_timeline_semaphore(ctx, 0);
    VkSemaphore second = vkapp::create_timeline_semaphore(ctx, 100);
    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, 3 * kRounds);

    auto record_step = [&](VkCommandBuffer cb, uint32_t round, uint32_t phase) {
        suite::begin(cb);
        if (round == 0 && phase == 0) {
            VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(cb, upload.buffer, data.buffer, 1, &region);
        }
        // Earlier transfers and dispatches on the queue are visible to this dispatch, and
        // earlier copies out of `data` are done before it is rewritten.
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        PushConstants pc{kN, seed_for(round, phase)};
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &set, 0,
                                nullptr);
        vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
        vkCmdDispatch(cb, kN / 256, 1, 1);
        if (phase == 2) {
            vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            VkBufferCopy region{0, bytes * round, bytes};
            vkCmdCopyBuffer(cb, data.buffer, readback.buffer, 1, &region);
            vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        }
        VK_CHECK(vkEndCommandBuffer(cb));
    };

    // One submission: waits `wait_sem` >= wait_value, signals up to two (semaphore, value).
    auto submit = [&](VkCommandBuffer cb, VkSemaphore wait_sem, uint64_t wait_value,
                      std::vector<std::pair<VkSemaphore, uint64_t>> signals) {
        std::vector<VkSemaphore> sig_sems;
        std::vector<uint64_t> sig_values;
        for (auto& s : signals) {
            sig_sems.push_back(s.first);
            sig_values.push_back(s.second);
        }
        VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        ts.waitSemaphoreValueCount = 1;
        ts.pWaitSemaphoreValues = &wait_value;
        ts.signalSemaphoreValueCount = uint32_t(sig_values.size());
        ts.pSignalSemaphoreValues = sig_values.data();
        const VkPipelineStageFlags wait_stage =
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.pNext = &ts;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = &wait_sem;
        si.pWaitDstStageMask = &wait_stage;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        si.signalSemaphoreCount = uint32_t(sig_sems.size());
        si.pSignalSemaphores = sig_sems.data();
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, VK_NULL_HANDLE));
    };

    auto wait = [&](const std::vector<std::pair<VkSemaphore, uint64_t>>& conds, bool any, uint64_t timeout_ns) {
        return vkapp::wait_timelines(wait_semaphores, dev, conds, any, timeout_ns);
    };

    auto counter = [&](VkSemaphore s) {
        uint64_t v = 0;
        VK_CHECK(counter_value(dev, s, &v));
        return v;
    };

    bool ok = true;
    auto expect = [&](bool cond, const char* what, uint32_t round) {
        if (!cond) {
            std::fprintf(stderr, "timeline_semaphores: round %u: %s\n", round, what);
            ok = false;
        }
    };

    // Waits on a value reached at creation: each returns at once (the suite's statistics
    // check counts them among the spin wins, and a layer that polled a function the device
    // does not have would spin its whole budget on each).
    for (uint32_t i = 0; i < kReachedWaits; ++i)
        expect(wait({{second, 100}}, false, UINT64_MAX) == VK_SUCCESS, "wait on a reached value failed", 0);

    std::vector<uint32_t> reference = initial;
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    for (uint32_t r = 0; r < kRounds; ++r) {
        const uint64_t base = 10ull * r;
        const uint64_t s_value = 101 + r;
        for (uint32_t phase = 0; phase < 3; ++phase) record_step(cbs[3 * r + phase], r, phase);
        submit(cbs[3 * r + 0], timeline, base + 1, {{timeline, base + 2}});
        submit(cbs[3 * r + 1], timeline, base + 2, {{timeline, base + 3}, {second, s_value}});
        submit(cbs[3 * r + 2], second, s_value, {{timeline, base + 4}});

        // Nothing can have run yet: the first submission waits for the host.
        const uint64_t before = r == 0 ? 0 : base - 10 + 4;  // where the last round left it
        expect(counter(timeline) == before, "timeline advanced before the host signal", r);
        expect(counter(second) == s_value - 1, "second timeline advanced too early", r);
        VkResult early = wait({{timeline, base + 2}}, false, 1000000);  // 1 ms
        expect(early == VK_TIMEOUT, "vkWaitSemaphores did not time out before the host signal", r);

        std::thread signaller([&ctx, signal_semaphore, timeline, base] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
            si.semaphore = timeline;
            si.value = base + 1;
            VK_CHECK(signal_semaphore(ctx.device, &si));
        });
        // WAIT_ANY: the second condition can never be met, so this returns on the first.
        VK_CHECK(wait({{timeline, base + 4}, {second, 1000000}}, true, UINT64_MAX));
        // Wait-all on both timelines (already satisfied by now).
        VK_CHECK(wait({{timeline, base + 4}, {second, s_value}}, false, UINT64_MAX));
        // WAIT_ANY whose first condition is not met but second is: returns at once. (The
        // unmet condition is on `second`, never on the host-signalled `timeline`: with an
        // unmet WAIT_ANY condition on `timeline` at a value no signal is pending for, the
        // 1.3.239 validation layer later reports a false VUID-VkSemaphoreSignalInfo-value-03259
        // on the next vkSignalSemaphore.)
        VkResult any = wait({{second, 1000000}, {timeline, base + 4}}, true, 0);
        expect(any == VK_SUCCESS, "WAIT_ANY with one met condition did not succeed", r);
        signaller.join();
        expect(counter(timeline) == base + 4, "timeline counter is not base+4 at the end", r);
        expect(counter(second) == s_value, "second timeline counter is wrong at the end", r);

        for (uint32_t phase = 0; phase < 3; ++phase) cpu_step(reference, seed_for(r, phase));
        suite::invalidate(ctx, readback);
        const auto* got = static_cast<const uint32_t*>(readback.mapped) + size_t(kN) * r;
        char what[64];
        std::snprintf(what, sizeof(what), "timeline_semaphores round %u", r);
        ok = suite::compare_words(what, got, reference.data(), kN) && ok;
        checksum = vkapp::fnv1a(got, size_t(bytes), checksum);
    }

    // Every batch that names the semaphores must have completed before they are destroyed: a
    // reached value only says the signal happened (lavapipe's queue thread still holds the
    // semaphore's lock just after it, and crashed now and then when it was destroyed then).
    VK_CHECK(vkQueueWaitIdle(ctx.queue));
    vkDestroyCommandPool(dev, pool, nullptr);
    vkDestroySemaphore(dev, second, nullptr);
    vkDestroySemaphore(dev, timeline, nullptr);
    vkDestroyDescriptorPool(dev, dpool, nullptr);
    vkapp::destroy_compute_pipeline(ctx, pipe);
    vkapp::destroy_buffer(ctx, readback);
    vkapp::destroy_buffer(ctx, upload);
    vkapp::destroy_buffer(ctx, data);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
