#include "capture/resource_registry.h"

#include "capture/spirv_capabilities.h"

#include <algorithm>
#include <mutex>

namespace slipstream::capture {

namespace {
// A set with more descriptors than this is not followed (bindless tables): unknown.
constexpr uint32_t kMaxSetDescriptors = 1u << 16;

const void* find_in_chain(const void* next, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext)
        if (s->sType == type) return s;
    return nullptr;
}

bool dynamic_buffer(VkDescriptorType t) {
    return t == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC || t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
}
}  // namespace

DescriptorUse descriptor_use(VkDescriptorType type) {
    switch (type) {
    case VK_DESCRIPTOR_TYPE_SAMPLER:
    case VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK: return DescriptorUse::None;
    case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
    case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
    case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
    case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT: return DescriptorUse::Read;
    case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
    case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC: return DescriptorUse::Write;
    default: return DescriptorUse::Unknown;  // acceleration structures, mutable, vendor types
    }
}

// --- views ---

void ResourceRegistry::buffer_view_created(VkBufferView view, const VkBufferViewCreateInfo& info) {
    std::unique_lock lock(mutex_);
    const ObjectRecord::Reader objects(objects_);
    buffer_views_[view] = buffer_range(objects, info.buffer, info.offset, info.range, false);
}

void ResourceRegistry::buffer_view_destroyed(VkBufferView view) {
    std::unique_lock lock(mutex_);
    buffer_views_.erase(view);
}

void ResourceRegistry::image_view_created(VkImageView view, const VkImageViewCreateInfo& info) {
    std::unique_lock lock(mutex_);
    const ObjectRecord::Reader objects(objects_);
    image_views_[view] = image_range(objects, info.image);
}

void ResourceRegistry::image_view_destroyed(VkImageView view) {
    std::unique_lock lock(mutex_);
    image_views_.erase(view);
}

ResourceRange ResourceRegistry::buffer_range(const ObjectRecord::Reader& objects, VkBuffer buffer, VkDeviceSize offset,
                                             VkDeviceSize size, bool to_end) {
    const BufferRecord* b = objects.buffer(buffer);
    if (!b || !b->bind_plain || offset > b->size) return {};
    const uint64_t end = to_end || size == VK_WHOLE_SIZE ? b->size : std::min<uint64_t>(b->size, offset + size);
    return {b->memory, b->offset + offset, b->offset + end, true};
}

ResourceRange ResourceRegistry::image_range(const ObjectRecord::Reader& objects, VkImage image) {
    const ImageRecord* i = objects.image(image);
    if (!i || !i->bind_plain) return {};
    return {i->memory, i->offset, i->offset + i->size, true};
}

ResourceRange ResourceRegistry::image_view_range(VkImageView view) const {
    auto it = image_views_.find(view);
    return it == image_views_.end() ? ResourceRange{} : it->second;
}

ResourceRange ResourceRegistry::buffer_view_range(VkBufferView view) const {
    auto it = buffer_views_.find(view);
    return it == buffer_views_.end() ? ResourceRange{} : it->second;
}

// --- descriptors ---

const ResourceRegistry::SetLayout::Binding* ResourceRegistry::SetLayout::find(uint32_t binding) const {
    auto it = std::lower_bound(bindings.begin(), bindings.end(), binding,
                               [](const Binding& b, uint32_t n) { return b.binding < n; });
    return it != bindings.end() && it->binding == binding ? &*it : nullptr;
}

