// fresh_timelines: a timeline semaphore per operation (what the layer's timeline pool,
// VK_SLIPSTREAM_OBJECT_POOL, must keep right when it hands a destroyed semaphore out again with
// its values offset). Every semaphore is created with an initial value from a list that goes
// up and down (0, small, a million, 2^40, ...: a reused driver counter may stand above or below
// it), and vkGetSemaphoreCounterValue must say exactly that value at once. Per operation:
//   gpu_signal     a fill submitted with a signal of initial+1, waited for on the host
//                  (vkWaitSemaphores, wait-all);
//   gpu_chain      fill A signals initial+1, fill B (a second submission) waits for it and
//                  signals initial+2; the host waits for initial+2 with WAIT_ANY next to a
//                  condition never met on another fresh semaphore;
//   gpu_waits_host fill A waits for initial+1, which the host signals (vkSignalSemaphore)
//                  after checking that nothing ran (counter still initial, a zero-timeout wait
//                  times out); A signals initial+3;
//   host_only      host signals (two steps), reads, waits (all and any, zero timeout);
//   many_alive     eight semaphores alive at once, each signaled by its own fill in one
//                  vkQueueSubmit, destroyed in another order;
//   unused         created and destroyed untouched.
// gpu_signal, gpu_chain and gpu_waits_host run through vkQueueSubmit and, when the device has
// synchronization2 (not with --khr), vkQueueSubmit2. With --khr: a Vulkan 1.1 application with
// VK_KHR_timeline_semaphore and its entry points. Every semaphore is destroyed after
// vkQueueWaitIdle (a reached value alone does not say its batch has completed). Prints
// nothing but a failure; the checksum covers every value read (slots and counters).
//
// kValidationNote: every value a host wait found unreached (a timeout, or the unmet condition
// of a WAIT_ANY) is signaled later, exactly. The validation layer (1.3.239) keeps such a wait
// as pending until a signal of that very value, and a host signal then retires the oldest entry
// instead of its own; a destroy clears it all, but under the layer a destroyed semaphore may
// come back, and a later host signal would be reported (VUID-VkSemaphoreSignalInfo-value-03259)
// though valid.
#include "suite_util.h"
#include "vk_app.h"

#include <string>
#include <utility>
#include <vector>

namespace {

constexpr uint32_t kSlots = 16, kWords = 64;
constexpr VkDeviceSize kSlotBytes = kWords * 4;
// Initial values in an order that moves a reused counter above and below the request: the
// pool serves with an offset (counter above), a host signal (below, within 2^31), or not at
// all (2^40 above every counter left so far).
constexpr uint64_t kInitials[] = {0, 5, 1000000, 0, 3, uint64_t(1) << 40, 7, 0, 2000000, 1, 42, 0};
constexpr uint32_t kInitialCount = uint32_t(sizeof kInitials / sizeof kInitials[0]);

struct Rig {
    vkapp::Context& ctx;
    bool khr, sync2;
    PFN_vkWaitSemaphores wait_semaphores = nullptr;
    PFN_vkSignalSemaphore signal_semaphore = nullptr;
    PFN_vkGetSemaphoreCounterValue counter_value = nullptr;
    vkapp::Buffer slots;
    VkCommandPool pool = VK_NULL_HANDLE;
    std::vector<VkCommandBuffer> cbs;
    uint32_t next_cb = 0, next_value = 0x2000, next_initial = 0;
    uint64_t checksum = 1469598103934665603ull;
    bool ok = true;

    Rig(vkapp::Context& c, bool use_khr, bool use_sync2) : ctx(c), khr(use_khr), sync2(use_sync2) {
        wait_semaphores = reinterpret_cast<PFN_vkWaitSemaphores>(proc("vkWaitSemaphores"));
        signal_semaphore = reinterpret_cast<PFN_vkSignalSemaphore>(proc("vkSignalSemaphore"));
        counter_value = reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(proc("vkGetSemaphoreCounterValue"));
        slots = vkapp::create_buffer(ctx, kSlots * kSlotBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, suite::kHostMemory);
        pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        cbs = suite::allocate_command_buffers(ctx, pool, 2 * kSlots);
    }
    ~Rig() {
        vkDestroyCommandPool(ctx.device, pool, nullptr);
        vkapp::destroy_buffer(ctx, slots);
    }
    PFN_vkVoidFunction proc(const char* core) {
        const std::string name = std::string(core) + (khr ? "KHR" : "");
        PFN_vkVoidFunction fn = vkGetDeviceProcAddr(ctx.device, name.c_str());
        if (!fn) {
            std::fprintf(stderr, "fresh_timelines: %s is missing\n", name.c_str());
            std::exit(2);
        }
        return fn;
    }

