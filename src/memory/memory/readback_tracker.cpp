#include "memory/readback_tracker.h"

#include "core/log.h"
#include "state/object_record.h"
#include "state/object_state.h"
#include "memory/readback_policy.h"
#include "objects/cached_memory.h"

#include <string>

namespace slipstream {

namespace {
bool readback_image(const ImageRecord& image) {
    const VkImageUsageFlags copy = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    return image.tiling == VK_IMAGE_TILING_LINEAR && (image.usage & VK_IMAGE_USAGE_TRANSFER_DST_BIT) &&
           !(image.usage & ~copy) && !(image.flags & (VK_IMAGE_CREATE_SPARSE_BINDING_BIT | VK_IMAGE_CREATE_PROTECTED_BIT));
}

bool readback_buffer(VkBufferUsageFlags usage, VkBufferCreateFlags flags, bool external) {
    if (flags & (VK_BUFFER_CREATE_SPARSE_BINDING_BIT | VK_BUFFER_CREATE_PROTECTED_BIT)) return false;
    // External-memory buffers are shared with other processes or APIs: leave them alone.
    return !external && is_readback_buffer_usage(usage);
}
bool readback_buffer(const BufferRecord& b) { return readback_buffer(b.usage, b.flags, b.external); }
bool readback_buffer(const VkBufferCreateInfo& info) {
    for (auto* p = static_cast<const VkBaseInStructure*>(info.pNext); p; p = p->pNext)
        if (p->sType == VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO) return false;
    return readback_buffer(info.usage, info.flags, false);
}
}  // namespace

ReadbackTracker::ReadbackTracker(DeviceState& device) : d_(device) {
    probe_resource_classes();
    if (d_.settings.readback == ReadbackMode::Auto && d_.settings.readback_defer)
        deferral_ = std::make_unique<ReadbackDeferral>(d_, safe_targets_);
}

// Makes a probe resource from `info`, adds its memoryTypeBits to `classes`, destroys it.
template <typename Handle, typename Info, typename Create, typename Reqs, typename Destroy>
void ReadbackTracker::probe(const Info* info, Create create, Reqs reqs, Destroy destroy, std::vector<uint32_t>& classes) {
    Handle handle;
    if ((d_.dispatch.*create)(d_.device, info, nullptr, &handle) != VK_SUCCESS) return;
    d_.stats.add(Counter::ProbeObjectsCreated);
    VkMemoryRequirements r;
    (d_.dispatch.*reqs)(d_.device, handle, &r);
    (d_.dispatch.*destroy)(d_.device, handle, nullptr);
    d_.stats.add(Counter::ProbeObjectsDestroyed);
    classes.push_back(r.memoryTypeBits);
}

// memoryTypeBits of representative buffers, one per usage and one with them all.
std::vector<uint32_t> ReadbackTracker::buffer_classes() {
    std::vector<uint32_t> classes;
    const VkBufferUsageFlags usages[] = {
        VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT,
        VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        VK_BUFFER_USAGE_INDEX_BUFFER_BIT, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
        0x1FF /* all of the above */};
    for (VkBufferUsageFlags usage : usages) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = 4096;
        bci.usage = usage;
        probe<VkBuffer>(&bci, &VkLayerDispatchTable::CreateBuffer, &VkLayerDispatchTable::GetBufferMemoryRequirements,
              &VkLayerDispatchTable::DestroyBuffer, classes);
    }
    return classes;
}