void ResourceRegistry::set_layout_created(VkDescriptorSetLayout handle, const VkDescriptorSetLayoutCreateInfo& info) {
    auto layout = std::make_shared<SetLayout>();
    layout->hidden = info.flags & (VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT |
                                   VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR |
                                   VK_DESCRIPTOR_SET_LAYOUT_CREATE_HOST_ONLY_POOL_BIT_EXT |
                                   VK_DESCRIPTOR_SET_LAYOUT_CREATE_DESCRIPTOR_BUFFER_BIT_EXT);
    for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
        if (s->sType != VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO) {
            layout->hidden = true;  // mutable descriptor types, and anything newer
            continue;
        }
        auto* flags = reinterpret_cast<const VkDescriptorSetLayoutBindingFlagsCreateInfo*>(s);
        for (uint32_t i = 0; i < flags->bindingCount; ++i)
            if (flags->pBindingFlags && flags->pBindingFlags[i] != 0) layout->hidden = true;
    }
    for (uint32_t i = 0; i < info.bindingCount; ++i) {
        const VkDescriptorSetLayoutBinding& b = info.pBindings[i];
        const uint32_t count = b.descriptorType == VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK ? 0 : b.descriptorCount;
        layout->bindings.push_back({b.binding, b.descriptorType, count, 0});
    }
    std::sort(layout->bindings.begin(), layout->bindings.end(),
              [](const SetLayout::Binding& a, const SetLayout::Binding& b) { return a.binding < b.binding; });
    uint64_t total = 0;
    for (SetLayout::Binding& b : layout->bindings) {
        b.first = uint32_t(std::min<uint64_t>(total, kMaxSetDescriptors));
        total += b.count;
    }
    layout->total = total > kMaxSetDescriptors ? kMaxSetDescriptors + 1 : uint32_t(total);
    std::unique_lock lock(mutex_);
    set_layouts_[handle] = std::move(layout);
}

void ResourceRegistry::set_layout_destroyed(VkDescriptorSetLayout layout) {
    std::unique_lock lock(mutex_);
    set_layouts_.erase(layout);  // its sets keep their reference
}

void ResourceRegistry::sets_allocated(const VkDescriptorSetAllocateInfo& info, const VkDescriptorSet* sets) {
    std::unique_lock lock(mutex_);
    const uint64_t now = epoch_.load(std::memory_order_relaxed);
    for (uint32_t i = 0; i < info.descriptorSetCount; ++i) {
        Set& s = sets_[sets[i]];
        s = {};
        s.pool = info.descriptorPool;
        s.updated = now;
        auto it = set_layouts_.find(info.pSetLayouts[i]);
        if (it == set_layouts_.end() || it->second->total > kMaxSetDescriptors) {
            s.unknown = true;
            continue;
        }
        s.layout = it->second;
        s.descriptors.resize(s.layout->total);
    }
}

void ResourceRegistry::sets_freed(uint32_t count, const VkDescriptorSet* sets) {
    std::unique_lock lock(mutex_);
    for (uint32_t i = 0; i < count; ++i) sets_.erase(sets[i]);
}

void ResourceRegistry::pool_emptied(VkDescriptorPool pool) {
    std::unique_lock lock(mutex_);
    for (auto it = sets_.begin(); it != sets_.end();) {
        if (it->second.pool == pool) it = sets_.erase(it);
        else ++it;
    }
}

template <typename Fill>
bool ResourceRegistry::for_elements(const SetLayout& layout, uint32_t binding, uint32_t element, uint32_t count,
                                    Fill fill) {
    const SetLayout::Binding* b = layout.find(binding);
    if (!b) return false;
    const SetLayout::Binding* last = layout.bindings.data() + layout.bindings.size();
    for (uint32_t k = 0; k < count;) {
        // Past a binding's end the update goes on at element 0 of the next binding.
        while (b != last && element >= b->count) {
            element -= b->count;
            ++b;
        }
        if (b == last) return false;
        fill(b->first + element, k, b->type);
        ++element;
        ++k;
    }
    return true;
}

