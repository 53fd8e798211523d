// The stage arithmetic of barrier narrowing (capture/barrier_narrowing.h), over every stage
// bit of both synchronization versions, and the replay of real captures through a recording
// dispatch table.
#include "capture/barrier_narrowing.h"
#include "capture/batch_replay.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
constexpr uint64_t kAll = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
constexpr uint64_t kRW = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
}  // namespace

TEST(BarrierNarrowing, OnlyAllCommandsIsNarrowedOnEveryStageBit) {
    for (int bit = 0; bit < 64; ++bit) {
        const uint64_t stage = uint64_t(1) << bit;
        uint64_t src = stage, dst = stage;
        const bool narrowed = narrow_stage_masks(src, dst, VK_ACCESS_2_MEMORY_WRITE_BIT, kRW);
        EXPECT_EQ(narrowed, stage == kAll) << "bit " << bit;
        if (!narrowed) {
            EXPECT_EQ(src, stage);
            EXPECT_EQ(dst, stage);
        } else {
            EXPECT_EQ(src, kNarrowSrcStages);
            EXPECT_EQ(dst, kNarrowDstStages);
        }
        // ALL_COMMANDS with any other bit: narrowed to the work's stages, HOST kept.
        uint64_t src2 = kAll | stage, dst2 = kAll | stage;
        ASSERT_TRUE(narrow_stage_masks(src2, dst2, VK_ACCESS_2_MEMORY_WRITE_BIT, kRW)) << "bit " << bit;
        const uint64_t host = stage & VK_PIPELINE_STAGE_2_HOST_BIT;
        EXPECT_EQ(src2, kNarrowSrcStages | host) << "bit " << bit;
        EXPECT_EQ(dst2, kNarrowDstStages | host) << "bit " << bit;
    }
}

