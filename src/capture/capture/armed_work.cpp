#include "capture/armed_work.h"

#include "capture_commands.h"

#include <cstring>

namespace slipstream::capture {

template <typename T>
void ArmableWork::put(const T& value) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    key_.insert(key_.end(), bytes, bytes + sizeof(T));
}

template <typename T>
void ArmableWork::put_array(const T* values, uint32_t count) {
    put(count);
    for (uint32_t i = 0; i < count; ++i) put(values[i]);
}

void ArmableWork::clear() {
    key_.clear();
    dispatches_.clear();
}

bool ArmableWork::read(const CommandCapture& capture) {
    clear();
    bool ok = capture.capturable() && capture.ended() && capture.level() == VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    for (const CaptureRecord* r = capture.records(); r && ok; r = r->next) ok = read_record(*r);
    if (!ok || dispatches_.empty() || dispatches_.size() > kMaxDispatches) {
        clear();
        return false;
    }
    return true;
}

namespace {
// The members of barrier structures, field by field: their padding and pNext never reach the key.
template <typename Put>
void memory_barrier(Put&& put, const VkMemoryBarrier& b) {
    put(b.srcAccessMask), put(b.dstAccessMask);
}
template <typename Put>
void buffer_barrier(Put&& put, const VkBufferMemoryBarrier& b) {
    put(b.srcAccessMask), put(b.dstAccessMask), put(b.srcQueueFamilyIndex), put(b.dstQueueFamilyIndex);
    put(b.buffer), put(b.offset), put(b.size);
}
template <typename Put>
void image_barrier(Put&& put, const VkImageMemoryBarrier& b) {
    put(b.srcAccessMask), put(b.dstAccessMask), put(b.oldLayout), put(b.newLayout);
    put(b.srcQueueFamilyIndex), put(b.dstQueueFamilyIndex), put(b.image);
    const VkImageSubresourceRange& r = b.subresourceRange;
    put(r.aspectMask), put(r.baseMipLevel), put(r.levelCount), put(r.baseArrayLayer), put(r.layerCount);
}
template <typename Put>
void memory_barrier2(Put&& put, const VkMemoryBarrier2& b) {
    put(b.srcStageMask), put(b.srcAccessMask), put(b.dstStageMask), put(b.dstAccessMask);
}
template <typename Put>
void buffer_barrier2(Put&& put, const VkBufferMemoryBarrier2& b) {
    put(b.srcStageMask), put(b.srcAccessMask), put(b.dstStageMask), put(b.dstAccessMask);
    put(b.srcQueueFamilyIndex), put(b.dstQueueFamilyIndex), put(b.buffer), put(b.offset), put(b.size);
}
template <typename Put>
void image_barrier2(Put&& put, const VkImageMemoryBarrier2& b) {
    put(b.srcStageMask), put(b.srcAccessMask), put(b.dstStageMask), put(b.dstAccessMask);
    put(b.oldLayout), put(b.newLayout), put(b.srcQueueFamilyIndex), put(b.dstQueueFamilyIndex), put(b.image);
    const VkImageSubresourceRange& r = b.subresourceRange;
    put(r.aspectMask), put(r.baseMipLevel), put(r.levelCount), put(r.baseArrayLayer), put(r.layerCount);
}

// Every element of `items` without a pNext chain, each put by `one`.
template <typename T, typename Put, typename One>
bool put_plain(Put&& put, const T* items, uint32_t count, One&& one) {
    put(count);
    for (uint32_t i = 0; i < count; ++i) {
        if (items[i].pNext) return false;
        one(put, items[i]);
    }
    return true;
}
}  // namespace

bool ArmableWork::read_barrier2(const VkDependencyInfo& info) {
    auto p = [this](const auto& v) { put(v); };
    if (info.pNext) return false;
    put(info.dependencyFlags);
    return put_plain(p, info.pMemoryBarriers, info.memoryBarrierCount, memory_barrier2<decltype(p)&>) &&
           put_plain(p, info.pBufferMemoryBarriers, info.bufferMemoryBarrierCount, buffer_barrier2<decltype(p)&>) &&
           put_plain(p, info.pImageMemoryBarriers, info.imageMemoryBarrierCount, image_barrier2<decltype(p)&>);
}