Descriptor ResourceRegistry::resolve(const ObjectRecord::Reader& objects, VkDescriptorType type,
                                     const VkDescriptorImageInfo* image, const VkDescriptorBufferInfo* buffer,
                                     const VkBufferView* texel) const {
    const DescriptorUse use = descriptor_use(type);
    if (use == DescriptorUse::None) return {};
    if (use == DescriptorUse::Unknown) return {{}, DescriptorUse::Unknown};
    switch (type) {
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
        if (!buffer) return {{}, DescriptorUse::Unknown};
        if (!buffer->buffer) return {};  // a null descriptor (robustness2) touches nothing
        // A dynamic offset moves the range within the buffer: up to its end.
        return {buffer_range(objects, buffer->buffer, buffer->offset, buffer->range, dynamic_buffer(type)), use};
    case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
    case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
        if (!texel) return {{}, DescriptorUse::Unknown};
        if (!*texel) return {};
        return {buffer_view_range(*texel), use};
    default:
        if (!image) return {{}, DescriptorUse::Unknown};
        if (!image->imageView) return {};
        return {image_view_range(image->imageView), use};
    }
}

void ResourceRegistry::sets_updated(uint32_t write_count, const VkWriteDescriptorSet* writes, uint32_t copy_count,
                                    const VkCopyDescriptorSet* copies) {
    std::unique_lock lock(mutex_);
    const ObjectRecord::Reader objects(objects_);
    const uint64_t now = epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
    for (uint32_t i = 0; i < write_count; ++i) {
        const VkWriteDescriptorSet& w = writes[i];
        auto it = sets_.find(w.dstSet);
        if (it == sets_.end()) continue;
        Set& s = it->second;
        s.updated = now;
        if (s.unknown || w.descriptorType == VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK) continue;
        const bool ok = for_elements(*s.layout, w.dstBinding, w.dstArrayElement, w.descriptorCount,
                                     [&](uint32_t index, uint32_t k, VkDescriptorType) {
                                         s.descriptors[index] = resolve(
                                             objects, w.descriptorType, w.pImageInfo ? w.pImageInfo + k : nullptr,
                                             w.pBufferInfo ? w.pBufferInfo + k : nullptr,
                                             w.pTexelBufferView ? w.pTexelBufferView + k : nullptr);
                                     });
        if (!ok) s.unknown = true;
    }
    for (uint32_t i = 0; i < copy_count; ++i) {
        const VkCopyDescriptorSet& c = copies[i];
        auto dst = sets_.find(c.dstSet);
        if (dst == sets_.end()) continue;
        Set& d = dst->second;
        d.updated = now;
        auto src = sets_.find(c.srcSet);
        if (d.unknown) continue;
        if (src == sets_.end() || src->second.unknown) {
            d.unknown = true;
            continue;
        }
        const Set& s = src->second;
        if (const SetLayout::Binding* b = s.layout->find(c.srcBinding);
            b && b->type == VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK)
            continue;  // bytes, no memory
        std::vector<uint32_t> from;
        const bool ok =
            for_elements(*s.layout, c.srcBinding, c.srcArrayElement, c.descriptorCount,
                         [&](uint32_t index, uint32_t, VkDescriptorType) { from.push_back(index); }) &&
            for_elements(*d.layout, c.dstBinding, c.dstArrayElement, c.descriptorCount,
                         [&](uint32_t index, uint32_t k, VkDescriptorType) { d.descriptors[index] = s.descriptors[from[k]]; });
        if (!ok) d.unknown = true;
    }
}

void ResourceRegistry::set_updated_with_template(VkDescriptorSet set, VkDescriptorUpdateTemplate t, const void* data) {
    const std::shared_ptr<const UpdateTemplateRecord> entries = objects_.update_template(t);
    std::unique_lock lock(mutex_);
    const ObjectRecord::Reader objects(objects_);
    const uint64_t now = epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
    auto it = sets_.find(set);
    if (it == sets_.end()) return;
    Set& s = it->second;
    s.updated = now;
    // A push template is not followed.
    if (!entries || entries->type != VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET || !data) s.unknown = true;
    if (s.unknown) return;
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (const VkDescriptorUpdateTemplateEntry& e : entries->entries) {
        if (e.descriptorType == VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK) continue;
        const bool ok = for_elements(*s.layout, e.dstBinding, e.dstArrayElement, e.descriptorCount,
                                     [&](uint32_t index, uint32_t k, VkDescriptorType) {
                                         const void* p = bytes + e.offset + size_t(k) * e.stride;
                                         s.descriptors[index] =
                                             resolve(objects, e.descriptorType, static_cast<const VkDescriptorImageInfo*>(p),
                                                     static_cast<const VkDescriptorBufferInfo*>(p),
                                                     static_cast<const VkBufferView*>(p));
                                     });
        if (!ok) s.unknown = true;
    }
}

