// When fusion may leave its own barrier out (capture/barrier_cover.h): the command buffer's
// work must follow a barrier of the application's that holds the fuse barrier's scopes and
// accesses, in either synchronization version. Each case records into a real capture.
#include "capture/barrier_cover.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
struct Recording {
    CommandCapture c;
    Recording() {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
    }
    void barrier(VkPipelineStageFlags src, VkPipelineStageFlags dst, VkAccessFlags src_access, VkAccessFlags dst_access,
                 VkDependencyFlags flags = 0) {
        VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src_access, dst_access};
        CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, src, dst, flags, 1, &m, 0, nullptr, 0, nullptr);
    }
    void barrier2(VkPipelineStageFlags2 src, VkPipelineStageFlags2 dst, VkAccessFlags2 src_access, VkAccessFlags2 dst_access) {
        VkMemoryBarrier2 m{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2, nullptr, src, src_access, dst, dst_access};
        VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        info.memoryBarrierCount = 1;
        info.pMemoryBarriers = &m;
        CmdPipelineBarrier2(c, CommandId::CmdPipelineBarrier2, &info);
    }
    void bind() { CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, VkPipeline(uint64_t(8))); }
    void dispatch() { CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1); }
    bool ordered(bool indirect = false) {
        c.end(VK_SUCCESS);
        return c.capturable() && opens_with_fuse_barrier(c, indirect);
    }
};
constexpr VkPipelineStageFlags kAll = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
constexpr VkAccessFlags kMemRW = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
}  // namespace

TEST(BarrierCover, NaiveAllCommandsBarrierBeforeWorkHoldsIt) {
    Recording r;
    r.bind();
    r.barrier(kAll, kAll, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW);
    r.dispatch();
    EXPECT_TRUE(r.ordered());
}

TEST(BarrierCover, ExactFuseBarrierHoldsIt) {
    Recording r;
    r.barrier(kFuseSrcStages, kFuseDstStages, kFuseSrcAccess, kFuseDstAccess);
    r.dispatch();
    EXPECT_TRUE(r.ordered());
}

TEST(BarrierCover, Synchronization2AllCommandsHoldsIt) {
    Recording r;
    r.barrier2(VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
               VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    r.dispatch();
    EXPECT_TRUE(r.ordered());
}

TEST(BarrierCover, WorkBeforeTheBarrierNeedsTheFuseBarrier) {
    Recording r;
    r.dispatch();
    r.barrier(kAll, kAll, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW);
    r.dispatch();
    EXPECT_FALSE(r.ordered());
}

TEST(BarrierCover, NarrowerScopesOrAccessesDoNotHoldIt) {
    {
        Recording r;  // compute only: transfer work before is not ordered
        r.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kAll, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW);
        r.dispatch();
        EXPECT_FALSE(r.ordered());
    }
    {
        Recording r;  // no transfer stage after
        r.barrier(kAll, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW);
        r.dispatch();
        EXPECT_FALSE(r.ordered());
    }
    {
        Recording r;  // transfer writes not made visible
        r.barrier(kAll, kAll, VK_ACCESS_SHADER_WRITE_BIT, kMemRW);
        r.dispatch();
        EXPECT_FALSE(r.ordered());
    }
    {
        Recording r;  // reads only after: write-after-write not made visible
        r.barrier(kAll, kAll, VK_ACCESS_MEMORY_WRITE_BIT, VK_ACCESS_MEMORY_READ_BIT);
        r.dispatch();
        EXPECT_FALSE(r.ordered());
    }
    {
        Recording r;  // a dependency flag (by-region, device group) changes what it orders
        r.barrier(kAll, kAll, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW, VK_DEPENDENCY_BY_REGION_BIT);
        r.dispatch();
        EXPECT_FALSE(r.ordered());
    }
}

TEST(BarrierCover, IndirectDispatchesNeedTheIndirectStageAfter) {
    Recording narrow;  // compute|transfer -> compute|transfer: enough for direct work only
    narrow.barrier(kFuseSrcStages, kFuseDstStages, kFuseSrcAccess, kFuseDstAccess);
    narrow.dispatch();
    EXPECT_FALSE(narrow.ordered(true));
    Recording with;
    with.barrier(kFuseSrcStages, fuse_dst_stages(true), kFuseSrcAccess, fuse_dst_access(true));
    with.dispatch();
    EXPECT_TRUE(with.ordered(true));
    Recording all;
    all.barrier(kAll, kAll, VK_ACCESS_MEMORY_WRITE_BIT, kMemRW);
    all.dispatch();
    EXPECT_TRUE(all.ordered(true));
}

TEST(BarrierCover, NoBarrierAtAll) {
    Recording r;
    r.bind();
    r.dispatch();
    EXPECT_FALSE(r.ordered());
}

TEST(BarrierCover, MaskArithmetic) {
    EXPECT_TRUE(stages_cover(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, kFuseDstStages));
    EXPECT_FALSE(stages_cover(VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
    EXPECT_TRUE(accesses_cover(VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                               kFuseDstAccess));
    EXPECT_FALSE(accesses_cover(VK_ACCESS_MEMORY_READ_BIT, kFuseDstAccess));
    EXPECT_TRUE(accesses_cover(VK_ACCESS_MEMORY_WRITE_BIT, kFuseSrcAccess));
}
