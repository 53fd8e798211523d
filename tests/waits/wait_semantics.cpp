// Wait semantics that spin-then-block must keep, each checked against the spec's promise:
//  - fence waits: timeout 0 returns at once; a finite timeout on a fence that never signals
//    returns VK_TIMEOUT after at least the timeout and not much more; waitAll true/false over
//    mixed signaled/unsignaled fences; GPU work is complete when a wait returns;
//  - timeline semaphores: wait-all and wait-any with host signals from another thread,
//    timeouts, timeout 0, GPU signals;
//  - vkQueueWaitIdle / vkDeviceWaitIdle: GPU work (with and without application fences, after
//    fences are waited, reset and destroyed, on two queues) is complete when they return.
// Busy kernels make early returns visible: their output is zero until they finish.
#include "vk_app.h"
#include "busy_comp.h"

#include <chrono>
#include <cstring>
#include <thread>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kInvocations = 1024;
constexpr uint32_t kIterations = 60000;  // lavapipe runs at most 65535 (see busy.comp)
int g_failures = 0;
// Generous upper bound on "not much more than the timeout": CI machines are small and shared.
constexpr double kSlackMs = 100.0;

#define EXPECT(cond, ...)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
            std::fprintf(stderr, __VA_ARGS__);                         \
            std::fprintf(stderr, "\n");                                \
            ++g_failures;                                              \
        }                                                              \
    } while (0)

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// --strict-timeouts: Slipstream's promise with its waits on (VK_SLIPSTREAM_SPIN=on, any
// budget): a wait that returns VK_TIMEOUT has lasted at least its whole timeout. Without it
// (no layer, or spin off) the driver answers, and drivers may return a little early (NVIDIA
// 580: 1 us before a 50 us timeout), so only 95% of the timeout is required.
bool g_strict_timeouts = false;
bool lasted(Clock::time_point t, uint64_t timeout_ns) {
    const auto elapsed = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
    return g_strict_timeouts ? elapsed >= timeout_ns : elapsed >= timeout_ns / 20 * 19;
}

uint32_t expected_value(uint32_t seed, uint32_t index) {
    uint32_t x = seed + index;
    for (uint32_t i = 0; i < kIterations; ++i) x = x * 1664525u + 1013904223u;
    return x | 1u;
}

struct Busy {
    vkapp::Context& ctx;
    vkapp::ComputePipeline pipe;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkCommandPool cmd_pool = VK_NULL_HANDLE;
    std::vector<vkapp::Buffer> buffers;
    std::vector<VkDescriptorSet> sets;
    std::vector<VkCommandBuffer> cbs;
    uint64_t checksum = 0;

    Busy(vkapp::Context& c, uint32_t slots) : ctx(c) {
        pipe = vkapp::create_compute_pipeline(ctx, busy_comp, sizeof busy_comp, 1, 8);
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, slots};
        VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = slots;
        dpi.poolSizeCount = 1;
        dpi.pPoolSizes = &size;
        VK_CHECK(vkCreateDescriptorPool(ctx.device, &dpi, nullptr, &pool));
        cmd_pool = vkapp::create_command_pool(ctx, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
        cbs.resize(slots);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = cmd_pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = slots;
        VK_CHECK(vkAllocateCommandBuffers(ctx.device, &ai, cbs.data()));
        for (uint32_t i = 0; i < slots; ++i) {
            buffers.push_back(vkapp::create_buffer(
                ctx, kInvocations * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT));
            VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
            dsa.descriptorPool = pool;
            dsa.descriptorSetCount = 1;
            dsa.pSetLayouts = &pipe.set_layout;
            VkDescriptorSet set;
            VK_CHECK(vkAllocateDescriptorSets(ctx.device, &dsa, &set));
            vkapp::write_storage_buffers(ctx, set, {buffers.back().buffer});
            sets.push_back(set);
        }
    }
    ~Busy() {
        vkDestroyCommandPool(ctx.device, cmd_pool, nullptr);
        vkDestroyDescriptorPool(ctx.device, pool, nullptr);
        vkapp::destroy_compute_pipeline(ctx, pipe);
        for (auto& b : buffers) vkapp::destroy_buffer(ctx, b);
    }

