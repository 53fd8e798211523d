#include "capture/barrier_cover.h"

#include "capture_commands.h"

namespace slipstream::capture {

namespace {
constexpr VkAccessFlags kReads = VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_INDEX_READ_BIT |
                                 VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT |
                                 VK_ACCESS_INPUT_ATTACHMENT_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
                                 VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                                 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT;

bool covers(uint64_t src_stages, uint64_t dst_stages, uint64_t src_access, uint64_t dst_access, bool indirect) {
    return stages_cover(src_stages, kFuseSrcStages) && stages_cover(dst_stages, fuse_dst_stages(indirect)) &&
           accesses_cover(src_access, kFuseSrcAccess) &&
           accesses_cover(dst_access, fuse_dst_access(indirect));
}

bool covers(const CmdPipelineBarrierRecord& b, bool indirect) {
    if (b.dependencyFlags != 0) return false;
    for (uint32_t i = 0; i < b.memoryBarrierCount; ++i) {
        const VkMemoryBarrier& m = b.pMemoryBarriers[i];
        if (!m.pNext && covers(b.srcStageMask, b.dstStageMask, m.srcAccessMask, m.dstAccessMask, indirect)) return true;
    }
    return false;
}

bool covers(const CmdPipelineBarrier2Record& b, bool indirect) {
    const VkDependencyInfo* info = b.pDependencyInfo;
    if (!info || info->pNext || info->dependencyFlags != 0) return false;
    for (uint32_t i = 0; i < info->memoryBarrierCount; ++i) {
        const VkMemoryBarrier2& m = info->pMemoryBarriers[i];
        if (!m.pNext && covers(m.srcStageMask, m.dstStageMask, m.srcAccessMask, m.dstAccessMask, indirect)) return true;
    }
    return false;
}
}  // namespace

bool stages_cover(uint64_t have, uint64_t need) {
    return (have & VK_PIPELINE_STAGE_ALL_COMMANDS_BIT) || (have & need) == need;
}

bool accesses_cover(uint64_t have, uint64_t need) {
    // MEMORY_READ stands for every read, MEMORY_WRITE for every write.
    if (have & VK_ACCESS_MEMORY_READ_BIT) need &= ~uint64_t(kReads);
    if (have & VK_ACCESS_MEMORY_WRITE_BIT) need &= uint64_t(kReads);
    return (have & need) == need;
}

bool opens_with_fuse_barrier(const CommandCapture& capture, bool indirect) {
    for (const CaptureRecord* r = capture.records(); r; r = r->next) {
        switch (r->id) {
        case CommandId::CmdPipelineBarrier:
            if (covers(*static_cast<const CmdPipelineBarrierRecord*>(r), indirect)) return true;
            continue;
        case CommandId::CmdPipelineBarrier2:
        case CommandId::CmdPipelineBarrier2KHR:
            if (covers(*static_cast<const CmdPipelineBarrier2Record*>(r), indirect)) return true;
            continue;
        default: break;
        }
        const CommandKind kind = kCommandInfo[int(r->id)].kind;
        if (kind != CommandKind::State && kind != CommandKind::Debug && kind != CommandKind::Sync) return false;
    }
    return false;
}

}  // namespace slipstream::capture
