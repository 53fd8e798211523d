// What makes a command buffer non-capturable (FUSION.md rule 6): a command outside the
// allow-list, an sType or descriptor type Slipstream cannot copy, a capture larger than its
// arena's limit. Each stop keeps the first command's name and gives the memory back.
#include "capture_commands.h"
#include "command_table.h"

#include <gtest/gtest.h>

#include "command_info_lookup.h"

#include <cstring>
#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
const CommandInfo* info(const char* name) { return command_info(name); }
}  // namespace

TEST(CaptureAllowList, ComputeTransferSyncAndDebugCommandsOnly) {
    for (const char* name : {"vkCmdDispatch", "vkCmdDispatchBase", "vkCmdDispatchBaseKHR", "vkCmdDispatchIndirect",
                             "vkCmdBindPipeline", "vkCmdBindDescriptorSets", "vkCmdPushDescriptorSetKHR",
                             "vkCmdPushConstants", "vkCmdCopyBuffer", "vkCmdCopyBuffer2", "vkCmdCopyBuffer2KHR",
                             "vkCmdCopyImage", "vkCmdCopyBufferToImage2", "vkCmdCopyImageToBuffer",
                             "vkCmdFillBuffer", "vkCmdUpdateBuffer", "vkCmdClearColorImage",
                             "vkCmdPipelineBarrier", "vkCmdPipelineBarrier2", "vkCmdPipelineBarrier2KHR",
                             "vkCmdSetEvent", "vkCmdWaitEvents2", "vkCmdBeginDebugUtilsLabelEXT",
                             "vkCmdEndDebugUtilsLabelEXT", "vkCmdDebugMarkerInsertEXT", "vkCmdWriteTimestamp2",
                             "vkCmdResetQueryPool", "vkCmdCopyQueryPoolResults"}) {
        const CommandInfo* i = info(name);
        ASSERT_NE(i, nullptr) << name;
        EXPECT_TRUE(i->capturable) << name;
    }
    for (const char* name : {"vkCmdDraw", "vkCmdBeginRenderPass", "vkCmdBeginRendering", "vkCmdClearAttachments",
                             "vkCmdClearDepthStencilImage", "vkCmdBlitImage", "vkCmdResolveImage",
                             "vkCmdExecuteCommands", "vkCmdSetDeviceMask", "vkCmdBeginQuery", "vkCmdEndQuery",
                             "vkCmdPushDescriptorSetWithTemplateKHR", "vkCmdTraceRaysKHR",
                             "vkCmdBuildAccelerationStructuresKHR", "vkCmdSetViewport", "vkCmdBindVertexBuffers"}) {
        const CommandInfo* i = info(name);
        ASSERT_NE(i, nullptr) << name;
        EXPECT_FALSE(i->capturable) << name;
    }
}

TEST(CaptureStop, AGraphicsCommandStopsTheCaptureAndFreesIt) {
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    CmdDispatch(c, CommandId::CmdDispatch, 1, 2, 3);
    ASSERT_TRUE(c.capturable());
    ASSERT_EQ(c.size(), 1u);
    c.stop(CommandId::CmdDraw);  // what the generated vkCmdDraw wrapper does
    EXPECT_FALSE(c.capturable());
    EXPECT_EQ(c.stop_reason(), StopReason::NotReplayable);
    EXPECT_STREQ(c.stopped_at(), "vkCmdDraw");
    EXPECT_EQ(c.size(), 0u);
    EXPECT_EQ(c.records(), nullptr);
    EXPECT_EQ(c.arena().used(), 0u);
    // Later commands are ignored and the first reason stays.
    CmdDispatch(c, CommandId::CmdDispatch, 1, 2, 3);
    c.stop(CommandId::CmdBeginRenderPass);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_STREQ(c.stopped_at(), "vkCmdDraw");
    // A new recording starts capturable again.
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    EXPECT_TRUE(c.capturable());
    EXPECT_STREQ(c.stopped_at(), "");
}

