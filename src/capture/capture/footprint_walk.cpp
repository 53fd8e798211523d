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
    // The command families; `Copy` is a capture record or the Vulkan *Info2 structure, whose
    // members have the same names.
    void bind_pipeline(const CmdBindPipelineRecord& r) {
        if (r.pipelineBindPoint != VK_PIPELINE_BIND_POINT_COMPUTE || !r_.pipeline_bounded(r.pipeline, trust_))
            fp.set_unknown();
    }
    void bind_sets(const CmdBindDescriptorSetsRecord& r) {
        for (uint32_t i = 0; i < r.descriptorSetCount; ++i)
            if (r.pDescriptorSets[i] && !r_.add_set(r.pDescriptorSets[i], epoch_, trust_, fp)) fp.set_unknown();
    }
    void push_descriptors(const CmdPushDescriptorSetKHRRecord& r) {
        for (uint32_t i = 0; i < r.descriptorWriteCount; ++i)
            if (!r_.add_write(r.pDescriptorWrites[i], fp)) fp.set_unknown();
    }
    template <typename Copy>
    void copy_buffer(const Copy& c) {
        for (uint32_t i = 0; i < c.regionCount; ++i) {
            buffer(c.srcBuffer, c.pRegions[i].srcOffset, c.pRegions[i].size, false);
            buffer(c.dstBuffer, c.pRegions[i].dstOffset, c.pRegions[i].size, true);
        }
    }
    template <typename Copy>
    void copy_image(const Copy& c) {
        image(c.srcImage, false);
        image(c.dstImage, true);
    }
    template <typename Copy>
    void buffer_to_image(const Copy& c) {
        buffer(c.srcBuffer, 0, VK_WHOLE_SIZE, false);
        image(c.dstImage, true);
    }
    template <typename Copy>
    void image_to_buffer(const Copy& c) {
        image(c.srcImage, false);
        buffer(c.dstBuffer, 0, VK_WHOLE_SIZE, true);
    }
    template <typename Dependency>
    void barriers(const Dependency& d) {
        for (uint32_t i = 0; i < d.bufferMemoryBarrierCount; ++i) buffer_barrier(d.pBufferMemoryBarriers[i]);
        for (uint32_t i = 0; i < d.imageMemoryBarrierCount; ++i) image_barrier(d.pImageMemoryBarriers[i]);
    }
    void record(const CaptureRecord& rec);

    Footprint& fp;

private:
    ResourceRegistry::Reader r_;
    uint64_t epoch_;
    bool trust_;
};

template <typename Record>
const Record& as(const CaptureRecord& rec) {
    return static_cast<const Record&>(rec);
}

void Walk::record(const CaptureRecord& rec) {
    switch (rec.id) {
    case CommandId::CmdBindPipeline: return bind_pipeline(as<CmdBindPipelineRecord>(rec));
    case CommandId::CmdBindDescriptorSets: return bind_sets(as<CmdBindDescriptorSetsRecord>(rec));
    case CommandId::CmdPushDescriptorSetKHR: return push_descriptors(as<CmdPushDescriptorSetKHRRecord>(rec));
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
        const auto& r = as<CmdDispatchIndirectRecord>(rec);
        return buffer(r.buffer, r.offset, sizeof(VkDispatchIndirectCommand), false);
    }
    case CommandId::CmdCopyBuffer: return copy_buffer(as<CmdCopyBufferRecord>(rec));
    case CommandId::CmdCopyBuffer2:
    case CommandId::CmdCopyBuffer2KHR: return copy_buffer(*as<CmdCopyBuffer2Record>(rec).pCopyBufferInfo);
    case CommandId::CmdCopyImage: return copy_image(as<CmdCopyImageRecord>(rec));
    case CommandId::CmdCopyImage2:
    case CommandId::CmdCopyImage2KHR: return copy_image(*as<CmdCopyImage2Record>(rec).pCopyImageInfo);
    case CommandId::CmdCopyBufferToImage: return buffer_to_image(as<CmdCopyBufferToImageRecord>(rec));
    case CommandId::CmdCopyBufferToImage2:
    case CommandId::CmdCopyBufferToImage2KHR:
        return buffer_to_image(*as<CmdCopyBufferToImage2Record>(rec).pCopyBufferToImageInfo);
    case CommandId::CmdCopyImageToBuffer: return image_to_buffer(as<CmdCopyImageToBufferRecord>(rec));
    case CommandId::CmdCopyImageToBuffer2:
    case CommandId::CmdCopyImageToBuffer2KHR:
        return image_to_buffer(*as<CmdCopyImageToBuffer2Record>(rec).pCopyImageToBufferInfo);
    case CommandId::CmdFillBuffer: {
        const auto& r = as<CmdFillBufferRecord>(rec);
        return buffer(r.dstBuffer, r.dstOffset, r.size, true);
    }
    case CommandId::CmdUpdateBuffer: {
        const auto& r = as<CmdUpdateBufferRecord>(rec);
        return buffer(r.dstBuffer, r.dstOffset, r.dataSize, true);
    }
    case CommandId::CmdClearColorImage: return image(as<CmdClearColorImageRecord>(rec).image, true);
    case CommandId::CmdPipelineBarrier: return barriers(as<CmdPipelineBarrierRecord>(rec));
    case CommandId::CmdPipelineBarrier2:
    case CommandId::CmdPipelineBarrier2KHR: {
        const VkDependencyInfo* info = as<CmdPipelineBarrier2Record>(rec).pDependencyInfo;
        if (info) barriers(*info);
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
