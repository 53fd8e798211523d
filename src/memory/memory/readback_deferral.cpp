#include "memory/readback_deferral.h"

#include "core/log.h"
#include "state/object_record.h"
#include "state/object_state.h"
#include "memory/readback_policy.h"

#include <algorithm>
#include <cstring>

namespace slipstream {

namespace {
std::string type_text(const VkPhysicalDeviceMemoryProperties& props, uint32_t type) {
    return std::to_string(type) + " (" + describe_memory_property_flags(props.memoryTypes[type].propertyFlags) + ")";
}
}  // namespace

ReadbackDeferral::ReadbackDeferral(DeviceState& device, const uint32_t* safe_targets)
    : d_(device), safe_targets_(safe_targets) {}

ReadbackDeferral::~ReadbackDeferral() {
    // The application frees its memory before vkDestroyDevice; twins of memory it leaked go
    // with the device like the memory itself (nothing pending can be bound any more).
    d_.buffer_watch.store(0, std::memory_order_relaxed);
}

bool ReadbackDeferral::first_time(const std::string& key) {
    std::lock_guard lock(log_mutex_);
    return logged_.insert(key).second;
}

void ReadbackDeferral::report_mismatch(const char* what, uint32_t twin_type) {
    // safe_targets promises this never happens (every probed resource class that accepts the
    // application's type accepts the twin's): a Slipstream bug.
    d_.stats.add(Counter::ReadbackBindMismatches);
    log(LogLevel::Error,
        "readback: a %s that does not allow memory type %u was bound to memory Slipstream moved there on its first "
        "use; this is a Slipstream bug: please report it, and set VK_SLIPSTREAM_READBACK_DEFER=off meanwhile",
        what, twin_type);
}

void ReadbackDeferral::update_watch_locked() {
    d_.buffer_watch.store(uint32_t(std::min<size_t>(buffers_.size(), UINT32_MAX)), std::memory_order_relaxed);
    tracked_memories_.store(uint32_t(std::min<size_t>(memories_.size(), UINT32_MAX)), std::memory_order_relaxed);
}

void ReadbackDeferral::allocated(VkDeviceMemory memory, const VkMemoryAllocateInfo& info) {
    // Only plain allocations: anything in pNext (dedicated, exported, device masks, priorities)
    // would have to be repeated for a twin, or forbids one.
    if (stopped() || info.pNext || info.memoryTypeIndex >= d_.memory_properties.memoryTypeCount) return;
    const uint32_t type = info.memoryTypeIndex;
    const ReadbackChoice choice =
        evaluate_readback_memory_type(d_.memory_properties, safe_targets_[type], type, info.allocationSize);
    if (!choice.redirect()) return;
    std::unique_lock lock(mutex_);
    Memory& m = memories_[memory];
    m.app_type = type;
    m.size = info.allocationSize;
    update_watch_locked();
    d_.stats.add(Counter::ReadbackDeferredAllocations);
}

void ReadbackDeferral::forget_locked(VkDeviceMemory memory) {
    memories_.erase(memory);
    update_watch_locked();
}

void ReadbackDeferral::freed(VkDeviceMemory memory) {
    if (!tracking_memory()) return;
    std::unique_lock lock(mutex_);
    auto it = memories_.find(memory);
    if (it == memories_.end()) return;
    Memory& m = it->second;
    for (const PendingBind& p : m.pending) buffers_.erase(p.buffer);  // never bound: nothing to undo
    for (VkBuffer b : m.bound) buffers_.erase(b);
    if (m.twin) {
        d_.dispatch.FreeMemory(d_.device, m.twin, nullptr);  // unmaps it too
        d_.stats.add(Counter::ReadbackTwinsFreed);
    }
    forget_locked(memory);
}

void ReadbackDeferral::buffer_destroyed(VkBuffer buffer) {
    if (d_.buffer_watch.load(std::memory_order_relaxed) == 0) return;  // no buffer pending or in a twin
    std::unique_lock lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    auto mem = memories_.find(it->second.memory);
    if (mem != memories_.end()) {
        auto& pending = mem->second.pending;
        pending.erase(std::remove_if(pending.begin(), pending.end(), [&](const PendingBind& p) { return p.buffer == buffer; }),
                      pending.end());
        auto& bound = mem->second.bound;
        bound.erase(std::remove(bound.begin(), bound.end(), buffer), bound.end());
    }
    buffers_.erase(it);
    update_watch_locked();
}

bool ReadbackDeferral::bind_buffer(VkBuffer buffer, VkDeviceMemory& memory, VkDeviceSize offset, bool plain_bind) {
    if (!tracking_memory()) return false;
    const std::optional<BufferRecord> record = d_.record->buffer(buffer);
    std::unique_lock lock(mutex_);
    auto it = memories_.find(memory);
    if (it == memories_.end()) return false;
    Memory& m = it->second;
    VkMemoryRequirements reqs;
    d_.dispatch.GetBufferMemoryRequirements(d_.device, buffer, &reqs);
    if (m.fate == Fate::kMove) {
        if (!(reqs.memoryTypeBits >> m.twin_type & 1u)) {
            // The buffer stays in the application's memory: valid, but not sharing the twin's contents.
            report_mismatch("buffer", m.twin_type);
            return false;
        }
        memory = m.twin;
        buffers_[buffer] = {it->first, false};
        m.bound.push_back(buffer);
        update_watch_locked();
        return false;
    }
    // A buffer the record does not know was created before the layer knew: nothing to go by.
    const VkBufferUsageFlags usage = record ? record->usage : 0;
    const VkBufferCreateFlags flags = record ? record->flags : 0;
    const UseSignature signature{m.app_type, usage, flags};
    if (!record || record->external || !bind_may_wait(usage, flags, plain_bind)) {
        keep_locked(it->first, m, "the bind of a buffer that is no transfer destination (or not a plain bind)");
        return false;
    }
    if (gpu_read_.contains(signature)) {
        keep_locked(it->first, m, "a buffer like one the GPU read after an earlier move");
        return false;
    }
    m.pending.push_back({buffer, offset, reqs, usage, flags});
    buffers_[buffer] = {it->first, true};
    update_watch_locked();
    d_.stats.add(Counter::ReadbackDeferredBinds);
    return true;
}

void ReadbackDeferral::bind_image(VkImage image, VkDeviceMemory& memory) {
    if (!tracking_memory()) return;
    std::unique_lock lock(mutex_);
    auto it = memories_.find(memory);
    if (it == memories_.end()) return;
    Memory& m = it->second;
    if (m.fate == Fate::kUndecided) {
        keep_locked(it->first, m, "an image bind");
        return;
    }
    VkMemoryRequirements reqs;
    d_.dispatch.GetImageMemoryRequirements(d_.device, image, &reqs);
    if (!(reqs.memoryTypeBits >> m.twin_type & 1u)) {
        report_mismatch("image", m.twin_type);
        return;
    }
    memory = m.twin;
}

void ReadbackDeferral::perform_binds_locked(Memory& m, VkDeviceMemory target, bool into_twin) {
    for (const PendingBind& p : m.pending) {
        VkResult r = d_.dispatch.BindBufferMemory(d_.device, p.buffer, target, p.offset);
        if (r != VK_SUCCESS)
            log(LogLevel::Error, "readback: a deferred vkBindBufferMemory failed (VkResult %d); the application was told "
                "it succeeded. Set VK_SLIPSTREAM_READBACK_DEFER=off to see the error where it happens", int(r));
        if (into_twin) {
            buffers_[p.buffer].pending = false;
            m.bound.push_back(p.buffer);
        } else {
            buffers_.erase(p.buffer);
        }
    }
    m.pending.clear();
}

void ReadbackDeferral::keep_locked(VkDeviceMemory memory, Memory& m, const char* what) {
    if (m.fate != Fate::kUndecided) return;
    perform_binds_locked(m, memory, false);
    d_.stats.add(Counter::ReadbackDeferredKept);
    if (log_enabled(LogLevel::Debug))
        log(LogLevel::Debug, "readback deferred: memory of type %u kept: first use %s", m.app_type, what);
    forget_locked(memory);  // `m` is gone
}

void ReadbackDeferral::move_locked(VkDeviceMemory memory, Memory& m, VkBuffer revealing, const char* what) {
    const VkPhysicalDeviceMemoryProperties& props = d_.memory_properties;
    const uint32_t allowed = twin_allowed_types(safe_targets_[m.app_type], m.pending);
    const ReadbackChoice choice = evaluate_readback_memory_type(props, allowed, m.app_type, m.size);
    if (!choice.redirect() || !twin_fits(m.pending, m.size, choice.memory_type)) {
        keep_locked(memory, m, "a transfer write, but no cached type suits every buffer bound so far");
        return;
    }
    VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    info.allocationSize = m.size;
    info.memoryTypeIndex = choice.memory_type;
    VkDeviceMemory twin = VK_NULL_HANDLE;
    const VkResult r = d_.dispatch.AllocateMemory(d_.device, &info, nullptr, &twin);
    if (r != VK_SUCCESS) {
        // Out of memory never reaches the application: its own allocation serves as asked.
        d_.stats.add(Counter::ReadbackFallbacks);
        if (first_time("fallback" + std::to_string(choice.memory_type)))
            log(LogLevel::Info, "readback deferred fallback (type %u allocation failed, VkResult %d): memory stays in type %u",
                choice.memory_type, int(r), m.app_type);
        keep_locked(memory, m, "a transfer write, but the cached twin could not be allocated");
        return;
    }
    d_.stats.add(Counter::ReadbackTwinsAllocated);
    m.twin = twin;
    m.twin_type = choice.memory_type;
    m.fate = Fate::kMove;
    m.moved_by = what;
    for (const PendingBind& p : m.pending)
        if (p.buffer == revealing) m.signature = {m.app_type, p.usage, p.flags};
    perform_binds_locked(m, twin, true);
    d_.stats.add(Counter::ReadbackRedirects);
    d_.stats.add(Counter::ReadbackBytes, m.size);
    d_.stats.add(Counter::ReadbackDeferredMoves);
    if (first_time(std::string("move ") + what + std::to_string(m.app_type) + ">" + std::to_string(m.twin_type)))
        log(LogLevel::Info, "readback deferred: first use %s: type %s -> type %s", what,
            type_text(props, m.app_type).c_str(), type_text(props, m.twin_type).c_str());
    update_watch_locked();
}

void ReadbackDeferral::gpu_read_locked(Memory& m, VkBuffer buffer, const char* what) {
    if (m.gpu_read_reported) return;
    m.gpu_read_reported = true;
    d_.stats.add(Counter::ReadbackMovedGpuReads);
    const bool learned = gpu_read_.add(m.signature);
    if (first_time(std::string("gpu read ") + m.moved_by + what))
        log(LogLevel::Warn,
            "readback: memory moved to cached type %u on its first use (%s) is read by the GPU (%s, buffer %p): "
            "GPU reads of it now cross the bus. %s",
            m.twin_type, m.moved_by.c_str(), what, static_cast<void*>(buffer),
            learned ? "Later memory of the same kind stays where the application puts it"
                    : "(no room to remember more kinds of such memory)");
}

void ReadbackDeferral::use_buffer(VkBuffer buffer, Use use, const char* what) {
    if (!buffer) return;
    std::unique_lock lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    const VkDeviceMemory memory = it->second.memory;
    auto mem = memories_.find(memory);
    if (mem == memories_.end()) return;
    Memory& m = mem->second;
    if (m.fate == Fate::kUndecided) {
        if (use == Use::kTransferWrite) move_locked(memory, m, buffer, what);
        else keep_locked(memory, m, what);
    } else if (use == Use::kRead) {
        gpu_read_locked(m, buffer, what);
    }
}

void ReadbackDeferral::use_memory(VkDeviceMemory memory, const char* what) {
    if (!memory || !tracking_memory()) return;
    std::unique_lock lock(mutex_);
    auto it = memories_.find(memory);
    if (it != memories_.end()) keep_locked(memory, it->second, what);
}

void ReadbackDeferral::keep_all(const char* what) {
    std::unique_lock lock(mutex_);
    std::vector<VkDeviceMemory> undecided;
    for (auto& [memory, m] : memories_)
        if (m.fate == Fate::kUndecided) undecided.push_back(memory);
    for (VkDeviceMemory memory : undecided) keep_locked(memory, memories_.at(memory), what);
}

void ReadbackDeferral::stop(const char* why) {
    if (stopped_.exchange(true)) return;
    d_.stats.add(Counter::ReadbackDeferralStopped);
    log(LogLevel::Info, "readback deferred: stopped on this device (%s); pending binds performed as asked", why);
    keep_all(why);
}

VkDeviceMemory ReadbackDeferral::map_target(VkDeviceMemory memory) {
    if (!tracking_memory()) return memory;
    std::unique_lock lock(mutex_);
    auto it = memories_.find(memory);
    if (it == memories_.end()) return memory;
    if (it->second.fate == Fate::kMove) return it->second.twin;
    keep_locked(memory, it->second, "vkMapMemory before any GPU use");
    return memory;
}

VkDeviceMemory ReadbackDeferral::host_access_target(VkDeviceMemory memory) {
    if (!tracking_memory()) return memory;
    std::shared_lock lock(mutex_);
    auto it = memories_.find(memory);
    return it != memories_.end() && it->second.fate == Fate::kMove ? it->second.twin : memory;
}

void ReadbackDeferral::use_template_data(VkDescriptorUpdateTemplate t, const void* data, const char* what) {
    const std::shared_ptr<const UpdateTemplateRecord> record = d_.record->update_template(t);
    if (!record || !data) {
        keep_all(what);
        return;
    }
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (const VkDescriptorUpdateTemplateEntry& e : record->entries) {
        switch (e.descriptorType) {
            case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
            case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
            case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
            case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC: break;
            default: continue;  // images, samplers, inline data: no VkBuffer; texel buffer views and
                                // acceleration structures resolved when they were created
        }
        for (uint32_t i = 0; i < e.descriptorCount; ++i) {
            VkDescriptorBufferInfo info;
            std::memcpy(&info, bytes + e.offset + size_t(i) * e.stride, sizeof info);
            use_buffer(info.buffer, Use::kRead, what);
        }
    }
}

}  // namespace slipstream
