// One record per device of the resources features look at: how each buffer and image was
// created and where the application bound it, which allocations are imports, the entries of
// descriptor update templates, and which semaphores are timelines no one outside shares. The create, bind, allocate and destroy hooks report each
// event here once; cached readback (src/memory) and barrier elision (src/capture) read it and
// keep only their own decisions (readback's pending binds and twins, elision's descriptor sets).
//
// A bind is recorded as the application asked it (its memory and offset) even when cached
// readback holds the bind back or moves it into a twin: every resource bound to an allocation
// follows it, so overlaps are still seen.
//
// Thread safety: one reader-writer lock. Lookups copy what they need out, or hold a Reader.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace slipstream {

struct BufferRecord {
    VkDeviceSize size = 0;
    VkBufferUsageFlags usage = 0;
    VkBufferCreateFlags flags = 0;
    bool external = false;  // shares memory outside this device (external memory, capture address)
    bool bound = false;
    // Bound by a bind without a pNext structure into an allocation that is not an import (an
    // import may alias another), and not sparse: its bytes are [offset, offset + size) of memory.
    bool bind_plain = false;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;

    bool sparse() const {
        return flags & (VK_BUFFER_CREATE_SPARSE_BINDING_BIT | VK_BUFFER_CREATE_SPARSE_RESIDENCY_BIT |
                        VK_BUFFER_CREATE_SPARSE_ALIASED_BIT);
    }
};

struct ImageRecord {
    VkImageUsageFlags usage = 0;
    VkImageCreateFlags flags = 0;
    VkImageTiling tiling = VK_IMAGE_TILING_OPTIMAL;
    bool bound = false;
    bool bind_plain = false;  // as for buffers; disjoint images and swapchain binds are not plain
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize offset = 0, size = 0;

    bool sparse() const {
        return flags & (VK_IMAGE_CREATE_SPARSE_BINDING_BIT | VK_IMAGE_CREATE_SPARSE_RESIDENCY_BIT |
                        VK_IMAGE_CREATE_SPARSE_ALIASED_BIT | VK_IMAGE_CREATE_DISJOINT_BIT);
    }
};

// A semaphore as created: fusion carries the waits and signals of timeline semaphores that no
// one outside the device shares (submit/semaphore_carry.h).
struct SemaphoreRecord {
    bool timeline = false;
    bool shared = false;  // exportable at creation, exported, or imported into
};

// A descriptor update template as created: where each entry's descriptors sit in the opaque
// data of vkUpdateDescriptorSetWithTemplate and vkCmdPushDescriptorSetWithTemplateKHR.
struct UpdateTemplateRecord {
    VkDescriptorUpdateTemplateType type = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    std::vector<VkDescriptorUpdateTemplateEntry> entries;
};

class ObjectRecord {
public:
    // `resources`: follow buffers, images, imports and templates (readback or barrier elision
    // reads them); false: semaphore kinds only (fusion alone), the rest is not recorded.
    explicit ObjectRecord(bool resources = true) : resources_(resources) {}

    void memory_allocated(VkDeviceMemory memory, const VkMemoryAllocateInfo& info);
    void memory_freed(VkDeviceMemory memory);

    void buffer_created(VkBuffer buffer, const VkBufferCreateInfo& info);
    // `plain`: the bind had no pNext structure.
    void buffer_bound(VkBuffer buffer, VkDeviceMemory memory, VkDeviceSize offset, bool plain);
    void buffer_destroyed(VkBuffer buffer);
    std::optional<BufferRecord> buffer(VkBuffer buffer) const;

    void image_created(VkImage image, const VkImageCreateInfo& info);
    // `size`: the image's memory requirements (0 where `plain` is false).
    void image_bound(VkImage image, VkDeviceMemory memory, VkDeviceSize offset, VkDeviceSize size, bool plain);
    void image_destroyed(VkImage image);
    std::optional<ImageRecord> image(VkImage image) const;

    void semaphore_created(VkSemaphore semaphore, const VkSemaphoreCreateInfo& info);
    void semaphore_shared(VkSemaphore semaphore);  // exported or imported into
    void semaphore_destroyed(VkSemaphore semaphore);
    std::optional<SemaphoreRecord> semaphore(VkSemaphore semaphore) const;

    void template_created(VkDescriptorUpdateTemplate t, const VkDescriptorUpdateTemplateCreateInfo& info);
    void template_destroyed(VkDescriptorUpdateTemplate t);
    std::shared_ptr<const UpdateTemplateRecord> update_template(VkDescriptorUpdateTemplate t) const;

    // Several lookups under one shared lock (footprints, descriptor writes).
    class Reader {
    public:
        explicit Reader(const ObjectRecord& r) : r_(r), lock_(r.mutex_) {}
        const BufferRecord* buffer(VkBuffer buffer) const;
        const ImageRecord* image(VkImage image) const;

    private:
        const ObjectRecord& r_;
        std::shared_lock<std::shared_mutex> lock_;
    };

private:
    bool imported(VkDeviceMemory memory) const;  // with the lock held

    const bool resources_;
    mutable std::shared_mutex mutex_;
    // Imports are rare: while there are none, allocations and frees take no lock.
    std::atomic<uint32_t> import_count_{0};
    std::unordered_set<VkDeviceMemory> imports_;
    std::unordered_map<VkBuffer, BufferRecord> buffers_;
    std::unordered_map<VkImage, ImageRecord> images_;
    std::unordered_map<VkDescriptorUpdateTemplate, std::shared_ptr<const UpdateTemplateRecord>> templates_;
    std::unordered_map<VkSemaphore, SemaphoreRecord> semaphores_;
};

}  // namespace slipstream
