// The GPU fill at submission (before_submission, cached_memory.h): recycled device-local memory
// owed a zero fill (zero_fill.h) is filled by a submission of ours ahead of the application's.
#include "objects/cached_memory.h"
#include "objects/zero_fill.h"
#include "submit/queue_fusion.h"

#include <memory>
#include <mutex>
#include <vector>

namespace slipstream::objects {

namespace {
// The queue's filler, made at its first use (with z.mutex held). Null: a call failed.
QueueFiller* filler_for(DeviceState& d, GpuZero& z, QueueState& q) {
    auto it = z.queues.find(&q);
    if (it != z.queues.end()) return it->second.get();
    auto f = std::make_unique<QueueFiller>();
    f->queue = q.queue;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = q.family;
    if (d.dispatch.CreateCommandPool(d.device, &pool, nullptr, &f->pool) != VK_SUCCESS) return nullptr;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    if (d.dispatch.CreateSemaphore(d.device, &sem, nullptr, &f->timeline) != VK_SUCCESS) {
        d.dispatch.DestroyCommandPool(d.device, f->pool, nullptr);
        return nullptr;
    }
    return z.queues.emplace(&q, std::move(f)).first->second.get();
}

// A command buffer of ours on `f`, free again (its submission done), or a new one; recorded
// with the fills and the barrier that makes them visible to everything after it on the queue.
VkResult record_fills(DeviceState& d, QueueFiller& f, uint64_t completed, const std::vector<PendingFills::Fill>& fills,
                      VkCommandBuffer* out) {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkResult r = VK_SUCCESS;
    if (!f.cbs.empty() && f.cbs.front().second <= completed) {
        cb = f.cbs.front().first;
        f.cbs.pop_front();
        r = d.dispatch.ResetCommandBuffer(cb, 0);
    } else {
        VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        info.commandPool = f.pool;
        info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        info.commandBufferCount = 1;
        r = d.dispatch.AllocateCommandBuffers(d.device, &info, &cb);
        if (r == VK_SUCCESS && d.set_loader_data) r = d.set_loader_data(d.device, cb);
        if (r != VK_SUCCESS && cb) d.dispatch.FreeCommandBuffers(d.device, f.pool, 1, &cb);
    }
    if (r != VK_SUCCESS) return r;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    r = d.dispatch.BeginCommandBuffer(cb, &begin);
    if (r == VK_SUCCESS) {
        for (const PendingFills::Fill& fill : fills) d.dispatch.CmdFillBuffer(cb, fill.buffer, 0, VK_WHOLE_SIZE, 0);
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
        d.dispatch.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                                      &barrier, 0, nullptr, 0, nullptr);
        r = d.dispatch.EndCommandBuffer(cb);
    }
    if (r != VK_SUCCESS) {
        d.dispatch.FreeCommandBuffers(d.device, f.pool, 1, &cb);
        return r;
    }
    *out = cb;
    return VK_SUCCESS;
}
// How far the timeline of each queue with fills in flight has come (z.mutex held).
void note_completed_fills(DeviceState& d, GpuZero& z) {
    for (const PendingFills::Wait& w : z.fills.unfinished()) {
        for (auto& [key, f] : z.queues) {
            if (PendingFills::QueueId(reinterpret_cast<uintptr_t>(f.get())) != w.queue) continue;
            uint64_t value = 0;
            if (z.counter_value(d.device, f->timeline, &value) == VK_SUCCESS) z.fills.completed(w.queue, value);
        }
    }
}

// Submits `cb` (or only the signal) on q after the other queues' fills in `waits`, signalling
// f's timeline at `value` (z.mutex held).
VkResult submit_fills(DeviceState& d, GpuZero& z, QueueState& q, QueueFiller& f, VkCommandBuffer cb,
                      const std::vector<PendingFills::Wait>& waits, uint64_t value) {
    std::vector<VkSemaphore> wait_semaphores;
    std::vector<uint64_t> wait_values;
    std::vector<VkPipelineStageFlags> wait_stages;
    for (const PendingFills::Wait& w : waits) {
        for (auto& [key, other] : z.queues) {
            if (PendingFills::QueueId(reinterpret_cast<uintptr_t>(other.get())) != w.queue) continue;
            wait_semaphores.push_back(other->timeline);
            wait_values.push_back(w.value);
            wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        }
    }
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = uint32_t(wait_values.size());
    values.pWaitSemaphoreValues = wait_values.data();
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &value;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, &values};
    submit.waitSemaphoreCount = uint32_t(wait_semaphores.size());
    submit.pWaitSemaphores = wait_semaphores.data();
    submit.pWaitDstStageMask = wait_stages.data();
    submit.commandBufferCount = cb ? 1 : 0;
    submit.pCommandBuffers = &cb;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &f.timeline;
    VkResult r;
    {
        // The queue's lock while it fuses (the flusher submits on it too).
        std::unique_lock<submit::PollingMutex> queue_lock;
        if (q.fusion) {
            queue_lock = std::unique_lock(q.fusion->locks().queue());
            q.fusion->disarm(Counter::ArmDisarmedQueueCall);  // the fill would queue behind it
        }
        r = watch_device_loss(d, d.dispatch.QueueSubmit(q.queue, 1, &submit, VK_NULL_HANDLE));
    }
    d.stats.add(Counter::DriverSubmits);
    return r;
}

