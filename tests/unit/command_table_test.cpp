// The generated command table: spot checks against the spec, and invariants every entry keeps.
#include "command_table.h"

#include <gtest/gtest.h>

#include "command_info_lookup.h"

#include <cstring>

using namespace slipstream;

namespace {
const CommandInfo* info(const char* name) { return command_info(name); }
}  // namespace

TEST(CommandTable, ClassifiesTheCommandsThatMatter) {
    struct Case {
        const char* name;
        CommandKind kind;
        VkPipelineStageFlags2 stages;
    } cases[] = {
        {"vkCmdDispatch", CommandKind::Compute, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT},
        {"vkCmdDispatchBase", CommandKind::Compute, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT},
        {"vkCmdDispatchIndirect", CommandKind::Compute,
         VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT},
        {"vkCmdCopyBuffer", CommandKind::Transfer, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT},
        {"vkCmdCopyBuffer2KHR", CommandKind::Transfer, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT},
        {"vkCmdFillBuffer", CommandKind::Transfer, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT},
        {"vkCmdUpdateBuffer", CommandKind::Transfer, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT},
        {"vkCmdClearColorImage", CommandKind::Transfer, VK_PIPELINE_STAGE_2_CLEAR_BIT},
        {"vkCmdCopyQueryPoolResults", CommandKind::Transfer, VK_PIPELINE_STAGE_2_COPY_BIT},
        {"vkCmdDraw", CommandKind::Graphics, VK_PIPELINE_STAGE_2_ALL_GRAPHICS_BIT},
        {"vkCmdBeginRenderPass", CommandKind::Graphics, VK_PIPELINE_STAGE_2_ALL_GRAPHICS_BIT},
        {"vkCmdClearAttachments", CommandKind::Graphics, VK_PIPELINE_STAGE_2_ALL_GRAPHICS_BIT},
        {"vkCmdPipelineBarrier", CommandKind::Sync, VK_PIPELINE_STAGE_2_NONE},
        {"vkCmdPipelineBarrier2", CommandKind::Sync, VK_PIPELINE_STAGE_2_NONE},
        {"vkCmdBindPipeline", CommandKind::State, VK_PIPELINE_STAGE_2_NONE},
        {"vkCmdPushConstants", CommandKind::State, VK_PIPELINE_STAGE_2_NONE},
        {"vkCmdExecuteCommands", CommandKind::Indirection, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT},
        {"vkCmdTraceRaysKHR", CommandKind::RayTracing, VK_PIPELINE_STAGE_2_RAY_TRACING_SHADER_BIT_KHR},
        {"vkCmdBuildAccelerationStructuresKHR", CommandKind::AccelerationStructure,
         VK_PIPELINE_STAGE_2_ACCELERATION_STRUCTURE_BUILD_BIT_KHR |
             VK_PIPELINE_STAGE_2_ACCELERATION_STRUCTURE_COPY_BIT_KHR},
    };
    for (const Case& c : cases) {
        const CommandInfo* i = info(c.name);
        ASSERT_NE(i, nullptr) << c.name;
        EXPECT_EQ(i->kind, c.kind) << c.name;
        EXPECT_EQ(i->stages, c.stages) << c.name;
    }
}

TEST(CommandTable, EveryWorkCommandNamesStagesAndNoStateCommandDoes) {
    int work = 0;
    for (const CommandInfo& c : kCommandInfo) {
        ASSERT_EQ(std::strncmp(c.name, "vkCmd", 5), 0) << c.name;
        switch (c.kind) {
            case CommandKind::State:
            case CommandKind::Sync:
            case CommandKind::Debug:
                EXPECT_EQ(c.stages, VK_PIPELINE_STAGE_2_NONE) << c.name;
                break;
            default:
                EXPECT_NE(c.stages, VK_PIPELINE_STAGE_2_NONE) << c.name;
                ++work;
        }
    }
    EXPECT_GT(work, 80);
    EXPECT_GT(kCommandCount, 200);  // vk.xml 1.3.239 has 231 vkCmd* commands
}

TEST(CommandTable, IdsIndexTheTable) {
    EXPECT_STREQ(kCommandInfo[int(CommandId::CmdDispatch)].name, "vkCmdDispatch");
    EXPECT_STREQ(kCommandInfo[int(CommandId::CmdCopyBuffer)].name, "vkCmdCopyBuffer");
    EXPECT_STREQ(kCommandInfo[int(CommandId::CmdExecuteCommands)].name, "vkCmdExecuteCommands");
}