    void fail(const char* what, const char* detail, uint64_t got = 0, uint64_t want = 0) {
        std::fprintf(stderr, "fresh_timelines: %s: %s (got %llu, want %llu)\n", what, detail,
                     static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
        ok = false;
    }
    uint64_t counter(VkSemaphore s) {
        uint64_t v = 0;
        VK_CHECK(counter_value(ctx.device, s, &v));
        checksum = vkapp::fnv1a(&v, sizeof v, checksum);
        return v;
    }
    void expect_counter(const char* what, VkSemaphore s, uint64_t want) {
        const uint64_t got = counter(s);
        if (got != want) fail(what, "vkGetSemaphoreCounterValue", got, want);
    }
    // A fresh timeline semaphore with the next initial value of the list, which it must have.
    VkSemaphore create(const char* what, uint64_t* initial) {
        *initial = kInitials[next_initial++ % kInitialCount];
        VkSemaphore s = vkapp::create_timeline_semaphore(ctx, *initial);
        expect_counter(what, s, *initial);
        return s;
    }
    void destroy(VkSemaphore s) { vkDestroySemaphore(ctx.device, s, nullptr); }

    VkResult wait(const std::vector<std::pair<VkSemaphore, uint64_t>>& conds, bool any, uint64_t timeout) {
        return vkapp::wait_timelines(wait_semaphores, ctx.device, conds, any, timeout);
    }
    void host_signal(VkSemaphore s, uint64_t value) {
        VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        si.semaphore = s;
        si.value = value;
        VK_CHECK(signal_semaphore(ctx.device, &si));
    }

    // A recorded fill of `slot` with a value of its own (in *value), made visible to the host.
    VkCommandBuffer record_fill(uint32_t slot, uint32_t* value) {
        VkCommandBuffer cb = cbs[next_cb++ % cbs.size()];
        *value = next_value++;
        suite::begin(cb);
        // Ordered after every earlier fill of the queue (the slots are reused), whatever the
        // host saw of their completion.
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cb, slots.buffer, slot * kSlotBytes, kSlotBytes, *value);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(cb));
        return cb;
    }
    struct Op {
        VkSemaphore semaphore;
        uint64_t value;
    };
    // One batch per fill: each waits for its `waits` and signals its `signals`, through
    // vkQueueSubmit or vkQueueSubmit2. One call for all of them.
    struct Batch {
        VkCommandBuffer cb;
        std::vector<Op> waits, signals;
    };
    void submit(const std::vector<Batch>& batches, bool submit2) {
        if (submit2) {
            std::vector<std::vector<VkSemaphoreSubmitInfo>> waits(batches.size()), signals(batches.size());
            std::vector<VkCommandBufferSubmitInfo> cbs2(batches.size());
            std::vector<VkSubmitInfo2> infos(batches.size());
            for (size_t i = 0; i < batches.size(); ++i) {
                for (const Op& w : batches[i].waits) {
                    VkSemaphoreSubmitInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
                    si.semaphore = w.semaphore;
                    si.value = w.value;
                    si.stageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT;
                    waits[i].push_back(si);
                }
                for (const Op& s : batches[i].signals) {
                    VkSemaphoreSubmitInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
                    si.semaphore = s.semaphore;
                    si.value = s.value;
                    si.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
                    signals[i].push_back(si);
                }
                cbs2[i] = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
                cbs2[i].commandBuffer = batches[i].cb;
                infos[i] = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
                infos[i].waitSemaphoreInfoCount = uint32_t(waits[i].size());
                infos[i].pWaitSemaphoreInfos = waits[i].data();
                infos[i].commandBufferInfoCount = 1;
                infos[i].pCommandBufferInfos = &cbs2[i];
                infos[i].signalSemaphoreInfoCount = uint32_t(signals[i].size());
                infos[i].pSignalSemaphoreInfos = signals[i].data();
            }
            VK_CHECK(vkQueueSubmit2(ctx.queue, uint32_t(infos.size()), infos.data(), VK_NULL_HANDLE));
            return;
        }
        const size_t n = batches.size();
        std::vector<std::vector<VkSemaphore>> wait_sems(n), signal_sems(n);
        std::vector<std::vector<uint64_t>> wait_values(n), signal_values(n);
        std::vector<std::vector<VkPipelineStageFlags>> stages(n);
        std::vector<VkTimelineSemaphoreSubmitInfo> values(n);
        std::vector<VkSubmitInfo> infos(n);
        for (size_t i = 0; i < n; ++i) {
            for (const Op& w : batches[i].waits) {
                wait_sems[i].push_back(w.semaphore);
                wait_values[i].push_back(w.value);
                stages[i].push_back(VK_PIPELINE_STAGE_TRANSFER_BIT);
            }
            for (const Op& s : batches[i].signals) {
                signal_sems[i].push_back(s.semaphore);
                signal_values[i].push_back(s.value);
            }
            values[i] = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
            values[i].waitSemaphoreValueCount = uint32_t(wait_values[i].size());
            values[i].pWaitSemaphoreValues = wait_values[i].data();
            values[i].signalSemaphoreValueCount = uint32_t(signal_values[i].size());
            values[i].pSignalSemaphoreValues = signal_values[i].data();
            infos[i] = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
            infos[i].pNext = &values[i];
            infos[i].waitSemaphoreCount = uint32_t(wait_sems[i].size());
            infos[i].pWaitSemaphores = wait_sems[i].data();
            infos[i].pWaitDstStageMask = stages[i].data();
            infos[i].commandBufferCount = 1;
            infos[i].pCommandBuffers = &batches[i].cb;
            infos[i].signalSemaphoreCount = uint32_t(signal_sems[i].size());
            infos[i].pSignalSemaphores = signal_sems[i].data();
        }
        VK_CHECK(vkQueueSubmit(ctx.queue, uint32_t(n), infos.data(), VK_NULL_HANDLE));
    }
    void check(const char* what, uint32_t slot, uint32_t value) {
        suite::invalidate(ctx, slots);
        const uint32_t* got = static_cast<const uint32_t*>(slots.mapped) + slot * kWords;
        std::vector<uint32_t> want(kWords, value);
        if (!suite::compare_words(what, got, want.data(), kWords)) ok = false;
        checksum = vkapp::fnv1a(got, kSlotBytes, checksum);
    }
    // Before a destroy: every batch that named the semaphore has completed.
    void idle() { VK_CHECK(vkQueueWaitIdle(ctx.queue)); }
};

