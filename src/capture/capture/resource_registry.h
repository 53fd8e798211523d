// What barrier elision needs to know of a device's objects to bound a capture's footprint
// (capture_footprint.h), beyond the device's record of buffers, images, imports and update
// templates (state/object_record.h), which it reads: what each descriptor set holds (resolved to memory ranges when it is written: the spec
// requires the resources bound then), which set layouts hide their contents
// (update-after-bind, partially bound, variable count), and which pipelines' shaders can
// reach memory through addresses. One per device, while VK_SLIPSTREAM_ELIDE_BARRIERS is on;
// layer/ feeds it from the view, descriptor and pipeline hooks.
//
// Anything it cannot bound is "unknown" (Range::known false), never guessed: memory imported
// from outside (two imports can alias), sparse resources, binds with a pNext structure
// (device groups, planes, swapchains), descriptor types without a buffer or image.
//
// Thread safety: one reader-writer lock; lookups (a batch's first replay) share it. The object
// record's lock is taken inside it, never around it.
#pragma once

#include "capture/capture_footprint.h"
#include "state/object_record.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace slipstream::capture {

// A resolved resource: bytes of a memory object, or unknown.
struct ResourceRange {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t begin = 0, end = 0;
    bool known = false;
};

// What one descriptor lets a shader touch.
enum class DescriptorUse : uint8_t { None, Read, Write, Unknown };
struct Descriptor {
    ResourceRange range;
    DescriptorUse use = DescriptorUse::None;
};

// Pure: how a descriptor of this type uses its resource (storage: may write; uniform, sampled,
// input attachment: reads; sampler, inline uniform block: no memory; anything else: unknown).
DescriptorUse descriptor_use(VkDescriptorType type);

class ResourceRegistry {
public:
    explicit ResourceRegistry(const ObjectRecord& objects) : objects_(objects) {}

    // --- views: resolved to memory ranges when created (their resource is bound by then) ---
    void buffer_view_created(VkBufferView view, const VkBufferViewCreateInfo& info);
    void buffer_view_destroyed(VkBufferView view);
    void image_view_created(VkImageView view, const VkImageViewCreateInfo& info);
    void image_view_destroyed(VkImageView view);

    // --- descriptors ---
    void set_layout_created(VkDescriptorSetLayout layout, const VkDescriptorSetLayoutCreateInfo& info);
    void set_layout_destroyed(VkDescriptorSetLayout layout);
    void sets_allocated(const VkDescriptorSetAllocateInfo& info, const VkDescriptorSet* sets);
    void sets_freed(uint32_t count, const VkDescriptorSet* sets);
    // vkResetDescriptorPool and vkDestroyDescriptorPool: its sets are gone.
    void pool_emptied(VkDescriptorPool pool);
    void sets_updated(uint32_t write_count, const VkWriteDescriptorSet* writes, uint32_t copy_count,
                      const VkCopyDescriptorSet* copies);
    void set_updated_with_template(VkDescriptorSet set, VkDescriptorUpdateTemplate t, const void* data);

    // --- pipelines ---
    void shader_module_created(VkShaderModule module, const VkShaderModuleCreateInfo& info);
    void shader_module_destroyed(VkShaderModule module);
    void compute_pipelines_created(uint32_t count, const VkComputePipelineCreateInfo* infos, const VkPipeline* pipelines);
    void pipeline_destroyed(VkPipeline pipeline);

    // Descriptor set updates so far: a set updated after a command buffer began may have
    // changed after the command buffer bound it.
    uint64_t update_epoch() const { return epoch_.load(std::memory_order_acquire); }

    // Lookups for footprint_of (footprint_walk.h), under the shared lock a Reader holds.
    class Reader {
    public:
        explicit Reader(const ResourceRegistry& r) : r_(r), lock_(r.mutex_), objects_(r.objects_) {}
        // [offset, offset + size) of the buffer (VK_WHOLE_SIZE: to its end).
        ResourceRange buffer(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) const;
        ResourceRange image(VkImage image) const;
        // Adds what the set's descriptors may touch; false when the set is unknown: not seen,
        // its layout hides updates (update-after-bind, partially bound, variable count), or
        // it was updated after `epoch`. `trust`: test-only, the set's contents as seen anyway.
        bool add_set(VkDescriptorSet set, uint64_t epoch, bool trust, Footprint& out) const;
        // Adds what a push descriptor write may touch; false when unknown.
        bool add_write(const VkWriteDescriptorSet& write, Footprint& out) const;
        // Whether the pipeline is a compute pipeline whose shader reaches only descriptors
        // (`trust`: test-only, any compute pipeline it saw created).
        bool pipeline_bounded(VkPipeline pipeline, bool trust) const;

    private:
        const ResourceRegistry& r_;
        std::shared_lock<std::shared_mutex> lock_;
        ObjectRecord::Reader objects_;  // after lock_: the record's lock is the inner one
    };

private:
    struct SetLayout {
        struct Binding {
            uint32_t binding = 0;
            VkDescriptorType type{};
            uint32_t count = 0;  // descriptors held (0 for inline uniform blocks: bytes, no memory)
            uint32_t first = 0;  // index of its first descriptor in the set's array
        };
        std::vector<Binding> bindings;  // by binding number
        uint32_t total = 0;
        bool hidden = false;  // update-after-bind, partially bound, variable count, push
        const Binding* find(uint32_t binding) const;
    };
    struct Set {
        std::shared_ptr<const SetLayout> layout;
        VkDescriptorPool pool = VK_NULL_HANDLE;
        std::vector<Descriptor> descriptors;
        uint64_t updated = 0;   // the epoch of its last update
        bool unknown = false;   // a write it could not follow
    };

    // With the lock held (and the record's, through `objects`).
    static ResourceRange buffer_range(const ObjectRecord::Reader& objects, VkBuffer buffer, VkDeviceSize offset,
                                      VkDeviceSize size, bool to_end);
    static ResourceRange image_range(const ObjectRecord::Reader& objects, VkImage image);
    ResourceRange image_view_range(VkImageView view) const;
    ResourceRange buffer_view_range(VkBufferView view) const;
    // The descriptor an element of this type gets from a write's or template's data.
    Descriptor resolve(const ObjectRecord::Reader& objects, VkDescriptorType type, const VkDescriptorImageInfo* image,
                       const VkDescriptorBufferInfo* buffer, const VkBufferView* texel) const;
    // Calls `fill(i)` for `count` consecutive elements from (binding, element), across
    // bindings as updates do; false when the layout has no such elements.
    template <typename Fill>
    static bool for_elements(const SetLayout& layout, uint32_t binding, uint32_t element, uint32_t count, Fill fill);

    const ObjectRecord& objects_;
    mutable std::shared_mutex mutex_;
    std::atomic<uint64_t> epoch_{0};
    std::unordered_map<VkBufferView, ResourceRange> buffer_views_;
    std::unordered_map<VkImageView, ResourceRange> image_views_;
    std::unordered_map<VkDescriptorSetLayout, std::shared_ptr<const SetLayout>> set_layouts_;
    std::unordered_map<VkDescriptorSet, Set> sets_;
    std::unordered_map<VkShaderModule, bool> modules_;  // -> reaches any memory
    std::unordered_map<VkPipeline, bool> pipelines_;    // -> bounded (compute, no addresses)
};

}  // namespace slipstream::capture
