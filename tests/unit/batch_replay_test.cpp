// Binds a batch already has are left out of the replay (capture/batch_replay.h), and only
// those: a different set, layout or offset, a push descriptor in between, or a new batch
// binds again.
#include "capture/batch_replay.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
std::vector<std::string> g_calls;
VKAPI_ATTR void VKAPI_CALL bind_pipeline(VkCommandBuffer, VkPipelineBindPoint, VkPipeline p) {
    g_calls.push_back("pipeline " + std::to_string(uint64_t(p)));
}
VKAPI_ATTR void VKAPI_CALL bind_sets(VkCommandBuffer, VkPipelineBindPoint, VkPipelineLayout l, uint32_t, uint32_t n,
                                     const VkDescriptorSet* sets, uint32_t, const uint32_t*) {
    g_calls.push_back("sets " + std::to_string(uint64_t(l)) + " " + std::to_string(n ? uint64_t(sets[0]) : 0));
}
VKAPI_ATTR void VKAPI_CALL push_set(VkCommandBuffer, VkPipelineBindPoint, VkPipelineLayout, uint32_t, uint32_t,
                                    const VkWriteDescriptorSet*) {
    g_calls.push_back("push");
}
VKAPI_ATTR void VKAPI_CALL dispatch(VkCommandBuffer, uint32_t, uint32_t, uint32_t) { g_calls.push_back("dispatch"); }
VkLayerDispatchTable table() {
    VkLayerDispatchTable d{};
    d.CmdBindPipeline = bind_pipeline;
    d.CmdBindDescriptorSets = bind_sets;
    d.CmdPushDescriptorSetKHR = push_set;
    d.CmdDispatch = dispatch;
    return d;
}
struct Rec {
    CommandCapture c;
    explicit Rec(uint64_t set, bool push = false) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
        CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, VkPipeline(uint64_t(1)));
        const VkDescriptorSet s = VkDescriptorSet(set);
        CmdBindDescriptorSets(c, CommandId::CmdBindDescriptorSets, VK_PIPELINE_BIND_POINT_COMPUTE,
                              VkPipelineLayout(uint64_t(2)), 0, 1, &s, 0, nullptr);
        if (push)
            CmdPushDescriptorSetKHR(c, CommandId::CmdPushDescriptorSetKHR, VK_PIPELINE_BIND_POINT_COMPUTE,
                                    VkPipelineLayout(uint64_t(2)), 1, 0, nullptr);
        CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
        c.end(VK_SUCCESS);
    }
};
}  // namespace

TEST(BatchReplay, IdenticalBindsAreLeftOutWithinABatch) {
    const VkLayerDispatchTable d = table();
    Rec a(10), b(10), c(11);
    BatchReplay replay;
    NarrowingState s;
    replay.begin_batch();
    g_calls.clear();
    replay.replay(a.c, d, VK_NULL_HANDLE, true, s);
    replay.replay(b.c, d, VK_NULL_HANDLE, true, s);
    replay.replay(c.c, d, VK_NULL_HANDLE, true, s);
    const std::vector<std::string> want = {"pipeline 1", "sets 2 10", "dispatch", "dispatch", "sets 2 11", "dispatch"};
    EXPECT_EQ(g_calls, want);
    EXPECT_EQ(replay.binds_left_out(), 3u);

    replay.begin_batch();  // a new batch binds again
    g_calls.clear();
    replay.replay(c.c, d, VK_NULL_HANDLE, true, s);
    EXPECT_EQ(g_calls, (std::vector<std::string>{"pipeline 1", "sets 2 11", "dispatch"}));
}

TEST(BatchReplay, APushDescriptorForgetsTheBoundSets) {
    const VkLayerDispatchTable d = table();
    Rec a(10, true), b(10);
    BatchReplay replay;
    NarrowingState s;
    replay.begin_batch();
    g_calls.clear();
    replay.replay(a.c, d, VK_NULL_HANDLE, true, s);
    replay.replay(b.c, d, VK_NULL_HANDLE, true, s);
    const std::vector<std::string> want = {"pipeline 1", "sets 2 10", "push", "dispatch", "sets 2 10", "dispatch"};
    EXPECT_EQ(g_calls, want);
}
