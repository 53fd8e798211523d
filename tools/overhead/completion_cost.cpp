// slipstream-completion-cost: what it costs the driver, per submission, to learn later which
// submissions have completed: the choice fusion's "one record of what completed, per queue"
// has to make (issue 10, item 4). No layer: the driver's own cost, measured side by side.
//   none:      vkQueueSubmit of a one-dispatch command buffer, no fence, no semaphore
//   fence:     the same with a fence from a ring of 64, reset in one vkResetFences per 64
//              submissions (what the idle tracker does), the reset counted in
//   timeline:  the same signalling a timeline semaphore, value n for the n-th submission
//   submit2_timeline: the same through vkQueueSubmit2
// and the cost of asking: vkGetFenceStatus of a signaled fence, vkGetSemaphoreCounterValue, and
// the driver's vkQueueWaitIdle and vkDeviceWaitIdle on a queue with nothing submitted since the
// last idle wait (`*_idle`) and right after a submission whose fence the host saw signal
// (`*_after_work`: what an idle wait costs once a spin has seen the work complete).
// A fence ring needs log2(n) status queries to find how far the queue got (a binary search over
// the in-flight fences); a timeline, one counter read. Repetitions alternate between the ways;
// the GPU's own time (waits between batches) is not counted. Prints a table and one JSON line.
#include "tiny_rig.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
double ns_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::nano>(b - a).count(); }
constexpr int kRing = 64;

struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    VkCommandBuffer cb = tiny.record_one_dispatch();
    VkFence ring[kRing] = {};
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t value = 0;

    Rig() : tiny("slipstream-completion-cost", options()) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        for (VkFence& f : ring) VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &f));
        timeline = vkapp::create_timeline_semaphore(tiny.ctx);
    }
    ~Rig() {
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        vkDestroySemaphore(ctx.device, timeline, nullptr);
        for (VkFence f : ring) vkDestroyFence(ctx.device, f, nullptr);
    }
    static vkapp::ContextOptions options() {
        vkapp::ContextOptions o;
        o.timeline_semaphores = true;
        o.synchronization2 = true;
        return o;
    }

    // ns per submission of `way`, over `submits` submissions in batches of kRing; the wait for
    // each batch to finish is not counted.
    double submit_ns(const std::string& way, int submits) {
        double ns = 0;
        for (int done = 0; done < submits; done += kRing) {
            const int n = std::min(kRing, submits - done);
            Clock::time_point t0 = Clock::now();
            for (int i = 0; i < n; ++i) {
                if (way == "submit2_timeline") {
                    VkCommandBufferSubmitInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
                    ci.commandBuffer = cb;
                    VkSemaphoreSubmitInfo sig{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
                    sig.semaphore = timeline;
                    sig.value = ++value;
                    sig.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
                    VkSubmitInfo2 s2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
                    s2.commandBufferInfoCount = 1;
                    s2.pCommandBufferInfos = &ci;
                    s2.signalSemaphoreInfoCount = 1;
                    s2.pSignalSemaphoreInfos = &sig;
                    VK_CHECK(vkQueueSubmit2(ctx.queue, 1, &s2, VK_NULL_HANDLE));
                    continue;
                }
                VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
                si.commandBufferCount = 1;
                si.pCommandBuffers = &cb;
                VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
                VkFence fence = VK_NULL_HANDLE;
                if (way == "fence") {
                    fence = ring[i];
                } else if (way == "timeline") {
                    ++value;
                    ts.signalSemaphoreValueCount = 1;
                    ts.pSignalSemaphoreValues = &value;
                    si.pNext = &ts;
                    si.signalSemaphoreCount = 1;
                    si.pSignalSemaphores = &timeline;
                }
                VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
            }
            Clock::time_point t1 = Clock::now();
            VK_CHECK(vkQueueWaitIdle(ctx.queue));
            Clock::time_point t2 = Clock::now();
            if (way == "fence") VK_CHECK(vkResetFences(ctx.device, uint32_t(n), ring));
            ns += ns_between(t0, t1) + ns_between(t2, Clock::now());
        }
        return ns / submits;
    }

    // One idle wait of the driver's: the queue's or the device's.
    void wait_idle(const std::string& way) {
        if (way.rfind("queue", 0) == 0) VK_CHECK(vkQueueWaitIdle(ctx.queue));
        else VK_CHECK(vkDeviceWaitIdle(ctx.device));
    }

    // ns per idle wait right after one dispatch completed (its fence seen signaled; the
    // submission, the spin and the reset not counted).
    double idle_after_work_ns(const std::string& way, int queries) {
        double ns = 0;
        for (int i = 0; i < queries; ++i) {
            VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            si.commandBufferCount = 1;
            si.pCommandBuffers = &cb;
            VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, ring[0]));
            while (vkGetFenceStatus(ctx.device, ring[0]) == VK_NOT_READY) {
            }
            Clock::time_point t0 = Clock::now();
            wait_idle(way);
            ns += ns_between(t0, Clock::now());
            VK_CHECK(vkResetFences(ctx.device, 1, ring));
        }
        return ns / queries;
    }

    // ns per query of how far the queue got: one vkGetFenceStatus, one counter read, one idle
    // wait of the driver's.
    double query_ns(const std::string& way, int queries) {
        if (way.find("_after_work") != std::string::npos) return idle_after_work_ns(way, std::min(queries, 200));
        VK_CHECK(vkQueueSubmit(ctx.queue, 0, nullptr, ring[0]));
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        Clock::time_point t0 = Clock::now();
        uint64_t v = 0;
        for (int i = 0; i < queries; ++i) {
            if (way == "queue_wait_idle" || way == "device_wait_idle") {
                wait_idle(way);
            } else if (way == "fence_status") {
                if (vkGetFenceStatus(ctx.device, ring[0]) != VK_SUCCESS) vkapp::fail("fence status", VK_NOT_READY, __FILE__, __LINE__);
            } else {
                VK_CHECK(vkGetSemaphoreCounterValue(ctx.device, timeline, &v));
            }
        }
        double ns = ns_between(t0, Clock::now()) / queries;
        VK_CHECK(vkResetFences(ctx.device, 1, ring));
        return ns;
    }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 11, submits = 2048, queries = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--submits")) submits = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--queries")) queries = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: %s [--reps N] [--submits N] [--queries N]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || submits < 1 || queries < 1) {
        std::fprintf(stderr, "--reps, --submits and --queries must be positive\n");
        return 2;
    }
    const std::vector<std::string> submit_ways = {"none", "fence", "timeline", "submit2_timeline"};
    const std::vector<std::string> query_ways = {"fence_status",           "counter_value",
                                                 "queue_wait_idle",        "device_wait_idle",
                                                 "queue_wait_idle_after_work", "device_wait_idle_after_work"};
    std::vector<std::vector<double>> s(submit_ways.size()), q(query_ways.size());
    std::string device;
    int failures = 0;
    {
        Rig rig;
        device = rig.ctx.properties.deviceName;
        for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 warms up
            for (size_t k = 0; k < submit_ways.size(); ++k) {
                size_t w = (k + size_t(rep)) % submit_ways.size();  // rotate who goes first
                double ns = rig.submit_ns(submit_ways[w], submits);
                if (rep) s[w].push_back(ns);
            }
            for (size_t w = 0; w < query_ways.size(); ++w) {
                double ns = rig.query_ns(query_ways[w], queries);
                if (rep) q[w].push_back(ns);
            }
        }
        failures = vkapp::g_validation_messages.load();
    }
    std::printf("%s: %d submissions and %d queries per repetition, %d repetitions (no layer)\n", device.c_str(),
                submits, queries, reps);
    std::printf("%-22s%12s%12s%14s\n", "per submission", "min ns", "median ns", "added (med)");
    for (size_t w = 0; w < submit_ways.size(); ++w)
        std::printf("%-22s%12.0f%12.0f%14.0f\n", submit_ways[w].c_str(), *std::min_element(s[w].begin(), s[w].end()),
                    median(s[w]), median(s[w]) - median(s[0]));
    std::printf("%-28s%12s%12s\n", "per query", "min ns", "median ns");
    for (size_t w = 0; w < query_ways.size(); ++w)
        std::printf("%-28s%12.1f%12.1f\n", query_ways[w].c_str(), *std::min_element(q[w].begin(), q[w].end()),
                    median(q[w]));
    std::string json = "{\"device\": \"" + device + "\"";
    for (size_t w = 0; w < submit_ways.size(); ++w)
        json += ", \"submit_" + submit_ways[w] + "_ns\": {\"min\": " + std::to_string(*std::min_element(s[w].begin(), s[w].end())) +
                ", \"median\": " + std::to_string(median(s[w])) + "}";
    for (size_t w = 0; w < query_ways.size(); ++w)
        json += ", \"query_" + query_ways[w] + "_ns\": {\"min\": " + std::to_string(*std::min_element(q[w].begin(), q[w].end())) +
                ", \"median\": " + std::to_string(median(q[w])) + "}";
    std::printf("%s}\n", json.c_str());
    return failures ? 1 : 0;
}