void gpu_signal(Rig& rig, bool submit2) {
    const char* what = submit2 ? "gpu_signal (submit2)" : "gpu_signal";
    for (uint32_t i = 0; i < 12; ++i) {
        uint64_t v = 0;
        VkSemaphore t = rig.create(what, &v);
        uint32_t value = 0;
        const uint32_t slot = i % kSlots;
        rig.submit({{rig.record_fill(slot, &value), {}, {{t, v + 1}}}}, submit2);
        VK_CHECK(rig.wait({{t, v + 1}}, false, UINT64_MAX));
        rig.expect_counter(what, t, v + 1);
        rig.check(what, slot, value);
        rig.idle();
        rig.destroy(t);
    }
}

void gpu_chain(Rig& rig, bool submit2) {
    const char* what = submit2 ? "gpu_chain (submit2)" : "gpu_chain";
    for (uint32_t i = 0; i < 12; ++i) {
        uint64_t v = 0, u = 0;
        VkSemaphore t = rig.create(what, &v);
        VkSemaphore never = rig.create(what, &u);  // a WAIT_ANY condition never met
        uint32_t a = 0, b = 0;
        // B fills the same slot after A: the slot must hold B's value (the wait orders them).
        rig.submit({{rig.record_fill(1, &a), {}, {{t, v + 1}}}}, submit2);
        rig.submit({{rig.record_fill(1, &b), {{t, v + 1}}, {{t, v + 2}}}}, submit2);
        (void)a;
        VK_CHECK(rig.wait({{never, u + 1000}, {t, v + 2}}, true, UINT64_MAX));
        VK_CHECK(rig.wait({{t, v + 2}, {never, u}}, false, UINT64_MAX));
        rig.expect_counter(what, t, v + 2);
        rig.expect_counter(what, never, u);
        rig.host_signal(never, u + 1000);  // see kValidationNote
        rig.expect_counter(what, never, u + 1000);
        rig.check(what, 1, b);
        rig.idle();
        // The other order of destroys on odd rounds.
        if (i % 2) {
            rig.destroy(never);
            rig.destroy(t);
        } else {
            rig.destroy(t);
            rig.destroy(never);
        }
    }
}

void gpu_waits_host(Rig& rig, bool submit2) {
    const char* what = submit2 ? "gpu_waits_host (submit2)" : "gpu_waits_host";
    for (uint32_t i = 0; i < 8; ++i) {
        uint64_t v = 0;
        VkSemaphore t = rig.create(what, &v);
        uint32_t value = 0;
        const uint32_t slot = 2 + i % 4;
        rig.submit({{rig.record_fill(slot, &value), {{t, v + 1}}, {{t, v + 3}}}}, submit2);
        // Nothing can have run: the submission waits for the host.
        rig.expect_counter(what, t, v);
        const VkResult early = rig.wait({{t, v + 3}}, false, 0);
        if (early != VK_TIMEOUT) rig.fail(what, "a zero-timeout wait did not time out before the host signal", early, VK_TIMEOUT);
        rig.host_signal(t, v + 1);
        VK_CHECK(rig.wait({{t, v + 3}}, false, UINT64_MAX));
        rig.expect_counter(what, t, v + 3);
        rig.check(what, slot, value);
        rig.idle();
        rig.destroy(t);
    }
}