    // Clears slot `i`'s output on the host, then submits the busy kernel writing it.
    void submit(uint32_t i, uint32_t seed, VkQueue queue, VkFence fence, VkSemaphore signal = VK_NULL_HANDLE,
                uint64_t signal_value = 0) {
        std::memset(buffers[i].mapped, 0, kInvocations * 4);
        VkCommandBuffer cb = cbs[i];
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK_CHECK(vkBeginCommandBuffer(cb, &bi));
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout, 0, 1, &sets[i], 0, nullptr);
        uint32_t push[2] = {kIterations, seed};
        vkCmdPushConstants(cb, pipe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
        vkCmdDispatch(cb, kInvocations / 64, 1, 1);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(cb));
        VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        ts.signalSemaphoreValueCount = 1;
        ts.pSignalSemaphoreValues = &signal_value;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        if (signal) {
            si.pNext = &ts;
            si.signalSemaphoreCount = 1;
            si.pSignalSemaphores = &signal;
        }
        VK_CHECK(vkQueueSubmit(queue, 1, &si, fence));
    }

    // Slot `i` holds the finished result of `seed`: checked on the host, folded into the checksum.
    void check(uint32_t i, uint32_t seed, const char* what) {
        const uint32_t* v = static_cast<const uint32_t*>(buffers[i].mapped);
        for (uint32_t k = 0; k < kInvocations; k += 37) {
            const uint32_t want = expected_value(seed, k);
            const uint32_t got = v[k];  // read once: the GPU may still be writing it
            if (got != want) {
                EXPECT(false, "%s: slot %u[%u] = %08x, expected %08x (work not complete?)", what, i, k, got, want);
                return;
            }
        }
        checksum = vkapp::fnv1a(v, kInvocations * 4, checksum);
    }
};

VkFence make_fence(vkapp::Context& ctx, bool signaled) {
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (signaled) fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    VkFence f;
    VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &f));
    return f;
}

void host_signal_later(vkapp::Context& ctx, VkSemaphore s, uint64_t value, int delay_ms, std::thread* t) {
    *t = std::thread([&ctx, s, value, delay_ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        si.semaphore = s;
        si.value = value;
        VK_CHECK(vkSignalSemaphore(ctx.device, &si));
    });
}

VkResult wait_timeline(vkapp::Context& ctx, std::vector<VkSemaphore> sems, std::vector<uint64_t> values, bool any,
                       uint64_t timeout_ns) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.flags = any ? VK_SEMAPHORE_WAIT_ANY_BIT : 0;
    wi.semaphoreCount = uint32_t(sems.size());
    wi.pSemaphores = sems.data();
    wi.pValues = values.data();
    return vkWaitSemaphores(ctx.device, &wi, timeout_ns);
}

void fence_timeouts(vkapp::Context& ctx) {
    VkFence never = make_fence(ctx, false), signaled = make_fence(ctx, true);
    auto t = Clock::now();
    VkResult r = vkWaitForFences(ctx.device, 1, &never, VK_TRUE, 0);
    double ms = ms_since(t);
    EXPECT(r == VK_TIMEOUT, "timeout 0 on an unsignaled fence: %d", r);
    EXPECT(ms < kSlackMs, "timeout 0 took %.3f ms: it must return at once", ms);

    for (uint64_t timeout_ms : {1, 5}) {
        t = Clock::now();
        r = vkWaitForFences(ctx.device, 1, &never, VK_TRUE, timeout_ms * 1000000);
        const bool long_enough = lasted(t, timeout_ms * 1000000);
        ms = ms_since(t);
        EXPECT(r == VK_TIMEOUT, "%llu ms wait on a fence that never signals: %d", (unsigned long long)timeout_ms, r);
        EXPECT(long_enough, "%llu ms timeout returned after %.4f ms", (unsigned long long)timeout_ms, ms);
        EXPECT(ms < double(timeout_ms) + kSlackMs, "%llu ms timeout returned after %.3f ms", (unsigned long long)timeout_ms, ms);
    }
    // Below the default spin budget (100 µs): the timeout still wins.
    for (int i = 0; i < 20; ++i) {
        t = Clock::now();
        r = vkWaitForFences(ctx.device, 1, &never, VK_TRUE, 50000);
        const bool long_enough = lasted(t, 50000);
        ms = ms_since(t);
        EXPECT(r == VK_TIMEOUT && long_enough, "50 us timeout: %d after %.4f ms", r, ms);
    }

    VkFence mixed[2] = {never, signaled};
    t = Clock::now();
    r = vkWaitForFences(ctx.device, 2, mixed, VK_FALSE, 1000000000ull);
    ms = ms_since(t);
    EXPECT(r == VK_SUCCESS, "waitAll=false with one signaled fence: %d", r);
    EXPECT(ms < kSlackMs, "waitAll=false with one signaled fence took %.3f ms", ms);
    r = vkWaitForFences(ctx.device, 2, mixed, VK_FALSE, 0);
    EXPECT(r == VK_SUCCESS, "waitAll=false, timeout 0, one signaled: %d", r);
    t = Clock::now();
    r = vkWaitForFences(ctx.device, 2, mixed, VK_TRUE, 2000000);
    bool long_enough = lasted(t, 2000000);
    ms = ms_since(t);
    EXPECT(r == VK_TIMEOUT && long_enough, "waitAll=true with one unsignaled fence: %d after %.4f ms", r, ms);
    r = vkWaitForFences(ctx.device, 1, &signaled, VK_TRUE, 0);
    EXPECT(r == VK_SUCCESS, "timeout 0 on a signaled fence: %d", r);
    vkDestroyFence(ctx.device, never, nullptr);
    vkDestroyFence(ctx.device, signaled, nullptr);
}

