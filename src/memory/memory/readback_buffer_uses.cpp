// The hand-written resolvers (layer/hooks.txt lists them, as "resolvers", for the generator): the
// commands whose use of a buffer tells host-read staging from memory the GPU reads. A transfer
// WRITE into a buffer, with no read of the same memory in the command, moves its undecided
// memory (src/memory/memory/readback_deferral.h); everything else keeps it.
#include "memory/readback_buffer_uses.h"

#include "buffer_uses.h"
#include "state/object_state.h"
#include "memory/readback_deferral.h"
#include "memory/readback_evidence.h"
#include "memory/readback_tracker.h"

#include <algorithm>
#include <iterator>

namespace slipstream {
bool is_known_command(std::string_view name) {
    return std::binary_search(std::begin(kKnownCommands), std::end(kKnownCommands), name);
}
}  // namespace slipstream

namespace slipstream::buffer_use {

namespace {
using Use = ReadbackDeferral::Use;

ReadbackDeferral* deferral(DeviceState& d) { return d.readback ? d.readback->deferral() : nullptr; }

void use(DeviceState& d, VkBuffer buffer, Use u, const char* what) {
    if (ReadbackDeferral* r = deferral(d)) r->use_buffer(buffer, u, what);
}

// A copy from `src` into `dst`: the read first, so that a copy within one undecided
// allocation keeps it (the destination's memory is then decided already).
void copy(DeviceState& d, VkBuffer src, VkBuffer dst, const char* read, const char* write) {
    use(d, src, Use::kRead, read);
    use(d, dst, Use::kTransferWrite, write);
}

void buffer_barriers(DeviceState& d, uint32_t count, const VkBufferMemoryBarrier* barriers, const char* what) {
    for (uint32_t i = 0; barriers && i < count; ++i)
        use(d, barriers[i].buffer,
            barrier_reveals_readback(barriers[i].dstAccessMask) ? Use::kTransferWrite : Use::kNeutral, what);
}

void dependency(DeviceState& d, const VkDependencyInfo* info, const char* what) {
    if (!info) return;
    for (uint32_t i = 0; info->pBufferMemoryBarriers && i < info->bufferMemoryBarrierCount; ++i) {
        const VkBufferMemoryBarrier2& b = info->pBufferMemoryBarriers[i];
        use(d, b.buffer, barrier_reveals_readback(b.dstAccessMask) ? Use::kTransferWrite : Use::kNeutral, what);
    }
}

bool buffer_descriptor(VkDescriptorType type) {
    return type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER || type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER ||
           type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC || type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
}

void descriptor_writes(DeviceState& d, uint32_t count, const VkWriteDescriptorSet* writes, const char* what) {
    for (uint32_t i = 0; writes && i < count; ++i) {
        const VkWriteDescriptorSet& w = writes[i];
        // Texel buffer views and acceleration structures resolved when they were created.
        if (!buffer_descriptor(w.descriptorType) || !w.pBufferInfo) continue;
        for (uint32_t j = 0; j < w.descriptorCount; ++j) use(d, w.pBufferInfo[j].buffer, Use::kRead, what);
    }
}
}  // namespace

void keep_buffer(DeviceState& d, VkBuffer buffer, const char* what) { use(d, buffer, Use::kRead, what); }

void keep_memory(DeviceState& d, VkDeviceMemory memory, const char* what) {
    if (ReadbackDeferral* r = deferral(d)) r->use_memory(memory, what);
}

void keep_all(DeviceState& d, const char* what) {
    if (ReadbackDeferral* r = deferral(d)) r->keep_all(what);
}

// --- transfers ---
void CmdCopyBuffer(DeviceState& d, VkCommandBuffer, VkBuffer src, VkBuffer dst, uint32_t, const VkBufferCopy*) {
    copy(d, src, dst, "vkCmdCopyBuffer source", "vkCmdCopyBuffer destination");
}
void CmdCopyBuffer2(DeviceState& d, VkCommandBuffer, const VkCopyBufferInfo2* info) {
    if (info) copy(d, info->srcBuffer, info->dstBuffer, "vkCmdCopyBuffer2 source", "vkCmdCopyBuffer2 destination");
}
void CmdCopyBuffer2KHR(DeviceState& d, VkCommandBuffer, const VkCopyBufferInfo2* info) {
    if (info) copy(d, info->srcBuffer, info->dstBuffer, "vkCmdCopyBuffer2KHR source", "vkCmdCopyBuffer2KHR destination");
}
void CmdCopyImageToBuffer(DeviceState& d, VkCommandBuffer, VkImage, VkImageLayout, VkBuffer dst, uint32_t,
                          const VkBufferImageCopy*) {
    use(d, dst, Use::kTransferWrite, "vkCmdCopyImageToBuffer destination");
}
void CmdCopyImageToBuffer2(DeviceState& d, VkCommandBuffer, const VkCopyImageToBufferInfo2* info) {
    if (info) use(d, info->dstBuffer, Use::kTransferWrite, "vkCmdCopyImageToBuffer2 destination");
}
void CmdCopyImageToBuffer2KHR(DeviceState& d, VkCommandBuffer, const VkCopyImageToBufferInfo2* info) {
    if (info) use(d, info->dstBuffer, Use::kTransferWrite, "vkCmdCopyImageToBuffer2KHR destination");
}
void CmdCopyBufferToImage(DeviceState& d, VkCommandBuffer, VkBuffer src, VkImage, VkImageLayout, uint32_t,
                          const VkBufferImageCopy*) {
    use(d, src, Use::kRead, "vkCmdCopyBufferToImage source");
}
void CmdCopyBufferToImage2(DeviceState& d, VkCommandBuffer, const VkCopyBufferToImageInfo2* info) {
    if (info) use(d, info->srcBuffer, Use::kRead, "vkCmdCopyBufferToImage2 source");
}
void CmdCopyBufferToImage2KHR(DeviceState& d, VkCommandBuffer, const VkCopyBufferToImageInfo2* info) {
    if (info) use(d, info->srcBuffer, Use::kRead, "vkCmdCopyBufferToImage2KHR source");
}
void CmdFillBuffer(DeviceState& d, VkCommandBuffer, VkBuffer dst, VkDeviceSize, VkDeviceSize, uint32_t) {
    use(d, dst, Use::kTransferWrite, "vkCmdFillBuffer destination");
}
void CmdUpdateBuffer(DeviceState& d, VkCommandBuffer, VkBuffer dst, VkDeviceSize, VkDeviceSize, const void*) {
    use(d, dst, Use::kTransferWrite, "vkCmdUpdateBuffer destination");
}
void CmdCopyQueryPoolResults(DeviceState& d, VkCommandBuffer, VkQueryPool, uint32_t, uint32_t, VkBuffer dst,
                             VkDeviceSize, VkDeviceSize, VkQueryResultFlags) {
    use(d, dst, Use::kTransferWrite, "vkCmdCopyQueryPoolResults destination");
}

// --- barriers: a buffer barrier toward transfer writes or host reads is staging's ---
void CmdPipelineBarrier(DeviceState& d, VkCommandBuffer, VkPipelineStageFlags, VkPipelineStageFlags,
                        VkDependencyFlags, uint32_t, const VkMemoryBarrier*, uint32_t count,
                        const VkBufferMemoryBarrier* barriers, uint32_t, const VkImageMemoryBarrier*) {
    buffer_barriers(d, count, barriers, "vkCmdPipelineBarrier buffer barrier");
}
void CmdPipelineBarrier2(DeviceState& d, VkCommandBuffer, const VkDependencyInfo* info) {
    dependency(d, info, "vkCmdPipelineBarrier2 buffer barrier");
}
void CmdPipelineBarrier2KHR(DeviceState& d, VkCommandBuffer, const VkDependencyInfo* info) {
    dependency(d, info, "vkCmdPipelineBarrier2KHR buffer barrier");
}
void CmdWaitEvents(DeviceState& d, VkCommandBuffer, uint32_t, const VkEvent*, VkPipelineStageFlags,
                   VkPipelineStageFlags, uint32_t, const VkMemoryBarrier*, uint32_t count,
                   const VkBufferMemoryBarrier* barriers, uint32_t, const VkImageMemoryBarrier*) {
    buffer_barriers(d, count, barriers, "vkCmdWaitEvents buffer barrier");
}
void CmdWaitEvents2(DeviceState& d, VkCommandBuffer, uint32_t count, const VkEvent*, const VkDependencyInfo* infos) {
    for (uint32_t i = 0; infos && i < count; ++i) dependency(d, &infos[i], "vkCmdWaitEvents2 buffer barrier");
}
void CmdWaitEvents2KHR(DeviceState& d, VkCommandBuffer, uint32_t count, const VkEvent*, const VkDependencyInfo* infos) {
    for (uint32_t i = 0; infos && i < count; ++i) dependency(d, &infos[i], "vkCmdWaitEvents2KHR buffer barrier");
}
void CmdSetEvent2(DeviceState& d, VkCommandBuffer, VkEvent, const VkDependencyInfo* info) {
    dependency(d, info, "vkCmdSetEvent2 buffer barrier");
}
void CmdSetEvent2KHR(DeviceState& d, VkCommandBuffer, VkEvent, const VkDependencyInfo* info) {
    dependency(d, info, "vkCmdSetEvent2KHR buffer barrier");
}

// --- descriptors: what shaders read ---
void UpdateDescriptorSets(DeviceState& d, VkDevice, uint32_t count, const VkWriteDescriptorSet* writes, uint32_t,
                          const VkCopyDescriptorSet*) {
    // Copies name no buffer: their source descriptors were written (and resolved) before.
    descriptor_writes(d, count, writes, "vkUpdateDescriptorSets");
}
void CmdPushDescriptorSetKHR(DeviceState& d, VkCommandBuffer, VkPipelineBindPoint, VkPipelineLayout, uint32_t,
                             uint32_t count, const VkWriteDescriptorSet* writes) {
    descriptor_writes(d, count, writes, "vkCmdPushDescriptorSetKHR");
}
void UpdateDescriptorSetWithTemplate(DeviceState& d, VkDevice, VkDescriptorSet, VkDescriptorUpdateTemplate t,
                                     const void* data) {
    if (ReadbackDeferral* r = deferral(d)) r->use_template_data(t, data, "vkUpdateDescriptorSetWithTemplate");
}
void UpdateDescriptorSetWithTemplateKHR(DeviceState& d, VkDevice, VkDescriptorSet, VkDescriptorUpdateTemplate t,
                                        const void* data) {
    if (ReadbackDeferral* r = deferral(d)) r->use_template_data(t, data, "vkUpdateDescriptorSetWithTemplateKHR");
}
void CmdPushDescriptorSetWithTemplateKHR(DeviceState& d, VkCommandBuffer, VkDescriptorUpdateTemplate t,
                                         VkPipelineLayout, uint32_t, const void* data) {
    if (ReadbackDeferral* r = deferral(d)) r->use_template_data(t, data, "vkCmdPushDescriptorSetWithTemplateKHR");
}

// --- views and addresses: the GPU may read through them at any time ---
void CreateBufferView(DeviceState& d, VkDevice, const VkBufferViewCreateInfo* info, const VkAllocationCallbacks*,
                      VkBufferView*) {
    if (info) keep_buffer(d, info->buffer, "vkCreateBufferView");
}
void GetBufferDeviceAddress(DeviceState& d, VkDevice, const VkBufferDeviceAddressInfo* info) {
    if (info) keep_buffer(d, info->buffer, "vkGetBufferDeviceAddress");
}
void GetBufferDeviceAddressKHR(DeviceState& d, VkDevice, const VkBufferDeviceAddressInfo* info) {
    if (info) keep_buffer(d, info->buffer, "vkGetBufferDeviceAddressKHR");
}
void GetBufferDeviceAddressEXT(DeviceState& d, VkDevice, const VkBufferDeviceAddressInfo* info) {
    if (info) keep_buffer(d, info->buffer, "vkGetBufferDeviceAddressEXT");
}
void GetBufferOpaqueCaptureAddress(DeviceState& d, VkDevice, const VkBufferDeviceAddressInfo* info) {
    if (info) keep_buffer(d, info->buffer, "vkGetBufferOpaqueCaptureAddress");
}
void GetBufferOpaqueCaptureAddressKHR(DeviceState& d, VkDevice, const VkBufferDeviceAddressInfo* info) {
    if (info) keep_buffer(d, info->buffer, "vkGetBufferOpaqueCaptureAddressKHR");
}

}  // namespace slipstream::buffer_use