TEST(CaptureStop, AnUnknownSTypeInAPNextChainStopsTheCapture) {
    VkSampleLocationsInfoEXT known{VK_STRUCTURE_TYPE_SAMPLE_LOCATIONS_INFO_EXT};
    VkBaseInStructure unknown{VkStructureType(1000999000), nullptr};  // newer than vk.xml
    VkImageMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.imageMemoryBarrierCount = 1;
    dependency.pImageMemoryBarriers = &barrier;

    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    barrier.pNext = &known;
    CmdPipelineBarrier2(c, CommandId::CmdPipelineBarrier2, &dependency);
    ASSERT_TRUE(c.capturable()) << "a structure that may extend VkImageMemoryBarrier2 is copied";

    known.pNext = &unknown;  // now the chain holds an sType Slipstream cannot copy
    CmdPipelineBarrier2(c, CommandId::CmdPipelineBarrier2KHR, &dependency);
    EXPECT_FALSE(c.capturable());
    EXPECT_EQ(c.stop_reason(), StopReason::UnknownStructure);
    EXPECT_STREQ(c.stopped_at(), "vkCmdPipelineBarrier2KHR");
    EXPECT_EQ(c.size(), 0u);
}

TEST(CaptureStop, AStructureThatExtendsAnotherParentIsUnknownHere) {
    // VkSampleLocationsInfoEXT may extend image barriers, not buffer barriers.
    VkSampleLocationsInfoEXT misplaced{VK_STRUCTURE_TYPE_SAMPLE_LOCATIONS_INFO_EXT};
    VkBufferMemoryBarrier barrier{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, &misplaced};
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, 0, 0, 0, 0, nullptr, 1, &barrier, 0, nullptr);
    EXPECT_EQ(c.stop_reason(), StopReason::UnknownStructure);
}

TEST(CaptureStop, AnUnknownDescriptorTypeStopsThePushDescriptorCapture) {
    VkDescriptorBufferInfo buffer{};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.descriptorCount = 1;
    write.pBufferInfo = &buffer;
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    CmdPushDescriptorSetKHR(c, CommandId::CmdPushDescriptorSetKHR, VK_PIPELINE_BIND_POINT_COMPUTE,
                            VK_NULL_HANDLE, 0, 1, &write);
    ASSERT_TRUE(c.capturable());
    write.descriptorType = VK_DESCRIPTOR_TYPE_MUTABLE_EXT;  // no write may use it; newer ones alike
    CmdPushDescriptorSetKHR(c, CommandId::CmdPushDescriptorSetKHR, VK_PIPELINE_BIND_POINT_COMPUTE,
                            VK_NULL_HANDLE, 0, 1, &write);
    EXPECT_EQ(c.stop_reason(), StopReason::UnknownStructure);
    EXPECT_STREQ(c.stopped_at(), "vkCmdPushDescriptorSetKHR");
}

TEST(CaptureStop, AnUnknownSTypeInTheBeginInfoStopsAtBegin) {
    VkBaseInStructure unknown{VkStructureType(1000999000), nullptr};
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, &unknown};
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &info);
    EXPECT_EQ(c.stop_reason(), StopReason::UnknownStructure);
    EXPECT_STREQ(c.stopped_at(), "vkBeginCommandBuffer");
}

TEST(CaptureStop, ACaptureBeyondItsLimitStops) {
    CommandCapture c(256 * 1024);
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    std::vector<unsigned char> data(65536, 0x5a);
    int captured = 0;
    while (c.capturable() && captured < 100) {
        CmdUpdateBuffer(c, CommandId::CmdUpdateBuffer, VK_NULL_HANDLE, 0, data.size(), data.data());
        ++captured;
    }
    EXPECT_FALSE(c.capturable());
    EXPECT_LT(captured, 10);
    EXPECT_EQ(c.stop_reason(), StopReason::TooLarge);
    EXPECT_STREQ(c.stopped_at(), "vkCmdUpdateBuffer");
    EXPECT_LE(c.arena().reserved(), 256u * 1024);
}

TEST(CaptureStop, AFailedEndLeavesNothingToReplay) {
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    c.end(VK_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_TRUE(c.ended());
    EXPECT_FALSE(c.capturable());
    EXPECT_STREQ(c.stopped_at(), "vkEndCommandBuffer");
}

TEST(CaptureStop, ResetStartsOverAndCanReleaseTheMemory) {
    CommandCapture c;
    c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, nullptr);
    for (int i = 0; i < 1000; ++i) CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    c.end(VK_SUCCESS);
    EXPECT_EQ(c.size(), 1000u);
    c.reset(false);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_FALSE(c.begun());
    EXPECT_EQ(c.arena().blocks(), 1u);  // kept for the next recording
    c.reset(true);                       // VK_*_RESET_RELEASE_RESOURCES_BIT
    EXPECT_EQ(c.arena().blocks(), 0u);
}