void fence_gpu_waits(vkapp::Context& ctx, Busy& busy) {
    VkFence a = make_fence(ctx, false), b = make_fence(ctx, false);
    busy.submit(0, 11, ctx.queue, a);
    EXPECT(vkWaitForFences(ctx.device, 1, &a, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "wait on GPU fence");
    busy.check(0, 11, "fence wait");
    VK_CHECK(vkResetFences(ctx.device, 1, &a));
    busy.submit(0, 12, ctx.queue, a);
    busy.submit(1, 13, ctx.queue, b);
    VkFence both[2] = {a, b};
    EXPECT(vkWaitForFences(ctx.device, 2, both, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "waitAll on two GPU fences");
    busy.check(0, 12, "waitAll a");
    busy.check(1, 13, "waitAll b");
    VK_CHECK(vkResetFences(ctx.device, 2, both));
    busy.submit(0, 14, ctx.queue, a);
    VkResult r;
    while ((r = vkGetFenceStatus(ctx.device, a)) == VK_NOT_READY) std::this_thread::yield();
    EXPECT(r == VK_SUCCESS, "vkGetFenceStatus loop: %d", r);
    busy.check(0, 14, "vkGetFenceStatus loop");
    // Known signaled, then reset: every way of asking must see the reset.
    EXPECT(vkWaitForFences(ctx.device, 1, &a, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "wait on a signaled fence");
    VK_CHECK(vkResetFences(ctx.device, 1, &a));
    EXPECT(vkGetFenceStatus(ctx.device, a) == VK_NOT_READY, "vkGetFenceStatus after a reset");
    EXPECT(vkWaitForFences(ctx.device, 1, &a, VK_TRUE, 0) == VK_TIMEOUT, "wait, timeout 0, after a reset");
    EXPECT(vkWaitForFences(ctx.device, 1, &a, VK_TRUE, 1000000) == VK_TIMEOUT, "wait, 1 ms, after a reset");
    VkFence c = make_fence(ctx, true);
    VkFence again[2] = {c, a};
    EXPECT(vkWaitForFences(ctx.device, 1, &c, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "wait on a fence made signaled");
    EXPECT(vkWaitForFences(ctx.device, 2, again, VK_TRUE, 0) == VK_TIMEOUT, "waitAll with one fence reset");
    EXPECT(vkWaitForFences(ctx.device, 2, again, VK_FALSE, 0) == VK_SUCCESS, "wait-any with one fence signaled");
    vkDestroyFence(ctx.device, c, nullptr);
    vkDestroyFence(ctx.device, a, nullptr);
    vkDestroyFence(ctx.device, b, nullptr);
}

// Exporting a sync fd has copy transference: it resets the fence, which every later query
// must see (the layer must not keep it as known signaled, nor as its queue's latest fence).
void fence_sync_fd_export(vkapp::Context& ctx, Busy& busy) {
    if (!ctx.has_device_extension(VK_KHR_EXTERNAL_FENCE_FD_EXTENSION_NAME)) {
        std::printf("note: no VK_KHR_external_fence_fd; the sync-fd export case is skipped\n");
        return;
    }
    VkPhysicalDeviceExternalFenceInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_FENCE_INFO};
    info.handleType = VK_EXTERNAL_FENCE_HANDLE_TYPE_SYNC_FD_BIT;
    VkExternalFenceProperties props{VK_STRUCTURE_TYPE_EXTERNAL_FENCE_PROPERTIES};
    vkGetPhysicalDeviceExternalFenceProperties(ctx.physical_device, &info, &props);
    if (!(props.externalFenceFeatures & VK_EXTERNAL_FENCE_FEATURE_EXPORTABLE_BIT)) {
        std::printf("note: sync fds cannot be exported from fences; the sync-fd export case is skipped\n");
        return;
    }
    auto get_fd = reinterpret_cast<PFN_vkGetFenceFdKHR>(vkGetDeviceProcAddr(ctx.device, "vkGetFenceFdKHR"));
    VkExportFenceCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_FENCE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_FENCE_HANDLE_TYPE_SYNC_FD_BIT;
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fi.pNext = &export_info;
    VkFence f;
    VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &f));
    busy.submit(0, 15, ctx.queue, f);
    EXPECT(vkWaitForFences(ctx.device, 1, &f, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "wait before the export");
    busy.check(0, 15, "wait before the export");
    VkFenceGetFdInfoKHR gi{VK_STRUCTURE_TYPE_FENCE_GET_FD_INFO_KHR};
    gi.fence = f;
    gi.handleType = VK_EXTERNAL_FENCE_HANDLE_TYPE_SYNC_FD_BIT;
    int fd = -1;
    VK_CHECK(get_fd(ctx.device, &gi, &fd));
    if (fd >= 0) close(fd);
    EXPECT(vkGetFenceStatus(ctx.device, f) == VK_NOT_READY, "vkGetFenceStatus after a sync-fd export");
    EXPECT(vkWaitForFences(ctx.device, 1, &f, VK_TRUE, 0) == VK_TIMEOUT, "wait after a sync-fd export");
    // The fence is no longer the queue's latest: its next signal says nothing of this queue.
    busy.submit(1, 16, ctx.queue, VK_NULL_HANDLE);
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after the export");
    busy.check(1, 16, "queue idle after the export");
    vkDestroyFence(ctx.device, f, nullptr);
}

void timeline_waits(vkapp::Context& ctx, Busy& busy) {
    VkSemaphore s1 = vkapp::create_timeline_semaphore(ctx), s2 = vkapp::create_timeline_semaphore(ctx), s3 = vkapp::create_timeline_semaphore(ctx);
    std::thread t1, t2;

    auto t = Clock::now();
    host_signal_later(ctx, s1, 3, 2, &t1);
    VkResult r = wait_timeline(ctx, {s1}, {3}, false, UINT64_MAX);
    double ms = ms_since(t);
    t1.join();
    EXPECT(r == VK_SUCCESS && ms >= 1.5, "wait for a host signal after 2 ms: %d after %.3f ms", r, ms);

    host_signal_later(ctx, s2, 1, 2, &t2);
    r = wait_timeline(ctx, {s1, s2}, {100, 1}, true, UINT64_MAX);
    t2.join();
    uint64_t v1 = 0, v2 = 0;
    vkGetSemaphoreCounterValue(ctx.device, s1, &v1);
    vkGetSemaphoreCounterValue(ctx.device, s2, &v2);
    EXPECT(r == VK_SUCCESS && v1 == 3 && v2 == 1, "wait-any: %d, values %llu %llu", r, (unsigned long long)v1,
           (unsigned long long)v2);

    t = Clock::now();  // before the threads start: each sleeps its delay after this
    host_signal_later(ctx, s1, 5, 1, &t1);
    host_signal_later(ctx, s2, 4, 3, &t2);
    r = wait_timeline(ctx, {s1, s2}, {5, 4}, false, UINT64_MAX);
    ms = ms_since(t);
    vkGetSemaphoreCounterValue(ctx.device, s1, &v1);
    vkGetSemaphoreCounterValue(ctx.device, s2, &v2);
    t1.join();
    t2.join();
    EXPECT(r == VK_SUCCESS && ms >= 2.999, "wait-all for two host signals (1 ms, 3 ms): %d after %.3f ms", r, ms);
    EXPECT(v1 >= 5 && v2 >= 4, "wait-all returned before both values: %llu %llu", (unsigned long long)v1,
           (unsigned long long)v2);

    for (uint64_t timeout_ns : {50000ull, 1000000ull}) {
        t = Clock::now();
        r = wait_timeline(ctx, {s1}, {100}, false, timeout_ns);
        const bool long_enough = lasted(t, timeout_ns);
        ms = ms_since(t);
        EXPECT(r == VK_TIMEOUT && long_enough && ms < 1.0 + kSlackMs, "%llu ns timeline timeout: %d after %.4f ms",
               (unsigned long long)timeout_ns, r, ms);
    }
    t = Clock::now();
    r = wait_timeline(ctx, {s1, s2}, {100, 100}, true, 0);
    ms = ms_since(t);
    EXPECT(r == VK_TIMEOUT && ms < kSlackMs, "timeline timeout 0: %d after %.3f ms", r, ms);
    r = wait_timeline(ctx, {s1, s2}, {100, 4}, true, 0);
    EXPECT(r == VK_SUCCESS, "wait-any, timeout 0, one reached: %d", r);

    busy.submit(2, 21, ctx.queue, VK_NULL_HANDLE, s3, 7);
    r = wait_timeline(ctx, {s3}, {7}, false, UINT64_MAX);
    EXPECT(r == VK_SUCCESS, "wait for a GPU timeline signal: %d", r);
    busy.check(2, 21, "GPU timeline signal");
    VK_CHECK(vkQueueWaitIdle(ctx.queue));
    for (VkSemaphore s : {s1, s2, s3}) vkDestroySemaphore(ctx.device, s, nullptr);
}

void idle_waits(vkapp::Context& ctx, Busy& busy) {
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "idle wait on an idle queue");
    EXPECT(vkDeviceWaitIdle(ctx.device) == VK_SUCCESS, "device idle wait on an idle device");

    busy.submit(0, 31, ctx.queue, VK_NULL_HANDLE);
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after a fence-less submit");
    busy.check(0, 31, "queue idle, no fence");
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "second queue idle wait");

    VkFence f = make_fence(ctx, false);
    busy.submit(0, 32, ctx.queue, f);
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after a submit with a fence");
    busy.check(0, 32, "queue idle, app fence");
    EXPECT(vkWaitForFences(ctx.device, 1, &f, VK_TRUE, 0) == VK_SUCCESS, "the app fence is signaled after queue idle");

    // Wait, reset, then new work without a fence: the idle wait must wait for the new work.
    VK_CHECK(vkResetFences(ctx.device, 1, &f));
    busy.submit(0, 33, ctx.queue, f);
    VK_CHECK(vkWaitForFences(ctx.device, 1, &f, VK_TRUE, UINT64_MAX));
    VK_CHECK(vkResetFences(ctx.device, 1, &f));
    busy.submit(1, 34, ctx.queue, VK_NULL_HANDLE);
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after reset + new work");
    busy.check(0, 33, "fence-waited work");
    busy.check(1, 34, "queue idle after fence reset");

    // A fence submitted, waited and destroyed; then a fence-less submit and a device idle wait.
    busy.submit(0, 35, ctx.queue, f);
    VK_CHECK(vkWaitForFences(ctx.device, 1, &f, VK_TRUE, UINT64_MAX));
    vkDestroyFence(ctx.device, f, nullptr);
    busy.submit(1, 36, ctx.queue, VK_NULL_HANDLE);
    EXPECT(vkDeviceWaitIdle(ctx.device) == VK_SUCCESS, "device idle after a destroyed fence");
    busy.check(1, 36, "device idle");
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after device idle");

    // Submits whose fence is reset while the work may still be queued behind it are invalid,
    // so instead: a fence waited with vkGetFenceStatus, then new work and a device idle wait.
    if (ctx.queues.size() > 1) {
        busy.submit(2, 37, ctx.queues[1], VK_NULL_HANDLE);
        busy.submit(3, 38, ctx.queue, VK_NULL_HANDLE);
        EXPECT(vkDeviceWaitIdle(ctx.device) == VK_SUCCESS, "device idle over two queues");
        busy.check(2, 37, "device idle, second queue");
        busy.check(3, 38, "device idle, first queue");
    } else {
        std::printf("note: one queue in the family; the two-queue case is skipped\n");
    }
    // Many fence-less submits in flight, then one idle wait.
    for (uint32_t i = 0; i < 4; ++i) busy.submit(i, 40 + i, ctx.queue, VK_NULL_HANDLE);
    EXPECT(vkQueueWaitIdle(ctx.queue) == VK_SUCCESS, "queue idle after four submits");
    for (uint32_t i = 0; i < 4; ++i) busy.check(i, 40 + i, "queue idle after four submits");
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--strict-timeouts") == 0) {
            g_strict_timeouts = true;
        } else {
            std::fprintf(stderr, "usage: %s [--strict-timeouts]\n", argv[0]);
            return 2;
        }
    }
    vkapp::ContextOptions options;
    options.timeline_semaphores = true;
    options.queue_count = 2;
    options.optional_device_extensions = {VK_KHR_EXTERNAL_FENCE_FD_EXTENSION_NAME};
    vkapp::Context ctx = vkapp::create_context("wait_semantics", options);
    uint64_t checksum = 0;
    {
        Busy busy(ctx, 4);
        fence_timeouts(ctx);
        fence_gpu_waits(ctx, busy);
        fence_sync_fd_export(ctx, busy);
        timeline_waits(ctx, busy);
        idle_waits(ctx, busy);
        checksum = busy.checksum;
    }
    if (g_failures) {
        std::fprintf(stderr, "%d check(s) failed\n", g_failures);
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