// --- pipelines ---

void ResourceRegistry::shader_module_created(VkShaderModule module, const VkShaderModuleCreateInfo& info) {
    const bool reaches = spirv_reaches_any_memory(info.pCode, info.codeSize);
    std::unique_lock lock(mutex_);
    modules_[module] = reaches;
}

void ResourceRegistry::shader_module_destroyed(VkShaderModule module) {
    std::unique_lock lock(mutex_);
    modules_.erase(module);
}

void ResourceRegistry::compute_pipelines_created(uint32_t count, const VkComputePipelineCreateInfo* infos,
                                                 const VkPipeline* pipelines) {
    std::unique_lock lock(mutex_);
    for (uint32_t i = 0; i < count; ++i) {
        if (!pipelines[i]) continue;
        const VkPipelineShaderStageCreateInfo& stage = infos[i].stage;
        bool bounded = false;
        if (stage.module) {
            auto it = modules_.find(stage.module);
            bounded = it != modules_.end() && !it->second;
        } else if (auto* inline_module = static_cast<const VkShaderModuleCreateInfo*>(
                       find_in_chain(stage.pNext, VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO))) {
            bounded = !spirv_reaches_any_memory(inline_module->pCode, inline_module->codeSize);
        }  // else a module identifier: its code is not known
        pipelines_[pipelines[i]] = bounded;
    }
}

void ResourceRegistry::pipeline_destroyed(VkPipeline pipeline) {
    std::unique_lock lock(mutex_);
    pipelines_.erase(pipeline);
}

// --- lookups ---

ResourceRange ResourceRegistry::Reader::buffer(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) const {
    return buffer_range(objects_, buffer, offset, size, false);
}

ResourceRange ResourceRegistry::Reader::image(VkImage image) const { return image_range(objects_, image); }

namespace {
bool add_descriptor(const Descriptor& d, Footprint& out) {
    if (d.use == DescriptorUse::None) return true;
    if (d.use == DescriptorUse::Unknown || !d.range.known) return false;
    out.add(d.range.memory, d.range.begin, d.range.end, d.use == DescriptorUse::Write);
    return true;
}
}  // namespace

bool ResourceRegistry::Reader::add_set(VkDescriptorSet set, uint64_t epoch, bool trust, Footprint& out) const {
    auto it = r_.sets_.find(set);
    if (it == r_.sets_.end() || it->second.unknown) return false;
    const Set& s = it->second;
    if (!trust && (s.layout->hidden || s.updated > epoch)) return false;
    for (const Descriptor& d : s.descriptors)
        if (!add_descriptor(d, out)) return false;
    return true;
}

bool ResourceRegistry::Reader::add_write(const VkWriteDescriptorSet& w, Footprint& out) const {
    if (w.descriptorType == VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK) return true;
    for (uint32_t k = 0; k < w.descriptorCount; ++k) {
        const Descriptor d = r_.resolve(objects_, w.descriptorType, w.pImageInfo ? w.pImageInfo + k : nullptr,
                                        w.pBufferInfo ? w.pBufferInfo + k : nullptr,
                                        w.pTexelBufferView ? w.pTexelBufferView + k : nullptr);
        if (!add_descriptor(d, out)) return false;
    }
    return true;
}

bool ResourceRegistry::Reader::pipeline_bounded(VkPipeline pipeline, bool trust) const {
    auto it = r_.pipelines_.find(pipeline);
    return it != r_.pipelines_.end() && (it->second || trust);
}

}  // namespace slipstream::capture
