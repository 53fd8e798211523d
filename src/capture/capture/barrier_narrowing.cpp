#include "capture/barrier_narrowing.h"

#include "capture_commands.h"

#include <type_traits>
#include <vector>

namespace slipstream::capture {

namespace {
constexpr uint64_t kAll = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
constexpr uint64_t kHost = VK_PIPELINE_STAGE_2_HOST_BIT;
constexpr uint64_t kHostAccess = VK_ACCESS_2_HOST_READ_BIT | VK_ACCESS_2_HOST_WRITE_BIT;
// Accesses compute and transfer stages perform (both versions), and what any stage does.
constexpr uint64_t kWorkAccess =
    VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT | VK_ACCESS_2_SHADER_READ_BIT |
    VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_UNIFORM_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT |
    VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_SAMPLED_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
    VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;

// The narrowed mask of one side, or the mask as it was; false if its accesses would not fit.
bool narrow_side(uint64_t& stages, uint64_t access, uint64_t work, uint64_t extra_access) {
    if (!(stages & kAll)) return true;
    const uint64_t narrowed = work | (stages & kHost);
    const uint64_t allowed = kWorkAccess | extra_access | ((narrowed & kHost) ? kHostAccess : 0);
    if (access & ~allowed) return false;
    stages = narrowed;
    return true;
}

bool no_ownership_transfer(uint32_t src_family, uint32_t dst_family) { return src_family == dst_family; }

// VK_DEPENDENCY_BY_REGION_BIT limits only framebuffer-space stages, which narrowed masks never
// hold (samples and naive runtimes set it on every barrier, render pass or not); any other
// flag (view-local, device-group, feedback loop) keeps the barrier as recorded.
bool narrowable_flags(VkDependencyFlags flags) { return (flags & ~VkDependencyFlags(VK_DEPENDENCY_BY_REGION_BIT)) == 0; }

// MEMORY_READ / MEMORY_WRITE on a narrowed side become the accesses its stages perform, named
// (FUSION.md rule 8; on the H200 a barrier invalidating for MEMORY_READ costs as much GPU time
// per dispatch as one into ALL_COMMANDS).
uint64_t named_access(uint64_t access, uint64_t stages) {
    uint64_t reads = 0, writes = 0;
    if (stages & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT) {
        reads |= VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_UNIFORM_READ_BIT;
        writes |= VK_ACCESS_2_SHADER_WRITE_BIT;
    }
    if (stages & VK_PIPELINE_STAGE_2_TRANSFER_BIT) {
        reads |= VK_ACCESS_2_TRANSFER_READ_BIT;
        writes |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    if (stages & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT) reads |= VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT;
    if (stages & VK_PIPELINE_STAGE_2_HOST_BIT) {
        reads |= VK_ACCESS_2_HOST_READ_BIT;
        writes |= VK_ACCESS_2_HOST_WRITE_BIT;
    }
    uint64_t out = access & ~uint64_t(VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    if (access & VK_ACCESS_2_MEMORY_READ_BIT) out |= reads;
    if (access & VK_ACCESS_2_MEMORY_WRITE_BIT) out |= writes;
    return out;
}
// The accesses of a side after narrowing: named where that side was ALL_COMMANDS.
uint64_t side_access(uint64_t access, uint64_t old_stages, uint64_t new_stages) {
    return (old_stages & kAll) ? named_access(access, new_stages) : access;
}
constexpr uint64_t kTransferParts = VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_BLIT_BIT |
                                   VK_PIPELINE_STAGE_2_RESOLVE_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT;
}  // namespace

bool narrowable_work(const CommandCapture& capture) {
    for (const CaptureRecord* r = capture.records(); r; r = r->next) {
        switch (r->id) {
        // Descriptor-buffer reads are an access of their own that named accesses would drop.
        case CommandId::CmdBindDescriptorBuffersEXT:
        case CommandId::CmdSetDescriptorBufferOffsetsEXT:
        case CommandId::CmdBindDescriptorBufferEmbeddedSamplersEXT: return false;
        default: break;
        }
        // Indirect dispatches read their parameters at DRAW_INDIRECT (narrowing.md, cases 1, 2).
        if (kCommandInfo[int(r->id)].stages & ~(kNarrowDstIndirectStages | kTransferParts)) return false;
    }
    return true;
}

bool narrow_stage_masks(uint64_t& src_stages, uint64_t& dst_stages, uint64_t src_access, uint64_t dst_access,
                        bool indirect) {
    if (!((src_stages | dst_stages) & kAll)) return false;
    uint64_t src = src_stages, dst = dst_stages;
    if (!narrow_side(src, src_access, kNarrowSrcStages, 0)) return false;
    if (!narrow_side(dst, dst_access, narrow_dst_stages(indirect), indirect ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0))
        return false;
    src_stages = src;
    dst_stages = dst;
    return true;
}

namespace {
// A v1 barrier command's three barrier arrays (vkCmdPipelineBarrier, vkCmdWaitEvents), copied
// with `rename` applied to each barrier's access masks.
struct BarriersV1 {
    std::vector<VkMemoryBarrier> memory;
    std::vector<VkBufferMemoryBarrier> buffers;
    std::vector<VkImageMemoryBarrier> images;
};
template <typename Record, typename Rename>
BarriersV1 renamed_barriers(const Record& r, Rename&& rename) {
    BarriersV1 b{{r.pMemoryBarriers, r.pMemoryBarriers + r.memoryBarrierCount},
                 {r.pBufferMemoryBarriers, r.pBufferMemoryBarriers + r.bufferMemoryBarrierCount},
                 {r.pImageMemoryBarriers, r.pImageMemoryBarriers + r.imageMemoryBarrierCount}};
    for (auto& x : b.memory) rename(x);
    for (auto& x : b.buffers) rename(x);
    for (auto& x : b.images) rename(x);
    return b;
}

// vkCmdPipelineBarrier: one pair of masks for every barrier of the call.
// History: the first narrowed barrier after other work gets a full one of ours in front.
void lead(const VkLayerDispatchTable& d, VkCommandBuffer cb, NarrowingState& state) {
    if (!state.full_first) return;
    record_leading_barrier(d, cb, state.indirect);
    state.full_first = false;
    ++state.inserted;
}

// The stage masks a v1 barrier is replayed with, narrowed; false where it stays as recorded.
bool narrowed_v1_masks(const CmdPipelineBarrierRecord& r, bool indirect, uint64_t& src, uint64_t& dst) {
    if (!narrowable_flags(r.dependencyFlags)) return false;
    uint64_t src_access = 0, dst_access = 0;
    for (uint32_t i = 0; i < r.memoryBarrierCount; ++i) {
        src_access |= r.pMemoryBarriers[i].srcAccessMask;
        dst_access |= r.pMemoryBarriers[i].dstAccessMask;
    }
    for (uint32_t i = 0; i < r.bufferMemoryBarrierCount; ++i) {
        const VkBufferMemoryBarrier& b = r.pBufferMemoryBarriers[i];
        if (!no_ownership_transfer(b.srcQueueFamilyIndex, b.dstQueueFamilyIndex)) return false;
        src_access |= b.srcAccessMask;
        dst_access |= b.dstAccessMask;
    }
    for (uint32_t i = 0; i < r.imageMemoryBarrierCount; ++i) {
        const VkImageMemoryBarrier& b = r.pImageMemoryBarriers[i];
        if (!no_ownership_transfer(b.srcQueueFamilyIndex, b.dstQueueFamilyIndex)) return false;
        src_access |= b.srcAccessMask;
        dst_access |= b.dstAccessMask;
    }
    src = r.srcStageMask;
    dst = r.dstStageMask;
    return narrow_stage_masks(src, dst, src_access, dst_access, indirect);
}

bool replay_v1(const CmdPipelineBarrierRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb,
               NarrowingState& state) {
    uint64_t src, dst;
    if (!narrowed_v1_masks(r, state.indirect, src, dst)) return false;
    lead(d, cb, state);
    const BarriersV1 b = renamed_barriers(r, [&](auto& x) {
        x.srcAccessMask = VkAccessFlags(side_access(x.srcAccessMask, r.srcStageMask, src));
        x.dstAccessMask = VkAccessFlags(side_access(x.dstAccessMask, r.dstStageMask, dst));
    });
    d.CmdPipelineBarrier(cb, VkPipelineStageFlags(src), VkPipelineStageFlags(dst), r.dependencyFlags, r.memoryBarrierCount,
                         b.memory.data(), r.bufferMemoryBarrierCount, b.buffers.data(), r.imageMemoryBarrierCount,
                         b.images.data());
    return true;
}

// vkCmdPipelineBarrier2: masks per barrier; narrowed only if every barrier that names
// ALL_COMMANDS can be (one barrier of the call left whole keeps its whole cost anyway).
template <typename B>
bool narrow_each(const B* in, uint32_t n, std::vector<B>& out, bool& any, bool indirect, bool dst_only) {
    out.assign(in, in + n);
    for (B& b : out) {
        if constexpr (!std::is_same_v<B, VkMemoryBarrier2>)
            if (!no_ownership_transfer(b.srcQueueFamilyIndex, b.dstQueueFamilyIndex)) return false;
        if (!(((dst_only ? 0 : b.srcStageMask) | b.dstStageMask) & kAll)) continue;
        uint64_t src = b.srcStageMask, dst = b.dstStageMask;
        if (dst_only) {
            if (!narrow_side(dst, b.dstAccessMask, narrow_dst_stages(indirect),
                             indirect ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0))
                return false;
        } else if (!narrow_stage_masks(src, dst, b.srcAccessMask, b.dstAccessMask, indirect)) {
            return false;
        }
        if (!dst_only) b.srcAccessMask = side_access(b.srcAccessMask, b.srcStageMask, src);
        b.dstAccessMask = side_access(b.dstAccessMask, b.dstStageMask, dst);
        b.srcStageMask = src;
        b.dstStageMask = dst;
        any = true;
    }
    return true;
}

// One dependency info narrowed (all its barriers that name ALL_COMMANDS, or none; `dst_only`:
// on their destination side only): a function of the info and the flags alone, so equal infos
// stay equal (vkCmdSetEvent2 and its waits).
struct NarrowedInfo {
    VkDependencyInfo info{};
    std::vector<VkMemoryBarrier2> memory;
    std::vector<VkBufferMemoryBarrier2> buffers;
    std::vector<VkImageMemoryBarrier2> images;
};
bool narrow_info(const VkDependencyInfo* info, bool indirect, NarrowedInfo& out, bool dst_only = false) {
    if (!info || !narrowable_flags(info->dependencyFlags)) return false;
    bool any = false;
    if (!narrow_each(info->pMemoryBarriers, info->memoryBarrierCount, out.memory, any, indirect, dst_only) ||
        !narrow_each(info->pBufferMemoryBarriers, info->bufferMemoryBarrierCount, out.buffers, any, indirect,
                     dst_only) ||
        !narrow_each(info->pImageMemoryBarriers, info->imageMemoryBarrierCount, out.images, any, indirect, dst_only) ||
        !any)
        return false;
    out.info = *info;
    out.info.pMemoryBarriers = out.memory.data();
    out.info.pBufferMemoryBarriers = out.buffers.data();
    out.info.pImageMemoryBarriers = out.images.data();
    return true;
}

bool replay_v2(const CmdPipelineBarrier2Record& r, const VkLayerDispatchTable& d, VkCommandBuffer cb, CommandId id,
               NarrowingState& state) {
    NarrowedInfo narrowed;
    if (!narrow_info(r.pDependencyInfo, state.indirect, narrowed)) return false;
    lead(d, cb, state);
    if (id == CommandId::CmdPipelineBarrier2) d.CmdPipelineBarrier2(cb, &narrowed.info);
    else d.CmdPipelineBarrier2KHR(cb, &narrowed.info);
    return true;
}

}  // namespace

uint32_t count_narrowable_barriers(const CommandCapture& capture, bool indirect, uint32_t enough) {
    uint32_t n = 0;
    for (const CaptureRecord* r = capture.records(); r && n < enough; r = r->next) {
        uint64_t src, dst;
        NarrowedInfo scratch;
        if (r->id == CommandId::CmdPipelineBarrier)
            n += narrowed_v1_masks(static_cast<const CmdPipelineBarrierRecord&>(*r), indirect, src, dst);
        else if (r->id == CommandId::CmdPipelineBarrier2 || r->id == CommandId::CmdPipelineBarrier2KHR)
            n += narrow_info(static_cast<const CmdPipelineBarrier2Record&>(*r).pDependencyInfo, indirect, scratch);
        // An event wait's destination side may be narrowed, and so may a set's dependency info
        // (where the batch's plan proves the pairing): counted as narrowable.
        else if (r->id == CommandId::CmdWaitEvents || r->id == CommandId::CmdWaitEvents2 ||
                 r->id == CommandId::CmdWaitEvents2KHR || r->id == CommandId::CmdSetEvent2 ||
                 r->id == CommandId::CmdSetEvent2KHR)
            ++n;
    }
    return n;
}

bool replay_barrier(const CaptureRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb, NarrowingState& state) {
    const bool barrier = r.id == CommandId::CmdPipelineBarrier || r.id == CommandId::CmdPipelineBarrier2 ||
                         r.id == CommandId::CmdPipelineBarrier2KHR;
    if (!barrier) return false;
    ++state.seen;
    const bool narrowed = r.id == CommandId::CmdPipelineBarrier
                              ? replay_v1(static_cast<const CmdPipelineBarrierRecord&>(r), d, cb, state)
                              : replay_v2(static_cast<const CmdPipelineBarrier2Record&>(r), d, cb, r.id, state);
    if (narrowed) ++state.narrowed;
    else replay_record(d, cb, r);
    return true;
}


// --- events (narrowing.md, case 7; which ones: event_plan.h) ---------------------------------

namespace {
// vkCmdWaitEvents: the destination side is the wait's own, narrowed as a barrier's would be.
// The source side stays: it must be the OR of the sets' masks, which stay too.
bool replay_wait_v1(const CmdWaitEventsRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb,
                    NarrowingState& state) {
    uint64_t dst = r.dstStageMask, dst_access = 0;
    for (uint32_t i = 0; i < r.memoryBarrierCount; ++i) dst_access |= r.pMemoryBarriers[i].dstAccessMask;
    for (uint32_t i = 0; i < r.bufferMemoryBarrierCount; ++i) dst_access |= r.pBufferMemoryBarriers[i].dstAccessMask;
    for (uint32_t i = 0; i < r.imageMemoryBarrierCount; ++i) dst_access |= r.pImageMemoryBarriers[i].dstAccessMask;
    const bool ind = state.indirect;
    if (!(dst & kAll) ||
        !narrow_side(dst, dst_access, narrow_dst_stages(ind), ind ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0))
        return false;
    lead(d, cb, state);
    const BarriersV1 b = renamed_barriers(
        r, [&](auto& x) { x.dstAccessMask = VkAccessFlags(named_access(x.dstAccessMask, dst)); });
    d.CmdWaitEvents(cb, r.eventCount, r.pEvents, r.srcStageMask, VkPipelineStageFlags(dst), r.memoryBarrierCount,
                    b.memory.data(), r.bufferMemoryBarrierCount, b.buffers.data(), r.imageMemoryBarrierCount,
                    b.images.data());
    return true;
}

bool replay_wait_v2(const CmdWaitEvents2Record& r, const uint8_t* decisions, const VkLayerDispatchTable& d,
                    VkCommandBuffer cb, CommandId id, NarrowingState& state) {
    if (!decisions) return false;
    std::vector<NarrowedInfo> narrowed(r.eventCount);
    std::vector<VkDependencyInfo> infos(r.pDependencyInfos, r.pDependencyInfos + r.eventCount);
    bool any = false;
    for (uint32_t i = 0; i < r.eventCount; ++i)
        if (decisions[i] && narrow_info(&r.pDependencyInfos[i], decisions[i] == 2, narrowed[i], true)) {
            infos[i] = narrowed[i].info;
            any = true;
        }
    if (!any) return false;
    lead(d, cb, state);
    if (id == CommandId::CmdWaitEvents2) d.CmdWaitEvents2(cb, r.eventCount, r.pEvents, infos.data());
    else d.CmdWaitEvents2KHR(cb, r.eventCount, r.pEvents, infos.data());
    return true;
}
}  // namespace

bool replay_event(const CaptureRecord& r, const VkLayerDispatchTable& d, VkCommandBuffer cb, NarrowingState& state,
                  EventPlan& plan) {
    bool narrowed = false, wait = false;
    switch (r.id) {
    case CommandId::CmdSetEvent2:
    case CommandId::CmdSetEvent2KHR: {
        // Its info's destination side, exactly as its waits' (its first scope stays).
        const auto& s = static_cast<const CmdSetEvent2Record&>(r);
        const uint8_t* decision = plan.take(1);
        NarrowedInfo info;
        narrowed = decision && decision[0] && narrow_info(s.pDependencyInfo, decision[0] == 2, info, true);
        if (narrowed) {
            lead(d, cb, state);
            if (r.id == CommandId::CmdSetEvent2) d.CmdSetEvent2(cb, s.event, &info.info);
            else d.CmdSetEvent2KHR(cb, s.event, &info.info);
        }
        break;
    }
    case CommandId::CmdWaitEvents:
        wait = true;
        narrowed = replay_wait_v1(static_cast<const CmdWaitEventsRecord&>(r), d, cb, state);
        break;
    case CommandId::CmdWaitEvents2:
    case CommandId::CmdWaitEvents2KHR: {
        const auto& w = static_cast<const CmdWaitEvents2Record&>(r);
        wait = true;
        narrowed = replay_wait_v2(w, plan.take(w.eventCount), d, cb, r.id, state);
        break;
    }
    default: return false;  // vkCmdSetEvent, vkCmdResetEvent/2: replayed as recorded by the caller
    }
    ++state.seen;
    if (narrowed) {
        ++state.narrowed;
        ++(wait ? state.event_waits_narrowed : state.event_sets_narrowed);
    } else {
        replay_record(d, cb, r);
    }
    return true;
}

namespace {
void full_memory_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb, uint64_t src, uint64_t dst) {
    // Named accesses where the side is the batch's stages; MEMORY_* toward everything else.
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    const uint64_t write = VK_ACCESS_2_MEMORY_WRITE_BIT, read_write = write | VK_ACCESS_2_MEMORY_READ_BIT;
    barrier.srcAccessMask = VkAccessFlags((src & kAll) ? write : named_access(write, src));
    barrier.dstAccessMask = VkAccessFlags((dst & kAll) ? read_write : named_access(read_write, dst));
    d.CmdPipelineBarrier(cb, VkPipelineStageFlags(src), VkPipelineStageFlags(dst), 0, 1, &barrier, 0, nullptr, 0, nullptr);
}
}  // namespace

void record_trailing_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb) {
    // From every stage a narrowed barrier's second scope may hold.
    full_memory_barrier(d, cb, kNarrowDstIndirectStages, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
}

void record_leading_barrier(const VkLayerDispatchTable& d, VkCommandBuffer cb, bool indirect) {
    full_memory_barrier(d, cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, narrow_dst_stages(indirect));
}

}  // namespace slipstream::capture
