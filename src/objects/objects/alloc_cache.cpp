#include "objects/alloc_cache.h"

#include "objects/cost_average.h"

#include <algorithm>

namespace slipstream::objects {

uint64_t AllocCache::heap_bound(VkDeviceSize heap_size, uint32_t mib) {
    if (mib) return uint64_t(mib) << 20;
    return std::min<uint64_t>(kDefaultBoundCap, heap_size / 20);
}

AllocCacheLimits AllocCache::limits_for(const VkPhysicalDeviceMemoryProperties& memory,
                                        const VkPhysicalDeviceLimits& limits, uint32_t mib, bool zero,
                                        bool gpu_fill) {
    AllocCacheLimits l;
    l.memory = memory;
    l.non_coherent_atom = std::max<VkDeviceSize>(1, limits.nonCoherentAtomSize);
    l.max_allocations = limits.maxMemoryAllocationCount;
    for (uint32_t h = 0; h < memory.memoryHeapCount && h < VK_MAX_MEMORY_HEAPS; ++h)
        l.heap_bound[h] = heap_bound(memory.memoryHeaps[h].size, mib);
    l.zero = zero;
    l.gpu_fill = zero && gpu_fill;
    l.host_invisible_types = !zero || l.gpu_fill;
    return l;
}

std::optional<VkMemoryAllocateFlags> AllocCache::plain(const VkMemoryAllocateInfo& info,
                                                       const VkAllocationCallbacks* allocator) {
    if (allocator) return std::nullopt;
    VkMemoryAllocateFlags flags = 0;
    for (auto* p = static_cast<const VkBaseInStructure*>(info.pNext); p; p = p->pNext) {
        if (p->sType != VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO) return std::nullopt;
        const auto* f = reinterpret_cast<const VkMemoryAllocateFlagsInfo*>(p);
        // Device masks and address capture tie the memory to more than its type.
        if (f->flags & ~VkMemoryAllocateFlags(VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT)) return std::nullopt;
        if (f->deviceMask) return std::nullopt;
        flags |= f->flags;
    }
    return flags;
}

bool AllocCache::qualifies(uint32_t type, VkDeviceSize size) const {
    if (type >= limits_.memory.memoryTypeCount || size == 0 || size > kSizeCap) return false;
    const VkMemoryPropertyFlags f = limits_.memory.memoryTypes[type].propertyFlags;
    if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT)) return false;
    if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && !limits_.host_invisible_types) return false;
    if (gpu_filled(type) && size % 4) return false;
    return size <= limits_.heap_bound[heap_of(type)];
}

AllocCache::Taken AllocCache::take(uint32_t type, VkMemoryAllocateFlags flags, VkDeviceSize size) {
    std::lock_guard lock(mutex_);
    auto list = by_size_.find(key(type, flags));
    if (list == by_size_.end()) return {};
    const bool host = limits_.memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    const VkDeviceSize most = host && size % limits_.non_coherent_atom ? size : size + size / 8;
    auto it = list->second.lower_bound(size);
    if (it == list->second.end() || it->first > most) return {};
    auto age = by_age_.find(it->second);
    const Kept k = age->second;
    remove_kept_locked(age);
    followed_[k.memory] = Live{k.type, k.flags, k.size, false, State::Live};
    live_.fetch_add(1, std::memory_order_relaxed);
    return Taken{k.memory, k.size};
}

std::vector<VkDeviceMemory> AllocCache::make_room() {
    std::lock_guard lock(mutex_);
    std::vector<VkDeviceMemory> out;
    const size_t max = limits_.max_allocations;
    while (!by_age_.empty() && live_.load(std::memory_order_relaxed) + leaving_ + by_age_.size() + 1 > max)
        evict_locked(by_age_.begin(), &out);
    return out;
}

void AllocCache::allocated(VkDeviceMemory memory, bool followed, uint32_t type, VkMemoryAllocateFlags flags,
                           VkDeviceSize size, uint64_t driver_ns) {
    live_.fetch_add(1, std::memory_order_relaxed);
    if (driver_ns && type < VK_MAX_MEMORY_TYPES)
        running_average(driver_ns_[type], undisturbed(driver_last_ns_[type], driver_ns));
    if (!followed) return;  // no lock: the cache does not follow it
    std::lock_guard lock(mutex_);
    followed_[memory] = Live{type, flags, size, false, State::Live};
    followed_count_.store(followed_.size(), std::memory_order_relaxed);
}

void AllocCache::zeroed(uint32_t type, VkDeviceSize bytes, uint64_t ns) {
    if (type >= VK_MAX_MEMORY_TYPES || bytes == 0) return;
    running_average(zero_ns_per_kib_[type],
                    undisturbed(zero_last_ns_per_kib_[type], std::max<uint64_t>(1, ns * 1024 / bytes)));
}

bool AllocCache::pays(uint32_t type, VkDeviceSize size) const {
    return limits_.always || !host_zeroed(type) || worth_keeping(size, zero_ns_per_kib_[type].load(std::memory_order_relaxed),
                                               driver_ns_[type].load(std::memory_order_relaxed));
}

void AllocCache::drop_live() {
    size_t n = live_.load(std::memory_order_relaxed);
    while (n && !live_.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) {
    }
}

void AllocCache::dropped(VkDeviceMemory memory) {
    std::lock_guard lock(mutex_);
    auto it = followed_.find(memory);
    if (it == followed_.end() || it->second.state != State::Live) return;
    followed_.erase(it);
    followed_count_.store(followed_.size(), std::memory_order_relaxed);
    drop_live();
}