TEST(BarrierNarrowing, OneSideNamesAllCommands) {
    uint64_t src = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, dst = kAll;
    ASSERT_TRUE(narrow_stage_masks(src, dst, VK_ACCESS_2_SHADER_WRITE_BIT, VK_ACCESS_2_SHADER_READ_BIT));
    EXPECT_EQ(src, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
    EXPECT_EQ(dst, kNarrowDstStages);
}

TEST(BarrierNarrowing, AccessesOutsideTheNarrowedStagesKeepTheBarrierWhole) {
    for (uint64_t access : {uint64_t(VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT), uint64_t(VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT),
                            uint64_t(VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT), uint64_t(VK_ACCESS_2_HOST_READ_BIT)}) {
        uint64_t src = kAll, dst = kAll;
        EXPECT_FALSE(narrow_stage_masks(src, dst, VK_ACCESS_2_MEMORY_WRITE_BIT, access)) << access;
        EXPECT_EQ(src, kAll);
        EXPECT_EQ(dst, kAll);
    }
    // Host access with the HOST stage named stays possible.
    uint64_t src = kAll, dst = kAll | VK_PIPELINE_STAGE_2_HOST_BIT;
    EXPECT_TRUE(narrow_stage_masks(src, dst, VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_ACCESS_2_HOST_READ_BIT));
    EXPECT_EQ(dst, kNarrowDstStages | VK_PIPELINE_STAGE_2_HOST_BIT);
    // Indirect parameters are read after the barrier: allowed on the destination side only, and
    // only in a capture that dispatches indirectly (whose narrowed barriers reach DRAW_INDIRECT).
    src = kAll;
    dst = kAll;
    EXPECT_FALSE(narrow_stage_masks(src, dst, VK_ACCESS_2_SHADER_WRITE_BIT, VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT));
    EXPECT_TRUE(
        narrow_stage_masks(src, dst, VK_ACCESS_2_SHADER_WRITE_BIT, VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT, true));
    EXPECT_EQ(dst, kNarrowDstIndirectStages);
    src = kAll;
    dst = kAll;
    EXPECT_FALSE(narrow_stage_masks(src, dst, VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT, VK_ACCESS_2_SHADER_READ_BIT));
}

namespace {
struct Rec {
    CommandCapture c;
    Rec() {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
    }
};
// What a replay recorded: the stage masks of each vkCmdPipelineBarrier(2).
std::vector<std::pair<uint64_t, uint64_t>> g_barriers;
VkDependencyFlags g_last_v1_flags = 0;
VKAPI_ATTR void VKAPI_CALL record_v1(VkCommandBuffer, VkPipelineStageFlags src, VkPipelineStageFlags dst, VkDependencyFlags flags,
                                     uint32_t, const VkMemoryBarrier*, uint32_t, const VkBufferMemoryBarrier*, uint32_t,
                                     const VkImageMemoryBarrier*) {
    g_barriers.push_back({src, dst});
    g_last_v1_flags = flags;
}
VKAPI_ATTR void VKAPI_CALL record_v2(VkCommandBuffer, const VkDependencyInfo* info) {
    for (uint32_t i = 0; i < info->memoryBarrierCount; ++i)
        g_barriers.push_back({info->pMemoryBarriers[i].srcStageMask, info->pMemoryBarriers[i].dstStageMask});
    for (uint32_t i = 0; i < info->imageMemoryBarrierCount; ++i)
        g_barriers.push_back({info->pImageMemoryBarriers[i].srcStageMask, info->pImageMemoryBarriers[i].dstStageMask});
}
VKAPI_ATTR void VKAPI_CALL record_dispatch(VkCommandBuffer, uint32_t, uint32_t, uint32_t) {}
// One batch's replay, narrowing on (what fusion does with a capture).
void replay_in_batch(const CommandCapture& c, const VkLayerDispatchTable& d, NarrowingState& s) {
    BatchReplay batch;
    batch.begin_batch();
    batch.replay(c, d, VK_NULL_HANDLE, true, s);
}
VkLayerDispatchTable table() {
    VkLayerDispatchTable d{};
    d.CmdPipelineBarrier = record_v1;
    d.CmdPipelineBarrier2 = record_v2;
    d.CmdDispatch = record_dispatch;
    return d;
}
void naive_barrier(CommandCapture& c) {
    VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                      VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &m, 0, nullptr, 0, nullptr);
}
// An ALL_COMMANDS barrier that releases a buffer to another queue family.
void ownership_transfer(CommandCapture& c) {
    VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    b.srcQueueFamilyIndex = 0;
    b.dstQueueFamilyIndex = 1;
    b.buffer = VkBuffer(uint64_t(7));
    b.size = VK_WHOLE_SIZE;
    CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 1, &b, 0, nullptr);
}
}  // namespace

TEST(BarrierNarrowing, ReplayNarrowsAndPutsAFullBarrierFirstAfterOtherWork) {
    Rec r;
    naive_barrier(r.c);
    CmdDispatch(r.c, CommandId::CmdDispatch, 1, 1, 1);
    naive_barrier(r.c);
    r.c.end(VK_SUCCESS);
    ASSERT_TRUE(narrowable_work(r.c));
    const VkLayerDispatchTable d = table();

    g_barriers.clear();
    NarrowingState s;
    replay_in_batch(r.c, d, s);
    ASSERT_EQ(g_barriers.size(), 2u);
    EXPECT_EQ(g_barriers[0].first, kNarrowSrcStages);
    EXPECT_EQ(g_barriers[1].second, kNarrowDstStages);
    EXPECT_EQ(s.seen, 2u);
    EXPECT_EQ(s.narrowed, 2u);

    g_barriers.clear();
    NarrowingState after_other_work;
    after_other_work.full_first = true;
    replay_in_batch(r.c, d, after_other_work);
    ASSERT_EQ(g_barriers.size(), 3u);
    EXPECT_EQ(g_barriers[0].first, uint64_t(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT));  // ours, from everything
    EXPECT_EQ(g_barriers[0].second, kNarrowDstStages);
    EXPECT_EQ(g_barriers[1].first, kNarrowSrcStages);
    EXPECT_EQ(g_barriers[2].first, kNarrowSrcStages);
    EXPECT_EQ(after_other_work.inserted, 1u);
    EXPECT_FALSE(after_other_work.full_first);
}

