#include "capture/footprint_walk.h"

#include "capture_commands.h"

namespace slipstream::capture {

namespace {
class Walk {
public:
    Walk(const ResourceRegistry& registry, uint64_t epoch, bool trust, Footprint& out)
        : fp(out), r_(registry), epoch_(epoch), trust_(trust) {
        fp.clear();
    }

    void add(const ResourceRange& range, bool write) {
        if (!range.known) fp.set_unknown();
        else fp.add(range.memory, range.begin, range.end, write);
    }
    void buffer(VkBuffer b, VkDeviceSize offset, VkDeviceSize size, bool write) { add(r_.buffer(b, offset, size), write); }
    void image(VkImage i, bool write) { add(r_.image(i), write); }
    // A layout transition writes the image; an ownership transfer is another queue's business.
    template <typename ImageBarrier>
    void image_barrier(const ImageBarrier& b) {
        if (b.srcQueueFamilyIndex != b.dstQueueFamilyIndex) fp.set_unknown();
        else if (b.oldLayout != b.newLayout) image(b.image, true);
    }
    template <typename BufferBarrier>
    void buffer_barrier(const BufferBarrier& b) {
        if (b.srcQueueFamilyIndex != b.dstQueueFamilyIndex) fp.set_unknown();
    }
    void record(const CaptureRecord& rec);

