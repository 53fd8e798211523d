// slipstream-overhead: the CPU cost the layer adds to the two hottest paths.
//   record: ns per vkCmdDispatch recorded (N dispatches into one command buffer)
//   copy: ns per vkCmdCopyBuffer recorded (N copies into one command buffer): a command that
//         names buffers, which cached readback's deferred binds look at (one branch while no
//         bind is deferred and no memory moved)
//   submit: µs per vkQueueSubmit of a one-dispatch command buffer, N back to back, no fence
//   signaled_wait: µs per vkWaitForFences on a fence that has signaled (and was waited on once)
//   small_cb: µs the application spends per small command buffer, as naive runtimes use them:
//         a ring of command buffers with a fence each; per operation wait for the slot's fence
//         (signaled: the ring came round), reset it, begin, an ALL_COMMANDS barrier, bind,
//         dispatch, end, submit with the fence. Timed per phase; the GPU's pace is not timed
//         (the ring holds a whole repetition, drained afterwards).
//   latency_cb: the same life for a runtime that waits for every operation (the latency path):
//         begin, bind + dispatch (no barrier), end, submit with a fence, poll vkGetFenceStatus
//         until it signals ("spin": the GPU's round trip, on the critical path), reset the fence.
// --profile-small-cb N runs only N passes of the small_cb ring with the layer, for a profiler
// (perf record -D to skip the device's start); --profile-latency-cb N the same of latency_cb.
// --below LAYER (repeatable) enables LAYER by name on both instances, under Slipstream: the
// driver-cost test layer there makes a GPU driver's CPU costs show on lavapipe (a layer named in
// VK_INSTANCE_LAYERS would sit above Slipstream, where its costs are the application's).
// Both configurations live in one process: one instance without layers, one that enables
// VK_LAYER_slipstream by name (its manifest must be findable, e.g. through VK_ADD_LAYER_PATH).
// Repetitions alternate between them, so driver and machine noise hits both alike; the
// minimum over repetitions is the least disturbed measurement. Prints one JSON object.
#include "tiny_rig.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The phases of one small command buffer's life, in order.
constexpr const char* kPhases[] = {"wait", "reset", "begin", "record", "end", "submit"};
constexpr int kPhaseCount = 6;
constexpr const char* kLatencyPhases[] = {"begin", "record", "end", "submit", "spin", "reset"};
constexpr int kLatencyPhaseCount = 6;
constexpr int kLatencyRoundTrips = 64;
// Untimed round trips first: the queue's mode is learnt from its recent waits, and the ring's
// streaming phase before this one left it expecting many submissions per wait.
constexpr int kLatencyWarmup = 32;

struct SmallRing {
    static constexpr int kSlots = 256;
    VkCommandBuffer cbs[kSlots] = {};
    VkFence fences[kSlots] = {};
    bool pending[kSlots] = {};
};