void host_only(Rig& rig) {
    const char* what = "host_only";
    for (uint32_t i = 0; i < 12; ++i) {
        uint64_t v = 0, w = 0;
        VkSemaphore t = rig.create(what, &v);
        VkSemaphore s = rig.create(what, &w);
        rig.host_signal(t, v + 2);
        rig.expect_counter(what, t, v + 2);
        rig.host_signal(t, v + 9);
        rig.expect_counter(what, t, v + 9);
        if (rig.wait({{t, v + 9}, {s, w}}, false, 0) != VK_SUCCESS) rig.fail(what, "wait-all on reached values");
        if (rig.wait({{s, w + 1}, {t, v + 9}}, true, 0) != VK_SUCCESS) rig.fail(what, "wait-any with one reached value");
        const VkResult not_yet = rig.wait({{t, v + 10}}, false, 0);
        if (not_yet != VK_TIMEOUT) rig.fail(what, "a wait past the counter did not time out", not_yet, VK_TIMEOUT);
        rig.expect_counter(what, s, w);
        // The values waited for in vain, reached (see kValidationNote).
        rig.host_signal(t, v + 10);
        rig.host_signal(s, w + 1);
        rig.expect_counter(what, t, v + 10);
        rig.expect_counter(what, s, w + 1);
        rig.destroy(t);
        rig.destroy(s);
    }
}

void many_alive(Rig& rig) {
    const char* what = "many_alive";
    constexpr uint32_t kAlive = 8;
    for (uint32_t round = 0; round < 3; ++round) {
        VkSemaphore sems[kAlive];
        uint64_t initial[kAlive];
        uint32_t values[kAlive];
        std::vector<Rig::Batch> batches;
        for (uint32_t i = 0; i < kAlive; ++i) sems[i] = rig.create(what, &initial[i]);
        for (uint32_t i = 0; i < kAlive; ++i)
            batches.push_back({rig.record_fill(8 + i, &values[i]), {}, {{sems[i], initial[i] + 1 + i}}});
        rig.submit(batches, false);
        std::vector<std::pair<VkSemaphore, uint64_t>> all;
        for (uint32_t i = 0; i < kAlive; ++i) all.push_back({sems[i], initial[i] + 1 + i});
        VK_CHECK(rig.wait(all, round == 1, UINT64_MAX));
        VK_CHECK(rig.wait(all, false, UINT64_MAX));
        for (uint32_t i = 0; i < kAlive; ++i) {
            rig.expect_counter(what, sems[i], initial[i] + 1 + i);
            rig.check(what, 8 + i, values[i]);
        }
        rig.idle();
        for (uint32_t i = 1; i < kAlive; i += 2) rig.destroy(sems[i]);
        for (uint32_t i = kAlive; i-- > 0;)
            if (i % 2 == 0) rig.destroy(sems[i]);
    }
}

void unused(Rig& rig) {
    for (uint32_t i = 0; i < 6; ++i) {
        uint64_t v = 0;
        rig.destroy(rig.create("unused", &v));
    }
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t scale = suite::parse_scale(argc, argv, "--khr");
    const bool khr = suite::has_flag(argc, argv, "--khr");
    vkapp::ContextOptions options;
    options.timeline_semaphores = true;
    if (khr) options.api_version = VK_API_VERSION_1_1;
    else options.synchronization2 = true;
    vkapp::Context ctx = vkapp::create_context("fresh_timelines", options);
    suite::print_device(argc, argv, ctx);
    uint64_t checksum = 0;
    bool ok = true;
    {
        Rig rig(ctx, khr, !khr);
        for (uint32_t s = 0; s < scale; ++s) {
            for (bool submit2 : {false, true}) {
                if (submit2 && !rig.sync2) continue;
                gpu_signal(rig, submit2);
                gpu_chain(rig, submit2);
                gpu_waits_host(rig, submit2);
            }
            host_only(rig);
            many_alive(rig);
            unused(rig);
        }
        // Every program of the suite ends with a device wait on a queue the layer knows is idle.
        VK_CHECK(vkDeviceWaitIdle(ctx.device));
        checksum = rig.checksum;
        ok = rig.ok;
    }
    return vkapp::finish_checked(ctx, ok, checksum);
}