void AllocCache::mapped(VkDeviceMemory memory, bool is_mapped) {
    if (followed_count_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(mutex_);
    auto it = followed_.find(memory);
    if (it != followed_.end() && it->second.state == State::Live) it->second.mapped = is_mapped;
}

bool AllocCache::wants(VkDeviceMemory memory, bool* is_mapped, uint32_t* type, VkDeviceSize* size,
                       bool* not_worth) {
    // (An allocation is followed before its handle reaches the application, which orders its
    // free after that: a count of 0 seen here means this one is not followed.)
    if (followed_count_.load(std::memory_order_relaxed) == 0) {
        drop_live();
        return false;
    }
    std::lock_guard lock(mutex_);
    auto it = followed_.find(memory);
    if (it == followed_.end() || it->second.state != State::Live) {
        drop_live();
        return false;
    }
    const Live& l = it->second;
    if (!pays(l.type, l.size)) {
        followed_.erase(it);
        followed_count_.store(followed_.size(), std::memory_order_relaxed);
        drop_live();
        if (not_worth) *not_worth = true;
        return false;
    }
    *is_mapped = it->second.mapped;
    *type = it->second.type;
    if (size) *size = it->second.size;
    it->second.state = State::Leaving;
    ++leaving_;
    return true;
}

void AllocCache::let_go(VkDeviceMemory memory) {
    std::lock_guard lock(mutex_);
    auto it = followed_.find(memory);
    if (it == followed_.end() || it->second.state != State::Leaving) return;
    followed_.erase(it);
    followed_count_.store(followed_.size(), std::memory_order_relaxed);
    --leaving_;
    drop_live();
}

bool AllocCache::keep(VkDeviceMemory memory, std::vector<VkDeviceMemory>* evicted) {
    std::lock_guard lock(mutex_);
    auto it = followed_.find(memory);
    if (it == followed_.end() || it->second.state != State::Leaving) return false;
    const Live l = it->second;
    --leaving_;
    drop_live();
    const uint32_t heap = heap_of(l.type);
    const uint64_t bound = limits_.heap_bound[heap];
    if (l.size > bound) {
        followed_.erase(it);
        followed_count_.store(followed_.size(), std::memory_order_relaxed);
        return false;
    }
    it->second.state = State::Kept;
    // The oldest kept allocations of the heap make room for the newest.
    for (auto age = by_age_.begin(); age != by_age_.end() && held_[heap] + l.size > bound;) {
        auto next = std::next(age);
        if (heap_of(age->second.type) == heap) evict_locked(age, evicted);
        age = next;
    }
    const uint64_t seq = next_seq_++;
    const Kept kept{memory, l.type, l.flags, l.size};
    BySize& sizes = by_size_[key(l.type, l.flags)];
    if (spare_age_.empty()) {
        by_age_.emplace_hint(by_age_.end(), seq, kept);
    } else {
        ByAge::node_type node = std::move(spare_age_.back());
        spare_age_.pop_back();
        node.key() = seq;
        node.mapped() = kept;
        by_age_.insert(by_age_.end(), std::move(node));
    }
    if (spare_size_.empty()) {
        sizes.emplace(l.size, seq);
    } else {
        BySize::node_type node = std::move(spare_size_.back());
        spare_size_.pop_back();
        node.key() = l.size;
        node.mapped() = seq;
        sizes.insert(std::move(node));
    }
    held_[heap] += l.size;
    return true;
}

std::vector<VkDeviceMemory> AllocCache::trim_all() {
    std::lock_guard lock(mutex_);
    std::vector<VkDeviceMemory> out;
    for (auto& [seq, k] : by_age_) {
        out.push_back(k.memory);
        followed_.erase(k.memory);
    }
    followed_count_.store(followed_.size(), std::memory_order_relaxed);
    by_age_.clear();
    by_size_.clear();
    std::fill(std::begin(held_), std::end(held_), 0);
    return out;
}

std::vector<VkDeviceMemory> AllocCache::trim_heap(uint32_t heap) {
    std::lock_guard lock(mutex_);
    std::vector<VkDeviceMemory> out;
    for (auto age = by_age_.begin(); age != by_age_.end();) {
        auto next = std::next(age);
        if (heap_of(age->second.type) == heap) evict_locked(age, &out);
        age = next;
    }
    return out;
}

void AllocCache::remove_kept_locked(ByAge::iterator age) {
    const Kept& k = age->second;
    auto list = by_size_.find(key(k.type, k.flags));
    auto [first, last] = list->second.equal_range(k.size);
    for (auto it = first; it != last; ++it) {
        if (it->second == age->first) {
            if (spare_size_.size() < kSpareNodes) spare_size_.push_back(list->second.extract(it));
            else list->second.erase(it);
            break;
        }
    }
    // (An emptied list stays: the next keep of its type and flags needs it again.)
    held_[heap_of(k.type)] -= k.size;
    if (spare_age_.size() < kSpareNodes) spare_age_.push_back(by_age_.extract(age));
    else by_age_.erase(age);
}

void AllocCache::evict_locked(ByAge::iterator age, std::vector<VkDeviceMemory>* out) {
    out->push_back(age->second.memory);
    followed_.erase(age->second.memory);
    followed_count_.store(followed_.size(), std::memory_order_relaxed);
    remove_kept_locked(age);
}

uint64_t AllocCache::held(uint32_t heap) const {
    std::lock_guard lock(mutex_);
    return heap < VK_MAX_MEMORY_HEAPS ? held_[heap] : 0;
}

uint64_t AllocCache::held_total() const {
    std::lock_guard lock(mutex_);
    uint64_t sum = 0;
    for (uint64_t h : held_) sum += h;
    return sum;
}

size_t AllocCache::kept() const {
    std::lock_guard lock(mutex_);
    return by_age_.size();
}

size_t AllocCache::live() const {
    std::lock_guard lock(mutex_);
    return live_.load(std::memory_order_relaxed) + leaving_;
}

}  // namespace slipstream::objects
