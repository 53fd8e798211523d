// Which captures an armed replay can hold, when two captures are the same work, and the replay
// whose dispatches read their group counts from the arguments buffer (capture/armed_work.h).
#include "capture/armed_work.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
// The commands a latency-bound runtime records per kernel, with what varies as parameters.
struct Kernel {
    uint64_t pipeline = 1, set = 10;
    uint32_t groups = 4, push = 7;
    VkAccessFlags barrier_dst = VK_ACCESS_SHADER_READ_BIT;
};

void record_kernel(CommandCapture& c, const Kernel& k) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = k.barrier_dst;
    CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0, nullptr, 0, nullptr);
    CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, VkPipeline(k.pipeline));
    const VkDescriptorSet s = VkDescriptorSet(k.set);
    CmdBindDescriptorSets(c, CommandId::CmdBindDescriptorSets, VK_PIPELINE_BIND_POINT_COMPUTE,
                          VkPipelineLayout(uint64_t(2)), 0, 1, &s, 0, nullptr);
    CmdPushConstants(c, CommandId::CmdPushConstants, VkPipelineLayout(uint64_t(2)), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                     sizeof k.push, &k.push);
    CmdDispatch(c, CommandId::CmdDispatch, k.groups, 1, 1);
}

struct Capture {
    CommandCapture c;
    explicit Capture(const std::function<void(CommandCapture&)>& body, bool end = true) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
        body(c);
        if (end) c.end(VK_SUCCESS);
    }
};

Capture kernel(const Kernel& k) {
    return Capture([&](CommandCapture& c) { record_kernel(c, k); });
}

bool same(const Kernel& a, const Kernel& b) {
    ArmableWork x, y;
    const Capture ca = kernel(a), cb = kernel(b);
    EXPECT_TRUE(x.read(ca.c));
    EXPECT_TRUE(y.read(cb.c));
    return x.same_as(y);
}
}  // namespace

TEST(ArmableWork, KernelsAreArmableWithTheirGroupCounts) {
    ArmableWork w;
    const Capture two([](CommandCapture& c) {
        record_kernel(c, Kernel{});
        CmdDispatch(c, CommandId::CmdDispatch, 3, 2, 5);
    });
    ASSERT_TRUE(w.read(two.c));
    ASSERT_EQ(w.dispatches().size(), 2u);
    EXPECT_EQ(w.dispatches()[0].x, 4u);
    EXPECT_EQ(w.dispatches()[1].x, 3u);
    EXPECT_EQ(w.dispatches()[1].y, 2u);
    EXPECT_EQ(w.dispatches()[1].z, 5u);
}

TEST(ArmableWork, IdenticalRecordingsAreTheSameWork) {
    EXPECT_TRUE(same(Kernel{}, Kernel{}));  // two arenas, the same commands
}

TEST(ArmableWork, EveryArgumentCounts) {
    const Kernel base;
    Kernel k = base;
    k.pipeline = 3;
    EXPECT_FALSE(same(base, k));
    k = base;
    k.set = 11;
    EXPECT_FALSE(same(base, k));
    k = base;
    k.groups = 5;
    EXPECT_FALSE(same(base, k));
    k = base;
    k.push = 8;
    EXPECT_FALSE(same(base, k));
    k = base;
    k.barrier_dst = VK_ACCESS_SHADER_WRITE_BIT;
    EXPECT_FALSE(same(base, k));
}

TEST(ArmableWork, CommandsWithEffectsAreNotArmable) {
    ArmableWork w;
    const Capture fill([](CommandCapture& c) {
        record_kernel(c, Kernel{});
        CmdFillBuffer(c, CommandId::CmdFillBuffer, VkBuffer(uint64_t(5)), 0, 16, 0);
    });
    EXPECT_FALSE(w.read(fill.c));
    EXPECT_TRUE(w.empty());
    const Capture indirect([](CommandCapture& c) {
        record_kernel(c, Kernel{});
        CmdDispatchIndirect(c, CommandId::CmdDispatchIndirect, VkBuffer(uint64_t(5)), 0);
    });
    EXPECT_FALSE(w.read(indirect.c));
}

