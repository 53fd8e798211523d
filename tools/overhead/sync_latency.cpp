// slipstream-sync-latency: the round trip of one tiny dispatch, submitted and then waited for by
// spinning on vkGetFenceStatus, for each shape of submission the layer or an application may
// make. No layer: the driver's and the GPU's own price of each ingredient of a fused batch of
// one operation ("launch + device sync"), side by side in one process.
//   tuned:          compute barrier, dispatch; fence (a hand-written runtime's command buffer)
//   all_commands:   ALL_COMMANDS barrier, dispatch; fence (a naive one's, fusion off)
//   trailing:       tuned + a full barrier from compute|transfer|indirect to ALL_COMMANDS at the
//                   end (what a batch with narrowed barriers ends with)
//   timeline:       tuned, also signalling a timeline semaphore (every fused submission does)
//   fused:          trailing + timeline: a fused batch of one operation
//   timeline_counter: timeline, but spinning on the semaphore's counter, not the fence
//   timeline_only:  tuned signalling only the timeline (no fence), spinning on its counter
//   rerecord:       tuned, recorded anew before each submission (recording on the critical path)
// Round trips of the ways alternate; each way's median and 10th percentile are printed, and one
// JSON line.
#include "tiny_rig.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

enum class Way { tuned, all_commands, trailing, timeline, fused, timeline_counter, timeline_only, rerecord };
const char* const kNames[] = {"tuned",          "all_commands",  "trailing", "timeline",
                              "fused",          "timeline_counter", "timeline_only", "rerecord"};
constexpr int kWays = 8;
bool signals_timeline(Way w) { return w == Way::timeline || w == Way::fused || w == Way::timeline_counter || w == Way::timeline_only; }

struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    VkCommandBuffer cbs[kWays] = {};
    VkFence fence = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t value = 0;

    Rig() : tiny("slipstream-sync-latency", options(), VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT) {
        for (int w = 0; w < kWays; ++w) {
            cbs[w] = tiny.allocate();
            if (Way(w) != Way::rerecord) record(Way(w), cbs[w], 0);
        }
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
        timeline = vkapp::create_timeline_semaphore(tiny.ctx);
    }
    ~Rig() {
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        vkDestroySemaphore(ctx.device, timeline, nullptr);
        vkDestroyFence(ctx.device, fence, nullptr);
    }
    static vkapp::ContextOptions options() {
        vkapp::ContextOptions o;
        o.timeline_semaphores = true;
        return o;
    }

    void record(Way w, VkCommandBuffer cb, VkCommandBufferUsageFlags flags) {
        constexpr VkPipelineStageFlags ct = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
        constexpr VkAccessFlags writes = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        constexpr VkAccessFlags reads_writes =
            writes | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT;
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = flags;
        VK_CHECK(vkBeginCommandBuffer(cb, &bi));
        if (w == Way::all_commands)
            vkapp::barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                           VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
        else
            vkapp::barrier(cb, ct, writes, ct, reads_writes);
        tiny.bind(cb);
        vkCmdDispatch(cb, 1, 1, 1);
        if (w == Way::trailing || w == Way::fused)
            vkapp::barrier(cb, ct | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, writes, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
        VK_CHECK(vkEndCommandBuffer(cb));
    }

    // One round trip of `w`, in ns: (record,) submit, spin until the fence signals.
    double round_trip_ns(Way w) {
        const Clock::time_point t0 = Clock::now();
        if (w == Way::rerecord) record(Way::tuned, cbs[int(w)], VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cbs[int(w)];
        VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        uint64_t signal = 0;
        if (signals_timeline(w)) {
            signal = ++value;
            ts.signalSemaphoreValueCount = 1;
            ts.pSignalSemaphoreValues = &signal;
            si.pNext = &ts;
            si.signalSemaphoreCount = 1;
            si.pSignalSemaphores = &timeline;
        }
        const bool fenced = w != Way::timeline_only;
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fenced ? fence : VK_NULL_HANDLE));
        if (w == Way::timeline_counter || w == Way::timeline_only) {
            for (uint64_t v = 0; v < signal;) VK_CHECK(vkGetSemaphoreCounterValue(ctx.device, timeline, &v));
        } else {
            for (;;) {
                const VkResult r = vkGetFenceStatus(ctx.device, fence);
                if (r == VK_SUCCESS) break;
                if (r != VK_NOT_READY) vkapp::fail("vkGetFenceStatus", r, __FILE__, __LINE__);
            }
        }
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        if (fenced) {
            VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
            VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        }
        return ns;
    }
};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[size_t(p * double(v.size() - 1))];
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 20, trips = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--trips")) trips = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: %s [--reps N] [--trips N]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || trips < 1) {
        std::fprintf(stderr, "--reps and --trips must be positive\n");
        return 2;
    }
    std::vector<double> t[kWays];
    std::string device;
    int failures = 0;
    {
        Rig rig;
        device = rig.ctx.properties.deviceName;
        for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 warms up
            for (int k = 0; k < kWays; ++k) {
                const int w = (k + rep) % kWays;  // rotate who goes first
                for (int i = 0; i < trips; ++i) {
                    const double ns = rig.round_trip_ns(Way(w));
                    if (rep) t[w].push_back(ns);
                }
            }
        }
        failures = vkapp::g_validation_messages.load();
    }
    std::printf("%s: %d round trips of each way, in runs of %d (no layer)\n", device.c_str(), reps * trips, trips);
    std::printf("%-18s%12s%12s%16s\n", "way", "p10 us", "median us", "vs tuned (med)");
    std::string json = "{\"device\": \"" + device + "\"";
    const double base = percentile(t[0], 0.5);
    for (int w = 0; w < kWays; ++w) {
        const double p10 = percentile(t[w], 0.1) / 1000, med = percentile(t[w], 0.5) / 1000;
        std::printf("%-18s%12.2f%12.2f%+16.2f\n", kNames[w], p10, med, med - base / 1000);
        json += std::string(", \"") + kNames[w] + "_us\": {\"p10\": " + std::to_string(p10) +
                ", \"median\": " + std::to_string(med) + "}";
    }
    std::printf("%s}\n", json.c_str());
    return failures ? 1 : 0;
}
