// vkQueueWaitIdle and vkDeviceWaitIdle: answered from what the layer follows where it can, and
// by the driver where a submission named a semaphore since its last idle wait
// (docs/internals.md, "Idle waits").
#include "waits/waits.h"

#include "waits/settled_error.h"
#include "waits/spin_then_block.h"

#include "submit/device_fusion.h"
#include "submit/fusion.h"
#include "submit/queue_fusion.h"
#include "idle/queue_idle.h"

#include <algorithm>

namespace slipstream {

namespace {
VkResult as_poll_result(QueueActivity a, VkResult error) {
    if (error != VK_SUCCESS) return error;
    return a == QueueActivity::Idle ? VK_SUCCESS : a == QueueActivity::Pending ? VK_NOT_READY : VK_INCOMPLETE;
}

// An idle wait: `first` is the layer's first look (VK_SUCCESS: idle, VK_NOT_READY: spin on
// `poll`, another code: block at once). With `driver_last` it ends in the driver's own idle
// wait (`block`) also where the layer saw the work done: a driver may still be busy with a
// submission's semaphores after its signals, and only its idle wait waits for that
// (docs/internals.md, "Idle waits": lavapipe's submit thread crashed without it).
template <typename Poll, typename Block>
VkResult idle_wait(DeviceState& d, VkResult first, bool driver_last, Poll&& poll, Block&& block) {
    bool driver_waited = false;
    auto driver = [&](uint64_t timeout) {
        driver_waited = true;
        return block(timeout);
    };
    VkResult r = first;
    if (first == VK_NOT_READY) r = spin_then_block(d, d.idle_spin, UINT64_MAX, poll, driver);
    else if (first != VK_SUCCESS && first > 0) r = driver(0);
    if (r == VK_SUCCESS && driver_last && !driver_waited) {
        d.stats.add(Counter::IdleDriverWaits);
        r = block(0);
    }
    return r;
}

// A fusing queue's idleness, its lock held (IdleWaitHold): its timeline says when all of its
// work completed (QueueFusion::poll_idle), one counter read. An application fence that rode
// on its newest submission and was seen signaled says so too (the idle tracker; no fence of
// ours is attached on a fusing queue): it may signal a moment before the timeline signal of
// the same submission does.
VkResult poll_fusing_queue(QueueState& q) {
    const VkResult r = q.fusion->poll_idle();
    if (r != VK_NOT_READY) return r;
    std::lock_guard lock(q.idle.mutex);
    return q.idle.activity == QueueActivity::Idle ? VK_SUCCESS : VK_NOT_READY;
}

// The driver's idle wait on `q`: after it, no submission's semaphores are the driver's business.
VkResult driver_queue_wait_idle(QueueState& q) {
    const VkResult r = q.device->dispatch.QueueWaitIdle(q.queue);
    if (r == VK_SUCCESS) q.semaphores_since_driver_idle.store(false, std::memory_order_relaxed);
    return r;
}

// The driver waited for the queue to be idle.
void driver_idle(IdleTracker& t, QueueState& q) {
    if (q.fusion) q.fusion->note_driver_idle();
    std::lock_guard lock(q.idle.mutex);
    t.mark_idle(q.idle);
}

// A fusing queue's idle wait: an idle queue costs one counter read, a busy one a spin first.
VkResult fusing_queue_wait_idle(QueueState& q) {
    DeviceState& d = *q.device;
    auto poll = [&] { return poll_fusing_queue(q); };
    const VkResult first = poll();
    if (first == VK_SUCCESS) d.stats.add(Counter::IdleShortcuts);
    if (first < 0) return first;
    auto block = [&](uint64_t) { return driver_queue_wait_idle(q); };
    const VkResult r = idle_wait(d, first, q.owes_driver_idle(), poll, block);
    if (r == VK_SUCCESS && first != VK_SUCCESS) driver_idle(*d.idle, q);
    return r;
}
}  // namespace

VkResult queue_wait_idle(QueueState& q) {
    DeviceState& d = *q.device;
    d.stats.add(Counter::QueueWaitIdles);
    if (d.fusion) {
        if (VkResult e = submit::flush_queue(q, submit::FlushReason::Observe); e < 0) return settled(d, e);
        if (VkResult e = submit::fusion_error(d); e < 0) return settled(d, e);
    }
    // Nothing more reaches a lost device (the idle tracker's empty fenced submission included).
    if (d.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    const submit::IdleWaitHold hold(q);
    if (!d.idle) return d.dispatch.QueueWaitIdle(q.queue);
    if (q.fusion) return fusing_queue_wait_idle(q);
    IdleTracker& t = *d.idle;
    {
        std::lock_guard lock(q.idle.mutex);
        t.note_idle_wait(q.idle);
    }
    VkResult error;
    QueueActivity a = t.poll(q.idle, &error);
    if (error != VK_SUCCESS) return error;
    if (a == QueueActivity::Idle) d.stats.add(Counter::IdleShortcuts);
    bool spin = a == QueueActivity::Pending;
    if (a == QueueActivity::Busy) {
        std::lock_guard lock(q.idle.mutex);
        spin = t.fence_busy_queue(q.idle, q.queue);
    }
    auto poll = [&]() -> VkResult {
        QueueActivity now = t.poll(q.idle, &error);
        return as_poll_result(now, error);
    };
    auto block = [&](uint64_t) { return driver_queue_wait_idle(q); };
    const VkResult first = a == QueueActivity::Idle ? VK_SUCCESS : spin ? VK_NOT_READY : VK_INCOMPLETE;
    const VkResult r = idle_wait(d, first, q.owes_driver_idle(), poll, block);
    if (r == VK_SUCCESS && first != VK_SUCCESS) driver_idle(t, q);
    return r;
}

VkResult device_wait_idle(DeviceState& d) {
    d.stats.add(Counter::DeviceWaitIdles);
    if (VkResult e = observe_device(d); e < 0) return e;
    if (d.lost.load(std::memory_order_acquire)) return VK_ERROR_DEVICE_LOST;
    if (d.fusion) submit::note_device_wait(d);
    const submit::IdleWaitHold hold(d);
    if (!d.idle) return d.dispatch.DeviceWaitIdle(d.device);
    IdleTracker& t = *d.idle;
    std::vector<QueueState*> queues;
    {
        std::lock_guard lock(d.mutex);
        queues = d.queues;
    }
    // Fusing queues (their locks held) are followed through their timelines, the others
    // through the idle tracker.
    for (QueueState* q : queues) {
        if (q->fusion) continue;
        std::lock_guard lock(q->idle.mutex);
        t.note_idle_wait(q->idle);
        if (q->idle.activity == QueueActivity::Busy) t.fence_busy_queue(q->idle, q->queue);
    }
    auto poll = [&]() -> VkResult {
        VkResult result = VK_SUCCESS;
        for (QueueState* q : queues) {
            VkResult r;
            if (q->fusion) {
                r = poll_fusing_queue(*q);
            } else {
                VkResult error;
                const QueueActivity a = t.poll(q->idle, &error);
                r = as_poll_result(a, error);
            }
            if (r != VK_SUCCESS && r != VK_NOT_READY) return r;  // an error, or a queue the layer cannot follow
            if (r == VK_NOT_READY) result = r;
        }
        return result;
    };
    const VkResult first = poll();
    if (first == VK_SUCCESS) d.stats.add(Counter::IdleShortcuts);
    if (first < 0) return first;
    const bool semaphores = std::any_of(queues.begin(), queues.end(), [](QueueState* q) { return q->owes_driver_idle(); });
    auto block = [&](uint64_t) { return d.dispatch.DeviceWaitIdle(d.device); };
    const VkResult r = idle_wait(d, first, semaphores, poll, block);
    if (r == VK_SUCCESS && (first != VK_SUCCESS || semaphores)) {
        for (QueueState* q : queues) {
            q->semaphores_since_driver_idle.store(false, std::memory_order_relaxed);
            driver_idle(t, *q);
        }
    }
    return r;
}

void settle_before_destroy(DeviceState& d) {
    constexpr uint64_t kSettleNs = 1000000000;
    if (d.lost.load(std::memory_order_acquire)) return;
    std::vector<QueueState*> queues;
    {
        std::lock_guard lock(d.mutex);
        queues = d.queues;
    }
    std::vector<VkFence> fences;
    for (QueueState* q : queues) {
        if (!q->owes_driver_idle()) continue;
        VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        if (d.dispatch.CreateFence(d.device, &info, nullptr, &fence) != VK_SUCCESS) continue;
        // In the driver's order on the queue: signaled once it is done with what came before.
        if (d.dispatch.QueueSubmit(q->queue, 0, nullptr, fence) == VK_SUCCESS) fences.push_back(fence);
        else d.dispatch.DestroyFence(d.device, fence, nullptr);
    }
    if (fences.empty()) return;
    // Not done within the second: the fences are left to go with the device rather than
    // destroyed while the driver may still signal them.
    if (d.dispatch.WaitForFences(d.device, uint32_t(fences.size()), fences.data(), VK_TRUE, kSettleNs) != VK_SUCCESS)
        return;
    for (VkFence f : fences) d.dispatch.DestroyFence(d.device, f, nullptr);
}

}  // namespace slipstream