TEST(ArmableWork, NothingToRunOrUnendedIsNotArmable) {
    ArmableWork w;
    const Capture binds_only([](CommandCapture& c) {
        CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, VkPipeline(uint64_t(1)));
    });
    EXPECT_FALSE(w.read(binds_only.c));
    const Capture unended([](CommandCapture& c) { record_kernel(c, Kernel{}); }, false);
    EXPECT_FALSE(w.read(unended.c));
    const Capture too_many([](CommandCapture& c) {
        for (uint32_t i = 0; i <= ArmableWork::kMaxDispatches; ++i) CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    });
    EXPECT_FALSE(w.read(too_many.c));
}

TEST(ArmableWork, BarriersWithChainsAreNotArmable) {
    ArmableWork w;
    VkMemoryBarrier2 chained{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    VkMemoryBarrier2 plain{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    plain.srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &plain;
    const Capture ok([&](CommandCapture& c) {
        CmdPipelineBarrier2(c, CommandId::CmdPipelineBarrier2, &dep);
        CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    });
    EXPECT_TRUE(w.read(ok.c));
    // Anything in a barrier's chain (here a structure that does not extend it: the capture
    // stops, or arming would refuse the chain): not armable.
    chained.pNext = &plain;
    dep.pMemoryBarriers = &chained;
    const Capture with_chain([&](CommandCapture& c) {
        CmdPipelineBarrier2(c, CommandId::CmdPipelineBarrier2, &dep);
        CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    });
    EXPECT_FALSE(w.read(with_chain.c));
}

namespace {
std::vector<std::string> g_calls;
VKAPI_ATTR void VKAPI_CALL dispatch(VkCommandBuffer, uint32_t, uint32_t, uint32_t) { g_calls.push_back("dispatch"); }
VKAPI_ATTR void VKAPI_CALL dispatch_indirect(VkCommandBuffer, VkBuffer b, VkDeviceSize offset) {
    g_calls.push_back("indirect " + std::to_string(uint64_t(b)) + " " + std::to_string(offset));
}
VKAPI_ATTR void VKAPI_CALL barrier(VkCommandBuffer, VkPipelineStageFlags, VkPipelineStageFlags, VkDependencyFlags,
                                   uint32_t, const VkMemoryBarrier*, uint32_t, const VkBufferMemoryBarrier*, uint32_t,
                                   const VkImageMemoryBarrier*) {
    g_calls.push_back("barrier");
}
VKAPI_ATTR void VKAPI_CALL bind_pipeline(VkCommandBuffer, VkPipelineBindPoint, VkPipeline) { g_calls.push_back("pipeline"); }
VKAPI_ATTR void VKAPI_CALL bind_sets(VkCommandBuffer, VkPipelineBindPoint, VkPipelineLayout, uint32_t, uint32_t,
                                     const VkDescriptorSet*, uint32_t, const uint32_t*) {
    g_calls.push_back("sets");
}
VKAPI_ATTR void VKAPI_CALL push(VkCommandBuffer, VkPipelineLayout, VkShaderStageFlags, uint32_t, uint32_t, const void*) {
    g_calls.push_back("push");
}
}  // namespace

TEST(ArmableWork, TheReplayReadsEachDispatchFromItsArguments) {
    VkLayerDispatchTable d{};
    d.CmdDispatch = dispatch;
    d.CmdDispatchIndirect = dispatch_indirect;
    d.CmdPipelineBarrier = barrier;
    d.CmdBindPipeline = bind_pipeline;
    d.CmdBindDescriptorSets = bind_sets;
    d.CmdPushConstants = push;
    const Capture two([](CommandCapture& c) {
        record_kernel(c, Kernel{});
        CmdDispatch(c, CommandId::CmdDispatch, 3, 2, 5);
    });
    g_calls.clear();
    record_armed(two.c, d, VK_NULL_HANDLE, VkBuffer(uint64_t(9)), 768);
    const std::vector<std::string> want = {"barrier", "pipeline", "sets", "push", "indirect 9 768", "indirect 9 780"};
    EXPECT_EQ(g_calls, want);
}
