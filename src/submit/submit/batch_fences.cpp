#include "submit/batch_fences.h"

namespace slipstream::submit {

void BatchFences::fence_created(VkFence fence, const VkFenceCreateInfo& info) {
    for (auto* p = static_cast<const VkBaseInStructure*>(info.pNext); p; p = p->pNext) {
        if (p->sType == VK_STRUCTURE_TYPE_EXPORT_FENCE_CREATE_INFO) {
            std::lock_guard lock(mutex_);
            exportable_.insert(fence);
            exportable_count_.store(exportable_.size(), std::memory_order_release);
            return;
        }
    }
}

bool BatchFences::exportable(VkFence fence) {
    if (exportable_count_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard lock(mutex_);
    return exportable_.count(fence) != 0;
}

void BatchFences::answer_later(const PendingFence& pending) { answer_later(&pending.fence, 1, pending); }

void BatchFences::answer_later(const VkFence* fences, size_t count, const PendingFence& answer) {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < count; ++i) {
        PendingFence& p = pending_[fences[i]];
        p = answer;
        p.fence = fences[i];
    }
    count_.store(pending_.size(), std::memory_order_release);
}

bool BatchFences::seen_done(uint32_t count, const VkFence* fences, bool wait_all) {
    if (count == 0 || none()) return false;
    std::lock_guard lock(mutex_);
    for (uint32_t i = 0; i < count; ++i) {
        auto it = pending_.find(fences[i]);
        const PendingFence* p = it != pending_.end() ? &it->second : nullptr;
        const bool done = p && p->seen && p->value <= p->seen->load(std::memory_order_acquire);
        if (done != wait_all) return done;
    }
    return wait_all;
}

bool BatchFences::find(VkFence fence, PendingFence* out) {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(fence);
    if (it == pending_.end()) return false;
    *out = it->second;
    return true;
}

void BatchFences::forget(uint32_t count, const VkFence* fences, bool destroyed) {
    // Every reset and destroy of a fence comes here: with nothing followed, no lock. (A fence
    // the application resets or destroys is not being submitted meanwhile: its insertion, if
    // any, happened before and shows in the counts.)
    if (count_.load(std::memory_order_acquire) == 0 && failed_count_.load(std::memory_order_acquire) == 0 &&
        exportable_count_.load(std::memory_order_acquire) == 0)
        return;
    std::lock_guard lock(mutex_);
    size_t erased = 0, failed = 0, exportable = 0;
    for (uint32_t i = 0; i < count; ++i) {
        erased += pending_.erase(fences[i]);
        if (!failed_.empty()) failed += failed_.erase(fences[i]);
        if (destroyed && !exportable_.empty()) exportable += exportable_.erase(fences[i]);
    }
    // Only what changed is written: the counts sit on lines other threads read at every
    // submission and wait (a store would take each line from them).
    if (erased) count_.store(pending_.size(), std::memory_order_release);
    if (failed) failed_count_.store(failed_.size(), std::memory_order_release);
    if (exportable) exportable_count_.store(exportable_.size(), std::memory_order_release);
}

void BatchFences::fail(VkFence fence, VkResult error) {
    std::lock_guard lock(mutex_);
    pending_.erase(fence);  // never answered from a timeline the batch did not signal
    failed_[fence] = error;
    count_.store(pending_.size(), std::memory_order_release);
    failed_count_.store(failed_.size(), std::memory_order_release);
}

VkResult BatchFences::failure(uint32_t count, const VkFence* fences) {
    if (failed_count_.load(std::memory_order_acquire) == 0) return VK_SUCCESS;
    std::lock_guard lock(mutex_);
    for (uint32_t i = 0; i < count; ++i)
        if (auto it = failed_.find(fences[i]); it != failed_.end()) return it->second;
    return VK_SUCCESS;
}

std::vector<PendingFence> BatchFences::take(uint32_t count, const VkFence* fences) {
    std::vector<PendingFence> taken;
    std::lock_guard lock(mutex_);
    for (uint32_t i = 0; i < count; ++i) {
        auto it = pending_.find(fences[i]);
        if (it == pending_.end()) continue;
        taken.push_back(it->second);
        pending_.erase(it);
    }
    count_.store(pending_.size(), std::memory_order_release);
    return taken;
}

}  // namespace slipstream::submit
