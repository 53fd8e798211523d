#include "submit/native_settle.h"

#include "core/log.h"
#include "idle/queue_idle.h"
#include "state/object_state.h"
#include "submit/queue_fusion.h"

#include <vector>

namespace slipstream::submit {

namespace {

// How long a reset or free waits at most: the submission may wait for a semaphore that the
// application signals only after this call (a misuse too), where an unbounded wait would hang it.
// Past the bound the call goes on as without the layer, with a warning.
constexpr uint64_t kSettleNs = 2'000'000'000;

// Whether the submission that ran `cb` on `q` may still run. A device lost runs nothing more.
bool may_run(DeviceState& d, QueueState& q, const CommandBufferState& cb) {
    QueueFusion* f = q.fusion.get();
    if (!f || d.lost.load(std::memory_order_acquire)) return false;
    if (cb.native_followed) {
        if (!f->follows_now(cb.native_followed, cb.native_follow)) return false;
        return d.dispatch.GetFenceStatus(d.device, cb.native_followed) == VK_NOT_READY;
    }
    if (f->seen_done(cb.native_value)) return false;
    uint64_t value = 0;
    if (watch_device_loss(d, d.fusion_counter_value(d.device, f->timeline(), &value)) != VK_SUCCESS) return false;
    f->saw_completed(value);
    if (value >= cb.native_value) return false;
    // The idle tracker saw all the queue's work done (an idle wait, or the application's wait on
    // the fence of its latest submission): lavapipe may show a submission's fence signaled
    // before the timeline value it signals in the same submission.
    std::lock_guard lock(q.idle.mutex);
    return q.idle.activity != QueueActivity::Idle;
}

}  // namespace

void settle_native(const CommandBufferState& cb) {
    QueueState* q = cb.native_on.load(std::memory_order_acquire);
    if (!q) return;
    DeviceState& d = *q->device;
    if (may_run(d, *q, cb)) {
        d.stats.add(Counter::NativeWaits);
        log(LogLevel::Debug, "command buffer %p reset or freed while the driver may run it: waiting for it",
            static_cast<void*>(cb.handle));
        VkResult r;
        if (cb.native_followed) {
            r = d.dispatch.WaitForFences(d.device, 1, &cb.native_followed, VK_TRUE, kSettleNs);
        } else {
            const VkSemaphore timeline = q->fusion->timeline();
            VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wait.semaphoreCount = 1;
            wait.pSemaphores = &timeline;
            wait.pValues = &cb.native_value;
            r = d.fusion_wait_semaphores(d.device, &wait, kSettleNs);
        }
        if (watch_device_loss(d, r) == VK_TIMEOUT)
            log(LogLevel::Warn, "command buffer %p reset or freed while the driver still runs it (2 s waited)",
                static_cast<void*>(cb.handle));
    }
    if (cb.native_on.exchange(nullptr, std::memory_order_relaxed))
        d.natively_submitted.fetch_sub(1, std::memory_order_relaxed);
}

void settle_native_pool(DeviceState& d, VkCommandPool pool) {
    if (!d.fusion || d.natively_submitted.load(std::memory_order_relaxed) == 0) return;
    for (const CommandBufferState* cb : pool_natively_submitted(d, pool)) settle_native(*cb);
}

}  // namespace slipstream::submit
