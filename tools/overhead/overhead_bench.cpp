// slipstream-overhead: the CPU cost the layer adds to the two hottest paths.
//   record: ns per vkCmdDispatch recorded (N dispatches into one command buffer)
//   copy: ns per vkCmdCopyBuffer recorded (N copies into one command buffer): a command that
//         names buffers, which cached readback's deferred binds look at (one branch while no
//         bind is deferred and no memory moved)
//   submit: µs per vkQueueSubmit of a one-dispatch command buffer, N back to back, no fence
//   signaled_wait: µs per vkWaitForFences on a fence that has signaled (and was waited on once)
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

// One device with a tiny compute pipeline and two command buffers.
struct Rig {
    overhead::TinyRig tiny;
    vkapp::Context& ctx = tiny.ctx;
    VkCommandBuffer big = tiny.allocate(), small = tiny.record_one_dispatch();
    VkFence fence = VK_NULL_HANDLE;
    vkapp::Buffer src, dst;

    explicit Rig(std::vector<const char*> layers)
        : tiny("slipstream-overhead", options_with(std::move(layers)), VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VK_CHECK(vkCreateFence(ctx.device, &fi, nullptr, &fence));
        src = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0);
        dst = vkapp::create_buffer(ctx, 256, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0);
    }
    ~Rig() {
        vkDestroyFence(ctx.device, fence, nullptr);
        vkQueueWaitIdle(ctx.queue);
        vkapp::destroy_buffer(ctx, src);
        vkapp::destroy_buffer(ctx, dst);
    }
    static vkapp::ContextOptions options_with(std::vector<const char*> layers) {
        vkapp::ContextOptions options;
        options.layers = std::move(layers);
        return options;
    }
    void bind(VkCommandBuffer cb) { tiny.bind(cb); }
    // ns per vkCmdDispatch, recorded and never submitted: recording is what is timed.
    double record_ns(int dispatches) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
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
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--dispatches")) dispatches = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--submits")) submits = std::atoi(argv[i + 1]);
    }
    int failures = 0;
    {
        Rig off({});
        Rig on({"VK_LAYER_slipstream"});
        std::vector<double> record[2], copy[2], submit[2], wait[2];
        Rig* rigs[2] = {&off, &on};
        for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 warms both up
            for (int k = 0; k < 2; ++k) {
                int which = (rep + k) % 2;  // alternate who goes first
                double r = rigs[which]->record_ns(dispatches);
                double c = rigs[which]->copy_ns(dispatches);
                double s = rigs[which]->submit_us(submits);
                double w = rigs[which]->signaled_wait_us(submits);
                if (rep == 0) continue;
                record[which].push_back(r);
                copy[which].push_back(c);
                submit[which].push_back(s);
                wait[which].push_back(w);
            }
        }
        std::printf("{\"device\": \"%s\", \"dispatches\": %d, \"submits\": %d, \"record_ns\": {\"off\": %s, \"on\": %s}, "
                    "\"copy_ns\": {\"off\": %s, \"on\": %s}, "
                    "\"submit_us\": {\"off\": %s, \"on\": %s}, \"signaled_wait_us\": {\"off\": %s, \"on\": %s}}\n",
                    off.ctx.properties.deviceName, dispatches, submits, list(record[0]).c_str(), list(record[1]).c_str(),
                    list(copy[0]).c_str(), list(copy[1]).c_str(),
                    list(submit[0]).c_str(), list(submit[1]).c_str(), list(wait[0]).c_str(), list(wait[1]).c_str());
        failures = vkapp::g_validation_messages.load();
    }
    return failures ? 1 : 0;
}