// One device with a tiny compute pipeline and two command buffers.
struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    VkCommandBuffer big = tiny.allocate(), small = tiny.record_one_dispatch();
    VkFence fence = VK_NULL_HANDLE;
    vkapp::Buffer src, dst;

    SmallRing ring;

    explicit Rig(std::vector<const char*> layers)
        : tiny("slipstream-overhead", options_with(std::move(layers)), VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
        for (int i = 0; i < SmallRing::kSlots; ++i) {
            ring.cbs[i] = tiny.allocate();
            VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &ring.fences[i]));
        }
        src = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0);
        dst = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0);
    }
    ~Rig() {
        vkQueueWaitIdle(ctx.queue);
        vkDestroyFence(ctx.device, fence, nullptr);
        for (VkFence f : ring.fences) vkDestroyFence(ctx.device, f, nullptr);
        vkapp::destroy_buffer(ctx, src);
        vkapp::destroy_buffer(ctx, dst);
    }
    static vkapp::ContextOptions options_with(std::vector<const char*> layers) {
        vkapp::ContextOptions options;
        options.layers = std::move(layers);
        return options;
    }
    void bind(VkCommandBuffer cb) { tiny.bind(cb); }
    // The previous repetition's recording is reset before the clock starts: with lazy recording
    // the driver's own begin, and the implicit reset it does, come only at the command where
    // the capture stops (a command buffer this big is recorded natively past BATCH_MAX).
    void reset_big() { VK_CHECK(vkResetCommandBuffer(big, 0)); }
    // ns per vkCmdDispatch, recorded and never submitted: recording is what is timed.
    double record_ns(int dispatches) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        reset_big();
        VK_CHECK(vkBeginCommandBuffer(big, &bi));
        bind(big);
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < dispatches; ++i) vkCmdDispatch(big, 1, 1, 1);
        double s = seconds_since(t0);
        VK_CHECK(vkEndCommandBuffer(big));
        return s / dispatches * 1e9;
    }
    // ns per vkCmdCopyBuffer, recorded and never submitted.
    double copy_ns(int copies) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        reset_big();
        VK_CHECK(vkBeginCommandBuffer(big, &bi));
        const VkBufferCopy region{0, 0, 4};
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < copies; ++i) vkCmdCopyBuffer(big, src.buffer, dst.buffer, 1, &region);
        double s = seconds_since(t0);
        VK_CHECK(vkEndCommandBuffer(big));
        return s / copies * 1e9;
    }
    // µs per fence-less vkQueueSubmit, back to back; then the queue is drained (not timed).
    double submit_us(int submits) {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &small;
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < submits; ++i) VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, VK_NULL_HANDLE));
        double s = seconds_since(t0);
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        return s / submits * 1e6;
    }
    // µs per small command buffer, per phase (kPhases), over one pass round the ring; the
    // queue is drained afterwards (not timed).
    std::vector<double> small_cb_us() {
        std::vector<double> phase_s(kPhaseCount, 0.0);
        for (int i = 0; i < SmallRing::kSlots; ++i) {
            Clock::time_point t[kPhaseCount + 1];
            t[0] = Clock::now();
            if (ring.pending[i]) VK_CHECK(vkWaitForFences(ctx.device, 1, &ring.fences[i], VK_TRUE, UINT64_MAX));
            t[1] = Clock::now();
            VK_CHECK(vkResetFences(ctx.device, 1, &ring.fences[i]));
            t[2] = Clock::now();
            VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            VkCommandBuffer cb = ring.cbs[i];
            VK_CHECK(vkBeginCommandBuffer(cb, &bi));  // implicitly resets it (the pool allows it)
            t[3] = Clock::now();
            vkapp::barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                           VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
            bind(cb);
            vkCmdDispatch(cb, 1, 1, 1);
            t[4] = Clock::now();
            VK_CHECK(vkEndCommandBuffer(cb));
            t[5] = Clock::now();
            VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            si.commandBufferCount = 1;
            si.pCommandBuffers = &cb;
            VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, ring.fences[i]));
            t[6] = Clock::now();
            ring.pending[i] = true;
            for (int k = 0; k < kPhaseCount; ++k)
                phase_s[k] += std::chrono::duration<double>(t[k + 1] - t[k]).count();
        }
        VK_CHECK(vkWaitForFences(ctx.device, 1, &ring.fences[SmallRing::kSlots - 1], VK_TRUE, UINT64_MAX));
        VK_CHECK(vkQueueWaitIdle(ctx.queue));
        for (double& v : phase_s) v = v / SmallRing::kSlots * 1e6;
        return phase_s;
    }
    // µs per phase (kLatencyPhases) of one small command buffer submitted and waited for by
    // polling its fence, kLatencyRoundTrips times.
    std::vector<double> latency_cb_us() {
        std::vector<double> phase_s(kLatencyPhaseCount, 0.0);
        VkCommandBuffer cb = ring.cbs[0];
        for (int i = -kLatencyWarmup; i < kLatencyRoundTrips; ++i) {
            Clock::time_point t[kLatencyPhaseCount + 1];
            t[0] = Clock::now();
            VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            VK_CHECK(vkBeginCommandBuffer(cb, &bi));
            t[1] = Clock::now();
            bind(cb);
            vkCmdDispatch(cb, 1, 1, 1);
            t[2] = Clock::now();
            VK_CHECK(vkEndCommandBuffer(cb));
            t[3] = Clock::now();
            VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            si.commandBufferCount = 1;
            si.pCommandBuffers = &cb;
            VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
            t[4] = Clock::now();
            for (;;) {
                const VkResult r = vkGetFenceStatus(ctx.device, fence);
                if (r == VK_SUCCESS) break;
                if (r != VK_NOT_READY) VK_CHECK(r);
            }
            t[5] = Clock::now();
            VK_CHECK(vkResetFences(ctx.device, 1, &fence));
            t[6] = Clock::now();
            if (i < 0) continue;
            for (int k = 0; k < kLatencyPhaseCount; ++k)
                phase_s[k] += std::chrono::duration<double>(t[k + 1] - t[k]).count();
        }
        for (double& v : phase_s) v = v / kLatencyRoundTrips * 1e6;
        return phase_s;
    }
    // µs per vkWaitForFences on a fence already signaled, as runtimes that wait on their
    // last submission again (a device sync with nothing new in flight) do.
    double signaled_wait_us(int waits) {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &small;
        VK_CHECK(vkQueueSubmit(ctx.queue, 1, &si, fence));
        VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < waits; ++i) VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX));
        double s = seconds_since(t0);
        VK_CHECK(vkResetFences(ctx.device, 1, &fence));
        return s / waits * 1e6;
    }
};