// memoryTypeBits of representative images: linear copy targets, sampled, attachments, storage.
std::vector<uint32_t> ReadbackTracker::image_classes() {
    struct ImageClass {
        VkFormat format;
        VkImageTiling tiling;
        VkImageUsageFlags usage;
    };
    const ImageClass images[] = {
        {VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_TILING_LINEAR, VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT},
        {VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_TILING_LINEAR, VK_IMAGE_USAGE_SAMPLED_BIT},
        {VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_TILING_OPTIMAL,
         VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT},
        {VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_TILING_OPTIMAL, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT},
        {VK_FORMAT_R32_SFLOAT, VK_IMAGE_TILING_OPTIMAL, VK_IMAGE_USAGE_STORAGE_BIT},
        {VK_FORMAT_D32_SFLOAT, VK_IMAGE_TILING_OPTIMAL, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT},
    };
    std::vector<uint32_t> classes;
    for (const ImageClass& c : images) {
        VkImageFormatProperties fp;
        if (d_.instance->dispatch.GetPhysicalDeviceImageFormatProperties(d_.physical_device, c.format, VK_IMAGE_TYPE_2D,
                                                                         c.tiling, c.usage, 0, &fp) != VK_SUCCESS)
            continue;
        VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        ici.imageType = VK_IMAGE_TYPE_2D;
        ici.format = c.format;
        ici.extent = {16, 16, 1};
        ici.mipLevels = 1;
        ici.arrayLayers = 1;
        ici.samples = VK_SAMPLE_COUNT_1_BIT;
        ici.tiling = c.tiling;
        ici.usage = c.usage;
        ici.initialLayout = c.tiling == VK_IMAGE_TILING_LINEAR ? VK_IMAGE_LAYOUT_PREINITIALIZED : VK_IMAGE_LAYOUT_UNDEFINED;
        probe<VkImage>(&ici, &VkLayerDispatchTable::CreateImage, &VkLayerDispatchTable::GetImageMemoryRequirements,
              &VkLayerDispatchTable::DestroyImage, classes);
    }
    return classes;
}

void ReadbackTracker::probe_resource_classes() {
    // memoryTypeBits of representative resources. A redirect from type A to type B is safe for
    // memory whose resources are not known in advance only if every class accepting A accepts B.
    std::vector<uint32_t> classes = buffer_classes();
    for (uint32_t bits : image_classes()) classes.push_back(bits);
    const uint32_t all = d_.memory_properties.memoryTypeCount >= 32 ? ~0u : (1u << d_.memory_properties.memoryTypeCount) - 1;
    for (uint32_t from = 0; from < d_.memory_properties.memoryTypeCount; ++from) {
        uint32_t safe = all;
        for (uint32_t bits : classes)
            if (bits >> from & 1u) safe &= bits;
        safe_targets_[from] = safe;
        log(LogLevel::Debug, "readback: type %u may be redirected to types 0x%x", from, safe);
    }
}

void ReadbackTracker::buffer_created(const VkBufferCreateInfo& info) {
    // A sparse buffer's memory is bound on a queue (vkQueueBindSparse), which the deferral does
    // not follow: from now on, binds go down as asked.
    if (deferral_ && (info.flags & VK_BUFFER_CREATE_SPARSE_BINDING_BIT)) deferral_->stop("a sparse buffer was created");
}

