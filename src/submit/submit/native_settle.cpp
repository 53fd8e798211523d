#include "submit/native_settle.h"

#include "core/log.h"
#include "core/timeline_wait.h"
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

// The value of `q`'s timeline that says the submission that ran `cb` completed, where it may
// still run; 0: it is done (a device lost runs nothing more).
uint64_t pending_value(DeviceState& d, QueueState& q, const CommandBufferState& cb) {
    QueueFusion* f = q.fusion.get();
    if (!f || d.lost.load(std::memory_order_acquire)) return 0;
    const NativeSubmission& s = cb.native;
    if (s.followed) {
        if (!f->follows_now(s.followed, s.follow)) return 0;  // its fence was seen signaled
        return f->settle_followed(s.followed, s.follow);
    }
    if (f->seen_done(s.value)) return 0;
    uint64_t value = 0;
    if (watch_device_loss(d, d.fusion_counter_value(d.device, f->timeline(), &value)) != VK_SUCCESS) return 0;
    f->saw_completed(value);
    if (value >= s.value) return 0;
    // The idle tracker saw all the queue's work done (an idle wait, or the application's wait on
    // the fence of its latest submission): lavapipe may show a submission's fence signaled
    // before the timeline value it signals in the same submission.
    std::lock_guard lock(q.idle.mutex);
    return q.idle.activity == QueueActivity::Idle ? 0 : s.value;
}

}  // namespace

void settle_native(const CommandBufferState& cb) {
    QueueState* q = cb.native_on.load(std::memory_order_acquire);
    if (!q) return;
    DeviceState& d = *q->device;
    if (const uint64_t value = pending_value(d, *q, cb)) {
        d.stats.add(Counter::NativeWaits);
        log(LogLevel::Debug, "command buffer %p reset or freed while the driver may run it: waiting for it",
            static_cast<void*>(cb.handle));
        const VkResult r =
            wait_for_value(d.fusion_wait_semaphores, d.device, q->fusion->timeline(), value, kSettleNs);
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