std::string list(const std::vector<double>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 15, dispatches = 20000, submits = 2000;
    int profile_passes = 0;  // --profile-small-cb N: only N passes of the ring, with the layer (for a profiler)
    bool profile_latency = false;  // --profile-latency-cb N: latency_cb's instead
    std::vector<const char*> below;  // --below LAYER: under Slipstream, on both instances
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--dispatches")) dispatches = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--submits")) submits = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--profile-small-cb")) profile_passes = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--profile-latency-cb")) {
            profile_passes = std::atoi(argv[i + 1]);
            profile_latency = true;
        }
        else if (!std::strcmp(argv[i], "--below")) below.push_back(argv[i + 1]);
    }
    int failures = 0;
    std::vector<const char*> with_layer{"VK_LAYER_slipstream"};
    with_layer.insert(with_layer.end(), below.begin(), below.end());
    if (profile_passes > 0) {
        Rig on(with_layer);
        for (int i = 0; i < profile_passes; ++i) {
            if (profile_latency) on.latency_cb_us();
            else on.small_cb_us();
        }
        return vkapp::g_validation_messages.load() ? 1 : 0;
    }
    {
        Rig off(below);
        Rig on(with_layer);
        std::vector<double> record[2], copy[2], submit[2], wait[2];
        std::vector<double> small[2][kPhaseCount];
        std::vector<double> latency[2][kLatencyPhaseCount];
        Rig* rigs[2] = {&off, &on};
        for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 warms both up
            for (int k = 0; k < 2; ++k) {
                int which = (rep + k) % 2;  // alternate who goes first
                double r = rigs[which]->record_ns(dispatches);
                double c = rigs[which]->copy_ns(dispatches);
                double s = rigs[which]->submit_us(submits);
                double w = rigs[which]->signaled_wait_us(submits);
                const std::vector<double> phases = rigs[which]->small_cb_us();
                const std::vector<double> latency_phases = rigs[which]->latency_cb_us();
                if (rep == 0) continue;
                for (int k = 0; k < kLatencyPhaseCount; ++k) latency[which][k].push_back(latency_phases[k]);
                for (int k = 0; k < kPhaseCount; ++k) small[which][k].push_back(phases[k]);
                record[which].push_back(r);
                copy[which].push_back(c);
                submit[which].push_back(s);
                wait[which].push_back(w);
            }
        }
        std::string small_json;
        for (int k = 0; k < kPhaseCount; ++k)
            small_json += std::string(", \"small_cb_") + kPhases[k] + "_us\": {\"off\": " + list(small[0][k]) +
                          ", \"on\": " + list(small[1][k]) + "}";
        for (int k = 0; k < kLatencyPhaseCount; ++k)
            small_json += std::string(", \"latency_cb_") + kLatencyPhases[k] + "_us\": {\"off\": " +
                          list(latency[0][k]) + ", \"on\": " + list(latency[1][k]) + "}";
        std::printf("{\"device\": \"%s\", \"dispatches\": %d, \"submits\": %d, \"record_ns\": {\"off\": %s, \"on\": %s}, "
                    "\"copy_ns\": {\"off\": %s, \"on\": %s}, "
                    "\"submit_us\": {\"off\": %s, \"on\": %s}, \"signaled_wait_us\": {\"off\": %s, \"on\": %s}%s}\n",
                    off.ctx.properties.deviceName, dispatches, submits, list(record[0]).c_str(), list(record[1]).c_str(),
                    list(copy[0]).c_str(), list(copy[1]).c_str(),
                    list(submit[0]).c_str(), list(submit[1]).c_str(), list(wait[0]).c_str(), list(wait[1]).c_str(),
                    small_json.c_str());
        failures = vkapp::g_validation_messages.load();
    }
    return failures ? 1 : 0;
}