void count_fill_submission(DeviceState& d, const std::vector<PendingFills::Fill>& fills, bool waited) {
    d.stats.add(Counter::AllocCacheFillSubmits);
    if (waited) d.stats.add(Counter::AllocCacheFillWaits);
    if (d.stats.enabled()) {
        d.stats.add(Counter::AllocCacheGpuFills, fills.size());
        VkDeviceSize bytes = 0;
        for (const PendingFills::Fill& fill : fills) bytes += fill.size;
        d.stats.add(Counter::AllocCacheGpuFillBytes, bytes);
    }
}
}  // namespace

VkResult before_submission(DeviceState& d, QueueState* q) {
    GpuZero* z = d.gpu_zero.get();
    if (!z || !z->fills.active() || !q) return VK_SUCCESS;
    if (d.lost.load(std::memory_order_acquire)) return VK_SUCCESS;  // nothing more reaches the driver
    // Fills run on queues that can record transfer commands (sparse-only or video queues
    // leave them owed for the next queue that can).
    if (!(q->flags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT))) return VK_SUCCESS;
    std::lock_guard lock(z->mutex);
    note_completed_fills(d, *z);
    QueueFiller* f = filler_for(d, *z, *q);
    if (!f) return VK_ERROR_OUT_OF_HOST_MEMORY;  // the application's work must not see old contents
    const PendingFills::QueueId id = reinterpret_cast<uintptr_t>(f);
    const std::vector<PendingFills::Wait> waits = z->fills.waits_for(id);
    std::vector<PendingFills::Fill> fills = z->fills.take();
    if (fills.empty() && waits.empty()) return VK_SUCCESS;

    uint64_t completed = 0;
    if (z->counter_value(d.device, f->timeline, &completed) == VK_SUCCESS) z->fills.completed(id, completed);
    VkCommandBuffer cb = VK_NULL_HANDLE;
    if (!fills.empty()) {
        if (VkResult r = watch_device_loss(d, record_fills(d, *f, completed, fills, &cb)); r != VK_SUCCESS) {
            z->fills.failed(fills);
            return r;
        }
    }
    const uint64_t value = f->value + 1;
    if (VkResult r = submit_fills(d, *z, *q, *f, cb, waits, value); r != VK_SUCCESS) {
        if (cb) d.dispatch.FreeCommandBuffers(d.device, f->pool, 1, &cb);
        z->fills.failed(fills);
        return r;
    }
    f->value = value;
    if (cb) f->cbs.emplace_back(cb, value);
    z->fills.submitted(id, value, fills);
    for (const PendingFills::Wait& w : waits) z->fills.waited(id, w);
    count_fill_submission(d, fills, !waits.empty());
    return VK_SUCCESS;
}

}  // namespace slipstream::objects
