#include "capture/layout_keeper.h"

#include <algorithm>

namespace slipstream::capture {

uint64_t LayoutKeeper::hold() {
    std::lock_guard lock(mutex_);
    const uint64_t e = epoch_.load(std::memory_order_relaxed);
    if (live_.empty() || live_.back().first != e) live_.emplace_back(e, 0);
    ++live_.back().second;
    return e;
}

void LayoutKeeper::release(uint64_t epoch) {
    std::vector<Kept> free;
    {
        std::lock_guard lock(mutex_);
        auto it = std::lower_bound(live_.begin(), live_.end(), epoch,
                                   [](const std::pair<uint64_t, uint32_t>& l, uint64_t e) { return l.first < e; });
        if (it == live_.end() || it->first != epoch) return;
        if (--it->second == 0) live_.erase(it);
        if (kept_.empty()) return;
        free = take_free_locked();
    }
    for (const Kept& k : free) destroy_now(device_, with_, k);
}

std::vector<LayoutKeeper::Kept> LayoutKeeper::take_free_locked() {
    std::vector<Kept> free;
    const uint64_t oldest_live = live_.empty() ? UINT64_MAX : live_.front().first;
    for (size_t i = 0; i < kept_.size();) {
        if (kept_[i].epoch < oldest_live) {
            free.push_back(kept_[i]);
            kept_[i] = kept_.back();
            kept_.pop_back();
        } else {
            ++i;
        }
    }
    return free;
}

void LayoutKeeper::destroy(VkDevice device, const Destroyers& with, Kind kind, uint64_t handle,
                           const VkAllocationCallbacks* allocator) {
    Kept k{kind, handle, 0, allocator != nullptr, allocator ? *allocator : VkAllocationCallbacks{}};
    {
        std::lock_guard lock(mutex_);
        k.epoch = epoch_.fetch_add(1, std::memory_order_acq_rel);
        device_ = device;
        with_ = with;
        if (!live_.empty() && live_.front().first <= k.epoch) {
            kept_.push_back(k);
            return;
        }
    }
    destroy_now(device, with, k);
}

void LayoutKeeper::destroy_all() {
    std::vector<Kept> all;
    {
        std::lock_guard lock(mutex_);
        all.swap(kept_);
        live_.clear();
    }
    for (const Kept& k : all) destroy_now(device_, with_, k);
}

size_t LayoutKeeper::kept() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
}

void LayoutKeeper::destroy_now(VkDevice device, const Destroyers& with, const Kept& k) {
    const VkAllocationCallbacks* a = k.has_allocator ? &k.allocator : nullptr;
    switch (k.kind) {
    case Kind::PipelineLayout: with.pipeline_layout(device, reinterpret_cast<VkPipelineLayout>(k.handle), a); break;
    case Kind::SetLayout: with.set_layout(device, reinterpret_cast<VkDescriptorSetLayout>(k.handle), a); break;
    case Kind::UpdateTemplate:
        with.update_template(device, reinterpret_cast<VkDescriptorUpdateTemplate>(k.handle), a);
        break;
    case Kind::UpdateTemplateKHR:
        with.update_template_khr(device, reinterpret_cast<VkDescriptorUpdateTemplate>(k.handle), a);
        break;
    }
}

}  // namespace slipstream::capture