bool ArmableWork::read_writes(const VkWriteDescriptorSet* writes, uint32_t count) {
    put(count);
    for (uint32_t i = 0; i < count; ++i) {
        const VkWriteDescriptorSet& w = writes[i];
        if (w.pNext) return false;  // inline uniform blocks, acceleration structures
        put(w.dstBinding), put(w.dstArrayElement), put(w.descriptorCount), put(w.descriptorType);
        for (uint32_t k = 0; k < w.descriptorCount; ++k) {
            switch (w.descriptorType) {
            case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
            case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
            case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
            case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
                put(w.pBufferInfo[k].buffer), put(w.pBufferInfo[k].offset), put(w.pBufferInfo[k].range);
                break;
            case VK_DESCRIPTOR_TYPE_SAMPLER:
            case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
            case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
            case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
            case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
                put(w.pImageInfo[k].sampler), put(w.pImageInfo[k].imageView), put(w.pImageInfo[k].imageLayout);
                break;
            case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
            case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER: put(w.pTexelBufferView[k]); break;
            default: return false;
            }
        }
    }
    return true;
}

bool ArmableWork::read_record(const CaptureRecord& r) {
    auto p = [this](const auto& v) { put(v); };
    put(r.id == CommandId::CmdPipelineBarrier2KHR ? CommandId::CmdPipelineBarrier2 : r.id);
    switch (r.id) {
    case CommandId::CmdBindPipeline: {
        const auto& c = static_cast<const CmdBindPipelineRecord&>(r);
        put(c.pipeline);
        return c.pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE;
    }
    case CommandId::CmdBindDescriptorSets: {
        const auto& c = static_cast<const CmdBindDescriptorSetsRecord&>(r);
        put(c.layout), put(c.firstSet);
        put_array(c.pDescriptorSets, c.descriptorSetCount);
        put_array(c.pDynamicOffsets, c.dynamicOffsetCount);
        return c.pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE;
    }
    case CommandId::CmdPushConstants: {
        const auto& c = static_cast<const CmdPushConstantsRecord&>(r);
        put(c.layout), put(c.stageFlags), put(c.offset);
        put_array(static_cast<const unsigned char*>(c.pValues), c.size);
        return true;
    }
    case CommandId::CmdPipelineBarrier: {
        const auto& c = static_cast<const CmdPipelineBarrierRecord&>(r);
        put(c.srcStageMask), put(c.dstStageMask), put(c.dependencyFlags);
        return put_plain(p, c.pMemoryBarriers, c.memoryBarrierCount, memory_barrier<decltype(p)&>) &&
               put_plain(p, c.pBufferMemoryBarriers, c.bufferMemoryBarrierCount, buffer_barrier<decltype(p)&>) &&
               put_plain(p, c.pImageMemoryBarriers, c.imageMemoryBarrierCount, image_barrier<decltype(p)&>);
    }
    case CommandId::CmdPushDescriptorSetKHR: {
        const auto& c = static_cast<const CmdPushDescriptorSetKHRRecord&>(r);
        put(c.layout), put(c.set);
        return c.pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE && read_writes(c.pDescriptorWrites, c.descriptorWriteCount);
    }
    case CommandId::CmdPipelineBarrier2:
    case CommandId::CmdPipelineBarrier2KHR:
        return read_barrier2(*static_cast<const CmdPipelineBarrier2Record&>(r).pDependencyInfo);
    case CommandId::CmdDispatch: {
        const auto& c = static_cast<const CmdDispatchRecord&>(r);
        put(c.groupCountX), put(c.groupCountY), put(c.groupCountZ);
        dispatches_.push_back({c.groupCountX, c.groupCountY, c.groupCountZ});
        return true;
    }
    default: return false;
    }
}

void record_armed(const CommandCapture& capture, const VkLayerDispatchTable& d, VkCommandBuffer cb, VkBuffer args,
                  VkDeviceSize offset) {
    for (const CaptureRecord* r = capture.records(); r; r = r->next) {
        if (r->id == CommandId::CmdDispatch) {
            d.CmdDispatchIndirect(cb, args, offset);
            offset += sizeof(VkDispatchIndirectCommand);
        } else {
            replay_record(d, cb, *r);
        }
    }
}

}  // namespace slipstream::capture