TEST(BarrierNarrowing, Synchronization2LayoutTransitionKeepsItsLayouts) {
    Rec r;
    VkImageMemoryBarrier2 image{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    image.srcStageMask = kAll;
    image.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
    image.dstStageMask = kAll;
    image.dstAccessMask = kRW;
    image.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    image.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    image.srcQueueFamilyIndex = image.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    image.image = VkImage(uint64_t(5));
    image.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    info.imageMemoryBarrierCount = 1;
    info.pImageMemoryBarriers = &image;
    CmdPipelineBarrier2(r.c, CommandId::CmdPipelineBarrier2, &info);
    r.c.end(VK_SUCCESS);
    g_barriers.clear();
    NarrowingState s;
    replay_in_batch(r.c, table(), s);
    ASSERT_EQ(g_barriers.size(), 1u);
    EXPECT_EQ(g_barriers[0].first, kNarrowSrcStages);
    EXPECT_EQ(g_barriers[0].second, kNarrowDstStages);
}

TEST(BarrierNarrowing, OwnershipTransfersAndTimestampsAreNotNarrowed) {
    Rec r;
    ownership_transfer(r.c);
    r.c.end(VK_SUCCESS);
    g_barriers.clear();
    NarrowingState s;
    replay_in_batch(r.c, table(), s);
    ASSERT_EQ(g_barriers.size(), 1u);
    EXPECT_EQ(g_barriers[0].first, uint64_t(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT));
    EXPECT_EQ(s.narrowed, 0u);

    Rec t;
    CmdWriteTimestamp(t.c, CommandId::CmdWriteTimestamp, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, VkQueryPool(uint64_t(3)), 0);
    t.c.end(VK_SUCCESS);
    EXPECT_FALSE(narrowable_work(t.c));
}

TEST(BarrierNarrowing, CountsWhatTheReplayWouldNarrow) {
    Rec bare;
    CmdDispatch(bare.c, CommandId::CmdDispatch, 1, 1, 1);
    bare.c.end(VK_SUCCESS);
    EXPECT_EQ(count_narrowable_barriers(bare.c, false, 8), 0u);

    Rec naive;
    for (int i = 0; i < 3; ++i) {
        naive_barrier(naive.c);
        CmdDispatch(naive.c, CommandId::CmdDispatch, 1, 1, 1);
    }
    naive.c.end(VK_SUCCESS);
    EXPECT_EQ(count_narrowable_barriers(naive.c, false, 8), 3u);
    EXPECT_EQ(count_narrowable_barriers(naive.c, false, 1), 1u);  // no further than asked

    // What the replay leaves whole does not count: an ownership transfer, a compute barrier.
    Rec whole;
    ownership_transfer(whole.c);
    VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT};
    CmdPipelineBarrier(whole.c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &m, 0, nullptr, 0, nullptr);
    whole.c.end(VK_SUCCESS);
    EXPECT_EQ(count_narrowable_barriers(whole.c, false, 8), 0u);
}

TEST(BarrierNarrowing, ByRegionIsNarrowedAndKeptOtherFlagsAreNot) {
    VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                      VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    for (VkDependencyFlags flags : {VkDependencyFlags(VK_DEPENDENCY_BY_REGION_BIT), VkDependencyFlags(VK_DEPENDENCY_DEVICE_GROUP_BIT)}) {
        Rec r;
        CmdPipelineBarrier(r.c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, flags, 1, &m, 0, nullptr, 0, nullptr);
        CmdDispatch(r.c, CommandId::CmdDispatch, 1, 1, 1);
        r.c.end(VK_SUCCESS);
        g_barriers.clear();
        NarrowingState s;
        replay_in_batch(r.c, table(), s);
        ASSERT_EQ(g_barriers.size(), 1u);
        const bool by_region = flags == VK_DEPENDENCY_BY_REGION_BIT;
        EXPECT_EQ(s.narrowed, by_region ? 1u : 0u) << flags;
        EXPECT_EQ(g_barriers[0].first, by_region ? kNarrowSrcStages : uint64_t(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT));
        EXPECT_EQ(g_last_v1_flags, flags);  // replayed with the flags it was recorded with
        EXPECT_EQ(count_narrowable_barriers(r.c, false, 8), by_region ? 1u : 0u);
    }
}