    Footprint& fp;

private:
    ResourceRegistry::Reader r_;
    uint64_t epoch_;
    bool trust_;
};

void Walk::record(const CaptureRecord& rec) {
    switch (rec.id) {
    case CommandId::CmdBindPipeline: {
        const auto& r = static_cast<const CmdBindPipelineRecord&>(rec);
        if (r.pipelineBindPoint != VK_PIPELINE_BIND_POINT_COMPUTE || !r_.pipeline_bounded(r.pipeline, trust_))
            fp.set_unknown();
        return;
    }
    case CommandId::CmdBindDescriptorSets: {
        const auto& r = static_cast<const CmdBindDescriptorSetsRecord&>(rec);
        for (uint32_t i = 0; i < r.descriptorSetCount; ++i)
            if (r.pDescriptorSets[i] && !r_.add_set(r.pDescriptorSets[i], epoch_, trust_, fp)) fp.set_unknown();
        return;
    }
    case CommandId::CmdPushDescriptorSetKHR: {
        const auto& r = static_cast<const CmdPushDescriptorSetKHRRecord&>(rec);
        for (uint32_t i = 0; i < r.descriptorWriteCount; ++i)
            if (!r_.add_write(r.pDescriptorWrites[i], fp)) fp.set_unknown();
        return;
    }
    case CommandId::CmdPushConstants:
    case CommandId::CmdDispatch:
    case CommandId::CmdDispatchBase:
    case CommandId::CmdDispatchBaseKHR:
    case CommandId::CmdBeginDebugUtilsLabelEXT:
    case CommandId::CmdEndDebugUtilsLabelEXT:
    case CommandId::CmdInsertDebugUtilsLabelEXT:
    case CommandId::CmdDebugMarkerBeginEXT:
    case CommandId::CmdDebugMarkerEndEXT:
    case CommandId::CmdDebugMarkerInsertEXT: return;
    case CommandId::CmdDispatchIndirect: {
        const auto& r = static_cast<const CmdDispatchIndirectRecord&>(rec);
        buffer(r.buffer, r.offset, sizeof(VkDispatchIndirectCommand), false);
        return;
    }
    case CommandId::CmdCopyBuffer: {
        const auto& r = static_cast<const CmdCopyBufferRecord&>(rec);
        for (uint32_t i = 0; i < r.regionCount; ++i) {
            buffer(r.srcBuffer, r.pRegions[i].srcOffset, r.pRegions[i].size, false);
            buffer(r.dstBuffer, r.pRegions[i].dstOffset, r.pRegions[i].size, true);
        }
        return;
    }
    case CommandId::CmdCopyBuffer2:
    case CommandId::CmdCopyBuffer2KHR: {
        const VkCopyBufferInfo2& c = *static_cast<const CmdCopyBuffer2Record&>(rec).pCopyBufferInfo;
        for (uint32_t i = 0; i < c.regionCount; ++i) {
            buffer(c.srcBuffer, c.pRegions[i].srcOffset, c.pRegions[i].size, false);
            buffer(c.dstBuffer, c.pRegions[i].dstOffset, c.pRegions[i].size, true);
        }
        return;
    }
    case CommandId::CmdCopyImage: {
        const auto& r = static_cast<const CmdCopyImageRecord&>(rec);
        image(r.srcImage, false);
        image(r.dstImage, true);
        return;
    }
    case CommandId::CmdCopyImage2:
    case CommandId::CmdCopyImage2KHR: {
        const VkCopyImageInfo2& c = *static_cast<const CmdCopyImage2Record&>(rec).pCopyImageInfo;
        image(c.srcImage, false);
        image(c.dstImage, true);
        return;
    }
    case CommandId::CmdCopyBufferToImage: {
        const auto& r = static_cast<const CmdCopyBufferToImageRecord&>(rec);
        buffer(r.srcBuffer, 0, VK_WHOLE_SIZE, false);
        image(r.dstImage, true);
        return;
    }
    case CommandId::CmdCopyBufferToImage2:
    case CommandId::CmdCopyBufferToImage2KHR: {
        const VkCopyBufferToImageInfo2& c = *static_cast<const CmdCopyBufferToImage2Record&>(rec).pCopyBufferToImageInfo;
        buffer(c.srcBuffer, 0, VK_WHOLE_SIZE, false);
        image(c.dstImage, true);
        return;
    }
    case CommandId::CmdCopyImageToBuffer: {
        const auto& r = static_cast<const CmdCopyImageToBufferRecord&>(rec);
        image(r.srcImage, false);
        buffer(r.dstBuffer, 0, VK_WHOLE_SIZE, true);
        return;
    }
    case CommandId::CmdCopyImageToBuffer2:
    case CommandId::CmdCopyImageToBuffer2KHR: {
        const VkCopyImageToBufferInfo2& c = *static_cast<const CmdCopyImageToBuffer2Record&>(rec).pCopyImageToBufferInfo;
        image(c.srcImage, false);
        buffer(c.dstBuffer, 0, VK_WHOLE_SIZE, true);
        return;
    }
    case CommandId::CmdFillBuffer: {
        const auto& r = static_cast<const CmdFillBufferRecord&>(rec);
        buffer(r.dstBuffer, r.dstOffset, r.size, true);
        return;
    }
    case CommandId::CmdUpdateBuffer: {
        const auto& r = static_cast<const CmdUpdateBufferRecord&>(rec);
        buffer(r.dstBuffer, r.dstOffset, r.dataSize, true);
        return;
    }
    case CommandId::CmdClearColorImage: image(static_cast<const CmdClearColorImageRecord&>(rec).image, true); return;
    case CommandId::CmdPipelineBarrier: {
        const auto& r = static_cast<const CmdPipelineBarrierRecord&>(rec);
        for (uint32_t i = 0; i < r.bufferMemoryBarrierCount; ++i) buffer_barrier(r.pBufferMemoryBarriers[i]);
        for (uint32_t i = 0; i < r.imageMemoryBarrierCount; ++i) image_barrier(r.pImageMemoryBarriers[i]);
        return;
    }
    case CommandId::CmdPipelineBarrier2:
    case CommandId::CmdPipelineBarrier2KHR: {
        const VkDependencyInfo* info = static_cast<const CmdPipelineBarrier2Record&>(rec).pDependencyInfo;
        if (!info) return;
        for (uint32_t i = 0; i < info->bufferMemoryBarrierCount; ++i) buffer_barrier(info->pBufferMemoryBarriers[i]);
        for (uint32_t i = 0; i < info->imageMemoryBarrierCount; ++i) image_barrier(info->pImageMemoryBarriers[i]);
        return;
    }
    default: fp.set_unknown(); return;  // descriptor buffers, events, queries, timestamps, anything newer
    }
}
}  // namespace

void footprint_of(const CommandCapture& capture, const ResourceRegistry& registry, uint64_t begun_epoch, bool trust,
                  Footprint& out) {
    Walk walk(registry, begun_epoch, trust, out);
    if (!capture.capturable()) out.set_unknown();
    for (const CaptureRecord* r = capture.records(); r && !out.unknown(); r = r->next) walk.record(*r);
    out.normalize();
}

}  // namespace slipstream::capture
