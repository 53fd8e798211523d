// Whether a capture's work is already ordered after everything before it by a barrier of the
// application's: a memory barrier recorded ahead of its first operation whose scopes and
// accesses hold the fuse barrier's (batch_recorder.cpp) — execution from compute and transfer
// work to compute and transfer work (and indirect parameter reads, for a capture that
// dispatches indirectly), with shader and transfer writes made visible to their reads and
// writes. Naive runtimes open every command buffer with such a barrier
// (ALL_COMMANDS, MEMORY_WRITE -> MEMORY_READ|MEMORY_WRITE); fusion then leaves its own out,
// which on the H200 is a whole barrier's GPU time per fused command buffer.
#pragma once

#include "capture/command_capture.h"

namespace slipstream::capture {

// The fuse barrier's scopes and accesses (one definition, for both sides).
inline constexpr VkPipelineStageFlags kFuseSrcStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
inline constexpr VkPipelineStageFlags kFuseDstStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
// Into DRAW_INDIRECT only in front of indirect dispatches: such a barrier makes NVIDIA's front
// end wait for idle, as ALL_COMMANDS does.
inline VkPipelineStageFlags fuse_dst_stages(bool indirect) {
    return kFuseDstStages | (indirect ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : 0);
}
inline constexpr VkAccessFlags kFuseSrcAccess = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
inline constexpr VkAccessFlags kFuseDstAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                                VK_ACCESS_UNIFORM_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                                                VK_ACCESS_TRANSFER_WRITE_BIT;
inline VkAccessFlags fuse_dst_access(bool indirect) {
    return kFuseDstAccess | (indirect ? VK_ACCESS_INDIRECT_COMMAND_READ_BIT : 0);
}

// Pure: stage and access masks of either synchronization version (their low bits agree).
bool stages_cover(uint64_t have, uint64_t need);
bool accesses_cover(uint64_t have, uint64_t need);

bool opens_with_fuse_barrier(const CommandCapture& capture, bool indirect);

}  // namespace slipstream::capture