void ReadbackTracker::buffer_destroyed(VkBuffer buffer) {
    if (deferral_) deferral_->buffer_destroyed(buffer);
    if (hint_count_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(mutex_);
    auto hint = hints_.find(std::this_thread::get_id());
    if (hint != hints_.end() && hint->second.buffer == buffer) hint->second.probe = true;  // the block-first probe
}

void ReadbackTracker::image_created(const VkImageCreateInfo& info) {
    if (deferral_ && (info.flags & VK_IMAGE_CREATE_SPARSE_BINDING_BIT)) deferral_->stop("a sparse image was created");
}

void ReadbackTracker::buffer_requirements(VkBuffer buffer, const VkBufferCreateInfo* info, VkMemoryRequirements& reqs) {
    bool readback = false;
    if (buffer) {
        const std::optional<BufferRecord> b = d_.record->buffer(buffer);
        readback = b && readback_buffer(*b);
    } else {
        readback = info && readback_buffer(*info);
    }
    if (!readback) {
        drop_hint();
        return;
    }
    {
        std::lock_guard lock(mutex_);
        if (hints_.insert_or_assign(std::this_thread::get_id(), Hint{buffer, buffer == VK_NULL_HANDLE, reqs}).second)
            hint_count_.fetch_add(1, std::memory_order_relaxed);
    }
    if (d_.settings.readback_steer) {
        uint32_t steered = steer_readback_type_bits(d_.memory_properties, reqs.memoryTypeBits);
        if (steered != reqs.memoryTypeBits) {
            reqs.memoryTypeBits = steered;
            d_.stats.add(Counter::ReadbackSteered);
        }
    }
}

void ReadbackTracker::other_requirements() { drop_hint(); }

std::optional<ReadbackTracker::Hint> ReadbackTracker::drop_hint() {
    if (hint_count_.load(std::memory_order_relaxed) == 0) return std::nullopt;  // no lock on the common path
    std::lock_guard lock(mutex_);
    auto it = hints_.find(std::this_thread::get_id());
    if (it == hints_.end()) return std::nullopt;
    Hint hint = it->second;
    hints_.erase(it);
    hint_count_.fetch_sub(1, std::memory_order_relaxed);
    return hint;
}

namespace {
// Only plain allocations may move: imported, exported or capture-replay memory keeps its type.
// `*dedicated`: the allocation's dedicated structure, if it has one.
bool plain_allocation(const VkMemoryAllocateInfo& info, const VkMemoryDedicatedAllocateInfo** dedicated) {
    for (auto* p = static_cast<const VkBaseInStructure*>(info.pNext); p; p = p->pNext) {
        switch (p->sType) {
            case VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO:
                *dedicated = reinterpret_cast<const VkMemoryDedicatedAllocateInfo*>(p);
                break;
            case VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO:
                if (reinterpret_cast<const VkMemoryAllocateFlagsInfo*>(p)->flags &
                    VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT)
                    return false;
                break;
            case VK_STRUCTURE_TYPE_MEMORY_PRIORITY_ALLOCATE_INFO_EXT:
                break;
            default:
                return false;
        }
    }
    return true;
}
}  // namespace

uint32_t ReadbackTracker::evidence(const VkMemoryAllocateInfo& info, const char** kind) {
    // A hint serves the one allocation that follows it, whatever that allocation turns out to be.
    const std::optional<Hint> hint = drop_hint();
    const VkMemoryDedicatedAllocateInfo* dedicated = nullptr;
    if (!plain_allocation(info, &dedicated)) return 0;
    const bool all = d_.settings.readback == ReadbackMode::AllHostVisible;
    // A dedicated allocation's resource is known: it is evidence if the tracker knows it as
    // readback (or every host-visible allocation counts), with that resource's type bits.
    auto dedicated_to = [&](bool known, auto handle, auto get_reqs, const char* known_kind,
                            const char* any_kind) -> uint32_t {
        if (!known && !all) return 0;
        VkMemoryRequirements reqs;
        (d_.dispatch.*get_reqs)(d_.device, handle, &reqs);
        *kind = known ? known_kind : any_kind;
        return reqs.memoryTypeBits;
    };
    if (dedicated && dedicated->buffer) {
        const std::optional<BufferRecord> b = d_.record->buffer(dedicated->buffer);
        return dedicated_to(b && readback_buffer(*b), dedicated->buffer, &VkLayerDispatchTable::GetBufferMemoryRequirements,
                            "dedicated readback buffer memory", "dedicated host-visible buffer memory");
    }
    if (dedicated && dedicated->image) {
        const std::optional<ImageRecord> i = d_.record->image(dedicated->image);
        return dedicated_to(i && readback_image(*i), dedicated->image, &VkLayerDispatchTable::GetImageMemoryRequirements,
                            "dedicated readback image memory", "dedicated host-visible image memory");
    }
    const uint32_t safe = safe_targets_[info.memoryTypeIndex];
    const bool matches = hint && (hint->reqs.memoryTypeBits >> info.memoryTypeIndex & 1u);
    if (matches && !hint->probe && readback_hint_covers(info.allocationSize, hint->reqs)) {
        const std::optional<BufferRecord> b = d_.record->buffer(hint->buffer);
        if (b && !b->bound && readback_buffer(*b)) {
            *kind = "readback buffer memory";
            return hint->reqs.memoryTypeBits & safe;
        }
    }
    if (matches && hint->probe && info.allocationSize >= kBlockMinBytes) {
        *kind = "readback block memory";
        return hint->reqs.memoryTypeBits & safe;
    }
    if (all) {
        *kind = "host-visible memory (all-host-visible mode)";
        return safe;
    }
    return 0;
}

void ReadbackTracker::log_once(const char* kind, uint32_t from, uint32_t to) {
    std::string key = std::string(kind) + std::to_string(from) + ">" + std::to_string(to);
    {
        std::lock_guard lock(mutex_);
        if (!logged_.insert(key).second) return;
    }
    const VkMemoryType* types = d_.memory_properties.memoryTypes;
    log(LogLevel::Info, "%s: type %u (%s) -> type %u (%s)", kind, from,
        describe_memory_property_flags(types[from].propertyFlags).c_str(), to,
        describe_memory_property_flags(types[to].propertyFlags).c_str());
}

VkResult ReadbackTracker::allocate(const VkMemoryAllocateInfo* info, const VkAllocationCallbacks* allocator,
                                   VkDeviceMemory* memory) {
    // Through the allocation cache, which sits under cached readback (it sees the type the
    // allocation really gets).
    auto pass = [&] { return objects::allocate_memory(d_, info, allocator, memory); };
    const uint32_t app_type = info->memoryTypeIndex;
    if (d_.settings.readback == ReadbackMode::Off || app_type >= d_.memory_properties.memoryTypeCount) {
        drop_hint();
        return pass();
    }
    const VkMemoryPropertyFlags flags = d_.memory_properties.memoryTypes[app_type].propertyFlags;
    if (!(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) || (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)) {
        drop_hint();
        return pass();
    }
    const char* kind = nullptr;
    const uint32_t allowed = evidence(*info, &kind);
    if (!allowed) {
        // No evidence at allocation time: the first use of its buffers may still tell.
        const VkResult r = pass();
        if (r == VK_SUCCESS && deferral_) deferral_->allocated(*memory, *info);
        return r;
    }
    ReadbackChoice choice = evaluate_readback_memory_type(d_.memory_properties, allowed, app_type, info->allocationSize);
    if (!choice.redirect()) {
        log(LogLevel::Debug, "%s of type %u kept: %s", kind, app_type, to_string(choice.verdict));
        return pass();
    }
    VkMemoryAllocateInfo redirected = *info;
    redirected.memoryTypeIndex = choice.memory_type;
    VkResult r = objects::allocate_memory(d_, &redirected, allocator, memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
        // The preferred heap is full: the application must never see an error it would not
        // have seen, so it gets its own choice.
        d_.stats.add(Counter::ReadbackFallbacks);
        log_once("readback fallback (preferred heap full)", choice.memory_type, app_type);
        return pass();
    }
    if (r != VK_SUCCESS) return r;
    d_.stats.add(Counter::ReadbackRedirects);
    d_.stats.add(Counter::ReadbackBytes, info->allocationSize);
    log_once(kind, app_type, choice.memory_type);
    std::lock_guard lock(mutex_);
    if (redirected_.insert_or_assign(*memory, Redirected{app_type, choice.memory_type}).second)
        redirected_count_.fetch_add(1, std::memory_order_relaxed);
    return r;
}

void ReadbackTracker::freed(VkDeviceMemory memory) {
    if (deferral_) deferral_->freed(memory);
    if (redirected_count_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(mutex_);
    if (redirected_.erase(memory)) redirected_count_.fetch_sub(1, std::memory_order_relaxed);
}

void ReadbackTracker::check_bind(VkDeviceMemory memory, uint32_t allowed_bits, const char* what) {
    uint32_t real_type;
    {
        std::lock_guard lock(mutex_);
        auto it = redirected_.find(memory);
        if (it == redirected_.end()) return;
        real_type = it->second.real_type;
    }
    if (allowed_bits >> real_type & 1u) return;
    d_.stats.add(Counter::ReadbackBindMismatches);
    log(LogLevel::Error,
        "readback: a %s that does not allow memory type %u was bound to memory Slipstream moved there; "
        "this is a Slipstream bug: please report it, and set VK_SLIPSTREAM_READBACK=off meanwhile",
        what, real_type);
}

bool ReadbackTracker::redirected(VkDeviceMemory memory) {
    if (redirected_count_.load(std::memory_order_relaxed) == 0) return false;  // no lock while none is
    std::lock_guard lock(mutex_);
    return redirected_.count(memory) != 0;
}

void ReadbackTracker::buffer_bound(VkBuffer buffer, VkDeviceMemory memory) {
    if (!redirected(memory)) return;
    VkMemoryRequirements reqs;
    d_.dispatch.GetBufferMemoryRequirements(d_.device, buffer, &reqs);
    check_bind(memory, reqs.memoryTypeBits, "buffer");
}

void ReadbackTracker::image_bound(VkImage image, VkDeviceMemory memory) {
    if (!redirected(memory)) return;
    VkMemoryRequirements reqs;
    d_.dispatch.GetImageMemoryRequirements(d_.device, image, &reqs);
    check_bind(memory, reqs.memoryTypeBits, "image");
}

}  // namespace slipstream
