#include "state/object_record.h"

#include <mutex>

namespace slipstream {

namespace {
// Allocation structures that do not make the memory another allocation's too: anything else
// in the chain (an import of a file descriptor, host pointer, handle...) may alias.
bool import_structure(VkStructureType type) {
    switch (type) {
    case VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO:
    case VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO:
    case VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO:
    case VK_STRUCTURE_TYPE_MEMORY_PRIORITY_ALLOCATE_INFO_EXT:
    case VK_STRUCTURE_TYPE_MEMORY_OPAQUE_CAPTURE_ADDRESS_ALLOCATE_INFO: return false;
    default: return true;
    }
}

bool external_buffer(const VkBufferCreateInfo& info) {
    for (auto* p = static_cast<const VkBaseInStructure*>(info.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO ||
            p->sType == VK_STRUCTURE_TYPE_BUFFER_OPAQUE_CAPTURE_ADDRESS_CREATE_INFO)
            return true;
    return false;
}
}  // namespace

void ObjectRecord::memory_allocated(VkDeviceMemory memory, const VkMemoryAllocateInfo& info) {
    if (!resources_) return;
    for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
        if (!import_structure(s->sType)) continue;
        std::unique_lock lock(mutex_);
        if (imports_.insert(memory).second) import_count_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
}

void ObjectRecord::memory_freed(VkDeviceMemory memory) {
    if (import_count_.load(std::memory_order_relaxed) == 0) return;
    std::unique_lock lock(mutex_);
    if (imports_.erase(memory)) import_count_.fetch_sub(1, std::memory_order_relaxed);
}

bool ObjectRecord::imported(VkDeviceMemory memory) const {
    return import_count_.load(std::memory_order_relaxed) != 0 && imports_.count(memory) != 0;
}

void ObjectRecord::buffer_created(VkBuffer buffer, const VkBufferCreateInfo& info) {
    if (!resources_) return;
    BufferRecord b;
    b.size = info.size;
    b.usage = info.usage;
    b.flags = info.flags;
    b.external = external_buffer(info);
    std::unique_lock lock(mutex_);
    buffers_[buffer] = b;
}

void ObjectRecord::buffer_bound(VkBuffer buffer, VkDeviceMemory memory, VkDeviceSize offset, bool plain) {
    if (!resources_) return;
    std::unique_lock lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    BufferRecord& b = it->second;
    b.bound = true;
    b.memory = memory;
    b.offset = offset;
    b.bind_plain = plain && memory && !b.sparse() && !imported(memory);
}

void ObjectRecord::buffer_destroyed(VkBuffer buffer) {
    if (!resources_) return;
    std::unique_lock lock(mutex_);
    buffers_.erase(buffer);
}

std::optional<BufferRecord> ObjectRecord::buffer(VkBuffer buffer) const {
    std::shared_lock lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return std::nullopt;
    return it->second;
}

void ObjectRecord::image_created(VkImage image, const VkImageCreateInfo& info) {
    if (!resources_) return;
    ImageRecord i;
    i.usage = info.usage;
    i.flags = info.flags;
    i.tiling = info.tiling;
    std::unique_lock lock(mutex_);
    images_[image] = i;
}

void ObjectRecord::image_bound(VkImage image, VkDeviceMemory memory, VkDeviceSize offset, VkDeviceSize size,
                               bool plain) {
    if (!resources_) return;
    std::unique_lock lock(mutex_);
    auto it = images_.find(image);
    if (it == images_.end()) return;
    ImageRecord& i = it->second;
    i.bound = true;
    i.memory = memory;
    i.offset = offset;
    i.size = size;
    i.bind_plain = plain && memory && !i.sparse() && !imported(memory);
}

void ObjectRecord::image_destroyed(VkImage image) {
    if (!resources_) return;
    std::unique_lock lock(mutex_);
    images_.erase(image);
}

std::optional<ImageRecord> ObjectRecord::image(VkImage image) const {
    std::shared_lock lock(mutex_);
    auto it = images_.find(image);
    if (it == images_.end()) return std::nullopt;
    return it->second;
}

void ObjectRecord::semaphore_created(VkSemaphore semaphore, const VkSemaphoreCreateInfo& info) {
    SemaphoreRecord r;
    for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)
            r.timeline = reinterpret_cast<const VkSemaphoreTypeCreateInfo*>(s)->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE;
        else if (s->sType == VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO)
            r.shared = true;
    }
    std::unique_lock lock(mutex_);
    semaphores_[semaphore] = r;
}

void ObjectRecord::semaphore_shared(VkSemaphore semaphore) {
    std::unique_lock lock(mutex_);
    if (auto it = semaphores_.find(semaphore); it != semaphores_.end()) it->second.shared = true;
}

void ObjectRecord::semaphore_destroyed(VkSemaphore semaphore) {
    std::unique_lock lock(mutex_);
    semaphores_.erase(semaphore);
}

std::optional<SemaphoreRecord> ObjectRecord::semaphore(VkSemaphore semaphore) const {
    std::shared_lock lock(mutex_);
    auto it = semaphores_.find(semaphore);
    if (it == semaphores_.end()) return std::nullopt;
    return it->second;
}

void ObjectRecord::template_created(VkDescriptorUpdateTemplate t, const VkDescriptorUpdateTemplateCreateInfo& info) {
    if (!resources_) return;
    auto record = std::make_shared<UpdateTemplateRecord>();
    record->type = info.templateType;
    record->entries.assign(info.pDescriptorUpdateEntries, info.pDescriptorUpdateEntries + info.descriptorUpdateEntryCount);
    std::unique_lock lock(mutex_);
    templates_[t] = std::move(record);
}

void ObjectRecord::template_destroyed(VkDescriptorUpdateTemplate t) {
    std::unique_lock lock(mutex_);
    templates_.erase(t);
}

std::shared_ptr<const UpdateTemplateRecord> ObjectRecord::update_template(VkDescriptorUpdateTemplate t) const {
    std::shared_lock lock(mutex_);
    auto it = templates_.find(t);
    return it == templates_.end() ? nullptr : it->second;
}

const BufferRecord* ObjectRecord::Reader::buffer(VkBuffer buffer) const {
    auto it = r_.buffers_.find(buffer);
    return it == r_.buffers_.end() ? nullptr : &it->second;
}

const ImageRecord* ObjectRecord::Reader::image(VkImage image) const {
    auto it = r_.images_.find(image);
    return it == r_.images_.end() ? nullptr : &it->second;
}

}  // namespace slipstream
