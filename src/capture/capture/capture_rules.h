// What vk.xml leaves to the spec's prose: when a pointer marked noautovalidity is really
// read. tools/gen/gen_capture.py's MEMBER_RULES and STRUCT_GUARDS name these predicates; the
// generated deep copies copy such a pointer only where its predicate holds (reading it
// elsewhere could touch freed memory: the spec says it is ignored) and store null otherwise.
#pragma once

#include <vulkan/vulkan.h>

namespace slipstream::capture::detail {

// VkWriteDescriptorSet (vkCmdPushDescriptorSetKHR): which array a descriptor type reads.
// Inline uniform blocks and acceleration structures read their pNext structure instead.
inline bool descriptor_uses_image_info(VkDescriptorType t) {
    switch (t) {
    case VK_DESCRIPTOR_TYPE_SAMPLER:
    case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
    case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
    case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
    case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
    case VK_DESCRIPTOR_TYPE_SAMPLE_WEIGHT_IMAGE_QCOM:
    case VK_DESCRIPTOR_TYPE_BLOCK_MATCH_IMAGE_QCOM:
        return true;
    default:
        return false;
    }
}

inline bool descriptor_uses_buffer_info(VkDescriptorType t) {
    switch (t) {
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
        return true;
    default:
        return false;
    }
}

inline bool descriptor_uses_texel_buffer_view(VkDescriptorType t) {
    return t == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER || t == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
}

// A descriptor type whose data these rules know where to find. A newer one (or MUTABLE_EXT,
// which no write may use) fails the copy rather than guessing.
inline bool descriptor_type_known(VkDescriptorType t) {
    switch (t) {
    case VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK:
    case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR:
    case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_NV:
        return true;
    default:
        return descriptor_uses_image_info(t) || descriptor_uses_buffer_info(t) ||
               descriptor_uses_texel_buffer_view(t);
    }
}

}  // namespace slipstream::capture::detail
