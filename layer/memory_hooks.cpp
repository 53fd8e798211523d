// Buffers, images, memory requirements, allocation and binding. Each event goes once into the
// device's object record (state/object_record.h), which cached readback and barrier elision read;
// the readback tracker (src/memory/memory/readback_tracker.h) is told what it acts on.
#include "hooks.h"
#include "state/object_record.h"
#include "state/object_state.h"
#include "memory/readback_tracker.h"
#include "objects/cached_memory.h"
#include "submit/fusion.h"

#include <vector>

namespace slipstream::hooks {

VKAPI_ATTR VkResult VKAPI_CALL CreateBuffer(VkDevice device, const VkBufferCreateInfo* info,
                                            const VkAllocationCallbacks* allocator, VkBuffer* buffer) {
    DeviceState* d = find_device(device);
    VkResult r = d->dispatch.CreateBuffer(device, info, allocator, buffer);
    if (r != VK_SUCCESS) return r;
    if (d->record) d->record->buffer_created(*buffer, *info);
    if (d->readback) d->readback->buffer_created(*info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyBuffer(VkDevice device, VkBuffer buffer, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (buffer) submit::flush_before_destroy(*d);
    if (buffer) submit::settle_armed(*d);  // an armed replay may name it
    if (buffer && d->readback) d->readback->buffer_destroyed(buffer);
    if (buffer && d->record) d->record->buffer_destroyed(buffer);
    d->dispatch.DestroyBuffer(device, buffer, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateImage(VkDevice device, const VkImageCreateInfo* info,
                                           const VkAllocationCallbacks* allocator, VkImage* image) {
    DeviceState* d = find_device(device);
    VkResult r = d->dispatch.CreateImage(device, info, allocator, image);
    if (r != VK_SUCCESS) return r;
    if (d->record) d->record->image_created(*image, *info);
    if (d->readback) d->readback->image_created(*info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyImage(VkDevice device, VkImage image, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (image) submit::flush_before_destroy(*d);
    if (image) submit::settle_armed(*d);  // an armed replay may name it
    if (image && d->record) d->record->image_destroyed(image);
    d->dispatch.DestroyImage(device, image, allocator);
}

VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements(VkDevice device, VkBuffer buffer, VkMemoryRequirements* reqs) {
    DeviceState* d = find_device(device);
    d->dispatch.GetBufferMemoryRequirements(device, buffer, reqs);
    if (d->readback) d->readback->buffer_requirements(buffer, nullptr, *reqs);
}

namespace {
template <typename Next, typename Info>
void buffer_requirements2(VkDevice device, const Info* info, VkMemoryRequirements2* reqs, Next next) {
    DeviceState* d = find_device(device);
    (d->dispatch.*next)(device, info, reqs);
    if (!d->readback) return;
    if constexpr (std::is_same_v<Info, VkBufferMemoryRequirementsInfo2>)
        d->readback->buffer_requirements(info->buffer, nullptr, reqs->memoryRequirements);
    else
        d->readback->buffer_requirements(VK_NULL_HANDLE, info->pCreateInfo, reqs->memoryRequirements);
}

template <typename Next, typename Info, typename... Rest>
void image_requirements(VkDevice device, const Info* info, Next next, Rest... rest) {
    DeviceState* d = find_device(device);
    (d->dispatch.*next)(device, info, rest...);
    if (d->readback) d->readback->other_requirements();
}
}  // namespace

VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements2(VkDevice device, const VkBufferMemoryRequirementsInfo2* info,
                                                        VkMemoryRequirements2* reqs) {
    buffer_requirements2(device, info, reqs, &VkLayerDispatchTable::GetBufferMemoryRequirements2);
}
VKAPI_ATTR void VKAPI_CALL GetBufferMemoryRequirements2KHR(VkDevice device, const VkBufferMemoryRequirementsInfo2* info,
                                                           VkMemoryRequirements2* reqs) {
    buffer_requirements2(device, info, reqs, &VkLayerDispatchTable::GetBufferMemoryRequirements2KHR);
}
VKAPI_ATTR void VKAPI_CALL GetDeviceBufferMemoryRequirements(VkDevice device, const VkDeviceBufferMemoryRequirements* info,
                                                             VkMemoryRequirements2* reqs) {
    buffer_requirements2(device, info, reqs, &VkLayerDispatchTable::GetDeviceBufferMemoryRequirements);
}
VKAPI_ATTR void VKAPI_CALL GetDeviceBufferMemoryRequirementsKHR(VkDevice device,
                                                                const VkDeviceBufferMemoryRequirements* info,
                                                                VkMemoryRequirements2* reqs) {
    buffer_requirements2(device, info, reqs, &VkLayerDispatchTable::GetDeviceBufferMemoryRequirementsKHR);
}

VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements(VkDevice device, VkImage image, VkMemoryRequirements* reqs) {
    DeviceState* d = find_device(device);
    d->dispatch.GetImageMemoryRequirements(device, image, reqs);
    if (d->readback) d->readback->other_requirements();
}
VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements2(VkDevice device, const VkImageMemoryRequirementsInfo2* info,
                                                       VkMemoryRequirements2* reqs) {
    image_requirements(device, info, &VkLayerDispatchTable::GetImageMemoryRequirements2, reqs);
}
VKAPI_ATTR void VKAPI_CALL GetImageMemoryRequirements2KHR(VkDevice device, const VkImageMemoryRequirementsInfo2* info,
                                                          VkMemoryRequirements2* reqs) {
    image_requirements(device, info, &VkLayerDispatchTable::GetImageMemoryRequirements2KHR, reqs);
}
VKAPI_ATTR void VKAPI_CALL GetDeviceImageMemoryRequirements(VkDevice device, const VkDeviceImageMemoryRequirements* info,
                                                            VkMemoryRequirements2* reqs) {
    image_requirements(device, info, &VkLayerDispatchTable::GetDeviceImageMemoryRequirements, reqs);
}
VKAPI_ATTR void VKAPI_CALL GetDeviceImageMemoryRequirementsKHR(VkDevice device,
                                                               const VkDeviceImageMemoryRequirements* info,
                                                               VkMemoryRequirements2* reqs) {
    image_requirements(device, info, &VkLayerDispatchTable::GetDeviceImageMemoryRequirementsKHR, reqs);
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateMemory(VkDevice device, const VkMemoryAllocateInfo* info,
                                              const VkAllocationCallbacks* allocator, VkDeviceMemory* memory) {
    DeviceState* d = find_device(device);
    const VkResult r = d->readback ? d->readback->allocate(info, allocator, memory)
                                   : objects::allocate_memory(*d, info, allocator, memory);
    if (r == VK_SUCCESS && d->record) d->record->memory_allocated(*memory, *info);
    return r;
}

VKAPI_ATTR void VKAPI_CALL FreeMemory(VkDevice device, VkDeviceMemory memory, const VkAllocationCallbacks* allocator) {
    DeviceState* d = find_device(device);
    if (memory) submit::settle_armed(*d);
    if (memory && d->readback) d->readback->freed(memory);
    if (memory && d->record) d->record->memory_freed(memory);
    objects::free_memory(*d, memory, allocator);
}

namespace {
ReadbackDeferral* deferral(DeviceState* d) { return d->readback ? d->readback->deferral() : nullptr; }

// The record's view of binds: the application's memory and offsets (a bind cached readback
// holds back or moves still names the application's allocation, which every resource bound to
// it follows).
void note_bound(DeviceState* d, VkBuffer buffer, VkDeviceMemory memory, VkDeviceSize offset, bool plain) {
    if (d->record) d->record->buffer_bound(buffer, memory, offset, plain);
}
void note_bound(DeviceState* d, VkImage image, VkDeviceMemory memory, VkDeviceSize offset, bool plain) {
    if (!d->record) return;
    if (!plain || !memory || !d->resources) {  // planes, swapchain images: no range followed
        d->record->image_bound(image, memory, offset, 0, false);
        return;
    }
    VkMemoryRequirements reqs{};  // only barrier elision needs the image's bytes
    d->dispatch.GetImageMemoryRequirements(d->device, image, &reqs);
    d->record->image_bound(image, memory, offset, reqs.size, plain);
}

VkResult bind_buffer(DeviceState* d, VkDevice device, VkBuffer buffer, VkDeviceMemory memory, VkDeviceSize offset) {
    if (ReadbackDeferral* defer = deferral(d); defer && defer->bind_buffer(buffer, memory, offset, true)) {
        d->readback->buffer_bound(buffer, memory);  // held back until its first use: bound for the app
        return VK_SUCCESS;
    }
    VkResult r = d->dispatch.BindBufferMemory(device, buffer, memory, offset);
    if (r == VK_SUCCESS && d->readback) d->readback->buffer_bound(buffer, memory);
    return r;
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL BindBufferMemory(VkDevice device, VkBuffer buffer, VkDeviceMemory memory,
                                                VkDeviceSize offset) {
    DeviceState* d = find_device(device);
    const VkResult r = bind_buffer(d, device, buffer, memory, offset);
    if (r == VK_SUCCESS) note_bound(d, buffer, memory, offset, true);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL BindImageMemory(VkDevice device, VkImage image, VkDeviceMemory memory,
                                               VkDeviceSize offset) {
    DeviceState* d = find_device(device);
    if (ReadbackDeferral* defer = deferral(d)) defer->bind_image(image, memory);
    VkResult r = d->dispatch.BindImageMemory(device, image, memory, offset);
    if (r == VK_SUCCESS && d->readback) d->readback->image_bound(image, memory);
    if (r == VK_SUCCESS) note_bound(d, image, memory, offset, true);
    return r;
}

namespace {
template <typename Info, typename Next>
VkResult bind2_down(DeviceState* d, VkDevice device, uint32_t count, const Info* infos, Next next) {
    ReadbackDeferral* defer = deferral(d);
    std::vector<Info> down;  // what goes down when the deferral holds some back or moves memory
    if (defer && defer->tracking_memory()) {
        down.reserve(count);
        for (uint32_t i = 0; i < count; ++i) {
            Info info = infos[i];
            if constexpr (std::is_same_v<Info, VkBindBufferMemoryInfo>) {
                if (defer->bind_buffer(info.buffer, info.memory, info.memoryOffset, info.pNext == nullptr)) {
                    d->readback->buffer_bound(info.buffer, info.memory);
                    continue;
                }
            } else if (info.memory) {
                defer->bind_image(info.image, info.memory);
            }
            down.push_back(info);
        }
        if (down.empty()) return VK_SUCCESS;
        count = uint32_t(down.size());
        infos = down.data();
    }
    VkResult r = (d->dispatch.*next)(device, count, infos);
    if (r != VK_SUCCESS || !d->readback) return r;
    for (uint32_t i = 0; i < count; ++i) {
        if constexpr (std::is_same_v<Info, VkBindBufferMemoryInfo>)
            d->readback->buffer_bound(infos[i].buffer, infos[i].memory);
        else if (infos[i].memory)  // swapchain-bound images carry no memory
            d->readback->image_bound(infos[i].image, infos[i].memory);
    }
    return r;
}

template <typename Info, typename Next>
VkResult bind2(VkDevice device, uint32_t count, const Info* infos, Next next) {
    DeviceState* d = find_device(device);
    const VkResult r = bind2_down(d, device, count, infos, next);
    if (r == VK_SUCCESS && d->record) {
        for (uint32_t i = 0; i < count; ++i) {
            if constexpr (std::is_same_v<Info, VkBindBufferMemoryInfo>)
                note_bound(d, infos[i].buffer, infos[i].memory, infos[i].memoryOffset, infos[i].pNext == nullptr);
            else
                note_bound(d, infos[i].image, infos[i].memory, infos[i].memoryOffset, infos[i].pNext == nullptr);
        }
    }
    return r;
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL BindBufferMemory2(VkDevice device, uint32_t count, const VkBindBufferMemoryInfo* infos) {
    return bind2(device, count, infos, &VkLayerDispatchTable::BindBufferMemory2);
}
VKAPI_ATTR VkResult VKAPI_CALL BindBufferMemory2KHR(VkDevice device, uint32_t count, const VkBindBufferMemoryInfo* infos) {
    return bind2(device, count, infos, &VkLayerDispatchTable::BindBufferMemory2KHR);
}
VKAPI_ATTR VkResult VKAPI_CALL BindImageMemory2(VkDevice device, uint32_t count, const VkBindImageMemoryInfo* infos) {
    return bind2(device, count, infos, &VkLayerDispatchTable::BindImageMemory2);
}
VKAPI_ATTR VkResult VKAPI_CALL BindImageMemory2KHR(VkDevice device, uint32_t count, const VkBindImageMemoryInfo* infos) {
    return bind2(device, count, infos, &VkLayerDispatchTable::BindImageMemory2KHR);
}

// Host access: a map before any GPU use keeps undecided memory where it is (the host writes
// first: uploads, persistent mappings); memory moved on its first use is served by its twin.
VKAPI_ATTR VkResult VKAPI_CALL MapMemory(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset, VkDeviceSize size,
                                         VkMemoryMapFlags flags, void** data) {
    DeviceState* d = find_device(device);
    if (ReadbackDeferral* defer = deferral(d)) memory = defer->map_target(memory);
    const VkResult r = d->dispatch.MapMemory(device, memory, offset, size, flags, data);
    if (r == VK_SUCCESS) objects::memory_mapped(*d, memory, true);
    return r;
}

VKAPI_ATTR void VKAPI_CALL UnmapMemory(VkDevice device, VkDeviceMemory memory) {
    DeviceState* d = find_device(device);
    if (ReadbackDeferral* defer = deferral(d)) memory = defer->host_access_target(memory);
    d->dispatch.UnmapMemory(device, memory);
    objects::memory_mapped(*d, memory, false);
}

namespace {
template <typename Next>
VkResult mapped_ranges(VkDevice device, uint32_t count, const VkMappedMemoryRange* ranges, Next next) {
    DeviceState* d = find_device(device);
    ReadbackDeferral* defer = deferral(d);
    std::vector<VkMappedMemoryRange> moved;
    if (defer && defer->tracking_memory()) {
        moved.assign(ranges, ranges + count);
        for (VkMappedMemoryRange& r : moved) r.memory = defer->host_access_target(r.memory);
        ranges = moved.data();
    }
    return (d->dispatch.*next)(device, count, ranges);
}
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL FlushMappedMemoryRanges(VkDevice device, uint32_t count, const VkMappedMemoryRange* ranges) {
    return mapped_ranges(device, count, ranges, &VkLayerDispatchTable::FlushMappedMemoryRanges);
}
VKAPI_ATTR VkResult VKAPI_CALL InvalidateMappedMemoryRanges(VkDevice device, uint32_t count,
                                                            const VkMappedMemoryRange* ranges) {
    return mapped_ranges(device, count, ranges, &VkLayerDispatchTable::InvalidateMappedMemoryRanges);
}

}  // namespace slipstream::hooks
