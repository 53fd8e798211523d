#include "memory/readback_evidence.h"

namespace slipstream {

bool bind_may_wait(VkBufferUsageFlags usage, VkBufferCreateFlags flags, bool plain_bind) {
    constexpr VkBufferCreateFlags kNever = VK_BUFFER_CREATE_SPARSE_BINDING_BIT | VK_BUFFER_CREATE_SPARSE_RESIDENCY_BIT |
                                           VK_BUFFER_CREATE_SPARSE_ALIASED_BIT | VK_BUFFER_CREATE_PROTECTED_BIT |
                                           VK_BUFFER_CREATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT;
    return plain_bind && (usage & VK_BUFFER_USAGE_TRANSFER_DST_BIT) && !(flags & kNever);
}

bool barrier_reveals_readback(VkAccessFlags2 dst_access) {
    // VK_ACCESS_TRANSFER_WRITE_BIT and VK_ACCESS_HOST_READ_BIT have the same values as their
    // ACCESS_2 twins, so one mask serves both barrier kinds.
    constexpr VkAccessFlags2 kStaging = VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_HOST_READ_BIT;
    return dst_access != 0 && (dst_access & ~kStaging) == 0;
}

uint32_t twin_allowed_types(uint32_t safe_targets, const std::vector<PendingBind>& pending) {
    uint32_t bits = safe_targets;
    for (const PendingBind& p : pending) bits &= p.reqs.memoryTypeBits;
    return bits;
}

bool twin_fits(const std::vector<PendingBind>& pending, VkDeviceSize allocation_size, uint32_t twin_type) {
    if (twin_type >= 32) return false;
    for (const PendingBind& p : pending) {
        if (!(p.reqs.memoryTypeBits >> twin_type & 1u)) return false;
        if (p.reqs.alignment && p.offset % p.reqs.alignment) return false;
        if (p.offset > allocation_size || p.reqs.size > allocation_size - p.offset) return false;
    }
    return true;
}

bool GpuReadSignatures::contains(const UseSignature& s) const {
    for (size_t i = 0; i < size_; ++i)
        if (items_[i] == s) return true;
    return false;
}

bool GpuReadSignatures::add(const UseSignature& s) {
    if (contains(s) || size_ == kCapacity) return false;
    items_[size_++] = s;
    return true;
}

}  // namespace slipstream
